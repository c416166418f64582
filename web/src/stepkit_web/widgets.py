"""Answer formats as native HTML controls, and form fields back into answer JSON.

This module decides only how a format is shown and how the browser's fields become the answer
JSON the engine expects; whether an answer is valid is always the engine's call (text that is
not a number is handed over as text, and the engine's message is shown). Choices are posted as
their index, so a choice's value keeps its JSON type (string or number)."""

from __future__ import annotations

import re
from typing import Any, Dict, List, Mapping, Optional

from stepkit.rendering import boolean_labels, dont_know_label

_INT = re.compile(r"[+-]?[0-9]{1,15}")
_INDEX = re.compile(r"[0-9]{1,6}")
_DEC = re.compile(r"[+-]?([0-9]{1,15}(\.[0-9]{0,10})?|\.[0-9]{1,10})")

KEYBOARD_INPUTMODE = {
    "numberPad": "numeric", "decimalPad": "decimal", "phonePad": "tel",
    "emailAddress": "email", "URL": "url", "numbersAndPunctuation": "text",
    "asciiCapableNumberPad": "numeric",
}


class Fields:
    """The posted form fields: first value per name, and every value per name."""

    def __init__(self, items: List[tuple]) -> None:
        self._all: Dict[str, List[str]] = {}
        for key, value in items:
            if isinstance(value, str):
                self._all.setdefault(key, []).append(value)

    def get(self, name: str) -> str:
        values = self._all.get(name)
        return values[0] if values else ""

    def getall(self, name: str) -> List[str]:
        return list(self._all.get(name, []))

    def has(self, name: str) -> bool:
        return name in self._all


def _number(text: str, integer: bool = False) -> Any:
    """A number from text, or the text itself (stripped) for the engine to refuse."""
    s = text.strip()
    if s == "":
        return None
    if _INT.fullmatch(s):
        return int(s)
    if not integer and _DEC.fullmatch(s):
        return float(s)
    return s


def _choices(fmt: Mapping[str, Any]) -> List[Mapping[str, Any]]:
    if fmt.get("type") == "imageChoice":
        return list(fmt.get("imageChoices") or [])
    return list(fmt.get("textChoices") or [])


def _is_multiple(fmt: Mapping[str, Any]) -> bool:
    return fmt.get("type") in ("textChoice", "imageChoice") and fmt.get("style") == "multipleChoice"


def _choice_value(choices: List[Mapping[str, Any]], index_text: str) -> Any:
    s = index_text.strip()
    if _INDEX.fullmatch(s) and int(s) < len(choices):
        return choices[int(s)].get("value")
    return s  # not one of ours: the engine says why


