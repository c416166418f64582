"""The static checker through the ABI (stepkit_task_check) and on the command line:
python -m stepkit check TASK.json [--strict] [--json]."""

from __future__ import annotations

import copy
import io
import json
from typing import Any, Dict, List

import pytest

import stepkit
from conftest import EXAMPLE_TASKS, EXAMPLES, run_cli
from stepkit import checker



def base() -> Dict[str, Any]:
    """Symptom (single choice), pain (scale 0-10), note (optional text), then about and done."""
    return {
        "identifier": "t",
        "steps": [
            {"type": "question", "identifier": "symptom", "title": "Symptom",
             "answerFormat": {"type": "textChoice", "style": "singleChoice", "textChoices": [
                 {"text": "Headache", "value": "headache"}, {"text": "Dizziness", "value": "dizziness"}]}},
            {"type": "question", "identifier": "pain", "title": "Pain", "answerFormat": {"type": "scale", "minimum": 0, "maximum": 10}},
            {"type": "question", "identifier": "note", "title": "Note", "optional": True, "answerFormat": {"type": "text"}},
            {"type": "instruction", "identifier": "about", "title": "About"},
            {"type": "completion", "identifier": "done", "title": "Thank you"},
        ],
    }


def with_rules(**rules: Any) -> Dict[str, Any]:
    definition = base()
    definition.update(rules)
    return definition


def branch(when: Any, at: str = "pain", to: str = "about", **extra: Any) -> Dict[str, Any]:
    return {at: {"type": "predicate", "branches": [{"when": when, "destination": to}], **extra}}


def findings(definition: Dict[str, Any]) -> List[Dict[str, Any]]:
    with stepkit.Task.from_json(definition) as task:
        report = checker.check_task(task)
    assert report["errors"] == sum(p["severity"] == "error" for p in report["problems"])
    assert report["warnings"] == sum(p["severity"] == "warning" for p in report["problems"])
    return report["problems"]


def codes(definition: Dict[str, Any]) -> List[str]:
    return [p["code"] for p in findings(definition)]


# ------------------------------------------------------------------------------------------------
# The checks, through the ABI


@pytest.mark.parametrize("path", EXAMPLE_TASKS, ids=lambda p: p.stem)
def test_examples_are_clean(path):
    with stepkit.Task.from_file(path) as task:
        report = checker.check_task(task)
    assert report == {"problems": [], "errors": 0, "warnings": 0}


def test_report_shape():
    problems = findings(with_rules(navigationRules=branch({"result": "pain", "minimum": 8, "maximum": 3})))
    assert problems == [{
        "severity": "warning",
        "code": "branchNeverTaken",
        "message": 'Branch 0 of the rule of "pain" is never taken: its condition can never hold.',
        "path": "navigationRules.pain.branches[0]",
    }]


CASES = [
    # (what, definition changes, expected (severity, code, path) findings)
    ("unreachable step", dict(navigationRules={"symptom": {"type": "direct", "destination": "note"}}),
     [("warning", "unreachable", "steps[1]")]),
    ("loop with no way out", dict(navigationRules={"about": {"type": "direct", "destination": "pain"}}),
     [("error", "noWayOut", f"steps[{i}]") for i in range(0, 4)] + [("warning", "unreachable", "steps[4]")]),
    ("predicate and its negation", dict(navigationRules=branch(
        {"all": [{"result": "symptom", "contains": "headache"}, {"not": {"result": "symptom", "contains": "headache"}}]})),
     [("warning", "branchNeverTaken", "navigationRules.pain.branches[0]")]),
    ("equals two values", dict(navigationRules=branch(
        {"all": [{"result": "pain", "equals": 1}, {"result": "pain", "equals": 2}]})),
     [("warning", "branchNeverTaken", "navigationRules.pain.branches[0]")]),
    ("minimum beyond the scale", dict(navigationRules=branch({"result": "pain", "exclusiveMinimum": 10})),
     [("warning", "branchNeverTaken", "navigationRules.pain.branches[0]")]),
    ("two values of a single choice", dict(navigationRules=branch({"result": "symptom", "contains": ["headache", "dizziness"]})),
     [("warning", "branchNeverTaken", "navigationRules.pain.branches[0]")]),
    ("shadowed by always", dict(navigationRules={"pain": {"type": "predicate", "branches": [
        {"when": {"always": True}, "destination": "about"}, {"when": {"result": "pain", "minimum": 5}, "destination": "done"}],
        "defaultDestination": "note"}}),
     [("warning", "branchShadowed", "navigationRules.pain.branches[1]"),
      ("warning", "defaultNeverUsed", "navigationRules.pain.defaultDestination"),
      ("warning", "unreachable", "steps[2]")]),
    ("shadowed by answered on a required question", dict(navigationRules={"note": {"type": "predicate", "branches": [
        {"when": {"result": "symptom", "answered": True}, "destination": "about"},
        {"when": {"result": "note", "answered": False}, "destination": "done"}]}}),
     [("warning", "branchShadowed", "navigationRules.note.branches[1]")]),
    ("reads a later step", dict(navigationRules=branch({"result": "note", "answered": True}, at="symptom")),
     [("warning", "readsUnansweredStep", "navigationRules.symptom.branches[0].when")]),
    ("skip rule reads its own step", dict(skipRules={"pain": {"result": "pain", "minimum": 3}}),
     [("warning", "readsUnansweredStep", "skipRules.pain")]),
    ("skip rule always holds", dict(skipRules={"note": {"result": "pain", "answered": True}}),
     [("warning", "alwaysSkipped", "skipRules.note")]),
    ("modifier never applies", dict(stepModifiers={"done": {"when": {"result": "pain", "minimum": 11}, "set": {"text": "x"}}}),
     [("warning", "modifierNeverApplies", "stepModifiers.done.when")]),
    ("ends before the completion step", dict(navigationRules=branch({"result": "pain", "minimum": 9}, to="$end")),
     [("warning", "endsBeforeCompletion", "navigationRules.pain.branches[0].destination")]),
]


