"""Branching through the real library: navigation rules, skip rules, step modifiers, sections,
visibleWhen, progress, additionalTaskResults, rule definition errors and every predicate operator.

The behaviour checked here is the one docs/task-format.md ("Branching") and docs/branching.md
describe.
"""

from __future__ import annotations

import copy
import json
from typing import Any, Dict, List, Optional

import pytest

import stepkit
from conftest import EXAMPLES, FOLLOWUP_TASK, HERE, RUN_UUID, START_MS, load_json, run_cli, step_ids

HEADACHE_PATH = EXAMPLES / "headache.json"
MEDICATIONS_PATH = HERE / "data" / "medications-loop.json"  # the loop the example was before it repeated a block

BOOLEAN = {"type": "boolean"}


# ------------------------------------------------------------------------------------------------
# Helpers


def open_session(definition: Any, options: Optional[Dict[str, Any]] = None) -> stepkit.Session:
    task = stepkit.Task.from_json(definition)
    opts = {"taskRunUUID": RUN_UUID}
    opts.update(options or {})
    session = task.open(opts)
    session.set_clock(stepkit.ManualClock(START_MS))
    return session


def current(session: stepkit.Session) -> Optional[str]:
    step = session.state["step"]
    return step["identifier"] if step else None


def flat_visits(result: Dict[str, Any]) -> List[str]:
    """The identifiers of the step results, section results unfolded (steps only)."""
    out: List[str] = []

    def walk(results: List[Dict[str, Any]]) -> None:
        for r in results:
            inner = r.get("results", [])
            if inner and all("type" not in x for x in inner):  # a section result: step results inside
                walk(inner)
            else:
                out.append(r["identifier"])

    walk(result["results"])
    return out


def answers_by_step(result: Dict[str, Any]) -> List[Any]:
    """[(stepIdentifier, {questionIdentifier: answer})] in visit order (top level only)."""
    return [(s["identifier"], {q["identifier"]: q["answer"] for q in s["results"]}) for s in result["results"]]


@pytest.fixture
def headache() -> Dict[str, Any]:
    return load_json(HEADACHE_PATH)


@pytest.fixture
def medications() -> Dict[str, Any]:
    return load_json(MEDICATIONS_PATH)


def to_severity(session: stepkit.Session, severe: bool) -> Dict[str, Any]:
    session.forward()  # intro
    session.set_answer(["headache"])
    session.forward()
    assert current(session) == "severity"
    session.set_answer(severe)
    return session.forward()


# ------------------------------------------------------------------------------------------------
# The headache task: its three branches


def test_headache_dizziness_jumps_to_about(headache):
    s = open_session(headache)
    s.forward()
    s.set_answer(["dizziness"])
    state = s.forward()
    assert current(s) == "about"
    assert state["navigation"]["arrival"] == [
        {"rule": "symptom", "type": "predicate", "branch": 0},
        {"modified": "about", "by": "stepModifier"},
    ]
    assert state["step"]["text"] == "Dizziness has many causes; your age helps us tell them apart."
    s.set_answer({"age": 40})
    state = s.forward()
    assert current(s) == "done"
    # severity was never answered: the completion text is the unmodified one.
    assert state["step"]["text"] == "Your answers have been recorded."
    assert state["navigation"]["arrival"] == [{"rule": "about", "type": "direct"}]
    state = s.forward()
    assert state["status"] == "finished" and state["finishReason"] == "completed"
    assert step_ids(s.result) == ["intro", "symptom", "about", "done"]


def test_headache_severe_goes_through_the_section_and_modifies_the_completion(headache):
    s = open_session(headache)
    to_severity(s, True)
    assert current(s) == "pain"
    s.set_answer(8)
    s.forward()
    s.set_answer("07:30")
    state = s.forward()
    assert current(s) == "aura"
    # pain >= 7: the aura step's modifier applies.
    assert state["step"]["detailText"].startswith("With pain this strong")
    assert {"modified": "aura", "by": "stepModifier"} in state["navigation"]["arrival"]
    s.set_answer(True)
    state = s.forward()
    assert current(s) == "about"
    # The section's own rule took us out of it.
    assert state["navigation"]["arrival"] == [{"rule": "headacheDetails", "type": "direct"}]
    assert "text" not in state["step"]  # symptom is headache: no modifier
    s.set_answer({"age": 42})
    state = s.forward()
    assert current(s) == "done"
    assert state["step"]["text"] == "Please see a doctor."
    assert state["navigation"]["arrival"] == [
        {"rule": "about", "type": "direct"},
        {"modified": "done", "by": "stepModifier"},
    ]
    assert state["navigation"]["hasNextStep"] is False
    s.forward()
    assert step_ids(s.result) == ["intro", "symptom", "severity", "headacheDetails", "about", "done"]


def test_headache_not_severe_skips_about_and_arrival_explains_it(headache):
    s = open_session(headache)
    to_severity(s, False)
    s.set_answer(5)
    s.forward()
    s.set_answer("09:00")
    s.forward()
    s.set_answer(False)
    state = s.forward()
    assert current(s) == "done"
    assert state["navigation"]["arrival"] == [
        {"rule": "headacheDetails", "type": "direct"},
        {"skipped": "about", "by": "skipRule"},
        {"rule": "about", "type": "direct"},
    ]
    assert state["step"]["text"] == "Your answers have been recorded."
    assert flat_visits(s.result) == ["intro", "symptom", "severity", "pain", "onset", "aura", "done"]


