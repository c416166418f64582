"""Tasks and sessions: the Python face of ``stepkit_task`` and ``stepkit_session``."""

from __future__ import annotations

import ctypes
import dis
import json
import json.encoder
import os
import queue
import threading
import warnings
import weakref
from collections import deque
from contextlib import contextmanager
from ctypes import byref, c_void_p, string_at
from typing import (Any, Callable, Deque, Dict, Iterator, List, Literal, Mapping, NoReturn, Optional, Sequence, Set,
                    Tuple, TypeVar, Union, overload)

from . import _ffi
from .clock import _as_ms, system_time_ms
from .errors import (
    InternalError,
    InvalidArgumentError,
    ParseError,
    RestorationError,
    StateError,
    StepKitIOError,
    error_from_json,
)

__all__ = ["Task", "Session", "FINISH_REASONS", "ACTIVE_OPS", "JSON_PARSER", "SPEEDUPS", "version",
           "version_number"]

try:  # the optional faster parser (the "fast" extra: pip install "stepkit[fast]")
    import orjson as _orjson
except ImportError:
    _orjson = None  # type: ignore[assignment]

#: The parser that reads the library's JSON output: ``"orjson"`` when the optional dependency
#: orjson is installed (the ``fast`` extra), else ``"json"`` (the standard library's). Both
#: give the same values; orjson is several times faster on a session's state.
JSON_PARSER = "json" if _orjson is None else "orjson"

#: The reasons accepted by :meth:`Session.finish`.
FINISH_REASONS = ("completed", "saved", "discarded", "failed", "earlyTermination")

JSON = Any
_NULL_CLOCK = _ffi.CLOCK_FN()  # a NULL stepkit_clock_fn: the system clock
_NULL_EVENT_FN = _ffi.EVENT_FN()  # a NULL stepkit_event_fn: no callback
_NULL_FREE_FN = _ffi.FREE_FN()  # a NULL stepkit_free_fn: nothing to release
PathLike = Union[str, "os.PathLike[str]"]
ClockFunction = Callable[[], int]
EventCallback = Callable[[Dict[str, Any]], Any]

#: The operations of :meth:`Session.control` (``stepkit_session_control``).
ACTIVE_OPS = ("start", "suspend", "resume", "finish", "suspendTask", "resumeTask")


# ------------------------------------------------------------------------------------------------
# Helpers: arguments in, JSON out, errors


def _raise_last_error(cdll: Any, status: int) -> NoReturn:
    """Raises the exception for a failed call. Must run right after the call, on its thread."""
    raw = cdll.stepkit_last_error()
    error: Optional[Dict[str, Any]] = None
    if raw:
        text = raw.decode("utf-8", "replace")
        try:
            decoded = json.loads(text)
        except ValueError:
            decoded = {"message": text}
        error = decoded if isinstance(decoded, dict) else {"message": text}
    raise error_from_json(status, error)


def _parse_with_json(data: bytes) -> JSON:
    """Reads the library's UTF-8 JSON with the standard library (strict UTF-8: json.loads of
    bytes would let surrogates through)."""
    return json.loads(data.decode("utf-8"))


if _orjson is not None:
    _ORJSON_LOADS = _orjson.loads
    _ORJSON_ERROR = _orjson.JSONDecodeError

    def _parse(data: bytes) -> JSON:
        try:
            return _ORJSON_LOADS(data)
        except _ORJSON_ERROR:
            # What orjson refuses, the standard parser decides (and InternalError says why).
            # orjson reads an integer past 64 bits as a float where json keeps an int: the
            # library writes none (it refuses them on input), so the values are the same.
            return _parse_with_json(data)
else:
    _parse = _parse_with_json


def _decode_output(data: Union[None, str, bytes], what: str) -> JSON:
    if data is None:
        raise InternalError(f"{what} reported success but returned no JSON.")
    try:
        return _parse(data.encode("utf-8") if isinstance(data, str) else data)
    except (ValueError, RecursionError) as exc:  # UnicodeDecodeError is a ValueError
        raise InternalError(f"{what} returned JSON that Python cannot read: {exc}") from None


def _fhir_options(strict: bool, value_sets: Optional[Mapping[str, Sequence[Mapping[str, str]]]],
                  required_answers_checked: Optional[str] = None) -> Dict[str, Any]:
    """The options of the FHIR import (docs/fhir.md): the engine checks them."""
    options: Dict[str, Any] = {"strict": bool(strict)}
    if value_sets is not None:
        options["valueSets"] = value_sets
    if required_answers_checked is not None:
        options["requiredAnswersChecked"] = required_answers_checked
    return options


def _fhir_bytes(questionnaire: Any) -> bytes:
    if isinstance(questionnaire, (str, bytes, bytearray)):
        return _json_text_bytes(questionnaire, "the Questionnaire")
    if isinstance(questionnaire, Mapping):
        return _json_bytes(dict(questionnaire), "the Questionnaire")
    raise TypeError(
        "a Questionnaire must be JSON text (str or bytes) or a dict, "
        f"not {type(questionnaire).__name__}"
    )


def _call_out_pointer(cdll: Any, name: str, free: Any, what: str, *args: Any) -> int:
    """Calls ``name(*args, &out)``: returns what it stored in ``out`` (a handle or a string the
    caller now owns), or raises the call's error. ``free`` releases an output left on failure."""
    out = c_void_p()
    status = getattr(cdll, name)(*args, ctypes.byref(out))
    if status != 0:
        if out.value:  # the header promises NULL on failure; never leak if it is not
            free(out.value)
        _raise_last_error(cdll, status)
    if not out.value:
        raise InternalError(f"{name} reported success but returned no {what}.")
    return out.value


def _take_bytes(cdll: Any, address: int) -> bytes:
    """Copies the library-owned NUL-terminated string at ``address`` and frees it."""
    try:
        return string_at(address)
    finally:
        cdll.stepkit_string_free(address)


