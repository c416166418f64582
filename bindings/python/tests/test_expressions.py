"""Expressions through the real library: a PHQ-9-like screener written here (nine items scored
0-3, a total, a severity band by `if`, item 9 above 0 routing to a safety step by a navigation
rule on a score), walked with several answer sets whose totals were worked out by hand; and the
calculations in the state, the result, the task info and across save/restore.

The behaviour checked here is the one docs/expressions.md describes."""

from __future__ import annotations

import json
from typing import Any, Dict, List

import pytest

import stepkit
from conftest import RUN_UUID, START_MS

OPTIONS = [("Not at all", 0), ("Several days", 1), ("More than half the days", 2), ("Nearly every day", 3)]


def item(n: int) -> Dict[str, Any]:
    return {
        "type": "question",
        "identifier": f"q{n}",
        "title": f"Over the last two weeks, how often has problem {n} bothered you?",
        "answerFormat": {
            "type": "textScale",
            "textChoices": [{"text": text, "value": f"v{score}", "score": score} for text, score in OPTIONS],
        },
    }


def band(limit: int, name: str, otherwise: Any) -> Dict[str, Any]:
    return {"if": [{"<=": [{"calc": "total"}, limit]}, name, otherwise]}


SCREENER: Dict[str, Any] = {
    "identifier": "screener9",
    "steps": [item(n) for n in range(1, 10)]
    + [
        {"type": "instruction", "identifier": "safety", "title": "Please talk to someone today."},
        {"type": "completion", "identifier": "summary", "calculations": ["total", "severity"]},
    ],
    "calculations": {
        "total": {"sum": [{"score": f"q{n}"} for n in range(1, 10)]},
        "answered": {"count": [{"answer": f"q{n}"} for n in range(1, 10)]},
        "severity": band(4, "minimal", band(9, "mild", band(14, "moderate", band(19, "moderately severe", "severe")))),
    },
    "navigationRules": {
        "q9": {
            "type": "predicate",
            "branches": [{"when": {">": [{"score": "q9"}, 0]}, "destination": "safety"}],
            "defaultDestination": "summary",
        }
    },
}

# Answer sets (scores of items 1..9) and the hand-computed total and band.
CASES = [
    ([0, 0, 0, 0, 0, 0, 0, 0, 0], 0, "minimal"),
    ([1, 1, 1, 1, 0, 0, 0, 0, 0], 4, "minimal"),
    ([1, 1, 1, 1, 1, 0, 0, 0, 0], 5, "mild"),
    ([2, 2, 2, 1, 1, 1, 0, 0, 0], 9, "mild"),
    ([2, 2, 2, 2, 1, 1, 0, 0, 0], 10, "moderate"),
    ([3, 2, 2, 2, 2, 1, 1, 1, 0], 14, "moderate"),
    ([3, 3, 2, 2, 2, 1, 1, 1, 0], 15, "moderately severe"),
    ([3, 3, 3, 2, 2, 2, 2, 1, 1], 19, "moderately severe"),
    ([3, 3, 3, 3, 2, 2, 2, 1, 1], 20, "severe"),
    ([3, 3, 3, 3, 3, 3, 3, 3, 3], 27, "severe"),
]


def open_session(definition: Dict[str, Any] = SCREENER) -> stepkit.Session:
    session = stepkit.Task.from_json(definition).open({"taskRunUUID": RUN_UUID})
    session.set_clock(stepkit.ManualClock(START_MS))
    return session


def walk(scores: List[int]) -> stepkit.Session:
    session = open_session()
    for n, score in enumerate(scores, start=1):
        assert session.state["step"]["identifier"] == f"q{n}"
        session.set_answer([f"v{score}"])
        session.forward()
    return session


@pytest.mark.parametrize("scores,total,severity", CASES)
def test_total_and_band(scores: List[int], total: int, severity: str) -> None:
    session = walk(scores)
    expected_step = "safety" if scores[8] > 0 else "summary"
    assert session.state["step"]["identifier"] == expected_step
    if expected_step == "safety":
        session.forward()
    state = session.state
    assert state["step"]["identifier"] == "summary"
    assert state["step"]["calculations"] == {"total": total, "severity": severity}
    session.forward()
    result = session.result
    assert result["calculations"] == {"total": total, "answered": 9, "severity": severity}
    visited = [r["identifier"] for r in result["results"]]
    assert ("safety" in visited) == (scores[8] > 0)


