"""Issue 36: a call returns the state only when the caller reads it, and states are parsed with
orjson when it is installed, the standard library otherwise.

``state=False`` passes ``out == NULL`` to the library (include/stepkit.h: the state is then not
built): the session must move exactly as with the state asked for, refuse exactly the same
calls, and hand the same events to the event callback. The parser must give the same values
with and without orjson; the second parser runs in a subprocess where ``import orjson`` fails.
"""

from __future__ import annotations

import datetime
import enum
import json
import math
import os
import subprocess
import sys
import textwrap
import uuid
from typing import Any, Dict, List

import pytest

import stepkit
from stepkit import _core

from conftest import EXAMPLE_TASKS, RUN_UUID, SMALL_TASK, SRC, START_MS

class _Colour(enum.Enum):
    RED = "red"


ANSWERS: Dict[str, Any] = {"likes": True, "age": 42, "color": ["blue"], "about": {"name": "Ann"}}


def walk(session: stepkit.Session, read: bool) -> List[Any]:
    """Walks the small task to its end; returns what each call returned."""
    returned: List[Any] = []
    for step in SMALL_TASK["steps"]:
        if step["identifier"] in ANSWERS:
            returned.append(session.set_answer(ANSWERS[step["identifier"]], state=read))
        returned.append(session.go_forward(state=read))
    return returned


def opened(task: stepkit.Task) -> stepkit.Session:
    session = task.open({"taskRunUUID": RUN_UUID})
    session.set_clock(stepkit.ManualClock(START_MS))
    return session


def test_a_call_without_the_state_returns_none_and_moves_the_session_alike(task: stepkit.Task) -> None:
    with opened(task) as quiet, opened(task) as loud:
        assert walk(quiet, read=False) == [None] * 10
        states = walk(loud, read=True)
        assert states[-1]["status"] == "finished"
        assert quiet.state == loud.state  # the same session, read afterwards
        assert quiet.result == loud.result
        assert quiet.save() == loud.save()


def test_every_moving_call_takes_state_false(task: stepkit.Task) -> None:
    with opened(task) as session:
        assert session.go_forward(state=False) is None
        assert session.go_backward(state=False) is None
        assert session.go_forward(state=False) is None
        assert session.set_answer_json("true", state=False) is None
        assert session.go_forward(state=False) is None
        assert session.state["step"]["identifier"] == "age"
        assert session.set_answer(30, state=False) is None
        assert session.go_forward(state=False) is None
        assert session.skip(state=False) is None  # "color" is optional
        assert session.state["step"]["identifier"] == "about"
        assert session.tick(state=False) is None
        assert session.finish("saved", state=False) is None
        assert session.state["finishReason"] == "saved"


def test_a_refused_call_without_the_state_raises_the_same_error_and_changes_nothing(task: stepkit.Task) -> None:
    with opened(task) as session:
        session.go_forward(state=False)
        before = session.save()
        with pytest.raises(stepkit.StateError):
            session.go_forward(state=False)  # "likes" needs an answer
        with pytest.raises(stepkit.AnswerError):
            session.set_answer("yes", state=False)  # not a boolean
        with pytest.raises(stepkit.InvalidArgumentError):
            session.set_answer(math.nan, state=False)
        with pytest.raises(stepkit.InvalidArgumentError):
            session.finish("bored", state=False)
        assert session.save() == before
        session.close()
        with pytest.raises(stepkit.StateError):
            session.go_forward(state=False)


def test_events_reach_the_callback_when_the_state_is_not_asked_for(task: stepkit.Task) -> None:
    with opened(task) as quiet, opened(task) as loud:
        heard: List[Dict[str, Any]] = []
        quiet.on_event(heard.append)
        walk(quiet, read=False)
        listed = [event for state in walk(loud, read=True) for event in state["events"]]
        assert heard == listed
        assert {"type": "taskFinished", "reason": "completed"}.items() <= heard[-1].items()


@pytest.mark.parametrize("value", [
    True, False, None, 0, -7, 2**70, 6.5, -0.0, 1e300, "", "plain", 'quote " backslash \\ tab \t',
    "ünïcödé ✓ \U0001F600", "\x00\x1f", [], ["a", "b"], ["a", 1], [1.5, None], {"weight": 71.5, "x": ["y"]},
    {"dontKnow": True}, (1, 2), {1: "int key"}, {"a": None, "b": "null"}, {"big": 2**64}, {"u": 2**63},
    ["a", "\x7f\u2028"], {"s": "\x00"}, 1e16, 5e-324,
])
def test_an_answer_is_sent_as_the_json_of_its_value(value: Any) -> None:
    sent = _core._answer_bytes(value)
    assert json.loads(sent.decode("utf-8")) == json.loads(json.dumps(value))


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf, [math.nan], "\ud800", ["\udfff"]])
def test_an_answer_json_cannot_carry_is_refused(value: Any) -> None:
    with pytest.raises(stepkit.InvalidArgumentError):
        _core._answer_bytes(value)


