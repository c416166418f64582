"""What the routers share: the templates, the message page, the service and links built from
the configured base URL."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

from fastapi import Request
from fastapi.responses import HTMLResponse
from fastapi.templating import Jinja2Templates

from .service import Service

_HERE = Path(__file__).resolve().parent
templates = Jinja2Templates(directory=str(_HERE / "templates"))


def service_of(request: Request) -> Service:
    return request.app.state.service


def absolute(request: Request, path: str) -> str:
    """A link for a participant, from the configured base URL (never the Host header)."""
    return request.app.state.base_url.rstrip("/") + path


def secure_cookies(request: Request) -> bool:
    """Cookies are marked Secure when the service is reached over HTTPS."""
    return request.app.state.base_url.lower().startswith("https://")


def page(request: Request, status: int, heading: str, *paragraphs: str,
         form_action: Optional[str] = None, form_button: str = "",
         task_name: str = "", **extra: Any) -> HTMLResponse:
    """The one-message page (errors, the finished page)."""
    return templates.TemplateResponse(request, "message.html", {
        "page_title": heading, "heading": heading, "paragraphs": paragraphs,
        "form_action": form_action, "form_button": form_button, "task_name": task_name,
        **extra}, status_code=status)
