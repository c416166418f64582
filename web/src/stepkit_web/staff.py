"""The study team's pages (``/staff``), behind a staff login.

Accounts are made on the command line (``python -m stepkit_web staff add NAME``); passwords are
hashed with argon2id (argon2-cffi). Signing in sets a session cookie (``HttpOnly``,
``SameSite=Strict``, ``Secure`` under an https base URL, path ``/staff``) whose token the
database keeps only as a SHA-256, with the CSRF token every staff form carries. Every POST is
checked twice: the same-origin rule and that token, compared in constant time."""

from __future__ import annotations

import csv
import hmac
import io
import json
import secrets
import time
from dataclasses import dataclass
from typing import Any, Dict, List, Optional

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from fastapi import APIRouter, Depends, Request
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.concurrency import run_in_threadpool

from . import exports
from .common import absolute, secure_cookies, service_of, templates
from .db import token_hash
from .fhir import FHIR_JSON
from .service import NotFound, Refused, identifier_problem, iso_ms

STAFF_COOKIE = "stepkit-staff"
LOGIN_COOKIE = "stepkit-login"  # the login form's own CSRF token (double submit)
SESSION_HOURS = 8
MAX_INVITES = 5000  # participant ids per upload

_hasher = PasswordHasher()
# Checked when the name is unknown, so a wrong name costs what a wrong password costs.
_DUMMY = _hasher.hash(secrets.token_urlsafe(16))


def hash_password(password: str) -> str:
    return _hasher.hash(password)


def password_ok(stored: Optional[str], password: str) -> bool:
    try:
        return _hasher.verify(stored or _DUMMY, password) and stored is not None
    except (VerificationError, InvalidHashError):
        return False


class LoginRequired(Exception):
    """No valid staff session: sign in first."""


@dataclass
class StaffUser:
    username: str
    csrf: str
    token_hash: str


def staff_user(request: Request) -> StaffUser:
    """The signed-in staff member (a dependency of every staff page)."""
    token = request.cookies.get(STAFF_COOKIE) or ""
    if not token or len(token) > 100:
        raise LoginRequired()
    row = service_of(request).store.staff_session(token_hash(token))
    if row is None or row["expires_at"] <= int(time.time() * 1000):
        raise LoginRequired()
    return StaffUser(row["username"], row["csrf"], row["hash"])


async def staff_form(request: Request, user: StaffUser = Depends(staff_user)) -> Dict[str, Any]:
    """A staff POST: from this site, with the session's CSRF token. Returns the fields."""
    request.app.state.same_origin(request)
    form = await request.form()
    sent = form.get("csrf")
    if not isinstance(sent, str) or not hmac.compare_digest(sent.encode(), user.csrf.encode()):
        raise Refused(403, {"code": "ECSRF", "message": "This form has expired or did not "
                            "come from this site: nothing was changed. Reload the page and "
                            "try again."})
    return {"user": user, "form": form}


def study_ok(identifier: str) -> str:
    if identifier_problem(identifier):
        raise NotFound(f"no task {identifier!r}")
    return identifier


router = APIRouter(prefix="/staff", include_in_schema=False)


def _render(request: Request, name: str, user: Optional[StaffUser], http_status: int = 200,
            **ctx: Any) -> HTMLResponse:
    return templates.TemplateResponse(request, name, {
        "task_name": "Study team", "user": user, "csrf": user.csrf if user else "", **ctx},
        status_code=http_status)


# -- signing in -----------------------------------------------------------------------------

@router.get("/login", response_class=HTMLResponse)
def login_page(request: Request, failed: str = "") -> Response:
    token = secrets.token_urlsafe(16)
    response = _render(request, "staff_login.html", None, page_title="Sign in",
                       login_csrf=token, failed=failed == "1")
    response.set_cookie(LOGIN_COOKIE, token, httponly=True, samesite="strict",
                        secure=secure_cookies(request), path="/staff/login")
    return response


@router.post("/login")
async def login(request: Request) -> Response:
    request.app.state.same_origin(request)
    form = await request.form()
    sent, kept = form.get("csrf"), request.cookies.get(LOGIN_COOKIE)
    if not isinstance(sent, str) or not kept or not hmac.compare_digest(sent.encode(),
                                                                         kept.encode()):
        raise Refused(403, {"code": "ECSRF", "message": "The sign-in form has expired: "
                            "reload it and try again."})
    username = str(form.get("username") or "")[:100]
    password = str(form.get("password") or "")[:1000]
    return await run_in_threadpool(_login, request, username, password)


