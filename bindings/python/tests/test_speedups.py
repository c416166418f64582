"""The optional C extension (stepkit._speedups, bindings/python/ext/_speedups.c) and its choice.

ctest runs the whole Python suite twice: ``python`` with the extension this build made
(``STEPKIT_SPEEDUPS`` names it) and ``python.ctypes`` without it (``STEPKIT_SPEEDUPS=off``), so
every test of the binding covers both paths. The tests here pin what is particular to the
extension: it is the one chosen, it sends the same answers as the binding's encoder, a session
it must not call (autosave, a Python clock, an event callback, a closed session, a clock calling
back into its session) goes the Python way, and a refused call raises the same error and changes nothing.
Those that need the extension say so and skip where it is absent (``python.ctypes``).
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import threading
from typing import Any, Dict, List

import pytest

import stepkit
from stepkit import _core, _ffi

from conftest import SMALL_TASK, SRC, START_MS

CHOICE = os.environ.get("STEPKIT_SPEEDUPS", "")
needs_extension = pytest.mark.skipif(
    _ffi.speedups() is None, reason="the C extension is not in use (STEPKIT_SPEEDUPS=off, or not built)"
)


def test_the_extension_is_used_as_stepkit_speedups_says() -> None:
    if CHOICE.lower() in ("off", "0", "no", "false"):
        assert stepkit.SPEEDUPS is False and _ffi.speedups() is None
    elif CHOICE:  # a path: that file, or an ImportError at import
        module = _ffi.speedups()
        assert stepkit.SPEEDUPS is True and module is not None
        assert os.path.samefile(module.__file__ or "", CHOICE)
        assert module.__name__ == "stepkit._speedups"
    else:  # the package's own, when it has one
        bundled = any(name.startswith("_speedups.") and name.endswith(".so")
                      for name in os.listdir(os.path.dirname(_ffi.__file__)))
        assert stepkit.SPEEDUPS is bundled


def test_a_wrong_path_is_an_error_not_a_fallback(tmp_path: Any) -> None:
    missing = tmp_path / "_speedups.abi3.so"
    env = dict(os.environ, STEPKIT_SPEEDUPS=str(missing), PYTHONPATH=str(SRC))
    run = subprocess.run([sys.executable, "-c", "import stepkit"], env=env, capture_output=True, text=True)
    assert run.returncode != 0
    assert f"STEPKIT_SPEEDUPS={missing}: no such extension module file" in run.stderr


def test_an_extension_of_another_api_is_refused(tmp_path: Any) -> None:
    """A stale build (its API constant not this binding's) given by path is an error."""
    stale = tmp_path / "stale_speedups.py"
    stale.write_text("API = 0\n", encoding="utf-8")
    env = dict(os.environ, STEPKIT_SPEEDUPS=str(stale), PYTHONPATH=str(SRC))
    run = subprocess.run([sys.executable, "-c", "import stepkit"], env=env, capture_output=True, text=True)
    assert run.returncode != 0
    assert f"the extension's API is 0, this binding's {_ffi.SPEEDUPS_API} (rebuild it)" in run.stderr


def test_off_means_ctypes_even_where_the_extension_is() -> None:
    env = dict(os.environ, STEPKIT_SPEEDUPS="off", PYTHONPATH=str(SRC))
    run = subprocess.run([sys.executable, "-c", "import stepkit; print(stepkit.SPEEDUPS)"],
                         env=env, capture_output=True, text=True, check=True)
    assert run.stdout.strip() == "False"


# ------------------------------------------------------------------------------------------
# Answers: the extension writes the common ones itself; the JSON value must be json's.

@needs_extension
@pytest.mark.parametrize("value", [
    True, False, None, 0, -7, 2**63 - 1, -(2**63), 2**63, 2**70, 6.5, -0.0, 1e300, 1e16, 5e-324, 0.1,
    "", "plain", 'quote " backslash \\ tab \t', "ünïcödé ✓ \U0001F600", "\x00\x1f", "\x7f\u2028", "/",
    [], ["a", "b"], ["a", 'b"'], ["a", 1], [1.5, None], {"weight": 71.5, "x": ["y"]}, {"dontKnow": True},
    (1, 2), {"a": None, "b": "null"},
])
def test_the_extension_sends_the_json_of_the_value(value: Any) -> None:
    module = _ffi.speedups()
    assert module is not None
    sent = module.answer_json(value)
    assert json.loads(sent.decode("utf-8")) == json.loads(json.dumps(value))
    assert json.loads(sent.decode("utf-8")) == json.loads(_core._answer_bytes(value).decode("utf-8"))


class _Int(int):
    pass


@needs_extension
@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf, [math.nan], "\ud800", ["a", "\udfff"],
                                   {"x": math.nan}, {1, 2}, object(), [object()]])
