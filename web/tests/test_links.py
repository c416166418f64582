"""Links: a personal invite (one participant, one session, resumed from the same link until
it is finished, revoked or expired) and an open link (each browser starts its own session and
resumes it through a cookie; starting over is explicit). The participant pages offer the
resume address to keep."""

from __future__ import annotations

import json

import sqlalchemy as sa
from fastapi.testclient import TestClient

from conftest import BASE, answers, register
from stepkit_web.db import sessions
from stepkit_web.walk import page_fields, post_form


def session_count(app) -> int:
    with app.state.service.store.engine.connect() as conn:
        return conn.execute(sa.select(sa.func.count()).select_from(sessions)).scalar_one()


def personal(client, participants, **extra):
    r = client.post("/api/tasks/daily-checkin/invites",
                    content=json.dumps({"participants": participants, **extra}),
                    headers={"content-type": "application/json"})
    assert r.status_code == 201, r.text
    return {i["participant"]: i["inviteUrl"].replace(BASE, "") for i in r.json()["invites"]}


def participant_browser(app):
    return TestClient(app, base_url=BASE)  # no API key: a participant's browser


def test_personal_invite_resumes_from_the_same_link(app, client):
    register(client, "daily-checkin")
    links = personal(client, ["P-001", "P-002"])
    link = links["P-001"]
    browser = participant_browser(app)
    start = browser.get(link)
    assert start.status_code == 200 and "Start" in start.text
    r = post_form(browser, link, [])
    assert r.status_code == 303
    page_url = r.headers["location"]
    # Clicking Start again, or from another device: the same one session.
    again = post_form(participant_browser(app), link, [])
    assert again.headers["location"] == page_url
    assert session_count(app) == 1
    # Answer the first page, then open the invite link again in a new browser: it resumes at
    # the second step with the first answer kept.
    with app.state.service.store.engine.connect() as conn:
        sid = conn.execute(sa.select(sessions.c.id)).scalar_one()
    info = client.get(f"/api/sessions/{sid}").json()
    fields = page_fields(info["state"], answers("daily-checkin"))
    r = post_form(browser, page_url, [("_version", str(info["version"])), ("_step", "mood"),
                                      ("action", "next")] + fields)
    assert r.status_code == 303
    other = participant_browser(app)
    resumed = other.get(link, follow_redirects=True)
    assert resumed.status_code == 200
    assert 'name="_step" value="mood"' not in resumed.text
    assert session_count(app) == 1
    # The study page's data: the session carries the participant id.
    with app.state.service.store.engine.connect() as conn:
        assert conn.execute(sa.select(sessions.c.participant)).scalar_one() == "P-001"


def test_personal_invite_revoked_or_expired_is_gone(app, client, clock):
    register(client, "daily-checkin")
    links = personal(client, ["A", "B"], expiresAt="2026-01-02T09:00:00Z")
    browser = participant_browser(app)
    r = post_form(browser, links["A"], [])
    assert r.status_code == 303
    # Expired (the test clock moves past the date): neither starting nor resuming.
    clock.advance(2 * 86400 * 1000)
    assert browser.get(links["B"]).status_code == 404
    assert browser.get(links["A"], follow_redirects=True).status_code == 404
    before = session_count(app)
    assert post_form(browser, links["B"], []).status_code == 404
    assert session_count(app) == before


def test_bad_invite_requests_change_nothing(app, client):
    register(client, "daily-checkin")
    for body in ({"participants": [""]}, {"participants": ["x" * 201]},
                 {"participants": ["a"], "expiresAt": "tomorrow"}, {"nope": 1},
                 {"participants": "P-1"}):
        r = client.post("/api/tasks/daily-checkin/invites", content=json.dumps(body),
                        headers={"content-type": "application/json"})
        assert r.status_code == 400, (body, r.text)
    assert app.state.service.store.invites("daily-checkin") == []