def _login(request: Request, username: str, password: str) -> Response:
    store = service_of(request).store
    if not password_ok(store.staff_hash(username), password):
        return RedirectResponse("/staff/login?failed=1", status_code=303)
    token, csrf = secrets.token_urlsafe(32), secrets.token_urlsafe(32)
    store.add_staff_session(token_hash(token), username, csrf,
                            int(time.time() * 1000) + SESSION_HOURS * 3600_000)
    response = RedirectResponse("/staff", status_code=303)
    response.set_cookie(STAFF_COOKIE, token, httponly=True, samesite="strict",
                        secure=secure_cookies(request), path="/staff",
                        max_age=SESSION_HOURS * 3600)
    response.delete_cookie(LOGIN_COOKIE, path="/staff/login")
    return response


@router.post("/logout")
def logout(request: Request, posted: Dict[str, Any] = Depends(staff_form)) -> Response:
    service_of(request).store.end_staff_session(posted["user"].token_hash)
    response = RedirectResponse("/staff/login", status_code=303)
    response.delete_cookie(STAFF_COOKIE, path="/staff")
    return response


# -- studies --------------------------------------------------------------------------------

@router.get("", response_class=HTMLResponse)
def home(request: Request, user: StaffUser = Depends(staff_user)) -> Response:
    service = service_of(request)
    studies = []
    for identifier in service.store.task_identifiers():
        counts: Dict[str, int] = {}
        for s in service.store.list_sessions(identifier):
            counts[s["status"]] = counts.get(s["status"], 0) + 1
        studies.append({"identifier": identifier, "title": service.study(identifier)["title"],
                        "open": counts.get("open", 0), "finished": counts.get("finished", 0)})
    return _render(request, "staff_home.html", user, page_title="Studies", studies=studies)


DONE = {
    "settings": "The study's settings are saved.",
    "revoked": "The invite is revoked: its link no longer opens.",
    "drafted": "The new version is saved as a draft. Participants still get the published "
               "version until you publish it.",
    "published": "The version is published: new sessions start on it, and open sessions "
                 "were moved onto it (their earlier data is kept in their history).",
    "deleted": "The participant's data is deleted.",
    "nothing": "No session or invite has that participant id: nothing was deleted.",
    "key-revoked": "The API key is revoked.",
}


@router.get("/studies/{identifier}", response_class=HTMLResponse)
def study_page(request: Request, identifier: str, status: str = "", participant: str = "",
               done: str = "", user: StaffUser = Depends(staff_user)) -> Response:
    service = service_of(request)
    study_ok(identifier)
    versions = service.store.task_versions(identifier)
    if not versions:
        raise NotFound(f"no task {identifier!r}")
    status = status if status in ("open", "finished") else ""
    participant = participant.strip()[:200]
    sessions = service.store.list_sessions(identifier, status or None, participant or None)
    published = max((v["version"] for v in versions if v["status"] == "published"),
                    default=0)
    invites = [dict(i, ref=i["hash"][:32]) for i in service.store.invites(identifier)]
    settings = service.store.study(identifier)
    keys = [dict(k, ref=k["hash"][:32]) for k in service.store.study_api_keys(identifier)]
    is_fhir = any(v["source"] == "fhir" for v in versions if v["version"] == published)
    return _render(request, "staff_study.html", user,
                   page_title=f"{service.study(identifier)['title']} – sessions",
                   identifier=identifier, title=service.study(identifier)["title"],
                   settings=settings, versions=versions, published=published,
                   sessions=sessions, invites=invites, filter_status=status,
                   participant=participant, done=DONE.get(done), is_fhir=is_fhir, keys=keys)


@router.get("/studies/{identifier}/sessions/{session_id}/audit", response_class=HTMLResponse)
def session_audit(request: Request, identifier: str, session_id: str,
                  user: StaffUser = Depends(staff_user)) -> Response:
    """One session's audit trail: every accepted change, with its time and, for an answer,
    the value before and after (docs/audit.md)."""
    service = service_of(request)
    study_ok(identifier)
    row = service.store.session(session_id[:64])
    if row is None or row.task_identifier != identifier:
        raise NotFound(f"no session {session_id!r} in {identifier!r}")
    trail = service.audit_trail(row)
    events = []
    for event in trail["events"]:
        change = event.get("type") in ("answerSet", "answerCleared")
        events.append(dict(
            event,
            old_text=_value_text(event.get("old")) if change else "",
            new_text=_value_text(event.get("new")) if change else "",
        ))
    return _render(request, "staff_audit.html", user,
                   page_title=f"{service.study(identifier)['title']} – audit trail",
                   identifier=identifier, title=service.study(identifier)["title"],
                   participant=row.participant, events=events, enabled=trail["enabled"])