def test_what_json_refuses_the_extension_refuses_with_the_binding_s_error(value: Any) -> None:
    module = _ffi.speedups()
    assert module is not None
    with pytest.raises(Exception) as binding:
        _core._answer_bytes(value)
    with pytest.raises(Exception) as extension:
        module.answer_json(value)
    assert type(extension.value) is type(binding.value)
    assert str(extension.value) == str(binding.value)


@needs_extension
def test_subclasses_of_int_and_str_are_written_by_the_binding_s_encoder() -> None:
    module = _ffi.speedups()
    assert module is not None
    assert module.answer_json(_Int(5)) == _core._answer_bytes(_Int(5))


# ------------------------------------------------------------------------------------------
# Sessions: the same walk through the extension and through ctypes.

# What a walk of the small task sends, and what the tests check it refuses.
WALK: List[Any] = [None, True, 42, ["blue"], {"name": "Ann \"Nan\" O'Neil ✓", "email": "a@b.org"}, None]


def walk(session: stepkit.Session) -> None:
    for step, answer in zip(SMALL_TASK["steps"], WALK):
        if answer is not None:
            session.set_answer(answer, state=False)
        session.go_forward(state=False)


def comparable(session: stepkit.Session) -> Dict[str, Any]:
    """The result without its dates and run UUID (the sessions ran at different times)."""
    result = session.result
    return {"status": session.state["status"], "answers": [
        (r["identifier"], [(q.get("identifier"), q.get("answer")) for q in r.get("results", [])])
        for r in result["results"]]}


@needs_extension
def test_the_extension_makes_the_calls_of_a_plain_session(task: stepkit.Task) -> None:
    module = _ffi.speedups()
    assert module is not None
    with task.open() as session:
        assert session._gil_calls is True
        assert session._free is module.free  # opened by the extension, freed by it
        assert module.go_forward(session) is True
        assert session.state["step"]["identifier"] == "likes"
        assert module.answer(session, True) is True
        assert session.state["answer"] is True
        assert module.go_backward(session) is True
        assert session.state["step"]["identifier"] == "intro"


@needs_extension
def test_a_walk_through_the_extension_ends_as_one_through_ctypes(task: stepkit.Task) -> None:
    with task.open() as fast, task.open() as plain:
        plain._gil_calls = False  # the Python path: _quiet and ctypes
        walk(fast)
        walk(plain)
        assert fast.state["status"] == "finished"
        assert comparable(fast) == comparable(plain)


@needs_extension
@pytest.mark.parametrize("answer, error", [
    (17, stepkit.AnswerError), ("seventeen", stepkit.AnswerError), (math.nan, stepkit.InvalidArgumentError),
    ({1, 2}, TypeError),
])
def test_a_refused_answer_raises_the_same_error_and_changes_nothing(
        task: stepkit.Task, answer: Any, error: type) -> None:
    with task.open() as fast, task.open() as plain:
        plain._gil_calls = False
        for session in (fast, plain):
            session.go_forward(state=False)
            session.set_answer(True, state=False)
            session.go_forward(state=False)  # on "age" (18...90)
            session.set_answer(30, state=False)
        before = fast.save()
        errors = []
        for session in (fast, plain):
            with pytest.raises(error) as raised:
                session.set_answer(answer, state=False)
            errors.append((type(raised.value), str(raised.value)))
        assert errors[0] == errors[1]
        assert fast.save() == before
        assert fast.state["answer"] == 30


@needs_extension
def test_a_refused_move_raises_state_error_with_the_reasons(task: stepkit.Task) -> None:
    with task.open() as session:
        session.go_forward(state=False)  # "likes" is required
        before = session.save()
        with pytest.raises(stepkit.StateError) as raised:
            session.go_forward(state=False)
        with pytest.raises(stepkit.StateError) as again:
            session.go_forward()  # the state asked for: ctypes
        assert str(raised.value) == str(again.value)
        assert session.save() == before
        with pytest.raises(stepkit.StateError):
            session.skip(state=False)  # not optional
        assert session.save() == before


# ------------------------------------------------------------------------------------------
# Sessions the extension leaves to the Python path.