def test_headache_mild_pain_skips_the_aura_and_leaves_the_section_by_its_rule(headache):
    s = open_session(headache)
    to_severity(s, False)
    s.set_answer(2)
    s.forward()
    s.set_answer("10:15")
    state = s.forward()
    # aura skipped (pain <= 3); it is the section's last step, so the section's rule applies;
    # then about is skipped (severity false) and its own rule leads to done.
    assert current(s) == "done"
    assert state["navigation"]["arrival"] == [
        {"skipped": "aura", "by": "skipRule"},
        {"rule": "headacheDetails", "type": "direct"},
        {"skipped": "about", "by": "skipRule"},
        {"rule": "about", "type": "direct"},
    ]
    assert flat_visits(s.result) == ["intro", "symptom", "severity", "pain", "onset", "done"]


def test_has_next_step_follows_the_draft_answer(headache):
    s = open_session(headache)
    s.forward()
    state = s.set_answer(["dizziness"])
    assert state["navigation"]["hasNextStep"] is True
    s.forward()
    assert current(s) == "about"


# ------------------------------------------------------------------------------------------------
# Going back and forth


def test_going_back_follows_the_visit_path_and_rerouting_changes_it(headache):
    s = open_session(headache)
    s.forward()
    s.set_answer(["dizziness"])
    s.forward()
    assert current(s) == "about"
    # Back follows the visit path (about -> symptom), not the step order (about -> aura).
    state = s.back()
    assert current(s) == "symptom"
    assert state["answer"] == ["dizziness"]
    assert step_ids(s.result) == ["intro", "symptom"]
    # A different answer reroutes.
    s.set_answer(["headache"])
    s.forward()
    assert current(s) == "severity"
    s.set_answer(True)
    s.forward()
    assert current(s) == "pain"
    assert step_ids(s.result) == ["intro", "symptom", "severity", "headacheDetails"]
    # Back again, and reroute to dizziness: severity leaves the path; its answer is kept to
    # prefill it but predicates no longer see it (done is not modified).
    s.back()
    s.back()
    assert current(s) == "symptom"
    s.set_answer(["dizziness"])
    s.forward()
    s.set_answer({"age": 30})
    state = s.forward()
    assert current(s) == "done"
    assert "text" in state["step"] and state["step"]["text"] == "Your answers have been recorded."
    assert step_ids(s.result) == ["intro", "symptom", "about", "done"]
    # Back to symptom, headache again: severity is prefilled with the kept answer.
    s.back()
    s.back()
    s.set_answer(["headache"])
    state = s.forward()
    assert current(s) == "severity"
    assert state["answer"] is True


def test_back_on_the_first_step_is_refused(headache):
    s = open_session(headache)
    with pytest.raises(stepkit.StateError):
        s.back()
    assert current(s) == "intro"


def test_a_skipped_optional_question_counts_as_unanswered():
    s = open_session(branch_after_q(BOOLEAN, {"result": "q", "answered": False}, "unanswered", "answered"))
    s.set_answer(True)
    s.skip()  # the draft is kept, the result records null, predicates see no answer
    assert current(s) == "unanswered"
    assert s.result["results"][0]["results"][0]["answer"] is None
    state = s.back()
    assert state["answer"] is True
    s.forward()
    assert current(s) == "answered"


# ------------------------------------------------------------------------------------------------
# Loops


def test_loop_gives_one_step_result_per_visit(medications):
    s = open_session(medications)
    s.forward()
    s.set_answer(True)
    s.forward()
    meds = [
        ({"name": "Ibuprofen", "dose": 400, "frequency": ["asNeeded"], "reason": "Headache",
          "sideEffects": False}, True),
        ({"name": "Metformin", "dose": 500, "frequency": ["daily"], "sideEffects": True,
          "sideEffectsDetail": "Nausea"}, True),
        ({"name": "Vitamin D", "dose": 0.025, "frequency": ["weekly"], "sideEffects": False}, False),
    ]
    for i, (medication, more) in enumerate(meds):
        assert current(s) == "medication"
        state = s.state
        if i == 0:
            assert state["answer"] == {}
        else:
            # A step visited again starts with its latest answer (a prefill): clear it.
            assert state["answer"]["name"] == meds[i - 1][0]["name"]
            s.set_answer({key: None for key in state["answer"]})
        s.set_answer(medication)
        s.forward()
        assert current(s) == "addAnother"
        s.set_answer(more)
        state = s.forward()
        if more:
            assert state["navigation"]["arrival"] == [{"rule": "addAnother", "type": "predicate", "branch": 0}]
    assert current(s) == "missedDoses"
    s.set_answer(0)
    s.forward()
    s.forward()
    result = s.result
    assert s.state["finishReason"] == "completed"
    assert step_ids(result) == [
        "intro", "takesMedication",
        "medication", "addAnother", "medication", "addAnother", "medication", "addAnother",
        "missedDoses", "done",
    ]
    visits = [answers for step, answers in answers_by_step(result) if step == "medication"]
    assert [v["name"] for v in visits] == ["Ibuprofen", "Metformin", "Vitamin D"]
    # Hidden items are left out of each visit's result; shown ones are in.
    assert "reason" in visits[0] and "sideEffectsDetail" not in visits[0]
    assert "reason" not in visits[1] and visits[1]["sideEffectsDetail"] == "Nausea"
    assert "reason" not in visits[2] and "sideEffectsDetail" not in visits[2]
    more = [answers["addAnother"] for step, answers in answers_by_step(result) if step == "addAnother"]
    assert more == [True, True, False]


