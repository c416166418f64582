"""The participant pages (server-rendered, Post/Redirect/Get): ``/i/<token>`` (an open link or
a personal invite) and ``/r/<token>`` (a session). Every decision about the task comes from
the engine's state; this module only draws it and turns posted fields into answers."""

from __future__ import annotations

import hashlib
import json
import logging
import smtplib
from urllib.parse import parse_qsl, quote, unquote
from typing import Any, Dict, List, Optional, Tuple

import stepkit
from stepkit.rendering import step_title, time_left
from fastapi import APIRouter, Depends, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from anyio import CapacityLimiter, to_thread
from starlette.concurrency import run_in_threadpool

from . import languages
from .common import absolute, page, secure_cookies, service_of, templates
from .mail import address_ok, send_resume_link
from .security import FORM_TYPES, media_type
from .service import NotFound, Refused, Stale
from .widgets import Fields, parse_answer, widget

log = logging.getLogger("stepkit_web")

NOTICES = {
    "stale": "This page had changed since you opened it (another tab, a second click or the "
             "browser's Back button). Here is where you are now; your saved answers are kept.",
    "early": "The time for this step is not up yet: the page moves on by itself when it is.",
    "emailed": "The address is on its way to the e-mail address you gave (it was not kept).",
}

# An open link remembers the browser's session for this long (a cookie per link).
OPEN_LINK_COOKIE_DAYS = 90


def calculation_label(name: str) -> str:
    """A calculation's name as words ("moodTotal" → "Mood total"): the task format gives a
    calculation no text of its own."""
    import re

    words = re.sub(r"(?<=[a-z0-9])(?=[A-Z])|_+", " ", name).split()
    text = " ".join(w if w.isupper() else w.lower() for w in words)
    return text[:1].upper() + text[1:]


def calculation_text(value: Any) -> str:
    """A calculation's value as the engine's piping writes it: numbers shortest, booleans
    Yes/No, null as "not available"."""
    if value is None:
        return "not available"
    if isinstance(value, bool):
        return "Yes" if value else "No"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, list):
        return ", ".join(calculation_text(v) for v in value)
    return str(value)


async def form_post(request: Request) -> None:
    """A participant's POST: a form from one of this service's own pages."""
    request.app.state.same_origin(request)
    mtype = media_type(request)
    if mtype and mtype not in FORM_TYPES:
        raise Refused(415, {"code": "EMEDIATYPE", "message": "The page sent something "
                            "that is not a form: nothing was saved."})


def link_cookie(token: str) -> str:
    """The cookie an open link keeps its browser's session in (one per link)."""
    return "stepkit-link-" + hashlib.sha256(token.encode()).hexdigest()[:16]


router = APIRouter(include_in_schema=False)



def section_blocks(state: Dict[str, Any], step: Dict[str, Any], blocks: List[Any]) -> List[Any]:
    """A repeating section's step (its entry in the state's ``instances`` lists its ``steps``):
    a heading naming the instance, then the step's fields; on its last step in the last
    instance, "Add another" (which goes on into it) and a Remove button per instance, as the
    engine allows (``canAdd``, ``canRemove``). Buttons, so they work without JavaScript."""
    for name, info in (state.get("instances") or {}).items():
        if not isinstance(info, dict) or not isinstance(info.get("steps"), list):
            continue
        k = int(info.get("current") or 0)
        count = int(info.get("count") or 0)
        titles = info.get("titles") or []
        title = titles[k] if k < len(titles) and titles[k] else f"{name} {k + 1}"
        out: List[Any] = [{"section": f"{title} ({k + 1} of {count})"}] + blocks
        steps = info["steps"]
        if steps and step.get("identifier") == steps[-1] and k == count - 1:
            if info.get("canAdd"):
                out.append({"add": {"value": f"add:{name}", "label": "Add another"}})
            if info.get("canRemove"):
                for j in range(count):
                    label = titles[j] if j < len(titles) and titles[j] else f"{name} {j + 1}"
                    out.append({"add": {"value": f"remove:{name}:{j}", "label": f"Remove {label}"}})
        return out
    return blocks


