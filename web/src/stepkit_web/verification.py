"""Verified submissions (``/api``, issue 33; docs/verify.md): a result a client ran elsewhere
(an app, a kiosk) is replayed through the task by the engine (``stepkit_task_verify_result``)
instead of being trusted. ``POST /api/tasks/{id}/verify`` answers the report;
``POST /api/tasks/{id}/submissions`` stores the engine's recomputed result — refusing, with the
report, a submission that does not verify when the study requires verified submissions
(``PUT /api/tasks/{id}/verification``)."""

from __future__ import annotations

import json
import re
import secrets
from typing import Any, Dict, List, Optional

import stepkit
from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, ConfigDict, StrictBool
from starlette.concurrency import run_in_threadpool

from .api import COMMON, _errors, json_object, parsed, scoped_task
from .common import service_of
from .security import JSON_TYPES, in_scope, require_media
from .service import NotFound, Refused


_SUBMISSION_ID = re.compile(r"[0-9a-f]{32}")


class Divergence(BaseModel):
    model_config = ConfigDict(extra="allow")
    code: str
    message: str
    path: str


class Report(BaseModel):
    """The engine's report: ``verified`` exactly when there is no divergence; ``result`` (and
    ``questionnaireResponse`` for a FHIR task) the engine's own, recomputed."""
    model_config = ConfigDict(extra="allow")
    verified: bool
    divergences: List[Divergence]
    result: Optional[Dict[str, Any]] = None
    taskVersion: int


class VerificationSetting(BaseModel):
    model_config = ConfigDict(extra="forbid")
    requireVerified: StrictBool


class SettingOut(BaseModel):
    identifier: str
    requireVerified: StrictBool


class SubmissionStored(BaseModel):
    submission: str
    taskVersion: int
    verified: bool
    divergences: List[Divergence]


class Submission(BaseModel):
    model_config = ConfigDict(extra="allow")
    submission: str
    task: str
    taskVersion: int
    verified: bool
    divergences: List[Divergence]
    result: Optional[Dict[str, Any]] = None
    receivedAt: str


async def _submission_text(request: Request) -> str:
    raw = await request.body()
    if not raw.strip():
        raise Refused(400, {"code": "EPARSE", "message": "The body is empty."})
    require_media(request, JSON_TYPES, raw)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise Refused(400, {"code": "EPARSE", "message": "The body is not UTF-8."})


def verify(request: Request, identifier: str, text: str, version: Optional[int]) -> Dict[str, Any]:
    """The engine's report on `text` against the task's published version (or `version`)."""
    service = service_of(request)
    row = service._task_row(identifier, version)
    task = service.task(row)
    try:
        report: Dict[str, Any] = task.verify(text)
    except (stepkit.ParseError, stepkit.InvalidArgumentError) as error:
        raise Refused(400, error.error)
    report["taskVersion"] = row.version
    return report


def build_router(guards: List[Any]) -> APIRouter:
    router = APIRouter(prefix="/api", dependencies=[Depends(g) for g in guards], responses=COMMON)

    @router.post("/tasks/{identifier}/verify", response_model=Report, responses=_errors(400, 404, 413, 415),
                 summary="Verify a submitted result (or QuestionnaireResponse) against the task",
                 openapi_extra={"requestBody": {"required": True, "content": {
                     "application/json": {"schema": {"type": "object"}},
                     "application/fhir+json": {"schema": {"type": "object"}}}}})
    async def verify_submission(request: Request, identifier: str, version: Optional[int] = None) -> Response:
        scoped_task(request, identifier)
        text = await _submission_text(request)
        return JSONResponse(await run_in_threadpool(verify, request, identifier, text, version))

    @router.get("/tasks/{identifier}/verification", response_model=SettingOut, responses=_errors(404),
                summary="Whether the study requires verified submissions")
    def get_setting(request: Request, identifier: str) -> Dict[str, Any]:
        scoped_task(request, identifier)
        service = service_of(request)
        service._task_row(identifier)
        return {"identifier": identifier, "requireVerified": service.store.require_verified(identifier)}

    @router.put("/tasks/{identifier}/verification", response_model=SettingOut,
                responses=_errors(400, 404, 413, 415), summary="Require (or not) verified submissions",
                openapi_extra={"requestBody": {"required": True, "content": {
                    "application/json": {"schema": VerificationSetting.model_json_schema()}}}})
    async def put_setting(request: Request, identifier: str) -> Dict[str, Any]:
        scoped_task(request, identifier)
        wanted = parsed(VerificationSetting, await json_object(request))
        service = service_of(request)
        await run_in_threadpool(service._task_row, identifier)  # unknown: 404
        await run_in_threadpool(service.store.set_require_verified, identifier, wanted.requireVerified)
        return {"identifier": identifier, "requireVerified": wanted.requireVerified}

    @router.post("/tasks/{identifier}/submissions", status_code=201, response_model=SubmissionStored,
                 responses=_errors(400, 404, 413, 415, 422),
                 summary="Submit a result run elsewhere: verified, and the engine's result stored",
                 openapi_extra={"requestBody": {"required": True, "content": {
                     "application/json": {"schema": {"type": "object"}},
                     "application/fhir+json": {"schema": {"type": "object"}}}}})
    async def submit(request: Request, identifier: str) -> Response:
        scoped_task(request, identifier)
        text = await _submission_text(request)
        report = await run_in_threadpool(verify, request, identifier, text, None)
        store = service_of(request).store
        if not report["verified"] and await run_in_threadpool(store.require_verified, identifier):
            # Nothing is stored: the study takes only what its task allows.
            return JSONResponse({"code": "ENOTVERIFIED", "message":
                                 f"The submission does not verify: {len(report['divergences'])} divergence(s).",
                                 "report": report}, status_code=422)
        submission_id = secrets.token_hex(16)
        response = report.get("questionnaireResponse")
        await run_in_threadpool(
            store.add_submission, submission_id, identifier, report["taskVersion"], report["verified"],
            json.dumps(report["divergences"]), json.dumps(report["result"]),
            json.dumps(response) if response is not None else None)
        return JSONResponse({"submission": submission_id, "taskVersion": report["taskVersion"],
                             "verified": report["verified"], "divergences": report["divergences"]},
                            status_code=201)

    @router.get("/submissions/{submission_id}", response_model=Submission, responses=_errors(404),
                summary="A stored submission: the engine's recomputed result and the report")
    def get_submission(request: Request, submission_id: str) -> Dict[str, Any]:
        # Ids are 32 hex digits; anything else names none (and never reaches the database).
        ok = _SUBMISSION_ID.fullmatch(submission_id)
        row = service_of(request).store.submission(submission_id) if ok else None
        if row is None:
            raise NotFound("no such submission")
        in_scope(request, row["task_identifier"])
        body: Dict[str, Any] = {"submission": row["id"], "task": row["task_identifier"],
                                "taskVersion": row["task_version"], "verified": bool(row["verified"]),
                                "divergences": json.loads(row["divergences"]),
                                "result": json.loads(row["result"]) if row["result"] else None,
                                "receivedAt": row["received_at"]}
        if row["response"]:
            body["questionnaireResponse"] = json.loads(row["response"])
        return body

    return router
