"""The StepKit terminal presenter: ``python -m stepkit run TASK.json``.

Subcommands:

``run TASK.json [--answers FILE] [--output FILE] [--output-dir DIR] [--quiet] [--task-run-uuid UUID] [--interactive]``
    Runs a task. On a terminal it asks each step's questions; with ``--answers FILE`` (a JSON
    object ``{"stepIdentifier": answer, ...}``, a form's answer being ``{"item": answer}``) it
    walks the task with those answers. When stdin is not a terminal and no ``--answers`` is
    given, it uses the answers file bundled with the task: ``TASK.answers.json`` next to
    ``TASK.json``. At the end it prints the task result as JSON (and writes it to ``--output``).
    Active, countdown and wait steps are run by :mod:`stepkit.active_presenter` (simulated
    recorder samples, written under ``--output-dir`` or a temporary directory).

``check TASK.json [--strict] [--json]``
    Compiles a task, lists every problem of its definition, and runs the static checker
    (:mod:`stepkit.checker`, docs/checker.md): findings with path and severity.

``graph TASK.json [-o FILE.svg|png|pdf|dot]``
    Draws the navigation graph through Graphviz (:mod:`stepkit.graph`); DOT on stdout without -o.

Exit codes: 0 the task completed (``check``: no errors; ``graph``: drawn); 1 the task did not
complete (an answer was refused, a required step has no answer, the participant quit) or the
answers file is invalid (``check``: the definition has problems or the checker found errors, or
with ``--strict`` warnings); 2 usage or file problems (a file cannot be read or written, the task
is not valid, the library cannot be loaded, Graphviz is missing).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from typing import Any, Callable, Dict, List, Optional, Sequence, TextIO, Tuple

from . import __version__, active_presenter, checker, graph
from ._core import Session, Task, version
from .errors import (
    AnswerError,
    LibraryNotFoundError,
    ParseError,
    StateError,
    StepKitError,
)

__all__ = ["main", "build_parser", "default_answers_path", "walk_with_answers", "Presenter"]

EXIT_COMPLETED = 0
EXIT_FAILED = 1
EXIT_USAGE = 2


class _Exit(Exception):
    """Ends the command with an exit code (and a message for stderr)."""

    def __init__(self, code: int, message: str = "") -> None:
        super().__init__(message)
        self.code = code
        self.message = message


# ------------------------------------------------------------------------------------------------
# Small helpers


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def step_title(step: Dict[str, Any]) -> str:
    """What to call a step: its title, else its question, else its identifier."""
    for key in ("title", "question", "text"):
        value = step.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return str(step.get("identifier", "?"))


def default_answers_path(task_path: str) -> str:
    """``examples/tasks/daily-checkin.json`` -> ``examples/tasks/daily-checkin.answers.json``."""
    root, ext = os.path.splitext(task_path)
    if ext.lower() == ".json":
        return root + ".answers.json"
    return task_path + ".answers.json"


def _choices(fmt: Dict[str, Any]) -> List[Dict[str, Any]]:
    for key in ("textChoices", "imageChoices"):
        value = fmt.get(key)
        if isinstance(value, list):
            return [c for c in value if isinstance(c, dict)]
    return []


def _choice_label(fmt: Dict[str, Any], value: Any) -> str:
    if isinstance(value, dict) and "value" in value:
        label = _choice_label(fmt, value["value"])
        typed = value.get("text")
        return f"{label} ({typed})" if typed else label
    for choice in _choices(fmt):
        if choice.get("value") == value and type(choice.get("value")) is type(value):
            return str(choice.get("text", value))
    return _dumps(value)


_IMPLIED_UNITS = {"height": "cm", "weight": "kg", "age": "years", "timeInterval": "s"}


def render_answer(fmt: Optional[Dict[str, Any]], answer: Any) -> str:
    """An answer as a participant would read it (choice values shown by their text)."""
    if answer is None:
        return "(no answer)"
    if isinstance(answer, dict) and answer.get("dontKnow") is True:
        label = fmt.get("customDontKnowButtonText") if fmt else None
        return label if isinstance(label, str) else "I don't know"
    if not fmt:
        return _dumps(answer)
    kind = fmt.get("type")
    if kind == "boolean" and isinstance(answer, bool):
        if answer:
            return str(fmt.get("yesString") or "Yes")
        return str(fmt.get("noString") or "No")
    if kind == "multipleValuePicker" and isinstance(answer, list):
        pickers = fmt.get("valuePickers") or []
        parts = [
            _choice_label(pickers[i], v) if i < len(pickers) and isinstance(pickers[i], dict) else _dumps(v)
            for i, v in enumerate(answer)
        ]
        separator = fmt.get("separator")
        return (separator if isinstance(separator, str) else " ").join(parts)
    if _choices(fmt) and isinstance(answer, list):
        return ", ".join(_choice_label(fmt, v) for v in answer) or "(none)"
    if isinstance(answer, str):
        return answer
    text = _dumps(answer)
    unit = fmt.get("unit") or _IMPLIED_UNITS.get(str(kind))
    if isinstance(unit, str) and unit and isinstance(answer, (int, float)):
        text = f"{text} {unit}"
    return text


# ------------------------------------------------------------------------------------------------
# Non-interactive: walking a task with an answers file


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
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError as exc:
        raise _Exit(EXIT_USAGE, f"Cannot read the answers file {path}: {exc.strerror or exc}")
    try:
        answers = json.loads(
            data.decode("utf-8"),
            parse_constant=_refuse_constant,
            object_pairs_hook=_refuse_duplicate_keys,
        )
    except (UnicodeDecodeError, ValueError) as exc:
        raise _Exit(EXIT_FAILED, f"The answers file {path} is not valid JSON: {exc}")
    if not isinstance(answers, dict):
        raise _Exit(
            EXIT_FAILED,
            f"The answers file {path} must hold a JSON object "
            '{"stepIdentifier": answer, ...}, not ' + type(answers).__name__ + ".",
        )
    return answers


def walk_with_answers(
    session: Session,
    answers: Dict[str, Any],
    out: TextIO,
    *,
    quiet: bool = False,
    max_steps: int = 10000,
) -> Dict[str, Any]:
    """Walks a session with ``answers``: instruction and completion steps go forward, a step in
    ``answers`` gets its answer and goes forward, an optional step not in it is skipped.

    Returns the final state. Raises :class:`_Exit` (code 1) for a refused answer, a required
    step without an answer, or a step that cannot be left."""

    def say(text: str) -> None:
        if not quiet:
            print(text, file=out)

    for _ in range(max_steps):
        state = session.state
        if state.get("status") != "inProgress":
            return state
        step = state.get("step") or {}
        identifier = str(step.get("identifier", "?"))
        kind = step.get("type")
        title = step_title(step)
        if active_presenter.is_active_step(step):  # active, countdown, wait: active_presenter.py
            active_presenter.run_step(session, out, quiet=quiet)
            continue
        if kind in ("question", "form"):
            if identifier in answers:
                answer = answers[identifier]
                try:
                    session.set_answer(answer)
                except (AnswerError, StateError, ParseError, ValueError, TypeError) as exc:
                    where = ""
                    path = getattr(exc, "path", "")
                    if path and kind == "form":
                        where = f", item '{path}'"
                    raise _Exit(
                        EXIT_FAILED,
                        f"The answer for step '{identifier}'{where} was refused: "
                        f"{getattr(exc, 'message', exc)}",
                    )
                if kind == "form":
                    say(f"{title}:")
                    items = {i.get("identifier"): i for i in step.get("formItems", []) if isinstance(i, dict)}
                    if isinstance(answer, dict):
                        for key, value in answer.items():
                            item = items.get(key) or {}
                            label = item.get("text") or key
                            say(f"  {label}: {render_answer(item.get('answerFormat'), value)}")
                else:
                    say(f"{title}: {render_answer(step.get('answerFormat'), answer)}")
                try:
                    session.forward()
                except StateError as exc:
                    raise _Exit(EXIT_FAILED, f"Cannot leave step '{identifier}': {_problems(exc)}")
            elif step.get("optional"):
                session.skip()
                say(f"{title}: (skipped)")
            else:
                raise _Exit(
                    EXIT_FAILED,
                    f"The answers file has no answer for the required step '{identifier}' "
                    f"({title}).",
                )
        else:
            say(title)
            try:
                session.forward()
            except StateError as exc:
                raise _Exit(EXIT_FAILED, f"Cannot leave step '{identifier}': {_problems(exc)}")
    raise _Exit(EXIT_FAILED, f"The task did not end after {max_steps} steps (a navigation loop?).")


def _problems(exc: StepKitError) -> str:
    messages = [str(e.get("message")) for e in exc.errors if isinstance(e, dict) and e.get("message")]
    return " ".join(messages) if messages else exc.message


# ------------------------------------------------------------------------------------------------
# Interactive: the terminal presenter

HELP = """\
Type an answer and press Enter. Commands:
  :back   go back to the previous step
  :skip   skip this (optional) step
  :quit   stop: the task is finished as "discarded"
  :help   this help
  =JSON   enter the answer as raw JSON, e.g. =["a", "b"] or ="text starting with :"
  ?       "I don't know", where the question offers it