def _text(data: bytes, name: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InternalError(f"{name} returned invalid UTF-8: {exc}") from None


def _call_out_bytes(cdll: Any, name: str, *args: Any) -> bytes:
    """Calls ``name(*args, &out)``; returns the output JSON as the library wrote it (UTF-8)."""
    return _take_bytes(cdll, _call_out_pointer(cdll, name, cdll.stepkit_string_free, "JSON", *args))


def _call_out_text(cdll: Any, name: str, *args: Any) -> str:
    """Calls ``name(*args, &out)``; returns the output JSON text as it is, or raises the error."""
    return _text(_call_out_bytes(cdll, name, *args), name)


def _call_out(cdll: Any, name: str, *args: Any) -> JSON:
    """Calls ``name(*args, &out)``; returns the decoded output JSON, or raises the error."""
    return _decode_output(_call_out_bytes(cdll, name, *args), name)


# json.dumps(value, allow_nan=False, ensure_ascii=False) builds this encoder on every call;
# one made once writes the same text without that cost.
_ENCODER = json.JSONEncoder(allow_nan=False, ensure_ascii=False)
_ENCODE = _ENCODER.encode
_ENCODE_STR: Callable[[str], str] = json.encoder.encode_basestring
#: Whether an iterable of types holds nothing but ``str`` (and, for :data:`_SCALARS`, the
#: scalars JSON writes): C-level loops, several times cheaper than ``all(...)`` over a generator.
_ALL_STR = frozenset((str,)).issuperset
_SCALARS = frozenset((str, int, bool, float, type(None))).issuperset
#: orjson's writer when orjson is installed: an answer in a fraction of json's time.
_DUMPS: Optional[Callable[[Any], bytes]] = None if _orjson is None else _orjson.dumps
_DUMPS_ERROR: Any = None if _orjson is None else _orjson.JSONEncodeError


def _answer_bytes(value: JSON) -> bytes:
    """An answer as UTF-8 JSON: :func:`_json_bytes`, with the common answers written directly.

    Booleans, integers, finite floats, strings, lists of strings (choices) and, with orjson,
    objects of such scalars (a form's answer) are written without the encoder: the same JSON
    value (orjson's text can differ in spelling only, e.g. ``1e16`` for ``1e+16``). Only
    exact built-in types take these paths, so what json refuses (NaN, a set, an object it cannot
    write, a lone surrogate) still goes to :func:`_json_bytes` and raises as it always did."""
    kind = type(value)
    if kind is bool:
        return b"true" if value else b"false"
    if kind is int:
        return b"%d" % value
    if value is None:
        return b"null"
    if _DUMPS is not None and (
            kind is str or (kind is float and value - value == 0.0) or (
                kind is list and _ALL_STR(map(type, value))) or (
                kind is dict and _ALL_STR(map(type, value)) and _SCALARS(map(type, value.values())))):
        try:
            text = _DUMPS(value)
        except _DUMPS_ERROR:  # a lone surrogate, an integer past 64 bits: the paths below say why
            pass
        else:
            if kind is not dict or b"null" not in text:  # orjson writes NaN and infinities as null
                return text
    try:
        if kind is str:
            return _ENCODE_STR(value).encode("utf-8")
        if kind is float and value - value == 0.0:  # finite (NaN and infinities: json says why not)
            return float.__repr__(value).encode("ascii")
        if kind is list and _ALL_STR(map(type, value)):  # choices
            return ("[" + ",".join(map(_ENCODE_STR, value)) + "]").encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InvalidArgumentError(f"the answer is not valid Unicode: {exc}") from None
    return _json_bytes(value, "the answer")


def _json_bytes(value: JSON, what: str) -> bytes:
    """Serialises a Python value into UTF-8 JSON for the library.

    NaN, infinities, circular structures and lone surrogates raise InvalidArgumentError
    (a ValueError); values JSON cannot represent (sets, objects...) raise TypeError."""
    try:
        text = _ENCODE(value)
    except TypeError as exc:
        raise TypeError(f"{what} cannot be written as JSON: {exc}") from None
    except ValueError as exc:
        raise InvalidArgumentError(f"{what} cannot be written as JSON: {exc}") from None
    except RecursionError:
        raise InvalidArgumentError(f"{what} is nested too deeply to be written as JSON.") from None
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InvalidArgumentError(f"{what} is not valid Unicode: {exc}") from None


def _json_text_bytes(text: Union[str, bytes, bytearray], what: str) -> bytes:
    """JSON text given by the caller, as bytes for a NUL-terminated C string."""
    if isinstance(text, str):
        try:
            data = text.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise ParseError(f"{what} is not valid UTF-8: {exc}") from None
    else:
        data = bytes(text)
    if b"\x00" in data:
        # C would see only the text before the NUL; raw NUL is never valid JSON anyway.
        position = data.index(b"\x00")
        raise ParseError(f"{what} contains a NUL character at byte {position}.")
    return data


def _options_bytes(
    options: Union[None, str, bytes, bytearray, Mapping[str, Any]], what: str
) -> Optional[bytes]:
    """Session options (None, a dict or its JSON text) as bytes for the library (None: NULL)."""
    if options is None:
        return None
    if isinstance(options, (str, bytes, bytearray)):
        return _json_text_bytes(options, f"the {what}")
    if isinstance(options, Mapping):
        return _json_bytes(dict(options), f"the {what}")
    raise TypeError(f"{what} must be a dict, JSON text or None, not {type(options).__name__}")


def _damaged(message: str) -> RestorationError:
    """The error for restoration data found damaged before the library could read it."""
    return RestorationError(
        message, errors=[{"code": "damaged", "message": message, "path": ""}]
    )


def _restoration_bytes(saved: Union[str, bytes, bytearray, Mapping[str, Any]]) -> bytes:
    """Restoration data (JSON text or its dict) as bytes for the library.

    Text that C cannot receive whole (a NUL character, invalid Unicode) and a dict that JSON
    cannot represent (NaN, infinity, a circular structure) are damaged data: RestorationError
    with the code ``"damaged"``, as the library itself reports text it cannot read."""
    if isinstance(saved, (str, bytes, bytearray)):
        try:
            return _json_text_bytes(saved, "the restoration data")
        except ParseError as exc:
            raise _damaged(f"The restoration data is damaged: {exc.message}") from None
    if isinstance(saved, Mapping):
        try:
            return _json_bytes(dict(saved), "the restoration data")
        except InvalidArgumentError as exc:
            raise _damaged(f"The restoration data is damaged: {exc.message}") from None
    raise TypeError(
        "restoration data must be JSON text (str or bytes) or a dict, "
        f"not {type(saved).__name__}"
    )


def _c_string(value: str, what: str) -> bytes:
    if not isinstance(value, str):
        raise TypeError(f"{what} must be a str, not {type(value).__name__}")
    if "\x00" in value:
        raise InvalidArgumentError(f"{what} contains a NUL character.")
    try:
        return value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InvalidArgumentError(f"{what} is not valid Unicode: {exc}") from None


def _block_name(block: Optional[str]) -> Optional[bytes]:
    return None if block is None else _c_string(block, "the block")


def _instance_index(index: int) -> int:
    if not isinstance(index, int) or isinstance(index, bool):
        raise TypeError(f"an instance index must be an int, not {type(index).__name__}")
    if not -(2**63) <= index < 2**63:
        raise InvalidArgumentError(f"instance index {index} is out of range.")
    return index


def version() -> str:
    """The version of the loaded library, e.g. ``"0.1.0"``."""
    raw: Optional[bytes] = _ffi.lib().stepkit_version()
    return raw.decode("utf-8", "replace") if raw else ""


def version_number() -> int:
    """The version of the loaded library as major * 1000000 + minor * 1000 + patch."""
    return int(_ffi.lib().stepkit_version_number())


def message_catalogue(language: str) -> Dict[str, Any]:
    """The message catalogue StepKit ships for ``language`` (``"en"``, ``"de"`` or ``"es"``):
    ``{message key: text or {"one": ..., "other": ...}}``, the reference for a catalogue of
    your own (the session option ``"messages"``).

    InvalidArgumentError for a tag that is not BCP-47 or a language StepKit ships none for."""
    result = _call_out(_ffi.lib(), "stepkit_message_catalogue", _c_string(language, "the language"))
    assert isinstance(result, dict)
    return result


# ------------------------------------------------------------------------------------------------
# Handles


_H = TypeVar("_H", bound="_Handle")


class _Handle:
    """A library handle owned by one Python object: released by :meth:`close`, by leaving a
    ``with`` block, or when the object is collected; calls on it after that raise StateError.

    Subclasses name the handle (``_NOUN``) and the function that frees it (``_FREE``), and may
    release what else they hold once the handle is freed (:meth:`_released`)."""

    __slots__ = ("_handle", "_lib", "_free", "_lock", "__weakref__")

    _NOUN = "handle"
    _FREE = ""

    _handle: Optional[int]
    _lib: Any
    _free: Any
    _lock: threading.Lock

    @classmethod
    def _create(cls, cdll: Any, function: str, *args: Any) -> Any:
        """Calls ``function(*args, &out)`` and returns a new object owning the handle it made."""
        free = getattr(cdll, cls._FREE)
        handle = _call_out_pointer(cdll, function, free, cls._NOUN, *args)
        self = object.__new__(cls)
        self._lib = cdll
        self._free = free
        self._handle = handle
        self._lock = threading.Lock()
        return self

    @property
    def closed(self) -> bool:
        """True once :meth:`close` was called."""
        return self._handle is None

    def close(self) -> None:
        """Releases this object's handle. Idempotent."""
        with self._lock:
            handle, self._handle = self._handle, None
            if handle:
                self._free(handle)
            self._released()

    def _released(self) -> None:
        """Runs under the lock once the handle is freed (by :meth:`close`)."""

    def __enter__(self: _H) -> _H:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __del__(self) -> None:
        handle = getattr(self, "_handle", None)
        if handle:
            self._handle = None
            try:
                self._free(handle)
            except Exception:  # interpreter shutdown: nothing sensible to do
                pass

    def _live_handle(self) -> int:
        """The handle; StateError once closed. Call it holding the lock."""
        handle = self._handle
        if handle is None:
            raise StateError(f"The {self._NOUN} is closed.")
        return handle


# ------------------------------------------------------------------------------------------------
# Task


class Task(_Handle):
    """A compiled, immutable task definition (``stepkit_task``).

    Create one with :meth:`from_json` or :meth:`from_file`; open runs of it with :meth:`open`.
    A task may be shared by threads. :meth:`close` (or leaving a ``with`` block) releases the
    handle; sessions already open keep working, since they hold their own reference (and the
    Session object keeps this Task object alive as well).
    """

    __slots__ = ("_info_text",)

    _NOUN = "task"
    _FREE = "stepkit_task_free"

    _info_text: Optional[str]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise TypeError("use stepkit.Task.from_json() or stepkit.Task.from_file()")

    @classmethod
    def from_json(
        cls,
        definition: Union[str, bytes, bytearray, Mapping[str, Any]],
        *,
        limits: Optional[Mapping[str, int]] = None,
    ) -> "Task":
        """Compiles a task definition given as JSON text (str or UTF-8 bytes) or as a dict.

        ``limits`` (``stepkit_task_compile_with_options``): the compile limits to use instead
        of the defaults, any of ``{"maxDefinitionBytes", "maxDepth", "maxStringBytes",
        "maxSteps"}`` (include/stepkit.h); past one, InvalidArgumentError (``"tooLarge"``,
        ``"tooDeep"``, ``"stringTooLong"``) or DefinitionError (``"tooManySteps"``).

        Raises ParseError (not JSON) or DefinitionError (``.errors`` lists every problem of the
        definition, each with its ``path``)."""
        if isinstance(definition, (str, bytes, bytearray)):
            data = _json_text_bytes(definition, "the task definition")
        elif isinstance(definition, Mapping):
            data = _json_bytes(dict(definition), "the task definition")
        else:
            raise TypeError(
                "a task definition must be JSON text (str or bytes) or a dict, "
                f"not {type(definition).__name__}"
            )
        if limits is None:
            task: Task = cls._create(_ffi.lib(), "stepkit_task_compile", data)
        else:
            options = _json_bytes({"limits": dict(limits)}, "the options")
            task = cls._create(_ffi.lib(), "stepkit_task_compile_with_options", data, options)
        task._info_text = None
        return task

    @classmethod
    def from_fhir(
        cls,
        questionnaire: Union[str, bytes, bytearray, Mapping[str, Any]],
        *,
        strict: bool = False,
        required_answers_checked: Optional[str] = None,
        value_sets: Optional[Mapping[str, Sequence[Mapping[str, str]]]] = None,
    ) -> "Task":
        """Imports a FHIR R4 Questionnaire (JSON text, UTF-8 bytes or a dict) as a task
        (``stepkit_task_compile_fhir``; docs/fhir.md). Its sessions export their answers as a
        QuestionnaireResponse (:meth:`Session.result_as` ``("fhir")``). With ``strict=True``
        anything the import report would list raises DefinitionError; :meth:`translate_fhir`
        gives the translated task and the report. ``required_answers_checked``: ``"perStep"``
        or ``"atCompletion"`` (None: the engine's default for an import, ``"atCompletion"``,
        FHIR's rule), the task's ``requiredAnswersChecked`` (docs/task-format.md).
        ``value_sets`` maps a value set's canonical URL to its concepts (``{"system", "code",
        "display"}``), for ``answerValueSet`` questions whose value set the Questionnaire does
        not contain (the option ``valueSets``).

        Raises ParseError (not JSON), InvalidArgumentError (bad ``value_sets``) or
        DefinitionError (``.errors`` lists every problem, each with its FHIR ``path`` such as
        ``item[2].enableWhen[0].question``)."""
        data = _fhir_bytes(questionnaire)
        options = _json_bytes(_fhir_options(strict, value_sets, required_answers_checked), "the options")
        task: Task = cls._create(_ffi.lib(), "stepkit_task_compile_fhir", data, options)
        task._info_text = None
        return task

    @staticmethod
    def translate_fhir(
        questionnaire: Union[str, bytes, bytearray, Mapping[str, Any]],
        *,
        strict: bool = False,
        value_sets: Optional[Mapping[str, Sequence[Mapping[str, str]]]] = None,
    ) -> Dict[str, Any]:
        """Translates a FHIR R4 Questionnaire (``stepkit_task_translate_fhir``): returns
        ``{"task": definition, "report": [{"linkId", "path", "code", "reason"}, ...]}``, the
        report listing everything not translated as written. Takes and raises as
        :meth:`from_fhir`."""
        data = _fhir_bytes(questionnaire)
        options = _json_bytes(_fhir_options(strict, value_sets), "the options")
        result = _call_out(_ffi.lib(), "stepkit_task_translate_fhir", data, options)
        if not isinstance(result, dict):
            raise InternalError("stepkit_task_translate_fhir returned JSON that is not an object.")
        return result

    @classmethod
    def from_file(cls, path: PathLike, *, limits: Optional[Mapping[str, int]] = None) -> "Task":
        """Compiles the task definition in a JSON file (``limits``: as :meth:`from_json`).

        A file that cannot be read raises StepKitIOError (an OSError)."""
        path = os.fspath(path)
        try:
            with open(path, "rb") as handle:
                data = handle.read()
        except OSError as exc:
            raise StepKitIOError(
                f"Cannot read the task file {path}: {exc.strerror or exc}", path=""
            ) from exc
        return cls.from_json(data, limits=limits)

    # -- API --------------------------------------------------------------------------------

    @property
    def info(self) -> Dict[str, Any]:
        """The task's description (``stepkit_task_info``): ``{"identifier", "fingerprint",
        "stepCount", "steps": [{"identifier", "type"}, ...], "sections", "branching",
        "requestedPermissions", "recorders", "calculations"}`` (a new dict on every access).

        The first access works out the fingerprint, which needs libcrypto as :meth:`Session.save`
        does: where it cannot be loaded, this raises StepKitIOError "libcryptoUnavailable"."""
        with self._lock:
            handle = self._live_handle()
            text = self._info_text
            if text is None:
                text = _call_out_text(self._lib, "stepkit_task_info", handle)
                if not isinstance(_decode_output(text, "stepkit_task_info"), dict):
                    raise InternalError("stepkit_task_info returned JSON that is not an object.")
                self._info_text = text
        info: Dict[str, Any] = json.loads(text)  # a fresh dict on every access
        return info

    def graph(self) -> Dict[str, Any]:
        """The task's rule graph (``stepkit_task_graph``, docs/branching.md): ``{"edges":
        [{"from", "to", "kind", "rule", "branch", "when", "section"}, ...]}``, every move the
        engine's navigation can make (``from`` None: the start; ``to`` None: the end)."""
        return self._object_out("stepkit_task_graph")

    def check(self) -> Dict[str, Any]:
        """The static checker's report on this task (``stepkit_task_check``, docs/checker.md):
        ``{"problems": [{"severity", "code", "message", "path"}], "errors": N, "warnings": N}``
        with severities ``"error"``, ``"warning"`` and ``"info"``."""
        return self._object_out("stepkit_task_check")

    def verify(
        self,
        submission: Union[str, bytes, bytearray, Mapping[str, Any]],
        *,
        ignore: Sequence[str] = (),
        unknown_fields: str = "error",
        allow_incomplete: bool = False,
    ) -> Dict[str, Any]:
        """Verifies a submission against this task (``stepkit_task_verify_result``,
        docs/verify.md): a task result as :meth:`Session.result` gives it or, for a task
        imported from FHIR, a QuestionnaireResponse, as JSON text or a dict. The submission is
        replayed through the task's navigation and answer checks; returns the report
        ``{"verified": bool, "divergences": [{"code", "message", "path", ...}], "result": {...}}``
        (``"questionnaireResponse"`` too for a FHIR task), whose ``result`` is the engine's own.

        ``ignore``: ``"dates"`` and/or ``"calculations"``; ``unknown_fields``: ``"error"`` or
        ``"ignore"``; ``allow_incomplete``: a run that stops before the task ends is no
        divergence. A submission that is not JSON raises ParseError; one that is not a result or
        response, or past the input limits, InvalidArgumentError."""
        if isinstance(submission, (str, bytes, bytearray)):
            data = _json_text_bytes(submission, "the submission")
        elif isinstance(submission, Mapping):
            data = _json_bytes(dict(submission), "the submission")
        else:
            raise TypeError(f"a submission must be JSON text or a dict, not {type(submission).__name__}")
        options = _json_bytes(
            {"ignore": list(ignore), "unknownFields": unknown_fields, "allowIncomplete": allow_incomplete}, "the options"
        )
        with self._lock:
            handle = self._live_handle()
            report = _call_out(self._lib, "stepkit_task_verify_result", handle, data, options)
        if not isinstance(report, dict):
            raise InternalError("stepkit_task_verify_result returned JSON that is not an object.")
        return report

    def review(
        self,
        run: Union[str, bytes, bytearray, Mapping[str, Any]],
        options: Union[None, str, Mapping[str, Any]] = None,
    ) -> Dict[str, Any]:
        """The read-only review of a saved or finished run (``stepkit_task_review``), for a host
        that shows "your answers": ``run`` is restoration data (a save, or an autosave file's
        text), restored under ``options`` as :meth:`restore` does, or a task result as
        :meth:`Session.result` gives it (read, not replayed: :meth:`verify` it to trust it).
        Returns ``{"taskIdentifier", "taskRunUUID", "source": "restorationData" | "result",
        "steps": [{"step", "type", "displayTitle", "skipped", "answers": [{"identifier",
        "label", "answer", "displayText"}]}]}``.

        InvalidArgumentError for a run that is neither ("notARun") or of another task
        ("otherTask"); ParseError for text that is not JSON; RestorationError for restoration
        data that does not restore."""
        if isinstance(run, (str, bytes, bytearray)):
            data = _json_text_bytes(run, "the run")
        elif isinstance(run, Mapping):
            data = _json_bytes(dict(run), "the run")
        else:
            raise TypeError(f"a run must be JSON text or a dict, not {type(run).__name__}")
        opts = _options_bytes(options, "review options")
        with self._lock:
            handle = self._live_handle()
            review = _call_out(self._lib, "stepkit_task_review", handle, data, opts)
        if not isinstance(review, dict):
            raise InternalError("stepkit_task_review returned JSON that is not an object.")
        return review

    def _object_out(self, function: str) -> Dict[str, Any]:
        """The JSON object a ``stepkit_task_*(task, &out)`` call gives for this task."""
        with self._lock:
            handle = self._live_handle()
            value = _call_out(self._lib, function, handle)
        if not isinstance(value, dict):
            raise InternalError(f"{function} returned JSON that is not an object.")
        return value

    @property
    def identifier(self) -> str:
        """The task's identifier."""
        return str(self.info.get("identifier", ""))

    @property
    def fingerprint(self) -> str:
        """The SHA-256 (lower-case hexadecimal) of the definition's canonical form: the value
        restoration data names the task by (``json.loads(session.save())["task"]["fingerprint"]``),
        the same for the same definition however its text is written. Raises StepKitIOError
        "libcryptoUnavailable" where libcrypto cannot be loaded (see :attr:`info`)."""
        return str(self.info.get("fingerprint", ""))

    @property
    def recorders(self) -> List[Dict[str, Any]]:
        """Every recorder the task can run (empty when it records nothing): each active step's,
        ``{"identifier", "type", "permission", "step"}``, then each async action's,
        ``{"identifier", "type", "permission", "startStep", "stopStep"}`` (``stopStep`` None:
        until the task ends); ``permission`` is None for ``touch`` and ``custom``."""
        recorders = self.info.get("recorders")
        if not isinstance(recorders, list):
            return []
        return [dict(r) for r in recorders if isinstance(r, dict)]

    @property
    def requested_permissions(self) -> List[str]:
        """The permissions the task's recorders need, ResearchKit's ``requestedPermissions``:
        a list of ``"location"``, ``"microphone"``, ``"motion"`` and ``"health"`` (empty when
        the task records nothing), so a host can ask for them before starting."""
        permissions = self.info.get("requestedPermissions")
        if not isinstance(permissions, list):
            return []
        return [str(p) for p in permissions]

    def open(self, options: Union[None, str, Mapping[str, Any]] = None) -> "Session":
        """Opens a session (one run of the task), positioned on its first step.

        ``options``: None, a dict or its JSON text, with these keys (all optional):

        - ``"taskRunUUID"``: the run's UUID (default: a random v4 UUID);
        - ``"additionalTaskResults"``: results of other runs that predicates may read;
        - ``"integrityKey"``: a secret; :meth:`Session.save` then signs with HMAC-SHA256 and
          :meth:`restore` needs the same key (default: a plain SHA-256 digest);
        - ``"autosave"``: a file path; the restoration data is written to it atomically at open,
          and each call that changes the session appends its change as one journal record
          (restore the file's whole text with :meth:`restore`; it is :meth:`Session.save`'s
          text only right after a snapshot; a call whose autosave fails raises
          StepKitIOError and changes nothing, recorder files included). The session holds the
          file until it is closed: a second session on it, in this process or another, raises
          StepKitIOError with ``errors[0]["code"] == "autosaveInUse"``; a symbolic link or a
          directory there raises it with ``"autosaveNotAFile"``;
        - ``"defaultResult"``: a task result (e.g. the last run's :attr:`Session.result`) whose
          answers prefill steps with no answer yet as they appear (answers that do not fit are
          ignored); ``"alwaysCheckForDefaultResult": True`` lets them replace existing answers;
        - ``"personalData"``: ``{"dateOfBirth": "1980-05-01", "height": 172, ...}``, values
          for answer formats that name a ``"personalData"`` field; they prefill the same way.

        Bad options raise InvalidArgumentError (unknown key, bad UUID) or ParseError; an
        autosave file that cannot be written, is held by another session or is not a regular
        file raises StepKitIOError."""
        data = _options_bytes(options, "session options")
        with self._lock:
            if _fast_open is not None and _fast_free is not None:  # the extension: no ctypes
                handle = _fast_open(self._live_handle(), data)
                if handle is None:
                    raise InternalError("stepkit_session_open reported success but returned no session.")
                return Session._new(self, handle, _fast_free, data)
            return Session._open(self, data, "stepkit_session_open", self._live_handle(), data)

    def restore(
        self,
        saved: Union[str, bytes, bytearray, Mapping[str, Any]],
        options: Union[None, str, Mapping[str, Any]] = None,
    ) -> "Session":
        """Rebuilds a session from restoration data written by :meth:`Session.save` (or by the
        ``autosave`` option): the same step, state, back history, answers (on and off the path,
        drafts included), dates and finish state.

        ``saved``: the restoration data as JSON text (str or UTF-8 bytes, e.g. the whole
        contents of an autosave file: a snapshot and its journal of changes) or as a dict
        (``json.loads`` of a saved text, key order unchanged; an autosave file with records is
        not one JSON document: pass its text).
        ``options``: None, a dict or its JSON text, with the options of :meth:`open` except
        ``taskRunUUID`` and ``additionalTaskResults`` (both come from the saved data): the
        ``integrityKey`` the data was saved with, ``autosave``, ``defaultResult``... plus
        ``"migrate": True`` to accept data saved on another version of this task (same
        identifier, other definition): the answers that still fit are kept, the others are
        listed in the new session's :attr:`Session.restore_report`, and the run resumes at the
        first step that still needs an answer.

        The restored session uses the system clock: set another with :meth:`Session.set_clock`.
        Restore is exact: a running active step goes on from the elapsed time it was saved with,
        and a clock set right after the restore (before anything changes the session) takes the
        restore over, so the restored state equals the saved one.

        Wrong or damaged data raises RestorationError, and no session is made; the specific
        reason is ``error.errors[0]["code"]``: ``"damaged"`` (not JSON, truncated, or not
        valid for this task), ``"notRestorationData"``, ``"unsupportedVersion"``,
        ``"integrityCheckFailed"`` (changed, or signed with another key), ``"keyRequired"``
        (signed, but no ``integrityKey`` given), ``"integrityMissing"``, ``"differentTask"``,
        ``"taskChanged"`` (another version of the task, without ``migrate``) or
        ``"notAllowed"``: well-formed and correctly signed, but not a run the task allows (the
        saved path is replayed through the task's navigation: each visit where navigation led,
        required answers present where the run went forward, a ``"completed"`` run ending
        where navigation ends, dates in order); the message names the first problem and
        ``error.errors[0]["path"]`` where it is. Bad options
        raise InvalidArgumentError or ParseError; an autosave file that cannot be written,
        is held by another session or is not a regular file raises StepKitIOError."""
        saved_data = _restoration_bytes(saved)
        data = _options_bytes(options, "restore options")
        with self._lock:
            return Session._open(self, data, "stepkit_session_restore", self._live_handle(), saved_data, data)

    def __repr__(self) -> str:
        if self._handle is None:
            return "<stepkit.Task (closed)>"
        try:
            info = self.info
            return f"<stepkit.Task {info.get('identifier')!r} ({info.get('stepCount')} steps)>"
        except Exception:
            return "<stepkit.Task>"


# ------------------------------------------------------------------------------------------------
# Session


class _Clock:
    """Adapts a Python clock function to ``stepkit_clock_fn`` and remembers its failures."""

    __slots__ = ("fn", "last", "error", "cfunc")

    def __init__(self, fn: ClockFunction) -> None:
        self.fn = fn
        self.last: Optional[int] = None
        self.error: Optional[BaseException] = None
        self.cfunc = _ffi.CLOCK_FN(self._trampoline)

    def _trampoline(self, _user_data: Optional[int]) -> int:
        # Never let an exception reach ctypes (it would print it and return 0, i.e. 1970).
        try:
            value = self.fn()
            try:
                ms = _as_ms(value, "the clock's return value")
            except TypeError:
                if isinstance(value, float) and value == value and abs(value) < 2**63:
                    ms = int(value)
                else:
                    raise
            self.last = ms
            return ms
        except BaseException as exc:  # noqa: B902 - re-raised after the library call
            if self.error is None:
                self.error = exc
            return self.last if self.last is not None else system_time_ms()


class _Events:
    """Adapts a Python event callback to ``stepkit_event_fn``.

    The function the library calls is ``SimpleQueue.put`` of :attr:`inbox`, written in C, with
    the event text already copied into bytes by ctypes (``EVENT_FN`` declares it ``c_char_p``):
    no Python code runs inside the library call. A Python trampoline would start with a
    bytecode at which a pending signal handler runs (Ctrl-C's KeyboardInterrupt): ctypes prints
    and swallows an exception raised there, and the event and the exception were both lost.
    The session moves what arrived into its queue of undelivered events (:meth:`Session._take`)
    and hands them to :attr:`fn` once the library call has returned (:meth:`Session._deliver`)."""

    __slots__ = ("fn", "inbox", "cfunc")

    def __init__(self, fn: EventCallback) -> None:
        self.fn = fn
        self.inbox: "queue.SimpleQueue[Optional[bytes]]" = queue.SimpleQueue()
        # put(item, block): called with (event bytes, user_data None); never blocks.
        self.cfunc = _ffi.EVENT_FN(self.inbox.put)


_NO_EVENT = object()  # never put in an inbox: iter(inbox.get_nowait, _NO_EVENT) ends on Empty


def _entry_offset(code: Any) -> int:
    """The offset of the instruction at which a function's frame begins executing: where
    CPython 3.11+ runs pending signal handlers on entry (RESUME); 0 before 3.11."""
    offset = _ENTRY_OFFSETS.get(code)
    if offset is None:
        offset = 0
        for instruction in dis.get_instructions(code):
            if instruction.opname == "RESUME":
                offset = instruction.offset
                break
        _ENTRY_OFFSETS[code] = offset
    return offset


_ENTRY_OFFSETS: "weakref.WeakKeyDictionary[Any, int]" = weakref.WeakKeyDictionary()


def _raised_on_entry(exc: BaseException) -> bool:
    """Whether ``exc``, caught by :meth:`Session._deliver` around the callback's call, was raised
    as the callback's first Python frame began, before any of its code ran: by a signal
    handler (Ctrl-C) that the interpreter runs at a function's entry. Then the callback did
    not see the event. A callback written in C (no Python frame) has always seen it."""
    tb = exc.__traceback__  # this frame (the delivery)
    callee = tb.tb_next if tb is not None else None
    if callee is None:
        return False
    return callee.tb_lasti <= _entry_offset(callee.tb_frame.f_code)


def _decode_event(raw: bytes) -> Any:
    try:
        return _parse(raw)
    except (ValueError, RecursionError) as exc:  # UnicodeDecodeError is a ValueError
        raise InternalError(f"an event is not valid JSON: {exc}") from None


def _samples_bytes(samples: Any) -> bytes:
    """Recorder samples (a dict, or a list of dicts) as JSON bytes for the library."""
    if isinstance(samples, Mapping):
        return _json_bytes(dict(samples), "the samples")
    if isinstance(samples, (list, tuple)):
        for index, sample in enumerate(samples):
            if not isinstance(sample, Mapping):
                raise TypeError(
                    f"samples[{index}] must be a dict (a JSON object), not {type(sample).__name__}"
                )
        return _json_bytes([dict(sample) for sample in samples], "the samples")
    raise TypeError(f"samples must be a dict or a list of dicts, not {type(samples).__name__}")


_get_ident = threading.get_ident


def _raise_status(status: int) -> NoReturn:
    """Raises the exception of a call the extension made (right after it, on its thread)."""
    _raise_last_error(_ffi.lib(), status)


# The optional extension (stepkit._speedups, _ffi.speedups()): the state=False calls of a
# session with neither a Python clock nor an event callback, made in C. Each answers False when
# the session needs the Python path (Session._quiet), which then makes the call.
_SPEEDUPS = _ffi.speedups()
#: True when the optional C extension ``stepkit._speedups`` makes the session's ``state=False``
#: calls (``set_answer``, ``go_forward``, ``go_backward``, ``skip``); False when ctypes makes
#: every call (no extension in the package, or ``STEPKIT_SPEEDUPS=off``). Both behave alike.
SPEEDUPS = _SPEEDUPS is not None
_fast_answer: Optional[Callable[[Any, JSON], bool]] = None
_fast_forward: Optional[Callable[[Any], bool]] = None
_fast_backward: Optional[Callable[[Any], bool]] = None
_fast_skip: Optional[Callable[[Any], bool]] = None
_fast_open: Optional[Callable[[int, Optional[bytes]], Optional[int]]] = None
_fast_free: Optional[Callable[[int], None]] = None
if _SPEEDUPS is not None:
    _SPEEDUPS.setup(_raise_status, _answer_bytes)
    _fast_answer = _SPEEDUPS.answer
    _fast_forward = _SPEEDUPS.go_forward
    _fast_backward = _SPEEDUPS.go_backward
    _fast_skip = _SPEEDUPS.skip
    _fast_open = _SPEEDUPS.open
    _fast_free = _SPEEDUPS.free


def _object(data: bytes, name: str) -> Dict[str, Any]:
    """The JSON object a call wrote (InternalError if it is not one)."""
    result = _decode_output(data, name)
    if not isinstance(result, dict):
        raise InternalError(f"{name} returned JSON that is not an object.")
    return result


class Session(_Handle):
    """One run of a task (``stepkit_session``). Create it with :meth:`Task.open`.

    Every method that moves the session returns the new state (a dict, as :attr:`state`), or,
    called with ``state=False``, None: the library then does not build the state at all (its
    ``out == NULL``), which makes the call several times cheaper. The call's events still
    reach :meth:`on_event`'s callback; read :attr:`state` whenever it is needed.
    A refused call raises a StepKitError subclass and leaves the session exactly as it was.
    Calls on a closed session raise StateError. A session may be used from several threads,
    one call at a time (calls are serialized).
    """

    __slots__ = ("_task", "_owner", "_clock", "_events", "_undelivered", "_delivering", "_gil_calls")

    _NOUN = "session"
    _FREE = "stepkit_session_free"

    _task: Task
    _owner: Optional[int]  # the thread inside a library call on this session
    _clock: Optional["_Clock"]
    _events: Optional["_Events"]
    _undelivered: Deque[Optional[bytes]]  # events the library handed over, not yet given to the callback
    _delivering: Set[int]  # the threads running a delivery (a call from the callback adds none)
    _gil_calls: bool  # the extension may make the state=False calls (Session._init)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise TypeError("use stepkit.Task.open() to open a session")

    @classmethod
    def _open(cls, task: Task, options: Optional[bytes], function: str, *args: Any) -> "Session":
        """Opens or restores a session of ``task`` with ``function(*args, &out)``; ``options``
        are the session's options as given to the library."""
        cdll = task._lib
        free = getattr(cdll, cls._FREE)
        return cls._new(task, _call_out_pointer(cdll, function, free, cls._NOUN, *args), free, options)

    @classmethod
    def _new(cls, task: Task, handle: int, free: Callable[[int], Any], options: Optional[bytes]) -> "Session":
        """A session of ``task`` owning ``handle``, released by ``free(handle)`` (ctypes', or the
        extension's when the extension opened it); ``options`` as given to the library. One
        function, not _Handle._create's: a walk opens a session every time."""
        self: Session = object.__new__(cls)
        self._lib = task._lib
        self._free = free
        self._handle = handle
        self._lock = threading.Lock()
        self._task = task  # keeps the Task object (and its module state) alive
        # The extension makes this session's calls holding the GIL (and no lock: see
        # ext/_speedups.c) unless a call may wait on the disk: with autosave, each call fsyncs
        # its journal record, so those go through ctypes, which lets other threads run.
        self._gil_calls = _SPEEDUPS is not None and (options is None or b"autosave" not in options)
        self._owner = None
        self._clock = None
        self._events = None
        self._undelivered = deque()
        self._delivering = set()
        return self

    # -- handle management ------------------------------------------------------------------

    @property
    def task(self) -> Task:
        """The Task this session runs."""
        return self._task

    def close(self) -> None:
        """Releases the session. Idempotent. Does not finish the task."""
        owner = self._owner
        if owner is not None and owner == _get_ident():
            raise StateError("A session's clock must not close its own session.")
        with self._lock:  # _Handle.close, without its frame: a walk closes a session every time
            handle, self._handle = self._handle, None
            if handle:
                self._free(handle)
            self._released()

    def _released(self) -> None:
        self._clock = None  # only after the library stopped using it
        self._events = None
        self._undelivered.clear()

    def _call(self, name: str, *args: Any) -> Dict[str, Any]:
        """Runs ``name(session, *args, &out)`` under the session's lock and returns its JSON
        object."""
        data = self._invoke(name, args, True)
        assert data is not None  # asked for
        return _object(data, name)

    @contextmanager
    def _owning(self) -> Iterator[Any]:
        """Holds the session's lock, marked as owned by this thread, and yields the live handle.

        A call made while this thread already owns the session can only come from its clock
        (the library calls the clock under the session's lock): it is refused instead of
        deadlocking."""
        me = threading.get_ident()
        if self._owner == me:
            raise StateError(
                "A session's clock must not call into its own session (re-entrant call)."
            )
        with self._lock:
            handle = self._live_handle()
            self._owner = me
            try:
                yield handle
            finally:
                self._owner = None

    def _call_text(self, name: str, *args: Any) -> str:
        """Runs ``name(session, *args, &out)`` under the session's lock and returns its output
        JSON text unchanged."""
        data = self._invoke(name, args, True)
        assert data is not None
        return _text(data, name)

    def _quiet(self, name: str, *args: Any) -> None:
        """Runs ``name(session, *args, NULL)`` under the session's lock: a call whose state the
        caller does not read (``state=False``). The walk's calls come through here, so it is
        :meth:`_invoke` without anything a plain session does not need: no argument tuple built
        for it, no output, and the lock taken with ``acquire``/``release`` (half the cost of a
        ``with`` block; ``benchmarks/README.md``, issue 36's Python rows). A session with a
        Python clock, an event callback or events still to deliver goes through
        :meth:`_invoke_hooked` as before."""
        owner = self._owner
        if owner is not None and owner == _get_ident():
            raise StateError(
                "A session's clock must not call into its own session (re-entrant call)."
            )
        lock = self._lock
        lock.acquire()
        try:
            handle = self._handle
            if handle is None:
                raise StateError(f"The {self._NOUN} is closed.")
            hooked = self._clock is not None or self._events is not None or self._undelivered
            if not hooked:
                cdll = self._lib
                status = getattr(cdll, name)(handle, *args, None)
        finally:
            lock.release()
        if hooked:
            self._invoke_hooked(name, args, False)
        elif status != 0:
            _raise_last_error(cdll, status)

    def _invoke(self, name: str, args: Tuple[Any, ...], want: bool) -> Optional[bytes]:
        """Runs ``name(session, *args, &out)`` under the session's lock and returns its output
        JSON as the library wrote it (UTF-8), or, when ``want`` is false, passes ``out`` NULL
        and returns None. The call's events are then given to the event callback.

        Every call on a session but :meth:`_quiet`'s comes through here, so it is written for
        speed: no generator-based context manager,
        one copy of the output, and, while the session has neither a Python clock nor an event
        callback, nothing but the lock around the call. Without a Python clock no Python code
        runs inside the call, so no re-entrant call can come, and ``_owner`` is not needed."""
        owner = self._owner
        if owner is not None and owner == _get_ident():
            raise StateError(
                "A session's clock must not call into its own session (re-entrant call)."
            )
        with self._lock:
            handle = self._handle
            if handle is None:
                raise StateError(f"The {self._NOUN} is closed.")
            if self._clock is None and self._events is None and not self._undelivered:
                cdll = self._lib
                if not want:
                    status = getattr(cdll, name)(handle, *args, None)
                    if status != 0:
                        _raise_last_error(cdll, status)
                    return None
                out = c_void_p()
                status = getattr(cdll, name)(handle, *args, byref(out))
                address = out.value
                if status != 0:
                    if address:  # the header promises NULL on failure; never leak if not
                        cdll.stepkit_string_free(address)
                    _raise_last_error(cdll, status)
                if not address:
                    raise InternalError(f"{name} reported success but returned no JSON.")
                return _take_bytes(cdll, address)
        return self._invoke_hooked(name, args, want)

    def _invoke_hooked(self, name: str, args: Tuple[Any, ...], want: bool) -> Optional[bytes]:
        """:meth:`_invoke` for a session with a Python clock, an event callback or events still
        to deliver: the call marked as owned by this thread (the clock runs inside it), the
        clock's error raised after it, its events delivered once the lock is released."""
        data: Optional[bytes] = None
        try:
            with self._owning() as handle:
                clock = self._clock
                sink = self._events
                cdll = self._lib
                try:
                    out = c_void_p()
                    status = getattr(cdll, name)(handle, *args, byref(out) if want else None)
                    address = out.value
                    if status != 0:
                        if address:
                            cdll.stepkit_string_free(address)
                        _raise_last_error(cdll, status)
                    if want:
                        if not address:
                            raise InternalError(f"{name} reported success but returned no JSON.")
                        data = _take_bytes(cdll, address)
                finally:
                    clock_error = None
                    if clock is not None:
                        clock_error, clock.error = clock.error, None
                    if sink is not None:
                        self._take(sink)
                if clock_error is not None:
                    raise clock_error
        finally:
            # Outside the lock: the callback may call back into this session.
            callback_error = self._deliver()
        if callback_error is not None:
            raise callback_error
        return data

    def _take(self, sink: _Events) -> None:
        """Moves the events the library put in ``sink``'s inbox to the end of the queue of
        undelivered events, in one C-level call: an exception raised by a signal handler can
        only come before or after it, so no event is dropped on the way."""
        try:
            self._undelivered.extend(iter(sink.inbox.get_nowait, _NO_EVENT))
        except queue.Empty:
            pass  # the inbox is empty: everything was moved

    def _deliver(self) -> Optional[BaseException]:
        """Gives the queued events to the callback, oldest first, each exactly once; returns the
        first Exception the callback raised (the others are still delivered). A KeyboardInterrupt
        or other BaseException, from the callback or from a signal handler, propagates at once:
        the events after it stay queued for the next call or :meth:`deliver_events`.

        An event counts as delivered once it is taken off the queue, and nothing between that
        and the callback's call runs a bytecode at which a signal handler runs (``del`` and
        attribute loads do not; calls do): so an exception raised by a signal handler either
        leaves the event queued or is raised inside the callback. Raised as the callback's
        frame begins, before its first line (:func:`_raised_on_entry`), it puts the event back:
        the callback never saw it. A call made from the callback only queues its events (after
        the ones still queued), and the delivery under way hands them out, so the stack does
        not grow with the events."""
        undelivered = self._undelivered
        if not undelivered:
            return None
        me = threading.get_ident()
        if me in self._delivering:
            return None  # called from the callback: the delivery under way goes on with them
        first: Optional[BaseException] = None
        try:
            self._delivering.add(me)
            while undelivered:
                sink = self._events
                if sink is None:
                    undelivered.clear()  # the callback was removed: nobody to hear them
                    break
                raw = undelivered[0]
                try:
                    event = _decode_event(raw) if raw is not None else None
                except InternalError as exc:  # not JSON (a library bug): dropped, reported
                    if undelivered and undelivered[0] is raw:
                        del undelivered[0]
                    if first is None:
                        first = exc
                    continue
                # len() is a call, after which a signal that came during the decoding has its
                # handler run: its exception leaves the event queued instead of being raised at
                # the callback's first line, before the callback could do anything with it.
                if len(undelivered) == 0 or undelivered[0] is not raw:
                    continue  # another thread's delivery took it meanwhile
                del undelivered[0]
                if event is None:
                    continue
                fn = sink.fn
                try:
                    fn(event)
                except Exception as exc:  # noqa: B902 - re-raised once the rest is delivered
                    if first is None:
                        first = exc
                except BaseException as exc:  # noqa: B902 - KeyboardInterrupt & co: stop here
                    # Back first, taken again once it is known the callback had it: a second
                    # signal meanwhile leaves it queued (delivered twice at worst, never lost).
                    undelivered.appendleft(raw)
                    if not _raised_on_entry(exc) and undelivered and undelivered[0] is raw:
                        del undelivered[0]
                    raise
        finally:
            self._delivering.discard(me)
        return first

    def deliver_events(self) -> None:
        """Delivers the events still queued because the callback (or a signal handler, e.g.
        Ctrl-C's KeyboardInterrupt) raised a KeyboardInterrupt or another BaseException during an
        earlier delivery; the next call on the session delivers them first too. Raises what the
        callback raises, as a call would. Does nothing without queued events or callback."""
        error = self._deliver()
        if error is not None:
            raise error

    # -- reading -------------------------------------------------------------------------------

    @property
    def state(self) -> Dict[str, Any]:
        """What the host should present now: ``status``, ``finishReason``, ``step``,
        ``answer``, ``problems``, ``navigation``, ``progress``... (see stepkit.h)."""
        return self._call("stepkit_session_state")

    @property
    def result(self) -> Dict[str, Any]:
        """The task result so far (final once finished): ``identifier``, ``taskRunUUID``,
        ``startDate``, ``endDate`` and one step result per visit in ``results``."""
        return self._call("stepkit_session_result")

    def result_as(self, fmt: str) -> Dict[str, Any]:
        """The result in another format: ``"stepkit"`` (:attr:`result`) or ``"fhir"``, a FHIR R4
        QuestionnaireResponse (``stepkit_session_result_fhir``; the task must come from
        :meth:`Task.from_fhir`, else InvalidArgumentError)."""
        if fmt == "stepkit":
            return self.result
        if fmt == "fhir":
            return self._call("stepkit_session_result_fhir")
        raise ValueError(f"unknown result format {fmt!r}: expected 'stepkit' or 'fhir'")

    @property
    def restore_report(self) -> Optional[Dict[str, Any]]:
        """After :meth:`Task.restore` with ``"migrate": True``, what was carried over:
        ``{"migrated": True, "kept": [{"step", "item"}], "dropped": [{"step", "item",
        "reason"}], ...}`` (``item`` is None for a question's answer). None otherwise (the
        state's ``restoreReport``)."""
        report = self.state.get("restoreReport")
        return report if isinstance(report, dict) else None

    # -- saving --------------------------------------------------------------------------------

    def save(self) -> str:
        """Restoration data for the session as it is now, as JSON text: versioned
        (schema/restoration.schema.json), naming the task's identifier and fingerprint, with the
        run's path, answers, dates and finish state, and an integrity check (SHA-256, or
        HMAC-SHA256 under the session's ``integrityKey``). Allowed in any state, finished
        included. Give it back to :meth:`Task.restore` to continue the run.

        Keep the text as it is (or ``json.loads`` it and keep the key order): the integrity
        check covers every value, so damage makes :meth:`Task.restore` refuse it.

        What the check is worth: without an ``integrityKey`` it is a plain SHA-256, which
        detects damage but proves nothing about who wrote the data; anyone who edits it can
        compute the digest again, and :meth:`Task.restore` then accepts any run the task allows
        (it refuses, with ``"notAllowed"``, only runs the task does not allow). For data kept by
        clients or anywhere others can write, open the session with an ``integrityKey`` that
        only the trusted side knows (HMAC-SHA256) and restore with the same key.

        The first save (or restore) of the process loads OpenSSL's libcrypto (the package's
        copy, beside the library); where it cannot be loaded, :class:`StepKitIOError` with
        ``errors[0]["code"] == "libcryptoUnavailable"``, and nothing changes."""
        return self._call_text("stepkit_session_save")

    # -- moving --------------------------------------------------------------------------------

    @overload
    def set_answer(self, value: JSON, *, state: Literal[True] = ...) -> Dict[str, Any]: ...
    @overload
    def set_answer(self, value: JSON, *, state: Literal[False]) -> None: ...
    @overload
    def set_answer(self, value: JSON, *, state: bool) -> Optional[Dict[str, Any]]: ...

    def set_answer(self, value: JSON, *, state: bool = True) -> Optional[Dict[str, Any]]:
        """Validates ``value`` for the current step and keeps it as the step's draft answer.

        A question step takes its answer (``True``, ``["headache"]``, ``42``, ``"08:30"``,
        ``{"dontKnow": True}``; ``None`` clears it); a form step takes ``{"item": answer}``.
        Returns the new state (None with ``state=False``: see :class:`Session`). Raises
        AnswerError (the answer does not fit; ``path`` names the
        form item), StateError (the step takes no answer, or the task finished),
        InvalidArgumentError (NaN/infinity/circular value) or TypeError (not JSON-able)."""
        if not state:
            if _fast_answer is None or not _fast_answer(self, value):
                self._quiet("stepkit_session_set_answer", _answer_bytes(value))
            return None
        data = self._invoke("stepkit_session_set_answer", (_answer_bytes(value),), True)
        return None if data is None else _object(data, "stepkit_session_set_answer")

    @overload
    def set_answer_json(self, text: Union[str, bytes], *, state: Literal[True] = ...) -> Dict[str, Any]: ...
    @overload
    def set_answer_json(self, text: Union[str, bytes], *, state: Literal[False]) -> None: ...
    @overload
    def set_answer_json(self, text: Union[str, bytes], *, state: bool) -> Optional[Dict[str, Any]]: ...

    def set_answer_json(self, text: Union[str, bytes], *, state: bool = True) -> Optional[Dict[str, Any]]:
        """Like :meth:`set_answer` with the answer given as JSON text (ParseError if invalid)."""
        if not isinstance(text, (str, bytes, bytearray)):
            raise TypeError(f"answer JSON must be str or bytes, not {type(text).__name__}")
        data = self._invoke("stepkit_session_set_answer", (_json_text_bytes(text, "the answer"),), state)
        return None if data is None else _object(data, "stepkit_session_set_answer")

    def report(self, step: str, **what: JSON) -> Dict[str, Any]:
        """Reports what the host observed on the current step, a step the state marks
        ``"reportedByHost"`` (``stepkit_session_report``): ``report("sig", typedName="Ada
        Lovelace")``, ``report("sig", image={"contentType": "image/png", "base64": ...})``,
        ``report("sig", path="M 0 0 L 10 10")``, ``report("table", viewed=True)``,
        ``report("web", message="done")``, ``report("video", playbackCompleted=True,
        position=12.5)``, ``report("perm", granted=[...], denied=[...])``. A signature or image
        is written into the session's ``outputDirectory`` and kept with its SHA-256. Returns the
        new state. Raises StateError (not the current step, not a reported step, no output
        directory), AnswerError (the report does not fit; ``path`` names the field), StepKitIOError
        (the file could not be written). A refused report changes nothing."""
        if not isinstance(step, str):
            raise TypeError(f"step must be a str, not {type(step).__name__}")
        report: Dict[str, JSON] = {"step": step}
        report.update(what)
        return self._call("stepkit_session_report", _json_bytes(report, "the report"))

    def consent_document(self) -> Dict[str, Any]:
        """The run's consent document, signed as far as it is (``stepkit_session_consent_document``):
        ``{"consented", "documentVersion", "documentSHA256", "givenName", "familyName",
        "signatureDate", "signature", "markdown", "html"}``. StateError when the task has no
        consent review step."""
        return self._call("stepkit_session_consent_document")

    @overload
    def go_forward(self, *, state: Literal[True] = ...) -> Dict[str, Any]: ...
    @overload
    def go_forward(self, *, state: Literal[False]) -> None: ...
    @overload
    def go_forward(self, *, state: bool) -> Optional[Dict[str, Any]]: ...

    def go_forward(self, *, state: bool = True) -> Optional[Dict[str, Any]]:
        """Goes to the next step (on the last step: finishes with ``"completed"``); returns the
        new state (None with ``state=False``).

        StateError, with the reasons, while a required answer is missing."""
        if not state:
            if _fast_forward is None or not _fast_forward(self):
                self._quiet("stepkit_session_go_forward")
            return None
        data = self._invoke("stepkit_session_go_forward", (), True)
        return None if data is None else _object(data, "stepkit_session_go_forward")

    @overload
    def go_backward(self, *, state: Literal[True] = ...) -> Dict[str, Any]: ...
    @overload
    def go_backward(self, *, state: Literal[False]) -> None: ...
    @overload
    def go_backward(self, *, state: bool) -> Optional[Dict[str, Any]]: ...

    def go_backward(self, *, state: bool = True) -> Optional[Dict[str, Any]]:
        """Returns to the previous step; returns the new state (None with ``state=False``).
        StateError on the first step or once finished."""
        if not state:
            if _fast_backward is None or not _fast_backward(self):
                self._quiet("stepkit_session_go_backward")
            return None
        data = self._invoke("stepkit_session_go_backward", (), True)
        return None if data is None else _object(data, "stepkit_session_go_backward")

    def forward(self) -> Dict[str, Any]:
        """Deprecated alias of :meth:`go_forward` (the C and C++ name), kept for one release."""
        warnings.warn("Session.forward() is deprecated; use Session.go_forward()",
                      DeprecationWarning, stacklevel=2)
        return self.go_forward()

    def back(self) -> Dict[str, Any]:
        """Deprecated alias of :meth:`go_backward` (the C and C++ name), kept for one release."""
        warnings.warn("Session.back() is deprecated; use Session.go_backward()",
                      DeprecationWarning, stacklevel=2)
        return self.go_backward()

    @overload
    def skip(self, *, state: Literal[True] = ...) -> Dict[str, Any]: ...
    @overload
    def skip(self, *, state: Literal[False]) -> None: ...
    @overload
    def skip(self, *, state: bool) -> Optional[Dict[str, Any]]: ...

    def skip(self, *, state: bool = True) -> Optional[Dict[str, Any]]:
        """Skips an optional step (its result records null answers) and goes forward; returns
        the new state (None with ``state=False``).

        StateError if the step is not optional or takes no answer."""
        if not state:
            if _fast_skip is None or not _fast_skip(self):
                self._quiet("stepkit_session_skip")
            return None
        data = self._invoke("stepkit_session_skip", (), True)
        return None if data is None else _object(data, "stepkit_session_skip")

    def review_edit(self, step: str) -> Dict[str, Any]:
        """"Edit" on the current review step (``stepkit_session_review_edit``): back to
        ``step``, one the state's ``review`` lists; leaving it leads back to the review over the
        steps still answered, and answers the new path leaves out are dropped (each with an
        ``answerDropped`` event). Returns the new state, with ``returnsToReview``.

        StateError ("notReview", "notReviewed") changing nothing; TypeError for a non-str."""
        return self._call("stepkit_session_review_edit", _c_string(step, "the step identifier"))

    def review_edit_instance(self, step: str, index: int, block: Optional[str] = None) -> Dict[str, Any]:
        """"Edit" on the current review step into instance ``index`` (from 0) of a repeating
        block of ``step`` (``stepkit_session_review_edit_instance``): a repeating section's step
        in that instance (the review's entry with ``"instance"``), or the step with its repeating
        group or question in that instance (an answer's ``"instance"``). ``block`` names the block
        as the review does (the section, or an answer's ``"block"``); ``None``: the step's only
        one. Returns the new state, with ``returnsToReview``.

        InvalidArgumentError ("instanceOutOfRange", "unknownBlock", "blockRequired"), StateError
        ("notReview", "notReviewed", "noRepeatingBlock"), changing nothing; TypeError for a
        non-str step or block or a non-int index."""
        return self._call("stepkit_session_review_edit_instance", _c_string(step, "the step identifier"),
                          _block_name(block), _instance_index(index))

    def set_language(self, language: str) -> Dict[str, Any]:
        """Shows the session in ``language`` (a BCP-47 tag such as ``"fr-CA"``) from now on: the
        task's texts (``fr-CA`` falling back to ``fr``, then to the task's default language) and
        the engine's messages for the participant. Every answer stays; returns the new state.

        InvalidArgumentError for a tag that is not BCP-47 ("invalidLanguage"), changing nothing;
        TypeError for a non-str."""
        return self._call("stepkit_session_set_language", _c_string(language, "the language"))

    def add_instance(self, block: Optional[str] = None) -> Dict[str, Any]:
        """Adds an instance after the last to the current step's repeating block ``block``
        (``None``: its only block) and moves into it; returns the new state, whose
        ``"instances"`` says how many each block has and which one is current.

        In a repeating section (a block of steps, named by the section's identifier) the
        instance is added without moving: going forward from the last instance reaches it.

        A repeating group inside a repeating group is named by its path, ``"medication.doses"``:
        the instance is added to the medication the participant is in (``"medication[1].doses"``
        names it too; StateError "outsideOuterInstance" when it is another). The same paths
        work in :meth:`remove_instance` and :meth:`enter_instance`, with indexes within that
        medication's doses.

        StateError at the block's maxCount ("tooManyInstances") or on a step without one
        ("noRepeatingBlock"); InvalidArgumentError for a block the step does not have
        ("unknownBlock"). Nothing changes when it is refused."""
        return self._call("stepkit_session_add_instance", _block_name(block))

    def remove_instance(self, index: int, block: Optional[str] = None) -> Dict[str, Any]:
        """Removes instance ``index`` (from 0) of the block, with its answers; the instances
        after it move up. StateError below minCount ("tooFewInstances") or below what the
        block's count says ("belowCount"); InvalidArgumentError for an index it does not have
        ("instanceOutOfRange"). In a repeating section the instance's visits go too, and
        removing the one the participant is in goes back to the visit before it. Nothing
        changes when it is refused."""
        return self._call("stepkit_session_remove_instance", _block_name(block), _instance_index(index))

    def enter_instance(self, index: int, block: Optional[str] = None) -> Dict[str, Any]:
        """Moves into instance ``index`` (from 0) of the block (the state's ``"current"``); in
        a repeating section, back to that instance's first step (StateError
        "instanceNotReached" for an instance after the current one).
        InvalidArgumentError for an index it does not have ("instanceOutOfRange")."""
        return self._call("stepkit_session_enter_instance", _block_name(block), _instance_index(index))

    @overload
    def finish(self, reason: str, *, state: Literal[True] = ...) -> Dict[str, Any]: ...
    @overload
    def finish(self, reason: str, *, state: Literal[False]) -> None: ...
    @overload
    def finish(self, reason: str, *, state: bool) -> Optional[Dict[str, Any]]: ...

    def finish(self, reason: str, *, state: bool = True) -> Optional[Dict[str, Any]]:
        """Finishes the task with ``reason``: one of :data:`FINISH_REASONS`. Returns the new
        state (None with ``state=False``).

        InvalidArgumentError for an unknown reason, TypeError for a non-str; StateError when
        already finished, or for ``"completed"`` where going forward would not complete."""
        data = self._invoke("stepkit_session_finish", (_c_string(reason, "the finish reason"),), state)
        return None if data is None else _object(data, "stepkit_session_finish")

    # -- audit trail -------------------------------------------------------------------------

    def audit(self, start: int = 0) -> Dict[str, Any]:
        """The session's audit trail from event ``start`` on (``stepkit_session_audit``):
        ``{"count": n, "enabled": bool, "events": [...]}``, each event ``{"index", "type",
        "date", ...}`` — ``"answerSet"`` / ``"answerCleared"`` with ``"old"`` and ``"new"``,
        the moves with ``"step"`` and ``"to"``, ``"finish"``, ``"suspended"``, ``"resumed"``,
        ``"control"``, ``"restored"``, ``"migrated"`` — with ``"actor"`` and ``"reason"`` when
        the host gave them and ``"digest"``, the chain (docs/audit.md). ``count`` is the whole
        trail's length: to stream it, ask next from ``count``. A refused call records nothing.
        InvalidArgumentError for a negative ``start``; TypeError for a non-int."""
        if isinstance(start, bool) or not isinstance(start, int):
            raise TypeError(f"start must be an int, not {type(start).__name__}")
        if not 0 <= start <= 2147483647:
            raise InvalidArgumentError("start must be from 0 to 2147483647.")
        return self._call("stepkit_session_audit", start)

    def set_audit_context(self, actor: Optional[str] = None, reason: Optional[str] = None) -> None:
        """Names who makes the calls that follow and why (``None``: no one, no reason), given to
        every audit event recorded until the next call; not saved with the session (the option
        ``"audit": {"actor", "reason"}`` of :meth:`Task.open` sets the first). Each text is at
        most 4096 bytes (InvalidArgumentError)."""
        a = None if actor is None else _c_string(actor, "the actor")
        r = None if reason is None else _c_string(reason, "the reason")
        with self._owning() as handle:
            cdll = self._lib
            status = cdll.stepkit_session_set_audit_context(handle, a, r)
            if status != 0:
                _raise_last_error(cdll, status)

    # -- time --------------------------------------------------------------------------------

    def set_clock(self, fn: Optional[ClockFunction]) -> None:
        """Replaces the session's clock with ``fn() -> int`` (milliseconds since the epoch),
        e.g. a :class:`stepkit.ManualClock`; ``None`` restores the system clock.

        Set on an opened session before anything has happened (an answer, a move, an active
        step operation, a sample, a tick that fired something), the clock also sets the run's
        start time; set first thing after a restore, it takes the restore over (a running step
        goes on from its saved elapsed time); otherwise the run carries on on the new clock.
        Afterwards the session's time never goes back before the run's latest date: a
        clock earlier than that reads as that date until it catches up. Any int64 time is accepted (see ``stepkit_session_set_clock`` in stepkit.h).
        ``fn`` runs inside library calls on the calling thread and must not call into this
        session. If it raises or returns something that is not an int, the library is given
        the last good time (or the system time) and the exception is raised by the session
        method that consulted the clock, once that call has completed."""
        if fn is not None and not callable(fn):
            raise TypeError(f"a clock must be callable or None, not {type(fn).__name__}")
        clock = _Clock(fn) if fn is not None else None
        with self._owning() as handle:
            cdll = self._lib
            status = cdll.stepkit_session_set_clock(
                handle, clock.cfunc if clock is not None else _NULL_CLOCK, None
            )
            if status != 0:
                _raise_last_error(cdll, status)
            self._clock = clock  # keep the CFUNCTYPE alive while the library may call it
            if clock is not None and clock.error is not None:
                error, clock.error = clock.error, None
                raise error

    # -- active steps, time, recorders and events ---------------------------------------------

    @overload
    def control(self, op: str, *, state: Literal[True] = ...) -> Dict[str, Any]: ...
    @overload
    def control(self, op: str, *, state: Literal[False]) -> None: ...
    @overload
    def control(self, op: str, *, state: bool) -> Optional[Dict[str, Any]]: ...

    def control(self, op: str, *, state: bool = True) -> Optional[Dict[str, Any]]:
        """Controls the current active step (``"start"``, ``"suspend"``, ``"resume"``,
        ``"finish"``) or on the task (``"suspendTask"``, ``"resumeTask"``): one of
        :data:`ACTIVE_OPS`. Returns the new state, with the events of the call in ``"events"``.

        InvalidArgumentError for an unknown op; StateError when it does not apply now (the step
        is not active, already finished, the task is suspended or finished). The methods below
        name each op. With ``state=False``, returns None (the events still reach
        :meth:`on_event`'s callback)."""
        data = self._invoke("stepkit_session_control", (_c_string(op, "the active-step operation"),), state)
        return None if data is None else _object(data, "stepkit_session_control")

    def active(self, op: str) -> Dict[str, Any]:
        """Deprecated alias of :meth:`control` (``stepkit_session_control``), kept for one
        release."""
        warnings.warn("Session.active(op) is deprecated; use Session.control(op)",
                      DeprecationWarning, stacklevel=2)
        return self.control(op)

    def start(self) -> Dict[str, Any]:
        """Starts the current active step (one that does not start by itself): its timer runs,
        its recorders start (``recorderStarted`` events) and its start prompts play."""
        return self.control("start")

    def suspend(self) -> Dict[str, Any]:
        """Suspends the running active step: its time stops counting until :meth:`resume`."""
        return self.control("suspend")

    def resume(self) -> Dict[str, Any]:
        """Resumes the suspended active step (not while the task is suspended)."""
        return self.control("resume")

    def finish_active(self) -> Dict[str, Any]:
        """Finishes the current active step now (the host's "finish"; a ``wait`` step ends only
        this way or by going forward): its recorders stop, its finish prompts play, and the
        task moves on if the step continues on finish. Not :meth:`finish`, which ends the
        task."""
        return self.control("finish")

    def suspend_task(self) -> Dict[str, Any]:
        """ResearchKit's task-level suspend: the active step is suspended with the task, and
        nothing starts or comes due until :meth:`resume_task`."""
        return self.control("suspendTask")

    def resume_task(self) -> Dict[str, Any]:
        """Resumes a task suspended with :meth:`suspend_task` (and its active step)."""
        return self.control("resumeTask")

    @overload
    def tick(self, *, state: Literal[True] = ...) -> Dict[str, Any]: ...
    @overload
    def tick(self, *, state: Literal[False]) -> None: ...
    @overload
    def tick(self, *, state: bool) -> Optional[Dict[str, Any]]: ...

    def tick(self, *, state: bool = True) -> Optional[Dict[str, Any]]:
        """Processes everything due at the clock's current time (spoken countdowns, the halfway
        prompt, the end of the step, moving on, the next step's automatic start), each event
        dated when it came due. Returns the new state: its ``"events"`` and ``"nextDeadline"``
        (ISO 8601, or None), when to call again. Harmless when nothing is due. With a
        :class:`~stepkit.ManualClock`, advance the clock and tick; with the system clock, a
        :class:`~stepkit.RealTimeDriver` can tick on a timer thread. With ``state=False``,
        returns None (the events still reach :meth:`on_event`'s callback)."""
        data = self._invoke("stepkit_session_tick", (), state)
        return None if data is None else _object(data, "stepkit_session_tick")

    @overload
    def record(self, recorder_id: str, samples: Union[Mapping[str, Any], Sequence[Mapping[str, Any]]], *,
               state: Literal[True] = ...) -> Dict[str, Any]: ...
    @overload
    def record(self, recorder_id: str, samples: Union[Mapping[str, Any], Sequence[Mapping[str, Any]]], *,
               state: Literal[False]) -> None: ...
    @overload
    def record(self, recorder_id: str, samples: Union[Mapping[str, Any], Sequence[Mapping[str, Any]]], *,
               state: bool) -> Optional[Dict[str, Any]]: ...

    def record(
        self, recorder_id: str, samples: Union[Mapping[str, Any], Sequence[Mapping[str, Any]]],
        *, state: bool = True,
    ) -> Optional[Dict[str, Any]]:
        """Hands samples (a dict, or a list of dicts) to the running recorder ``recorder_id``
        (a ``recorderStarted`` event announced it). They are written under the session option
        ``outputDirectory`` as ``{"items": [...]}`` files that appear as file results (names
        as in stepkit.h: identifiers percent-encoded, so a name is always one file in that
        directory; links planted there are never followed). Returns the new state (None with
        ``state=False``).

        A write failure does not raise: the recorder fails (a ``recorderFailed`` event with
        ``samplesLost``) and the task finishes with reason ``"failed"`` unless the session
        option ``continueOnRecorderFailure`` is true. StateError when that recorder is not
        running; TypeError for samples that are not dicts; InvalidArgumentError for samples
        JSON cannot represent (NaN...) or past the session's sample limits; StepKitIOError
        when the session autosaves and the autosave failed (the files are then as they were)."""
        samples_data = _samples_bytes(samples)
        data = self._invoke("stepkit_session_record", (_c_string(recorder_id, "the recorder identifier"), samples_data), state)
        return None if data is None else _object(data, "stepkit_session_record")

    def input(self, event: Mapping[str, Any]) -> Dict[str, Any]:
        """Hands the running game of the current step one input (``stepkit_session_input``,
        docs/active-tasks.md): ``{"type": "tap", "target": 3}``, ``{"type": "key", "key":
        "red"}``, ``{"type": "drag", "from": 0, "to": 2}``, ``{"type": "sample", "x", "y",
        "z"}`` or ``{"type": "touch", "x", "y"}`` (optional ``"duration"``, ``"rotation"``), with an optional ``"time"`` (milliseconds since the epoch on the session's
        clock; its time when left out). Returns the new state; ``state["active"]["game"]`` is
        what to draw or play next. AnswerError when the game does not take the input now (its
        ``code`` says why: ``sequencePlaying``, ``illegalMove`` ...), StateError when the
        current step is not a running game, InvalidArgumentError for an input of the wrong
        shape or time; nothing changes on any of them."""
        if not isinstance(event, Mapping):
            raise TypeError(f"the input must be a dict, not {type(event).__name__}")
        return self._call("stepkit_session_input", _json_bytes(dict(event), "the input"))

    def on_event(self, callback: Optional[EventCallback]) -> None:
        """Sets (or, with None, removes) the callback that receives every event as a dict
        (``{"type", "date", ...}``, see stepkit.h): the same events, in the same order, as the
        ``"events"`` of the state each call returns. Replacing the callback releases the old
        one.

        Delivery: the library hands each event to the binding, which queues it (no Python code
        runs inside the library call); once the call has returned and the session's lock is
        released, before the method returns, the callback gets the queued events on that
        thread, oldest first, each exactly once. So the callback may call back into this
        session (e.g. ``record`` or ``tick``): such a call queues its events after the ones
        still queued and returns, and the delivery under way hands them out next. Another thread
        may use the session between the call and the delivery (its delivery then shares the
        queue: each event still goes to the callback once).

        An Exception raised by the callback does not reach C: the remaining events are still
        delivered, then the first exception is raised by the session method that produced the
        events (whose change to the session has happened: read :attr:`state`). A
        KeyboardInterrupt (Ctrl-C, also when its signal arrives during the library call or the
        delivery) or another BaseException stops the delivery and is raised by that method at
        once, after the call: the events not yet delivered stay queued, and the next call on
        the session, or :meth:`deliver_events`, delivers them first. An event counts as
        delivered once the callback has been called with it, even if it then raised. A callback
        replaced during a delivery gets no further events (the new one gets the rest); removing
        the callback drops the queued events (they are also in the returned states' "events")."""
        if callback is not None and not callable(callback):
            raise TypeError(f"an event callback must be callable or None, not {type(callback).__name__}")
        sink = _Events(callback) if callback is not None else None
        with self._owning() as handle:
            cdll = self._lib
            status = cdll.stepkit_session_set_event_callback(
                handle, sink.cfunc if sink is not None else _NULL_EVENT_FN, None, _NULL_FREE_FN
            )
            if status != 0:
                _raise_last_error(cdll, status)
            # Keep the CFUNCTYPE alive while the library may call it; the old one is released
            # here, after the library stopped using it.
            self._events = sink

    def __repr__(self) -> str:
        if self._handle is None:
            return "<stepkit.Session (closed)>"
        return f"<stepkit.Session of {self._task!r}>"
