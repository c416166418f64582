"""The host's JSON API (``/api``): register tasks, create sessions and invite links, read states,
results and history. Every route needs the API key or a per-study key, which reaches its own
task only (:class:`stepkit_web.security.ApiKey`, :func:`stepkit_web.security.in_scope`), and
refuses state changes from other sites; the responses are described in the OpenAPI document
by the models below, errors included."""

from __future__ import annotations

import json
import re
from typing import Annotated, Any, Dict, List, Optional

from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse, Response
from pydantic import (AwareDatetime, BaseModel, ConfigDict, Field, StringConstraints,
                      ValidationError)

from starlette.concurrency import run_in_threadpool

from .fhir import FHIR_JSON
from .security import JSON_TYPES, in_scope, require_media

from .common import absolute, service_of
from .service import NotFound, Refused, identifier_problem, iso_ms


class Error(BaseModel):
    """Every error: a code (``EAUTH``, ``ENOTFOUND``, ``EINVAL``...), a message, and sometimes
    the path of the offending value and the engine's details."""
    model_config = ConfigDict(extra="allow")
    code: str
    message: str


class TaskRegistered(BaseModel):
    identifier: str
    version: int
    fingerprint: str
    source: str
    status: str
    migratedSessions: int


class TaskVersion(BaseModel):
    version: int
    fingerprint: str
    source: str
    created_at: str
    status: str


class TaskVersions(BaseModel):
    identifier: str
    versions: List[TaskVersion]


class SessionCreated(BaseModel):
    session: str
    resumeUrl: str


class InviteCreated(BaseModel):
    """An open link (``inviteUrl``), or with ``participants`` one personal link each."""
    inviteUrl: Optional[str] = None
    invites: Optional[List[Dict[str, str]]] = None


class SessionRequest(BaseModel):
    """A new session's options, passed to the engine (``personalData``, ``defaultResult``,
    ``alwaysCheckForDefaultResult``, ``additionalTaskResults``, ``language``); other keys are
    refused."""
    options: Optional[Dict[str, Any]] = None


def parsed(model: Any, body: Dict[str, Any]) -> Any:
    """A request body as its Pydantic model; 400 with every problem when it is not one."""
    try:
        return model.model_validate(body)
    except ValidationError as e:
        raise Refused(400, {"code": "EINVAL", "message": "The body is not valid: " + "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or 'body'}: {err['msg']}"
            for err in e.errors())})


# A participant id: 1 to 200 characters, no control character, not only spaces.
ParticipantId = Annotated[str, StringConstraints(
    min_length=1, max_length=200,
    pattern=r"^[^\x00-\x1f\x7f]*[^\x00-\x20\x7f][^\x00-\x1f\x7f]*$")]


class InviteRequest(BaseModel):
    """No body: one open link (each browser that opens it starts a session). With
    ``participants``: a personal link per participant id (it starts that participant's one
    session and resumes it), expiring at ``expiresAt`` (RFC 3339) if given."""
    model_config = ConfigDict(extra="forbid")
    participants: Optional[List[ParticipantId]] = Field(default=None, max_length=5000)
    expiresAt: Optional[AwareDatetime] = None


class ResumeLink(BaseModel):
    resumeUrl: str


class Revoked(BaseModel):
    revoked: int


class SessionInfo(BaseModel):
    session: str
    task: str
    taskVersion: int
    version: int
    status: str
    finishReason: Optional[str] = None
    state: Optional[Dict[str, Any]] = None


class HistoryEntry(BaseModel):
    """A session row as it was before a change replaced it (a migration onto a new task
    version): its result then (dates and answers on its own version), what the change kept
    and dropped (the engine's restore report), and the restoration data itself."""
    taskVersion: int
    version: int
    reason: str
    toTaskVersion: Optional[int] = None
    recordedAt: str
    report: Optional[Dict[str, Any]] = None
    result: Optional[Dict[str, Any]] = None
    error: Optional[str] = None
    saved: str


class History(BaseModel):
    session: str
    history: List[HistoryEntry]


def _errors(*codes: int) -> Dict[int, Dict[str, Any]]:
    return {c: {"model": Error} for c in codes}


# Every API route can answer these.
COMMON = _errors(401, 403, 503)

_SESSION_ID = re.compile(r"[0-9a-f]{32}")


