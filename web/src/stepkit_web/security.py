"""Who may call what: the host API's key (a FastAPI dependency), the same-origin rule for every
state-changing request, the body types the API accepts, and the security headers every
response carries.

The API is closed unless a key is configured: a caller sends ``Authorization: Bearer KEY``
and the key is compared in constant time. Running the API open is an explicit opt-in
(``open_api=True``), allowed only on loopback by the command line, and logged as a warning.

A browser lets any web page send a "simple" cross-site POST (``text/plain``, a form) without
asking the server first, with the user's network position (a study laptop on loopback, an
intranet). So a state-changing request is refused when the browser says it comes from another
site (``Sec-Fetch-Site``), else when its ``Origin``, else its ``Referer``, names another
origin; the API also refuses a body that is not JSON (415), which a cross-site page cannot
send without a CORS preflight, and this service answers no preflight."""

from __future__ import annotations

import hashlib
import hmac
import logging
from typing import Any, Iterable, Optional
from urllib.parse import urlsplit

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from .middleware import Headers, HTTPMiddleware, Send, rewriting_headers
from .service import NotFound, Refused

log = logging.getLogger("stepkit_web")

JSON_TYPES = ("application/json", "application/fhir+json")
FORM_TYPES = ("application/x-www-form-urlencoded", "multipart/form-data")
UNSAFE = ("POST", "PUT", "PATCH", "DELETE")


def media_type(request: Request) -> str:
    return request.headers.get("content-type", "").split(";", 1)[0].strip().lower()


def origin_of(url: str) -> Optional[str]:
    """``scheme://host[:port]`` of a URL, lower case, default ports dropped."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return None
    if not parts.scheme or not parts.hostname:
        return None
    scheme = parts.scheme.lower()
    host = parts.hostname.lower()
    if ":" in host:
        host = f"[{host}]"
    if port is None or (scheme, port) in (("http", 80), ("https", 443)):
        return f"{scheme}://{host}"
    return f"{scheme}://{host}:{port}"


# Declares the scheme in the OpenAPI description; the check itself is ApiKey's.
_bearer = HTTPBearer(auto_error=False, scheme_name="apiKey",
                     description="The API key: `Authorization: Bearer KEY`.")


class ApiKey:
    """The dependency that guards the host API (``Depends(ApiKey(...))`` on its router)."""

    def __init__(self, key: Optional[str], open_api: bool) -> None:
        self._key = key.encode("utf-8") if key else None
        self.open_api = open_api and not key
        if self.open_api:
            log.warning("the host API is OPEN: anyone who can reach this server may register "
                        "tasks and read every answer (open_api / --open-api); use it on "
                        "loopback only")

    def __call__(self, request: Request,
                 credentials: Optional[HTTPAuthorizationCredentials] = Depends(_bearer)
                 ) -> Optional[str]:
        """Returns the caller's scope: None for the service's key (every study), else the one
        task identifier a per-study key reaches (also in ``request.state.api_scope``)."""
        request.state.api_scope = None
        if self.open_api:
            return None
        given = credentials.credentials.strip() if credentials is not None else ""
        raw = given.encode("utf-8", "surrogateescape")
        # compare_digest takes the same time whatever the first differing byte is.
        if self._key is not None and credentials is not None and \
                hmac.compare_digest(raw, self._key):
            return None
        if given and len(given) <= 200:
            # A per-study key: found by its SHA-256 (an index lookup reveals nothing a caller
            # could use to guess a key byte by byte).
            scope = request.app.state.service.store.api_key_scope(
                hashlib.sha256(raw).hexdigest())
            if scope is not None:
                request.state.api_scope = scope
                return scope
        if self._key is None:
            raise Refused(401, {"code": "EAUTH", "message": "The API is closed: the server "
                                "has no API key configured, and this is no study's key."})
        raise Refused(401, {"code": "EAUTH", "message": "A valid API key is required "
                            "(Authorization: Bearer KEY)."})


def in_scope(request: Request, identifier: str) -> None:
    """A per-study key reaches its own task only: anything else is "not found" to it."""
    scope = getattr(request.state, "api_scope", None)
    if scope is not None and scope != identifier:
        raise NotFound(f"no task {identifier!r}")


class SameOrigin:
    """Refuses a state-changing request another site made a browser send (403).

    ``allowed`` is the service's own origin (from the configured base URL). Without one, the
    request's own ``Host`` is the reference: a browser always sends the real host of the
    server it talks to, so a cross-site request cannot fake it."""

    def __init__(self, base_url: Optional[str]) -> None:
        self.allowed = origin_of(base_url) if base_url else None

    def _own(self, request: Request, seen: str) -> bool:
        if self.allowed is not None:
            return seen == self.allowed
        host = request.headers.get("host", "").lower()
        parts = urlsplit(seen)
        return bool(host) and parts.netloc.lower() == host

    def __call__(self, request: Request) -> None:
        if request.method not in UNSAFE:
            return
        site = request.headers.get("sec-fetch-site")
        if site is not None:
            if site.lower() in ("same-origin", "none"):
                return
            raise _cross_site()
        origin = request.headers.get("origin")
        if origin is not None:
            seen = origin_of(origin)
            if seen is None or not self._own(request, seen):
                raise _cross_site()
            return
        referer = request.headers.get("referer")
        if referer is not None:
            seen = origin_of(referer)
            if seen is None or not self._own(request, seen):
                raise _cross_site()


def _cross_site() -> Refused:
    return Refused(403, {"code": "EORIGIN", "message": "Refused: the request came from "
                         "another web site."})


def require_media(request: Request, allowed: Iterable[str], body: bytes) -> None:
    """415 unless the body's type is one of ``allowed``; a request without a body may leave
    the type out."""
    mtype = media_type(request)
    if not mtype and not body:
        return
    if mtype not in allowed:
        raise Refused(415, {"code": "EMEDIATYPE", "message": "The body must be "
                            + " or ".join(allowed) + f", not {mtype or 'untyped'}."})


# -- headers on every response ------------------------------------------------------------------

# connect-src 'self': a game's page posts its inputs to this service (games.py), nowhere else.
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
       "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")

SECURITY_HEADERS = [
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    # Participant links carry their token in the address: it goes to no other site.
    (b"referrer-policy", b"same-origin"),
    (b"x-frame-options", b"DENY"),
    (b"cross-origin-opener-policy", b"same-origin"),
]


class SecurityHeaders(HTTPMiddleware):
    """ASGI middleware: the headers above on every response, error pages and 413s included."""

    NAMES = {k for k, _ in SECURITY_HEADERS}

    async def handle(self, scope: Any, receive: Any, send: Send) -> None:
        def secured(headers: Headers) -> Headers:
            return [(k, v) for k, v in headers if k.lower() not in self.NAMES] + SECURITY_HEADERS

        await self.app(scope, receive, rewriting_headers(send, secured))