#: A name, then "more?": True loops back to the name.
MEDS_LOOP = {
    "identifier": "meds",
    "steps": [
        {"type": "question", "identifier": "name", "answerFormat": {"type": "text"}},
        {"type": "question", "identifier": "more", "answerFormat": BOOLEAN},
        {"type": "completion", "identifier": "done"},
    ],
    "navigationRules": {
        "more": {"type": "predicate",
                 "branches": [{"when": {"result": "more", "equals": True}, "destination": "name"}]}
    },
}


def test_loop_predicates_see_the_latest_answer():
    definition = {
        **MEDS_LOOP,
        "stepModifiers": {"done": {"when": {"result": "name", "equals": "last"}, "set": {"text": "last one"}}},
    }
    s = open_session(definition)
    for name, more in [("first", True), ("last", False)]:
        s.set_answer(name)
        s.forward()
        s.set_answer(more)
        state = s.forward()
    assert current(s) == "done"
    assert state["step"]["text"] == "last one"
    assert [(sid, a.get(sid)) for sid, a in answers_by_step(s.result)] == [
        ("name", "first"), ("more", True), ("name", "last"), ("more", False), ("done", None)]
    # Going back pops the last visit only.
    s.back()
    assert current(s) == "more"
    assert step_ids(s.result) == ["name", "more", "name", "more"]


def test_going_back_through_a_loop_restores_each_visits_own_answer():
    s = open_session(MEDS_LOOP)
    s.set_answer("aspirin"); s.forward(); s.set_answer(True); s.forward()  # noqa: E702
    s.set_answer("ibuprofen"); s.forward(); s.set_answer(False); s.forward()  # noqa: E702
    s.back()  # more (2nd visit)
    s.back()  # name (2nd visit)
    state = s.back()  # more (1st visit): it was answered True
    assert state["answer"] is True
    state = s.back()  # name (1st visit)
    assert state["answer"] == "aspirin"
    assert s.result["results"][0]["results"][0]["answer"] == "aspirin"


# ------------------------------------------------------------------------------------------------
# Sections


SECTIONS = {
    "identifier": "t",
    "steps": [
        {"type": "question", "identifier": "smoker", "answerFormat": BOOLEAN},
        {"type": "section", "identifier": "smoking", "title": "Smoking", "steps": [
            {"type": "question", "identifier": "perDay",
             "answerFormat": {"type": "numeric", "style": "integer", "minimum": 0}},
            {"type": "section", "identifier": "quitting", "steps": [
                {"type": "question", "identifier": "tried", "answerFormat": BOOLEAN}]}]},
        {"type": "question", "identifier": "alcohol", "answerFormat": BOOLEAN},
        {"type": "completion", "identifier": "done"},
    ],
    "skipRules": {"smoking": {"result": "smoker", "equals": False}},
}


def test_sections_nest_in_the_result():
    s = open_session(SECTIONS)
    info = s.task.info
    assert info["sections"] == [{"identifier": "smoking", "steps": ["perDay", "tried"]},
                                {"identifier": "quitting", "steps": ["tried"]}]
    s.set_answer(True)
    s.forward()
    assert current(s) == "perDay"
    s.set_answer(5)
    s.forward()
    s.set_answer(False)
    s.forward()
    s.set_answer(True)
    s.forward()
    result = s.result
    assert step_ids(result) == ["smoker", "smoking", "alcohol", "done"]
    smoking = result["results"][1]
    assert set(smoking) == {"identifier", "startDate", "endDate", "results"}
    assert [r["identifier"] for r in smoking["results"]] == ["perDay", "quitting"]
    quitting = smoking["results"][1]
    assert [r["identifier"] for r in quitting["results"]] == ["tried"]
    assert quitting["results"][0]["results"][0] == {
        "identifier": "tried", "type": "boolean", "answer": False,
        "startDate": quitting["results"][0]["results"][0]["startDate"],
        "endDate": quitting["results"][0]["results"][0]["endDate"]}
    assert smoking["results"][0]["results"][0]["answer"] == 5


def test_a_section_skip_rule_passes_over_the_whole_section():
    s = open_session(SECTIONS)
    s.set_answer(False)
    state = s.forward()
    assert current(s) == "alcohol"
    assert state["navigation"]["arrival"] == [{"skipped": "smoking", "by": "skipRule"}]
    assert step_ids(s.result) == ["smoker", "alcohol"]


def test_a_section_as_destination_and_its_rule():
    definition = copy.deepcopy(SECTIONS)
    del definition["skipRules"]
    definition["navigationRules"] = {
        "smoker": {"type": "direct", "destination": "quitting"},
        "smoking": {"type": "direct", "destination": "done"},
    }
    s = open_session(definition)
    s.set_answer(True)
    s.forward()
    assert current(s) == "tried"  # the section's first step
    s.set_answer(True)
    state = s.forward()
    # tried ends both sections; quitting has no rule, smoking's applies.
    assert current(s) == "done"
    assert state["navigation"]["arrival"] == [{"rule": "smoking", "type": "direct"}]
    assert step_ids(s.result) == ["smoker", "smoking", "done"]
    assert [r["identifier"] for r in s.result["results"][1]["results"]] == ["quitting"]


def test_skip_rules_apply_to_the_first_step_and_can_end_the_task_at_once():
    steps = [{"type": "instruction", "identifier": "a"}, {"type": "instruction", "identifier": "b"}]
    s = open_session({"identifier": "t", "steps": steps, "skipRules": {"a": {"always": True}}})
    state = s.state
    assert current(s) == "b"
    assert state["navigation"]["arrival"] == [{"skipped": "a", "by": "skipRule"}]
    assert state["navigation"]["canGoBack"] is False
    s = open_session({"identifier": "t", "steps": steps,
                      "skipRules": {"a": {"always": True}, "b": {"always": True}}})
    state = s.state
    assert state["status"] == "finished" and state["finishReason"] == "completed"
    assert s.result["results"] == []


