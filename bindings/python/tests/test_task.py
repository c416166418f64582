"""Compiling tasks: success, parse errors, definition errors, Task handle management."""

from __future__ import annotations

import gc
import json

import pytest

import stepkit
from conftest import SMALL_STEP_IDS, SMALL_TASK


def test_version():
    assert stepkit.version() == "0.1.0"
    number = stepkit.version_number()
    assert isinstance(number, int)
    major, minor, patch = (int(x) for x in stepkit.version().split("."))
    assert number == major * 1000000 + minor * 1000 + patch


def test_library_path_is_loaded_file():
    path = stepkit.library_path()
    assert "libstepkit" in path


def test_compile_from_dict_str_and_bytes():
    text = json.dumps(SMALL_TASK)
    for definition in (SMALL_TASK, text, text.encode("utf-8"), bytearray(text.encode("utf-8"))):
        task = stepkit.Task.from_json(definition)
        assert task.info["identifier"] == "small"
        task.close()


def test_info_shape(task):
    info = task.info
    assert info["identifier"] == "small"
    assert info["stepCount"] == len(SMALL_STEP_IDS)
    assert [s["identifier"] for s in info["steps"]] == SMALL_STEP_IDS
    assert [s["type"] for s in info["steps"]] == [s["type"] for s in SMALL_TASK["steps"]]
    assert task.identifier == "small"
    # a new dict each time: mutating it changes nothing
    info["identifier"] = "changed"
    assert task.info["identifier"] == "small"
    assert "small" in repr(task)


def test_from_file(tmp_path):
    path = tmp_path / "task.json"
    path.write_text(json.dumps(SMALL_TASK), encoding="utf-8")
    with stepkit.Task.from_file(path) as task:
        assert task.identifier == "small"
    with stepkit.Task.from_file(str(path)) as task:
        assert task.info["stepCount"] == 6


def test_from_file_missing(tmp_path):
    with pytest.raises(stepkit.StepKitIOError) as info:
        stepkit.Task.from_file(tmp_path / "nope.json")
    assert isinstance(info.value, OSError)
    assert info.value.code == "EIO"
    assert info.value.status == -7
    assert "nope.json" in info.value.message


def test_unicode_task():
    definition = {
        "identifier": "unicode-✓",
        "steps": [{"type": "instruction", "identifier": "intro", "title": "Grüezi 🌍"}],
    }
    with stepkit.Task.from_json(definition) as task:
        assert task.identifier == "unicode-✓"
        with task.open() as session:
            assert session.state["step"]["title"] == "Grüezi 🌍"


@pytest.mark.parametrize(
    "text",
    [
        "",
        "{",
        "not json",
        '{"identifier": "x", "steps": [}',
        '{"identifier": "x", "identifier": "y", "steps": []}',  # duplicate keys
        '{"identifier": "x", "steps": []} trailing',
    ],
)
def test_parse_errors(text):
    with pytest.raises(stepkit.ParseError) as info:
        stepkit.Task.from_json(text)
    error = info.value
    assert error.status == -2
    assert error.code == "EPARSE"
    assert isinstance(error.message, str) and error.message
    assert isinstance(error.path, str)
    assert error.error["status"] == -2
    assert error.error["code"] == "EPARSE"
    assert isinstance(error, ValueError)


def test_nesting_past_the_limit_is_refused_before_parsing():
    # Checked in one pass before jansson parses anything (was EPARSE past jansson's own 2048).
    with pytest.raises(stepkit.InvalidArgumentError) as info:
        stepkit.Task.from_json("[" * 3000 + "]" * 3000)
    assert info.value.error["errors"][0]["code"] == "tooDeep"


def test_parse_error_invalid_utf8():
    with pytest.raises(stepkit.ParseError):
        stepkit.Task.from_json(b'{"identifier": "\xff\xfe", "steps": []}')


def test_parse_error_nul_character():
    # C strings end at NUL: the binding refuses the text instead of sending half of it.
    with pytest.raises(stepkit.ParseError) as info:
        stepkit.Task.from_json(json.dumps(SMALL_TASK) + "\x00garbage")
    assert "NUL" in info.value.message


def test_valid_json_but_not_a_task():
    for text in ("[]", "42", "null", '"task"', "{}"):
        with pytest.raises(stepkit.DefinitionError) as info:
            stepkit.Task.from_json(text)
        assert info.value.status == -3
        assert info.value.code == "EDEFINITION"
        assert info.value.errors


