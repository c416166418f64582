"""Exceptions raised by the StepKit binding.

Every failure reported by ``libstepkit`` (a negative status code plus the error JSON of
``stepkit_last_error()``) becomes an instance of a :class:`StepKitError` subclass chosen by the
status code:

======================  ======  ============  =========================================
class                   status  code          also a
======================  ======  ============  =========================================
InvalidArgumentError    -1      EINVAL        ValueError
ParseError              -2      EPARSE        ValueError
DefinitionError         -3      EDEFINITION
AnswerError             -4      EANSWER       ValueError
StateError              -5      ESTATE
RestorationError        -6      ERESTORE
StepKitIOError          -7      EIO           OSError
InternalError           -8      EINTERNAL
LibraryNotFoundError    -7      EIO           OSError (subclass of StepKitIOError)
======================  ======  ============  =========================================

The ``code`` column is the library's own name (``stepkit_status_name()``); a status the classes
do not know is named by the library too (see :func:`error_from_json`), and a test checks every
class's ``CODE`` against the library, so the names live in one place: the engine.

Errors detected on the Python side before the library is called use the same classes and the
same attributes (for instance a closed session raises :class:`StateError`, NaN in an answer
raises :class:`InvalidArgumentError`); their ``error`` dict has the shape of the library's error
JSON.
"""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional, Tuple, Type

# The exception classes, which ``stepkit`` exports as they are (its ``__all__`` adds this list);
# :func:`error_from_json` and :func:`error_class` are the binding's own.
__all__ = [
    "StepKitError",
    "InvalidArgumentError",
    "ParseError",
    "DefinitionError",
    "AnswerError",
    "StateError",
    "RestorationError",
    "StepKitIOError",
    "InternalError",
    "LibraryNotFoundError",
]


# The class for each status the library returns, filled in as the classes below are defined.
_BY_STATUS: Dict[int, Type["StepKitError"]] = {}


class StepKitError(Exception):
    """Base class of every StepKit error.

    Attributes:
        status: the library's status code (a negative int, e.g. ``-4``).
        code: its name without the ``STEPKIT_`` prefix (e.g. ``"EANSWER"``).
        message: a sentence a host may show as it is.
        path: the place in the JSON argument at fault (``"steps[3].answerFormat.minimum"``),
            ``""`` for the document as a whole or when no JSON argument is at fault.
        errors: every problem found, each a dict with ``code``, ``message`` and ``path``
            (and ``item``, the form item's identifier as written, for a problem about one).
        error: the whole error JSON, as a dict.
    """

    STATUS: int = -8
    CODE: str = "EINTERNAL"

    def __init_subclass__(cls, *, status: Optional[int] = None, code: Optional[str] = None, **kwargs: Any) -> None:
        # A class for a library status names it in its header (``status=-2, code="EPARSE"``)
        # and is then the class :func:`error_class` gives for that status; a subclass without
        # one (LibraryNotFoundError) keeps its parent's.
        super().__init_subclass__(**kwargs)
        if status is not None and code is not None:
            cls.STATUS, cls.CODE = status, code
            _BY_STATUS[status] = cls

    status: int
    code: str
    message: str
    path: str
    errors: List[Dict[str, Any]]
    error: Dict[str, Any]

    def __init__(
        self,
        message: str,
        *,
        status: Optional[int] = None,
        code: Optional[str] = None,
        path: str = "",
        errors: Optional[List[Dict[str, Any]]] = None,
        error: Optional[Mapping[str, Any]] = None,
    ) -> None:
        super().__init__(message)
        self.status = self.STATUS if status is None else status
        self.code = self.CODE if code is None else code
        self.message = message
        self.path = path
        if errors is None:
            errors = [{"code": self.code, "message": message, "path": path}]
        self.errors = list(errors)
        if error is None:
            error = {
                "status": self.status,
                "code": self.code,
                "message": message,
                "path": path,
                "errors": self.errors,
            }
        self.error = dict(error)

    def __str__(self) -> str:
        text = self.message
        if self.path:
            text = f"{text} (at {self.path})"
        if len(self.errors) > 1:
            lines = [f"{len(self.errors)} problems:"]
            for problem in self.errors:
                where = problem.get("path") or "(document)"
                lines.append(f"  {where}: {problem.get('message', '')}")
            text = "\n".join(lines)
        return text

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(status={self.status}, code={self.code!r}, "
            f"message={self.message!r}, path={self.path!r})"
        )

    def __reduce__(self) -> Tuple[Any, ...]:  # keep pickling (multiprocessing) working with keyword-only args
        return (_rebuild, (type(self), self.message, self.error))