def test_end_destination_finishes_the_task():
    definition = {
        "identifier": "t",
        "steps": [
            {"type": "question", "identifier": "consent", "answerFormat": BOOLEAN},
            {"type": "instruction", "identifier": "survey"},
        ],
        "navigationRules": {"consent": {"type": "predicate", "branches": [
            {"when": {"result": "consent", "equals": False}, "destination": "$end"}]}},
    }
    s = open_session(definition)
    state = s.set_answer(False)
    assert state["navigation"]["hasNextStep"] is False
    state = s.forward()
    assert state["status"] == "finished" and state["finishReason"] == "completed"
    assert step_ids(s.result) == ["consent"]


# ------------------------------------------------------------------------------------------------
# visibleWhen


def test_visible_when_in_state_and_result(medications):
    s = open_session(medications)
    s.forward()
    s.set_answer(True)
    state = s.forward()
    assert current(s) == "medication"
    assert state["visibleItems"] == ["name", "dose", "frequency", "sideEffects"]
    state = s.set_answer({"name": "Ibuprofen", "dose": 200, "frequency": ["asNeeded"], "sideEffects": False})
    assert state["visibleItems"] == ["name", "dose", "frequency", "reason", "sideEffects"]
    # The shown item is required now.
    assert [p["path"] for p in state["problems"]] == ["reason"]
    with pytest.raises(stepkit.StateError) as caught:
        s.forward()
    assert caught.value.path == "reason"
    assert current(s) == "medication"
    # Hidden again: it no longer blocks, and its answer is kept but left out of the result.
    s.set_answer({"reason": "Headache"})
    state = s.set_answer({"frequency": ["daily"]})
    assert "reason" not in state["visibleItems"]
    assert state["problems"] == []
    assert state["answer"]["reason"] == "Headache"
    s.forward()
    medication = s.result["results"][2]
    assert [q["identifier"] for q in medication["results"]] == ["name", "dose", "frequency", "sideEffects"]
    # Back: shown again with its kept answer.
    s.back()
    state = s.set_answer({"frequency": ["asNeeded"]})
    assert "reason" in state["visibleItems"] and state["answer"]["reason"] == "Headache"
    assert state["problems"] == []


def test_a_hidden_item_reads_as_unanswered_to_predicates():
    definition = {
        "identifier": "t",
        "steps": [
            {"type": "form", "identifier": "f", "formItems": [
                {"identifier": "pregnant", "answerFormat": BOOLEAN},
                {"identifier": "weeks", "answerFormat": INTEGER,
                 "visibleWhen": {"result": {"step": "f", "item": "pregnant"}, "equals": True}}]},
            {"type": "instruction", "identifier": "weeksAnswered"},
            {"type": "instruction", "identifier": "weeksUnanswered"},
        ],
        "navigationRules": {"f": {"type": "predicate", "branches": [
            {"when": {"result": {"step": "f", "item": "weeks"}, "answered": True}, "destination": "weeksAnswered"}],
            "defaultDestination": "weeksUnanswered"}},
    }
    s = open_session(definition)
    s.set_answer({"pregnant": True, "weeks": 12})
    s.set_answer({"pregnant": False})  # weeks is hidden now: not in the result
    s.forward()
    assert [q["identifier"] for q in s.result["results"][0]["results"]] == ["pregnant"]
    assert current(s) == "weeksUnanswered"


def test_visible_when_reading_another_step():
    definition = {
        "identifier": "t",
        "steps": [
            {"type": "question", "identifier": "pregnant", "answerFormat": BOOLEAN},
            {"type": "form", "identifier": "f", "formItems": [
                {"identifier": "age", "answerFormat": {"type": "numeric", "style": "integer"}},
                {"identifier": "weeks", "answerFormat": {"type": "numeric", "style": "integer"},
                 "visibleWhen": {"result": "pregnant", "equals": True}}]},
        ],
    }
    s = open_session(definition)
    s.set_answer(True)
    assert s.forward()["visibleItems"] == ["age", "weeks"]
    s.back()
    s.set_answer(False)
    assert s.forward()["visibleItems"] == ["age"]
    state = s.set_answer({"age": 30})
    assert state["navigation"]["canGoForward"] is True
    s.forward()
    assert s.state["status"] == "finished"


# ------------------------------------------------------------------------------------------------
# Progress


def test_progress_on_the_headache_rule_graph(headache):
    s = open_session(headache)
    progress = s.state["progress"]
    # intro -> symptom -> (severity, section ...) -> about (skippable) -> done
    assert progress["presented"] == 1
    assert progress["fewestRemaining"] == 2  # symptom, done (about may be skipped)
    assert progress["mostRemaining"] == 7  # symptom, severity, pain, onset, aura, about, done
    # symptom unanswered: "not contains headache" holds, so intro, symptom, about, done.
    assert progress["current"] == 1 and progress["total"] == 4
    s.forward()
    state = s.set_answer(["headache"])
    assert state["progress"]["current"] == 2
    assert state["progress"]["total"] == 8
    to = s.forward()
    assert to["progress"]["presented"] == 3
    state = s.set_answer(False)  # about will be skipped
    assert state["progress"]["total"] == 7
    assert state["progress"]["fewestRemaining"] == 3  # pain, onset, done (aura, about skippable)
    assert state["progress"]["mostRemaining"] == 5


