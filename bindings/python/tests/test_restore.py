"""Save, restore, migrate, prefill and autosave (issue 4: nothing lost), through the binding.

- a property-based test (Hypothesis): random tasks from a small grammar and random actions;
  after every action the session is saved and restored, and every restored copy must behave
  exactly like the uninterrupted session from then on (every output, the final result);
- tamper tests: every kind of wrong or damaged data is refused with its specific code, and
  no session (nor autosave file) is made;
- restoring finished sessions, form drafts, off-path drafts and the back history;
- migration to another version of a task;
- prefill from a default result and from personal data;
- crash-safe autosave: a child process killed with SIGKILL at random points loses no answer
  it had reported as accepted; autosave failures raise StepKitIOError and change nothing.

The saved data against schema/restoration.schema.json is checked in test_schema.py.
Needs ``hypothesis`` (``pip install hypothesis``).
"""

from __future__ import annotations

import copy
import datetime
import hashlib
import hmac
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

try:  # Hypothesis's caches go to the temporary directory, not a .hypothesis/ in the checkout
    from hypothesis.configuration import set_hypothesis_home_dir
except ImportError:  # pragma: no cover - older Hypothesis
    pass
else:
    set_hypothesis_home_dir(Path(tempfile.gettempdir()) / "stepkit-hypothesis")

import stepkit
from conftest import RUN_UUID, SMALL_TASK, START_MS, autosaved, cli_env, step_id, walk_to

RESTORE_CODES = {
    "damaged",
    "auditTampered",
    "auditDamaged",
    "notRestorationData",
    "unsupportedVersion",
    "integrityCheckFailed",
    "keyRequired",
    "integrityMissing",
    "differentTask",
    "taskChanged",
    "notAllowed",
}

Outcome = Tuple[str, Any]


# ------------------------------------------------------------------------------------------------
# Helpers


def outcome(call: Callable[[], Any]) -> Outcome:
    """What a call gave: ("ok", its value) or (exception class name, the whole error JSON)."""
    try:
        return ("ok", call())
    except stepkit.StepKitError as exc:
        return (type(exc).__name__, exc.error)


def without_events(result: Outcome) -> Outcome:
    kind, value = result
    if kind == "ok" and isinstance(value, dict):
        return (kind, {k: v for k, v in value.items() if k != "events"})
    return result


def events_of(result: Outcome) -> List[Any]:
    kind, value = result
    return list(value.get("events", [])) if kind == "ok" and isinstance(value, dict) else []


def answers_in(result: Dict[str, Any]) -> Dict[str, Any]:
    """Step identifier -> the answer in a task result (a form: {item: answer}); later visits win."""
    answers: Dict[str, Any] = {}
    for step in result["results"]:
        questions = step["results"]
        if len(questions) == 1 and questions[0]["identifier"] == step["identifier"]:
            answers[step["identifier"]] = questions[0]["answer"]
        elif questions:
            answers[step["identifier"]] = {q["identifier"]: q["answer"] for q in questions}
    return answers


def opened(task: stepkit.Task, clock: stepkit.ManualClock, options: Optional[Dict[str, Any]] = None) -> stepkit.Session:
    session = task.open(dict({"taskRunUUID": RUN_UUID}, **(options or {})))
    session.set_clock(clock)
    return session


def without_restores(saved: str) -> Dict[str, Any]:
    """Restoration data without its integrity member, its trail's digests and its "restored"
    events: what a copy restored midway and the original must agree on."""
    document = json.loads(saved)
    document.pop("integrity", None)
    audit = document.pop("audit", {"events": []})
    document["auditEvents"] = [{k: v for k, v in e.items() if k != "digest"}
                               for e in audit["events"] if e["type"] != "restored"]
    return document


def restored(
    task: stepkit.Task,
    saved: Any,
    clock: Optional[stepkit.ManualClock] = None,
    options: Optional[Dict[str, Any]] = None,
) -> stepkit.Session:
    session = task.restore(saved, options)
    if clock is not None:
        session.set_clock(clock)
    return session


def refusal(task: stepkit.Task, saved: Any, spare: Path, options: Optional[Dict[str, Any]] = None) -> str:
    """Restores `saved` expecting a refusal; returns its specific code.

    The options carry an autosave path: a refused restore must not have written it (no session,
    not even half of one)."""
    target = spare / f"refused-{random.getrandbits(48):012x}.json"
    with pytest.raises(stepkit.RestorationError) as info:
        task.restore(saved, dict(options or {}, autosave=str(target)))
    error = info.value
    assert error.status == -6 and error.code == "ERESTORE"
    assert isinstance(error.message, str) and error.message
    assert error.errors and error.errors[0]["message"]
    assert not target.exists(), "a refused restore wrote its autosave file"
    code = error.errors[0]["code"]
    assert code in RESTORE_CODES, error.error
    return code


def signed(document: Dict[str, Any], key: Optional[str] = None) -> Dict[str, Any]:
    """`document` with a freshly computed integrity member, the way the schema describes it:
    SHA-256 (or HMAC-SHA256 under `key`) of the compact JSON without "integrity", keys in order."""
    body = {k: v for k, v in document.items() if k != "integrity"}
    text = json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    if key is None:
        integrity = {"algorithm": "SHA-256", "digest": hashlib.sha256(text).hexdigest()}
    else:
        digest = hmac.new(key.encode("utf-8"), text, hashlib.sha256).hexdigest()
        integrity = {"algorithm": "HMAC-SHA256", "digest": digest}
    return dict(body, integrity=integrity)


@pytest.fixture
def small() -> Any:
    with stepkit.Task.from_json(SMALL_TASK) as compiled:
        yield compiled


@pytest.fixture
def walked(small: stepkit.Task) -> Tuple[stepkit.Session, stepkit.ManualClock]:
    """A small-task session on "about" with a form draft, and its clock."""
    clock = stepkit.ManualClock(START_MS)
    session = opened(small, clock)
    for answer in (None, True, 42, ["blue"]):  # intro, likes, age, color: a second apart
        if answer is not None:
            session.set_answer(answer)
        clock.advance(1000)
        session.forward()
    assert step_id(session.state) == "about"
    clock.advance(1500)
    session.set_answer({"name": "Ann"})
    return session, clock


# ------------------------------------------------------------------------------------------------
# The binding itself


def test_save_returns_the_restoration_text(walked):
    session, _ = walked
    text = session.save()
    assert isinstance(text, str)
    data = json.loads(text)
    assert data["format"] == "stepkit-restoration"
    assert data["version"] == 1
    assert data["task"]["identifier"] == "small"
    assert data["taskRunUUID"].lower() == RUN_UUID
    assert data["answers"]["about"] == {"name": "Ann"}
    # compact, as StepKit writes it, and its digest is the documented one
    assert text == json.dumps(data, separators=(",", ":"), ensure_ascii=False)
    assert signed(data) == data


def test_save_is_a_pure_read(walked):
    session, clock = walked
    before = session.state
    first = session.save()
    clock.advance(5000)
    assert session.save() == first
    assert session.state == before


def test_restore_accepts_text_bytes_and_dict(walked, small):
    session, clock = walked
    text = session.save()
    for saved in (text, text.encode("utf-8"), bytearray(text.encode("utf-8")), json.loads(text)):
        back = restored(small, saved, clock)
        assert back.state == session.state
        assert back.result == session.result
        assert back.save() == text
        assert back.restore_report is None
        back.close()


def test_restored_session_belongs_to_the_task(walked, small):
    session, _ = walked
    back = small.restore(session.save())
    assert isinstance(back, stepkit.Session)
    assert back.task is small
    small.close()  # the session keeps the compiled task alive
    assert back.state["step"]["identifier"] == "about"
    back.close()
    with pytest.raises(stepkit.StateError):
        back.save()


