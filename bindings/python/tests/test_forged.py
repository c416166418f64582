"""Restoration data may describe only a run the task allows (issue 11, part D).

The integrity member of restoration data is a SHA-256 anyone can compute again after an edit
(without an ``integrityKey``), and even HMAC only says who signed, not that what was signed is a
possible run. So restore replays the saved path through the task's navigation and refuses, with
the code ``notAllowed``, data that is well-formed and correctly signed but describes a run the
task does not allow: a run stopped at a required question edited into ``completed``, a reversed
path, dates out of order, forged ``additionalTaskResults``, a required step saved as skipped.
Each forgery is tried unkeyed (re-signed with SHA-256) and keyed (re-signed with the HMAC key).

Also here: the canonical task fingerprint (keys reordered, ``10`` written ``10.0``) and
migration keeping the session options (a migrated run with recorders records and completes).
"""

from __future__ import annotations

import copy
import hashlib
import hmac
import json
from pathlib import Path
from typing import Any, Callable, Dict, Optional

import pytest

import stepkit
from conftest import FOLLOWUP_TASK, RUN_UUID, SMALL_TASK, START_MS

KEY = "server-side-secret"


def sign(document: Dict[str, Any], key: Optional[str]) -> str:
    """Restoration data re-signed the way the library signs it (schema/restoration.schema.json)."""
    body = {k: v for k, v in document.items() if k != "integrity"}
    text = json.dumps(body, separators=(",", ":"), ensure_ascii=False)
    if key is None:
        integrity = {"algorithm": "SHA-256", "digest": hashlib.sha256(text.encode("utf-8")).hexdigest()}
    else:
        digest = hmac.new(key.encode("utf-8"), text.encode("utf-8"), hashlib.sha256).hexdigest()
        integrity = {"algorithm": "HMAC-SHA256", "digest": digest}
    return json.dumps(dict(body, integrity=integrity), separators=(",", ":"), ensure_ascii=False)


def options_for(key: Optional[str], **more: Any) -> Dict[str, Any]:
    return dict({"integrityKey": key} if key else {}, **more)


def not_allowed(task: stepkit.Task, document: Dict[str, Any], key: Optional[str], tmp_path: Path) -> Dict[str, Any]:
    """Restores forged `document` (re-signed) expecting `notAllowed`; nothing may be created."""
    autosave = tmp_path / "autosave.json"
    with pytest.raises(stepkit.RestorationError) as info:
        task.restore(sign(document, key), options_for(key, autosave=str(autosave)))
    problem = info.value.errors[0]
    assert info.value.code == "ERESTORE" and problem["code"] == "notAllowed", info.value.error
    assert problem["message"].startswith("The restoration data describes a run the task does not allow")
    assert not autosave.exists(), "a refused restore wrote its autosave file"
    return problem


def restores(task: stepkit.Task, document: Dict[str, Any], key: Optional[str]) -> stepkit.Session:
    return task.restore(sign(document, key), options_for(key))


@pytest.fixture
def small() -> Any:
    with stepkit.Task.from_json(SMALL_TASK) as task:
        yield task


def open_small(task: stepkit.Task, key: Optional[str]) -> tuple:
    clock = stepkit.ManualClock(START_MS)
    session = task.open(options_for(key, taskRunUUID=RUN_UUID))
    session.set_clock(clock)
    return session, clock


def stopped_at_first_question(task: stepkit.Task, key: Optional[str]) -> Dict[str, Any]:
    """A run that went from the instruction to the first required question and stopped."""
    session, clock = open_small(task, key)
    with session:
        clock.advance(1000)
        session.forward()
        clock.advance(1000)
        return json.loads(session.save())


def walked_to_about(task: stepkit.Task, key: Optional[str]) -> Dict[str, Any]:
    """A legitimate run up to the form "about": likes, age answered, colour skipped."""
    session, clock = open_small(task, key)
    with session:
        for action in (lambda: None, lambda: session.set_answer(True), lambda: session.set_answer(40), lambda: None):
            action()
            clock.advance(1000)
            if session.state["step"]["identifier"] == "color":
                session.skip()
            else:
                session.forward()
        assert session.state["step"]["identifier"] == "about"
        return json.loads(session.save())


