"""How much of a request the engine takes: every engine call is timed, and each response says
so in a ``Server-Timing`` header (``engine;dur=…, app;dur=…`` in milliseconds), which the load
generator adds up for the README's "engine's share per request"."""

from __future__ import annotations

import contextvars
import time
from typing import Any, Callable, List, Optional

from .middleware import Headers, HTTPMiddleware, Send, rewriting_headers

_engine_ns: contextvars.ContextVar[Optional[List[int]]] = contextvars.ContextVar(
    "stepkit_web_engine_ns", default=None)


def add(ns: int) -> None:
    box = _engine_ns.get()
    if box is not None:
        box[0] += ns


def timed(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    start = time.perf_counter_ns()
    try:
        return fn(*args, **kwargs)
    finally:
        add(time.perf_counter_ns() - start)


class TimedSession:
    """A stepkit.Session whose every method call and property read is counted as engine time."""

    def __init__(self, session: Any) -> None:
        self._session = session

    def __getattr__(self, name: str) -> Any:
        start = time.perf_counter_ns()
        value = getattr(self._session, name)
        add(time.perf_counter_ns() - start)
        if callable(value):
            return lambda *a, **k: timed(value, *a, **k)
        return value

    def __enter__(self) -> "TimedSession":
        return self

    def __exit__(self, *exc: Any) -> None:
        self._session.close()


class ServerTiming(HTTPMiddleware):
    """ASGI middleware: starts the count for each request and reports it in the headers."""

    async def handle(self, scope: Any, receive: Any, send: Send) -> None:
        box = [0]
        token = _engine_ns.set(box)
        start = time.perf_counter_ns()

        def with_timing(headers: Headers) -> Headers:
            total = (time.perf_counter_ns() - start) / 1e6
            value = f"engine;dur={box[0] / 1e6:.3f}, app;dur={total:.3f}".encode()
            return headers + [(b"server-timing", value)]

        try:
            await self.app(scope, receive, rewriting_headers(send, with_timing))
        finally:
            _engine_ns.reset(token)
