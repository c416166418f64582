"""Answers (as in an example's answers file) turned into the form fields a participant would
post: the inverse of :func:`stepkit_web.widgets.parse_answer`. Used by the tests and the load
generator to walk a task the way a browser does."""

from __future__ import annotations

import re
from urllib.parse import urlencode
from typing import Any, Dict, List, Mapping, Optional, Tuple

from .widgets import _choices, _choice_index


def _num(v: Any) -> str:
    return repr(v) if isinstance(v, float) else str(v)


def fields_for(fmt: Mapping[str, Any], answer: Any, name: str) -> List[Tuple[str, str]]:
    if answer is None:
        return []
    if isinstance(answer, dict) and answer.get("dontKnow") is True:
        return [(name + ".dontknow", "1")]
    kind = fmt.get("type")
    if kind == "boolean":
        return [(name, "true" if answer else "false")]
    if kind in ("textScale", "valuePicker", "textChoice", "imageChoice"):
        choices = _choices(fmt)
        out = []
        for element in answer:
            i = _choice_index(choices, element)
            out.append((name, str(i)))
            if isinstance(element, dict) and element.get("text"):
                out.append((f"{name}.other.{i}", str(element["text"])))
        return out
    if kind == "multipleValuePicker":
        out = []
        for p, (value, picker) in enumerate(zip(answer, fmt.get("valuePickers") or [])):
            out.append((f"{name}.{p}", str(_choice_index(list(picker.get("textChoices") or []), value))))
        return out
    if kind == "date" and fmt.get("style") == "dateTime":
        m = re.fullmatch(r"(\d{4}-\d{2}-\d{2}T\d{2}:\d{2})(:\d{2})?(Z|[+-]\d{2}:\d{2})", answer)
        assert m, answer
        return [(name, m.group(1)), (name + ".offset", m.group(3))]
    if kind == "timeInterval":
        return [(name + ".hours", str(int(answer) // 3600)),
                (name + ".minutes", str((int(answer) % 3600) // 60))]
    if kind == "location":
        return [(f"{name}.{k}", _num(v) if k != "userInput" else str(v))
                for k, v in answer.items()]
    if isinstance(answer, (int, float)) and not isinstance(answer, bool):
        return [(name, _num(answer))]
    return [(name, str(answer))]


def page_fields(state: Mapping[str, Any], answers: Mapping[str, Any]) -> Optional[List[Tuple[str, str]]]:
    """The fields to post on the state's step with ``answers`` (an answers file), or None when
    the answers file has nothing for this step (an optional step to skip)."""
    step = state.get("step") or {}
    ident = step.get("identifier")
    kind = "form" if "formItems" in step else step.get("type")  # a consent review is a form
    if step.get("reportedByHost") is True:
        if ident not in answers:
            return None
        report = answers[ident] or {}
        if "typedName" in report:
            return [("signature.typed", str(report["typedName"]))]
        if "path" in report:
            return [("signature.path", str(report["path"]))]
        if "message" in report:
            return [("web.message", str(report["message"]))]
        if report.get("playbackCompleted"):
            return [("video.completed", "1")]
        return [("permission", str(p)) for p in report.get("granted") or []]
    if kind == "question":
        if ident not in answers:
            return None
        return fields_for(step.get("answerFormat") or {}, answers[ident], "answer")
    if kind in ("form", "page"):
        if ident not in answers:
            return None
        given = answers[ident] or {}
        visible = state.get("visibleItems")
        out: List[Tuple[str, str]] = []
        for item in step.get("formItems") or []:
            item_id = item.get("identifier")
            if item_id is None or (isinstance(visible, list) and item_id not in visible):
                continue
            if isinstance(item.get("repeat"), dict) and isinstance(item.get("items"), list):
                # A repeating group: each instance's items under item:<group>:<k>:<item>.
                for k, instance in enumerate(given.get(item_id) or []):
                    for inner in item["items"]:
                        name = inner.get("identifier")
                        if isinstance(inner.get("repeat"), dict) and "items" not in inner:
                            # A repeating question in the instance: one input per answer.
                            for n, value in enumerate((instance or {}).get(name) or []):
                                out += fields_for(inner.get("answerFormat") or {}, value,
                                                  f"item:{item_id}:{k}:{name}:{n}")
                            continue
                        out += fields_for(inner.get("answerFormat") or {}, (instance or {}).get(name),
                                          f"item:{item_id}:{k}:{name}")
                continue
            out += fields_for(item.get("answerFormat") or {}, given.get(item_id),
                              f"item:{item_id}")
        return out
    return []


def strip_volatile(value: Any) -> Any:
    """A result without what differs between two runs: dates, the time spent (read off the
    clock like the dates) and the run's UUID."""
    if isinstance(value, dict):
        return {k: strip_volatile(v) for k, v in value.items()
                if k not in ("startDate", "endDate", "taskRunUUID", "timeSpent")}
    if isinstance(value, list):
        return [strip_volatile(v) for v in value]
    return value


def post_form(client: Any, url: str, pairs: List[Tuple[str, str]]) -> Any:
    """POSTs urlencoded fields (repeated names kept in order) without following redirects."""
    return client.post(url, content=urlencode(pairs).encode(), follow_redirects=False,
                       headers={"content-type": "application/x-www-form-urlencoded"})


def walk_http(client: Any, base: str, session_id: str, resume_path: str,
              answers: Mapping[str, Any], max_pages: int = 200) -> Dict[str, Any]:
    """Walks a session through its participant pages with ``answers``, reading the state from
    the API as a script would read the page; returns the final result."""
    for _ in range(max_pages):
        info = client.get(f"{base}/api/sessions/{session_id}").json()
        if info["status"] == "finished":
            return client.get(f"{base}/api/sessions/{session_id}/result").json()
        state = info["state"]
        fields = page_fields(state, answers)
        step = state["step"]["identifier"]
        base_fields = [("_version", str(info["version"])), ("_step", step)]
        if fields is None:
            action = "skip"
            fields = []
        else:
            action = "next"
        r = post_form(client, f"{base}{resume_path}", base_fields + fields + [("action", action)])
        if r.status_code not in (303, 422):
            raise AssertionError(f"{step}: HTTP {r.status_code}: {r.text[:500]}")
        if r.status_code == 422:
            raise AssertionError(f"{step}: answer refused: {r.text[:2000]}")
    raise AssertionError("too many pages")