KEYS = pytest.mark.parametrize("key", [None, KEY], ids=["unkeyed", "keyed"])


# ------------------------------------------------------------------------------------------------
# The reproductions of the issue


@KEYS
def test_a_run_stopped_at_a_required_question_cannot_be_edited_into_completed(small, key, tmp_path):
    saved = stopped_at_first_question(small, key)
    assert restores(small, saved, key).state["step"]["identifier"] == "likes"  # the real data restores
    last = saved["path"][-1]["startDate"]
    # 1. The current visit closed and the run marked completed, with no answer.
    forged = copy.deepcopy(saved)
    forged.update(finishReason="completed", endDate=last + 10)
    forged["path"][-1]["endDate"] = last + 10
    problem = not_allowed(small, forged, key, tmp_path)
    assert '"likes"' in problem["message"] and problem["path"] == "path[1]", problem
    # 2. Every remaining step appended as visited, without an answer, ending completed.
    forged = copy.deepcopy(saved)
    forged["path"][-1]["endDate"] = last + 10
    for i, step in enumerate(["age", "color", "about", "done"]):
        forged["path"].append({"step": step, "startDate": last + 10 + i, "endDate": last + 11 + i, "skipped": False,
                               "modified": False, "hiddenItems": [], "arrival": [{"end": False}]})
    forged.update(finishReason="completed", endDate=last + 20)
    problem = not_allowed(small, forged, key, tmp_path)
    assert "requires" in problem["message"] and '"likes"' in problem["message"], problem


@KEYS
def test_a_reversed_path_is_refused(small, key, tmp_path):
    saved = walked_to_about(small, key)
    forged = copy.deepcopy(saved)
    forged["path"].reverse()
    assert not_allowed(small, forged, key, tmp_path)["path"].startswith("path[")
    # Reversed again with its dates put back in order: navigation itself refuses it.
    dates = [(v["startDate"], v["endDate"]) for v in saved["path"]]
    for visit, (start, end) in zip(forged["path"], dates):
        visit["startDate"], visit["endDate"] = start, end
    forged["path"][-1].pop("answer", None)
    forged["path"][-1].update(endDate=None, skipped=False)
    for visit in forged["path"][:-1]:
        visit.setdefault("endDate", visit["startDate"])
    problem = not_allowed(small, forged, key, tmp_path)
    assert "navigation" in problem["message"] or "requires" in problem["message"], problem


@KEYS
def test_dates_out_of_order_are_refused(small, key, tmp_path):
    saved = walked_to_about(small, key)
    session = restores(small, saved, key)
    session.finish("saved")
    finished = json.loads(session.save())
    session.close()
    assert restores(small, finished, key).state["status"] == "finished"
    cases: Dict[str, Callable[[Dict[str, Any]], None]] = {
        "run ends before it starts": lambda d: d.update(endDate=d["startDate"] - 1),
        "visit ends before it starts": lambda d: d["path"][1].update(endDate=d["path"][1]["startDate"] - 1),
        "visit starts before the one before ends": lambda d: d["path"][2].update(startDate=d["path"][1]["endDate"] - 1),
        "first visit before the run starts": lambda d: d.update(startDate=d["path"][0]["startDate"] + 1),
        "run ends before its last visit": lambda d: d.update(endDate=d["path"][-1]["startDate"] - 1),
        "an earlier visit never left": lambda d: d["path"][1].update(endDate=None),
    }
    for name, change in cases.items():
        forged = copy.deepcopy(finished)
        change(forged)
        problem = not_allowed(small, forged, key, tmp_path)
        assert "Date" in problem["path"] or "date" in problem["message"] or "never left" in problem["message"], (name, problem)
    # A run in progress has no end date.
    forged = copy.deepcopy(saved)
    forged["endDate"] = forged["path"][-1]["startDate"] + 1
    assert not_allowed(small, forged, key, tmp_path)["path"] == "endDate"


