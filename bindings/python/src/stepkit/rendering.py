"""The presenter vocabulary: steps and answers as a participant reads them, for every host of
the binding (the terminal presenter ``python -m stepkit``, the graph, the web service).

Everything here reads what the engine decided (include/stepkit.h, docs/reference.md "What a
host shows"): a step's ``displayTitle`` and ``isActive`` (the state's ``step``, the task info's
``steps``), ``navigation.canSkip``, and the effective answer format (its ``step``'s
``answerFormat``, or a form item's), in which the engine has filled in every default it
applies: units, bounds, steps, styles, and the labels of "don't know" and of a boolean's
answers. Nothing here knows an engine default of its own or decides what the engine decides.
"""

from __future__ import annotations

import json
from typing import Any, Dict, List, Mapping, Optional, Tuple

from .errors import StepKitError

__all__ = [
    "step_title",
    "is_active",
    "can_skip",
    "dont_know_label",
    "boolean_labels",
    "problems_text",
    "choices_of",
    "takes_several",
    "render_answer",
    "time_left",
    "review_lines",
    "review_instances",
    "instance_title",
]


def dumps(value: Any) -> str:
    """JSON text of a value, as typed (non-ASCII kept)."""
    return json.dumps(value, ensure_ascii=False)


def step_title(step: Mapping[str, Any]) -> str:
    """What to call a step: the engine's ``displayTitle`` (its title, else its question, else
    its text, else its identifier) of the state's ``step`` or a task info step."""
    title = step.get("displayTitle")
    return title if isinstance(title, str) else str(step.get("identifier", "?"))


def is_active(step: Any) -> bool:
    """Whether a step (the state's ``step``, a task info step) is an active step (``active``,
    ``countdown``, ``wait``): the engine's ``isActive``."""
    return isinstance(step, Mapping) and step.get("isActive") is True


def can_skip(state: Mapping[str, Any]) -> bool:
    """Whether the current step may be skipped now: the state's ``navigation.canSkip``."""
    navigation = state.get("navigation")
    return isinstance(navigation, Mapping) and navigation.get("canSkip") is True


def dont_know_label(fmt: Optional[Mapping[str, Any]]) -> str:
    """The label of the "don't know" answer: the effective format's ``customDontKnowButtonText``
    (the engine fills in its default whenever the format offers the answer)."""
    label = fmt.get("customDontKnowButtonText") if fmt else None
    return label if isinstance(label, str) else dumps({"dontKnow": True})


def boolean_labels(fmt: Mapping[str, Any]) -> Tuple[str, str]:
    """The labels of a boolean's answers (true, false): the effective format's ``yesString``
    and ``noString`` (the engine fills in "Yes" and "No")."""
    return str(fmt.get("yesString", dumps(True))), str(fmt.get("noString", dumps(False)))


def problems_text(exc: StepKitError) -> str:
    """The reasons a refusal gives (why a step cannot be left), as one sentence."""
    messages = [str(e.get("message")) for e in exc.errors if isinstance(e, dict) and e.get("message")]
    return " ".join(messages) if messages else exc.message


def time_left(state: Mapping[str, Any]) -> Optional[str]:
    """The time left under the run's time limits, as the state's ``timeLimits`` gives it (the
    step's, then the task's), e.g. ``"Time left: 6 s on this step, 56 s for the task"``; None
    when the run has no limit or has finished. Whole seconds, rounded up: a host never shows
    "0 s" while time is left."""
    if state.get("status") != "inProgress":
        return None
    limits = state.get("timeLimits") or {}
    parts = []
    for key, where in (("step", "on this step"), ("task", "for the task")):
        entry = limits.get(key)
        if isinstance(entry, dict) and isinstance(entry.get("remaining"), (int, float)):
            seconds = -int(-float(entry["remaining"]) // 1)
            parts.append(f"{seconds} s {where}")
    return "Time left: " + ", ".join(parts) if parts else None


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
        return dont_know_label(fmt)
    if not fmt:
        return dumps(answer)
    kind = fmt.get("type")
    if kind == "boolean" and isinstance(answer, bool):
        return boolean_labels(fmt)[0 if answer else 1]
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


def review_lines(review: Optional[Mapping[str, Any]]) -> List[str]:
    """A review step's list (the state's ``review``, or :meth:`Task.review`'s) as numbered text
    lines: each step the engine lists, by its ``displayTitle``, then each answer as the engine's
    ``displayText`` (its ``label`` first when the step has several answers or the label differs
    from the title); "(no answer)" where it gives none. A repeating section's step is titled by
    its instance (``instanceTitle``); a repeating block's answers are grouped under each
    instance's title, numbered ``N.K`` (see :func:`review_instances`)."""
    steps = [e for e in (review or {}).get("steps") or [] if isinstance(e, Mapping)]
    if not steps:
        return ["  (nothing to review)"]
    lines: List[str] = []
    for number, entry in enumerate(steps, 1):
        title = str(entry.get("displayTitle") or entry.get("step"))
        heading = title
        if isinstance(entry.get("instance"), int):  # a repeating section's step, in one instance
            heading = f"{instance_title(entry, entry.get('section'))} — {title}"
        lines.append(f"  {number}. {heading}{' (skipped)' if entry.get('skipped') else ''}")
        answers = [a for a in entry.get("answers") or [] if isinstance(a, Mapping)]
        places = review_instances(entry)
        headed = set()
        for answer in answers:
            shown = answer.get("displayText")
            text = "(no answer)" if shown is None else str(shown)
            label = str(answer.get("label") or answer.get("identifier"))
            if isinstance(answer.get("instance"), int):
                place = (str(answer.get("block")), int(answer["instance"]))
                if place not in headed:  # the instance's title, once, before its answers
                    headed.add(place)
                    lines.append(f"     {number}.{places.index(place) + 1} {instance_title(answer, place[0])}")
                lines.append(f"        {label}: {text}")
                continue
            lines.append(f"     {label}: {text}" if len(answers) > 1 or label != title else f"     {text}")
    return lines


def review_instances(entry: Mapping[str, Any]) -> List[Tuple[str, int]]:
    """The instances of repeating blocks a review entry's answers are listed in, in order, as
    (block, instance): the ``K`` of a line numbered ``N.K`` is its place in this list, from 1."""
    places: List[Tuple[str, int]] = []
    for answer in entry.get("answers") or []:
        if isinstance(answer, Mapping) and isinstance(answer.get("instance"), int):
            place = (str(answer.get("block")), int(answer["instance"]))
            if place not in places:
                places.append(place)
    return places


def instance_title(entry: Mapping[str, Any], block: Any) -> str:
    """An instance's title as the engine gives it (``instanceTitle``), or the block's name and
    the instance's number when the block has no title."""
    title = entry.get("instanceTitle")
    return str(title) if title else f"{block} {int(entry.get('instance') or 0) + 1}"