def test_open_link_resumes_in_the_same_browser_and_starts_over_on_request(app, client):
    register(client, "daily-checkin")
    r = client.post("/api/tasks/daily-checkin/invites",
                    headers={"content-type": "application/json"})
    link = r.json()["inviteUrl"].replace(BASE, "")
    browser = participant_browser(app)
    first = post_form(browser, link, [])
    assert first.status_code == 303
    cookie = [c for c in first.headers.get_list("set-cookie") if c.startswith("stepkit-link-")]
    assert cookie and "HttpOnly" in cookie[0] and "SameSite=lax" in cookie[0]
    # Reopening the link in this browser: a page offering to continue, and Start (without
    # asking to start over) goes back to the same session.
    again = browser.get(link)
    assert "Continue where you left off" in again.text and "Start over" in again.text
    assert first.headers["location"] in again.text
    assert post_form(browser, link, []).headers["location"] == first.headers["location"]
    assert session_count(app) == 1
    # Start over: explicit, a new session.
    fresh = post_form(browser, link, [("fresh", "1")])
    assert fresh.headers["location"] != first.headers["location"]
    assert session_count(app) == 2
    # Another browser (no cookie): its own session.
    other = participant_browser(app)
    assert "Continue where you left off" not in other.get(link).text
    post_form(other, link, [])
    assert session_count(app) == 3


def test_step_pages_offer_the_resume_address(app, client):
    register(client, "daily-checkin")
    r = client.post("/api/tasks/daily-checkin/sessions").json()
    page = participant_browser(app).get(r["resumeUrl"].replace(BASE, ""))
    assert f'value="{r["resumeUrl"]}" readonly' in page.text
    assert 'data-copy="resume-url"' in page.text


def test_the_resume_address_by_email_when_the_host_configured_smtp(db_url, clock):
    """Off by default (no form, 404); with SMTP settings the step page offers it, the message
    holds the resume address, the address given is not stored, and sends are rate-limited."""
    from aiosmtpd.controller import Controller
    from live import free_port
    from stepkit_web.app import create_app
    from stepkit_web.mail import SmtpSettings
    from conftest import API_KEY, KEY
    from stepkit_web.ratelimit import Rate

    received = []

    class Sink:
        async def handle_DATA(self, server, session, envelope):
            received.append((envelope.rcpt_tos, envelope.content.decode("utf-8", "replace")))
            return "250 OK"

    port = free_port()
    controller = Controller(Sink(), hostname="127.0.0.1", port=port)
    controller.start()
    try:
        off = create_app(db_url, KEY, api_key=API_KEY, base_url=BASE, clock=clock)
        with TestClient(off, base_url=BASE, headers={"authorization": f"Bearer {API_KEY}"}) as c:
            register(c, "daily-checkin")
            made = c.post("/api/tasks/daily-checkin/sessions").json()
            path = made["resumeUrl"].replace(BASE, "")
            assert 'name="email"' not in c.get(path).text
            assert post_form(c, path + "/email", [("email", "a@example.org")]).status_code == 404
        smtp = SmtpSettings(host="127.0.0.1", port=port, sender="study@example.org",
                            security="none")
        now = [0]
        on = create_app(db_url, KEY, api_key=API_KEY, base_url=BASE, clock=clock, smtp=smtp,
                        mail_rate=Rate(burst=2, per_ms=600_000), rate_clock=lambda: now[0])
        with TestClient(on, base_url=BASE) as c:
            assert 'name="email"' in c.get(path).text
            bad = post_form(c, path + "/email", [("email", "not an address\r\nBcc: x@y.z")])
            assert bad.status_code == 400 and not received
            r = post_form(c, path + "/email", [("email", "ann@example.org")])
            assert r.status_code == 303 and r.headers["location"].endswith("notice=emailed")
            assert received[0][0] == ["ann@example.org"]
            assert made["resumeUrl"] in received[0][1]
            post_form(c, path + "/email", [("email", "ann@example.org")])
            limited = post_form(c, path + "/email", [("email", "ann@example.org")])
            assert limited.status_code == 429 and len(received) == 2
        with on.state.service.store.engine.connect() as conn:
            dump = "\n".join(str(row) for t in ("sessions", "tokens")
                             for row in conn.execute(sa.text(f"SELECT * FROM {t}")).all())
        assert "ann@example.org" not in dump
    finally:
        controller.stop()