def session_id_ok(session_id: str) -> str:
    """Session ids are 32 hex digits; anything else names no session (and never reaches the
    database: PostgreSQL refuses a NUL in a text parameter)."""
    if not _SESSION_ID.fullmatch(session_id):
        raise NotFound("no such session")
    return session_id


def scoped_session(request: Request, session_id: str) -> Any:
    """The session a caller may see: a per-study key sees its own task's sessions only."""
    row = service_of(request).session_row(session_id_ok(session_id))
    in_scope(request, row.task_identifier)
    return row


def identifier_ok(identifier: str) -> str:
    if identifier_problem(identifier):
        raise NotFound(f"no task {identifier!r}")
    return identifier


def scoped_task(request: Request, identifier: str) -> str:
    """A task identifier a caller may use: well formed (404 otherwise), and the caller's own
    task when its key is a per-study key."""
    in_scope(request, identifier_ok(identifier))
    return identifier


def optional_body(model: Any) -> Dict[str, Any]:
    """The OpenAPI of a route whose JSON body, described by `model`, may be left out."""
    return {"requestBody": {"required": False, "content": {
        "application/json": {"schema": model.model_json_schema()}}}}


def participant_ok(participant: Any) -> str:
    """A participant id: 1 to 200 printable characters, kept as given (trimmed)."""
    text = str(participant).strip()
    if not text or len(text) > 200 or any(ord(c) < 32 or ord(c) == 127 or
                                           0xD800 <= ord(c) <= 0xDFFF for c in text):
        raise Refused(400, {"code": "EINVAL", "path": "participants", "message":
                            "A participant id must be 1 to 200 printable characters."})
    return text


async def json_object(request: Request) -> Dict[str, Any]:
    raw = await request.body()
    require_media(request, ("application/json",), raw)
    if not raw.strip():
        return {}
    try:
        value = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as e:
        raise Refused(400, {"code": "EPARSE", "message": f"The body is not JSON: {e}"})
    except RecursionError:
        raise Refused(400, {"code": "EPARSE", "message": "The body is nested too deeply."})
    if not isinstance(value, dict):
        raise Refused(400, {"code": "EINVAL", "message": "The body must be a JSON object."})
    return value


async def task_request(request: Request, identifier: str, model: Any) -> Any:
    """The JSON body (none: {}) of a request about a task the caller may use, as `model`."""
    scoped_task(request, identifier)
    return parsed(model, await json_object(request))