@pytest.mark.parametrize("what, changes, expected", CASES, ids=[c[0] for c in CASES])
def test_each_check(what, changes, expected):
    problems = findings(with_rules(**changes))
    assert sorted((p["severity"], p["code"], p["path"]) for p in problems) == sorted(expected)
    assert all(p["message"] for p in problems)


def test_required_item_hidden_on_every_path():
    definition = base()
    definition["steps"].insert(3, {"type": "form", "identifier": "f", "title": "Form", "formItems": [
        {"identifier": "a", "text": "A", "answerFormat": {"type": "boolean"}},
        {"identifier": "b", "text": "B", "answerFormat": {"type": "text"},
         "visibleWhen": {"all": [{"result": {"step": "f", "item": "a"}, "equals": True},
                                 {"result": {"step": "f", "item": "a"}, "equals": False}]}}]})
    assert [(p["code"], p["path"]) for p in findings(definition)] == [("requiredItemHidden", "steps[3].formItems[1].visibleWhen")]


def test_duplicate_texts():
    definition = base()
    definition["steps"].insert(3, {"type": "form", "identifier": "f", "title": "Pain", "formItems": [
        {"identifier": "a", "text": "Age", "answerFormat": {"type": "age"}},
        {"identifier": "b", "text": "Age", "answerFormat": {"type": "age"}}]})
    definition["steps"].append({"type": "completion", "identifier": "done2", "title": "Thank you"})
    found = {(p["severity"], p["code"], p["path"]) for p in findings(definition)}
    assert ("warning", "duplicateStepText", "steps[3]") in found
    assert ("warning", "duplicateItemText", "steps[3].formItems[1].text") in found
    assert ("info", "duplicateStepText", "steps[6]") in found


def test_check_on_a_closed_task_is_refused():
    task = stepkit.Task.from_json(base())
    task.close()
    with pytest.raises(stepkit.StateError):
        checker.check_task(task)


# ------------------------------------------------------------------------------------------------
# The command line (in-process, then through python -m stepkit)


BAD = with_rules(navigationRules=branch({"result": "pain", "minimum": 8, "maximum": 3}))
BROKEN_LOOP = with_rules(navigationRules={"about": {"type": "direct", "destination": "pain"}})


def write(tmp_path, name: str, definition: Any) -> str:
    path = tmp_path / name
    path.write_text(definition if isinstance(definition, str) else json.dumps(definition), encoding="utf-8")
    return str(path)


def run_check(*argv: str):
    out, err = io.StringIO(), io.StringIO()
    parser = __import__("argparse").ArgumentParser()
    checker.add_arguments(parser)
    status = checker.run(parser.parse_args(list(argv)), out=out, err=err)
    return status, out.getvalue(), err.getvalue()


def test_run_clean_task(tmp_path):
    status, out, _ = run_check(str(EXAMPLES / "headache.json"))
    assert status == 0
    assert "ok" in out and "no problems" in out


def test_run_warnings_pass_unless_strict(tmp_path):
    path = write(tmp_path, "bad.json", BAD)
    status, out, _ = run_check(path)
    assert status == 0
    assert f"{path}: navigationRules.pain.branches[0]: warning:" in out
    assert "[branchNeverTaken]" in out
    assert run_check(path, "--strict")[0] == 1


def test_run_errors_fail(tmp_path):
    path = write(tmp_path, "loop.json", BROKEN_LOOP)
    status, out, _ = run_check(path)
    assert status == 1
    assert "steps[3]: error:" in out and "[noWayOut]" in out
    assert "4 errors, 1 warning" in out


def test_run_json(tmp_path):
    status, out, _ = run_check(write(tmp_path, "loop.json", BROKEN_LOOP), "--json")
    assert status == 1
    report = json.loads(out)
    assert report["compiled"] is True and report["task"] == "t"
    assert report["errors"] == 4 and report["warnings"] == 1 and report["infos"] == 0
    assert {p["code"] for p in report["problems"]} == {"noWayOut", "unreachable"}


def test_run_definition_errors_are_errors(tmp_path):
    definition = copy.deepcopy(BAD)
    definition["steps"][0]["colour"] = "red"
    status, out, _ = run_check(write(tmp_path, "invalid.json", definition), "--json")
    report = json.loads(out)
    assert status == 1
    assert report["compiled"] is False
    assert [(p["severity"], p["path"]) for p in report["problems"]] == [("error", "steps[0].colour")]


def test_run_unreadable_or_not_json(tmp_path):
    status, _, err = run_check(str(tmp_path / "missing.json"))
    assert status == 2 and "missing.json" in err
    status, _, err = run_check(write(tmp_path, "text.json", "{not json"))
    assert status == 2 and "error:" in err


def test_cli_check(tmp_path):
    clean = run_cli("check", str(EXAMPLES / "medications.json"))
    assert clean.returncode == 0, clean.stderr
    path = write(tmp_path, "bad.json", BAD)
    warned = run_cli("check", path)
    assert warned.returncode == 0, warned.stderr
    assert "navigationRules.pain.branches[0]" in warned.stdout and "warning" in warned.stdout
    assert run_cli("check", "--strict", path).returncode == 1
    as_json = run_cli("check", "--json", write(tmp_path, "loop.json", BROKEN_LOOP))
    assert as_json.returncode == 1
    assert json.loads(as_json.stdout)["errors"] == 4
    assert run_cli("check", str(tmp_path / "missing.json")).returncode == 2
    assert run_cli("check").returncode == 2