def parse_answer(fmt: Mapping[str, Any], fields: Fields, name: str) -> Any:
    """The answer JSON for one question from the posted fields named ``name...``."""
    if fmt.get("showDontKnowButton") and fields.get(name + ".dontknow") == "1":
        return {"dontKnow": True}
    kind = fmt.get("type")
    if kind == "boolean":
        v = fields.get(name)
        return True if v == "true" else False if v == "false" else (None if v == "" else v)
    if kind in ("scale", "ses"):
        return _number(fields.get(name), integer=True)
    if kind in ("continuousScale", "height", "weight"):
        return _number(fields.get(name))
    if kind == "age":
        return _number(fields.get(name), integer=True)
    if kind == "numeric":
        return _number(fields.get(name), integer=fmt.get("style") == "integer")
    if kind in ("textScale", "valuePicker"):
        v = fields.get(name)
        return None if v == "" else [_choice_value(_choices(fmt), v)]
    if kind in ("textChoice", "imageChoice"):
        choices = _choices(fmt)
        picked = [v for v in fields.getall(name) if v != ""]
        if not picked:
            return None
        answer = []
        for v in picked:
            value = _choice_value(choices, v)
            if _INDEX.fullmatch(v) and int(v) < len(choices) and choices[int(v)].get("other"):
                typed = fields.get(f"{name}.other.{v}").strip()
                if typed:
                    value = {"value": value, "text": typed}
            answer.append(value)
        return answer
    if kind == "multipleValuePicker":
        pickers = fmt.get("valuePickers") or []
        parts = [fields.get(f"{name}.{i}") for i in range(len(pickers))]
        if all(p == "" for p in parts):
            return None
        return [None if p == "" else _choice_value(list(pk.get("textChoices") or []), p)
                for p, pk in zip(parts, pickers)]
    if kind in ("text", "email", "confirmText"):
        v = fields.get(name)
        if kind != "text" or not fmt.get("multipleLines"):
            v = v.strip()
        return None if v == "" else v.replace("\r\n", "\n")
    if kind == "date":
        v = fields.get(name).strip()
        if v == "":
            return None
        if fmt.get("partial") and re.fullmatch(r"\d{4}(-\d{2})?", v):
            return v   # a year or a month, as written
        if fmt.get("style") == "dateTime":
            offset = fields.get(name + ".offset").strip() or "Z"
            if re.fullmatch(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}", v):
                v += ":00"
            return v + offset
        return v
    if kind == "timeOfDay":
        v = fields.get(name).strip()
        if v == "" or not re.fullmatch(r"\d{2}:\d{2}(:\d{2})?", v):
            return None if v == "" else v
        # A browser sends HH:mm, or HH:mm:ss once seconds are asked for (step 1).
        if fmt.get("seconds"):
            return v if len(v) == 8 else v + ":00"
        return v[:5]
    if kind == "timeInterval":
        h, m = fields.get(name + ".hours").strip(), fields.get(name + ".minutes").strip()
        if h == "" and m == "":
            return None
        hv, mv = _number(h or "0", integer=True), _number(m or "0", integer=True)
        if isinstance(hv, int) and isinstance(mv, int):
            return hv * 3600 + mv * 60
        return f"{h}:{m}"
    if kind == "location":
        parts = {k: fields.get(f"{name}.{k}").strip()
                 for k in ("latitude", "longitude", "horizontalAccuracy", "userInput")}
        if not any(parts.values()):
            return None
        answer: Dict[str, Any] = {"latitude": _number(parts["latitude"]),
                                  "longitude": _number(parts["longitude"])}
        if parts["horizontalAccuracy"]:
            acc = _number(parts["horizontalAccuracy"])
            answer["horizontalAccuracy"] = float(acc) if isinstance(acc, int) else acc
        if parts["userInput"]:
            answer["userInput"] = parts["userInput"]
        return answer
    return fields.get(name) or None


# -- rendering --------------------------------------------------------------------------------

def _choice_index(choices: List[Mapping[str, Any]], element: Any) -> Optional[int]:
    value = element.get("value") if isinstance(element, dict) else element
    for i, c in enumerate(choices):
        if c.get("value") == value and type(c.get("value")) is type(value):
            return i
    return None


def _fmt_number(v: Any) -> str:
    if isinstance(v, bool) or v is None:
        return ""
    return repr(v) if isinstance(v, float) else str(v)


