"""The optional C extension (ext/_speedups.c): a session's ``state=False`` calls without ctypes.

Loaded by :func:`stepkit._ffi.speedups` (``STEPKIT_SPEEDUPS`` chooses), bound to the library the
package loaded. The calls answer True when they made the call, False when the Python path must.
"""

from typing import Any, Callable, NoReturn, Optional

#: Raised when bind()'s or setup()'s arguments change (the package checks it).
API: int

def bind(set_answer: int, go_forward: int, go_backward: int, skip: int, open: int, free: int) -> None:
    """The addresses of the loaded library's stepkit_session_set_answer, _go_forward,
    _go_backward, _skip, _open and _free."""

def setup(raise_status: Callable[[int], NoReturn], encode: Callable[[Any], bytes]) -> None:
    """``raise_status(status)`` raises a refused call's exception; ``encode(value)`` writes the
    answers the extension does not write itself."""

def answer(session: Any, value: Any) -> bool:
    """``stepkit_session_set_answer(handle, value as JSON, NULL)``."""

def go_forward(session: Any) -> bool:
    """``stepkit_session_go_forward(handle, NULL)``."""

def go_backward(session: Any) -> bool:
    """``stepkit_session_go_backward(handle, NULL)``."""

def skip(session: Any) -> bool:
    """``stepkit_session_skip(handle, NULL)``."""

def open(task: int, options: Optional[bytes]) -> Optional[int]:
    """``stepkit_session_open(task, options, &out)``: the new session's handle (None: the library
    reported success without one); a refused call raises its exception."""

def free(session: int) -> None:
    """``stepkit_session_free(session)``."""

def answer_json(value: Any) -> bytes:
    """The JSON text :func:`answer` sends for ``value`` (the tests compare it with json's)."""
