"""What a format takes, in words, and what a participant typed, as answer JSON (the terminal
presenter's input side).

Both read the answer format the state gives, with every default the engine applies filled in
(bounds, units, steps, styles): the engine decides, this module only describes and parses.
"""

from __future__ import annotations

import json
import re
from typing import Any, Callable, Dict, List, Optional

from .rendering import boolean_labels, choices_of, dont_know_label, takes_several

__all__ = ["InputError", "describe_format", "parse_input"]


class InputError(Exception):
    """What the participant typed cannot be read as an answer of the format (the message says
    what to type instead)."""


def _number(text: str, integer: bool) -> Any:
    cleaned = text.strip().replace("_", "")
    try:
        value: Any = int(cleaned)
    except ValueError:
        try:
            value = float(cleaned)
        except ValueError:
            raise InputError(f"Enter a {'whole ' if integer else ''}number.") from None
        if value != value or value in (float("inf"), float("-inf")):
            raise InputError("Enter a finite number.")
        if integer:
            if not value.is_integer():
                raise InputError("Enter a whole number.")
            value = int(value)
    return value


def _range_text(low: Any, high: Any) -> str:
    if low is not None and high is not None:
        return f", {low} to {high}"
    if low is not None:
        return f", at least {low}"
    if high is not None:
        return f", at most {high}"
    return ""


#: What each numeric-like format asks for, and the keys of its bounds.
_MEASURES = {
    "numeric": ("A number", "minimum", "maximum"),
    "height": ("A height", "minimumValue", "maximumValue"),
    "weight": ("A weight", "minimumValue", "maximumValue"),
    "age": ("An age", "minimumAge", "maximumAge"),
    "ses": ("A rung of the ladder", "minimum", "maximum"),
    "timeInterval": ("A duration (H:MM, 1h 20m, or a number)", None, "maximumInterval"),
}


def _describe_measure(fmt: Dict[str, Any]) -> str:
    kind = str(fmt.get("type"))
    what, low_key, high_key = _MEASURES[kind]
    low = fmt.get(low_key) if low_key else None
    high = fmt.get(high_key)
    if kind == "numeric" and fmt.get("style") == "integer":
        what = "A whole number"
    if kind == "ses":
        top, bottom = fmt.get("topRungText"), fmt.get("bottomRungText")
        if top or bottom:
            what += f" ({low} = {bottom or 'bottom'}, {high} = {top or 'top'})"
    unit = fmt.get("unit")
    text = f"  {what}"
    if unit:
        text += f" in {unit}"
    text += _range_text(low, high)
    step = fmt.get("step")
    if kind == "timeInterval" and isinstance(step, int) and step != 1:
        text += f", in steps of {step} minutes"
    return text


def describe_format(fmt: Dict[str, Any]) -> List[str]:
    """Lines telling the participant what kind of answer a format takes."""
    kind = fmt.get("type")
    lines: List[str] = []
    choices = choices_of(fmt)
    if kind == "boolean":
        yes, no = boolean_labels(fmt)
        lines.append(f"  y = {yes}   n = {no}")
    elif kind in ("scale", "continuousScale"):
        low, high = fmt.get("minimum"), fmt.get("maximum")
        text = f"  A {'whole ' if kind == 'scale' else ''}number from {low} to {high}"
        step = fmt.get("step")
        if kind == "scale" and isinstance(step, int) and step != 1:
            text += f" in steps of {step}"
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
            options = ", ".join(f"{n}) {c.get('text')}" for n, c in enumerate(choices_of(picker), 1))
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
        lines.append("  Choose one or more numbers, e.g. 1,3" if takes_several(fmt) else "  Choose one number")
    elif kind in _MEASURES:
        lines.append(_describe_measure(fmt))
    elif kind == "timeOfDay":
        if fmt.get("seconds"):
            lines.append("  A time of day, HH:mm:ss (e.g. 07:30:15)")
        else:
            lines.append("  A time of day, HH:mm (e.g. 07:30)")
    elif kind == "date":
        if fmt.get("style") == "dateTime":
            text = "  A date and time, YYYY-MM-DDTHH:mm with an offset (e.g. 2026-11-22T09:30+01:00 or ...Z)"
        else:
            text = "  A date, YYYY-MM-DD"
        if fmt.get("partial"):
            text += ", or a year (2021) or a month (2021-05)"
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
        lines.append(f"  ? = {dont_know_label(fmt)}")
    return lines


def _split(text: str) -> List[str]:
    return [p.strip() for p in re.split(r"[,\s]+", text) if p.strip()]


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
        raise InputError("Answer y or n.")
    if kind == "scale":
        return _number(stripped, integer=True)
    if kind == "continuousScale":
        return _number(stripped, integer=False)
    if kind == "multipleValuePicker":
        pickers = [p for p in fmt.get("valuePickers") or [] if isinstance(p, dict)]
        parts = _split(stripped)
        if len(parts) != len(pickers):
            raise InputError(f"Enter {len(pickers)} numbers, one per column.")
        return [_pick(choices_of(picker), part) for picker, part in zip(pickers, parts)]
    choices = choices_of(fmt)
    if choices:
        parts = _split(stripped)
        if not parts:
            return []
        if not takes_several(fmt) and len(parts) > 1:
            raise InputError("Choose one number.")
        values: List[Any] = []
        for part in parts:
            choice = choices[_choice_number(choices, part)]
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
        if fmt.get("seconds"):
            match = re.fullmatch(r"(\d{1,2})[:.h](\d{2})(?::(\d{2}))?", stripped)
            if not match:
                raise InputError("Enter a time as HH:mm:ss, e.g. 07:30:15.")
            return f"{int(match.group(1)):02d}:{match.group(2)}:{match.group(3) or '00'}"
        match = re.fullmatch(r"(\d{1,2})[:.h](\d{2})", stripped)
        if not match:
            raise InputError("Enter a time as HH:mm, e.g. 07:30.")
        return f"{int(match.group(1)):02d}:{match.group(2)}"
    if kind == "date":
        return stripped
    if kind == "location":
        parts = [p for p in re.split(r"[,\s]+", stripped) if p]
        if len(parts) != 2:
            raise InputError("Enter latitude, longitude (e.g. 47.37, 8.54).")
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
        raise InputError(f"Choose by number, 1 to {len(choices)}.") from None
    if not 1 <= number <= len(choices):
        raise InputError(f"Choose a number from 1 to {len(choices)}.")
    return number - 1


def _pick(choices: List[Dict[str, Any]], part: str) -> Any:
    return choices[_choice_number(choices, part)].get("value")