def test_progress_for_a_task_without_rules():
    definition = {"identifier": "t", "steps": [{"type": "instruction", "identifier": i} for i in "abc"]}
    s = open_session(definition)
    assert s.state["progress"] == {"current": 1, "total": 3, "presented": 1,
                                   "fewestRemaining": 2, "mostRemaining": 2}
    s.forward()
    assert s.state["progress"] == {"current": 2, "total": 3, "presented": 2,
                                   "fewestRemaining": 1, "mostRemaining": 1}


def test_progress_most_remaining_is_none_with_a_loop(medications):
    s = open_session(medications)
    progress = s.state["progress"]
    assert progress["mostRemaining"] is None
    assert progress["fewestRemaining"] == 2  # takesMedication, done
    s.forward()
    s.set_answer(True)
    s.forward()
    s.set_answer({"name": "X", "dose": 1, "frequency": ["daily"], "sideEffects": False})
    s.forward()
    s.set_answer(False)
    state = s.forward()
    assert current(s) == "missedDoses"
    # Out of the loop: bounded again.
    assert state["progress"]["mostRemaining"] == 1
    assert state["progress"]["fewestRemaining"] == 1
    assert state["progress"]["presented"] == 5


# ------------------------------------------------------------------------------------------------
# additionalTaskResults


def baseline_result(smoker: bool, age: int) -> Dict[str, Any]:
    """A real result of another task run, produced by the library."""
    definition = {
        "identifier": "baseline",
        "steps": [
            {"type": "question", "identifier": "smoker", "answerFormat": BOOLEAN},
            {"type": "form", "identifier": "about", "formItems": [
                {"identifier": "age", "answerFormat": {"type": "numeric", "style": "integer"}}]},
        ],
    }
    s = open_session(definition)
    s.set_answer(smoker)
    s.forward()
    s.set_answer({"age": age})
    s.forward()
    return s.result


def walk_instructions(session: stepkit.Session) -> List[str]:
    seen = []
    while session.state["status"] == "inProgress":
        seen.append(current(session))
        session.forward()
    return seen


def test_additional_task_results_feed_predicates():
    assert walk_instructions(open_session(FOLLOWUP_TASK)) == ["a", "end"]
    s = open_session(FOLLOWUP_TASK, {"additionalTaskResults": [baseline_result(True, 70)]})
    assert walk_instructions(s) == ["a", "smokingQuestions", "seniorQuestions", "end"]
    s = open_session(FOLLOWUP_TASK, {"additionalTaskResults": [baseline_result(False, 70)]})
    assert walk_instructions(s) == ["a", "seniorQuestions", "end"]
    # A hand-written result in the result format works too (item defaults to the step).
    hand = [{"identifier": "baseline", "results": [
        {"identifier": "smoker", "results": [{"identifier": "smoker", "type": "boolean", "answer": True}]}]}]
    s = open_session(FOLLOWUP_TASK, {"additionalTaskResults": hand})
    assert walk_instructions(s) == ["a", "smokingQuestions", "end"]


def test_additional_task_results_must_be_task_results():
    task = stepkit.Task.from_json(FOLLOWUP_TASK)
    with pytest.raises(stepkit.InvalidArgumentError) as caught:
        task.open({"additionalTaskResults": {}})
    assert caught.value.path == "additionalTaskResults"
    with pytest.raises(stepkit.InvalidArgumentError) as caught:
        task.open({"additionalTaskResults": [{"results": []}]})
    assert caught.value.path == "additionalTaskResults[0]"


# ------------------------------------------------------------------------------------------------
# Definition errors in rules


RULE_STEPS = [
    {"type": "question", "identifier": "n", "answerFormat": {"type": "numeric", "style": "integer"}},
    {"type": "question", "identifier": "t", "answerFormat": {"type": "text"}},
    {"type": "question", "identifier": "c", "answerFormat": {
        "type": "textChoice", "style": "singleChoice",
        "textChoices": [{"text": "A", "value": "a"}, {"text": "Two", "value": 2}]}},
    {"type": "form", "identifier": "f", "formItems": [{"identifier": "x", "answerFormat": BOOLEAN}]},
    {"type": "question", "identifier": "loc", "answerFormat": {"type": "location"}},
    {"type": "instruction", "identifier": "i"},
]


def definition_errors(**rules: Any) -> List[Any]:
    with pytest.raises(stepkit.DefinitionError) as caught:
        stepkit.Task.from_json({"identifier": "x", "steps": RULE_STEPS, **rules})
    error = caught.value
    assert error.status == -3 and error.code == "EDEFINITION"
    assert error.path == error.errors[0]["path"]
    return [(p["path"], p["code"]) for p in error.errors]


