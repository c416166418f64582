"""The exception family: classes per status, attributes, str, pickling."""

from __future__ import annotations

import pickle

import pytest

import stepkit
from conftest import walk_to

CLASSES = [
    (stepkit.InvalidArgumentError, -1, "EINVAL"),
    (stepkit.ParseError, -2, "EPARSE"),
    (stepkit.DefinitionError, -3, "EDEFINITION"),
    (stepkit.AnswerError, -4, "EANSWER"),
    (stepkit.StateError, -5, "ESTATE"),
    (stepkit.RestorationError, -6, "ERESTORE"),
    (stepkit.StepKitIOError, -7, "EIO"),
    (stepkit.InternalError, -8, "EINTERNAL"),
]


@pytest.mark.parametrize("cls,status,code", CLASSES)
def test_hierarchy(cls, status, code):
    assert issubclass(cls, stepkit.StepKitError)
    assert issubclass(cls, Exception)
    error = cls("Something happened.", path="steps[0]")
    assert error.status == status
    assert error.code == code
    assert error.message == "Something happened."
    assert error.path == "steps[0]"
    assert error.errors == [{"code": code, "message": "Something happened.", "path": "steps[0]"}]
    assert error.error["status"] == status
    assert str(error) == "Something happened. (at steps[0])"
    copy = pickle.loads(pickle.dumps(error))
    assert type(copy) is cls and copy.error == error.error and copy.message == error.message


def test_python_family_membership():
    assert issubclass(stepkit.StepKitIOError, OSError)
    assert issubclass(stepkit.LibraryNotFoundError, stepkit.StepKitIOError)
    assert issubclass(stepkit.LibraryNotFoundError, OSError)
    assert issubclass(stepkit.InvalidArgumentError, ValueError)
    assert issubclass(stepkit.AnswerError, ValueError)
    assert issubclass(stepkit.ParseError, ValueError)


def test_engine_error_carries_the_error_json(session):
    walk_to(session, "age")
    with pytest.raises(stepkit.StepKitError) as info:
        session.set_answer(5)
    error = info.value
    assert type(error) is stepkit.AnswerError
    assert error.error["status"] == -4
    assert error.error["code"] == "EANSWER"
    assert error.error["message"] == error.message
    assert error.error["path"] == error.path == ""
    assert isinstance(error.errors, list) and error.errors
    assert error.errors[0]["message"] == error.message
    assert "EANSWER" in repr(error)


def test_last_error_is_read_on_the_failing_call(session):
    # Two different failures in a row each raise their own error, not a stale one.
    with pytest.raises(stepkit.StateError):
        session.back()
    with pytest.raises(stepkit.InvalidArgumentError):
        session.finish("nope")
    with pytest.raises(stepkit.StateError) as info:
        session.back()
    assert info.value.code == "ESTATE"


def test_successful_calls_do_not_raise_stale_errors(session):
    with pytest.raises(stepkit.StateError):
        session.back()
    session.forward()  # succeeds although last_error still holds the old error
    assert session.state["step"]["identifier"] == "likes"
