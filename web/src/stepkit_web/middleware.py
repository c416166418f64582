"""What the service's ASGI middlewares share: passing every scope they do not handle (lifespan,
websockets, the requests a middleware is not for) to the application as it is, and rewriting a
response's headers on their way out (security.SecurityHeaders, limits.PrivatePages,
timing.ServerTiming)."""

from __future__ import annotations

from typing import Any, Awaitable, Callable, List, Tuple

Headers = List[Tuple[bytes, bytes]]
Send = Callable[[Any], Awaitable[None]]


class HTTPMiddleware:
    """An ASGI middleware whose :meth:`handle` takes the HTTP requests :meth:`applies` to (all by
    default); anything else goes to the application untouched."""

    def __init__(self, app: Any) -> None:
        self.app = app

    def applies(self, scope: Any) -> bool:
        return True

    async def handle(self, scope: Any, receive: Any, send: Send) -> None:
        raise NotImplementedError

    async def __call__(self, scope: Any, receive: Any, send: Send) -> None:
        if scope["type"] != "http" or not self.applies(scope):
            await self.app(scope, receive, send)
            return
        await self.handle(scope, receive, send)


def rewriting_headers(send: Send, rewrite: Callable[[Headers], Headers]) -> Send:
    """`send`, with the headers of the response's start message replaced by `rewrite` of them."""

    async def send_rewritten(message: Any) -> None:
        if message["type"] == "http.response.start":
            message = dict(message)
            message["headers"] = rewrite(list(message.get("headers", [])))
        await send(message)

    return send_rewritten