@KEYS
def test_a_required_step_saved_as_skipped_is_refused(small, key, tmp_path):
    saved = walked_to_about(small, key)
    assert [v["skipped"] for v in saved["path"]] == [False, False, False, True, False]
    forged = copy.deepcopy(saved)
    forged["path"][2].update(skipped=True)
    forged["path"][2].pop("answer")
    problem = not_allowed(small, forged, key, tmp_path)
    assert '"age"' in problem["message"] and "cannot be skipped" in problem["message"]
    # An answer no longer in the visit's format is damage, refused before the replay.
    forged = copy.deepcopy(saved)
    forged["path"][2]["answer"] = 200
    with pytest.raises(stepkit.RestorationError) as info:
        small.restore(sign(forged, key), options_for(key))
    assert info.value.errors[0]["code"] == "damaged"


def baseline(smoker: bool) -> Dict[str, Any]:
    return {"identifier": "baseline", "results": [
        {"identifier": "smoker", "results": [{"identifier": "smoker", "type": "boolean", "answer": smoker}]}]}


@KEYS
def test_forged_additional_task_results_are_refused(key, tmp_path):
    with stepkit.Task.from_json(FOLLOWUP_TASK) as task:
        clock = stepkit.ManualClock(START_MS)
        session = task.open(options_for(key, taskRunUUID=RUN_UUID, additionalTaskResults=[baseline(True)]))
        session.set_clock(clock)
        clock.advance(1000)
        session.forward()
        assert session.state["step"]["identifier"] == "smokingQuestions"
        saved = json.loads(session.save())
        session.close()
        assert restores(task, saved, key).state["step"]["identifier"] == "smokingQuestions"
        # The other task's result changed after the fact: the path no longer follows from it.
        forged = copy.deepcopy(saved)
        forged["additionalTaskResults"] = [baseline(False)]
        problem = not_allowed(task, forged, key, tmp_path)
        assert '"end"' in problem["message"] and problem["path"] == "path[1]", problem
        # Dropped altogether: the same.
        forged["additionalTaskResults"] = None
        not_allowed(task, forged, key, tmp_path)
        # Not task results at all: damaged, as the session option would be refused.
        forged["additionalTaskResults"] = [{"identifier": "baseline", "results": 7}]
        with pytest.raises(stepkit.RestorationError) as info:
            task.restore(sign(forged, key), options_for(key))
        assert info.value.errors[0]["code"] == "damaged"


@KEYS
def test_a_completed_run_must_end_where_navigation_ends(small, key, tmp_path):
    session, clock = open_small(small, key)
    with session:
        session.forward()
        session.set_answer(False)
        session.forward()
        session.set_answer(30)
        session.forward()
        session.skip()
        session.set_answer({"name": "Ann"})
        session.forward()
        clock.advance(500)
        session.forward()
        assert session.state["finishReason"] == "completed"
        finished = json.loads(session.save())
        expected = session.result
    back = restores(small, finished, key)
    assert back.result == expected  # the real completed run restores exactly
    back.close()
    # The last visit ("done") cut off: the run claims to have completed at "about".
    forged = copy.deepcopy(finished)
    forged["path"].pop()
    problem = not_allowed(small, forged, key, tmp_path)
    assert "goes on to \"done\"" in problem["message"], problem
    # A step modifier that did not apply, saved as applied.
    forged = copy.deepcopy(finished)
    forged["path"][2]["modified"] = True
    assert "modifier" in not_allowed(small, forged, key, tmp_path)["message"]


def test_an_edit_the_task_allows_still_restores_without_a_key(small):
    # What the unkeyed digest cannot tell: another answer the task allows. That is what
    # integrityKey is for (stepkit.h, docs/reliability.md).
    saved = walked_to_about(small, None)
    forged = copy.deepcopy(saved)
    forged["path"][2]["answer"] = 41
    forged["answers"]["age"] = 41
    with restores(small, forged, None) as back:
        assert back.result["results"][2]["results"][0]["answer"] == 41


# ------------------------------------------------------------------------------------------------
# The canonical fingerprint


