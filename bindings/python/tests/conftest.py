"""Test setup: the real libstepkit.so, found the way the package finds it (STEPKIT_LIBRARY first).

If the library cannot be loaded, every test FAILS (nothing is skipped) with the loader's message.
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional

import pytest

HERE = Path(__file__).resolve().parent
SRC = HERE.parent / "src"
REPO = HERE.parent.parent.parent
EXAMPLES = REPO / "examples" / "tasks"

# Tests run against this checkout's package (PYTHONPATH=bindings/python/src works too).
if str(SRC) not in sys.path:
    sys.path.insert(0, str(SRC))

import stepkit  # noqa: E402

START_MS = 1767225600000  # 2026-01-01T00:00:00.000Z
START_ISO = "2026-01-01T00:00:00.000Z"
RUN_UUID = "9f1c7a52-3b8e-4d2a-a1f0-6c2d4e8b9a10"

_LOAD_ERROR: Optional[str] = None
try:
    stepkit.load_library()
except stepkit.LibraryNotFoundError as exc:  # reported by the autouse fixture below
    _LOAD_ERROR = str(exc)


@pytest.fixture(autouse=True, scope="session")
def _library() -> str:
    if _LOAD_ERROR is not None:
        pytest.fail(
            "libstepkit.so could not be loaded, so the StepKit Python tests cannot run.\n"
            f"Set {stepkit.LIBRARY_ENV_VAR}=/path/to/libstepkit.so "
            "(e.g. STEPKIT_LIBRARY=/tmp/stepkit-dev/libstepkit.so).\n" + _LOAD_ERROR,
            pytrace=False,
        )
    return stepkit.library_path()


SMALL_TASK: Dict[str, Any] = {
    "identifier": "small",
    "steps": [
        {"type": "instruction", "identifier": "intro", "title": "Hello", "text": "A small task."},
        {
            "type": "question",
            "identifier": "likes",
            "title": "Do you like it?",
            "answerFormat": {"type": "boolean"},
        },
        {
            "type": "question",
            "identifier": "age",
            "title": "Age",
            "answerFormat": {
                "type": "numeric",
                "style": "integer",
                "minimum": 18,
                "maximum": 90,
                "unit": "years",
            },
        },
        {
            "type": "question",
            "identifier": "color",
            "title": "Favourite colour",
            "optional": True,
            "answerFormat": {
                "type": "textChoice",
                "style": "singleChoice",
                "textChoices": [
                    {"text": "Red", "value": "red"},
                    {"text": "Blue", "value": "blue"},
                ],
            },
        },
        {
            "type": "form",
            "identifier": "about",
            "title": "About you",
            "formItems": [
                {"identifier": "name", "text": "Name", "answerFormat": {"type": "text", "maximumLength": 20}},
                {"sectionTitle": "Optional"},
                {"identifier": "email", "text": "Email", "optional": True, "answerFormat": {"type": "email"}},
            ],
        },
        {"type": "completion", "identifier": "done", "title": "Thanks"},
    ],
}

# A follow-up whose skip rules read another task's result ("baseline": "smoker", and "about"'s
# "age") given in additionalTaskResults: the branching tests walk it, the forged-data tests forge
# the result it was given.
FOLLOWUP_TASK = {
    "identifier": "followup",
    "steps": [
        {"type": "instruction", "identifier": "a"},
        {"type": "instruction", "identifier": "smokingQuestions"},
        {"type": "instruction", "identifier": "seniorQuestions"},
        {"type": "instruction", "identifier": "end"},
    ],
    "skipRules": {
        "smokingQuestions": {"not": {"result": {"task": "baseline", "step": "smoker"}, "equals": True}},
        "seniorQuestions": {"not": {"result": {"task": "baseline", "step": "about", "item": "age"}, "minimum": 65}},
    },
}

SMALL_STEP_IDS: List[str] = [s["identifier"] for s in SMALL_TASK["steps"]]


@pytest.fixture
def small_definition() -> Dict[str, Any]:
    return copy.deepcopy(SMALL_TASK)


@pytest.fixture
def task() -> Any:
    with stepkit.Task.from_json(SMALL_TASK) as compiled:
        yield compiled


@pytest.fixture
def clock() -> stepkit.ManualClock:
    return stepkit.ManualClock(START_MS)


@pytest.fixture
def session(task: stepkit.Task, clock: stepkit.ManualClock) -> Any:
    with task.open({"taskRunUUID": RUN_UUID}) as opened:
        opened.set_clock(clock)
        yield opened


def walk_to(session: "stepkit.Session", identifier: str) -> Dict[str, Any]:
    """Answers the small task's steps with valid answers until `identifier` is current."""
    answers = {"likes": True, "age": 42, "color": ["blue"], "about": {"name": "Ann"}}
    state = session.state
    for _ in range(20):
        step = state["step"]
        if step["identifier"] == identifier:
            return state
        if step["identifier"] in answers:
            session.set_answer(answers[step["identifier"]])
        state = session.forward()
    raise AssertionError(f"never reached {identifier}")


