"""A study's data as files: CSV with one row per session (one column per answer item and
calculation) and its codebook, CSV in long format (one row per step visit with its start and
end), JSON, and a FHIR Bundle. Columns come from the task definition; values from each
session's result as the engine wrote it (nothing is scored or recoded here)."""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, List, Mapping, Optional

SESSION_COLUMNS = ["session", "participant", "status", "finish_reason", "task_version",
                   "started", "last_activity", "finished", "step"]


@dataclass
class Column:
    name: str           # "step" for a question step, "step.item" for a form item, "calc.NAME"
    kind: str           # "answer" or "calculation"
    step: str
    item: Optional[str]
    text: str
    answer_type: str
    choices: List[Dict[str, Any]] = field(default_factory=list)


def _choices(fmt: Mapping[str, Any]) -> List[Dict[str, Any]]:
    found = []
    for key in ("textChoices", "imageChoices"):
        for c in fmt.get(key) or []:
            if isinstance(c, dict):
                found.append({"value": c.get("value"),
                              "text": c.get("text") or c.get("accessibilityText") or ""})
    for picker in fmt.get("valuePickers") or []:
        if isinstance(picker, dict):
            found.extend(_choices(picker))
    return found


def display_titles(info: Mapping[str, Any]) -> Dict[str, str]:
    """What the engine calls each step (the task info's ``displayTitle``), by identifier."""
    return {str(s.get("identifier")): str(s.get("displayTitle") or "")
            for s in info.get("steps") or [] if isinstance(s, Mapping)}


def codebook(definition: Mapping[str, Any], titles: Mapping[str, str]) -> List[Column]:
    """The data columns of a task, in the order of its steps: each question step (its text: the
    question, else what the engine calls the step, ``titles`` from :func:`display_titles`),
    each form item, then each calculation."""
    columns: List[Column] = []

    def walk(steps: Any, depth: int) -> None:
        if depth > 64 or not isinstance(steps, list):
            return
        for step in steps:
            if not isinstance(step, dict):
                continue
            kind, ident = step.get("type"), str(step.get("identifier"))
            if kind == "section":
                walk(step.get("steps"), depth + 1)
            elif kind == "question":
                fmt = step.get("answerFormat") or {}
                columns.append(Column(ident, "answer", ident, None,
                                      str(step.get("question") or titles.get(ident, "")),
                                      str(fmt.get("type", "")), _choices(fmt)))
            elif kind == "form":
                for item in step.get("formItems") or []:
                    if not isinstance(item, dict) or "identifier" not in item:
                        continue
                    fmt = item.get("answerFormat") or {}
                    columns.append(Column(f"{ident}.{item['identifier']}", "answer", ident,
                                          str(item["identifier"]), str(item.get("text") or ""),
                                          str(fmt.get("type", "")), _choices(fmt)))

    walk(definition.get("steps"), 0)
    for name in (definition.get("calculations") or {}):
        columns.append(Column(f"calc.{name}", "calculation", "", None, name, "calculation"))
    return columns


def _cell(value: Any) -> str:
    """An answer as one CSV cell: choices joined by ";", true/false, JSON for the rest."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float, str)):
        return str(value)
    if isinstance(value, list) and all(isinstance(v, (str, int, float)) and
                                       not isinstance(v, bool) for v in value):
        return ";".join(str(v) for v in value)
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _step_visits(results: Any, depth: int = 0) -> Iterable[Dict[str, Any]]:
    """Every step result in order (sections' steps included): each visit of a step."""
    if depth > 64 or not isinstance(results, list):
        return
    for r in results:
        if not isinstance(r, dict):
            continue
        children = r.get("results") or []
        if children and all(isinstance(c, dict) and "type" not in c and "results" in c
                            for c in children):
            yield from _step_visits(children, depth + 1)  # a section
        else:
            yield r


def answers_of(result: Mapping[str, Any], columns: List[Column]) -> Dict[str, Any]:
    """Column name → answer, the last visit of each step winning."""
    question_steps = {c.step for c in columns if c.kind == "answer" and c.item is None}
    out: Dict[str, Any] = {}
    for visit in _step_visits(result.get("results")):
        step = str(visit.get("identifier"))
        for child in visit.get("results") or []:
            if not isinstance(child, dict) or "answer" not in child:
                continue
            item = str(child.get("identifier"))
            key = step if step in question_steps and item == step else f"{step}.{item}"
            out[key] = child.get("answer")
    for name, value in (result.get("calculations") or {}).items():
        out[f"calc.{name}"] = value
    return out


def _csv(rows: Iterable[List[Any]]) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\r\n")
    for row in rows:
        writer.writerow(row)
    return buf.getvalue()


def _session_cells(s: Mapping[str, Any]) -> List[Any]:
    return [s["id"], s.get("participant") or "", s["status"], s.get("finish_reason") or "",
            s["task_version"], s["created_at"], s["updated_at"], s.get("finished_at") or "",
            s.get("step") or ""]


def wide_csv(sessions: List[Mapping[str, Any]], columns: List[Column]) -> str:
    """One row per session: its facts, then one column per answer item and calculation."""
    def rows() -> Iterable[List[Any]]:
        yield SESSION_COLUMNS + [c.name for c in columns]
        for s in sessions:
            got = answers_of(s["result_json"] or {}, columns)
            yield _session_cells(s) + [_cell(got.get(c.name)) for c in columns]
    return _csv(rows())


def codebook_csv(columns: List[Column]) -> str:
    def rows() -> Iterable[List[Any]]:
        yield ["column", "kind", "step", "item", "text", "type", "values"]
        for c in columns:
            values = " | ".join(f"{_cell(ch['value'])}={ch['text']}" for ch in c.choices)
            yield [c.name, c.kind, c.step, c.item or "", c.text, c.answer_type, values]
    return _csv(rows())


def long_csv(sessions: List[Mapping[str, Any]]) -> str:
    """One row per step visit: when it started and ended, and each answer given in it."""
    def rows() -> Iterable[List[Any]]:
        yield ["session", "participant", "visit", "step", "item", "start", "end", "answer"]
        for s in sessions:
            for n, visit in enumerate(_step_visits((s["result_json"] or {}).get("results")), 1):
                answered = [c for c in visit.get("results") or []
                            if isinstance(c, dict) and "answer" in c]
                base = [s["id"], s.get("participant") or "", n, visit.get("identifier"),
                        visit.get("startDate") or "", visit.get("endDate") or ""]
                if not answered:
                    yield base[:4] + [""] + base[4:] + [""]
                for c in answered:
                    yield base[:4] + [c.get("identifier")] + base[4:] + [_cell(c.get("answer"))]
    return _csv(rows())


def as_json(sessions: List[Mapping[str, Any]]) -> List[Dict[str, Any]]:
    return [{"session": s["id"], "participant": s.get("participant"), "status": s["status"],
             "finishReason": s.get("finish_reason"), "taskVersion": s["task_version"],
             "started": s["created_at"], "lastActivity": s["updated_at"],
             "finished": s.get("finished_at"), "result": s["result_json"]} for s in sessions]