def _value_text(value: Any) -> str:
    """An answer as staff read it: JSON, compact; "–" for none."""
    return "–" if value is None else json.dumps(value, ensure_ascii=False, separators=(", ", ": "))


def _back(identifier: str, done: str) -> RedirectResponse:
    from urllib.parse import quote
    return RedirectResponse(f"/staff/studies/{quote(identifier, safe='')}?done={done}",
                            status_code=303)


def _text(form: Any, name: str, limit: int = 5000) -> str:
    value = form.get(name)
    return value.strip()[:limit] if isinstance(value, str) else ""


@router.post("/studies/{identifier}/settings")
def save_settings(request: Request, identifier: str,
                  posted: Dict[str, Any] = Depends(staff_form)) -> Response:
    service = service_of(request)
    service._task_row(study_ok(identifier))
    form = posted["form"]
    service.set_study(identifier, **{k: _text(form, k) or None for k in
                                     ("title", "description", "duration", "contact")})
    return _back(identifier, "settings")


def participant_ids(text: str) -> List[str]:
    """Participant ids from CSV text: the first column of each row, a header row
    ("participant", "participant_id", "id") skipped, blanks and repeats dropped."""
    ids: List[str] = []
    seen = set()
    for n, row in enumerate(csv.reader(io.StringIO(text))):
        if not row or not row[0].strip():
            continue
        value = row[0].strip()
        if n == 0 and value.lower() in ("participant", "participant_id", "participant id",
                                        "id"):
            continue
        if len(value) > 200 or any(ord(c) < 32 for c in value):
            raise Refused(400, {"code": "EINVAL", "message": f"Row {n + 1}: a participant id "
                                "must be 1 to 200 printable characters. No invite was made."})
        if value not in seen:
            seen.add(value)
            ids.append(value)
    return ids


@router.post("/studies/{identifier}/invites", response_class=HTMLResponse)
async def make_invites(request: Request, identifier: str,
                       posted: Dict[str, Any] = Depends(staff_form)) -> Response:
    form = posted["form"]
    upload = form.get("file")
    text = _text(form, "participants", 1_000_000)
    if upload is not None and not isinstance(upload, str):
        raw = await upload.read(2_000_001)
        if len(raw) > 2_000_000:
            raise Refused(413, {"code": "ETOOBIG", "message": "The file is larger than 2 MB."})
        try:
            text = raw.decode("utf-8-sig") + "\n" + text
        except UnicodeDecodeError:
            raise Refused(400, {"code": "EINVAL", "message": "The file is not UTF-8 text "
                                "(save it as CSV UTF-8). No invite was made."})
    days_text = _text(form, "days", 10)
    return await run_in_threadpool(_make_invites, request, identifier, posted["user"], text,
                                   days_text)


def _make_invites(request: Request, identifier: str, user: StaffUser, text: str,
                  days_text: str) -> Response:
    service = service_of(request)
    study_ok(identifier)
    ids = participant_ids(text)
    if not ids:
        raise Refused(400, {"code": "EINVAL", "message": "No participant id was given: give a "
                            "CSV file or type the ids, one per line."})
    if len(ids) > MAX_INVITES:
        raise Refused(400, {"code": "EINVAL", "message": f"At most {MAX_INVITES} invites at "
                            "once."})
    expires = None
    if days_text:
        if not days_text.isdigit() or not 1 <= int(days_text) <= 3650:
            raise Refused(400, {"code": "EINVAL", "message": "Days valid must be a whole "
                                "number from 1 to 3650. No invite was made."})
        expires = iso_ms(service.now() + int(days_text) * 86400_000)
    made = service.create_personal_invites(identifier, ids, expires)
    rows = [{"participant": p, "url": absolute(request, f"/i/{t}")} for p, t in made]
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(["participant", "link"])
    for r in rows:
        writer.writerow([r["participant"], r["url"]])
    return _render(request, "staff_invites.html", user, page_title="New invites",
                   identifier=identifier, rows=rows, csv_text=buf.getvalue(), expires=expires)


@router.post("/studies/{identifier}/invites/{ref}/revoke")
def revoke_invite(request: Request, identifier: str, ref: str,
                  posted: Dict[str, Any] = Depends(staff_form)) -> Response:
    service = service_of(request)
    study_ok(identifier)
    matches = [i["hash"] for i in service.store.invites(identifier) if i["hash"][:32] == ref]
    if len(matches) != 1 or not service.store.revoke_token(identifier, matches[0]):
        raise NotFound("no such invite")
    return _back(identifier, "revoked")