def unchanged(session: "stepkit.Session", error: type, code: str, call: Callable[[], Any]) -> None:
    """`call` raises `error` whose first problem has `code`; the state and the saved data are
    what they were before it."""
    state, saved = session.state, session.save()
    with pytest.raises(error) as refused:
        call()
    assert refused.value.errors[0]["code"] == code
    assert session.state == state
    assert session.save() == saved


# ------------------------------------------------------------------------------------------------
# CLI helpers


def cli_env() -> Dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(SRC)] + [p for p in [env.get("PYTHONPATH")] if p])
    env[stepkit.LIBRARY_ENV_VAR] = stepkit.library_path()
    env["PYTHONIOENCODING"] = "utf-8"
    return env


def run_cli(
    *args: str,
    stdin: Any = subprocess.DEVNULL,
    input: Optional[str] = None,
    cwd: Optional[Path] = None,
    timeout: float = 60,
) -> subprocess.CompletedProcess:
    kwargs: Dict[str, Any] = {}
    if input is not None:
        kwargs["input"] = input
    else:
        kwargs["stdin"] = stdin
    return subprocess.run(
        [sys.executable, "-m", "stepkit", *args],
        capture_output=True,
        text=True,
        encoding="utf-8",
        env=cli_env(),
        cwd=str(cwd or REPO),
        timeout=timeout,
        **kwargs,
    )


def example(name: str) -> Path:
    path = EXAMPLES / f"{name}.json"
    if not path.exists():
        pytest.skip(f"example task {path} is not there yet")
    return path


def write_json(path: Path, value: Any) -> Path:
    """Writes `value` as JSON to `path` (a task or answers file for the CLI); returns the path."""
    path.write_text(json.dumps(value), encoding="utf-8")
    return path


def load_json(path: Path) -> Any:
    with open(path, encoding="utf-8") as handle:
        return json.load(handle)


#: A question that loops back to itself while it is answered True: one step result per visit.
LOOP = {
    "identifier": "loop",
    "steps": [
        {"type": "question", "identifier": "again", "title": "Again?", "answerFormat": {"type": "boolean"}},
        {"type": "completion", "identifier": "done"},
    ],
    "navigationRules": {
        "again": {
            "type": "predicate",
            "branches": [{"when": {"result": "again", "equals": True}, "destination": "again"}],
        }
    },
}


#: Every example task (not its answers file).
EXAMPLE_TASKS = sorted(p for p in EXAMPLES.glob("*.json") if not p.name.endswith(".answers.json"))


def step_id(state: Dict[str, Any]) -> Optional[str]:
    """The current step's identifier in a state (None once finished)."""
    return state["step"]["identifier"] if state["step"] else None


def effective_format(answer_format: Dict[str, Any]) -> Dict[str, Any]:
    """The answer format as a session's state gives it (the engine's defaults filled in)."""
    definition = {"identifier": "f", "steps": [{"type": "question", "identifier": "q", "answerFormat": answer_format}]}
    with stepkit.Task.from_json(definition) as compiled, compiled.open() as opened:
        return opened.state["step"]["answerFormat"]


def step_ids(result: Dict[str, Any]) -> List[str]:
    """The identifiers of a task result's top-level step results, in order."""
    return [r["identifier"] for r in result["results"]]


def autosaved(task: "stepkit.Task", path: Path, now_ms: Optional[int] = None) -> str:
    """What the autosave file at `path` restores to, as `save()` writes it. The file is a
    snapshot followed by a journal of changes (include/stepkit.h, "Autosave"), so it equals
    `save()` only right after a snapshot; what it must always give back is the session.
    `now_ms` sets the restored session's clock (for a running active step)."""
    with task.restore(path.read_text(encoding="utf-8")) as back:
        if now_ms is not None:
            back.set_clock(stepkit.ManualClock(now_ms))
        return back.save()
