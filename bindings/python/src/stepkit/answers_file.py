"""Walking a task with an answers file: ``python -m stepkit run TASK.json --answers FILE``.

An answers file is a JSON object ``{"stepIdentifier": answer, ...}`` (a form's answer being
``{"item": answer}``); a task's own is ``TASK.answers.json`` next to ``TASK.json``. The steps of a
repeating section are answered per instance, under the section's identifier:
``{"person": [{"name": "Maria", "age": 41}, {"name": "Jon", "age": 43}]}``, one object per
instance in order; a list longer than the section's instances adds the ones it lacks
(``Session.add_instance``) while the last is walked. A game step's
entry (spatial span, PSAT, Stroop, tower of Hanoi) is the list of lines the participant types,
as the terminal presenter takes them (``["5 2 7", "4 1 8 3"]``): played on the run's manual
clock, so with ``--seed`` the same file gives the same result every time. This is the
one walk of the Python side (the C example, ``bindings/c/examples/run_task.c``, is the C one).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
from typing import Any, Callable, Dict, List, Optional, TextIO, Tuple

from ._core import Session
from .active_presenter import ActiveRunner
from .clock import ManualClock
from .game_presenter import GamePresenter, Timeline, is_game
from .errors import AnswerError, ParseError, StateError
from .rendering import can_skip, is_active, problems_text, render_answer, step_title

__all__ = ["AnswersError", "default_answers_path", "load_answers", "walk_with_answers"]


class AnswersError(Exception):
    """The answers file cannot be used: ``unreadable`` (the file cannot be read), else it is not
    a JSON object, or the walk stopped (a refused answer, a required step without one, a step
    that cannot be left)."""

    def __init__(self, message: str, *, unreadable: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.unreadable = unreadable


def default_answers_path(task_path: str) -> str:
    """``examples/tasks/daily-checkin.json`` -> ``examples/tasks/daily-checkin.answers.json``."""
    root, ext = os.path.splitext(task_path)
    if ext.lower() == ".json":
        return root + ".answers.json"
    return task_path + ".answers.json"


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _refuse_duplicate_keys(pairs: List[Tuple[str, Any]]) -> Dict[str, Any]:
    result: Dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise ValueError(f"duplicate key {key!r}")
        result[key] = value
    return result


def load_answers(path: str) -> Dict[str, Any]:
    """The answers in a file. AnswersError if it cannot be read or is not a JSON object
    (NaN, infinities and duplicate keys are not JSON)."""
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError as exc:
        raise AnswersError(f"Cannot read the answers file {path}: {exc.strerror or exc}", unreadable=True)
    try:
        answers = json.loads(
            data.decode("utf-8"),
            parse_constant=_refuse_constant,
            object_pairs_hook=_refuse_duplicate_keys,
        )
    except (UnicodeDecodeError, ValueError) as exc:
        raise AnswersError(f"The answers file {path} is not valid JSON: {exc}")
    if not isinstance(answers, dict):
        raise AnswersError(
            f"The answers file {path} must hold a JSON object "
            '{"stepIdentifier": answer, ...}, not ' + type(answers).__name__ + "."
        )
    return answers


def walk_with_answers(
    session: Session,
    answers: Dict[str, Any],
    out: TextIO,
    *,
    quiet: bool = False,
    max_steps: int = 10000,
    runner: Optional[ActiveRunner] = None,
    on_move: Optional[Callable[[Dict[str, Any]], Any]] = None,
) -> Dict[str, Any]:
    """Walks a session with ``answers``: instruction and completion steps go forward, a step in
    ``answers`` gets its answer and goes forward, an optional step not in it is skipped, and an
    active step is run to its end by ``runner`` (an :class:`ActiveRunner` attached to the
    session; without one, a non-interactive runner is attached when the first active step comes).
    ``on_move(state)`` is called with the state after each step is left.

    Returns the final state. Raises :class:`AnswersError` for a refused answer, a required
    step without an answer, or a step that cannot be left."""

    def say(text: str) -> None:
        if not quiet:
            print(text, file=out)

    with contextlib.ExitStack() as stack:
        state = session.state
        for _ in range(max_steps):
            if state.get("status") != "inProgress":
                return state
            step = state.get("step") or {}
            if is_active(step):
                if runner is None:
                    runner = stack.enter_context(ActiveRunner(quiet=quiet, out=out).attach(session))
                typed = answers.get(str(step.get("identifier")))
                if is_game(state) and isinstance(typed, list) and runner.clock is not None:
                    state = _play(session, state, typed, out if not quiet else io.StringIO(), runner.clock)
                else:
                    state = runner.run_step()
            else:
                state = _leave(session, state, answers, say)
            if on_move is not None:
                on_move(state)
    raise AnswersError(f"The task did not end after {max_steps} steps (a navigation loop?).")


def _play(session: Session, state: Dict[str, Any], typed: List[Any], out: TextIO, clock: ManualClock) -> Dict[str, Any]:
    """Plays a game step with its answers-file entry: the lines typed, in order, as the terminal
    presenter takes them (:mod:`stepkit.game_presenter`), on the run's manual clock; when they
    run out, the game is finished as it stands."""
    lines = iter([str(line) for line in typed] + [":finish"])
    return GamePresenter(session, out, lambda prompt: next(lines, ":finish"), Timeline(clock)).run(state)


def _leave(session: Session, state: Dict[str, Any], answers: Dict[str, Any], say: Callable[[str], None]) -> Dict[str, Any]:
    """Answers, skips or passes the current (not active) step; returns the new state."""
    step = state.get("step") or {}
    identifier = str(step.get("identifier", "?"))
    # A form is whatever has form items (a consent review is one); a step the host reports
    # takes its entry as the report (``{"typedName": ...}``, ``{"viewed": true}``, ...).
    kind = "form" if "formItems" in step else step.get("type")
    reported = step.get("reportedByHost") is True
    title = step_title(step)
    if kind not in ("question", "form") and not reported:
        say(title)
        return _forward(session, identifier)
    found, answer = _answer_for(session, state, answers, identifier)
    if not found:
        if not can_skip(state):
            raise AnswersError(
                f"The answers file has no answer for the required step '{identifier}' ({title})."
            )
        state = session.skip()
        say(f"{title}: (skipped)")
        return state
    if reported:
        return _report(session, identifier, title, answer, say)
    try:
        session.set_answer(answer)
    except (AnswerError, StateError, ParseError, ValueError, TypeError) as exc:
        path = getattr(exc, "path", "")
        where = f", item '{path}'" if path and kind in ("form", "page") else ""
        raise AnswersError(
            f"The answer for step '{identifier}'{where} was refused: {getattr(exc, 'message', exc)}"
        )
    if kind in ("form", "page"):
        say(f"{title}:")
        items = {i.get("identifier"): i for i in step.get("formItems", []) if isinstance(i, dict)}
        if isinstance(answer, dict):
            for key, value in answer.items():
                item = items.get(key) or {}
                label = item.get("text") or key
                say(f"  {label}: {render_answer(item.get('answerFormat'), value)}")
    else:
        say(f"{title}: {render_answer(step.get('answerFormat'), answer)}")
    return _forward(session, identifier)


def _section_of(state: Dict[str, Any], identifier: str) -> Tuple[Optional[str], Dict[str, Any]]:
    """The repeating section the current step is in (the state's ``instances`` entry listing
    it among its ``steps``), or ``(None, {})``."""
    for name, entry in (state.get("instances") or {}).items():
        if isinstance(entry, dict) and identifier in (entry.get("steps") or []):
            return name, entry
    return None, {}


def _answer_for(session: Session, state: Dict[str, Any], answers: Dict[str, Any], identifier: str) -> Tuple[bool, Any]:
    """``(found, answer)`` for the current step: its entry, or in a repeating section listed per
    instance, the entry of the instance the participant is in. In the section's last instance,
    while the list holds more, an instance is added so that going forward walks it too."""
    name, section = _section_of(state, identifier)
    listed = answers.get(name) if name is not None else None
    if not isinstance(listed, list):
        return identifier in answers, answers.get(identifier)
    current, count = section.get("current", 0), section.get("count", 0)
    if current == count - 1 and len(listed) > count:
        try:
            session.add_instance(name)
        except (StateError, ValueError) as exc:
            raise AnswersError(f"Cannot add an instance of '{name}': {getattr(exc, 'message', exc)}")
    entry = listed[current] if 0 <= current < len(listed) and isinstance(listed[current], dict) else {}
    return identifier in entry, entry.get(identifier)


def _report(session: Session, identifier: str, title: str, report: Any, say: Callable[[str], None]) -> Dict[str, Any]:
    """Reports the entry of a step the host reports, then goes forward."""
    if not isinstance(report, dict):
        raise AnswersError(f"The entry for step '{identifier}' is a report: a JSON object such as {{\"typedName\": \"...\"}}.")
    try:
        session.report(identifier, **report)
    except (AnswerError, StateError, ParseError, ValueError, TypeError) as exc:
        raise AnswersError(f"The report for step '{identifier}' was refused: {getattr(exc, 'message', exc)}")
    say(f"{title}: {describe_report(report)}")
    return _forward(session, identifier)


def describe_report(report: Dict[str, Any]) -> str:
    """A report in words: a signature by how it was given, anything else as its JSON."""
    if "typedName" in report:
        return f"signed as {report['typedName']}"
    if "image" in report:
        return "image captured"
    if "path" in report:
        return "signature drawn"
    return json.dumps(report, sort_keys=True)


def _forward(session: Session, identifier: str) -> Dict[str, Any]:
    try:
        return session.go_forward()
    except StateError as exc:
        raise AnswersError(f"Cannot leave step '{identifier}': {problems_text(exc)}")