@pytest.mark.parametrize("rules, expected", [
    ({"navigationRules": {"n": {"type": "direct", "destination": "nowhere"}}},
     ("navigationRules.n.destination", "unknownDestination")),
    ({"navigationRules": {"n": {"type": "predicate", "branches": [
        {"when": {"always": True}, "destination": "nowhere"}]}}},
     ("navigationRules.n.branches[0].destination", "unknownDestination")),
    ({"navigationRules": {"zzz": {"type": "direct", "destination": "n"}}},
     ("navigationRules.zzz", "unknownStep")),
    ({"skipRules": {"t": {"result": "n", "contains": 3}}}, ("skipRules.t.contains", "operatorNotApplicable")),
    ({"skipRules": {"t": {"result": "t", "minimum": 3}}}, ("skipRules.t.minimum", "operatorNotApplicable")),
    ({"skipRules": {"t": {"result": "loc", "equals": {"latitude": 1, "longitude": 2}}}},
     ("skipRules.t.equals", "operatorNotApplicable")),
    ({"skipRules": {"t": {"result": "c", "contains": "b"}}}, ("skipRules.t.contains", "notAChoice")),
    ({"skipRules": {"t": {"result": "c", "equals": "2"}}}, ("skipRules.t.equals", "notAChoice")),
    ({"skipRules": {"t": {"result": "n", "equals": "3"}}}, ("skipRules.t.equals", "wrongOperandType")),
    ({"skipRules": {"t": {"result": "ghost", "answered": True}}}, ("skipRules.t.result", "unknownStep")),
    ({"skipRules": {"t": {"result": "i", "answered": True}}}, ("skipRules.t.result", "noAnswer")),
    ({"skipRules": {"t": {"result": "f", "answered": True}}}, ("skipRules.t.result", "missingKey")),
    ({"skipRules": {"t": {"result": {"step": "f", "item": "y"}, "answered": True}}},
     ("skipRules.t.result.item", "unknownItem")),
    ({"skipRules": {"t": {"result": "n", "greater": 1}}}, ("skipRules.t.greater", "unknownOperator")),
    ({"skipRules": {"t": {"result": "t", "matches": "("}}}, ("skipRules.t.matches", "invalidRegularExpression")),
    ({"stepModifiers": {"i": {"when": {"always": True}, "set": {"answerFormat": "x"}}}},
     ("stepModifiers.i.set.answerFormat", "unknownKey")),
])
def test_rule_definition_errors(rules, expected):
    assert expected in definition_errors(**rules)


def test_rule_definition_errors_are_all_reported_at_once():
    problems = definition_errors(
        navigationRules={"n": {"type": "direct", "destination": "nowhere"}},
        skipRules={"t": {"result": "n", "contains": 3}, "i": {"result": "c", "containsAny": ["a", "q"]}},
    )
    assert ("navigationRules.n.destination", "unknownDestination") in problems
    assert ("skipRules.t.contains", "operatorNotApplicable") in problems
    assert ("skipRules.i.containsAny", "notAChoice") in problems


def test_visible_when_definition_errors_have_their_path():
    steps = copy.deepcopy(RULE_STEPS)
    steps[3]["formItems"].append({"identifier": "y", "answerFormat": BOOLEAN,
                                  "visibleWhen": {"result": "c", "contains": "zz"}})
    with pytest.raises(stepkit.DefinitionError) as caught:
        stepkit.Task.from_json({"identifier": "x", "steps": steps})
    assert [(p["path"], p["code"]) for p in caught.value.errors] == [
        ("steps[3].formItems[1].visibleWhen.contains", "notAChoice")]


# ------------------------------------------------------------------------------------------------
# Every predicate operator, through a small task: q's navigation rule goes to "yes" when the
# predicate holds, else to "no".

UNANSWERED = object()


def holds(answer_format: Dict[str, Any], answer: Any, **operators: Any) -> bool:
    return holds_predicate(answer_format, answer, {"result": "q", **operators})


def branch_after_q(answer_format: Dict[str, Any], predicate: Dict[str, Any], then: str, otherwise: str) -> Dict[str, Any]:
    """A task: an optional question q; then the step `then` (which ends the task) when `predicate`
    holds, else the step `otherwise`."""
    return {
        "identifier": "p",
        "steps": [
            {"type": "question", "identifier": "q", "optional": True, "answerFormat": answer_format},
            {"type": "instruction", "identifier": then},
            {"type": "instruction", "identifier": otherwise},
        ],
        "navigationRules": {
            "q": {"type": "predicate", "branches": [{"when": predicate, "destination": then}],
                  "defaultDestination": otherwise},
            then: {"type": "direct", "destination": "$end"},
        },
    }


def holds_predicate(answer_format: Dict[str, Any], answer: Any, predicate: Dict[str, Any]) -> bool:
    s = open_session(branch_after_q(answer_format, predicate, "yes", "no"))
    if answer is UNANSWERED:
        s.skip()
    else:
        s.set_answer(answer)
        s.forward()
    where = current(s)
    assert where in ("yes", "no")
    return where == "yes"


NUMERIC = {"type": "numeric", "style": "decimal", "showDontKnowButton": True}
INTEGER = {"type": "numeric", "style": "integer"}
SCALE = {"type": "scale", "minimum": 0, "maximum": 10, "step": 1}
CONTINUOUS = {"type": "continuousScale", "minimum": 0, "maximum": 1, "maximumFractionDigits": 2}
TEXT = {"type": "text"}
SINGLE = {"type": "textChoice", "style": "singleChoice", "textChoices": [
    {"text": "Migraine", "value": "migraine"}, {"text": "Tension", "value": "tension"},
    {"text": "Cluster", "value": "cluster"}]}
MULTIPLE = {"type": "textChoice", "style": "multipleChoice", "textChoices": [
    {"text": "Stress", "value": "stress"}, {"text": "Sleep", "value": "sleep"},
    {"text": "Food", "value": "food"},
    {"text": "Other", "value": "other", "other": True},
    {"text": "None", "value": "none", "exclusive": True}]}
NUMBER_CHOICES = {"type": "textChoice", "style": "singleChoice", "textChoices": [
    {"text": "One", "value": 1}, {"text": "Two", "value": 2}]}