@router.post("/studies/{identifier}/versions")
def draft_version(request: Request, identifier: str,
                  posted: Dict[str, Any] = Depends(staff_form)) -> Response:
    service = service_of(request)
    study_ok(identifier)
    form = posted["form"]
    body = _text(form, "definition", 32 * 1024 * 1024)
    kind = "application/fhir+json" if form.get("format") == "fhir" else "application/json"
    try:
        found = json.loads(body).get("identifier") if kind == "application/json" else None
    except (ValueError, AttributeError, RecursionError):
        found = None
    if found is not None and found != identifier:
        raise Refused(400, {"code": "EINVAL", "message": f"The definition is for "
                            f"{found!r}, not {identifier!r}: nothing was saved."})
    reg = service.register(body, kind, status="draft")
    if reg["identifier"] != identifier:
        raise Refused(400, {"code": "EINVAL", "message": "The definition is for another "
                            "task."})
    return _back(identifier, "drafted")


@router.post("/studies/{identifier}/versions/{version}/publish")
def publish_version(request: Request, identifier: str, version: int,
                    posted: Dict[str, Any] = Depends(staff_form)) -> Response:
    service_of(request).publish(study_ok(identifier), version)
    return _back(identifier, "published")


@router.post("/studies/{identifier}/participants/delete")
def delete_participant(request: Request, identifier: str,
                       posted: Dict[str, Any] = Depends(staff_form)) -> Response:
    form = posted["form"]
    participant = _text(form, "participant", 200)
    if not participant or form.get("confirm") != "yes":
        raise Refused(400, {"code": "EINVAL", "message": "Give the participant id and tick "
                            "the box to confirm: nothing was deleted."})
    store = service_of(request).store
    study_ok(identifier)
    had_invite = any(i["participant"] == participant for i in store.invites(identifier))
    deleted = store.delete_participant(identifier, participant)
    return _back(identifier, "deleted" if deleted or had_invite else "nothing")


@router.post("/studies/{identifier}/keys", response_class=HTMLResponse)
def make_api_key(request: Request, identifier: str,
                 posted: Dict[str, Any] = Depends(staff_form)) -> Response:
    """A per-study key of the host API, shown once (the database keeps its SHA-256)."""
    service = service_of(request)
    service._task_row(study_ok(identifier))
    key = "sk_" + secrets.token_urlsafe(32)
    service.store.add_api_key(identifier, token_hash(key))
    return _render(request, "staff_key.html", posted["user"], page_title="New API key",
                   identifier=identifier, key=key)


@router.post("/studies/{identifier}/keys/{ref}/revoke")
def revoke_api_key(request: Request, identifier: str, ref: str,
                   posted: Dict[str, Any] = Depends(staff_form)) -> Response:
    store = service_of(request).store
    study_ok(identifier)
    matches = [k["hash"] for k in store.study_api_keys(identifier) if k["hash"][:32] == ref]
    if len(matches) != 1 or not store.revoke_api_key(identifier, matches[0]):
        raise NotFound("no such key")
    return _back(identifier, "key-revoked")


# -- exports --------------------------------------------------------------------------------

def _download(body: str, media: str, filename: str) -> Response:
    return Response(body, media_type=media, headers={
        "content-disposition": f'attachment; filename="{filename}"'})


def _file_stem(identifier: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in identifier)[:80] or "study"


@router.get("/studies/{identifier}/export/{kind}")
def export(request: Request, identifier: str, kind: str,
           user: StaffUser = Depends(staff_user)) -> Response:
    service = service_of(request)
    study_ok(identifier)
    stem = _file_stem(identifier)
    if kind == "responses.json":
        bundle = service.response_bundle(identifier)
        return _download(json.dumps(bundle, ensure_ascii=False), FHIR_JSON,
                         f"{stem}-responses.json")
    if kind not in ("sessions.csv", "codebook.csv", "visits.csv", "sessions.json"):
        raise NotFound("no such export")
    row = service._task_row(identifier)
    columns = exports.codebook(json.loads(row.definition),
                               exports.display_titles(service.task(row).info))
    if kind == "codebook.csv":
        return _download(exports.codebook_csv(columns), "text/csv; charset=utf-8",
                         f"{stem}-codebook.csv")
    sessions = service.export_rows(identifier)
    if kind == "sessions.csv":
        return _download(exports.wide_csv(sessions, columns), "text/csv; charset=utf-8",
                         f"{stem}-sessions.csv")
    if kind == "visits.csv":
        return _download(exports.long_csv(sessions), "text/csv; charset=utf-8",
                         f"{stem}-visits.csv")
    return JSONResponse(exports.as_json(sessions), headers={
        "content-disposition": f'attachment; filename="{stem}-sessions.json"'})
