"""StepKit: a headless ResearchKit-style research-task engine (Python binding of libstepkit.so).

>>> import stepkit
>>> task = stepkit.Task.from_json({"identifier": "t", "steps": [
...     {"type": "question", "identifier": "q", "answerFormat": {"type": "boolean"}}]})
>>> with task.open() as session:
...     session.set_answer(True)["answer"]
...     session.go_forward()["finishReason"]
True
'completed'

A session can be saved at any moment and restored to the identical state:

>>> with task.open() as session:
...     _ = session.set_answer(False)
...     saved = session.save()
>>> with task.restore(saved) as restored:
...     restored.state["answer"]
False

The library is found through the environment variable ``STEPKIT_LIBRARY`` (a path), then a
``libstepkit.so`` in this package's directory, then the system's dynamic loader; it is loaded on
first use, and :class:`LibraryNotFoundError` (an OSError) says where it looked if it is missing.
"""

from ._core import ACTIVE_OPS, FINISH_REASONS, JSON_PARSER, Session, Task, message_catalogue, version, version_number
from ._core import SPEEDUPS
from ._ffi import ENV_VAR as LIBRARY_ENV_VAR
from ._ffi import library_path, load_library
from .clock import ManualClock, iso8601_ms, parse_iso8601_ms
from .realtime import RealTimeDriver
from . import errors
from .errors import (  # "X as X": re-exported, for type checkers too
    AnswerError as AnswerError,
    DefinitionError as DefinitionError,
    InternalError as InternalError,
    InvalidArgumentError as InvalidArgumentError,
    LibraryNotFoundError as LibraryNotFoundError,
    ParseError as ParseError,
    RestorationError as RestorationError,
    StateError as StateError,
    StepKitError as StepKitError,
    StepKitIOError as StepKitIOError,
)


def _source_version() -> str:
    """The repository's VERSION, for a package used from a checkout (PYTHONPATH=.../src)."""
    import os

    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), *[os.pardir] * 4, "VERSION")
    try:
        with open(path, encoding="utf-8") as file:
            return file.readline().strip() or "0+unknown"
    except OSError:
        return "0+unknown"


try:  # written into the package when a wheel is built (pyproject.toml: from VERSION)
    from ._version import __version__
except ImportError:
    __version__ = _source_version()

__all__ = [
    "Task",
    "Session",
    "ManualClock",
    "RealTimeDriver",
    "FINISH_REASONS",
    "ACTIVE_OPS",
    "JSON_PARSER",
    "SPEEDUPS",
    "version",
    "version_number",
    "message_catalogue",
    "load_library",
    "library_path",
    "LIBRARY_ENV_VAR",
    "iso8601_ms",
    "parse_iso8601_ms",
    "__version__",
]
__all__ += errors.__all__  # the exception classes
