"""Loading ``libstepkit.so`` and declaring its C ABI (include/stepkit.h) for ctypes.

Discovery order (the first that exists and loads wins):

1. the path in the environment variable ``STEPKIT_LIBRARY``
   (if it is set, it is the only candidate: a wrong path is an error, not a fallback);
2. ``libstepkit.so`` in this package's own directory (a wheel may bundle it);
3. the system: ``ctypes.util.find_library("stepkit")``, then ``libstepkit.so.0``, then
   ``libstepkit.so`` through the dynamic loader's search path (``LD_LIBRARY_PATH``, ldconfig).

The optional extension ``stepkit._speedups`` (bindings/python/ext/_speedups.c, in the wheel
when it was built with Python's headers) makes the session's ``state=False`` calls without
ctypes, through the addresses of this same library's functions (:func:`speedups`). The
environment variable ``STEPKIT_SPEEDUPS`` chooses: unset, the package's own extension when it
has one; ``off``, never (ctypes only); a path, that file (a build tree's; a wrong path is an
error).

Every function's ``argtypes`` and ``restype`` are declared. Functions that return a string the
caller owns do so through a ``char **out`` argument declared as ``POINTER(c_void_p)``, so ctypes
never converts (and loses) an owned pointer; :func:`take_string` copies and frees it.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import importlib
import importlib.util
import os
import threading
from ctypes import POINTER, c_char_p, c_int, c_int64, c_void_p
from types import ModuleType
from typing import Any, List, Optional

from .errors import LibraryNotFoundError

__all__ = [
    "lib",
    "library_path",
    "load_library",
    "CLOCK_FN",
    "EVENT_FN",
    "FREE_FN",
    "take_string",
    "status_name",
    "ENV_VAR",
    "SPEEDUPS_ENV_VAR",
    "speedups",
]

ENV_VAR = "STEPKIT_LIBRARY"
SPEEDUPS_ENV_VAR = "STEPKIT_SPEEDUPS"
SPEEDUPS_API = 1  # the extension's API constant this binding calls it with
SUPPORTED_ABI = 0  # STEPKIT_ABI_VERSION: the library's major version must match

#: typedef int64_t (*stepkit_clock_fn)(void *user_data);
CLOCK_FN = ctypes.CFUNCTYPE(c_int64, c_void_p)
#: typedef void (*stepkit_event_fn)(const char *event_json, void *user_data);
#: (``event_json`` is borrowed for the call: declared c_char_p so ctypes copies it into bytes
#: before calling the Python side, which can then be a C function such as SimpleQueue.put.)
EVENT_FN = ctypes.CFUNCTYPE(None, c_char_p, c_void_p)
#: typedef void (*stepkit_free_fn)(void *user_data);
FREE_FN = ctypes.CFUNCTYPE(None, c_void_p)

_OUT = POINTER(c_void_p)

# name -> (restype, argtypes)
_PROTOTYPES = {
    "stepkit_version": (c_char_p, []),  # static string owned by the library
    "stepkit_version_number": (c_int, []),
    "stepkit_status_name": (c_char_p, [c_int]),  # static string (NULL: not a status)
    "stepkit_last_error": (c_char_p, []),  # owned by the library, not freed
    "stepkit_string_free": (None, [c_void_p]),
    "stepkit_task_compile": (c_int, [c_char_p, _OUT]),
    "stepkit_task_compile_with_options": (c_int, [c_char_p, c_char_p, _OUT]),
    "stepkit_task_info": (c_int, [c_void_p, _OUT]),
    "stepkit_task_graph": (c_int, [c_void_p, _OUT]),
    "stepkit_task_check": (c_int, [c_void_p, _OUT]),
    "stepkit_task_free": (None, [c_void_p]),
    "stepkit_task_compile_fhir": (c_int, [c_char_p, c_char_p, _OUT]),
    "stepkit_task_translate_fhir": (c_int, [c_char_p, c_char_p, _OUT]),
    "stepkit_session_open": (c_int, [c_void_p, c_char_p, _OUT]),
    "stepkit_session_restore": (c_int, [c_void_p, c_char_p, c_char_p, _OUT]),
    "stepkit_session_save": (c_int, [c_void_p, _OUT]),
    "stepkit_session_free": (None, [c_void_p]),
    "stepkit_session_state": (c_int, [c_void_p, _OUT]),
    "stepkit_session_set_answer": (c_int, [c_void_p, c_char_p, _OUT]),
    "stepkit_session_go_forward": (c_int, [c_void_p, _OUT]),
    "stepkit_session_go_backward": (c_int, [c_void_p, _OUT]),
    "stepkit_session_skip": (c_int, [c_void_p, _OUT]),
    "stepkit_session_finish": (c_int, [c_void_p, c_char_p, _OUT]),
    "stepkit_session_result": (c_int, [c_void_p, _OUT]),
    "stepkit_session_result_fhir": (c_int, [c_void_p, _OUT]),
    "stepkit_session_set_clock": (c_int, [c_void_p, CLOCK_FN, c_void_p]),
    "stepkit_session_control": (c_int, [c_void_p, c_char_p, _OUT]),
    "stepkit_session_active": (c_int, [c_void_p, c_char_p, _OUT]),  # deprecated name of _control
    "stepkit_session_tick": (c_int, [c_void_p, _OUT]),
    "stepkit_session_record": (c_int, [c_void_p, c_char_p, c_char_p, _OUT]),
    "stepkit_session_input": (c_int, [c_void_p, c_char_p, _OUT]),
    "stepkit_session_set_event_callback": (c_int, [c_void_p, EVENT_FN, c_void_p, FREE_FN]),
    "stepkit_task_verify_result": (c_int, [c_void_p, c_char_p, c_char_p, _OUT]),
    "stepkit_session_set_language": (c_int, [c_void_p, c_char_p, _OUT]),
    "stepkit_message_catalogue": (c_int, [c_char_p, _OUT]),
    "stepkit_session_audit": (c_int, [c_void_p, c_int64, _OUT]),
    "stepkit_session_set_audit_context": (c_int, [c_void_p, c_char_p, c_char_p]),
    "stepkit_session_report": (c_int, [c_void_p, c_char_p, _OUT]),
    "stepkit_session_consent_document": (c_int, [c_void_p, _OUT]),
    "stepkit_session_review_edit": (c_int, [c_void_p, c_char_p, _OUT]),
    "stepkit_session_review_edit_instance": (c_int, [c_void_p, c_char_p, c_char_p, c_int64, _OUT]),
    "stepkit_task_review": (c_int, [c_void_p, c_char_p, c_char_p, _OUT]),
    "stepkit_session_add_instance": (c_int, [c_void_p, c_char_p, _OUT]),
    "stepkit_session_remove_instance": (c_int, [c_void_p, c_char_p, c_int64, _OUT]),
    "stepkit_session_enter_instance": (c_int, [c_void_p, c_char_p, c_int64, _OUT]),
}

_lock = threading.Lock()
_lib: Optional[ctypes.CDLL] = None
_path: Optional[str] = None


def _load_speedups() -> Optional[ModuleType]:
    """The extension module as ``STEPKIT_SPEEDUPS`` chooses (see the module's docstring)."""
    choice = os.environ.get(SPEEDUPS_ENV_VAR, "")
    if choice.lower() in ("off", "0", "no", "false"):
        return None
    if not choice:
        try:
            module = importlib.import_module("._speedups", __package__)
        except ImportError:
            return None  # a package without the extension: ctypes does every call
        return module if getattr(module, "API", None) == SPEEDUPS_API else None
    spec = importlib.util.spec_from_file_location(f"{__package__}._speedups", choice)
    if spec is None or spec.loader is None or not os.path.isfile(choice):
        raise ImportError(f"{SPEEDUPS_ENV_VAR}={choice}: no such extension module file")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    if getattr(module, "API", None) != SPEEDUPS_API:
        raise ImportError(
            f"{SPEEDUPS_ENV_VAR}={choice}: the extension's API is {getattr(module, 'API', None)}, "
            f"this binding's {SPEEDUPS_API} (rebuild it)"
        )
    return module


_speedups = _load_speedups()


def speedups() -> Optional[ModuleType]:
    """The extension module in use (``stepkit._speedups``), or None: ctypes makes every call."""
    return _speedups


def _candidates() -> List[str]:
    env = os.environ.get(ENV_VAR)
    if env:
        return [env]
    found: List[str] = []
    here = os.path.dirname(os.path.abspath(__file__))
    bundled = os.path.join(here, "libstepkit.so")
    if os.path.exists(bundled):
        found.append(bundled)
    system = ctypes.util.find_library("stepkit")
    if system:
        found.append(system)
    found += ["libstepkit.so.0", "libstepkit.so"]
    return found


def _declare(cdll: ctypes.CDLL, path: str) -> None:
    missing = [name for name in _PROTOTYPES if not hasattr(cdll, name)]
    if missing:
        raise LibraryNotFoundError(
            f"{path} is not a compatible StepKit library: it lacks {', '.join(missing)}."
        )
    for name, (restype, argtypes) in _PROTOTYPES.items():
        fn = getattr(cdll, name)
        fn.restype = restype
        fn.argtypes = argtypes
    number = cdll.stepkit_version_number()
    if number // 1000000 != SUPPORTED_ABI:
        raise LibraryNotFoundError(
            f"{path} is StepKit {cdll.stepkit_version().decode('utf-8', 'replace')}; this binding "
            f"supports ABI version {SUPPORTED_ABI} (0.x)."
        )


def load_library(path: Optional[str] = None) -> ctypes.CDLL:
    """Loads (once) and returns the StepKit library.

    With ``path``, loads that file (only if no library is loaded yet, or it is the same one).
    Raises :class:`~stepkit.LibraryNotFoundError` with every place tried if none loads.
    """
    global _lib, _path
    with _lock:
        if _lib is not None:
            if path is not None and os.path.realpath(path) != os.path.realpath(_path or ""):
                raise LibraryNotFoundError(
                    f"StepKit is already loaded from {_path}; cannot switch to {path}."
                )
            return _lib
        candidates = [path] if path is not None else _candidates()
        failures: List[str] = []
        for candidate in candidates:
            try:
                cdll = ctypes.CDLL(candidate)
            except OSError as exc:
                failures.append(f"  {candidate}: {exc}")
                continue
            _declare(cdll, candidate)
            if _speedups is not None:  # the extension calls this library's functions
                _speedups.bind(*(_address(getattr(cdll, name)) for name in (
                    "stepkit_session_set_answer", "stepkit_session_go_forward",
                    "stepkit_session_go_backward", "stepkit_session_skip", "stepkit_session_open",
                    "stepkit_session_free")))
            _lib, _path = cdll, _resolved_path(cdll, candidate)
            return cdll
        where = "\n".join(failures)
        raise LibraryNotFoundError(
            "Cannot find libstepkit.so, the StepKit engine. Set the environment variable "
            f"{ENV_VAR} to its path (e.g. {ENV_VAR}=/path/to/libstepkit.so), put it next to "
            "the stepkit package, or install it where the dynamic loader finds it. Tried:\n"
            f"{where}"
        )


def _address(fn: Any) -> int:
    """The address of a function of the loaded library."""
    return ctypes.cast(fn, c_void_p).value or 0


def _resolved_path(cdll: ctypes.CDLL, candidate: str) -> str:
    """The file actually loaded, when /proc/self/maps tells (else the name used)."""
    try:
        addr = _address(cdll.stepkit_version)
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as maps:
            for line in maps:
                parts = line.split()
                if len(parts) >= 6:
                    lo, hi = (int(x, 16) for x in parts[0].split("-"))
                    if lo <= addr < hi:
                        return parts[5]
    except (OSError, ValueError):
        pass
    return candidate


def library_path() -> str:
    """The path of the loaded library (loading it if needed)."""
    load_library()
    assert _path is not None
    return _path


def lib() -> Any:
    """The loaded library with its prototypes declared (loading it on first use)."""
    cdll = _lib
    if cdll is None:
        cdll = load_library()
    return cdll


def status_name(status: int) -> Optional[str]:
    """The library's name of a status code (``stepkit_status_name``): ``"EANSWER"`` for -4,
    ``"OK"`` for 0, None for a number that is no status. Loads the library."""
    name = lib().stepkit_status_name(status)
    return None if name is None else bytes(name).decode("ascii")


def take_string(cdll: Any, ptr: c_void_p) -> Optional[str]:
    """Copies the library-owned UTF-8 string at ``ptr`` into a str and frees it.

    Returns None for a NULL pointer."""
    address = ptr.value
    if not address:
        return None
    try:
        return ctypes.string_at(address).decode("utf-8")
    finally:
        cdll.stepkit_string_free(address)
