"""The C ABI's promises as seen through ctypes (NULL arguments, *out on failure, free(NULL))."""

from __future__ import annotations

import ctypes
import json
from ctypes import byref, c_void_p

import stepkit
from stepkit import _ffi
from conftest import SMALL_TASK

SENTINEL = 0x1234


def last_error(lib):
    raw = lib.stepkit_last_error()
    assert raw is not None
    return json.loads(raw.decode("utf-8"))


def test_free_null_is_a_noop():
    lib = _ffi.lib()
    lib.stepkit_string_free(None)
    lib.stepkit_task_free(None)
    lib.stepkit_session_free(None)


def test_version_is_static():
    lib = _ffi.lib()
    assert lib.stepkit_version() == b"0.1.0"
    assert lib.stepkit_version_number() == 1000


def test_null_arguments_are_einval_and_out_is_null():
    lib = _ffi.lib()
    out = c_void_p(SENTINEL)
    assert lib.stepkit_task_compile(None, byref(out)) == -1
    assert out.value is None
    error = last_error(lib)
    assert error["status"] == -1 and error["code"] == "EINVAL"
    assert isinstance(error["message"], str) and error["message"]
    assert isinstance(error["errors"], list)

    assert lib.stepkit_task_compile(b"{}", None) == -1
    for name in (
        "stepkit_session_state",
        "stepkit_session_go_forward",
        "stepkit_session_go_backward",
        "stepkit_session_skip",
        "stepkit_session_result",
        "stepkit_task_info",
    ):
        out = c_void_p(SENTINEL)
        assert getattr(lib, name)(None, byref(out)) == -1, name
        assert out.value is None, name
        assert last_error(lib)["code"] == "EINVAL"
    out = c_void_p(SENTINEL)
    assert lib.stepkit_session_open(None, None, byref(out)) == -1
    assert out.value is None
    assert lib.stepkit_session_set_clock(None, _ffi.CLOCK_FN(), None) == -1


def test_null_answer_and_reason_on_a_real_session():
    lib = _ffi.lib()
    with stepkit.Task.from_json(SMALL_TASK) as task, task.open() as session:
        handle = session._handle
        out = c_void_p(SENTINEL)
        assert lib.stepkit_session_set_answer(handle, None, byref(out)) == -1
        assert out.value is None
        out = c_void_p(SENTINEL)
        assert lib.stepkit_session_finish(handle, None, byref(out)) == -1
        assert out.value is None
        assert last_error(lib)["code"] == "EINVAL"
        assert lib.stepkit_session_state(handle, None) == -1
        assert session.state["status"] == "inProgress"


def test_failure_sets_out_to_null():
    lib = _ffi.lib()
    out = c_void_p(SENTINEL)
    assert lib.stepkit_task_compile(b"{", byref(out)) == -2
    assert out.value is None
    assert last_error(lib)["code"] == "EPARSE"


def test_last_error_survives_successful_calls():
    lib = _ffi.lib()
    out = c_void_p()
    assert lib.stepkit_task_compile(b"[", byref(out)) == -2
    first = lib.stepkit_last_error()
    ok = c_void_p()
    assert lib.stepkit_task_compile(json.dumps(SMALL_TASK).encode(), byref(ok)) == 0
    lib.stepkit_task_free(ok.value)
    assert lib.stepkit_last_error() == first


def test_output_is_nul_terminated_utf8():
    lib = _ffi.lib()
    out = c_void_p()
    definition = dict(SMALL_TASK, identifier="ünïcödé")
    assert lib.stepkit_task_compile(json.dumps(definition).encode(), byref(out)) == 0
    task = out.value
    info = c_void_p()
    assert lib.stepkit_task_info(task, byref(info)) == 0
    text = ctypes.string_at(info.value).decode("utf-8")
    lib.stepkit_string_free(info.value)
    assert json.loads(text)["identifier"] == "ünïcödé"
    lib.stepkit_task_free(task)