def test_definition_reports_every_problem():
    definition = {
        "identifier": "broken",
        "steps": [
            {"type": "instruction", "identifier": "intro", "foo": 1},  # unknown key
            {"type": "question", "identifier": "q1", "answerFormat": {"type": "boolean"}},
            {"type": "question", "identifier": "q1", "answerFormat": {"type": "boolean"}},  # duplicate
            {
                "type": "question",
                "identifier": "pain",
                "answerFormat": {"type": "scale", "minimum": 10, "maximum": 0},  # min > max
            },
            {"type": "question", "identifier": "nofmt"},  # answerFormat missing
            {"type": "teleport", "identifier": "odd"},  # unknown step type
        ],
    }
    with pytest.raises(stepkit.DefinitionError) as info:
        stepkit.Task.from_json(definition)
    error = info.value
    assert error.status == -3 and error.code == "EDEFINITION"
    assert len(error.errors) >= 5, error.errors
    for problem in error.errors:
        assert set(problem) >= {"code", "message", "path"}, problem
        assert isinstance(problem["message"], str) and problem["message"]
    paths = [p["path"] for p in error.errors]
    assert "steps[0].foo" in paths
    assert any(p.startswith("steps[2]") for p in paths), paths
    assert any(p.startswith("steps[3].answerFormat") for p in paths), paths
    assert any(p.startswith("steps[4]") for p in paths), paths
    assert any(p.startswith("steps[5]") for p in paths), paths
    assert error.path == error.errors[0]["path"]
    assert error.error["errors"] == error.errors
    # str() lists every problem
    text = str(error)
    for path in paths:
        assert path in text


def test_definition_error_message_summarises_several_problems():
    # stepkit.h: several problems give "The task definition has N problems; the first: ...",
    # and "path" repeats the first one's.
    definition = {
        "identifier": "broken",
        "steps": [
            {"type": "instruction", "identifier": "intro", "foo": 1},
            {"type": "question", "identifier": "nofmt"},
        ],
    }
    with pytest.raises(stepkit.DefinitionError) as info:
        stepkit.Task.from_json(definition)
    error = info.value
    assert len(error.errors) == 2
    assert error.path == error.errors[0]["path"] == "steps[0].foo"
    assert error.message == "The task definition has 2 problems; the first: " + error.errors[0]["message"]


def test_definition_error_all_problems_of_one_step():
    # docs/architecture.md: a definition reports all its problems at once.
    definition = {
        "identifier": "x",
        "steps": [
            {"type": "question", "identifier": "q"},
            {"type": "instruction", "identifier": "q", "colour": 1},  # duplicate AND unknown key
        ],
    }
    with pytest.raises(stepkit.DefinitionError) as info:
        stepkit.Task.from_json(definition)
    paths = [p["path"] for p in info.value.errors]
    assert "steps[0].answerFormat" in paths
    assert "steps[1].identifier" in paths
    assert "steps[1].colour" in paths


def test_definition_error_unknown_top_level_key_and_missing_steps():
    with pytest.raises(stepkit.DefinitionError) as info:
        stepkit.Task.from_json({"identifier": "x", "stepz": []})
    paths = [p["path"] for p in info.value.errors]
    assert "stepz" in paths
    assert any(p in ("steps", "") for p in paths), paths


def test_definition_error_empty_steps():
    with pytest.raises(stepkit.DefinitionError):
        stepkit.Task.from_json({"identifier": "x", "steps": []})


def test_from_json_wrong_types():
    for bad in (42, None, 1.5, ["steps"], object()):
        with pytest.raises(TypeError):
            stepkit.Task.from_json(bad)  # type: ignore[arg-type]


def test_from_json_nan_in_dict():
    definition = json.loads(json.dumps(SMALL_TASK))
    definition["steps"][2]["answerFormat"]["maximum"] = float("nan")
    with pytest.raises(stepkit.InvalidArgumentError) as info:
        stepkit.Task.from_json(definition)
    assert isinstance(info.value, ValueError)


def test_task_cannot_be_constructed_directly():
    with pytest.raises(TypeError):
        stepkit.Task()  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        stepkit.Session()  # type: ignore[call-arg]


def test_closed_task():
    task = stepkit.Task.from_json(SMALL_TASK)
    assert not task.closed
    task.close()
    assert task.closed
    task.close()  # idempotent
    with pytest.raises(stepkit.StateError):
        task.open()
    with pytest.raises(stepkit.StateError):
        task.info
    assert "closed" in repr(task)


def test_task_context_manager():
    with stepkit.Task.from_json(SMALL_TASK) as task:
        assert not task.closed
    assert task.closed


def test_sessions_outlive_closed_and_collected_task():
    task = stepkit.Task.from_json(SMALL_TASK)
    session = task.open()
    task.close()
    del task
    gc.collect()
    state = session.forward()
    assert state["step"]["identifier"] == "likes"
    assert session.task.closed
    session.close()


def test_many_tasks_and_sessions_freed_by_gc():
    for _ in range(200):
        task = stepkit.Task.from_json(SMALL_TASK)
        session = task.open()
        session.forward()
        del task, session  # __del__ frees both handles
    gc.collect()


def test_from_json_accepts_any_mapping():
    from types import MappingProxyType

    with stepkit.Task.from_json(MappingProxyType(dict(SMALL_TASK))) as task:
        assert task.identifier == "small"
        with task.open(MappingProxyType({"taskRunUUID": "9f1c7a52-3b8e-4d2a-a1f0-6c2d4e8b9a10"})) as session:
            assert session.state["taskRunUUID"].lower() == "9f1c7a52-3b8e-4d2a-a1f0-6c2d4e8b9a10"
