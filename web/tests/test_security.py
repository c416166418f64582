"""Who may call what (issue 26, items 1 and 8): the API is closed without a key, compared in
constant time; running it open is an explicit opt-in, loopback only; state changes accept only
JSON (the API) or forms (the pages) and refuse other sites; every response carries the
security headers; links come from the configured base URL; identifiers with '/' are refused."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys

import pytest
from fastapi.testclient import TestClient

from conftest import API_KEY, AUTH, BASE, KEY, ROOT, example, new_session, register
from stepkit_web.app import create_app
from stepkit_web.walk import post_form

JSON = {"content-type": "application/json"}


def test_without_a_key_the_api_refuses_everyone(db_url):
    app = create_app(db_url, KEY)  # no key configured, not opened
    with TestClient(app) as c:
        r = c.post("/api/tasks", content=example("daily-checkin"), headers=JSON)
        assert r.status_code == 401 and r.json()["code"] == "EAUTH"
        assert r.headers["www-authenticate"] == "Bearer"
        assert c.get("/api/tasks/daily-checkin").status_code == 401
        assert c.get("/api/sessions/" + "0" * 32).status_code == 401
        # A bearer of anything is refused too: there is no key to match.
        assert c.get("/api/tasks/x", headers={"authorization": "Bearer "}).status_code == 401


def test_a_wrong_or_malformed_key_is_refused_and_nothing_changes(client, app):
    for header in ("Bearer wrong", f"Basic {API_KEY}", API_KEY, f"Bearer {API_KEY}x",
                   f"Bearer {API_KEY[:-1]}", "Bearer \u00e9t\u00e9".encode("latin-1")):
        r = client.post("/api/tasks", content=example("daily-checkin"),
                        headers={"authorization": header, **JSON})
        assert r.status_code == 401, header
    assert client.get("/api/tasks/daily-checkin").status_code == 404  # nothing registered
    assert register(client, "daily-checkin")["version"] == 1  # the right key works


def test_the_key_is_compared_in_constant_time(monkeypatch, db_url):
    import hmac

    import stepkit_web.security as security

    seen = []
    real = hmac.compare_digest

    def spy(a, b):
        seen.append((a, b))
        return real(a, b)

    monkeypatch.setattr(security.hmac, "compare_digest", spy)
    app = create_app(db_url, KEY, api_key="k3y")
    with TestClient(app) as c:
        assert c.get("/api/tasks/x", headers={"authorization": "Bearer nope"}).status_code == 401
    assert seen == [(b"nope", b"k3y")]


def test_open_api_is_explicit_and_logged(db_url, caplog):
    with caplog.at_level(logging.WARNING, logger="stepkit_web"):
        app = create_app(db_url, KEY, open_api=True)
    assert any("OPEN" in r.getMessage() for r in caplog.records)
    with TestClient(app) as c:
        assert c.post("/api/tasks", content=example("daily-checkin"),
                      headers=JSON).status_code == 201


def test_open_api_is_refused_off_loopback(tmp_path):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    env.pop("STEPKIT_WEB_API_KEY", None)
    r = subprocess.run([sys.executable, "-m", "stepkit_web", "serve", "--db",
                        f"sqlite:///{tmp_path / 'x.db'}", "--host", "0.0.0.0", "--open-api"],
                       capture_output=True, text=True, timeout=60, env=env)
    assert r.returncode != 0 and "loopback" in r.stderr


def test_the_api_accepts_only_json_bodies(client):
    for ctype in ("text/plain", "application/x-www-form-urlencoded", "multipart/form-data",
                  "application/jsonx", ""):
        headers = {"content-type": ctype} if ctype else {}
        r = client.post("/api/tasks", content=example("daily-checkin"), headers=headers)
        assert r.status_code == 415 and r.json()["code"] == "EMEDIATYPE", ctype
    assert client.get("/api/tasks/daily-checkin").status_code == 404  # nothing registered
    register(client, "daily-checkin")
    r = client.post("/api/tasks/daily-checkin/sessions", content=b"{}",
                    headers={"content-type": "text/plain"})
    assert r.status_code == 415
    r = client.post("/api/tasks/daily-checkin/invites", content=b"x",
                    headers={"content-type": "text/plain"})
    assert r.status_code == 415
    r = client.post("/api/tasks/daily-checkin/sessions", content=b"{}", headers=JSON)
    assert r.status_code == 201


@pytest.mark.parametrize("headers", [
    {"origin": "http://evil.example"},
    {"origin": "null"},
    {"sec-fetch-site": "cross-site"},
    {"sec-fetch-site": "same-site"},
    {"referer": "http://evil.example/page"},
    {"origin": "http://testserver.evil.example"},
], ids=["origin", "null-origin", "cross-site", "same-site", "referer", "lookalike"])
def test_state_changes_from_another_site_are_refused(client, app, headers):
    register(client, "daily-checkin")
    session_id, path = new_session(client, "daily-checkin")
    before = app.state.service.store.session(session_id)
    changed = dict(json.loads(example("daily-checkin")), title="changed")
    r = client.post("/api/tasks", content=json.dumps(changed), headers={**JSON, **headers})
    assert r.status_code == 403 and r.json()["code"] == "EORIGIN"
    r = client.post(path, content=b"_version=1&_step=mood&answer=4&action=next",
                    headers={"content-type": "application/x-www-form-urlencoded", **headers},
                    follow_redirects=False)
    assert r.status_code == 403
    invite = client.post("/api/tasks/daily-checkin/invites").json()["inviteUrl"]
    r = client.post(invite.replace(BASE, ""), headers=headers, follow_redirects=False)
    assert r.status_code == 403
    after = app.state.service.store.session(session_id)
    assert (after.version, after.saved) == (before.version, before.saved)
    assert [v["version"] for v in client.get("/api/tasks/daily-checkin").json()["versions"]] == [1]


def test_same_origin_posts_are_accepted(client):
    session_id, path = new_session(client, "daily-checkin")
    for headers in ({"origin": BASE}, {"sec-fetch-site": "same-origin", "origin": BASE},
                    {"referer": BASE + path}):
        info = client.get(f"/api/sessions/{session_id}").json()
        r = client.post(path, content=f"_version={info['version']}&_step=mood&answer=4"
                        "&action=save".encode(),
                        headers={"content-type": "application/x-www-form-urlencoded",
                                 **headers}, follow_redirects=False)
        assert r.status_code == 303, headers


def test_security_headers_on_every_response(client):
    session_id, path = new_session(client, "daily-checkin")
    responses = [client.get(path), client.get("/"), client.get("/r/unknown"),
                 client.get("/static/app.css"), client.get(f"/api/sessions/{session_id}"),
                 client.get("/api/tasks/nope"), client.get("/openapi.json"),
                 client.post("/api/tasks", content=b"{" + b" " * 70000 + b"}", headers=JSON),
                 client.get("/api/tasks/x", headers={"authorization": "Bearer no"})]
    for r in responses:
        csp = r.headers.get("content-security-policy", "")
        assert "frame-ancestors 'none'" in csp and "default-src 'none'" in csp, r.url
        assert "script-src 'self'" in csp and "'unsafe-inline'" not in csp
        assert r.headers.get("x-content-type-options") == "nosniff", r.url
        assert r.headers.get("referrer-policy") == "same-origin", r.url


def test_links_come_from_the_base_url_not_the_host_header(db_url):
    app = create_app(db_url, KEY, api_key=API_KEY, base_url="https://study.example.org/")
    with TestClient(app, headers=AUTH) as c:
        register(c, "daily-checkin")
        evil = {"host": "evil.example", "x-forwarded-host": "evil.example"}
        r = c.post("/api/tasks/daily-checkin/sessions", headers=evil)
        assert r.json()["resumeUrl"].startswith("https://study.example.org/r/")
        r = c.post("/api/tasks/daily-checkin/invites", headers=evil)
        assert r.json()["inviteUrl"].startswith("https://study.example.org/i/")


def test_identifiers_with_a_slash_are_refused_at_registration(client):
    for ident in ("a/b", "/", "..", ".", "x\u0000y", "tab\there"):
        task = dict(json.loads(example("daily-checkin")), identifier=ident)
        r = client.post("/api/tasks", content=json.dumps(task), headers=JSON)
        assert r.status_code == 400, ident
        if "/" in ident or "." in ident:
            assert r.json()["path"] == "identifier" and "'/'" in r.json()["message"], ident
    task = dict(json.loads(example("daily-checkin")), identifier="a b?#%")
    assert client.post("/api/tasks", content=json.dumps(task), headers=JSON).status_code == 201
    assert client.get("/api/tasks/a%20b%3F%23%25").json()["identifier"] == "a b?#%"
    assert client.post("/api/tasks/a%20b%3F%23%25/sessions").status_code == 201


def test_serve_out_of_the_box_makes_an_api_key_file(tmp_path, monkeypatch, capsys):
    """`serve` without a key: DB.api-key is made (0600) and named, the key not printed."""
    from stepkit_web.cli import api_key

    db = f"sqlite:///{tmp_path / 'runs.db'}"
    monkeypatch.delenv("STEPKIT_WEB_API_KEY", raising=False)
    key = api_key(db, None, False)
    out = capsys.readouterr().out
    assert "runs.db.api-key" in out and key not in out
    path = tmp_path / "runs.db.api-key"
    assert path.read_text().strip() == key and len(key) >= 40
    assert (path.stat().st_mode & 0o777) == 0o600
    assert api_key(db, None, False) == key  # kept
    assert api_key(db, None, True) is None  # --open-api
    with pytest.raises(SystemExit):
        api_key("postgresql+psycopg://db/x", None, False)
