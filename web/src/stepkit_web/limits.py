"""The request body limit: 64 KiB, answered with 413 before the application reads a byte
more (a page of answers is far smaller; a task definition larger than this is not a web
upload)."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from .middleware import Headers, HTTPMiddleware, Send, rewriting_headers

MAX_BODY = 64 * 1024

_PAGE = (b"<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>Too much data"
         b"</title></head><body><main><h1>Too much data</h1><p>The form sent more than 64 KiB. "
         b"Nothing was saved from it; go back and shorten your answer.</p></main></body></html>")


class BodyLimit:
    """Also bounds the time a client takes to send the body (``read_timeout`` seconds in
    all): a body trickled byte by byte gets a 408 and the connection is closed."""

    def __init__(self, app: Any, limit: int = MAX_BODY, read_timeout: float = 30.0) -> None:
        self.app = app
        self.limit = limit
        self.read_timeout = read_timeout

    async def _too_slow(self, scope: Any, send: Any) -> None:
        body = b'{"code": "ETIMEOUT", "message": "The body took too long to arrive."}'
        await send({"type": "http.response.start", "status": 408,
                    "headers": [(b"content-type", b"application/json"),
                                (b"content-length", str(len(body)).encode()),
                                (b"connection", b"close")]})
        await send({"type": "http.response.body", "body": body})

    async def _reject(self, scope: Any, send: Any) -> None:
        api = scope.get("path", "").startswith("/api/")
        body = (b'{"code": "ETOOLARGE", "message": "The body is larger than 64 KiB."}'
                if api else _PAGE)
        ctype = b"application/json" if api else b"text/html; charset=utf-8"
        await send({"type": "http.response.start", "status": 413,
                    "headers": [(b"content-type", ctype),
                                (b"content-length", str(len(body)).encode()),
                                (b"connection", b"close")]})
        await send({"type": "http.response.body", "body": body})

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope.get("method") in ("GET", "HEAD"):
            await self.app(scope, receive, send)
            return
        for name, value in scope.get("headers", []):
            if name == b"content-length":
                try:
                    if int(value) > self.limit:
                        await self._reject(scope, send)
                        return
                except ValueError:
                    await self._reject(scope, send)
                    return
        # Read the whole body (bounded), then hand it on: a chunked body is counted too.
        chunks = []
        size = 0
        more = True
        deadline = time.monotonic() + self.read_timeout
        while more:
            try:
                message = await asyncio.wait_for(receive(),
                                                 max(0.0, deadline - time.monotonic()))
            except asyncio.TimeoutError:
                await self._too_slow(scope, send)
                return
            if message["type"] == "http.disconnect":
                return
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.limit:
                await self._reject(scope, send)
                return
            chunks.append(chunk)
            more = message.get("more_body", False)
        body = b"".join(chunks)
        sent = False

        async def replay() -> Any:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)


class PrivatePages(HTTPMiddleware):
    """Participant pages hold answers and carry the token in their address: never cached (the
    browser's Back then shows the current step, not a stored copy that could be sent again).
    They are never sent as a referrer to another site (SecurityHeaders' Referrer-Policy)."""

    HEADERS = [(b"cache-control", b"no-store")]

    def applies(self, scope: Any) -> bool:
        return bool(scope.get("path", "").startswith(("/r/", "/i/")))

    async def handle(self, scope: Any, receive: Any, send: Send) -> None:
        def private(headers: Headers) -> Headers:
            return [(k, v) for k, v in headers if k.lower() != b"cache-control"] + self.HEADERS

        await self.app(scope, receive, rewriting_headers(send, private))
