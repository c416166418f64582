"""Sending a participant their resume address by e-mail, through the host's SMTP server: off
unless configured (``STEPKIT_WEB_SMTP_HOST``...). The address given is used for that one
message and never stored; sends are rate-limited per session and per client, so the form
cannot be used to send mail in bulk."""

from __future__ import annotations

import re
import smtplib
import ssl
from dataclasses import dataclass
from email.message import EmailMessage
from typing import Mapping, Optional

_ADDRESS = re.compile(r"[^@\s<>\"',;]{1,64}@[^@\s<>\"',;]{1,189}\.[^@\s<>\"',;.]{2,63}")


@dataclass(frozen=True)
class SmtpSettings:
    host: str
    sender: str
    port: int = 587
    security: str = "starttls"  # "starttls", "ssl" or "none"
    username: Optional[str] = None
    password: Optional[str] = None
    timeout: float = 10.0

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> Optional["SmtpSettings"]:
        """``STEPKIT_WEB_SMTP_HOST`` (none: e-mail is off), ``_PORT`` (587), ``_FROM``
        (required with a host), ``_SECURITY`` (starttls, ssl or none), ``_USER``,
        ``_PASSWORD``."""
        host = env.get("STEPKIT_WEB_SMTP_HOST")
        if not host:
            return None
        sender = env.get("STEPKIT_WEB_SMTP_FROM")
        if not sender:
            raise SystemExit("stepkit_web: STEPKIT_WEB_SMTP_FROM is required with "
                             "STEPKIT_WEB_SMTP_HOST")
        security = env.get("STEPKIT_WEB_SMTP_SECURITY", "starttls")
        if security not in ("starttls", "ssl", "none"):
            raise SystemExit("stepkit_web: STEPKIT_WEB_SMTP_SECURITY is starttls, ssl or none")
        return cls(host=host, sender=sender, port=int(env.get("STEPKIT_WEB_SMTP_PORT", "587")),
                   security=security, username=env.get("STEPKIT_WEB_SMTP_USER") or None,
                   password=env.get("STEPKIT_WEB_SMTP_PASSWORD") or None)


def address_ok(text: str) -> Optional[str]:
    """A single plain e-mail address (no name, no list, no line breaks), or None."""
    text = text.strip()
    if len(text) > 254 or not _ADDRESS.fullmatch(text):
        return None
    return text


def send_resume_link(settings: SmtpSettings, to: str, study_title: str, url: str) -> None:
    """Sends the resume address; raises OSError or smtplib.SMTPException when it cannot."""
    message = EmailMessage()
    message["From"] = settings.sender
    message["To"] = to
    message["Subject"] = f"Your link to continue: {study_title}"[:200]
    message.set_content(
        f"You asked for the address to continue \"{study_title}\" where you left off:\n\n"
        f"{url}\n\nAnyone with this address can continue your answers: keep it to yourself.\n")
    if settings.security == "ssl":
        client: smtplib.SMTP = smtplib.SMTP_SSL(settings.host, settings.port,
                                                timeout=settings.timeout,
                                                context=ssl.create_default_context())
    else:
        client = smtplib.SMTP(settings.host, settings.port, timeout=settings.timeout)
    with client:
        if settings.security == "starttls":
            client.starttls(context=ssl.create_default_context())
        if settings.username:
            client.login(settings.username, settings.password or "")
        client.send_message(message)
