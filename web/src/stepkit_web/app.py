"""The FastAPI application: participant pages (server-rendered, Post/Redirect/Get, here) and
the host's JSON API (api.py, behind the API key), with the security headers, body limits and
same-origin rule of security.py and limits.py. Build one with :func:`create_app`."""

from __future__ import annotations

import json
import logging
import re
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional

import sqlalchemy as sa
import stepkit
from fastapi import Depends, FastAPI, Request
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates
from starlette.concurrency import run_in_threadpool

from .api import build_router
from .db import Store, Timeouts, make_engine
from .limits import BodyLimit, MAX_BODY, PrivatePages
from .migrate import upgrade
from .ratelimit import Rate, TokenBuckets
from .security import FORM_TYPES, ApiKey, SameOrigin, SecurityHeaders, media_type
from .service import Damaged, NotFound, Refused, Service, Stale
from .timing import ServerTiming
from .widgets import Fields, parse_answer, widget

log = logging.getLogger("stepkit_web")
_HERE = Path(__file__).resolve().parent

NOTICES = {
    "stale": "This page had changed since you opened it (another tab, a second click or the "
             "browser's Back button). Here is where you are now; your saved answers are kept.",
}


DEFAULT_BASE_URL = "http://127.0.0.1:8000"
# Session creation through one invite link, and by one client address (per worker).
INVITE_RATE = Rate(burst=60, per_ms=1000)
CLIENT_RATE = Rate(burst=10, per_ms=6000)


def calculation_label(name: str) -> str:
    """A calculation's name as words ("moodTotal" → "Mood total"): the task format gives a
    calculation no text of its own."""
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


