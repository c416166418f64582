"""One vocabulary across C, C++ and Python: the binding binds every function stepkit.h declares,
names statuses with the library's stepkit_status_name(), and uses the C method names
(go_forward/go_backward; forward/back are deprecated aliases kept for one release)."""

from __future__ import annotations

import re
import warnings

import pytest

import stepkit
from stepkit import _ffi
from stepkit.errors import error_from_json

from conftest import REPO

HEADER = REPO / "include" / "stepkit.h"


def declared_functions() -> set:
    """Every function include/stepkit.h declares: `stepkit_name(` outside comments (a
    function-pointer typedef, `(*stepkit_clock_fn)(`, does not match)."""
    text = re.sub(r"/\*.*?\*/", " ", HEADER.read_text(encoding="utf-8"), flags=re.S)
    text = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))
    return set(re.findall(r"\b(stepkit_[A-Za-z0-9_]+)\s*\(", text))


def test_the_binding_binds_every_function_of_the_header():
    declared = declared_functions()
    assert len(declared) >= 30  # the parse found the declarations
    bound = set(_ffi._PROTOTYPES)
    assert declared - bound == set(), "declared in stepkit.h but not bound by the Python binding"
    assert bound - declared == set(), "bound by the Python binding but not declared in stepkit.h"


def test_every_bound_function_has_its_types_declared():
    cdll = _ffi.lib()
    for name, (restype, argtypes) in _ffi._PROTOTYPES.items():
        fn = getattr(cdll, name)
        assert fn.argtypes == argtypes and fn.restype == restype, name


# The status codes as include/stepkit.h defines them (the spec), and their names.
HEADER_STATUSES = {0: "OK", -1: "EINVAL", -2: "EPARSE", -3: "EDEFINITION", -4: "EANSWER",
                   -5: "ESTATE", -6: "ERESTORE", -7: "EIO", -8: "EINTERNAL"}


def test_the_header_defines_the_statuses_the_test_expects():
    text = HEADER.read_text(encoding="utf-8")
    defined = {int(number): name for name, number in
               re.findall(r"#define STEPKIT_(OK|E[A-Z]+) \(?(-?\d+)\)?", text)}
    assert defined == HEADER_STATUSES


@pytest.mark.parametrize("status, name", sorted(HEADER_STATUSES.items()))
def test_status_name_names_every_status(status, name):
    assert _ffi.status_name(status) == name


@pytest.mark.parametrize("status", [1, -9, 100, -(2**31)])
def test_status_name_is_none_for_a_number_that_is_no_status(status):
    assert _ffi.status_name(status) is None


def test_every_error_class_uses_the_librarys_name():
    for status, name in HEADER_STATUSES.items():
        if status == 0:
            continue
        cls = stepkit.errors.error_class(status)
        assert cls.STATUS == status and cls.CODE == _ffi.status_name(status) == name


def test_a_failed_calls_code_is_the_status_name():
    with pytest.raises(stepkit.ParseError) as caught:
        stepkit.Task.from_json("not json")
    assert caught.value.code == _ffi.status_name(caught.value.status) == "EPARSE"


def test_an_error_without_details_is_named_by_the_library():
    assert error_from_json(-4, None).code == "EANSWER"
    assert error_from_json(-99, None).code == "EUNKNOWN"  # no status: the library names none
    assert error_from_json(-99, {"message": "m"}).code == "EUNKNOWN"


# -- stepkit_task_compile_with_options: Task.from_json(limits=...) --------------------------------

SMALL = {"identifier": "t", "steps": [{"type": "instruction", "identifier": "a", "title": "A"},
                                      {"type": "instruction", "identifier": "b", "title": "B"}]}


def test_limits_refuse_a_definition_past_them():
    with pytest.raises(stepkit.InvalidArgumentError) as caught:
        stepkit.Task.from_json(SMALL, limits={"maxDefinitionBytes": 16})
    assert caught.value.errors[0]["code"] == "tooLarge"
    with pytest.raises(stepkit.DefinitionError) as caught_steps:
        stepkit.Task.from_json(SMALL, limits={"maxSteps": 1})
    assert caught_steps.value.errors[0]["code"] == "tooManySteps"


def test_limits_within_reach_compile_the_same_task():
    with stepkit.Task.from_json(SMALL, limits={"maxSteps": 2}) as task:
        assert [s["identifier"] for s in task.info["steps"]] == ["a", "b"]


def test_bad_limits_are_refused_with_their_path():
    with pytest.raises(stepkit.InvalidArgumentError) as caught:
        stepkit.Task.from_json(SMALL, limits={"maxSteps": "many"})
    assert "limits" in caught.value.path


def test_from_file_passes_limits(tmp_path):
    path = tmp_path / "t.json"
    path.write_text(__import__("json").dumps(SMALL), encoding="utf-8")
    with pytest.raises(stepkit.DefinitionError):
        stepkit.Task.from_file(path, limits={"maxSteps": 1})


# -- go_forward / go_backward, and the deprecated aliases ---------------------------------------


def test_go_forward_and_go_backward_navigate():
    with stepkit.Task.from_json(SMALL) as task, task.open() as session:
        assert session.go_forward()["step"]["identifier"] == "b"
        assert session.go_backward()["step"]["identifier"] == "a"


def test_forward_and_back_still_work_and_say_they_are_deprecated():
    with stepkit.Task.from_json(SMALL) as task, task.open() as session:
        with pytest.warns(DeprecationWarning, match="go_forward"):
            assert session.forward()["step"]["identifier"] == "b"
        with pytest.warns(DeprecationWarning, match="go_backward"):
            assert session.back()["step"]["identifier"] == "a"
        with pytest.warns(DeprecationWarning):
            with pytest.raises(stepkit.StateError):
                session.back()  # the alias raises what go_backward raises


def test_the_library_and_its_hosts_use_the_new_names_without_warnings():
    with stepkit.Task.from_json(SMALL) as task, task.open() as session:
        with warnings.catch_warnings():
            warnings.simplefilter("error", DeprecationWarning)
            session.go_forward()
            session.go_backward()
