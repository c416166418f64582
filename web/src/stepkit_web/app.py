"""The FastAPI application: a router per area — participant pages (pages.py), the study team's
pages behind a staff login (staff.py) and the host's JSON API (api.py, behind the API key) —
with the security headers, body limits and same-origin rule of security.py and limits.py, and
the error pages. Build one with :func:`create_app`."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, Callable, Dict, Mapping, Optional

import sqlalchemy as sa
import stepkit
from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles

from . import games, pages, staff
from .api import build_router
from . import verification
from .common import page
from .db import Store, Timeouts, make_engine
from .limits import BodyLimit, MAX_BODY, PrivatePages
from .mail import SmtpSettings
from .migrate import upgrade
from .ratelimit import Rate, TokenBuckets
from .security import ApiKey, SameOrigin, SecurityHeaders
from .service import Damaged, NotFound, Refused, Service
from .timing import ServerTiming

log = logging.getLogger("stepkit_web")
_HERE = Path(__file__).resolve().parent

DEFAULT_BASE_URL = "http://127.0.0.1:8000"
# Session creation through one invite link, and by one client address (per worker).
INVITE_RATE = Rate(burst=60, per_ms=1000)
CLIENT_RATE = Rate(burst=10, per_ms=6000)
# E-mails of the resume address per session.
MAIL_RATE = Rate(burst=3, per_ms=600_000)


def create_app(db_url: str, integrity_key: str, *, api_key: Optional[str] = None,
               open_api: bool = False, base_url: str = DEFAULT_BASE_URL,
               clock: Optional[Callable[[], int]] = None, time_source: Optional[str] = None,
               migrate: bool = True, timeouts: Timeouts = Timeouts(), pool_size: int = 10,
               max_overflow: int = 5, task_cache_size: int = 32, live_sessions: int = 256,
               invite_rate: Rate = INVITE_RATE, client_rate: Rate = CLIENT_RATE,
               rate_clock: Optional[Callable[[], int]] = None,
               body_timeout: float = 30.0, smtp: Optional[SmtpSettings] = None,
               mail_rate: Rate = MAIL_RATE,
               messages: Optional[Mapping[str, Any]] = None,
               files_dir: Optional[str] = None) -> FastAPI:
    """The service. ``api_key``: the host API's key (without one the API refuses every call,
    unless ``open_api`` opens it to anyone: loopback only, see cli.py). ``base_url``: where
    participants reach the service; every link is built from it. ``clock``/``time_source``:
    see :class:`stepkit_web.service.Service`. ``rate_clock``: the token buckets' clock (ms).
    ``smtp``: the host's SMTP server, to e-mail a participant their resume address (off when
    None). ``messages``: the host's message catalogues by language tag, ``files_dir``: where
    the files participants give (a signature) are written, ``live_sessions`` how many open
    sessions a worker keeps between page POSTs (see :class:`stepkit_web.service.Service`)."""
    engine = make_engine(db_url, pool_size=pool_size, timeouts=timeouts,
                         max_overflow=max_overflow)
    if migrate:
        upgrade(engine)
    service = Service(Store(engine), integrity_key, clock, time_source=time_source,
                      task_cache_size=task_cache_size, messages=messages, files_directory=files_dir,
                      live_sessions=live_sessions)
    app = FastAPI(title="StepKit web", version="0.1.0", docs_url=None, redoc_url=None,
                  description="Register StepKit tasks, create sessions and invite links, read "
                              "states and results. Participant pages are under /r/ and /i/. "
                              "Every call needs `Authorization: Bearer KEY`.")
    app.state.service = service
    app.state.base_url = base_url
    app.state.invite_buckets = TokenBuckets(invite_rate, rate_clock)
    app.state.client_buckets = TokenBuckets(client_rate, rate_clock)
    app.state.mail_buckets = TokenBuckets(mail_rate, rate_clock)
    app.state.smtp = smtp
    same_origin = app.state.same_origin = SameOrigin(base_url)
    app.mount("/static", StaticFiles(directory=str(_HERE / "static")), name="static")
    app.add_middleware(BodyLimit, limit=MAX_BODY, read_timeout=body_timeout)
    app.add_middleware(ServerTiming)
    app.add_middleware(PrivatePages)
    app.add_middleware(SecurityHeaders)

    def is_api(request: Request) -> bool:
        return request.url.path.startswith("/api/")

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

    app.include_router(pages.router)
    app.include_router(games.router)

    # -- the study team's pages -----------------------------------------------------------------

    @app.exception_handler(staff.LoginRequired)
    async def _login_required(request: Request, exc: staff.LoginRequired) -> Response:
        if request.method == "GET":
            return RedirectResponse("/staff/login", status_code=303)
        return page(request, 403, "Please sign in again",
                    "Your staff session has ended: nothing was changed.")

    app.include_router(staff.router)

    # -- the host's API -------------------------------------------------------------------------

    app.include_router(build_router([ApiKey(api_key, open_api), same_origin]))
    app.include_router(verification.build_router([ApiKey(api_key, open_api), same_origin]))

    return app