@needs_extension
def test_a_session_with_a_python_clock_goes_the_python_way(task: stepkit.Task) -> None:
    module = _ffi.speedups()
    assert module is not None
    with task.open() as session:
        clock = stepkit.ManualClock(START_MS)
        session.set_clock(clock)
        assert module.go_forward(session) is False
        session.go_forward(state=False)  # made by ctypes, reading the clock
        clock.advance(1500)
        session.set_answer(True, state=False)
        session.go_forward(state=False)
        likes = next(r for r in session.result["results"] if r["identifier"] == "likes")
        assert likes["startDate"] == stepkit.iso8601_ms(START_MS)
        assert likes["endDate"] == stepkit.iso8601_ms(START_MS + 1500)
        session.set_clock(None)  # the system clock again: the extension may call
        assert module.go_backward(session) is True


@needs_extension
def test_a_session_with_an_event_callback_goes_the_python_way(task: stepkit.Task) -> None:
    module = _ffi.speedups()
    assert module is not None
    events: List[Dict[str, Any]] = []
    with task.open() as session:
        session.on_event(events.append)
        assert module.go_forward(session) is False
        assert module.answer(session, True) is False
        session.go_forward(state=False)
        after_first = len(events)
        assert after_first > 0  # delivered by the Python path
        session.set_answer(True, state=False)
        session.go_forward(state=False)
        assert len(events) > after_first


@needs_extension
def test_an_autosave_session_goes_the_python_way(task: stepkit.Task, tmp_path: Any) -> None:
    module = _ffi.speedups()
    assert module is not None
    path = tmp_path / "run.autosave"
    with task.open({"autosave": str(path)}) as session:
        assert session._gil_calls is False  # each call fsyncs: ctypes releases the GIL for it
        assert module.go_forward(session) is False
        session.go_forward(state=False)
        saved = path.read_text(encoding="utf-8")
    with task.restore(saved) as restored:
        assert restored._gil_calls is True
        assert restored.state["step"]["identifier"] == "likes"


@needs_extension
def test_a_closed_session_raises_state_error(task: stepkit.Task) -> None:
    module = _ffi.speedups()
    assert module is not None
    session = task.open()
    session.close()
    assert module.go_forward(session) is False
    assert module.answer(session, True) is False
    with pytest.raises(stepkit.StateError, match="closed"):
        session.go_forward(state=False)
    with pytest.raises(stepkit.StateError, match="closed"):
        session.set_answer(True, state=False)


@needs_extension
def test_a_clock_calling_back_into_its_session_is_refused_not_deadlocked(task: stepkit.Task) -> None:
    """The clock runs inside a library call on its session (Session._owning marks it): the
    extension must not make a call then (the library holds the session's lock), so the Python
    path refuses it as re-entrant."""
    module = _ffi.speedups()
    assert module is not None
    seen: List[Any] = []

    def clock() -> int:
        seen.append(module.go_forward(session))
        try:
            session.go_forward(state=False)
        except stepkit.StateError as error:
            seen.append(str(error))
        return START_MS

    with task.open() as session:
        session.set_clock(clock)
        session.go_forward(state=False)  # reads the clock (set_clock may have too)
        assert seen and seen[0] is False
        assert all(x is False or "re-entrant" in x for x in seen), seen
        assert session.state["step"]["identifier"] == "likes"  # one move, the clock's refused


@needs_extension
def test_calls_from_several_threads_are_serialized(task: stepkit.Task) -> None:
    """One thread walks forward and back through the extension while others read the state
    through ctypes (the session's lock): every call completes, and the walk ends where its
    moves lead, whatever the interleaving."""
    with task.open() as session:
        session.go_forward(state=False)
        session.set_answer(True, state=False)
        errors: List[BaseException] = []

        def walker() -> None:
            try:
                for _ in range(300):
                    session.go_forward(state=False)  # "age"
                    session.go_backward(state=False)  # "likes"
            except BaseException as error:  # noqa: B902 - reported below
                errors.append(error)

        def reader() -> None:
            try:
                for _ in range(100):
                    assert session.state["step"]["identifier"] in ("likes", "age")
            except BaseException as error:  # noqa: B902 - reported below
                errors.append(error)

        threads = [threading.Thread(target=walker)] + [threading.Thread(target=reader) for _ in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert errors == []
        assert session.state["step"]["identifier"] == "likes"


def test_both_paths_open_with_the_same_errors(task: stepkit.Task) -> None:
    with pytest.raises(stepkit.InvalidArgumentError) as raised:
        task.open({"noSuchOption": 1})
    assert "noSuchOption" in str(raised.value)
    closed = stepkit.Task.from_json(SMALL_TASK)
    closed.close()
    with pytest.raises(stepkit.StateError, match="closed"):
        closed.open()