def test_restore_on_a_closed_task_and_closed_session(walked):
    session, _ = walked
    text = session.save()
    task = stepkit.Task.from_json(SMALL_TASK)
    task.close()
    with pytest.raises(stepkit.StateError):
        task.restore(text)
    session.close()
    with pytest.raises(stepkit.StateError):
        session.save()
    with pytest.raises(stepkit.StateError):
        session.restore_report


def test_restore_argument_types(small, walked, tmp_path):
    session, _ = walked
    text = session.save()
    with pytest.raises(TypeError):
        small.restore(42)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        small.restore(text, 42)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        small.restore({"x": {1, 2}})
    # text C cannot receive whole, or a dict JSON cannot hold, is damaged data
    assert refusal(small, text[:40] + "\x00" + text[40:], tmp_path) == "damaged"
    assert refusal(small, b"\xff\xfe" + text.encode(), tmp_path) == "damaged"
    assert refusal(small, "\ud800", tmp_path) == "damaged"
    assert refusal(small, dict(json.loads(text), startDate=float("nan")), tmp_path) == "damaged"


def test_restore_options(small, walked, tmp_path):
    session, _ = walked
    text = session.save()
    # the run's identity comes from the data: open's taskRunUUID/additionalTaskResults are refused
    for bad in ({"taskRunUUID": RUN_UUID}, {"additionalTaskResults": []}, {"nope": 1}, {"migrate": "yes"}):
        with pytest.raises(stepkit.InvalidArgumentError):
            small.restore(text, bad)
    with pytest.raises(stepkit.ParseError):
        small.restore(text, "{")
    with pytest.raises(stepkit.InvalidArgumentError):
        small.restore(text, {"integrityKey": ""})
    back = small.restore(text, json.dumps({"migrate": False}))
    assert back.state["step"]["identifier"] == "about"


def test_restore_report_is_none_normally(walked):
    session, _ = walked
    assert session.restore_report is None
    assert session.state["restoreReport"] is None


def test_c_abi_of_save_and_restore(walked, small):
    # NULL arguments are EINVAL and *out is NULL on every failure (stepkit.h conventions).
    from ctypes import byref, c_void_p

    from stepkit import _ffi

    lib = _ffi.lib()
    session, _ = walked
    text = session.save().encode("utf-8")
    out = c_void_p(0x1234)
    assert lib.stepkit_session_save(None, byref(out)) == -1
    assert out.value is None
    assert lib.stepkit_session_save(session._handle, None) == -1
    for task_handle, saved in ((None, text), (small._handle, None)):
        out = c_void_p(0x1234)
        assert lib.stepkit_session_restore(task_handle, saved, None, byref(out)) == -1
        assert out.value is None
        assert json.loads(lib.stepkit_last_error())["code"] == "EINVAL"
    assert lib.stepkit_session_restore(small._handle, text, None, None) == -1
    out = c_void_p(0x1234)
    assert lib.stepkit_session_restore(small._handle, text[:10], None, byref(out)) == -6
    assert out.value is None
    error = json.loads(lib.stepkit_last_error())
    assert error["status"] == -6 and error["code"] == "ERESTORE" and error["errors"][0]["code"] == "damaged"
    out = c_void_p()
    assert lib.stepkit_session_restore(small._handle, text, None, byref(out)) == 0
    assert out.value
    lib.stepkit_session_free(out.value)


# ------------------------------------------------------------------------------------------------
# Property: save and restore after every action; the copies behave like the original


CHOICE_VALUES = ["a", "b", "none"]
DATE_MIN = datetime.date(2020, 1, 1)
DATE_MAX = datetime.date(2030, 12, 31)


@st.composite
def answer_formats(draw: Any) -> Dict[str, Any]:
    kind = draw(
        st.sampled_from(["boolean", "numeric", "singleChoice", "multipleChoice", "text", "scale", "date", "timeOfDay"])
    )
    fmt: Dict[str, Any]
    if kind == "boolean":
        fmt = {"type": "boolean"}
    elif kind == "numeric":
        low = draw(st.integers(-5, 5))
        fmt = {"type": "numeric", "style": "integer", "minimum": low, "maximum": low + draw(st.integers(1, 20))}
    elif kind in ("singleChoice", "multipleChoice"):
        fmt = {
            "type": "textChoice",
            "style": kind,
            "textChoices": [
                {"text": "A", "value": "a"},
                {"text": "B", "value": "b"},
                {"text": "None of these", "value": "none",
                 "exclusive": kind == "multipleChoice" and draw(st.booleans())},
            ],
        }
    elif kind == "text":
        fmt = {"type": "text", "maximumLength": draw(st.integers(3, 12))}
    elif kind == "scale":
        fmt = {"type": "scale", "minimum": 0, "maximum": 10, "step": draw(st.sampled_from([1, 2, 5]))}
    elif kind == "date":
        fmt = {"type": "date", "style": "date",
               "minimumDate": DATE_MIN.isoformat(), "maximumDate": DATE_MAX.isoformat()}
    else:
        fmt = {"type": "timeOfDay"}
    if draw(st.integers(0, 5)) == 0:
        fmt["showDontKnowButton"] = True
    return fmt


def valid_answers(fmt: Dict[str, Any]) -> st.SearchStrategy[Any]:
    kind = fmt["type"]
    strategy: st.SearchStrategy[Any]
    if kind == "boolean":
        strategy = st.booleans()
    elif kind == "numeric":
        strategy = st.integers(fmt["minimum"], fmt["maximum"])
    elif kind == "textChoice" and fmt["style"] == "singleChoice":
        strategy = st.sampled_from(CHOICE_VALUES).map(lambda v: [v])
    elif kind == "textChoice":
        strategy = st.lists(st.sampled_from(CHOICE_VALUES), min_size=1, max_size=3, unique=True)
    elif kind == "text":
        strategy = st.text(alphabet="abz é/\"", max_size=fmt["maximumLength"])
    elif kind == "scale":
        strategy = st.sampled_from(list(range(0, 11, fmt["step"])))
    elif kind == "date":
        strategy = st.dates(DATE_MIN, DATE_MAX).map(lambda d: d.isoformat())
    else:
        strategy = st.tuples(st.integers(0, 23), st.integers(0, 59)).map(lambda hm: f"{hm[0]:02d}:{hm[1]:02d}")
    if fmt.get("showDontKnowButton"):
        strategy = st.one_of(strategy, st.just({"dontKnow": True}))
    return strategy


def invalid_answers(fmt: Dict[str, Any]) -> st.SearchStrategy[Any]:
    kind = fmt["type"]
    bad: List[Any]
    if kind == "boolean":
        bad = ["yes", 1, [True]]
    elif kind == "numeric":
        bad = [fmt["maximum"] + 1, fmt["minimum"] - 1, 1.5, "3"]
    elif kind == "textChoice":
        bad = [["zzz"], "a", [1]] + ([["a", "b"]] if fmt["style"] == "singleChoice" else [])
    elif kind == "text":
        bad = ["x" * (fmt["maximumLength"] + 1), 5]
    elif kind == "scale":
        bad = [11, -1, "5"] + ([1] if fmt["step"] > 1 else [])
    elif kind == "date":
        bad = ["2040-01-01", "2026-13-01", "yesterday", 20260101]
    else:
        bad = ["24:00", "7:5", 730]
    if not fmt.get("showDontKnowButton"):
        bad.append({"dontKnow": True})
    return st.sampled_from(bad)


def pick(draw: Any, options: List[Any]) -> Any:
    """One of `options` (drawn by index: cheaper than a new sampled_from strategy per draw)."""
    return options[draw(st.integers(0, len(options) - 1))]


