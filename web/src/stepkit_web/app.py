"""The FastAPI application: participant pages (server-rendered, Post/Redirect/Get) and the
host's JSON API. Build one with :func:`create_app`."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional

import sqlalchemy as sa
import stepkit
from stepkit.clock import system_time_ms
from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates
from starlette.concurrency import run_in_threadpool

from . import fhir
from .db import Store, make_engine
from .limits import BodyLimit, MAX_BODY
from .migrate import upgrade
from .timing import ServerTiming
from .limits import PrivatePages
from .service import Damaged, NotFound, Refused, Service, Stale
from .widgets import Fields, parse_answer, widget

log = logging.getLogger("stepkit_web")
_HERE = Path(__file__).resolve().parent

NOTICES = {
    "stale": "This page had changed since you opened it (another tab, a second click or the "
             "browser's Back button). Here is where you are now; your saved answers are kept.",
}


def create_app(db_url: str, integrity_key: str, *, api_key: Optional[str] = None,
               clock: Optional[Callable[[], int]] = None, migrate: bool = True) -> FastAPI:
    engine = make_engine(db_url)
    if migrate:
        upgrade(engine)
    service = Service(Store(engine), integrity_key, clock)
    templates = Jinja2Templates(directory=str(_HERE / "templates"))
    app = FastAPI(title="StepKit web", version="0.1.0", docs_url=None, redoc_url=None,
                  description="Register StepKit tasks, create sessions and invite links, read "
                              "states and results. Participant pages are under /r/ and /i/.")
    app.state.service = service
    app.mount("/static", StaticFiles(directory=str(_HERE / "static")), name="static")
    app.add_middleware(BodyLimit, limit=MAX_BODY)
    app.add_middleware(ServerTiming)
    app.add_middleware(PrivatePages)

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
        if is_api(request):
            return JSONResponse(exc.error, status_code=exc.status)
        return page(request, exc.status, "This request could not be handled",
                    str(exc.error.get("message", "")))

    @app.exception_handler(fhir.ImporterUnavailable)
    async def _no_fhir(request: Request, exc: fhir.ImporterUnavailable) -> Response:
        return JSONResponse({"code": "EUNSUPPORTED", "message": str(exc)}, status_code=415)

    @app.exception_handler(Damaged)
    async def _damaged(request: Request, exc: Damaged) -> Response:
        if is_api(request):
            return JSONResponse({"code": "EDAMAGED", "message": str(exc),
                                 "error": exc.error.error}, status_code=409)
        return page(request, 409, "This session cannot be opened",
                    "Its saved data did not pass the integrity check, so it was not used.",
                    "Nothing was changed or deleted. The study team has been told; please "
                    "contact them.")

    @app.exception_handler(sa.exc.DBAPIError)
    async def _db_down(request: Request, exc: sa.exc.DBAPIError) -> Response:
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
                now = service.clock() if service.clock else system_time_ms()
                deadline_ms = max(0, stepkit.parse_iso8601_ms(state["nextDeadline"]) - now)
            remaining = a.get("remaining")
            active = {"status": a.get("status"), "duration": a.get("duration"),
                      "remaining": int(remaining + 0.999) if isinstance(remaining, (int, float)) else "",
                      "deadline_ms": deadline_ms}
        heading = step.get("title") or step.get("question") or step.get("identifier")
        has_visibility = kind == "form" and any(
            isinstance(it, dict) and it.get("visibleWhen") for it in step.get("formItems") or [])
        ctx = {
            "page_title": (("Error: " if errors else "") + f"{heading} – {state.get('taskIdentifier')}"),
            "task_name": state.get("taskIdentifier"), "heading": heading, "step": step,
            "blocks": blocks, "errors": summary, "notice": notice, "progress": progress_text,
            "nav": nav, "version": row_version, "action_url": f"/r/{token}",
            "next_label": "Next" if nav.get("hasNextStep", True) else "Done",
            "active": active, "can_update": has_visibility,
        }
        return templates.TemplateResponse(request, "step.html", ctx, status_code=status)

    def finished_page(request: Request, row: Any) -> Response:
        reason = row.finish_reason
        if reason == "completed":
            return page(request, 200, "Thank you", "Your answers have been saved. You may close "
                        "this page.", task_name=row.task_identifier)
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

    @app.post("/r/{token}", include_in_schema=False)
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

    @app.post("/i/{token}", include_in_schema=False)
    def invite_start(token: str) -> Response:
        created = service.accept_invite(token)
        return RedirectResponse(created["resumePath"], status_code=303)

    # -- the host's API -------------------------------------------------------------------------

    def check_key(request: Request) -> None:
        if api_key is not None:
            if request.headers.get("authorization") != f"Bearer {api_key}":
                raise Refused(401, {"code": "EAUTH", "message": "A valid API key is required."})

    def absolute(request: Request, path: str) -> str:
        return str(request.base_url).rstrip("/") + path

    @app.post("/api/tasks", status_code=201, summary="Register a task (a new version if the "
              "identifier exists)", openapi_extra={"requestBody": {"required": True, "content": {
                  "application/json": {"schema": {"type": "object"}},
                  "application/fhir+json": {"schema": {"type": "object"}}}}})
    async def register_task(request: Request) -> Response:
        check_key(request)
        raw = await request.body()
        try:
            body = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise Refused(400, {"code": "EPARSE", "message": "The body is not UTF-8."})
        ctype = request.headers.get("content-type", "application/json")
        result = await run_in_threadpool(service.register, body, ctype)
        return JSONResponse(result, status_code=201)

    @app.get("/api/tasks/{identifier}", summary="A task's versions")
    def get_task(request: Request, identifier: str) -> Dict[str, Any]:
        check_key(request)
        versions = service.store.task_versions(identifier)
        if not versions:
            raise NotFound(f"no task {identifier!r}")
        return {"identifier": identifier, "versions": versions}

    async def json_object(request: Request) -> Dict[str, Any]:
        raw = await request.body()
        if not raw.strip():
            return {}
        try:
            value = json.loads(raw)
        except (ValueError, UnicodeDecodeError) as e:
            raise Refused(400, {"code": "EPARSE", "message": f"The body is not JSON: {e}"})
        if not isinstance(value, dict):
            raise Refused(400, {"code": "EINVAL", "message": "The body must be a JSON object."})
        return value

    @app.post("/api/tasks/{identifier}/sessions", status_code=201,
              summary="Create a session; the reply holds its participant link")
    async def create_session(request: Request, identifier: str) -> Response:
        check_key(request)
        body = await json_object(request)
        options = body.get("options") or {}
        if not isinstance(options, dict):
            raise Refused(400, {"code": "EINVAL", "message": "options must be an object."})
        created = await run_in_threadpool(service.create_session, identifier, options)
        return JSONResponse({"session": created["session"],
                             "resumeUrl": absolute(request, created["resumePath"])},
                            status_code=201)

    @app.post("/api/tasks/{identifier}/invites", status_code=201,
              summary="Create an invite link: each opening starts a new session")
    def create_invite(request: Request, identifier: str) -> Response:
        check_key(request)
        created = service.create_invite(identifier)
        return JSONResponse({"inviteUrl": absolute(request, created["invitePath"])},
                            status_code=201)

    @app.get("/api/sessions/{session_id}", summary="A session's state")
    def get_session(request: Request, session_id: str) -> Dict[str, Any]:
        check_key(request)
        row = service.session_row(session_id)
        body: Dict[str, Any] = {"session": row.id, "task": row.task_identifier,
                                "taskVersion": row.task_version, "version": row.version,
                                "status": row.status, "finishReason": row.finish_reason}
        if row.status != "finished":
            body["state"] = service.state_of(row)
        return body

    @app.get("/api/sessions/{session_id}/result", summary="The session's task result")
    def get_result(request: Request, session_id: str) -> Dict[str, Any]:
        check_key(request)
        return service.result_of(service.session_row(session_id))

    @app.get("/api/sessions/{session_id}/questionnaire-response",
             summary="The FHIR QuestionnaireResponse (imported FHIR tasks only)")
    def get_response(request: Request, session_id: str) -> Dict[str, Any]:
        check_key(request)
        return service.questionnaire_response(service.session_row(session_id))

    @app.post("/api/sessions/{session_id}/resume-links", status_code=201,
              summary="A new participant link for the session")
    def new_link(request: Request, session_id: str) -> Response:
        check_key(request)
        created = service.new_resume_link(session_id)
        return JSONResponse({"resumeUrl": absolute(request, created["resumePath"])},
                            status_code=201)

    @app.delete("/api/sessions/{session_id}/resume-links",
                summary="Revoke every participant link of the session")
    def revoke_links(request: Request, session_id: str) -> Dict[str, Any]:
        check_key(request)
        return {"revoked": service.revoke(session_id)}

    return app