def test_a_value_json_cannot_write_is_a_type_error() -> None:
    with pytest.raises(TypeError):
        _core._answer_bytes({1, 2})
    # types orjson would write but json does not stay refused, inside a form's answer too
    for value in (uuid.uuid4(), _Colour.RED, {"when": datetime.date(2026, 1, 1)}, {"id": uuid.uuid4()},
                  {"c": _Colour.RED}, [_Colour.RED]):
        with pytest.raises(TypeError):
            _core._answer_bytes(value)


@pytest.mark.parametrize("value", [{"x": math.nan}, {"x": math.inf}, {"x": "\ud800"}])
def test_a_form_answer_json_cannot_carry_is_refused_with_json_s_message(value: Any) -> None:
    """The orjson path gives way to json's for what json refuses: the same error and message."""
    with pytest.raises(stepkit.InvalidArgumentError) as fast:
        _core._answer_bytes(value)
    with pytest.raises(stepkit.InvalidArgumentError) as plain:
        _core._json_bytes(value, "the answer")
    assert fast.value.message == plain.value.message


def test_the_parser_reads_nesting_and_refuses_what_is_not_utf8_json() -> None:
    nested = b"[" * 500 + b"]" * 500
    assert _core._decode_output(nested, "t") == json.loads(nested)
    with pytest.raises(stepkit.InternalError):
        _core._decode_output(b'{"a": "\xff"}', "t")  # invalid UTF-8, refused by both
    with pytest.raises(stepkit.InternalError):
        _core._decode_output(b"{", "t")


def test_numbers_the_library_writes_read_alike_with_either_parser(task: stepkit.Task) -> None:
    """orjson reads an integer past 64 bits as a float where json keeps an int: the library never
    writes one (it refuses them on input, and writes other numbers with a point or an exponent)."""
    definition = {"identifier": "n", "steps": [
        {"type": "question", "identifier": "d", "answerFormat": {"type": "numeric", "style": "decimal"}}]}
    with stepkit.Task.from_json(definition) as numeric, numeric.open() as session:
        with pytest.raises(stepkit.ParseError):
            session.set_answer_json("18446744073709551616")
        for text, value in (("1e20", 1e20), ("123456789012345678901234567890.0", 1.2345678901234568e29),
                            ("-9223372036854775808", -9223372036854775808), ("0.1", 0.1)):
            state = session.set_answer_json(text)
            assert state["answer"] == value and type(state["answer"]) is type(value)


def test_orjson_is_used_when_installed() -> None:
    try:
        import orjson  # noqa: F401
    except ImportError:
        pytest.fail("orjson is not installed: the test environment installs it (scripts/lib/deps.sh), "
                    "so that both parsers are tested", pytrace=False)
    assert stepkit.JSON_PARSER == "orjson"


WALK_EVERY_EXAMPLE = textwrap.dedent("""
    import json, sys
    if sys.argv[1] == "hide":
        sys.modules["orjson"] = None  # import orjson fails, as where it is not installed
    import stepkit
    out = {"parser": stepkit.JSON_PARSER, "runs": []}
    for path in sys.argv[2:]:
        task = stepkit.Task.from_file(path)
        with task.open({"taskRunUUID": "9f1c7a52-3b8e-4d2a-a1f0-6c2d4e8b9a10", "seed": 7}) as session:
            session.set_clock(stepkit.ManualClock(1767225600000))
            states = [session.state]
            for _ in range(60):
                if states[-1]["step"] is None or not states[-1]["navigation"]["canGoForward"]:
                    break
                states.append(session.go_forward())
            out["runs"].append({"states": states, "result": session.result, "info": task.info})
    print(json.dumps(out))
""")


def run_walks(mode: str) -> Dict[str, Any]:
    env = dict(os.environ, PYTHONPATH=str(SRC), **{stepkit.LIBRARY_ENV_VAR: stepkit.library_path()})
    paths = [str(p) for p in EXAMPLE_TASKS]
    done = subprocess.run([sys.executable, "-c", WALK_EVERY_EXAMPLE, mode, *paths], capture_output=True,
                          text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_without_orjson_the_binding_reads_every_example_alike() -> None:
    assert EXAMPLE_TASKS, "no example tasks found"
    plain, fast = run_walks("hide"), run_walks("keep")
    assert plain["parser"] == "json"
    assert fast["parser"] == ("orjson" if stepkit.JSON_PARSER == "orjson" else "json")
    assert plain["runs"] == fast["runs"]
    assert sum(len(run["states"]) for run in plain["runs"]) > len(EXAMPLE_TASKS)