def test_calculations_follow_answers_back_and_forth() -> None:
    session = walk([3, 3, 3, 3, 3, 3, 3, 3, 3])
    assert session.result["calculations"]["total"] == 27
    session.back()  # to q9
    session.set_answer(["v0"])
    # q9's new answer counts at once: 24, and the route now skips the safety step.
    assert session.result["calculations"] == {"total": 24, "answered": 9, "severity": "severe"}
    session.forward()
    assert session.state["step"]["identifier"] == "summary"
    # Going back takes q9 off the path: its answer no longer counts.
    session.back()
    session.back()
    assert session.result["calculations"]["answered"] == 8
    assert session.result["calculations"]["total"] == 24


def test_unanswered_screener_has_a_zero_total() -> None:
    session = open_session()
    assert session.result["calculations"] == {"total": 0, "answered": 0, "severity": "minimal"}


def test_save_and_restore_give_back_the_same_calculations() -> None:
    session = walk([2, 1, 0, 3, 1, 2, 0, 1, 2])
    saved = session.save()
    task = stepkit.Task.from_json(SCREENER)
    back = task.restore(saved)
    back.set_clock(stepkit.ManualClock(START_MS))
    assert back.result == session.result
    assert back.result["calculations"] == {"total": 12, "answered": 9, "severity": "moderate"}
    assert back.state == session.state


def test_task_info_lists_the_calculations() -> None:
    info = stepkit.Task.from_json(SCREENER).info
    by_name = {c["name"]: c for c in info["calculations"]}
    assert by_name["total"]["type"] == "number"
    assert by_name["total"]["dependsOn"] == {"steps": [f"q{n}" for n in range(1, 10)], "calculations": []}
    assert by_name["severity"] == {"name": "severity", "type": "string", "dependsOn": {"steps": [], "calculations": ["total"]}}


def test_definition_errors_come_all_at_once_with_paths() -> None:
    broken = json.loads(json.dumps(SCREENER))
    broken["calculations"]["loopA"] = {"+": [{"calc": "loopB"}, 1]}
    broken["calculations"]["loopB"] = {"calc": "loopA"}
    broken["calculations"]["bad"] = {"+": [1, {"answer": "q1"}]}
    broken["calculations"]["ghost"] = {"answer": "q10"}
    with pytest.raises(stepkit.DefinitionError) as caught:
        stepkit.Task.from_json(broken)
    errors = {(e["path"], e["code"]) for e in caught.value.errors}
    assert ("calculations.loopA", "calculationCycle") in errors
    assert ('calculations.bad["+"][1]', "wrongType") in errors
    assert ("calculations.ghost.answer", "unknownStep") in errors
    cycle = [e for e in caught.value.errors if e["code"] == "calculationCycle"]
    assert cycle[0]["message"] == "The calculations read each other in a cycle: loopA → loopB → loopA."


def test_a_bound_given_as_an_expression_refuses_an_answer() -> None:
    definition = {
        "identifier": "bounds",
        "steps": [
            {"type": "question", "identifier": "dob", "answerFormat": {"type": "date", "maximumDate": {"addYears": [{"today": []}, -18]}}},
        ],
    }
    session = open_session(definition)  # today is 2026-01-01
    assert session.state["step"]["answerFormat"]["maximumDate"] == "2008-01-01"
    with pytest.raises(stepkit.AnswerError) as caught:
        session.set_answer("2008-01-02")
    assert caught.value.errors[0]["code"] == "outOfRange"
    assert session.state["answer"] is None
    session.set_answer("2008-01-01")
    assert session.state["answer"] == "2008-01-01"


def test_the_schemas_accept_the_screener_and_its_result() -> None:
    import jsonschema

    from conftest import REPO, load_json

    task_schema = jsonschema.Draft202012Validator(load_json(REPO / "schema" / "task.schema.json"))
    result_schema = jsonschema.Draft202012Validator(load_json(REPO / "schema" / "result.schema.json"))
    task_schema.validate(SCREENER)
    session = walk([1, 2, 3, 0, 1, 2, 3, 0, 1])
    result_schema.validate(session.result)
    bounded = {"identifier": "b", "steps": [{"type": "question", "identifier": "n", "answerFormat": {
        "type": "numeric", "style": "integer", "minimum": {"calc": "low"}, "maximum": 10}}],
        "calculations": {"low": {"round": [{"/": [10, 3]}, 0]}}}
    task_schema.validate(bounded)
    stepkit.Task.from_json(bounded)
    # A score on a picker of a multiple value picker is refused by both.
    picker = {"identifier": "p", "steps": [{"type": "question", "identifier": "m", "answerFormat": {
        "type": "multipleValuePicker", "valuePickers": [{"textChoices": [{"text": "a", "value": 1, "score": 1}]},
                                                        {"textChoices": [{"text": "b", "value": 2}]}]}}]}
    assert not task_schema.is_valid(picker)
    with pytest.raises(stepkit.DefinitionError):
        stepkit.Task.from_json(picker)