TIME_OF_DAY = {"type": "timeOfDay"}
TIME_INTERVAL = {"type": "timeInterval", "step": 1}
DATE = {"type": "date"}
DATE_TIME = {"type": "date", "style": "dateTime"}
SES = {"type": "ses"}
LOCATION = {"type": "location"}
PICKERS = {"type": "multipleValuePicker", "valuePickers": [
    {"textChoices": [{"text": "1", "value": 1}, {"text": "2", "value": 2}]},
    {"textChoices": [{"text": "light", "value": "light"}, {"text": "hard", "value": "hard"}]}]}


def test_answered():
    assert holds(BOOLEAN, False, answered=True)
    assert not holds(BOOLEAN, UNANSWERED, answered=True)
    assert holds(BOOLEAN, UNANSWERED, answered=False)
    assert not holds(BOOLEAN, True, answered=False)
    # "don't know" counts as an answer; a location can be tested only with answered.
    assert holds(NUMERIC, {"dontKnow": True}, answered=True)
    assert holds(LOCATION, {"latitude": 52.52, "longitude": 13.40}, answered=True)
    assert holds(LOCATION, UNANSWERED, answered=False)


def test_dont_know():
    assert holds(NUMERIC, {"dontKnow": True}, dontKnow=True)
    assert not holds(NUMERIC, 3, dontKnow=True)
    assert holds(NUMERIC, 3, dontKnow=False)
    assert not holds(NUMERIC, UNANSWERED, dontKnow=True)
    assert not holds(NUMERIC, UNANSWERED, dontKnow=False)
    # Other comparisons are false on "don't know".
    assert not holds(NUMERIC, {"dontKnow": True}, minimum=0)
    assert not holds(NUMERIC, {"dontKnow": True}, notEquals=3)


def test_equals():
    assert holds(BOOLEAN, True, equals=True)
    assert not holds(BOOLEAN, False, equals=True)
    assert not holds(BOOLEAN, UNANSWERED, equals=False)
    assert holds(INTEGER, 3, equals=3.0)
    assert holds(SCALE, 7, equals=7)
    assert holds(TEXT, "yes", equals="yes")
    assert not holds(TEXT, "Yes", equals="yes")
    # choice: the selected set equals the value or list
    assert holds(SINGLE, ["migraine"], equals="migraine")
    assert holds(MULTIPLE, ["sleep", "stress"], equals=["stress", "sleep"])
    assert not holds(MULTIPLE, ["sleep", "stress"], equals="stress")
    assert holds(NUMBER_CHOICES, [2], equals=2)
    assert holds(TIME_OF_DAY, "08:30", equals="08:30")
    assert holds(TIME_INTERVAL, 600, equals=600)
    assert holds(DATE, "2026-03-01", equals="2026-03-01")
    # dates compare by instant
    assert holds(DATE_TIME, "2026-01-01T01:00:00+01:00", equals="2026-01-01T00:00:00Z")
    assert holds(SES, 4, equals=4)
    assert holds(PICKERS, [2, "hard"], equals=[2, "hard"])
    assert not holds(PICKERS, [2, "light"], equals=[2, "hard"])


def test_not_equals():
    assert holds(BOOLEAN, False, notEquals=True)
    assert not holds(BOOLEAN, True, notEquals=True)
    assert holds(SINGLE, ["tension"], notEquals="migraine")
    # false on an unanswered question, unlike {"not": {"equals": ...}}
    assert not holds(BOOLEAN, UNANSWERED, notEquals=True)
    assert holds_predicate(BOOLEAN, UNANSWERED, {"not": {"result": "q", "equals": True}})


def test_contains():
    assert holds(MULTIPLE, ["stress", "sleep"], contains="stress")
    assert holds(MULTIPLE, ["stress", "sleep"], contains=["sleep", "stress"])
    assert not holds(MULTIPLE, ["stress"], contains=["stress", "sleep"])
    assert not holds(MULTIPLE, UNANSWERED, contains="stress")
    # an "other" choice with typed text counts as its value
    assert holds(MULTIPLE, ["food", {"value": "other", "text": "Red wine"}], contains="other")
    assert holds(NUMBER_CHOICES, [1], contains=1)


def test_contains_any():
    assert holds(MULTIPLE, ["food"], containsAny=["stress", "food"])
    assert not holds(MULTIPLE, ["none"], containsAny=["stress", "food"])
    assert holds(SINGLE, ["cluster"], containsAny="cluster")
    assert not holds(MULTIPLE, UNANSWERED, containsAny=["stress"])


def test_matches():
    # a search: the text contains a match (anchor the pattern for a whole-string match)
    assert holds(TEXT, "chronic migraine", matches="migr")
    assert not holds(TEXT, "chronic migraine", matches="^migr")
    assert holds(TEXT, "Migraine", matches="^[Mm]igraine$")
    assert not holds(TEXT, "tension", matches="migr")
    assert not holds(TEXT, UNANSWERED, matches=".*")
    # on choices: some selected string value matches
    assert holds(SINGLE, ["migraine"], matches="^mig")
    assert not holds(SINGLE, ["tension"], matches="^mig")


# Three ordered values (low < mid < high) of each answer format whose bounds both the inclusive
# and the exclusive tests check.
ORDERED = [
    (INTEGER, 4, 5, 6),
    (SCALE, 4, 5, 6),
    (TIME_INTERVAL, 240, 300, 360),
    (TIME_OF_DAY, "08:59", "09:00", "09:01"),
    (DATE, "2025-12-31", "2026-01-01", "2026-01-02"),
]