def create_app(db_url: str, integrity_key: str, *, api_key: Optional[str] = None,
               open_api: bool = False, base_url: str = DEFAULT_BASE_URL,
               clock: Optional[Callable[[], int]] = None, time_source: Optional[str] = None,
               migrate: bool = True, timeouts: Timeouts = Timeouts(), pool_size: int = 10,
               max_overflow: int = 5, task_cache_size: int = 32,
               invite_rate: Rate = INVITE_RATE, client_rate: Rate = CLIENT_RATE,
               rate_clock: Optional[Callable[[], int]] = None,
               body_timeout: float = 30.0) -> FastAPI:
    """The service. ``api_key``: the host API's key (without one the API refuses every call,
    unless ``open_api`` opens it to anyone: loopback only, see cli.py). ``base_url``: where
    participants reach the service; every link is built from it. ``clock``/``time_source``:
    see :class:`stepkit_web.service.Service`. ``rate_clock``: the token buckets' clock (ms)."""
    engine = make_engine(db_url, pool_size=pool_size, timeouts=timeouts,
                         max_overflow=max_overflow)
    if migrate:
        upgrade(engine)
    service = Service(Store(engine), integrity_key, clock, time_source=time_source,
                      task_cache_size=task_cache_size)
    templates = Jinja2Templates(directory=str(_HERE / "templates"))
    app = FastAPI(title="StepKit web", version="0.1.0", docs_url=None, redoc_url=None,
                  description="Register StepKit tasks, create sessions and invite links, read "
                              "states and results. Participant pages are under /r/ and /i/. "
                              "Every call needs `Authorization: Bearer KEY`.")
    app.state.service = service
    app.state.base_url = base_url
    invite_buckets = TokenBuckets(invite_rate, rate_clock)
    client_buckets = TokenBuckets(client_rate, rate_clock)
    same_origin = SameOrigin(base_url)
    app.mount("/static", StaticFiles(directory=str(_HERE / "static")), name="static")
    app.add_middleware(BodyLimit, limit=MAX_BODY, read_timeout=body_timeout)
    app.add_middleware(ServerTiming)
    app.add_middleware(PrivatePages)
    app.add_middleware(SecurityHeaders)

    def is_api(request: Request) -> bool:
        return request.url.path.startswith("/api/")

    def page(request: Request, status: int, heading: str, *paragraphs: str,
             form_action: Optional[str] = None, form_button: str = "",
             task_name: str = "") -> HTMLResponse:
        return templates.TemplateResponse(request, "message.html", {
            "page_title": heading, "heading": heading, "paragraphs": paragraphs,
            "form_action": form_action, "form_button": form_button, "task_name": task_name,
        }, status_code=status)

    # -- errors: every failure has its page or JSON, none is a 500 -----------------------------

    @app.exception_handler(NotFound)
    async def _not_found(request: Request, exc: NotFound) -> Response:
        if is_api(request):
            return JSONResponse({"code": "ENOTFOUND", "message": str(exc)}, status_code=404)
        return page(request, 404, "Page not found",
                    "This link is not valid, or it is no longer active.",
                    "If you were given a link by a study team, please ask them for a new one.")

    @app.exception_handler(Refused)
    async def _refused(request: Request, exc: Refused) -> Response:
        headers = {"Retry-After": str(exc.retry_after)} if exc.retry_after else None
        if exc.status == 401:
            headers = {"WWW-Authenticate": "Bearer"}
        if is_api(request):
            return JSONResponse(exc.error, status_code=exc.status, headers=headers)
        response = page(request, exc.status, "This request could not be handled",
                        str(exc.error.get("message", "")))
        if headers:
            response.headers.update(headers)
        return response

    @app.exception_handler(Damaged)
    async def _damaged(request: Request, exc: Damaged) -> Response:
        if is_api(request):
            return JSONResponse({"code": "EDAMAGED", "message": str(exc),
                                 "error": exc.error.error}, status_code=409)
        return page(request, 409, "This session cannot be opened",
                    "Its saved data did not pass the integrity check, so it was not used.",
                    "Nothing was changed or deleted. The study team has been told; please "
                    "contact them.")

    @app.exception_handler(sa.exc.DataError)
    async def _bad_value(request: Request, exc: sa.exc.DataError) -> Response:
        # A value the database refuses (PostgreSQL: a NUL in text): the request's fault.
        log.warning("the database refused a value: %s", exc.orig)
        if is_api(request):
            return JSONResponse({"code": "EINVAL", "message": "A value in the request is not "
                                 "valid."}, status_code=400)
        return page(request, 400, "This request could not be handled",
                    "A value in the request is not valid.")

    @app.exception_handler(RecursionError)
    async def _too_deep(request: Request, exc: RecursionError) -> Response:
        if is_api(request):
            return JSONResponse({"code": "EPARSE", "message": "The request is nested too "
                                 "deeply."}, status_code=400)
        return page(request, 400, "This request could not be handled",
                    "The request is nested too deeply.")

    @app.exception_handler(sa.exc.TimeoutError)  # no free connection in the pool in time
    @app.exception_handler(sa.exc.DBAPIError)
    async def _db_down(request: Request, exc: Exception) -> Response:
        log.error("database error: %s", exc.__class__.__name__, exc_info=exc)
        if is_api(request):
            return JSONResponse({"code": "EUNAVAILABLE",
                                 "message": "The database is not available."}, status_code=503,
                                headers={"Retry-After": "10"})
        return page(request, 503, "Please try again in a moment",
                    "The service cannot reach its database right now.",
                    "Your answers up to the last page you completed are saved. Reload this "
                    "page in a moment to continue where you left off.")

    @app.exception_handler(stepkit.StepKitError)
    async def _engine_error(request: Request, exc: stepkit.StepKitError) -> Response:
        log.error("engine error: %s", exc.error)
        if is_api(request):
            return JSONResponse(exc.error, status_code=400)
        return page(request, 400, "This request could not be handled", exc.message)

    # -- health ---------------------------------------------------------------------------------

    @app.get("/healthz", include_in_schema=False)
    def healthz() -> Dict[str, Any]:
        service.store.ping()
        return {"ok": True}

    @app.get("/", response_class=HTMLResponse, include_in_schema=False)
    def index(request: Request) -> Response:
        return page(request, 200, "StepKit web",
                    "Participants open the link their study team gave them.")

    # -- participant pages ----------------------------------------------------------------------

    def render_step(request: Request, token: str, row_version: int, state: Dict[str, Any],
                    errors: List[Dict[str, Any]], submitted: Optional[Fields],
                    notice: Optional[str], status: int = 200) -> Response:
        step = state.get("step") or {}
        nav = state.get("navigation") or {}
        by_item: Dict[str, str] = {}
        for e in errors:
            path = str(e.get("path") or "")
            if path and path not in by_item:
                by_item[path] = str(e.get("message", ""))
        blocks: List[Dict[str, Any]] = []
        answer = state.get("answer")
        kind = step.get("type")
        targets: Dict[str, str] = {}
        if kind == "question":
            label = step.get("question") or step.get("title") or step.get("identifier")
            msg = next((str(e.get("message")) for e in errors), None)
            w = widget(step.get("answerFormat") or {}, answer, "answer", "q", label=label,
                       detail=None, optional=bool(step.get("optional")),
                       placeholder=step.get("placeholder"), error=msg, submitted=submitted)
            blocks.append(w)
            targets[""] = "q"
        elif kind == "form":
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
                blocks.append(widget(item.get("answerFormat") or {}, values.get(ident),
                                     f"item:{ident}", wid, label=item.get("text") or ident,
                                     detail=item.get("detailText"),
                                     optional=bool(item.get("optional")),
                                     placeholder=item.get("placeholder"),
                                     error=by_item.get(str(ident)), submitted=submitted))
        summary = []
        for e in errors:
            path = str(e.get("path") or "")
            target = targets.get(path) or (targets.get("") if kind == "question" else None)
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
                now = service.now()
                deadline_ms = max(0, stepkit.parse_iso8601_ms(state["nextDeadline"]) - now)
            remaining = a.get("remaining")
            active = {"status": a.get("status"), "duration": a.get("duration"),
                      "remaining": int(remaining + 0.999) if isinstance(remaining, (int, float)) else "",
                      "deadline_ms": deadline_ms}
        heading = step.get("title") or step.get("question") or step.get("identifier")
        # Scores and other calculations the step asks to show, as the state gives them.
        calculations = [{"name": name, "label": calculation_label(name),
                         "value": calculation_text(value)}
                        for name, value in (step.get("calculations") or {}).items()]
        has_visibility = kind == "form" and any(
            isinstance(it, dict) and it.get("visibleWhen") for it in step.get("formItems") or [])
        ctx = {
            "page_title": (("Error: " if errors else "") + f"{heading} – {state.get('taskIdentifier')}"),
            "task_name": state.get("taskIdentifier"), "heading": heading, "step": step,
            "blocks": blocks, "errors": summary, "notice": notice, "progress": progress_text,
            "nav": nav, "version": row_version, "action_url": f"/r/{token}",
            "next_label": "Next" if nav.get("hasNextStep", True) else "Done",
            "active": active, "can_update": has_visibility, "calculations": calculations,
        }
        return templates.TemplateResponse(request, "step.html", ctx, status_code=status)

    def finished_page(request: Request, row: Any) -> Response:
        reason = row.finish_reason
        if reason == "completed":
            closing = json.loads(row.closing) if row.closing else {}
            texts = [closing[k] for k in ("text", "detailText") if closing.get(k)]
            return page(request, 200, closing.get("title") or "Thank you", *texts,
                        "Your answers have been saved. You may close this page.",
                        task_name=row.task_identifier)
        return page(request, 200, "This session has ended",
                    "Your answers up to the end are saved.", task_name=row.task_identifier)

    @app.get("/r/{token}", response_class=HTMLResponse, include_in_schema=False)
    def resume_page(request: Request, token: str, notice: str = "", error: str = "") -> Response:
        row = service.session_for_token(token)
        if row.status == "finished":
            return finished_page(request, row)
        state = service.state_of(row)
        errors = list(state.get("problems") or []) if error == "1" else []
        return render_step(request, token, row.version, state, errors, None,
                           NOTICES.get(notice))

    def form_post(request: Request) -> None:
        """A participant's POST: a form from one of this service's own pages."""
        same_origin(request)
        mtype = media_type(request)
        if mtype and mtype not in FORM_TYPES:
            raise Refused(415, {"code": "EMEDIATYPE", "message": "The page sent something "
                                "that is not a form: nothing was saved."})

    @app.post("/r/{token}", include_in_schema=False, dependencies=[Depends(form_post)])
    async def submit_page(request: Request, token: str) -> Response:
        form = await request.form()
        fields = Fields(list(form.multi_items()))
        return await run_in_threadpool(_submit, request, token, fields)

    def _submit(request: Request, token: str, fields: Fields) -> Response:
        row = service.session_for_token(token)
        action = fields.get("action")
        if action not in ("next", "back", "skip", "save", "start", "tick"):
            raise Refused(400, {"code": "EINVAL", "message": "The form was incomplete or "
                                "changed: nothing was saved. Go back to the page and try again."})

        def answer_of(state: Dict[str, Any]) -> Any:
            step = state.get("step") or {}
            if step.get("type") == "question":
                return parse_answer(step.get("answerFormat") or {}, fields, "answer"), True
            if step.get("type") == "form":
                visible = state.get("visibleItems")
                answer = {}
                for item in step.get("formItems") or []:
                    ident = item.get("identifier")
                    if ident is None or (isinstance(visible, list) and ident not in visible):
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
            return render_step(request, token, row.version, outcome.state, outcome.errors,
                               fields, None, status=422)
        if outcome.errors:
            return RedirectResponse(f"/r/{token}?error=1", status_code=303)
        return RedirectResponse(f"/r/{token}", status_code=303)

    @app.get("/i/{token}", response_class=HTMLResponse, include_in_schema=False)
    def invite_page(request: Request, token: str) -> Response:
        task_row = service.invite_task(token)
        task = service.task(task_row)
        first = (task.info.get("steps") or [{}])[0]
        return page(request, 200, first.get("title") or task_row.identifier,
                    "You have been invited to answer a questionnaire.",
                    "Your answers are saved at every step. The page you reach after starting "
                    "has its own address: keep it to continue later, on any device.",
                    form_action=f"/i/{token}", form_button="Start",
                    task_name=task_row.identifier)

    @app.post("/i/{token}", include_in_schema=False, dependencies=[Depends(form_post)])
    def invite_start(request: Request, token: str) -> Response:
        service.invite_task(token)  # an unknown link is a 404, and takes no token
        client = request.client.host if request.client else "unknown"
        for buckets, key, who in ((invite_buckets, token, "this link"),
                                  (client_buckets, client, "your address")):
            wait = buckets.take(key)
            if wait is not None:
                raise Refused(429, {"code": "ERATE", "message": f"Too many sessions were "
                                    f"started from {who} just now. Please try again in a "
                                    f"minute."}, retry_after=max(1, int(wait + 0.999)))
        created = service.accept_invite(token)
        return RedirectResponse(created["resumePath"], status_code=303)

    # -- the host's API -------------------------------------------------------------------------

    app.include_router(build_router([ApiKey(api_key, open_api), same_origin]))

    return app