def group_blocks(item: Dict[str, Any], ident: str, wid: str, given: Any, state: Dict[str, Any],
                 errors: List[Dict[str, Any]], submitted: Optional[Fields]) -> List[Dict[str, Any]]:
    """A repeating group: one fieldset per instance, labelled with the instance's title, its
    items' widgets named ``item:<group>:<k>:<item>``, a Remove button when one may be removed,
    then an Add button when one may be added (plain submit buttons: no JavaScript needed)."""
    block = (state.get("instances") or {}).get(ident) or {}
    count = int(block.get("count") or 0)
    titles = block.get("titles") or []
    instances = given if isinstance(given, list) else []
    noun = str(item.get("text") or ident)
    by_path = {str(e.get("path") or ""): str(e.get("message", "")) for e in errors}
    out: List[Dict[str, Any]] = []
    if block.get("overCount"):
        out.append({"section": f"You said you have {block.get('expectedCount')}: "
                               f"remove {block['overCount']} of these."})
    for k in range(count):
        legend = titles[k] if k < len(titles) and titles[k] else f"{noun} {k + 1}"
        values = instances[k] if k < len(instances) and isinstance(instances[k], dict) else {}
        widgets = []
        for j, inner in enumerate(item["items"]):
            if not isinstance(inner, dict):
                continue
            name = str(inner.get("identifier"))
            if name in hidden_in(block, k):  # its visibleWhen hides it in this instance
                continue
            if is_repeating_question(inner):
                widgets.append(answer_list(inner, ident, k, legend, values.get(name), f"{wid}-{k}-{j}",
                                           by_path, submitted))
                continue
            widgets.append(widget(inner.get("answerFormat") or {}, values.get(name),
                                  f"item:{ident}:{k}:{name}", f"{wid}-{k}-{j}",
                                  label=inner.get("text") or name, detail=inner.get("detailText"),
                                  optional=bool(inner.get("optional")),
                                  placeholder=inner.get("placeholder"),
                                  error=by_path.get(f"{ident}[{k}].{name}"), submitted=submitted))
        out.append({"instance": {"legend": legend, "widgets": widgets, "anchor": instance_anchor(ident, k),
                                 "remove": f"remove:{ident}:{k}" if block.get("canRemove") else None}})
    if block.get("canAdd"):
        out.append({"add": {"value": f"add:{ident}", "label": f"Add another {noun.lower()}"}})
    return out


def is_repeating_question(item: Any) -> bool:
    """A repeating question (several answers to one question: FHIR ``repeats`` on a question):
    ``repeat`` with an ``answerFormat`` and no ``items``."""
    return isinstance(item, dict) and isinstance(item.get("repeat"), dict) and "items" not in item


def answer_slots(given: Any) -> List[Any]:
    """The answers of a repeating question in a group's instance as the page shows them: one
    input per entry the engine holds (an empty one for an answer slot added and not yet
    filled), at least one."""
    return list(given) if isinstance(given, list) and given else [None]


def answer_list(inner: Dict[str, Any], ident: str, k: int, legend: str, given: Any, wid: str,
                by_path: Dict[str, str], submitted: Optional[Fields]) -> Dict[str, Any]:
    """A repeating question inside instance ``k`` of a group: a fieldset of one input per
    answer (``item:<group>:<k>:<item>:<j>``, each labelled with its number), a Remove button
    per answer when there are several, and "Add another answer" below the question's
    ``maxCount``: plain submit buttons (``add-answer:``/``remove-answer:``), no JavaScript."""
    name = str(inner.get("identifier"))
    label = str(inner.get("text") or name)
    slots = answer_slots(given)
    bounds = inner.get("repeat") or {}
    most = bounds.get("maxCount") if isinstance(bounds.get("maxCount"), int) else 1000
    place = f"{quote(ident, safe='')}:{k}:{quote(name, safe='')}"
    items = []
    for n, value in enumerate(slots):
        w = widget(inner.get("answerFormat") or {}, value, f"item:{ident}:{k}:{name}:{n}", f"{wid}-{n}",
                   label=f"{label} ({n + 1})", detail=inner.get("detailText") if n == 0 else None,
                   optional=bool(inner.get("optional")), placeholder=inner.get("placeholder"),
                   error=by_path.get(f"{ident}[{k}].{name}[{n}]"), submitted=submitted)
        items.append({"widget": w, "remove": f"remove-answer:{place}:{n}" if len(slots) > 1 else None,
                      "remove_label": f"Remove {label} ({n + 1}) from {legend}"})
    return {"answers": {"legend": label, "items": items,
                        "error": by_path.get(f"{ident}[{k}].{name}"),
                        "add": f"add-answer:{place}" if len(slots) < most else None,
                        "add_label": f"Add another answer to {label} in {legend}"}}