@pytest.mark.parametrize("answer_format, low, mid, high", ORDERED + [
    (NUMERIC, 4.5, 5, 5.5),
    (CONTINUOUS, 0.49, 0.5, 0.51),
    (SES, 4, 5, 6),
])
def test_minimum_and_maximum(answer_format, low, mid, high):
    assert holds(answer_format, mid, minimum=mid)
    assert holds(answer_format, high, minimum=mid)
    assert not holds(answer_format, low, minimum=mid)
    assert holds(answer_format, mid, maximum=mid)
    assert holds(answer_format, low, maximum=mid)
    assert not holds(answer_format, high, maximum=mid)
    assert not holds(answer_format, UNANSWERED, minimum=mid)
    assert not holds(answer_format, UNANSWERED, maximum=mid)


@pytest.mark.parametrize("answer_format, low, mid, high", ORDERED)
def test_exclusive_minimum_and_maximum(answer_format, low, mid, high):
    assert holds(answer_format, high, exclusiveMinimum=mid)
    assert not holds(answer_format, mid, exclusiveMinimum=mid)
    assert holds(answer_format, low, exclusiveMaximum=mid)
    assert not holds(answer_format, mid, exclusiveMaximum=mid)
    assert not holds(answer_format, UNANSWERED, exclusiveMinimum=mid)
    assert not holds(answer_format, UNANSWERED, exclusiveMaximum=mid)


def test_time_of_day_compares_minutes_since_midnight():
    # ResearchKit's hour/minute factory compares components separately; StepKit compares times.
    assert holds(TIME_OF_DAY, "08:45", minimum="08:30", maximum="09:15")
    assert not holds(TIME_OF_DAY, "09:20", minimum="08:30", maximum="09:15")


def test_date_time_against_a_date():
    assert holds(DATE_TIME, "2026-01-01T12:00:00Z", minimum="2026-01-01")
    assert not holds(DATE_TIME, "2025-12-31T23:59:00Z", minimum="2026-01-01")


def test_several_operators_are_anded():
    assert holds(INTEGER, 5, minimum=1, maximum=9)
    assert not holds(INTEGER, 10, minimum=1, maximum=9)
    assert not holds(INTEGER, 0, minimum=1, maximum=9)
    assert holds(MULTIPLE, ["stress"], answered=True, notEquals="none")


def test_combinators():
    yes = {"always": True}
    no = {"always": False}
    a_five = {"result": "q", "equals": 5}
    assert holds_predicate(INTEGER, 1, yes)
    assert not holds_predicate(INTEGER, 1, no)
    assert holds_predicate(INTEGER, 5, {"all": [yes, a_five]})
    assert not holds_predicate(INTEGER, 4, {"all": [yes, a_five]})
    assert holds_predicate(INTEGER, 1, {"all": []})
    assert holds_predicate(INTEGER, 4, {"any": [no, {"not": a_five}]})
    assert not holds_predicate(INTEGER, 5, {"any": [no, {"not": a_five}]})
    assert not holds_predicate(INTEGER, 1, {"any": []})
    assert holds_predicate(INTEGER, UNANSWERED, {"not": a_five})


def test_form_item_selector():
    definition = {
        "identifier": "t",
        "steps": [
            {"type": "form", "identifier": "f", "formItems": [
                {"identifier": "smoker", "answerFormat": BOOLEAN},
                {"identifier": "age", "answerFormat": INTEGER}]},
            {"type": "instruction", "identifier": "smokers"},
            {"type": "instruction", "identifier": "others"},
        ],
        "navigationRules": {"f": {"type": "predicate", "branches": [
            {"when": {"all": [{"result": {"step": "f", "item": "smoker"}, "equals": True},
                              {"result": {"step": "f", "item": "age"}, "minimum": 18}]},
             "destination": "smokers"}], "defaultDestination": "others"}},
    }
    s = open_session(definition)
    s.set_answer({"smoker": True, "age": 40})
    s.forward()
    assert current(s) == "smokers"
    s.back()
    s.set_answer({"age": 16})
    s.forward()
    assert current(s) == "others"


# ------------------------------------------------------------------------------------------------
# The example tasks through the CLI


@pytest.mark.parametrize("name", ["headache", "medications"])
def test_cli_walks_the_branching_examples(name, tmp_path):
    task = EXAMPLES / f"{name}.json"
    answers = EXAMPLES / f"{name}.answers.json"
    output = tmp_path / "result.json"
    proc = run_cli("run", str(task), "--answers", str(answers), "--output", str(output), "--quiet")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    result = json.loads(output.read_text(encoding="utf-8"))
    assert result["identifier"] == name
    if name == "headache":
        assert step_ids(result) == ["intro", "symptom", "severity", "headacheDetails", "about", "done"]
        assert [r["identifier"] for r in result["results"][3]["results"]] == ["pain", "onset", "aura"]
    else:
        assert step_ids(result) == ["intro", "takesMedication", "howMany", "medication", "missedDoses", "done"]
        form = result["results"][3]["results"]
        assert [q["identifier"] for q in form] == ["medications", "sideEffects"]  # sideEffectsDetail hidden
        instances = [{q["identifier"]: q["answer"] for q in i["results"]} for i in form[0]["instances"]]
        assert [i["name"] for i in instances] == ["Ibuprofen", "Metformin"]
        assert instances[0]["reason"] == "For a headache" and instances[1]["reason"] is None


@pytest.mark.parametrize("name", ["headache", "medications"])
def test_cli_checks_the_branching_examples(name):
    proc = run_cli("check", str(EXAMPLES / f"{name}.json"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