def reordered(value: Any) -> Any:
    """Keys in reverse order and every whole number written as a real, as a jsonb column might."""
    if isinstance(value, dict):
        return {k: reordered(value[k]) for k in reversed(list(value))}
    if isinstance(value, list):
        return [reordered(v) for v in value]
    if isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    return value


def test_the_fingerprint_ignores_key_order_and_number_spelling(small):
    text = json.dumps(reordered(SMALL_TASK), indent=3)
    assert "18.0" in text and text.index('"steps"') < text.index('"identifier": "small"')
    session, _ = open_small(small, None)
    session.forward()
    session.set_answer(True)
    saved = session.save()
    session.close()
    with stepkit.Task.from_json(text) as same:
        with same.restore(saved) as back:
            assert back.state["step"]["identifier"] == "likes"
            assert json.loads(back.save())["task"] == json.loads(saved)["task"]
    # A real change still changes it.
    changed = copy.deepcopy(SMALL_TASK)
    changed["steps"][2]["answerFormat"]["maximum"] = 91
    with stepkit.Task.from_json(changed) as other:
        with pytest.raises(stepkit.RestorationError) as info:
            other.restore(saved)
        assert info.value.errors[0]["code"] == "taskChanged"
    changed = copy.deepcopy(SMALL_TASK)
    changed["steps"][0]["title"] = "Hello!"
    with stepkit.Task.from_json(changed) as other:
        with pytest.raises(stepkit.RestorationError):
            other.restore(saved)


# ------------------------------------------------------------------------------------------------
# Migration keeps the session options


RECORDING = {
    "identifier": "walk",
    "steps": [
        {"type": "instruction", "identifier": "intro", "title": "Walk"},
        {"type": "active", "identifier": "walking", "stepDuration": 10, "shouldStartTimerAutomatically": True,
         "shouldContinueOnFinish": True,
         "recorderConfigurations": [{"type": "accelerometer", "identifier": "accel", "frequency": 10}]},
        {"type": "completion", "identifier": "done"},
    ],
}