Enter alone keeps the current answer, or leaves an optional question unanswered.
Choices: type their numbers, separated by commas for several (e.g. 1,3)."""

_COMMANDS = (":back", ":skip", ":quit", ":help", ":b", ":s", ":q", ":h", ":?")


class _InputError(Exception):
    pass


class _Command(Exception):
    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.name = name


def _number(text: str, integer: bool) -> Any:
    cleaned = text.strip().replace("_", "")
    try:
        value: Any = int(cleaned)
    except ValueError:
        try:
            value = float(cleaned)
        except ValueError:
            raise _InputError(f"Enter a {'whole ' if integer else ''}number.") from None
        if value != value or value in (float("inf"), float("-inf")):
            raise _InputError("Enter a finite number.")
        if integer:
            if not value.is_integer():
                raise _InputError("Enter a whole number.")
            value = int(value)
    return value


def describe_format(fmt: Dict[str, Any]) -> List[str]:
    """Lines telling the participant what kind of answer a format takes."""
    kind = fmt.get("type")
    lines: List[str] = []
    choices = _choices(fmt)
    if kind == "boolean":
        lines.append(f"  y = {fmt.get('yesString') or 'Yes'}   n = {fmt.get('noString') or 'No'}")
    elif kind in ("scale", "continuousScale"):
        low, high = fmt.get("minimum"), fmt.get("maximum")
        text = f"  A {'whole ' if kind == 'scale' else ''}number from {low} to {high}"
        if kind == "scale" and fmt.get("step", 1) not in (1, None):
            text += f" in steps of {fmt.get('step')}"
        digits = fmt.get("maximumFractionDigits")
        if kind == "continuousScale" and isinstance(digits, int):
            text += f", at most {digits} decimal{'s' if digits != 1 else ''}"
        lines.append(text)
        low_text, high_text = fmt.get("minimumValueDescription"), fmt.get("maximumValueDescription")
        if low_text or high_text:
            lines.append(f"  {low} = {low_text or ''}   {high} = {high_text or ''}")
    elif kind == "multipleValuePicker":
        pickers = [p for p in fmt.get("valuePickers") or [] if isinstance(p, dict)]
        lines.append(f"  One number per column, separated by commas ({len(pickers)} numbers):")
        for index, picker in enumerate(pickers, 1):
            options = ", ".join(f"{n}) {c.get('text')}" for n, c in enumerate(_choices(picker), 1))
            lines.append(f"  column {index}: {options}")
    elif choices:
        for number, choice in enumerate(choices, 1):
            extra = ""
            if choice.get("exclusive"):
                extra += "  (only this)"
            if choice.get("other"):
                extra += "  (you will type your own text)"
            detail = choice.get("detailText")
            detail_text = f" - {detail}" if detail else ""
            lines.append(f"  {number:>2}) {choice.get('text')}{detail_text}{extra}")
        multiple = kind in ("textChoice", "imageChoice") and fmt.get("style") == "multipleChoice"
        lines.append("  Choose one or more numbers, e.g. 1,3" if multiple else "  Choose one number")
    elif kind in ("numeric", "height", "weight", "age", "ses", "timeInterval"):
        unit = fmt.get("unit")
        if kind == "numeric":
            what = "A whole number" if fmt.get("style") == "integer" else "A number"
            low, high = fmt.get("minimum"), fmt.get("maximum")
        elif kind == "height":
            what, unit, low, high = "Centimetres", None, fmt.get("minimumValue"), fmt.get("maximumValue")
        elif kind == "weight":
            what, unit, low, high = "Kilograms", None, fmt.get("minimumValue"), fmt.get("maximumValue")
        elif kind == "age":
            what, unit, low, high = "Age in whole years", None, fmt.get("minimumAge"), fmt.get("maximumAge")
        elif kind == "ses":
            what, low, high = "A rung of the ladder", 0, 9
            top, bottom = fmt.get("topRungText"), fmt.get("bottomRungText")
            if top or bottom:
                what += f" (0 = {bottom or 'bottom'}, 9 = {top or 'top'})"
        else:
            what, low, high = "A duration: seconds, H:MM or e.g. 1h 20m", 0, fmt.get("maximumInterval")
        text = f"  {what}"
        if unit:
            text += f" in {unit}"
        if low is not None and high is not None:
            text += f", {low} to {high}"
        elif low is not None:
            text += f", at least {low}"
        elif high is not None:
            text += f", at most {high}"
        lines.append(text)
    elif kind == "timeOfDay":
        lines.append("  A time of day, HH:mm (e.g. 07:30)")
    elif kind == "date":
        if fmt.get("style") == "dateTime":
            text = "  A date and time, YYYY-MM-DDTHH:mm with an offset (e.g. 2026-11-22T09:30+01:00 or ...Z)"
        else:
            text = "  A date, YYYY-MM-DD"
        lines.append(text)
        low, high = fmt.get("minimumDate"), fmt.get("maximumDate")
        if low or high:
            lines.append(f"  from {low or '...'} to {high or '...'}")
    elif kind == "location":
        lines.append("  latitude, longitude (e.g. 47.37, 8.54)")
    elif kind in ("text", "email", "confirmText"):
        limit = fmt.get("maximumLength")
        text = "  An email address" if kind == "email" else "  Text"
        if kind == "confirmText":
            text = "  Repeat the answer above"
        if isinstance(limit, int) and limit > 0:
            text += f" (at most {limit} characters)"
        lines.append(text)
    else:
        lines.append("  Enter the answer as =JSON")
    if fmt.get("showDontKnowButton"):
        label = fmt.get("customDontKnowButtonText") or "I don't know"
        lines.append(f"  ? = {label}")
    return lines


def parse_input(fmt: Dict[str, Any], text: str, ask: Callable[[str], Optional[str]]) -> Any:
    """Turns what a participant typed into answer JSON for ``fmt``.

    ``ask(prompt)`` reads a further line (for the typed text of an "other" choice)."""
    kind = fmt.get("type")
    stripped = text.strip()
    if stripped == "?" and fmt.get("showDontKnowButton"):
        return {"dontKnow": True}
    if kind == "boolean":
        lowered = stripped.lower()
        yes = {"y", "yes", "true", "1", str(fmt.get("yesString") or "yes").lower()}
        no = {"n", "no", "false", "0", str(fmt.get("noString") or "no").lower()}
        if lowered in yes:
            return True
        if lowered in no:
            return False
        raise _InputError("Answer y or n.")
    if kind == "scale":
        return _number(stripped, integer=True)
    if kind == "continuousScale":
        return _number(stripped, integer=False)
    if kind == "multipleValuePicker":
        pickers = [p for p in fmt.get("valuePickers") or [] if isinstance(p, dict)]
        parts = [p.strip() for p in re.split(r"[,\s]+", stripped) if p.strip()]
        if len(parts) != len(pickers):
            raise _InputError(f"Enter {len(pickers)} numbers, one per column.")
        return [_pick(_choices(picker), part) for picker, part in zip(pickers, parts)]
    choices = _choices(fmt)
    if choices:
        parts = [p.strip() for p in re.split(r"[,\s]+", stripped) if p.strip()]
        multiple = kind in ("textChoice", "imageChoice") and fmt.get("style") == "multipleChoice"
        if not parts:
            return []
        if not multiple and len(parts) > 1:
            raise _InputError("Choose one number.")
        values: List[Any] = []
        for part in parts:
            number = _choice_number(choices, part)
            choice = choices[number]
            value = choice.get("value")
            if choice.get("other"):
                placeholder = choice.get("textViewPlaceholderText") or "Please specify"
                typed = ask(f"  {choice.get('text')}: {placeholder}: ")
                if typed is not None and typed.strip():
                    value = {"value": value, "text": typed.strip()}
            values.append(value)
        return values
    if kind == "numeric":
        return _number(stripped, integer=fmt.get("style") == "integer")
    if kind in ("height", "weight"):
        return _number(stripped, integer=False)
    if kind in ("age", "ses"):
        return _number(stripped, integer=True)
    if kind == "timeInterval":
        match = re.fullmatch(r"(\d+):(\d{1,2})", stripped)
        if match:
            return int(match.group(1)) * 3600 + int(match.group(2)) * 60
        match = re.fullmatch(r"(?:(\d+)\s*h)?\s*(?:(\d+)\s*m(?:in)?)?\s*(?:(\d+)\s*s)?", stripped.lower())
        if match and any(match.groups()):
            hours, minutes, seconds = (int(g) if g else 0 for g in match.groups())
            return hours * 3600 + minutes * 60 + seconds
        return _number(stripped, integer=False)
    if kind == "timeOfDay":
        match = re.fullmatch(r"(\d{1,2})[:.h](\d{2})", stripped)
        if not match:
            raise _InputError("Enter a time as HH:mm, e.g. 07:30.")
        return f"{int(match.group(1)):02d}:{match.group(2)}"
    if kind == "date":
        return stripped
    if kind == "location":
        parts = [p for p in re.split(r"[,\s]+", stripped) if p]
        if len(parts) != 2:
            raise _InputError("Enter latitude, longitude (e.g. 47.37, 8.54).")
        return {"latitude": _number(parts[0], False), "longitude": _number(parts[1], False)}
    if kind in ("text", "email", "confirmText"):
        return text.strip("\r\n")
    try:
        return json.loads(stripped)
    except ValueError:
        return stripped


def _choice_number(choices: List[Dict[str, Any]], part: str) -> int:
    try:
        number = int(part)
    except ValueError:
        lowered = part.lower()
        for index, choice in enumerate(choices):
            if str(choice.get("text", "")).lower() == lowered or str(choice.get("value")).lower() == lowered:
                return index
        raise _InputError(f"Choose by number, 1 to {len(choices)}.") from None
    if not 1 <= number <= len(choices):
        raise _InputError(f"Choose a number from 1 to {len(choices)}.")
    return number - 1


def _pick(choices: List[Dict[str, Any]], part: str) -> Any:
    return choices[_choice_number(choices, part)].get("value")


class Presenter:
    """Presents a session on a terminal: shows each step, reads answers, lets the engine
    validate them, and navigates. ``read(prompt)`` returns a line or None at end of input."""

    def __init__(
        self,
        session: Session,
        out: TextIO = sys.stdout,
        read: Optional[Callable[[str], Optional[str]]] = None,
    ) -> None:
        self.session = session
        self.out = out
        self.read = read or self._read_stdin

    @staticmethod
    def _read_stdin(prompt: str) -> Optional[str]:
        try:
            return input(prompt)
        except EOFError:
            return None

    def say(self, text: str = "") -> None:
        print(text, file=self.out, flush=True)

    def error(self, text: str) -> None:
        self.say(f"  ! {text}")

    def run(self) -> Dict[str, Any]:
        """Runs until the task finishes; returns the final state."""
        self.say("Type :help for help.")
        while True:
            state = self.session.state
            if state.get("status") != "inProgress":
                return state
            try:
                self._present(state)
            except _Command as command:
                self._command(command.name)

    # -- commands -----------------------------------------------------------------------------

    def _line(self, prompt: str) -> Tuple[str, str]:
        """Reads a line; raises _Command for :back/:skip/:quit. Returns (raw, stripped)."""
        while True:
            line = self.read(prompt)
            if line is None:
                self.say()
                raise _Command(":quit")
            stripped = line.strip()
            if stripped.lower() in (":help", ":h", ":?"):
                self.say(HELP)
                continue
            if stripped.startswith(":") and stripped.lower() in _COMMANDS:
                raise _Command({":b": ":back", ":s": ":skip", ":q": ":quit"}.get(stripped.lower(), stripped.lower()))
            if stripped.startswith(":") and re.fullmatch(r":[A-Za-z]+", stripped):
                self.error(f"Unknown command {stripped}. Type :help for help.")
                continue
            return line, stripped

    def _command(self, name: str) -> None:
        try:
            if name == ":back":
                self.session.back()
            elif name == ":skip":
                self.session.skip()
            elif name == ":quit":
                self.session.finish("discarded")
                self.say("Discarded.")
        except StepKitError as exc:
            self.error(exc.message)

    # -- steps ----------------------------------------------------------------------------------

    def _header(self, state: Dict[str, Any]) -> None:
        step = state.get("step") or {}
        progress = state.get("progress") or {}
        position = ""
        if progress.get("current") and progress.get("total"):
            position = f" {progress['current']} of {progress['total']}"
        optional = " (optional)" if step.get("optional") else ""
        self.say()
        self.say(f"── Step{position}{optional} " + "─" * 40)
        title = step.get("title")
        if title:
            self.say(str(title))
        for key in ("question", "text", "detailText", "footnote"):
            value = step.get(key)
            if isinstance(value, str) and value:
                self.say(f"  {value}" if key != "question" else str(value))

    def _present(self, state: Dict[str, Any]) -> None:
        step = state.get("step") or {}
        kind = step.get("type")
        self._header(state)
        if kind == "question":
            self._question(state)
        elif kind == "form":
            self._form(state)
        elif active_presenter.is_active_step(step):
            active_presenter.present(self, state)
        else:
            navigation = state.get("navigation") or {}
            label = "continue" if navigation.get("hasNextStep", True) else "finish"
            self._line(f"[Enter to {label}] ")
            self._forward()

    def _forward(self) -> bool:
        try:
            self.session.forward()
            return True
        except StateError as exc:
            self.error(_problems(exc))
            return False

    def _ask(
        self, fmt: Dict[str, Any], current: Any, optional: bool, prompt: str, describe: bool = True
    ) -> Tuple[bool, Any]:
        """Reads one answer. Returns (False, None) for Enter (keep/leave), else
        (True, ("value", answer)) or, for raw JSON (``=...``), (True, ("json", text))."""
        if describe:
            for line in describe_format(fmt):
                self.say(line)
        if current is not None:
            self.say(f"  Current answer: {render_answer(fmt, current)} (Enter keeps it)")
        elif optional and describe:
            self.say("  Optional: Enter leaves it unanswered")
        while True:
            raw, stripped = self._line(prompt)
            if stripped == "":
                return False, None
            if stripped.startswith("="):
                return True, ("json", stripped[1:])
            try:
                return True, ("value", parse_input(fmt, raw, self.read))
            except _InputError as exc:
                self.error(str(exc))

    def _set(self, kind_value: Tuple[str, Any], wrap: Optional[str] = None) -> bool:
        kind, value = kind_value
        try:
            if kind == "json":
                if wrap is None:
                    self.session.set_answer_json(value)
                else:
                    try:
                        decoded = json.loads(value)
                    except ValueError as exc:
                        self.error(f"That is not valid JSON: {exc}")
                        return False
                    self.session.set_answer({wrap: decoded})
            else:
                self.session.set_answer(value if wrap is None else {wrap: value})
            return True
        except (AnswerError, ParseError) as exc:
            self.error(exc.message)
        except (StepKitError, ValueError, TypeError) as exc:
            self.error(getattr(exc, "message", str(exc)))
        return False

    def _question(self, state: Dict[str, Any]) -> None:
        step = state.get("step") or {}
        fmt = step.get("answerFormat") or {}
        current = state.get("answer")
        describe = True
        while True:
            given, value = self._ask(fmt, current, bool(step.get("optional")), "> ", describe)
            describe = False
            if given and not self._set(value):
                continue
            if self._forward():
                return
            current = self.session.state.get("answer")

    def _form(self, state: Dict[str, Any]) -> None:
        step = state.get("step") or {}
        while True:
            section: Optional[str] = None
            for item in step.get("formItems") or []:
                if not isinstance(item, dict):
                    continue
                if "sectionTitle" in item and "identifier" not in item:
                    section = str(item.get("sectionTitle"))  # shown before its first visible item
                    continue
                identifier = str(item.get("identifier"))
                visible = state.get("visibleItems")
                if isinstance(visible, list) and identifier not in visible:
                    continue  # hidden now by its visibleWhen
                if section is not None:
                    self.say(f"  ── {section}")
                    section = None
                fmt = item.get("answerFormat") or {}
                optional = bool(item.get("optional"))
                self.say(f"  {item.get('text') or identifier}{' (optional)' if optional else ''}")
                if item.get("detailText"):
                    self.say(f"    {item['detailText']}")
                describe = True
                while True:
                    answers = state.get("answer")
                    current = answers.get(identifier) if isinstance(answers, dict) else None
                    given, value = self._ask(fmt, current, optional, "  > ", describe)
                    describe = False
                    if not given:
                        if current is None and not optional and not step.get("optional"):
                            self.error("This item needs an answer.")
                            continue
                        break
                    if self._set(value, wrap=identifier):
                        break
                state = self.session.state  # answers and visibility may have changed
            if self._forward():
                return
            state = self.session.state


# ------------------------------------------------------------------------------------------------
# Commands


def _compile(path: str) -> Task:
    try:
        return Task.from_file(path)
    except (ParseError, StepKitError) as exc:
        if isinstance(exc, LibraryNotFoundError):
            raise
        if exc.code == "EIO":
            raise _Exit(EXIT_USAGE, exc.message)
        raise _Exit(EXIT_USAGE, f"{path} is not a valid task:\n{_problem_lines(exc)}")


def _problem_lines(exc: StepKitError) -> str:
    lines = []
    for problem in exc.errors:
        where = problem.get("path") or "(document)"
        lines.append(f"  {where}: {problem.get('message')}")
    return "\n".join(lines) or f"  {exc.message}"


def _write_output(path: str, result: Dict[str, Any]) -> None:
    try:
        with open(path, "w", encoding="utf-8") as handle:
            json.dump(result, handle, indent=2, ensure_ascii=False)
            handle.write("\n")
    except OSError as exc:
        raise _Exit(EXIT_USAGE, f"Cannot write {path}: {exc.strerror or exc}")


def cmd_run(args: argparse.Namespace) -> int:
    task = _compile(args.task)
    answers_path: Optional[str] = args.answers
    interactive = args.interactive or (answers_path is None and sys.stdin.isatty())
    if answers_path is None and not interactive:
        candidate = default_answers_path(args.task)
        if not os.path.exists(candidate):
            raise _Exit(
                EXIT_USAGE,
                f"stdin is not a terminal and no --answers file was given, and there is no "
                f"{candidate} next to the task. Run in a terminal, or pass --answers FILE.",
            )
        print(
            f"stdin is not a terminal: answering with {candidate} "
            "(pass --answers FILE to use another file).",
            file=sys.stderr,
        )
        answers_path = candidate
    answers = load_answers(answers_path) if answers_path is not None else None
    if answers is not None:
        known = {s.get("identifier") for s in task.info.get("steps", [])}
        unknown = [key for key in answers if key not in known]
        if unknown:
            print(
                f"note: the answers file names steps that are not in the task: {', '.join(unknown)}",
                file=sys.stderr,
            )
    options: Dict[str, Any] = {}
    if args.task_run_uuid:
        options["taskRunUUID"] = args.task_run_uuid
    runner = active_presenter.prepare(task, args, options, interactive=answers is None)
    try:
        session = task.open(options or None)
    except StepKitError as exc:
        raise _Exit(EXIT_USAGE, f"Cannot open the task: {exc.message}")
    with session, runner.attach(session):
        if answers is not None:
            step_count = int(task.info.get("stepCount") or 0)
            state = walk_with_answers(
                session, answers, sys.stdout, quiet=args.quiet, max_steps=max(1000, 50 * step_count)
            )
        else:
            if sys.stdin.isatty():
                try:
                    import readline  # noqa: F401  (line editing and history for input())
                except ImportError:
                    pass
            try:
                state = Presenter(session).run()
            except KeyboardInterrupt:
                print(file=sys.stderr)
                session.finish("discarded")
                state = session.state
        result = session.result
    text = json.dumps(result, indent=2, ensure_ascii=False)
    print(text)
    if args.output:
        _write_output(args.output, result)
    reason = state.get("finishReason")
    if reason != "completed":
        print(f"The task was not completed (finished as {reason!r}).", file=sys.stderr)
        return EXIT_FAILED
    return EXIT_COMPLETED


def cmd_check(args: argparse.Namespace) -> int:
    return checker.run(args)


def cmd_graph(args: argparse.Namespace) -> int:
    return graph.run(args)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m stepkit",
        description="StepKit: run research tasks (ResearchKit-style) in a terminal.",
        epilog="Exit codes: 0 completed/valid, 1 not completed/invalid answers, 2 usage or file problems. "
        "The library is found through STEPKIT_LIBRARY, the package directory, or the system.",
    )
    parser.add_argument("--version", action="store_true", help="print the package and library versions")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    run = commands.add_parser(
        "run",
        help="run a task interactively or with an answers file",
        description="Run a task. On a terminal, answer each step; with --answers, or when stdin "
        "is not a terminal (then TASK.answers.json next to TASK.json is used), walk the task "
        "with the given answers. Prints the task result as JSON.",
    )
    run.add_argument("task", metavar="TASK.json", help="the task definition")
    run.add_argument("--answers", metavar="FILE", help='a JSON object {"stepIdentifier": answer, ...}')
    run.add_argument("--output", "-o", metavar="FILE", help="also write the result JSON to FILE")
    run.add_argument("--quiet", "-q", action="store_true", help="with answers: print only the result")
    run.add_argument("--task-run-uuid", metavar="UUID", help="the run's UUID (default: random)")
    run.add_argument(
        "--interactive", "-i", action="store_true", help="ask on stdin even if it is not a terminal"
    )
    active_presenter.add_arguments(run)
    run.set_defaults(func=cmd_run)

    check = commands.add_parser(
        "check",
        help="compile a task and check it for what is probably wrong (docs/checker.md)",
        description="Compile a task, list every problem of its definition, and run the static "
        "checker. Exit status: 0 no errors, 1 errors (with --strict: or warnings), 2 unreadable "
        "file or usage.",
    )
    checker.add_arguments(check)
    check.set_defaults(func=cmd_check)

    draw = commands.add_parser(
        "graph",
        help="draw the navigation graph (Graphviz)",
        description="Draw the task's steps and navigation rules: -o FILE.svg, .png, .pdf or .dot "
        "(DOT on stdout without -o). SVG, PNG and PDF need Graphviz's dot.",
    )
    graph.add_arguments(draw)
    draw.set_defaults(func=cmd_graph)
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        if args.version:
            print(f"stepkit (Python) {__version__}, libstepkit {version()}")
            return EXIT_COMPLETED
        if not getattr(args, "func", None):
            parser.print_usage(sys.stderr)
            print(f"{parser.prog}: error: a command is required (run, check, graph)", file=sys.stderr)
            return EXIT_USAGE
        return int(args.func(args))
    except _Exit as stop:
        if stop.message:
            print(f"error: {stop.message}", file=sys.stderr)
        return stop.code
    except LibraryNotFoundError as exc:
        print(f"error: {exc.message}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:
        return EXIT_FAILED


if __name__ == "__main__":
    sys.exit(main())