def widget(fmt: Mapping[str, Any], answer: Any, name: str, ident: str, *, label: str,
           detail: Optional[str], optional: bool, placeholder: Optional[str],
           error: Optional[str], submitted: Optional[Fields]) -> Dict[str, Any]:
    """What the template needs to draw one question: its control kind, options and values.

    ``answer`` is the engine's current answer; ``submitted`` the fields of a refused post,
    which are shown again as typed."""
    kind = fmt.get("type")
    w: Dict[str, Any] = {
        "name": name, "id": ident, "label": label, "detail": detail, "optional": optional,
        "placeholder": placeholder or fmt.get("placeholder"), "error": error, "format": kind,
        "unit": None, "attrs": {}, "options": [], "value": "", "group": False,
        "dontknow": None,
    }
    dont_know = isinstance(answer, dict) and answer.get("dontKnow") is True
    if fmt.get("showDontKnowButton"):
        checked = dont_know if submitted is None else submitted.get(name + ".dontknow") == "1"
        w["dontknow"] = {"label": dont_know_label(fmt),
                         "checked": checked}
    if dont_know:
        answer = None

    def sub(field: str, default: str) -> str:
        return submitted.get(field) if submitted is not None else default

    if kind == "boolean":
        w["control"] = "radio"
        w["group"] = True
        current = sub(name, "true" if answer is True else "false" if answer is False else "")
        w["options"] = [
            {"value": "true", "label": boolean_labels(fmt)[0], "checked": current == "true"},
            {"value": "false", "label": boolean_labels(fmt)[1], "checked": current == "false"},
        ]
    elif kind in ("scale", "ses"):
        w["control"] = "radio"
        w["group"] = True
        # Bounds and step as the state's effective answer format gives them (the engine
        # fills in its defaults there): nothing is assumed here.
        lo, hi = int(fmt["minimum"]), int(fmt["maximum"])
        if kind == "ses":
            values = list(range(hi, lo - 1, -1))
            labels = {hi: f"{hi} – {fmt.get('topRungText') or 'top rung'}",
                      lo: f"{lo} – {fmt.get('bottomRungText') or 'bottom rung'}"}
        else:
            step = max(1, int(fmt["step"]))
            values = list(range(lo, hi + 1, step))
            labels = {}
            if fmt.get("minimumValueDescription"):
                labels[lo] = f"{lo} – {fmt['minimumValueDescription']}"
            if fmt.get("maximumValueDescription"):
                labels[hi] = f"{hi} – {fmt['maximumValueDescription']}"
        current = sub(name, "" if answer is None else str(answer))
        w["options"] = [{"value": str(v), "label": labels.get(v, str(v)),
                         "checked": current == str(v)} for v in values]
        w["inline"] = kind == "scale" and len(values) <= 11
    elif kind in ("textScale", "textChoice", "imageChoice"):
        choices = _choices(fmt)
        multiple = _is_multiple(fmt)
        w["control"] = "checkbox" if multiple else "radio"
        w["group"] = True
        if submitted is not None:
            picked = set(submitted.getall(name))
            others = {str(i): submitted.get(f"{name}.other.{i}") for i in range(len(choices))}
        else:
            picked, others = set(), {}
            for element in answer if isinstance(answer, list) else []:
                i = _choice_index(choices, element)
                if i is not None:
                    picked.add(str(i))
                    if isinstance(element, dict):
                        others[str(i)] = str(element.get("text", ""))
        for i, c in enumerate(choices):
            text = c.get("text") or c.get("accessibilityText") or str(c.get("value"))
            w["options"].append({
                "value": str(i), "label": text, "detail": c.get("detailText"),
                "checked": str(i) in picked, "other": bool(c.get("other")),
                "other_text": others.get(str(i), ""),
                "other_label": c.get("textViewPlaceholderText") or f"{text}: please specify",
                "image": c.get("normalImage"),
            })
    elif kind == "valuePicker":
        choices = _choices(fmt)
        w["control"] = "select"
        current = sub(name, "")
        if submitted is None and isinstance(answer, list) and answer:
            i = _choice_index(choices, answer[0])
            current = "" if i is None else str(i)
        w["options"] = [{"value": str(i), "label": c.get("text") or str(c.get("value")),
                         "checked": current == str(i)} for i, c in enumerate(choices)]
    elif kind == "multipleValuePicker":
        w["control"] = "multiselect"
        w["group"] = True
        pickers = fmt.get("valuePickers") or []
        w["pickers"] = []
        for p, picker in enumerate(pickers):
            choices = list(picker.get("textChoices") or [])
            current = sub(f"{name}.{p}", "")
            if submitted is None and isinstance(answer, list) and p < len(answer):
                i = _choice_index(choices, answer[p])
                current = "" if i is None else str(i)
            w["pickers"].append({
                "name": f"{name}.{p}", "id": f"{ident}-{p}",
                "label": f"Part {p + 1} of {len(pickers)}",
                "options": [{"value": str(i), "label": c.get("text") or str(c.get("value")),
                             "checked": current == str(i)} for i, c in enumerate(choices)]})
    elif kind in ("numeric", "continuousScale", "height", "weight", "age"):
        w["control"] = "input"
        integer = (kind == "numeric" and fmt.get("style") == "integer") or kind == "age"
        w["attrs"] = {"type": "text", "inputmode": "numeric" if integer else "decimal",
                      "autocomplete": "off"}
        # The unit the answer is given in, as the state's effective format says it (height in
        # cm and weight in kg whatever the measurement system: the engine's answers are metric).
        w["unit"] = fmt.get("displayUnit") or fmt.get("unit")
        if kind == "continuousScale":
            lo, hi = fmt.get("minimum"), fmt.get("maximum")
            w["hint"] = f"A number from {_fmt_number(lo)} to {_fmt_number(hi)}"
        elif kind == "numeric" and (fmt.get("minimum") is not None or fmt.get("maximum") is not None):
            w["hint"] = "From {} to {}".format(_fmt_number(fmt.get("minimum")) or "…",
                                                _fmt_number(fmt.get("maximum")) or "…")
        w["value"] = sub(name, _fmt_number(answer) if isinstance(answer, (int, float)) else "")
    elif kind in ("text", "email", "confirmText"):
        multiline = kind == "text" and bool(fmt.get("multipleLines"))
        w["control"] = "textarea" if multiline else "input"
        attrs: Dict[str, Any] = {"type": "text", "autocomplete": "off"}
        if kind == "email":
            attrs.update({"type": "email", "inputmode": "email", "autocomplete": "email"})
        elif kind == "text":
            if fmt.get("secureTextEntry"):
                attrs["type"] = "password"
            mode = KEYBOARD_INPUTMODE.get(str(fmt.get("keyboardType")))
            if mode:
                attrs["inputmode"] = mode
            if fmt.get("autocapitalizationType") == "none":
                attrs["autocapitalize"] = "none"
            if fmt.get("spellCheckingType") == "no":
                attrs["spellcheck"] = "false"
        w["attrs"] = attrs
        w["value"] = sub(name, answer if isinstance(answer, str) else "")
    elif kind == "date":
        w["control"] = "input"
        if fmt.get("style") == "dateTime":
            w["control"] = "datetime"
            w["group"] = True
            value, offset = "", "Z"
            if isinstance(answer, str):
                m = re.fullmatch(r"(\d{4}-\d{2}-\d{2}T\d{2}:\d{2})(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})", answer)
                if m:
                    value, offset = m.group(1), m.group(4)
            w["value"] = sub(name, value)
            w["offset"] = sub(name + ".offset", offset)
            w["answered"] = bool(value) or submitted is not None
            w["offset_id"] = ident + "-offset"
            attrs = {"type": "datetime-local"}
            if fmt.get("minuteInterval"):
                attrs["step"] = str(int(fmt["minuteInterval"]) * 60)
            for key, attr in (("minimumDate", "min"), ("maximumDate", "max")):
                if isinstance(fmt.get(key), str):
                    attrs[attr] = fmt[key][:16]
            w["attrs"] = attrs
        elif fmt.get("partial"):
            # A year or a month is an answer too, which no date picker takes: a text field.
            w["attrs"] = {"type": "text", "inputmode": "numeric", "placeholder": "YYYY, YYYY-MM or YYYY-MM-DD",
                          "pattern": r"\d{4}(-\d{2}(-\d{2})?)?"}
            w["value"] = sub(name, answer if isinstance(answer, str) else "")
        else:
            attrs = {"type": "date"}
            for key, attr in (("minimumDate", "min"), ("maximumDate", "max")):
                if isinstance(fmt.get(key), str):
                    attrs[attr] = fmt[key][:10]
            w["attrs"] = attrs
            w["value"] = sub(name, answer if isinstance(answer, str) else "")
    elif kind == "timeOfDay":
        w["control"] = "input"
        attrs = {"type": "time"}
        if fmt.get("seconds"):
            attrs["step"] = "1"
        elif fmt.get("minuteInterval"):
            attrs["step"] = str(int(fmt["minuteInterval"]) * 60)
        w["attrs"] = attrs
        w["value"] = sub(name, answer if isinstance(answer, str) else "")
    elif kind == "timeInterval":
        w["control"] = "interval"
        w["group"] = True
        hours = minutes = ""
        if isinstance(answer, (int, float)) and not isinstance(answer, bool):
            hours, minutes = str(int(answer) // 3600), str((int(answer) % 3600) // 60)
        w["hours"] = sub(name + ".hours", hours)
        w["minutes"] = sub(name + ".minutes", minutes)
        w["step_minutes"] = int(fmt.get("step") or 1)
    elif kind == "location":
        w["control"] = "location"
        w["group"] = True
        a = answer if isinstance(answer, dict) else {}
        w["parts"] = [
            {"key": k, "label": lbl, "mode": mode, "optional": opt,
             "value": sub(f"{name}.{k}", _fmt_number(a.get(k)) if k != "userInput"
                          else str(a.get(k) or ""))}
            for k, lbl, mode, opt in (
                ("latitude", "Latitude (degrees)", "decimal", False),
                ("longitude", "Longitude (degrees)", "decimal", False),
                ("horizontalAccuracy", "Accuracy (metres)", "decimal", True),
                ("userInput", "Place name or address", "text", True))]
    else:
        w["control"] = "input"
        w["attrs"] = {"type": "text"}
        w["value"] = sub(name, answer if isinstance(answer, str) else "")
    return w