def _rebuild(cls: Type[StepKitError], message: str, error: Dict[str, Any]) -> StepKitError:
    return cls(
        message,
        status=error.get("status"),
        code=error.get("code"),
        path=error.get("path", ""),
        errors=error.get("errors"),
        error=error,
    )


class InvalidArgumentError(StepKitError, ValueError, status=-1, code="EINVAL"):
    """An argument is invalid (EINVAL): a bad finish reason, bad session options, a value that
    cannot be turned into JSON (NaN, infinity, a circular structure)."""


class ParseError(StepKitError, ValueError, status=-2, code="EPARSE"):
    """A JSON argument is not valid JSON (EPARSE)."""


class DefinitionError(StepKitError, status=-3, code="EDEFINITION"):
    """A task definition is valid JSON but not a valid task (EDEFINITION).

    ``errors`` lists every problem of the definition, each with its ``path``."""


class AnswerError(StepKitError, ValueError, status=-4, code="EANSWER"):
    """An answer does not fit the current step's answer format (EANSWER)."""


class StateError(StepKitError, status=-5, code="ESTATE"):
    """The call is not allowed in the session's current state (ESTATE), e.g. going forward
    while a required answer is missing, or any call on a closed session or task."""


class RestorationError(StepKitError, status=-6, code="ERESTORE"):
    """Restoration data is damaged, of an unknown version, from another task, or describes a
    run the task does not allow (ERESTORE); ``errors[0]["code"]`` says which (``"damaged"``,
    ``"taskChanged"``, ``"notAllowed"``...)."""


class StepKitIOError(StepKitError, OSError, status=-7, code="EIO"):
    """Reading or writing a file failed (EIO); or ``"libcryptoUnavailable"``: OpenSSL's
    libcrypto, which the library loads on the first save or restore, could not be loaded."""


class InternalError(StepKitError, status=-8, code="EINTERNAL"):
    """A bug in StepKit (EINTERNAL). Please report it with ``error``."""


class LibraryNotFoundError(StepKitIOError):
    """``libstepkit.so`` could not be found or loaded, or is not a compatible StepKit library.

    Raised by the first call that needs the library (``import stepkit`` itself never fails).
    It is an :class:`OSError` and a :class:`StepKitError` (status -7, code ``"EIO"``)."""


def error_class(status: int) -> Type[StepKitError]:
    """The exception class for a library status code (StepKitError for an unknown one)."""
    return _BY_STATUS.get(status, StepKitError)


def _library_name(status: int) -> str:
    """The library's name of a status no class is for (``stepkit_status_name``), or
    ``"EUNKNOWN"`` when the library names none (or cannot be loaded)."""
    from . import _ffi  # _ffi imports this module

    try:
        name = _ffi.status_name(status)
    except LibraryNotFoundError:
        return "EUNKNOWN"
    return name if name else "EUNKNOWN"


def error_from_json(status: int, error: Optional[Mapping[str, Any]]) -> StepKitError:
    """Builds the exception for a failed call that returned ``status`` with error JSON ``error``
    (already decoded; None when the library gave no details)."""
    cls = error_class(status)
    if not isinstance(error, Mapping):
        return cls(
            f"StepKit call failed with status {status} and gave no error details.",
            status=status,
            code=cls.CODE if cls is not StepKitError else _library_name(status),
        )
    message = error.get("message")
    if not isinstance(message, str) or not message:
        message = f"StepKit call failed with status {status}."
    path = error.get("path")
    if not isinstance(path, str):
        path = ""
    code = error.get("code")
    if not isinstance(code, str):
        code = _library_name(status) if cls is StepKitError else cls.CODE
    raw_errors = error.get("errors")
    errors: Optional[List[Dict[str, Any]]] = None
    if isinstance(raw_errors, list) and raw_errors:
        errors = [dict(e) if isinstance(e, Mapping) else {"message": str(e)} for e in raw_errors]
    return cls(message, status=status, code=code, path=path, errors=errors, error=error)