def question_list(fmt: Dict[str, Any], block: str, prefix: str, given: Any, state: Dict[str, Any], wid: str,
                  label: str, detail: Any, optional: bool, placeholder: Any, error: Optional[str],
                  submitted: Optional[Fields]) -> Dict[str, Any]:
    """A repeating question of its own (a question step or a form item with ``repeat``: a block
    whose instances are its answers): one numbered input per instance the state counts (one
    when it has none yet), named ``<prefix>:<k>``; **Remove** per instance and **Add another
    answer** as the state's ``canRemove``/``canAdd`` allow, which are the block's instance calls
    (``remove:<block>:<k>``, ``add:<block>``): plain submit buttons, no JavaScript."""
    info = (state.get("instances") or {}).get(block) or {}
    count = int(info.get("count") or 0)
    values = given if isinstance(given, list) else []
    items = []
    for n in range(max(count, 1)):
        w = widget(fmt, values[n] if n < len(values) else None, f"{prefix}:{n}", f"{wid}-{n}",
                   label=f"{label} ({n + 1})", detail=detail if n == 0 else None, optional=optional,
                   placeholder=placeholder, error=None, submitted=submitted)
        items.append({"widget": w, "remove": f"remove:{block}:{n}" if info.get("canRemove") and n < count else None,
                      "remove_label": f"Remove {label} ({n + 1})"})
    return {"answers": {"legend": label, "items": items, "error": error,
                        "add": f"add:{block}" if info.get("canAdd") else None,
                        "add_label": f"Add another answer to {label}"}}


def question_list_answer(fmt: Dict[str, Any], block: str, prefix: str, state: Dict[str, Any],
                         fields: Fields) -> Optional[List[Any]]:
    """A repeating question's answer as its page posts it: one entry per input (and any further
    one posted); None when the block has no instance and nothing was typed."""
    count = int(((state.get("instances") or {}).get(block) or {}).get("count") or 0)
    slots = max(count, 1)
    while slots < 1000 and fields.has(f"{prefix}:{slots}"):
        slots += 1
    listed = [parse_answer(fmt, fields, f"{prefix}:{n}") for n in range(slots)]
    return listed if count or any(v is not None for v in listed) else None


def hidden_in(block: Dict[str, Any], k: int) -> List[Any]:
    """The items the state says instance ``k`` hides (its items' per-instance visibleWhen)."""
    hidden = block.get("hidden") or []
    return hidden[k] if k < len(hidden) and isinstance(hidden[k], list) else []


def group_answer(item: Dict[str, Any], ident: str, state: Dict[str, Any], fields: Fields) -> List[Any]:
    """A repeating group's answer as the page posts it: one object per instance shown, without
    the items hidden there (not on the page; what they hold stays as it is)."""
    block = (state.get("instances") or {}).get(ident) or {}
    count = int(block.get("count") or 0)
    given = (state.get("answer") or {}).get(ident) if isinstance(state.get("answer"), dict) else None
    stored = given if isinstance(given, list) else []
    out: List[Any] = []
    for k in range(count):
        instance: Dict[str, Any] = {}
        held = stored[k] if k < len(stored) and isinstance(stored[k], dict) else {}
        for inner in item["items"]:
            if not isinstance(inner, dict) or inner.get("identifier") in hidden_in(block, k):
                continue
            name = str(inner.get("identifier"))
            fmt = inner.get("answerFormat") or {}
            if is_repeating_question(inner):
                # One answer per input the page showed (and any further one it posts, as a
                # script filling the page may); none typed where it held none: left out.
                slots = len(answer_slots(held.get(name)))
                while slots < 1000 and fields.has(f"item:{ident}:{k}:{name}:{slots}"):
                    slots += 1
                listed = [parse_answer(fmt, fields, f"item:{ident}:{k}:{name}:{n}") for n in range(slots)]
                if any(v is not None for v in listed) or held.get(name):
                    instance[name] = listed
                continue
            instance[name] = parse_answer(fmt, fields, f"item:{ident}:{k}:{name}")
        out.append(instance)
    return out


