"""Expressions over repeating blocks through the real library (docs/expressions.md, "Repeating
blocks: scope"): aggregates with a filter, an indexed read, a per-instance calculation and a
per-instance ``visibleWhen`` on a list of medications walked with instances added and removed,
and the refusals of reads with no instance in scope. Every expected value is worked out by hand
from the answers given here."""

from __future__ import annotations

from typing import Any, Dict

import pytest

import stepkit
from conftest import RUN_UUID, START_MS

BLOCK = {"step": "list", "block": "medication"}


def item(name: str, **extra: Any) -> Dict[str, Any]:
    return {**BLOCK, "item": name, **extra}


TASK: Dict[str, Any] = {
    "identifier": "meds",
    "steps": [
        {"type": "form", "identifier": "list", "formItems": [
            {"identifier": "medication", "text": "Medications", "repeat": {"minCount": 1, "maxCount": 4},
             "items": [
                 {"identifier": "name", "text": "Name", "answerFormat": {"type": "text"}},
                 {"identifier": "dose", "text": "Dose (mg)", "answerFormat": {"type": "numeric", "style": "decimal", "minimum": 0}},
                 {"identifier": "daily", "text": "Every day?", "answerFormat": {"type": "boolean"}},
                 {"identifier": "times", "text": "Times a day",
                  "answerFormat": {"type": "numeric", "style": "integer", "minimum": 1, "maximum": 6},
                  "visibleWhen": {"result": item("daily"), "equals": True}},
             ]},
        ]},
        {"type": "completion", "identifier": "done", "calculations": ["count", "perDay", "total"]},
    ],
    "calculations": {
        "count": {"count": {"over": BLOCK}},
        "daily": {"count": {"over": BLOCK, "where": {"answer": item("daily")}}},
        "perDay": {"forEach": BLOCK, "value": {"*": [{"answer": item("dose")}, {"coalesce": [{"answer": item("times")}, 1]}]}},
        "total": {"sum": {"over": BLOCK, "of": {"calc": "perDay"}}},
        "largest": {"max": {"over": BLOCK, "of": {"answer": item("dose")}}},
        "allDaily": {"all": {"over": BLOCK, "of": {"answer": item("daily")}}},
        "first": {"answer": item("name", index=0)},
    },
}


def open_session() -> stepkit.Session:
    session = stepkit.Task.from_json(TASK).open({"taskRunUUID": RUN_UUID})
    session.set_clock(stepkit.ManualClock(START_MS))
    return session


def test_walk_adding_and_removing_instances() -> None:
    session = open_session()
    session.set_answer({"medication": [{"name": "Metformin", "dose": 500, "daily": True, "times": 2}]})
    state = session.add_instance("medication")
    assert state["instances"]["medication"]["count"] == 2
    session.set_answer({"medication": [{}, {"name": "Ibuprofen", "dose": 200, "daily": False, "times": 3}]})
    session.add_instance("medication")
    state = session.set_answer({"medication": [{}, {}, {"name": "Vitamin D", "dose": 25, "daily": True, "times": 1}]})
    # Instance 2 is not daily: its "times" is hidden there alone (the 3 it holds is not read).
    assert state["instances"]["medication"]["hidden"] == [[], ["times"], []]
    calcs = session.result["calculations"]
    # 500 × 2 = 1000; 200 × 1 = 200; 25 × 1 = 25.
    assert calcs["perDay"] == [1000, 200, 25]
    assert calcs["total"] == 1225 and calcs["count"] == 3 and calcs["daily"] == 2
    assert calcs["largest"] == 500 and calcs["allDaily"] is False and calcs["first"] == "Metformin"
    # Removing the one that is not daily: the aggregates follow.
    session.remove_instance(1, "medication")
    calcs = session.result["calculations"]
    assert calcs["perDay"] == [1000, 25] and calcs["total"] == 1025
    assert calcs["count"] == 2 and calcs["allDaily"] is True and calcs["largest"] == 500
    state = session.go_forward()
    assert state["step"]["identifier"] == "done"
    assert state["step"]["calculations"] == {"count": 2, "perDay": [1000, 25], "total": 1025}
    # Saved and restored: the same values.
    back = stepkit.Task.from_json(TASK).restore(session.save())
    assert back.result["calculations"] == session.result["calculations"]


def test_a_hidden_item_is_not_required_in_its_instance() -> None:
    session = open_session()
    session.set_answer({"medication": [{"name": "A", "dose": 1, "daily": False}]})
    session.add_instance("medication")
    session.set_answer({"medication": [{}, {"name": "B", "dose": 2, "daily": True}]})
    # Instance 2 shows "times" and lacks it; instance 1 hides it.
    with pytest.raises(stepkit.StateError) as caught:
        session.go_forward()
    paths = [e.get("path") for e in caught.value.errors]
    assert paths == ["medication[1].times"]
    session.set_answer({"medication": [{}, {"times": 2}]})
    assert session.go_forward()["step"]["identifier"] == "done"


@pytest.mark.parametrize("calculation,code", [
    ({"answer": item("dose")}, "outsideInstance"),
    ({"+": [{"calc": "perDay"}, 1]}, "outsideInstance"),
    ({"count": {"over": {"step": "list", "block": "nothing"}}}, "unknownBlock"),
    ({"sum": {"over": BLOCK, "of": {"answer": item("name")}}}, "wrongType"),
])
def test_reads_with_no_instance_in_scope_are_refused(calculation: Dict[str, Any], code: str) -> None:
    definition = {**TASK, "calculations": {**TASK["calculations"], "bad": calculation}}
    with pytest.raises(stepkit.DefinitionError) as caught:
        stepkit.Task.from_json(definition)
    assert code in [e["code"] for e in caught.value.errors]


def test_the_checker_warns_of_an_aggregate_that_ignores_the_instance() -> None:
    definition = {**TASK, "calculations": {**TASK["calculations"],
                                           "odd": {"count": {"over": BLOCK, "where": {"answered": {"step": "list", "block": "medication", "item": "name", "index": 9}}}}}}
    codes = [p["code"] for p in stepkit.Task.from_json(definition).check()["problems"]]
    assert "aggregateIgnoresInstance" in codes and "indexNeverExists" in codes


def test_the_terminal_skips_an_item_hidden_in_its_instance(tmp_path) -> None:
    """The CLI asks "Times a day" only in the instance whose medication is taken daily."""
    import json as _json

    from conftest import load_json, run_cli

    task = tmp_path / "meds.json"
    task.write_text(_json.dumps(TASK))
    output = tmp_path / "out.json"
    typed = "\n".join([
        "Metformin", "500", "y", "2",  # instance 1: daily, twice a day
        "a",  # add another
        "Ibuprofen", "200", "n",  # instance 2: not daily, so no "times a day"
        "",  # done with the list
        "",  # completion
    ]) + "\n"
    proc = run_cli("run", str(task), "-i", "-o", str(output), input=typed)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.count("Times a day") == 1
    result = load_json(output)
    # 500 x 2 + 200 x 1 = 1200.
    assert result["calculations"]["total"] == 1200 and result["calculations"]["perDay"] == [1000, 200]
    group = result["results"][0]["results"][0]
    answers = [{q["identifier"]: q["answer"] for q in i["results"]} for i in group["instances"]]
    assert answers[0]["times"] == 2 and answers[1]["times"] is None
