"""Repeating blocks from Python (issue 31): a group walked with several instances (its count
adds them, add / enter / remove), the state's "instances", the result nested per instance, a
repeating question, and each bad input refused with a clear error that changes nothing."""

from __future__ import annotations

import pytest

import stepkit
from conftest import unchanged

TASK = {
    "identifier": "meds",
    "steps": [
        {"type": "question", "identifier": "howMany",
         "answerFormat": {"type": "numeric", "style": "integer", "minimum": -3, "maximum": 50}},
        {"type": "form", "identifier": "list", "formItems": [
            {"identifier": "medication", "text": "Medications",
             "repeat": {"minCount": 1, "maxCount": 3, "count": {"answer": "howMany"},
                        "title": "Medication {{index}}: {{name}}"},
             "items": [{"identifier": "name", "text": "Name", "answerFormat": {"type": "text"}},
                       {"identifier": "dose", "optional": True,
                        "answerFormat": {"type": "numeric", "style": "decimal"}}]}]},
        {"type": "question", "identifier": "allergies", "repeat": {"minCount": 1, "maxCount": 2},
         "answerFormat": {"type": "text"}},
    ],
}


def block(state, name="medication"):
    return state["instances"][name]


def test_a_walk_with_several_instances():
    session = stepkit.Task.from_json(TASK).open()
    session.set_answer(2)
    state = session.go_forward()
    assert {k: block(state)[k] for k in ("count", "current", "expectedCount", "canAdd", "canRemove")} == {
        "count": 2, "current": 0, "expectedCount": 2, "canAdd": True, "canRemove": False}
    session.set_answer({"medication": [{"name": "Aspirin", "dose": 100}, {"name": "Ibuprofen"}]})
    state = session.add_instance()
    assert block(state)["count"] == 3 and block(state)["current"] == 2
    assert block(state)["titles"][:2] == ["Medication 1: Aspirin", "Medication 2: Ibuprofen"]
    assert [p["path"] for p in state["problems"]] == ["medication[2].name"]
    state = session.enter_instance(1, "medication")
    assert block(state)["current"] == 1
    session.set_answer({"medication": [{}, {}, {"name": "Metformin"}]})
    state = session.remove_instance(0)
    assert state["answer"]["medication"] == [{"name": "Ibuprofen"}, {"name": "Metformin"}]
    assert block(state)["current"] == 0
    session.go_forward()
    session.set_answer(["pollen", "dust"])
    session.go_forward()
    result = session.result
    group = result["results"][1]["results"][0]
    assert group["type"] == "group"
    assert [[r["answer"] for r in i["results"]] for i in group["instances"]] == [["Ibuprofen", None], ["Metformin", None]]
    allergies = result["results"][2]["results"][0]
    assert [(i["index"], i["answer"]) for i in allergies["instances"]] == [(0, "pollen"), (1, "dust")]


def test_bad_input_changes_nothing():
    session = stepkit.Task.from_json(TASK).open()
    unchanged(session, stepkit.StateError, "noRepeatingBlock", lambda: session.add_instance())
    unchanged(session, stepkit.AnswerError, "countOutOfRange", lambda: session.set_answer(-1))
    unchanged(session, stepkit.AnswerError, "countOutOfRange", lambda: session.set_answer(4))
    session.set_answer(1)
    session.go_forward()
    unchanged(session, stepkit.StateError, "tooFewInstances", lambda: session.remove_instance(0))
    unchanged(session, stepkit.InvalidArgumentError, "instanceOutOfRange", lambda: session.enter_instance(7))
    unchanged(session, stepkit.InvalidArgumentError, "instanceOutOfRange", lambda: session.remove_instance(-1))
    unchanged(session, stepkit.InvalidArgumentError, "unknownBlock", lambda: session.add_instance("dose"))
    unchanged(session, stepkit.AnswerError, "instanceOutOfRange",
              lambda: session.set_answer({"medication": [{}, {}, {"name": "X"}]}))
    with pytest.raises(TypeError):
        session.enter_instance("1")
    session.add_instance()
    session.add_instance()
    unchanged(session, stepkit.StateError, "tooManyInstances", lambda: session.add_instance())


def test_restore_is_exact_and_refuses_instances_past_the_bounds():
    task = stepkit.Task.from_json(TASK)
    session = task.open()
    session.set_answer(3)
    session.go_forward()
    session.enter_instance(2)
    saved = session.save()
    back = task.restore(saved)
    assert block(back.state)["current"] == 2
    assert back.save() == saved


NESTED = {
    "identifier": "meds",
    "steps": [
        {"type": "form", "identifier": "list", "formItems": [
            {"identifier": "medication", "text": "Medications", "repeat": {"minCount": 1, "maxCount": 3},
             "items": [{"identifier": "name", "text": "Name", "answerFormat": {"type": "text"}},
                       {"identifier": "doses", "text": "Doses", "repeat": {"minCount": 1, "maxCount": 2},
                        "items": [{"identifier": "amount", "text": "Amount",
                                   "answerFormat": {"type": "numeric", "style": "decimal", "minimum": 0}}]}]}]},
    ],
}


def test_doses_inside_each_medication():
    """A repeating group inside a repeating group: the inner block named by its path, its
    instances those of the medication the participant is in; restore is exact; bad input
    (past the inner maxCount, below its minCount, an inner index out of range, another
    medication's doses, a dose that does not exist) changes nothing."""
    task = stepkit.Task.from_json(NESTED)
    session = task.open()
    assert {k: block(session.state, "medication.doses")[k] for k in ("count", "current", "outer", "outerIndex")} == {
        "count": 1, "current": 0, "outer": "medication", "outerIndex": 0}
    # A second dose before it is added.
    unchanged(session, stepkit.AnswerError, "instanceOutOfRange",
              lambda: session.set_answer({"medication": [{"doses": [{}, {"amount": 1}]}]}))
    session.add_instance("medication.doses")
    session.add_instance("medication")
    state = session.add_instance("medication.doses")
    assert {k: block(state, "medication.doses")[k] for k in ("count", "current", "outerIndex", "canAdd")} == {
        "count": 2, "current": 1, "outerIndex": 1, "canAdd": False}
    unchanged(session, stepkit.StateError, "tooManyInstances", lambda: session.add_instance("medication.doses"))
    unchanged(session, stepkit.StateError, "outsideOuterInstance", lambda: session.enter_instance(0, "medication[0].doses"))
    unchanged(session, stepkit.InvalidArgumentError, "instanceOutOfRange", lambda: session.enter_instance(2, "medication.doses"))
    unchanged(session, stepkit.AnswerError, "tooManyInstances",
              lambda: session.set_answer({"medication": [{"doses": [{}, {}, {"amount": 1}]}]}))
    session.set_answer({"medication": [{"name": "A", "doses": [{"amount": 5}, {"amount": 10}]},
                                       {"name": "B", "doses": [{"amount": 1}, {"amount": 2}]}]})
    saved = session.save()
    back = task.restore(saved)
    assert back.save() == saved
    assert block(back.state, "medication.doses")["current"] == 1
    session.enter_instance(0, "medication")
    session.remove_instance(0, "medication.doses")
    unchanged(session, stepkit.StateError, "tooFewInstances", lambda: session.remove_instance(0, "medication.doses"))
    session.go_forward()
    result = session.result
    meds = result["results"][0]["results"][0]["instances"]
    assert [[d["results"][0]["answer"] for d in m["results"][1]["instances"]] for m in meds] == [[10], [1, 2]]