def render_step(request: Request, token: str, row: Any, state: Dict[str, Any],
                errors: List[Dict[str, Any]], submitted: Optional[Fields],
                notice: Optional[str], status: int = 200) -> Response:
    from .games import game_view  # games.py builds on this module's form checks

    service = service_of(request)
    step = state.get("step") or {}
    nav = state.get("navigation") or {}
    by_item: Dict[str, str] = {}

    def field_of(e: Dict[str, Any]) -> Optional[str]:
        """The field an error belongs to ("" the question): a required answer missing at
        completion names its step, and one on another step belongs to no field here."""
        if "step" in e:
            return str(e.get("item") or "") if e["step"] == step.get("identifier") else None
        return str(e.get("path") or "")

    for e in errors:
        path = field_of(e) or ""
        if path and path not in by_item:
            by_item[path] = str(e.get("message", ""))
    blocks: List[Dict[str, Any]] = []
    answer = state.get("answer")
    kind = step.get("type")
    if "formItems" in step:
        kind = "form"  # a consent review is a form StepKit writes
    targets: Dict[str, str] = {}
    if kind == "question" and isinstance(step.get("repeat"), dict):
        label = step.get("question") or step_title(step)
        msg = next((str(e.get("message")) for e in errors if field_of(e) is not None), None)
        blocks.append(question_list(step.get("answerFormat") or {}, str(step.get("identifier")), "answer", answer,
                                    state, "q", str(label), None, bool(step.get("optional")),
                                    step.get("placeholder"), msg, submitted))
        targets[""] = "q-0"
    elif kind == "question":
        label = step.get("question") or step_title(step)  # else the engine's displayTitle
        msg = next((str(e.get("message")) for e in errors if field_of(e) is not None), None)
        w = widget(step.get("answerFormat") or {}, answer, "answer", "q", label=label,
                   detail=None, optional=bool(step.get("optional")),
                   placeholder=step.get("placeholder"), error=msg, submitted=submitted)
        blocks.append(w)
        targets[""] = "q"
    elif kind in ("form", "page"):
        # A page's sub-steps come as form items (docs/task-format.md, "Page steps").
        visible = state.get("visibleItems")
        visible = set(visible) if isinstance(visible, list) else None
        values = answer if isinstance(answer, dict) else {}
        for i, item in enumerate(step.get("formItems") or []):
            if "sectionTitle" in item and "identifier" not in item:
                blocks.append({"section": item["sectionTitle"]})
                continue
            ident = item.get("identifier")
            if visible is not None and ident not in visible:
                continue
            wid = f"q{i}"
            targets[str(ident)] = wid
            if isinstance(item.get("repeat"), dict) and isinstance(item.get("items"), list):
                blocks += group_blocks(item, str(ident), wid, values.get(ident), state, errors, submitted)
                continue
            if is_repeating_question(item):
                blocks.append(question_list(item.get("answerFormat") or {}, str(ident), f"item:{ident}",
                                            values.get(ident), state, wid, str(item.get("text") or ident),
                                            item.get("detailText"), bool(item.get("optional")),
                                            item.get("placeholder"), by_item.get(str(ident)), submitted))
                targets[str(ident)] = f"{wid}-0"
                continue
            blocks.append(widget(item.get("answerFormat") or {}, values.get(ident),
                                 f"item:{ident}", wid, label=item.get("text") or "",
                                 detail=item.get("detailText"),
                                 optional=bool(item.get("optional")),
                                 placeholder=item.get("placeholder"),
                                 error=by_item.get(str(ident)), submitted=submitted))
    blocks = section_blocks(state, step, blocks)
    if notice is None and not errors and not nav.get("hasNextStep", True):
        # The page that would finish: what is still missing (a task that checks required
        # answers at completion lets earlier pages be left without them), before Done.
        missing = [str(m.get("message")) for m in state.get("missingAnswers") or []
                   if isinstance(m, dict) and m.get("step") != step.get("identifier")]
        if missing:
            notice = "Before you finish: " + " ".join(missing)
    summary = []
    for e in errors:
        field = field_of(e)
        target = None if field is None else (targets.get(field) or (targets.get("") if kind == "question" else None))
        summary.append({"message": e.get("message", ""), "target": target})
    progress = state.get("progress") or {}
    progress_text = None
    if progress.get("current") and progress.get("total") and kind not in ("completion",):
        progress_text = f"Step {progress['current']} of about {progress['total']}"
    active = None
    if state.get("active"):
        a = state["active"]
        deadline_ms = ""
        if state.get("nextDeadline"):
            deadline_ms = max(0, stepkit.parse_iso8601_ms(state["nextDeadline"]) - service.now())
        remaining = a.get("remaining")
        active = {"status": a.get("status"), "duration": a.get("duration"),
                  "remaining": int(remaining + 0.999) if isinstance(remaining, (int, float)) else "",
                  "deadline_ms": deadline_ms, "kind": kind}
    game = game_view(state, token, service.input_token(row), service.now())
    if game is not None and active is not None:
        active["deadline_ms"] = ""  # a game's script ticks its own moments (games.py)
    limits = None
    left = time_left(state)  # the task's and the step's time limits (the state's timeLimits)
    if left:
        deadline_ms = ""
        if state.get("nextDeadline"):
            deadline_ms = max(0, stepkit.parse_iso8601_ms(state["nextDeadline"]) - service.now())
        limits = {"text": left, "deadline_ms": deadline_ms}
    study = service.study(row.task_identifier)
    heading = step_title(step)  # the engine's displayTitle
    calculations = [{"name": name, "label": calculation_label(name),
                     "value": calculation_text(value)}
                    for name, value in (step.get("calculations") or {}).items()]
    has_visibility = kind in ("form", "page") and any(
        isinstance(it, dict) and it.get("visibleWhen") for it in step.get("formItems") or [])
    review = review_entries(state.get("review")) if kind == "review" else None
    if notice is None and state.get("returnsToReview"):
        notice = "You are changing an answer: Next brings you back to the review."
    language = state.get("language") or {}
    ctx = {
        "languages": languages.switch(language.get("available") or [], language.get("text")),
        "lang": language.get("text") or "en",
        "page_title": (("Error: " if errors else "") + f"{heading} – {study['title']}"),
        "task_name": study["title"], "heading": heading, "step": step,
        "blocks": blocks, "errors": summary, "notice": notice, "progress": progress_text,
        "nav": nav, "version": row.version, "action_url": f"/r/{token}",
        "next_label": "Next" if nav.get("hasNextStep", True) else "Done",
        "active": active, "limits": limits, "can_update": has_visibility, "calculations": calculations,
        "review": review,
        "game": game,
        "resume_url": absolute(request, f"/r/{token}"),
        "can_email": request.app.state.smtp is not None,
    }
    return templates.TemplateResponse(request, "step.html", ctx, status_code=status)