def test_a_migrated_run_with_recorders_records_and_completes(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    with stepkit.Task.from_json(RECORDING) as old:
        session = old.open({"taskRunUUID": RUN_UUID, "outputDirectory": str(out)})
        saved = session.save()  # stopped on the instruction
        session.close()
    newer = copy.deepcopy(RECORDING)
    newer["steps"][0]["title"] = "Walk (version 2)"
    with stepkit.Task.from_json(newer) as task:
        options = {"migrate": True, "outputDirectory": str(out), "recorderFileSizeLimit": 4096,
                   "continueOnRecorderFailure": False}
        with task.restore(saved, options) as session:
            assert session.restore_report["migrated"] is True
            # Migration walks over the instruction to the active step, whose recorder starts
            # where the options say (without "outputDirectory" it failed, and so did the run).
            state = session.state
            assert state["step"]["identifier"] == "walking"
            assert [r["status"] for r in state["active"]["recorders"]] == ["running"]
            samples = [{"timestamp": i / 10, "x": i} for i in range(400)]  # past 4096 bytes: rolls over
            for start in range(0, len(samples), 50):
                session.record("accel", samples[start:start + 50])
            assert session.finish_active()["step"]["identifier"] == "done"
            session.forward()
            assert session.state["finishReason"] == "completed"
            files = next(r for r in session.result["results"] if r["identifier"] == "walking")["results"]
            assert len(files) >= 2, files  # the file size limit was carried over
            items = []
            for f in files:
                with open(out / f["fileName"], encoding="utf-8") as handle:
                    items += json.load(handle)["items"]
            assert items == samples
            assert json.loads(session.save())["taskRunUUID"].lower() == RUN_UUID


def test_a_migrated_run_never_starts_after_its_first_visit(small):
    saved = stopped_at_first_question(small, None)
    saved["startDate"] = 32503680000000  # the year 3000: later than anything migration dates now
    changed = copy.deepcopy(SMALL_TASK)
    changed["steps"][0]["title"] = "Hello again"
    with stepkit.Task.from_json(changed) as task:
        with task.restore(sign(saved, None), {"migrate": True}) as session:
            data = json.loads(session.save())
            assert data["startDate"] <= data["path"][0]["startDate"]
            with task.restore(session.save()) as again:  # its own data describes an allowed run
                assert again.state == dict(session.state, restoreReport=None)


def test_a_clock_that_goes_backwards_never_dates_a_visit_before_the_last(small):
    # Another clock set mid-run, earlier than the run's dates: the session's time stands still
    # until the clock catches up, so its own data keeps its dates in order and restores.
    session, clock = open_small(small, None)
    with session:
        clock.advance(5000)
        session.forward()
        session.set_clock(stepkit.ManualClock(START_MS - 100_000))
        session.set_answer(True)
        session.forward()
        saved = session.save()
        path = json.loads(saved)["path"]
        assert path[1]["endDate"] == path[1]["startDate"] == path[2]["startDate"] == START_MS + 5000
        with small.restore(saved) as back:
            assert back.state["step"]["identifier"] == "age"


HIDDEN_CHAIN = {
    "identifier": "chain",
    "steps": [
        {"type": "form", "identifier": "f", "formItems": [
            {"identifier": "c", "text": "C", "answerFormat": {"type": "boolean"}},
            {"identifier": "b", "text": "B", "optional": True,
             "answerFormat": {"type": "numeric", "style": "integer", "minimum": 0, "maximum": 9},
             "visibleWhen": {"result": {"step": "f", "item": "c"}, "equals": True}},
            {"identifier": "a", "text": "A", "optional": True,
             "answerFormat": {"type": "numeric", "style": "integer", "minimum": 0, "maximum": 9},
             "visibleWhen": {"result": {"step": "f", "item": "b"}, "answered": True}},
        ]},
        {"type": "question", "identifier": "again", "answerFormat": {"type": "boolean"}},
        {"type": "completion", "identifier": "done"},
    ],
    "navigationRules": {
        "again": {"type": "predicate", "branches": [
            {"when": {"result": {"step": "again"}, "equals": True}, "destination": "f"}]},
    },
}


def test_a_loop_over_a_form_whose_visibility_reads_a_hidden_item_restores():
    # The first visit of "f" was left with "b" hidden (c is false) but stored, which keeps "a"
    # visible; the visit's saved answer leaves "b" out, and the step's latest answer (from the
    # loop's second visit) differs. The replay takes the hidden item's stored value from it.
    with stepkit.Task.from_json(HIDDEN_CHAIN) as task:
        clock = stepkit.ManualClock(START_MS)
        session = task.open({"taskRunUUID": RUN_UUID})
        session.set_clock(clock)
        with session:
            session.set_answer({"c": True, "b": 1, "a": 2})
            session.set_answer({"c": False})
            assert session.state["visibleItems"] == ["c", "a"]
            clock.advance(1000)
            session.forward()
            session.set_answer(True)
            clock.advance(1000)
            session.forward()  # the loop: back to "f"
            session.set_answer({"c": True, "a": None})
            clock.advance(1000)
            session.forward()
            saved = session.save()
            data = json.loads(saved)
            assert data["path"][0]["hiddenItems"] == ["b"] and data["path"][0]["answer"] == {"c": False, "a": 2}
            with task.restore(saved) as back:
                assert back.state == session.state
                assert back.save() == saved


def test_a_run_that_failed_as_an_active_step_appeared_restores():
    # short-walk's countdown starts an async action whose recorder fails without an output
    # directory, so the run fails as the step appears, before its timer is prepared: that saved
    # run is one the task allows (found by the compile fuzz target).
    examples = Path(__file__).resolve().parents[3] / "examples" / "tasks"
    with stepkit.Task.from_file(examples / "short-walk.json") as task:
        with task.open({"taskRunUUID": RUN_UUID}) as session:
            session.set_clock(lambda: START_MS)
            state = session.forward()
            assert (state["status"], state["finishReason"]) == ("finished", "failed")
            saved = session.save()
        with task.restore(saved) as restored:
            assert restored.save() == saved
