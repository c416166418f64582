"""Answers and steps as a participant reads them, for the terminal presenter (``python -m stepkit``).

Everything here reads the answer format the state gives (its ``step``'s ``answerFormat``, or a
form item's), in which the engine has filled in every default it applies: units, bounds, steps,
styles. Nothing here knows an engine default of its own.
"""

from __future__ import annotations

import json
from typing import Any, Dict, List, Optional

from .errors import StepKitError

__all__ = ["step_title", "problems_text", "choices_of", "takes_several", "render_answer"]


def dumps(value: Any) -> str:
    """JSON text of a value, as typed (non-ASCII kept)."""
    return json.dumps(value, ensure_ascii=False)


def step_title(step: Dict[str, Any]) -> str:
    """What to call a step: its title, else its question, else its identifier."""
    for key in ("title", "question", "text"):
        value = step.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return str(step.get("identifier", "?"))


def problems_text(exc: StepKitError) -> str:
    """The reasons a refusal gives (why a step cannot be left), as one sentence."""
    messages = [str(e.get("message")) for e in exc.errors if isinstance(e, dict) and e.get("message")]
    return " ".join(messages) if messages else exc.message


def choices_of(fmt: Dict[str, Any]) -> List[Dict[str, Any]]:
    """The choices of a choice-like format (``textChoices`` or ``imageChoices``), else []."""
    for key in ("textChoices", "imageChoices"):
        value = fmt.get(key)
        if isinstance(value, list):
            return [c for c in value if isinstance(c, dict)]
    return []


def takes_several(fmt: Dict[str, Any]) -> bool:
    """Whether a choice format takes several choices (its effective ``style``)."""
    return fmt.get("style") == "multipleChoice"


def _choice_label(fmt: Dict[str, Any], value: Any) -> str:
    if isinstance(value, dict) and "value" in value:
        label = _choice_label(fmt, value["value"])
        typed = value.get("text")
        return f"{label} ({typed})" if typed else label
    for choice in choices_of(fmt):
        if choice.get("value") == value and type(choice.get("value")) is type(value):
            return str(choice.get("text", value))
    return dumps(value)


def render_answer(fmt: Optional[Dict[str, Any]], answer: Any) -> str:
    """An answer as a participant would read it (choice values shown by their text, numbers
    with the format's ``unit``)."""
    if answer is None:
        return "(no answer)"
    if isinstance(answer, dict) and answer.get("dontKnow") is True:
        label = fmt.get("customDontKnowButtonText") if fmt else None
        return label if isinstance(label, str) else "I don't know"
    if not fmt:
        return dumps(answer)
    kind = fmt.get("type")
    if kind == "boolean" and isinstance(answer, bool):
        if answer:
            return str(fmt.get("yesString") or "Yes")
        return str(fmt.get("noString") or "No")
    if kind == "multipleValuePicker" and isinstance(answer, list):
        pickers = fmt.get("valuePickers") or []
        parts = [
            _choice_label(pickers[i], v) if i < len(pickers) and isinstance(pickers[i], dict) else dumps(v)
            for i, v in enumerate(answer)
        ]
        separator = fmt.get("separator")
        return (separator if isinstance(separator, str) else " ").join(parts)
    if choices_of(fmt) and isinstance(answer, list):
        return ", ".join(_choice_label(fmt, v) for v in answer) or "(none)"
    if isinstance(answer, str):
        return answer
    text = dumps(answer)
    unit = fmt.get("unit")
    if isinstance(unit, str) and unit and isinstance(answer, (int, float)):
        text = f"{text} {unit}"
    return text