def review_entries(review: Any) -> List[Dict[str, Any]]:
    """A review step's list as the page shows it: each step the engine lists (its
    ``displayTitle``; a repeating section's step titled by its instance, its Change going back
    to that instance), each answer as the engine's ``displayText``, labelled when the step has
    several answers or the label is not the title. A repeating block's answers are grouped per
    instance under the instance's title, each instance with its own Change button (``rows``:
    answers and instances in the engine's order)."""
    entries: List[Dict[str, Any]] = []
    for entry in (review or {}).get("steps") or []:
        if not isinstance(entry, dict):
            continue
        step = str(entry.get("step"))
        title = str(entry.get("displayTitle") or entry.get("step"))
        edit = f"edit:{step}"
        if isinstance(entry.get("instance"), int):  # a repeating section's step, in one instance
            section = str(entry.get("section"))
            title = f"{review_instance_title(entry, section)} — {title}"
            edit = instance_edit(step, section, entry["instance"])
        answers = [a for a in entry.get("answers") or [] if isinstance(a, dict)]
        rows: List[Dict[str, Any]] = []
        groups: Dict[Tuple[str, int], Dict[str, Any]] = {}
        for a in answers:
            label = str(a.get("label") or a.get("identifier"))
            text = a.get("displayText")
            shown = {"label": label if len(answers) > 1 or label != title else None,
                     "text": "No answer" if text is None else str(text)}
            if isinstance(a.get("instance"), int):
                place = (str(a.get("block")), a["instance"])
                if place not in groups:
                    groups[place] = {"title": review_instance_title(a, place[0]), "answers": [],
                                     "edit": instance_edit(step, place[0], place[1]),
                                     "block": place[0], "index": place[1]}
                    rows.append({"instance": groups[place]})
                groups[place]["answers"].append(dict(shown, label=label))
                continue
            rows.append({"answer": shown})
        entries.append({"step": step, "title": title, "rows": rows, "edit": edit,
                        "instance": entry.get("instance"), "skipped": bool(entry.get("skipped"))})
    return entries