def comparison(draw: Any, targets: List[Tuple[Any, Dict[str, Any]]]) -> Dict[str, Any]:
    """A comparison on an earlier question or form item (selector, format) that fits its type."""
    selector, fmt = pick(draw, targets)
    kind = fmt["type"]
    options: List[Dict[str, Any]] = [{"answered": draw(st.booleans())}]
    if kind == "boolean":
        options.append({"equals": draw(st.booleans())})
    elif kind == "numeric":
        options.append({"minimum": draw(st.integers(fmt["minimum"], fmt["maximum"]))})
        options.append({"maximum": draw(st.integers(fmt["minimum"], fmt["maximum"]))})
    elif kind == "scale":
        options.append({"exclusiveMinimum": draw(st.integers(0, 10))})
    elif kind == "textChoice":
        options.append({"contains": pick(draw, CHOICE_VALUES)})
        options.append({"containsAny": ["a", "none"]})
    elif kind == "text":
        options.append({"matches": "a"})
    elif kind == "date":
        options.append({"minimum": "2025-06-01"})
    else:
        options.append({"maximum": "12:00"})
    return dict({"result": selector}, **pick(draw, options))


def predicate(draw: Any, targets: List[Tuple[Any, Dict[str, Any]]]) -> Dict[str, Any]:
    """A comparison, or not/any/all of comparisons."""
    shape = draw(st.integers(0, 5))
    if shape == 3:
        return {"not": comparison(draw, targets)}
    if shape == 4:
        return {"any": [comparison(draw, targets), comparison(draw, targets)]}
    if shape == 5:
        return {"all": [comparison(draw, targets), comparison(draw, targets)]}
    return comparison(draw, targets)


@st.composite
def task_definitions(draw: Any) -> Dict[str, Any]:
    count = draw(st.integers(2, 6))
    steps: List[Dict[str, Any]] = []
    targets: List[Tuple[Any, Dict[str, Any]]] = []
    before: List[List[Tuple[Any, Dict[str, Any]]]] = []  # targets answered before each step
    for i in range(count):
        sid = f"s{i}"
        kind = pick(draw, ["instruction", "question", "question", "question", "form", "form"])
        new: List[Tuple[Any, Dict[str, Any]]] = []
        if kind == "instruction":
            step: Dict[str, Any] = {"type": "instruction", "identifier": sid, "title": f"Step {i}"}
        elif kind == "question":
            fmt = draw(answer_formats())
            step = {"type": "question", "identifier": sid, "title": f"Q{i}", "answerFormat": fmt,
                    "optional": draw(st.booleans())}
            new = [(sid, fmt)]
        else:
            items = []
            for j in range(draw(st.integers(1, 3))):
                fmt = draw(answer_formats())
                item: Dict[str, Any] = {"identifier": f"i{j}", "text": f"Item {j}", "answerFormat": fmt,
                                        "optional": draw(st.booleans())}
                readable = targets + new
                if readable and draw(st.integers(0, 2)) == 0:
                    item["visibleWhen"] = predicate(draw, readable)
                items.append(item)
                new.append(({"step": sid, "item": f"i{j}"}, fmt))
            step = {"type": "form", "identifier": sid, "title": f"Form {i}", "formItems": items,
                    "optional": draw(st.booleans())}
        steps.append(step)
        before.append(list(targets))
        targets = targets + new
    if draw(st.booleans()):
        steps.append({"type": "completion", "identifier": f"s{count}", "title": "Done"})
        before.append(list(targets))
    ids = [s["identifier"] for s in steps]
    definition: Dict[str, Any] = {"identifier": "random", "steps": steps}
    navigation: Dict[str, Any] = {}
    skips: Dict[str, Any] = {}
    modifiers: Dict[str, Any] = {}
    for i, sid in enumerate(ids):
        readable = before[i + 1] if i + 1 < len(before) else targets
        roll = draw(st.integers(0, 9))
        if roll < 3 and readable:
            branches = [
                {"when": predicate(draw, readable), "destination": pick(draw, ids + ["$end"])}
                for _ in range(draw(st.integers(1, 2)))
            ]
            rule: Dict[str, Any] = {"type": "predicate", "branches": branches}
            if draw(st.booleans()):
                rule["defaultDestination"] = pick(draw, ids[i + 1:] + ["$end"])
            navigation[sid] = rule
        elif roll == 3:
            navigation[sid] = {"type": "direct", "destination": pick(draw, ids[i + 1:] + ["$end"])}
        if i > 0 and before[i] and draw(st.integers(0, 4)) == 0:
            skips[sid] = predicate(draw, before[i])
        if before[i] and draw(st.integers(0, 5)) == 0:
            modifiers[sid] = {"when": predicate(draw, before[i]), "set": {"title": f"Modified {i}"}}
    if navigation:
        definition["navigationRules"] = navigation
    if skips:
        definition["skipRules"] = skips
    if modifiers:
        definition["stepModifiers"] = modifiers
    return definition


# Action kinds, weighted by repetition (finishing early is rare: most runs walk the task).
ACTIONS = ["forward", "answer"] * 12 + ["back", "invalid"] * 2 + ["skip", "back"] * 2 + ["clear"]
FINISH_ONE_IN = 40


def draw_action(data: Any, definition: Dict[str, Any], state: Dict[str, Any]) -> Tuple[str, Any]:
    # (not 0: Hypothesis favours boundary values)
    if data.draw(st.integers(0, FINISH_ONE_IN - 1), label="finish?") == FINISH_ONE_IN // 2:
        return ("finish", data.draw(st.sampled_from(list(stepkit.FINISH_REASONS)), label="reason"))
    kind = data.draw(st.sampled_from(ACTIONS), label="action")
    if kind not in ("answer", "invalid", "clear"):
        return (kind, None)
    current = state["step"]
    step = next((s for s in definition["steps"] if current and s["identifier"] == current["identifier"]), None)
    if step is None or step["type"] in ("instruction", "completion"):
        if data.draw(st.integers(0, 3), label="refused answer?") > 0:
            return ("forward", None)
        return ("answer", True)  # refused: no step, or a step that takes no answer
    if step["type"] == "question":
        fmt = step["answerFormat"]
        if kind == "clear":
            return ("answer", None)
        strategy = valid_answers(fmt) if kind == "answer" else invalid_answers(fmt)
        return ("answer", data.draw(strategy, label="answer"))
    items = step["formItems"]
    if kind == "clear":
        return ("answer", {data.draw(st.sampled_from(items))["identifier"]: None})
    if kind == "invalid":
        item = data.draw(st.sampled_from(items))
        how = data.draw(st.sampled_from(["value", "unknownItem", "notAnObject"]))
        if how == "unknownItem":
            return ("answer", {"nope": 1})
        if how == "notAnObject":
            return ("answer", "x")
        return ("answer", {item["identifier"]: data.draw(invalid_answers(item["answerFormat"]))})
    if data.draw(st.booleans(), label="whole form?"):
        chosen = items
    else:
        chosen = data.draw(
            st.lists(st.sampled_from(items), min_size=1, max_size=len(items), unique_by=lambda i: i["identifier"])
        )
    return ("answer", {item["identifier"]: data.draw(valid_answers(item["answerFormat"])) for item in chosen})


def apply(session: stepkit.Session, action: Tuple[str, Any]) -> Outcome:
    kind, argument = action
    if kind == "answer":
        return outcome(lambda: session.set_answer(argument))
    if kind == "forward":
        return outcome(session.forward)
    if kind == "back":
        return outcome(session.back)
    if kind == "skip":
        return outcome(session.skip)
    assert kind == "finish"
    return outcome(lambda: session.finish(argument))


