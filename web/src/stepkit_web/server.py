"""The HTTP server ``python -m stepkit_web serve`` ships with: Uvicorn (its h11 protocol), with
every limit a slow or greedy client could otherwise stretch bounded.

Uvicorn bounds the keep-alive time (``timeout_keep_alive``), the size of a request's head
(``h11_max_incomplete_event_size``: a larger head is a 400 and the connection is closed, so a
256 MiB header costs 16 KiB) and the connections served at once (``limit_concurrency``). It has
no limit on the time a client takes to send its request head, so a client trickling one byte a
second keeps a connection (and a descriptor) forever. :class:`GuardedH11Protocol` adds that
bound, and, when the server is at its connection limit, closes the longest idle connection
(one with no request in progress) to make room, so idle connections cannot starve real
requests. The request body's read time is bounded in :class:`stepkit_web.limits.BodyLimit`.

Chosen over gunicorn with Uvicorn workers, whose own limits (``--limit-request-field_size``,
``--timeout``) do not apply to the requests a Uvicorn worker parses, and over a second server
in front, which a one-machine deployment should not need; a scale-out puts nginx in front
anyway (web/README.md gives its settings)."""

from __future__ import annotations

import os
import resource
import time
from typing import Any, Optional

from uvicorn.protocols.http.h11_impl import H11Protocol

ENV_HEADER_TIMEOUT = "STEPKIT_WEB_HEADER_TIMEOUT"

DEFAULTS = {
    "header_timeout": 10.0,     # seconds to send a request's line and headers
    "keep_alive": 5,            # seconds an idle keep-alive connection stays open
    "max_head": 16 * 1024,      # bytes of request line + headers (nginx: 4 x 8k buffers)
    "connections": 1000,        # connections at once (bounded by the descriptor limit)
    "body_timeout": 30.0,       # seconds to send a request's body (BodyLimit)
}


class GuardedH11Protocol(H11Protocol):
    """Uvicorn's h11 protocol, plus a deadline for the request head and eviction of the
    longest idle connection when the server is full."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.header_timeout = float(os.environ.get(ENV_HEADER_TIMEOUT)
                                    or DEFAULTS["header_timeout"])
        self._head_timer: Optional[Any] = None
        self._head_cycle: Any = None
        self.idle_since = time.monotonic()

    def _idle(self) -> bool:
        return self.cycle is None or self.cycle.response_complete

    def _arm_head(self) -> None:
        self._head_cycle = self.cycle
        self._head_timer = self.loop.call_later(self.header_timeout, self._head_expired)

    def _disarm_head(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _head_expired(self) -> None:
        self._head_timer = None
        if self.cycle is self._head_cycle and not self.transport.is_closing():
            # No complete request head within the deadline: drop the connection (a 408 would
            # be written into a socket that a trickling client reads as slowly as it writes).
            self.transport.close()

    def connection_made(self, transport: Any) -> None:  # type: ignore[override]
        super().connection_made(transport)
        limit = self.limit_concurrency
        if limit is not None and len(self.connections) >= limit:
            idle = sorted((p for p in list(self.connections)
                           if p is not self and isinstance(p, GuardedH11Protocol) and p._idle()),
                          key=lambda p: p.idle_since)
            for p in idle:
                if len(self.connections) < limit:
                    break
                p.transport.close()
                self.connections.discard(p)
        self._arm_head()

    def data_received(self, data: bytes) -> None:
        if self._head_timer is None and self._idle():
            self._arm_head()  # the first bytes of the next request on a kept-alive connection
        super().data_received(data)
        if self._head_timer is not None and self.cycle is not self._head_cycle:
            self._disarm_head()  # the head is complete: the request is running

    def on_response_complete(self) -> None:
        self.idle_since = time.monotonic()
        super().on_response_complete()

    def connection_lost(self, exc: Optional[Exception]) -> None:
        self._disarm_head()
        super().connection_lost(exc)


def descriptor_budget(wanted: int) -> int:
    """Raises the soft descriptor limit to the hard one and returns how many connections fit
    in it (64 descriptors are kept for the database, logs and the engine's files)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or hard > soft:
        target = 65536 if hard == resource.RLIM_INFINITY else hard
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
        except (ValueError, OSError):
            pass
    return max(16, min(wanted, soft - 64))


def serve(host: str, port: int, workers: int, *, header_timeout: float, keep_alive: int,
          max_head: int, connections: int) -> None:
    import uvicorn

    os.environ[ENV_HEADER_TIMEOUT] = str(header_timeout)
    uvicorn.run("stepkit_web.cli:app_from_env", factory=True, host=host, port=port,
                workers=workers, log_level="warning", proxy_headers=True,
                http=GuardedH11Protocol, h11_max_incomplete_event_size=max_head,
                timeout_keep_alive=keep_alive,
                limit_concurrency=descriptor_budget(connections))