def build_router(guards: List[Any]) -> APIRouter:
    router = APIRouter(prefix="/api", dependencies=[Depends(g) for g in guards],
                       responses=COMMON)

    @router.post("/tasks", status_code=201, response_model=TaskRegistered,
                 responses=_errors(400, 413, 415, 422),
                 summary="Register a task (a new version if the identifier exists)",
                 openapi_extra={"requestBody": {"required": True, "content": {
                     "application/json": {"schema": {"type": "object"}},
                     "application/fhir+json": {"schema": {"type": "object"}}}}})
    async def register_task(request: Request) -> Response:
        raw = await request.body()
        if not raw:
            raise Refused(400, {"code": "EPARSE", "message": "The body is empty."})
        require_media(request, JSON_TYPES, raw)
        try:
            body = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise Refused(400, {"code": "EPARSE", "message": "The body is not UTF-8."})
        result = await run_in_threadpool(service_of(request).register, body,
                                          request.headers.get("content-type", ""),
                                          only=getattr(request.state, "api_scope", None))
        return JSONResponse(result, status_code=201)

    @router.get("/tasks/{identifier}", response_model=TaskVersions, responses=_errors(404),
                summary="A task's versions")
    def get_task(request: Request, identifier: str) -> Dict[str, Any]:
        scoped_task(request, identifier)
        versions = service_of(request).store.task_versions(identifier)
        if not versions:
            raise NotFound(f"no task {identifier!r}")
        return {"identifier": identifier, "versions": versions}

    @router.post("/tasks/{identifier}/sessions", status_code=201, response_model=SessionCreated,
                 responses=_errors(400, 404, 413, 415),
                 summary="Create a session; the reply holds its participant link",
                 openapi_extra=optional_body(SessionRequest))
    async def create_session(request: Request, identifier: str) -> Response:
        wanted = await task_request(request, identifier, SessionRequest)
        created = await run_in_threadpool(service_of(request).create_session, identifier,
                                          wanted.options or {})
        return JSONResponse({"session": created["session"],
                             "resumeUrl": absolute(request, created["resumePath"])},
                            status_code=201)

    @router.post("/tasks/{identifier}/invites", status_code=201, response_model=InviteCreated,
                 responses=_errors(400, 404, 413, 415),
                 summary="Create an open link, or personal links for participant ids",
                 openapi_extra=optional_body(InviteRequest))
    async def create_invite(request: Request, identifier: str) -> Response:
        wanted = await task_request(request, identifier, InviteRequest)
        service = service_of(request)
        await run_in_threadpool(service._task_row, identifier)  # unknown: 404 first
        if wanted.participants is None:
            created = await run_in_threadpool(service.create_invite, identifier)
            return JSONResponse({"inviteUrl": absolute(request, created["invitePath"])},
                                status_code=201)
        participants = [participant_ok(p) for p in wanted.participants]
        expires = None
        if wanted.expiresAt is not None:
            expires = iso_ms(int(wanted.expiresAt.timestamp() * 1000))
        made = await run_in_threadpool(service.create_personal_invites, identifier,
                                       participants, expires)
        return JSONResponse({"invites": [{"participant": p, "inviteUrl": absolute(
            request, f"/i/{t}")} for p, t in made]}, status_code=201)

    @router.get("/sessions/{session_id}", response_model=SessionInfo,
                responses=_errors(404, 409), summary="A session's state")
    def get_session(request: Request, session_id: str) -> Dict[str, Any]:
        service = service_of(request)
        row = scoped_session(request, session_id)
        body: Dict[str, Any] = {"session": row.id, "task": row.task_identifier,
                                "taskVersion": row.task_version, "version": row.version,
                                "status": row.status, "finishReason": row.finish_reason}
        if row.status != "finished":
            body["state"] = service.state_of(row)
        return body

    @router.get("/sessions/{session_id}/result", response_model=Dict[str, Any],
                responses=_errors(404, 409), summary="The session's task result")
    def get_result(request: Request, session_id: str) -> Dict[str, Any]:
        return service_of(request).result_of(scoped_session(request, session_id))

    @router.get("/sessions/{session_id}/history", response_model=History,
                responses=_errors(404),
                summary="The session's earlier rows (before each migration), oldest first")
    def get_history(request: Request, session_id: str) -> Dict[str, Any]:
        scoped_session(request, session_id)
        return {"session": session_id, "history": service_of(request).history(session_id)}

    @router.get("/sessions/{session_id}/questionnaire-response", response_model=Dict[str, Any],
                responses=_errors(404, 409),
                summary="The FHIR QuestionnaireResponse (imported FHIR tasks only)")
    def get_response(request: Request, session_id: str) -> Response:
        return JSONResponse(service_of(request).questionnaire_response(
            scoped_session(request, session_id)), media_type=FHIR_JSON)

    @router.get("/tasks/{identifier}/questionnaire-responses", response_model=Dict[str, Any],
                responses=_errors(404),
                summary="Every session's FHIR QuestionnaireResponse, as a Bundle (FHIR tasks)")
    def get_responses(request: Request, identifier: str) -> Response:
        scoped_task(request, identifier)
        body = service_of(request).response_bundle(identifier)
        return JSONResponse(body, media_type=FHIR_JSON)

    @router.post("/sessions/{session_id}/resume-links", status_code=201,
                 response_model=ResumeLink, responses=_errors(404, 413, 415),
                 summary="A new participant link for the session")
    async def new_link(request: Request, session_id: str) -> Response:
        await run_in_threadpool(scoped_session, request, session_id)
        require_media(request, ("application/json",), await request.body())
        created = await run_in_threadpool(service_of(request).new_resume_link, session_id)
        return JSONResponse({"resumeUrl": absolute(request, created["resumePath"])},
                            status_code=201)

    @router.delete("/sessions/{session_id}/resume-links", response_model=Revoked,
                   responses=_errors(404), summary="Revoke every participant link of the session")
    def revoke_links(request: Request, session_id: str) -> Dict[str, Any]:
        scoped_session(request, session_id)
        return {"revoked": service_of(request).revoke(session_id)}

    return router