@settings(
    max_examples=60,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(definition=task_definitions(), data=st.data())
def test_property_save_and_restore_after_every_action(definition, data):
    try:
        task = stepkit.Task.from_json(definition)
    except stepkit.DefinitionError as exc:  # the grammar must only make valid tasks
        raise AssertionError(f"generated task does not compile: {exc}\n{json.dumps(definition)}") from None
    clock = stepkit.ManualClock(START_MS)
    original = opened(task, clock)
    copies: List[Tuple[int, stepkit.Session]] = []
    actions = data.draw(st.integers(6, 30), label="number of actions")
    event(f"actions: {actions // 5 * 5}+")
    after_finish = 0
    try:
        for number in range(actions):
            state = original.state
            action = draw_action(data, definition, state)
            expected = apply(original, action)
            event(f"{action[0]}: {expected[0]}")
            for made_at, copy_ in copies:
                got = apply(copy_, action)
                # Events are notifications, not data: the ones still queued when the session was
                # saved are not in restoration data, so a copy's first call may list fewer. The
                # events it does list must be the original's latest ones.
                assert without_events(got) == without_events(expected), (
                    f"copy restored after action {made_at} differs at action {number}: {action}")
                got_events, expected_events = events_of(got), events_of(expected)
                assert expected_events[len(expected_events) - len(got_events):] == got_events
            if expected[0] == "ok":
                # Time moves only when something happened: a clock set on an opened session
                # nothing has happened to yet re-reads its start time (stepkit.h).
                clock.advance(data.draw(st.integers(1, 90_000), label="ms"))
            saved = original.save()
            copy_ = restored(task, saved if number % 2 else json.loads(saved), clock)
            assert copy_.state == original.state
            assert copy_.result == original.result
            assert copy_.save() == saved
            copies.append((number, copy_))
            if original.state["status"] == "finished":
                after_finish += 1
                if after_finish > 2:
                    break
        if original.state["status"] != "finished":
            clock.advance(1000)
            expected = apply(original, ("finish", "saved"))
            for _, copy_ in copies:
                assert without_events(apply(copy_, ("finish", "saved"))) == without_events(expected)
        final_result, final_state, final_save = original.result, original.state, original.save()
        event(f"finished: {final_state['finishReason']}")
        event(f"steps visited: {len(final_result['results'])}")
        if json.loads(final_save)["laterAnswers"]:
            event("loop answers waiting (laterAnswers)")
        for made_at, copy_ in copies:
            assert copy_.result == final_result, f"final result of the copy restored after action {made_at}"
            assert copy_.state == final_state
            # The same data, but for the audit trail: the copy's records its restore (when
            # something happened after it; docs/audit.md), the rest of its events are the
            # original's, and its chain holds on its own (restore checks it).
            assert without_restores(copy_.save()) == without_restores(final_save)
            if copy_.save() != final_save:
                assert [e["type"] for e in copy_.audit()["events"]].count("restored") == 1
    finally:
        for _, copy_ in copies:
            copy_.close()
        original.close()
        task.close()


# ------------------------------------------------------------------------------------------------
# Tamper tests: every refusal has its code, and no session is made


def test_every_flipped_character_is_refused(walked, small, tmp_path):
    session, _ = walked
    text = session.save()
    codes = set()
    for position, char in enumerate(text):
        if char.isdigit():
            other = str((int(char) + 1) % 10)
        elif char.isalpha() and char.isascii():
            base = "a" if char.islower() else "A"
            other = chr((ord(char) - ord(base) + 1) % 26 + ord(base))
        else:
            other = "x" if char != "x" else "y"
        codes.add(refusal(small, text[:position] + other + text[position + 1:], tmp_path))
    # the digest covers everything; what is read before it has its own codes
    # (the audit trail's own codes name the event a flip in the trail hit: docs/audit.md)
    assert codes <= {"damaged", "notRestorationData", "unsupportedVersion", "integrityCheckFailed", "integrityMissing",
                     "auditTampered", "auditDamaged"}
    assert {"damaged", "integrityCheckFailed", "notRestorationData", "unsupportedVersion"} <= codes


@pytest.mark.parametrize(
    "change",
    [
        lambda d: d["answers"].update(likes=False),
        lambda d: d["answers"].update(age=43),
        lambda d: d["answers"]["about"].update(name="Bob"),
        lambda d: d["path"][1].update(answer=False),
        lambda d: d["path"].pop(),
        lambda d: d["path"][0].update(startDate=d["path"][0]["startDate"] + 1),
        lambda d: d.update(startDate=d["startDate"] - 1),
        lambda d: d.update(taskRunUUID="00000000-0000-4000-8000-000000000000"),
        lambda d: d.update(touched=False),
        lambda d: d.update(finishReason="saved", endDate=d["startDate"]),
        lambda d: d.update(additionalTaskResults=[]),
        lambda d: d["task"].update(fingerprint="0" * 64),
        lambda d: d.update(extra=1),
        lambda d: d["integrity"].update(digest="0" * 64),
        lambda d: d["integrity"].update(digest=d["integrity"]["digest"].upper()),
        lambda d: d["integrity"].update(algorithm="MD5"),
        lambda d: d["integrity"].update(algorithm="HMAC-SHA256"),
    ],
    ids=[
        "answer", "number answer", "form item", "visit answer", "visit removed", "visit date",
        "start date", "run UUID", "touched", "finished", "additionalTaskResults", "fingerprint",
        "extra key", "digest zeroed", "digest in capitals", "unknown algorithm", "algorithm HMAC",
    ],
)
def test_changed_values_fail_the_integrity_check(walked, small, tmp_path, change):
    session, _ = walked
    data = json.loads(session.save())
    change(data)
    code = refusal(small, data, tmp_path)
    # signed with HMAC but no key given: "keyRequired" is the more specific answer; the audit
    # trail's chain starts from the run's UUID, so a changed UUID breaks it at its first event
    # (docs/audit.md), the more specific answer again
    if data["integrity"]["algorithm"] == "HMAC-SHA256":
        assert code == "keyRequired"
    elif data["taskRunUUID"] != json.loads(session.save())["taskRunUUID"] and data["audit"]["events"]:
        assert code == "auditTampered"
    else:
        assert code == "integrityCheckFailed"


def test_reordered_keys_fail_the_integrity_check(walked, small, tmp_path):
    # the digest is over the document as written: a reader must not reorder keys (schema)
    session, _ = walked
    data = json.loads(session.save())
    reordered = dict(reversed(list(data.items())))
    assert refusal(small, reordered, tmp_path) == "integrityCheckFailed"
    assert small.restore(dict(data)).state == restored(small, session.save()).state


def test_cut_data_is_damaged(walked, small, tmp_path):
    session, _ = walked
    text = session.save()
    for length in list(range(0, len(text), 23)) + [len(text) - 1]:
        assert refusal(small, text[:length], tmp_path) == "damaged", length
    assert refusal(small, text + "}", tmp_path) == "damaged"
    assert refusal(small, text + text, tmp_path) == "damaged"
    # surrounding whitespace is still the same JSON document
    assert small.restore(" \n" + text + "\n").save() == text


@pytest.mark.parametrize(
    "saved, code",
    [
        ("", "damaged"),
        ("not json", "damaged"),
        ("[]", "damaged"),
        ("null", "damaged"),
        ("42", "damaged"),
        ('"stepkit-restoration"', "damaged"),
        ("{}", "notRestorationData"),
        ('{"format": "stepkit-restoration"}', "unsupportedVersion"),
        ('{"format": "stepkit-restoration", "version": 1}', "integrityMissing"),
        (json.dumps(SMALL_TASK), "notRestorationData"),
    ],
)
def test_not_restoration_data(small, tmp_path, saved, code):
    assert refusal(small, saved, tmp_path) == code


def test_a_task_result_is_not_restoration_data(walked, small, tmp_path):
    session, _ = walked
    assert refusal(small, session.result, tmp_path) == "notRestorationData"
    assert refusal(small, session.state, tmp_path) == "notRestorationData"


@pytest.mark.parametrize("version", [0, 2, 99, -1, "1", 1.0, None, True])
def test_other_versions_are_unsupported(walked, small, tmp_path, version):
    session, _ = walked
    data = json.loads(session.save())
    data["version"] = version
    assert refusal(small, data, tmp_path) == "unsupportedVersion"
    assert refusal(small, signed(data), tmp_path) == "unsupportedVersion"
    del data["version"]
    assert refusal(small, signed(data), tmp_path) == "unsupportedVersion"


@pytest.mark.parametrize("fmt", ["stepkit-restoration-v2", "", None, 1])
def test_other_formats_are_not_restoration_data(walked, small, tmp_path, fmt):
    session, _ = walked
    data = json.loads(session.save())
    data["format"] = fmt
    assert refusal(small, signed(data), tmp_path) == "notRestorationData"


@pytest.mark.parametrize(
    "integrity",
    [None, {}, {"algorithm": "SHA-256"}, {"digest": "0" * 64}, "abc", [], {"algorithm": 1, "digest": "0" * 64}],
)
def test_missing_integrity(walked, small, tmp_path, integrity):
    session, _ = walked
    data = json.loads(session.save())
    data["integrity"] = integrity
    assert refusal(small, data, tmp_path) == "integrityMissing"
    del data["integrity"]
    assert refusal(small, data, tmp_path) == "integrityMissing"


@pytest.mark.parametrize(
    "change",
    [
        lambda d: d["answers"].update(age=200),  # out of the format's range
        lambda d: d["answers"].update(likes="yes"),
        lambda d: d["answers"].update(ghost=True),  # a step the task does not have
        lambda d: d["answers"].update(intro=True),  # a step that takes no answer
        lambda d: d["answers"].update(about={"nope": "x"}),  # an item the form does not have
        lambda d: d["answers"].update(about="Ann"),
        lambda d: d["path"][1].update(answer=7),
        lambda d: d["path"][1].update(step="ghost"),
        lambda d: d["path"][1].pop("startDate"),
        lambda d: d["path"][1].update(startDate="2026-01-01"),
        lambda d: d["path"][1].update(endDate=1.5),
        lambda d: d["path"][1].update(skipped="no"),
        lambda d: d["path"].clear(),
        lambda d: d.update(path={}),
        lambda d: d.update(startDate=None),
        lambda d: d.update(endDate="later"),
        lambda d: d.update(finishReason="bored"),
        lambda d: d.update(taskRunUUID="not-a-uuid"),
        lambda d: d.pop("answers"),
        lambda d: d.pop("laterAnswers"),
        lambda d: d.pop("touched"),
        lambda d: d.update(laterAnswers={"age": [500]}),
        lambda d: d.update(additionalTaskResults=[42]),
        lambda d: d.pop("task"),
        lambda d: d["task"].pop("identifier"),
    ],
    ids=[
        "answer out of range", "answer of another type", "unknown step", "answer to an instruction",
        "unknown form item", "form answer not an object", "visit answer", "visit of an unknown step",
        "visit without start", "visit start as text", "visit end as real", "skipped as text",
        "empty path", "path not a list", "no start date", "end date as text", "unknown finish reason",
        "bad run UUID", "no answers", "no laterAnswers", "no touched", "later answer out of range",
        "additionalTaskResults not results", "no task", "task without identifier",
    ],
)
def test_forged_but_invalid_data_is_damaged(walked, small, tmp_path, change):
    # Re-signed (plain SHA-256 only detects damage): the content is still checked against the
    # task, field by field, before anything is built.
    session, _ = walked
    data = json.loads(session.save())
    change(data)
    assert refusal(small, signed(data), tmp_path) == "damaged"


def test_forged_valid_data_restores_without_a_key(walked, small):
    # Without an integrityKey the digest detects damage, not forgery: that is what HMAC is for.
    session, _ = walked
    data = json.loads(session.save())
    data["answers"]["about"] = {"name": "Eve"}
    back = small.restore(signed(data))
    assert back.state["answer"] == {"name": "Eve"}


def test_data_saved_on_another_task(walked, tmp_path):
    session, _ = walked
    other = stepkit.Task.from_json({"identifier": "other", "steps": [{"type": "instruction", "identifier": "intro"}]})
    assert refusal(other, session.save(), tmp_path) == "differentTask"
    assert refusal(other, session.save(), tmp_path, {"migrate": True}) == "differentTask"


def test_data_saved_on_another_version_of_the_task(walked, tmp_path):
    session, _ = walked
    changed = copy.deepcopy(SMALL_TASK)
    changed["steps"][-1]["title"] = "Thank you!"
    v2 = stepkit.Task.from_json(changed)
    assert refusal(v2, session.save(), tmp_path) == "taskChanged"
    assert refusal(v2, session.save(), tmp_path, {"migrate": False}) == "taskChanged"


def test_the_same_definition_compiled_again_restores(walked):
    session, clock = walked
    again = stepkit.Task.from_json(json.dumps(SMALL_TASK, indent=3))
    back = restored(again, session.save(), clock)
    assert back.state == session.state
    assert back.result == session.result


# ------------------------------------------------------------------------------------------------
# HMAC with integrityKey


def test_hmac_with_integrity_key(small, tmp_path):
    clock = stepkit.ManualClock(START_MS)
    session = opened(small, clock, {"integrityKey": "s3cret"})
    walk_to(session, "age")
    session.set_answer(44)
    text = session.save()
    data = json.loads(text)
    assert data["integrity"]["algorithm"] == "HMAC-SHA256"
    assert signed(data, "s3cret") == data  # standard HMAC-SHA256 over the documented text
    assert refusal(small, text, tmp_path) == "keyRequired"
    assert refusal(small, text, tmp_path, {"integrityKey": "guess"}) == "integrityCheckFailed"
    assert refusal(small, text, tmp_path, {"integrityKey": "s3cret "}) == "integrityCheckFailed"
    back = restored(small, text, clock, {"integrityKey": "s3cret"})
    assert back.state == session.state
    assert back.result == session.result
    assert back.save() == text  # the restored session signs with the same key

    # An edit re-signed without the key is refused: with the wrong key, or downgraded to SHA-256.
    data["answers"]["age"] = 45
    assert refusal(small, signed(data, "guess"), tmp_path, {"integrityKey": "s3cret"}) == "integrityCheckFailed"
    assert refusal(small, signed(data), tmp_path, {"integrityKey": "s3cret"}) == "integrityCheckFailed"
    # Unedited data signed with the wrong key is refused too.
    assert refusal(small, text, tmp_path, {"integrityKey": "S3CRET"}) == "integrityCheckFailed"
    # Unsigned data where a key is expected could be a forgery.
    plain = opened(small, clock).save()
    assert refusal(small, plain, tmp_path, {"integrityKey": "s3cret"}) == "integrityCheckFailed"
    # Only the key holder can edit.
    assert small.restore(signed(data, "s3cret"), {"integrityKey": "s3cret"}).state["answer"] == 45


def test_a_restored_session_signs_with_the_key_it_was_restored_with(small):
    session = small.open({"integrityKey": "k1"})
    back = small.restore(session.save(), {"integrityKey": "k1"})
    back.forward()
    data = json.loads(back.save())
    assert data["integrity"]["algorithm"] == "HMAC-SHA256"
    assert signed(data, "k1") == data
    unsigned = small.restore(small.open().save())
    unsigned.forward()
    data = json.loads(unsigned.save())
    assert data["integrity"]["algorithm"] == "SHA-256"
    assert signed(data) == data


# ------------------------------------------------------------------------------------------------
# Finished sessions, drafts, back history


@pytest.mark.parametrize("reason", list(stepkit.FINISH_REASONS))
def test_restoring_a_finished_session_gives_the_same_result(small, reason):
    clock = stepkit.ManualClock(START_MS)
    session = opened(small, clock)
    walk_to(session, "done" if reason == "completed" else "color")
    clock.advance(2000)
    if reason == "completed":
        session.forward()
    else:
        session.finish(reason)
    clock.advance(60_000)
    text = session.save()
    back = small.restore(text)  # the system clock: a finished run does not read it
    assert back.state == session.state
    assert back.state["status"] == "finished" and back.state["finishReason"] == reason
    assert back.result == session.result
    assert back.save() == text
    for call in (lambda s: s.forward(), lambda s: s.back(), lambda s: s.set_answer(True), lambda s: s.finish("saved")):
        assert outcome(lambda: call(back)) == outcome(lambda: call(session))
        assert outcome(lambda: call(back))[0] == "StateError"


def test_restoring_mid_form_keeps_the_drafts(small):
    clock = stepkit.ManualClock(START_MS)
    session = opened(small, clock)
    walk_to(session, "about")
    session.set_answer({"email": "ann@example.org"})
    state = session.state
    assert state["answer"] == {"email": "ann@example.org"}
    assert state["problems"], "the required name is missing"
    back = restored(small, session.save(), clock)
    assert back.state == state
    assert outcome(back.forward) == outcome(session.forward)
    assert outcome(back.forward)[0] == "StateError"
    for s in (session, back):
        s.set_answer({"name": "Ann"})
    assert back.state["answer"] == {"name": "Ann", "email": "ann@example.org"}
    clock.advance(1000)
    assert back.forward() == session.forward()
    assert back.result == session.result


def test_restoring_keeps_off_path_answers(small):
    clock = stepkit.ManualClock(START_MS)
    session = opened(small, clock)
    walk_to(session, "color")
    session.set_answer(["red"])
    session.back()  # "color" leaves the path; its draft waits
    session.set_answer(30)  # a new draft for "age"
    back = restored(small, session.save(), clock)
    assert back.state["answer"] == 30
    assert [r["identifier"] for r in back.result["results"]] == ["intro", "likes", "age"]
    for s in (session, back):
        clock.advance(1000)
        s.forward()
    assert back.state == session.state
    assert back.state["answer"] == ["red"], "the off-path draft comes back"


def test_back_history_is_kept(walked, small):
    session, clock = walked
    back = restored(small, session.save(), clock)
    seen_original, seen_restored = [], []
    for s, seen in ((session, seen_original), (back, seen_restored)):
        while True:
            got = outcome(s.back)
            if got[0] != "ok":
                seen.append(got)
                break
            seen.append((step_id(got[1]), got[1]["answer"], got[1]["navigation"]))
    assert seen_restored == seen_original
    assert [entry[0] for entry in seen_original[:-1]] == ["color", "age", "likes", "intro"]
    assert seen_original[0][1] == ["blue"] and seen_original[1][1] == 42


def test_back_history_through_a_loop(tmp_path):
    loop = stepkit.Task.from_json(
        {
            "identifier": "loop",
            "steps": [
                {"type": "question", "identifier": "q1", "answerFormat": {"type": "numeric", "style": "integer"}},
                {"type": "question", "identifier": "again", "answerFormat": {"type": "boolean"}},
                {"type": "completion", "identifier": "done"},
            ],
            "navigationRules": {
                "again": {
                    "type": "predicate",
                    "branches": [{"when": {"result": "again", "equals": True}, "destination": "q1"}],
                }
            },
        }
    )
    clock = stepkit.ManualClock(START_MS)
    session = opened(loop, clock)
    for value in (1, 2, 3):
        session.set_answer(value)
        session.forward()
        session.set_answer(value < 3)
        if value < 3:
            session.forward()
    session.back()
    session.back()  # back into the second round: later answers wait to come back
    data = json.loads(session.save())
    assert data["laterAnswers"], "the loop left answers of later visits"
    back = restored(loop, session.save(), clock)
    actions = ["forward", "forward", "back", "back", "back", "back", "back", "forward"]
    for action in actions:
        clock.advance(500)
        assert apply(back, (action, None)) == apply(session, (action, None)), action
    assert back.result == session.result


def test_restored_session_uses_the_system_clock_until_told(walked, small):
    session, clock = walked
    back = small.restore(session.save())
    back.set_answer({"name": "Bo"})
    back.forward()
    before = int(time.time() * 1000) - 60_000
    end = stepkit.parse_iso8601_ms(back.result["results"][-2]["endDate"])
    assert end >= before, "a restored session reads the system clock, not the saved dates"


# ------------------------------------------------------------------------------------------------
# Migration to another version of the task


def _v1_session() -> Tuple[stepkit.Session, stepkit.ManualClock]:
    task = stepkit.Task.from_json(SMALL_TASK)
    clock = stepkit.ManualClock(START_MS)
    session = opened(task, clock)
    walk_to(session, "about")
    session.set_answer({"name": "Ann", "email": "ann@example.org"})
    return session, clock


def test_migrate_keeps_what_fits_and_reports_the_rest(tmp_path):
    session, clock = _v1_session()
    saved = session.save()
    v2_definition = copy.deepcopy(SMALL_TASK)
    steps = {s["identifier"]: s for s in v2_definition["steps"]}
    steps["age"]["answerFormat"]["maximum"] = 30  # 42 no longer fits
    steps["about"]["formItems"] = [steps["about"]["formItems"][0]]  # "email" is gone
    v2_definition["steps"] = [steps[i] for i in ("intro", "color", "age", "about", "done")]  # "likes" is gone
    v2 = stepkit.Task.from_json(v2_definition)
    assert refusal(v2, saved, tmp_path) == "taskChanged"
    migrated = v2.restore(saved, {"migrate": True})
    report = migrated.restore_report
    assert report is not None and report["migrated"] is True
    assert migrated.state["restoreReport"] == report
    kept = {(k["step"], k["item"]) for k in report["kept"]}
    dropped = {(d["step"], d["item"]): d["reason"] for d in report["dropped"]}
    assert kept == {("color", None), ("about", "name")}
    assert set(dropped) == {("likes", None), ("age", None), ("about", "email")}
    assert all(isinstance(reason, str) and reason for reason in dropped.values())
    # the first step that still needs an answer: "color" is answered, "age" lost its answer
    state = migrated.state
    assert step_id(state) == "age" and state["answer"] is None
    assert state["taskRunUUID"].lower() == RUN_UUID
    assert json.loads(migrated.save())["startDate"] == START_MS
    # the path walked to get there is the back history; kept answers are shown
    assert step_id(migrated.back()) == "color"
    assert migrated.state["answer"] == ["blue"]
    migrated.forward()
    migrated.set_answer(25)
    assert step_id(migrated.forward()) == "about"
    assert migrated.state["answer"] == {"name": "Ann"}
    assert migrated.forward()["status"] == "inProgress"  # "done"
    assert migrated.forward()["finishReason"] == "completed"
    assert answers_in(migrated.result) == {"color": ["blue"], "age": 25, "about": {"name": "Ann"}}
    # a migrated session saves as data of the new version: it restores exactly, without migrate
    again = v2.restore(migrated.save())
    assert again.result == migrated.result
    assert again.restore_report is None


def test_migrate_stops_at_a_new_required_question():
    session, _ = _v1_session()
    v2_definition = copy.deepcopy(SMALL_TASK)
    v2_definition["steps"].insert(
        3, {"type": "question", "identifier": "city", "title": "City", "answerFormat": {"type": "text"}}
    )
    v2 = stepkit.Task.from_json(v2_definition)
    migrated = v2.restore(session.save(), {"migrate": True})
    assert step_id(migrated.state) == "city"
    report = migrated.restore_report
    assert report["dropped"] == []
    assert {(k["step"], k["item"]) for k in report["kept"]} == {
        ("likes", None), ("age", None), ("color", None), ("about", "name"), ("about", "email")
    }
    assert [step_id(migrated.back()), step_id(migrated.back()), step_id(migrated.back())] == ["age", "likes", "intro"]


def test_migrate_with_the_same_version_is_an_exact_restore(walked, small):
    session, clock = walked
    back = restored(small, session.save(), clock, {"migrate": True})
    assert back.state == session.state
    assert back.restore_report is None


def test_migrate_still_checks_integrity(tmp_path):
    session, _ = _v1_session()
    data = json.loads(session.save())
    data["answers"]["age"] = 43
    v2_definition = copy.deepcopy(SMALL_TASK)
    v2_definition["steps"][-1]["title"] = "Thanks!"
    v2 = stepkit.Task.from_json(v2_definition)
    assert refusal(v2, data, tmp_path, {"migrate": True}) == "integrityCheckFailed"


# ------------------------------------------------------------------------------------------------
# Prefill: defaultResult, alwaysCheckForDefaultResult, personalData


def _last_run(task: stepkit.Task) -> Dict[str, Any]:
    clock = stepkit.ManualClock(START_MS - 7 * 86_400_000)
    session = opened(task, clock)
    answers = {"likes": False, "age": 50, "color": ["red"], "about": {"name": "Ann", "email": "ann@example.org"}}
    while session.state["status"] == "inProgress":
        sid = step_id(session.state)
        if sid in answers:
            session.set_answer(answers[sid])
        clock.advance(1000)
        session.forward()
    return session.result


def test_default_result_prefills_the_next_run(small):
    last = _last_run(small)
    session = small.open({"defaultResult": last})
    shown = {}
    while session.state["status"] == "inProgress":
        state = session.state
        shown[step_id(state)] = state["answer"]
        session.forward()  # every required answer is there: nothing to type
    assert shown == {
        "intro": None, "likes": False, "age": 50, "color": ["red"],
        "about": {"name": "Ann", "email": "ann@example.org"}, "done": None,
    }
    assert answers_in(session.result) == {
        "likes": False, "age": 50, "color": ["red"], "about": {"name": "Ann", "email": "ann@example.org"}
    }


def test_invalid_defaults_are_ignored(small):
    last = _last_run(small)
    for step in last["results"]:
        for question in step["results"]:
            if question["identifier"] == "likes":
                question["answer"] = "yes"
            elif question["identifier"] == "age":
                question["answer"] = 120  # outside 18...90
            elif question["identifier"] == "color":
                question["answer"] = ["purple"]
            elif question["identifier"] == "email":
                question["answer"] = "not an address"
    session = small.open({"defaultResult": last})
    assert walk_answer(session, "likes") is None
    assert walk_answer(session, "age") is None
    assert walk_answer(session, "color") is None
    assert walk_answer(session, "about") == {"name": "Ann"}


def walk_answer(session: stepkit.Session, identifier: str) -> Any:
    """The answer shown when `identifier` appears (answering the small task on the way)."""
    return walk_to(session, identifier)["answer"]


def test_default_result_does_not_replace_an_answer_unless_always(small):
    last = _last_run(small)
    for always, expected in ((False, 60), (True, 50)):
        session = small.open({"defaultResult": last, "alwaysCheckForDefaultResult": always})
        walk_to(session, "age")
        assert session.state["answer"] == 50
        session.set_answer(60)
        session.back()
        assert session.state["answer"] is True  # as walk_to left it: going back does not prefill
        assert session.forward()["answer"] == expected, f"alwaysCheckForDefaultResult={always}"


def test_prefill_options_on_restore(small):
    last = _last_run(small)
    session = small.open()
    walk_to(session, "likes")
    back = small.restore(session.save(), {"defaultResult": last})
    assert back.state["answer"] is None, "a restore does not prefill the step already shown"
    back.set_answer(True)
    assert back.forward()["answer"] == 50, "steps that appear after the restore are prefilled"


def test_bad_default_result_options(small):
    for options in ({"defaultResult": 42}, {"defaultResult": [1]}, {"alwaysCheckForDefaultResult": "yes"}):
        with pytest.raises(stepkit.InvalidArgumentError):
            small.open(options)


PERSONAL_TASK = {
    "identifier": "personal",
    "steps": [
        {"type": "question", "identifier": "dob", "answerFormat": {"type": "date", "personalData": "dateOfBirth"}},
        {"type": "question", "identifier": "sex", "answerFormat": {
            "type": "textChoice", "style": "singleChoice", "personalData": "biologicalSex",
            "textChoices": [{"text": "Female", "value": "female"}, {"text": "Male", "value": "male"},
                            {"text": "Other", "value": "other"}]}},
        {"type": "form", "identifier": "body", "formItems": [
            {"identifier": "height", "answerFormat": {"type": "numeric", "style": "decimal", "minimum": 50,
                                                       "maximum": 250, "personalData": "height"}},
            {"identifier": "weight", "optional": True, "answerFormat": {
                "type": "numeric", "style": "decimal", "minimum": 20, "maximum": 300, "personalData": "bodyMass"}},
            {"identifier": "blood", "optional": True, "answerFormat": {
                "type": "textChoice", "style": "singleChoice", "personalData": "bloodType",
                "textChoices": [{"text": "A+", "value": "A+"}, {"text": "0+", "value": "0+"}]}}]},
        {"type": "question", "identifier": "plain", "optional": True, "answerFormat": {"type": "text"}},
    ],
}


def test_personal_data_prefills_formats_that_name_a_field():
    task = stepkit.Task.from_json(PERSONAL_TASK)
    personal = {"dateOfBirth": "1980-05-01", "biologicalSex": "female", "height": 172.5,
                "bodyMass": 999, "bloodType": "Z-"}
    session = task.open({"personalData": personal})
    assert session.state["answer"] == "1980-05-01"
    assert session.forward()["answer"] == ["female"]  # one value becomes the one choice
    body = session.forward()["answer"]
    assert body == {"height": 172.5}  # 999 kg and blood type "Z-" do not fit: ignored
    assert session.forward()["answer"] is None  # no personal data field: nothing
    assert session.forward()["finishReason"] == "completed"
    # a default result comes first, personal data fills what it does not have
    result = {"identifier": "personal", "results": [
        {"identifier": "dob", "results": [{"identifier": "dob", "type": "date", "answer": "1979-01-02"}]}]}
    session = task.open({"personalData": personal, "defaultResult": result})
    assert session.state["answer"] == "1979-01-02"
    assert session.forward()["answer"] == ["female"]


def test_personal_data_options_are_checked():
    task = stepkit.Task.from_json(PERSONAL_TASK)
    with pytest.raises(stepkit.InvalidArgumentError) as info:
        task.open({"personalData": {"eyeColor": "blue"}})
    assert info.value.path == "personalData.eyeColor"
    with pytest.raises(stepkit.InvalidArgumentError):
        task.open({"personalData": ["dateOfBirth"]})
    bad = copy.deepcopy(PERSONAL_TASK)
    bad["steps"][0]["answerFormat"]["personalData"] = "eyeColor"
    with pytest.raises(stepkit.DefinitionError) as definition:
        stepkit.Task.from_json(bad)
    assert definition.value.path == "steps[0].answerFormat.personalData"


# ------------------------------------------------------------------------------------------------
# Autosave


def _long_task(count: int) -> Dict[str, Any]:
    steps: List[Dict[str, Any]] = [{"type": "instruction", "identifier": "intro"}]
    for i in range(count):
        steps.append({"type": "question", "identifier": f"q{i}", "answerFormat": {"type": "text"}})
    steps.append({"type": "completion", "identifier": "done"})
    return {"identifier": "long", "steps": steps}


def _long_answer(i: int) -> str:
    return f"answer {i} " + "x" * 200


CHILD = textwrap.dedent(
    """
    import json, sys
    import stepkit
    definition_path, autosave, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
    with open(definition_path, encoding="utf-8") as handle:
        task = stepkit.Task.from_json(handle.read())
    session = task.open({"autosave": autosave})
    session.forward()
    print("ready", flush=True)
    for i in range(count):
        session.set_answer("answer %d " % i + "x" * 200)
        print("A", i, flush=True)
        session.forward()
        print("F", i, flush=True)
    print("done", flush=True)
    """
)


def test_autosave_survives_sigkill_at_random_points(tmp_path):
    count = 40  # every call fsyncs twice (~15 ms here): keep the walk short
    definition = _long_task(count)
    definition_path = tmp_path / "long.json"
    definition_path.write_text(json.dumps(definition), encoding="utf-8")
    task = stepkit.Task.from_json(definition)
    seed = random.randrange(1 << 32)
    rng = random.Random(seed)
    kills_mid_walk = 0
    for run in range(5):
        autosave = tmp_path / f"run{run}" / "session.json"
        autosave.parent.mkdir()
        child = subprocess.Popen(
            [sys.executable, "-c", CHILD, str(definition_path), str(autosave), str(count)],
            stdout=subprocess.PIPE,
            env=cli_env(),
            text=True,
        )
        assert child.stdout is not None
        lines: List[str] = []
        try:
            first = child.stdout.readline()
            assert first == "ready\n", first
            # Kill after a random number of reported calls plus a random delay, so the kill lands
            # anywhere: inside a call, between calls, during a write or a rename.
            target = rng.randrange(0, 2 * count)
            while len(lines) < target:
                line = child.stdout.readline()
                if not line:
                    break
                lines.append(line)
            time.sleep(rng.uniform(0, 0.004))
        finally:
            child.send_signal(signal.SIGKILL)
            rest, _ = child.communicate(timeout=30)
        lines += rest.splitlines(keepends=True)
        reported = [line.split() for line in lines if line.endswith("\n")]
        finished = ["done"] in reported
        kills_mid_walk += not finished
        answered = [int(r[1]) for r in reported if r[0] == "A"]
        forwarded = [int(r[1]) for r in reported if r[0] == "F"]
        context = f"(seed {seed}, run {run}, {len(answered)} answers and {len(forwarded)} forwards reported)"

        text = autosave.read_text(encoding="utf-8")  # the file is always there: written at open
        back = task.restore(text)  # never "damaged": the file is never half-written
        state = back.state
        results = answers_in(back.result)
        current = step_id(state)
        if current is not None and current.startswith("q"):
            results[current] = state["answer"]
        for i in answered:
            assert results.get(f"q{i}") == _long_answer(i), f"answer {i} lost {context}"
        position = -1 if current in (None, "intro") else (count if current == "done" else int(current[1:]))
        if forwarded:
            assert position >= max(forwarded) + 1 or state["status"] == "finished", f"forward lost {context}"
        # the restored run goes on, and keeps autosaving to the same file
        resumed = task.restore(text, {"autosave": str(autosave)})
        if resumed.state["status"] == "inProgress" and step_id(resumed.state).startswith("q"):
            resumed.set_answer("after the crash")
            assert task.restore(autosave.read_text(encoding="utf-8")).state["answer"] == "after the crash"
        resumed.close()
        back.close()
    assert kills_mid_walk >= 1, f"every child finished before the kill (seed {seed})"


def test_autosave_file_matches_save_after_every_call(small, tmp_path):
    path = tmp_path / "session.json"
    clock = stepkit.ManualClock(START_MS)
    session = opened(small, clock, {"autosave": str(path)})
    assert path.exists(), "written at open"
    actions: List[Tuple[str, Any]] = [
        ("forward", None), ("answer", True), ("forward", None), ("answer", 42), ("back", None),
        ("forward", None), ("forward", None), ("skip", None), ("answer", {"name": "Ann"}),
        ("forward", None), ("finish", "completed"),
    ]
    for action in actions:
        clock.advance(1000)
        got = apply(session, action)
        assert got[0] == "ok", (action, got)
        assert autosaved(small, path) == session.save(), action
    assert not (tmp_path / "session.json.tmp").exists()
    assert small.restore(path.read_text(encoding="utf-8")).result == session.result


def test_autosave_is_not_written_by_refused_calls(small, tmp_path):
    path = tmp_path / "session.json"
    session = small.open({"autosave": str(path)})
    session.forward()
    before = path.read_bytes()
    stamp = os.stat(path).st_mtime_ns
    time.sleep(0.01)
    with pytest.raises(stepkit.StateError):
        session.forward()  # "likes" is required
    with pytest.raises(stepkit.AnswerError):
        session.set_answer("yes")
    assert path.read_bytes() == before
    assert os.stat(path).st_mtime_ns == stamp


def test_restore_with_autosave_writes_at_once(walked, small, tmp_path):
    session, clock = walked
    path = tmp_path / "restored.json"
    back = restored(small, session.save(), clock, {"autosave": str(path)})
    assert path.read_text(encoding="utf-8") == back.save() == session.save()


def test_unwritable_autosave_path_fails_the_open(small, walked, tmp_path):
    missing = tmp_path / "missing" / "session.json"
    with pytest.raises(stepkit.StepKitIOError) as info:
        small.open({"autosave": str(missing)})
    assert isinstance(info.value, OSError)
    assert info.value.status == -7 and info.value.code == "EIO"
    assert info.value.message
    assert not missing.parent.exists()
    a_directory = tmp_path / "dir"
    a_directory.mkdir()
    with pytest.raises(stepkit.StepKitIOError):
        small.open({"autosave": str(a_directory)})
    assert a_directory.is_dir() and list(a_directory.iterdir()) == []
    session, _ = walked
    with pytest.raises(stepkit.StepKitIOError):
        small.restore(session.save(), {"autosave": str(missing)})
    with pytest.raises(stepkit.InvalidArgumentError):
        small.open({"autosave": ""})


def test_autosave_failure_later_changes_nothing(small, tmp_path):
    directory = tmp_path / "saves"
    directory.mkdir()
    path = directory / "session.json"
    clock = stepkit.ManualClock(START_MS)
    session = opened(small, clock, {"autosave": str(path)})
    walk_to(session, "age")
    session.set_answer(30)
    state, saved, result = session.state, session.save(), session.result
    shutil.rmtree(directory)  # works as root too, unlike a chmod
    for action in (("answer", 31), ("forward", None), ("back", None), ("finish", "saved"), ("answer", None)):
        got = apply(session, action)
        assert got[0] == "StepKitIOError", (action, got)
        assert got[1]["status"] == -7 and got[1]["code"] == "EIO"
        assert got[1]["errors"][0]["code"] == "autosaveFailed"
        assert session.save() == saved, action
        assert session.result == result, action
    # a refusal for another reason still comes first
    assert apply(session, ("answer", "old"))[0] == "AnswerError"
    directory.mkdir()
    assert session.state == state
    session.set_answer(31)
    assert autosaved(small, path) == session.save()
    assert small.restore(path.read_text(encoding="utf-8")).state["answer"] == 31


def test_reading_the_state_neither_writes_nor_fails(small, tmp_path):
    directory = tmp_path / "saves"
    directory.mkdir()
    path = directory / "session.json"
    session = small.open({"autosave": str(path)})
    session.forward()
    stamp = os.stat(path).st_mtime_ns
    time.sleep(0.01)
    session.save()
    session.result
    session.state
    assert os.stat(path).st_mtime_ns == stamp, "a state read rewrote the autosave file"
    shutil.rmtree(directory)
    assert step_id(session.state) == "likes"