def review_instance_title(entry: Dict[str, Any], block: str) -> str:
    """An instance's title as the engine gives it, or the block's name and its number."""
    title = entry.get("instanceTitle")
    return str(title) if title else f"{block} {int(entry.get('instance') or 0) + 1}"


def instance_edit(step: str, block: str, index: int) -> str:
    """The Change button's action for one instance (``stepkit_session_review_edit_instance``):
    ``edit-instance:<step>:<block>:<index>``, the names percent-encoded (":" included)."""
    return f"edit-instance:{quote(step, safe='')}:{quote(block, safe='')}:{index}"


def finished_page(request: Request, row: Any) -> Response:
    title = service_of(request).study(row.task_identifier)["title"]
    if row.finish_reason == "completed":
        closing = json.loads(row.closing) if row.closing else {}
        texts = [closing[k] for k in ("text", "detailText") if closing.get(k)]
        return page(request, 200, closing.get("title") or "Thank you", *texts,
                    "Your answers have been saved. You may close this page.", task_name=title)
    return page(request, 200, "This session has ended",
                "Your answers up to the end are saved.", task_name=title)


@router.get("/r/{token}", response_class=HTMLResponse)
def resume_page(request: Request, token: str, notice: str = "", error: str = "") -> Response:
    service = service_of(request)
    row = service.session_for_token(token)
    if row.status == "finished":
        return finished_page(request, row)
    state = service.state_of(row)
    errors = list(state.get("problems") or []) if error == "1" else []
    return render_step(request, token, row, state, errors, None, NOTICES.get(notice))


# Page POSTs run in at most this many threads at once per worker (the others wait their turn,
# in order). Each one's engine calls release the GIL and take it back many times: with dozens
# of POSTs in threads at once (anyio's default is 40), the worker spent about a third more CPU
# per POST on that hand-over than on the POST itself. A few threads still keep both cores and
# the database's waits (an fsync, a lock) busy.
PAGE_THREADS = 4


def page_limiter(request: Request) -> CapacityLimiter:
    limiter = getattr(request.app.state, "page_limiter", None)
    if limiter is None:  # made in the event loop, on first use
        limiter = request.app.state.page_limiter = CapacityLimiter(PAGE_THREADS)
    return limiter


async def page_fields_of(request: Request) -> Fields:
    """A page POST's fields, after :func:`form_post`'s checks. The page's own form is
    urlencoded: parsed here as Starlette's form parser would (names and values read as
    Latin-1, then percent-decoded as UTF-8; blank values kept; at most 1,000 fields), without
    its parser's per-byte callbacks; a multipart body goes through Starlette."""
    await form_post(request)
    if media_type(request) == "application/x-www-form-urlencoded":
        body = await request.body()
        try:
            pairs = parse_qsl(body.decode("latin-1"), keep_blank_values=True,
                              max_num_fields=MAX_FIELDS)
        except ValueError:
            raise Refused(400, {"code": "EINVAL", "message": "The form has too many fields: "
                                "nothing was saved."})
        return Fields(pairs)
    form = await request.form(max_fields=MAX_FIELDS)
    return Fields(list(form.multi_items()))


MAX_FIELDS = 1000  # Starlette's default for a form


async def submit_page(request: Request) -> Response:
    """A participant's page (``POST /r/{token}``): a plain Starlette route, the page's hot
    path: no FastAPI dependency or parameter solving (its check, :func:`form_post`, is
    called first thing), the fields parsed by :func:`page_fields_of`, the work in a page
    thread."""
    token = request.path_params["token"]
    fields = await page_fields_of(request)
    return await to_thread.run_sync(_submit, request, token, fields,
                                    limiter=page_limiter(request))


router.add_route("/r/{token}", submit_page, methods=["POST"], include_in_schema=False)


def _submit(request: Request, token: str, fields: Fields) -> Response:
    service = service_of(request)
    row = service.session_for_token(token)
    action = fields.get("action")
    if action not in ("next", "back", "skip", "save", "start", "tick") and not (
            isinstance(action, str) and action.startswith(("language:", "edit:", "edit-instance:", "add:", "remove:",
                                                            "add-answer:", "remove-answer:"))):
        raise Refused(400, {"code": "EINVAL", "message": "The form was incomplete or "
                            "changed: nothing was saved. Go back to the page and try again."})

    def answer_of(state: Dict[str, Any]) -> Any:
        step = state.get("step") or {}
        if step.get("reportedByHost") is True:
            return report_of(step, fields, action)
        if step.get("type") == "question" and isinstance(step.get("repeat"), dict):
            listed = question_list_answer(step.get("answerFormat") or {}, str(step.get("identifier")),
                                          "answer", state, fields)
            return listed, listed is not None
        if step.get("type") == "question":
            return parse_answer(step.get("answerFormat") or {}, fields, "answer"), True
        if "formItems" in step:  # a form, a page or a consent review
            visible = state.get("visibleItems")
            answer = {}
            for item in step.get("formItems") or []:
                ident = item.get("identifier")
                if ident is None or (isinstance(visible, list) and ident not in visible):
                    continue
                if isinstance(item.get("repeat"), dict) and isinstance(item.get("items"), list):
                    answer[ident] = group_answer(item, str(ident), state, fields)
                    continue
                if is_repeating_question(item):
                    listed = question_list_answer(item.get("answerFormat") or {}, str(ident),
                                                  f"item:{ident}", state, fields)
                    if listed is not None:
                        answer[ident] = listed
                    continue
                answer[ident] = parse_answer(item.get("answerFormat") or {}, fields,
                                             f"item:{ident}")
            return answer, bool(answer)
        return None, False

    try:
        outcome = service.act(row, fields.get("_version"), fields.get("_step"), action,
                              answer_of)
    except Stale:
        return RedirectResponse(f"/r/{token}?notice=stale", status_code=303)
    if outcome.refused:
        return render_step(request, token, row, outcome.state, outcome.errors, fields, None,
                           status=422)
    if outcome.errors:
        return RedirectResponse(f"/r/{token}?error=1", status_code=303)
    running = (outcome.state.get("active") or {}).get("status") == "running"
    if action == "tick" and running and outcome.state.get("step", {}).get("identifier") \
            == fields.get("_step"):
        return RedirectResponse(f"/r/{token}?notice=early", status_code=303)
    parts = action.split(":")
    if action.startswith("edit-instance:") and len(parts) == 4:
        # Changing one instance of a group from the review: the page opens at its fieldset.
        return RedirectResponse(f"/r/{token}#{instance_anchor(unquote(parts[2]), int(parts[3]))}", status_code=303)
    return RedirectResponse(f"/r/{token}", status_code=303)


def instance_anchor(block: str, k: int) -> str:
    """The id of a repeating group's instance fieldset (the block's name percent-encoded)."""
    return f"instance-{quote(block, safe='')}-{k}"


def report_of(step: Dict[str, Any], fields: Fields, action: str) -> Tuple[Dict[str, Any], bool]:
    """The report a page of a step the host reports carries (``stepkit_session_report``): a
    signature typed (the keyboard's way) or drawn on the pad (SVG path data the script writes
    into a hidden field), a table or document read, a video watched, the permissions granted,
    a web page's message. Nothing given: no report (the engine then says what is missing)."""
    kind = step.get("type")
    if kind == "signature":
        typed = (fields.get("signature.typed") or "").strip()
        drawn = (fields.get("signature.path") or "").strip()
        if typed:
            return {"typedName": typed}, True
        if drawn:
            return {"path": drawn}, True
        return {}, False
    if kind in ("table", "pdfViewer"):
        return {"viewed": True}, action == "next"
    if kind == "videoInstruction":
        return {"playbackCompleted": fields.get("video.completed") == "1"}, action == "next"
    if kind == "webView":
        return {"message": fields.get("web.message")}, fields.has("web.message")
    if kind == "requestPermissions":
        granted = set(fields.getall("permission"))
        asked = [str(p) for p in step.get("permissions") or []]
        return {"granted": [p for p in asked if p in granted], "denied": [p for p in asked if p not in granted]}, action == "next"
    return {}, False  # an image capture: not offered by this service (see web/README.md)


def participant_language(request: Request, task_identifier: str) -> Optional[str]:
    """The language a new session opens in: the best of the task's languages for the
    browser's Accept-Language (languages.choose)."""
    service = service_of(request)
    return languages.choose(request.headers.get("accept-language"),
                            service.task_languages(task_identifier), service.message_languages())


def _open_session(request: Request, token: str, task_identifier: str) -> Optional[str]:
    """The resume token of the session this browser started from this open link, if it is
    still open."""
    kept = request.cookies.get(link_cookie(token))
    if not kept:
        return None
    try:
        row = service_of(request).session_for_token(kept)
    except NotFound:
        return None
    if row.task_identifier != task_identifier or row.status != "open":
        return None
    return kept


@router.get("/i/{token}", response_class=HTMLResponse)
def invite_page(request: Request, token: str) -> Response:
    service = service_of(request)
    link = service.link(token)
    if link["kind"] == "personal" and link["session_id"] is not None:
        # A personal invite names one session: the same link resumes it, finished or not.
        return RedirectResponse(f"/r/{token}", status_code=303)
    study = service.study(link["task_identifier"])
    service.invite_task(token)  # the task must have a published version
    returning = None
    if link["kind"] == "invite":
        kept = _open_session(request, token, link["task_identifier"])
        if kept:
            returning = f"/r/{kept}"
    return templates.TemplateResponse(request, "start.html", {
        "page_title": study["title"], "task_name": study["title"], "study": study,
        "form_action": f"/i/{token}", "returning": returning,
        "personal": link["kind"] == "personal"})


@router.post("/i/{token}", dependencies=[Depends(form_post)])
async def invite_start(request: Request, token: str) -> Response:
    form = await request.form()
    fresh = form.get("fresh") == "1"
    return await run_in_threadpool(_invite_start, request, token, fresh)


def _invite_start(request: Request, token: str, fresh: bool) -> Response:
    service = service_of(request)
    link = service.link(token)  # an unknown link is a 404, and takes no token
    if link["kind"] == "personal":
        # one session per invite, however many clicks
        created = service.accept_invite(token, participant_language(request, link["task_identifier"]))
        return RedirectResponse(created["resumePath"], status_code=303)
    if not fresh:
        kept = _open_session(request, token, link["task_identifier"])
        if kept:  # this browser's session from this link: no second one without asking
            return RedirectResponse(f"/r/{kept}", status_code=303)
    client = request.client.host if request.client else "unknown"
    state = request.app.state
    for buckets, key, who in ((state.invite_buckets, token, "this link"),
                              (state.client_buckets, client, "your address")):
        wait = buckets.take(key)
        if wait is not None:
            raise Refused(429, {"code": "ERATE", "message": f"Too many sessions were "
                                f"started from {who} just now. Please try again in a "
                                f"minute."}, retry_after=max(1, int(wait + 0.999)))
    created = service.accept_invite(token, participant_language(request, link["task_identifier"]))
    response = RedirectResponse(created["resumePath"], status_code=303)
    response.set_cookie(link_cookie(token), created["token"],
                        max_age=OPEN_LINK_COOKIE_DAYS * 86400, path="/i/", httponly=True,
                        samesite="lax", secure=secure_cookies(request))
    return response


@router.post("/r/{token}/email", dependencies=[Depends(form_post)])
async def email_link(request: Request, token: str) -> Response:
    """Sends the resume address to the participant (only when the host configured SMTP)."""
    form = await request.form()
    given = form.get("email")
    return await run_in_threadpool(_email_link, request, token,
                                   given if isinstance(given, str) else "")


def _email_link(request: Request, token: str, given: str) -> Response:
    settings = request.app.state.smtp
    if settings is None:
        raise NotFound("e-mail is not configured")
    service = service_of(request)
    row = service.session_for_token(token)
    to = address_ok(given)
    if to is None:
        raise Refused(400, {"code": "EINVAL", "message": "That is not an e-mail address "
                            "(like name@example.org): nothing was sent."})
    client = request.client.host if request.client else "unknown"
    state = request.app.state
    for buckets, key in ((state.mail_buckets, row.id), (state.client_buckets, client)):
        wait = buckets.take(key)
        if wait is not None:
            raise Refused(429, {"code": "ERATE", "message": "Too many e-mails were asked for "
                                "just now: nothing was sent. Please copy the address instead."},
                          retry_after=max(1, int(wait + 0.999)))
    try:
        send_resume_link(settings, to, service.study(row.task_identifier)["title"] or "",
                         absolute(request, f"/r/{token}"))
    except (OSError, smtplib.SMTPException) as error:
        log.error("could not send a resume link: %s", error.__class__.__name__)
        raise Refused(503, {"code": "EUNAVAILABLE", "message": "The e-mail could not be sent "
                            "just now. Please copy the address instead."})
    return RedirectResponse(f"/r/{token}?notice=emailed", status_code=303)
