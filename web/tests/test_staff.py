"""The study team's side over HTTP: accounts made by the CLI (argon2 hashes), sign-in, the
session cookie and CSRF on every form, the study page and its filters, the exports (values
from the answers file, formatted as the export's documented rules say), personal invites in
bulk (CSV, revocable, expiring), drafts and publishing, deleting a participant's data."""

from __future__ import annotations

import csv
import io
import json
import os
import re
import subprocess
import sys

import pytest
import sqlalchemy as sa
from fastapi.testclient import TestClient

import stepkit
from conftest import BASE, answers, example, register
from stepkit_web import exports
from stepkit_web.db import session_history, sessions, staff, tokens
from stepkit_web.walk import post_form, walk_http

PASSWORD = "correct horse battery staple"


def add_staff(db_url, name="alice", password=PASSWORD):
    """The documented command: python -m stepkit_web staff add NAME --password-stdin."""
    r = subprocess.run([sys.executable, "-m", "stepkit_web", "staff", "add", name,
                        "--db", db_url, "--password-stdin"], input=password + "\n",
                       capture_output=True, text=True, timeout=120, env=os.environ)
    return r


@pytest.fixture
def staff_client(app, db_url):
    assert add_staff(db_url).returncode == 0
    c = TestClient(app, base_url=BASE)
    login(c)
    return c


def login(c, name="alice", password=PASSWORD):
    page = c.get("/staff/login")
    token = re.search(r'name="csrf" value="([^"]+)"', page.text).group(1)
    return post_form(c, "/staff/login", [("csrf", token), ("username", name),
                                         ("password", password)])


def csrf_of(html: str) -> str:
    return re.search(r'name="csrf" value="([^"]+)"', html).group(1)


def test_accounts_are_argon2_hashed_and_sign_in_needs_the_right_password(app, db_url):
    r = add_staff(db_url)
    assert r.returncode == 0 and "created" in r.stdout
    assert add_staff(db_url, "bob", "short").returncode == 2  # too short: refused
    with app.state.service.store.engine.connect() as conn:
        rows = conn.execute(sa.select(staff)).all()
    assert [row.username for row in rows] == ["alice"]
    assert rows[0].password_hash.startswith("$argon2id$") and PASSWORD not in rows[0].password_hash

    c = TestClient(app, base_url=BASE)
    assert c.get("/staff", follow_redirects=False).headers["location"] == "/staff/login"
    bad = login(c, password="wrong password here")
    assert bad.headers["location"] == "/staff/login?failed=1"
    assert login(c, name="mallory").headers["location"] == "/staff/login?failed=1"
    good = login(c)
    assert good.status_code == 303 and good.headers["location"] == "/staff"
    cookie = [h for h in good.headers.get_list("set-cookie") if h.startswith("stepkit-staff=")][0]
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie and "Path=/staff" in cookie
    assert c.get("/staff").status_code == 200
    # Sign out ends the session on the server, not only in the browser.
    token = c.cookies.get("stepkit-staff")
    post_form(c, "/staff/logout", [("csrf", csrf_of(c.get("/staff").text))])
    c.cookies.set("stepkit-staff", token, path="/staff")
    assert c.get("/staff", follow_redirects=False).status_code == 303


def test_every_staff_form_needs_its_csrf_token(app, client, staff_client):
    register(client, "daily-checkin")
    before = client.get("/api/tasks/daily-checkin").json()
    for path, fields in [
        ("/staff/studies/daily-checkin/settings", [("title", "Hacked")]),
        ("/staff/studies/daily-checkin/invites", [("participants", "X")]),
        ("/staff/studies/daily-checkin/versions", [("definition", example("daily-checkin"))]),
        ("/staff/studies/daily-checkin/participants/delete", [("participant", "X"),
                                                              ("confirm", "yes")]),
    ]:
        for token in ([], [("csrf", "wrong")]):
            r = post_form(staff_client, path, token + fields)
            assert r.status_code == 403, (path, r.status_code)
    assert client.get("/api/tasks/daily-checkin").json() == before
    assert app.state.service.store.invites("daily-checkin") == []
    assert app.state.service.store.study("daily-checkin") == {}


def test_study_page_invites_exports_publish_and_delete(app, client, staff_client, clock):
    register(client, "daily-checkin")
    page = staff_client.get("/staff/studies/daily-checkin")
    csrf = csrf_of(page.text)
    # Invites in bulk from a CSV file: a header row, a repeat and a blank line dropped.
    upload = b"participant_id,site\nP-001,A\nP-002,B\n\nP-001,A\n"
    r = staff_client.post("/staff/studies/daily-checkin/invites",
                          data={"csrf": csrf, "days": "7"},
                          files={"file": ("ids.csv", upload, "text/csv")})
    assert r.status_code == 200, r.text
    links = dict(csv.reader(io.StringIO(
        re.search(r'<textarea id="invite-csv"[^>]*>(.*?)</textarea>', r.text, re.S).group(1)
        .replace("&#34;", '"'))))
    assert set(links) == {"participant", "P-001", "P-002"}
    # P-001 answers everything through their link; P-002 starts only.
    participant = TestClient(app, base_url=BASE)
    start = post_form(participant, links["P-001"].replace(BASE, ""), [])
    with app.state.service.store.engine.connect() as conn:
        sid1 = conn.execute(sa.select(sessions.c.id).where(
            sessions.c.participant == "P-001")).scalar_one()
    walk_http(client, "", sid1, start.headers["location"], answers("daily-checkin"))
    post_form(participant, links["P-002"].replace(BASE, ""), [])

    page = staff_client.get("/staff/studies/daily-checkin")
    table = page.text.split('<table id="sessions">')[1].split("</table>")[0]
    assert "P-001" in table and "P-002" in table and "finished" in table and "mood" in table
    only_open = staff_client.get("/staff/studies/daily-checkin?status=open").text
    assert "P-002" in only_open.split('<table id="sessions">')[1].split("</table>")[0]
    assert "P-001" not in only_open.split('<table id="sessions">')[1].split("</table>")[0]

    # The wide CSV: one row per session, the answers file's values in their columns.
    wide = list(csv.DictReader(io.StringIO(
        staff_client.get("/staff/studies/daily-checkin/export/sessions.csv").text)))
    assert len(wide) == 2
    done = next(r for r in wide if r["participant"] == "P-001")
    given = answers("daily-checkin")
    assert done["status"] == "finished" and done["finished"]
    assert done["mood"] == str(given["mood"])
    assert done["sleep.bedtime"] == given["sleep"]["bedtime"]
    assert done["sleep.quality"] == "4"
    assert done["symptoms"] == ";".join(given["symptoms"])
    assert done["medication_taken"] == "true"
    assert done["notes"] == given["notes"]
    pending = next(r for r in wide if r["participant"] == "P-002")
    assert pending["status"] == "open" and pending["mood"] == "" and pending["step"] == "mood"
    # The codebook: each column's text and choice values, from the definition.
    book = {r["column"]: r for r in csv.DictReader(io.StringIO(
        staff_client.get("/staff/studies/daily-checkin/export/codebook.csv").text))}
    assert book["sleep.quality"]["text"] == "Sleep quality"
    assert "4=Good" in book["sleep.quality"]["values"]
    # The long format: each step visit with its start and end.
    visits = list(csv.DictReader(io.StringIO(
        staff_client.get("/staff/studies/daily-checkin/export/visits.csv").text)))
    bedtime = [v for v in visits if v["participant"] == "P-001" and v["item"] == "bedtime"]
    assert bedtime and bedtime[0]["step"] == "sleep" and bedtime[0]["start"] and bedtime[0]["end"]
    assert bedtime[0]["answer"] == "23:40"
    # JSON: every session with its result.
    data = staff_client.get("/staff/studies/daily-checkin/export/sessions.json").json()
    assert {d["participant"] for d in data} == {"P-001", "P-002"}

    # Revoke P-002's invite: the link is gone.
    rows = page.text.split('<table id="invites">')[1].split("</table>")[0].split("<tr>")
    p2 = next(r for r in rows if "P-002" in r)
    ref2 = re.search(r'/invites/([0-9a-f]{32})/revoke', p2).group(1)
    r = post_form(staff_client, f"/staff/studies/daily-checkin/invites/{ref2}/revoke",
                  [("csrf", csrf)])
    assert r.status_code == 303
    assert participant.get(links["P-002"].replace(BASE, ""),
                           follow_redirects=True).status_code == 404

    # A draft is stored but not served; publishing moves the open session onto it.
    changed = json.loads(example("daily-checkin"))
    changed["steps"][0]["question"] = "How is your mood today, all things considered?"
    r = post_form(staff_client, "/staff/studies/daily-checkin/versions",
                  [("csrf", csrf), ("format", "stepkit"), ("definition", json.dumps(changed))])
    assert r.status_code == 303
    versions = client.get("/api/tasks/daily-checkin").json()["versions"]
    assert [(v["version"], v["status"]) for v in versions] == [(1, "published"), (2, "draft")]
    fresh = client.post("/api/tasks/daily-checkin/sessions").json()
    assert client.get(f"/api/sessions/{fresh['session']}").json()["taskVersion"] == 1
    r = post_form(staff_client, "/staff/studies/daily-checkin/versions/2/publish",
                  [("csrf", csrf)])
    assert r.status_code == 303
    with app.state.service.store.engine.connect() as conn:
        open_versions = {row.task_version for row in conn.execute(
            sa.select(sessions.c.task_version).where(sessions.c.status == "open"))}
    assert open_versions == {2}
    # Publishing an older version than the current one is refused.
    assert post_form(staff_client, "/staff/studies/daily-checkin/versions/1/publish",
                     [("csrf", csrf)]).status_code == 409

    # Delete P-001's data: their session, history and invite are gone; P-002's stay.
    r = post_form(staff_client, "/staff/studies/daily-checkin/participants/delete",
                  [("csrf", csrf), ("participant", "P-001"), ("confirm", "yes")])
    assert r.status_code == 303 and r.headers["location"].endswith("done=deleted")
    with app.state.service.store.engine.connect() as conn:
        left = [row.participant for row in conn.execute(sa.select(sessions.c.participant))]
        assert "P-001" not in left and "P-002" in left
        assert conn.execute(sa.select(sa.func.count()).select_from(session_history).where(
            session_history.c.session_id == sid1)).scalar_one() == 0
        assert conn.execute(sa.select(sa.func.count()).select_from(tokens).where(
            tokens.c.participant == "P-001")).scalar_one() == 0
    # Without the confirmation box nothing is deleted.
    r = post_form(staff_client, "/staff/studies/daily-checkin/participants/delete",
                  [("csrf", csrf), ("participant", "P-002")])
    assert r.status_code == 400
    with app.state.service.store.engine.connect() as conn:
        assert conn.execute(sa.select(sa.func.count()).select_from(sessions).where(
            sessions.c.participant == "P-002")).scalar_one() == 1


def test_settings_give_the_participant_pages_their_title(app, client, staff_client):
    register(client, "daily-checkin")
    invite = client.post("/api/tasks/daily-checkin/invites").json()["inviteUrl"].replace(BASE, "")
    participant = TestClient(app, base_url=BASE)
    start = participant.get(invite).text
    assert "<h1>Mood</h1>" in start  # the first step's title, never the identifier
    assert "daily-checkin" not in start
    csrf = csrf_of(staff_client.get("/staff/studies/daily-checkin").text)
    post_form(staff_client, "/staff/studies/daily-checkin/settings", [
        ("csrf", csrf), ("title", "Daily check-in study"),
        ("description", "Five short questions each evening."),
        ("duration", "About 2 minutes"), ("contact", "study@example.org")])
    app.state.service._studies.clear()  # the few seconds' cache of this instance
    start = participant.get(invite).text
    for text in ("Daily check-in study", "Five short questions each evening.",
                 "About 2 minutes", "study@example.org"):
        assert text in start


def test_bad_invite_uploads_change_nothing(app, client, staff_client):
    register(client, "daily-checkin")
    csrf = csrf_of(staff_client.get("/staff/studies/daily-checkin").text)
    for data, files in [({"days": "7"}, {"file": ("x.csv", b"\xff\xfe\x00bad", "text/csv")}),
                        ({"participants": "A\nB", "days": "-3"}, None),
                        ({"participants": "A\n" + "x" * 300}, None),
                        ({"participants": ""}, None)]:
        r = staff_client.post("/staff/studies/daily-checkin/invites",
                              data={"csrf": csrf, **data}, files=files)
        assert r.status_code == 400, (data, r.status_code)
    assert app.state.service.store.invites("daily-checkin") == []


def test_serve_task_never_replaces_a_newer_published_version(app, client):
    """`serve --task FILE` at every start: a changed file of a published task becomes a draft;
    the same file again, or an older one, changes nothing."""
    from stepkit_web.cli import register_file

    service = app.state.service
    old = example("daily-checkin")
    reg, note = register_file(service, old)
    assert (reg["version"], note) == (1, "published")
    newer = json.loads(old)
    newer["steps"][0]["question"] = "Newer wording"
    client.post("/api/tasks", content=json.dumps(newer),
                headers={"content-type": "application/json"})  # v2, published by the API
    sid = client.post("/api/tasks/daily-checkin/sessions").json()["session"]
    reg, note = register_file(service, old)  # a restart with the old file
    assert reg["version"] == 1 and note == "unchanged"
    assert service.store.latest_task("daily-checkin").version == 2
    assert client.get(f"/api/sessions/{sid}").json()["taskVersion"] == 2
    edited = json.loads(old)
    edited["steps"][0]["question"] = "Edited in the file"
    reg, note = register_file(service, json.dumps(edited))
    assert reg["version"] == 3 and note.startswith("stored as a draft")
    assert service.store.latest_task("daily-checkin").version == 2
    assert client.get(f"/api/sessions/{sid}").json()["taskVersion"] == 2


def test_a_study_key_reaches_its_own_task_only(app, client, staff_client):
    """A per-study API key made on the staff page: its task's sessions, results, invites and
    versions; every other task is "not found" to it, and it cannot register another task."""
    register(client, "daily-checkin")
    register(client, "headache")
    other = client.post("/api/tasks/headache/sessions").json()["session"]
    csrf = csrf_of(staff_client.get("/staff/studies/daily-checkin").text)
    page = post_form(staff_client, "/staff/studies/daily-checkin/keys", [("csrf", csrf)])
    key = re.search(r'id="api-key" value="([^"]+)"', page.text).group(1)
    with app.state.service.store.engine.connect() as conn:
        assert key not in str(conn.execute(sa.text("SELECT * FROM api_keys")).all())
    study = TestClient(app, base_url=BASE, headers={"authorization": f"Bearer {key}",
                                                    "content-type": "application/json"})
    mine = study.post("/api/tasks/daily-checkin/sessions")
    assert mine.status_code == 201
    assert study.get(f"/api/sessions/{mine.json()['session']}").status_code == 200
    assert study.get("/api/tasks/daily-checkin").status_code == 200
    assert study.get("/api/tasks/headache").status_code == 404
    assert study.post("/api/tasks/headache/sessions").status_code == 404
    assert study.get(f"/api/sessions/{other}").status_code == 404
    assert study.get(f"/api/sessions/{other}/result").status_code == 404
    assert study.delete(f"/api/sessions/{other}/resume-links").status_code == 404
    r = study.post("/api/tasks", content=example("headache"))
    assert r.status_code == 403
    assert [v["version"] for v in client.get("/api/tasks/headache").json()["versions"]] == [1]
    # Revoked on the staff page: refused.
    page = staff_client.get("/staff/studies/daily-checkin")
    ref = re.search(r'/keys/([0-9a-f]{32})/revoke', page.text).group(1)
    post_form(staff_client, f"/staff/studies/daily-checkin/keys/{ref}/revoke", [("csrf", csrf)])
    assert study.get("/api/tasks/daily-checkin").status_code == 401


def test_staff_routes_never_answer_500(app, client, staff_client):
    """Garbage to every staff route: a page with an error, never a 500."""
    register(client, "daily-checkin")
    csrf = csrf_of(staff_client.get("/staff/studies/daily-checkin").text)
    weird = ["", "\x00", "é" * 300, "x" * 5000, "[]", "{", "../..", "%00"]
    posts = ["settings", "invites", "versions", "versions/abc/publish", "versions/99/publish",
             "versions/-1/publish", "participants/delete", "keys", "keys/zz/revoke",
             "invites/zz/revoke"]
    statuses = set()
    for study in ("daily-checkin", "nothing", "a%2Fb", "%00"):
        for kind in ("sessions.csv", "codebook.csv", "visits.csv", "sessions.json",
                     "responses.json", "nope"):
            r = staff_client.get(f"/staff/studies/{study}/export/{kind}")
            statuses.add(r.status_code)
            assert r.status_code < 500, (study, kind, r.status_code)
        r = staff_client.get(f"/staff/studies/{study}?status=%00&participant=%00")
        assert r.status_code < 500, (study, r.status_code)
        for route in posts:
            for w in weird:
                fields = [("csrf", csrf), ("title", w), ("participants", w), ("days", w),
                          ("definition", w), ("format", w), ("participant", w),
                          ("confirm", "yes")]
                r = post_form(staff_client, f"/staff/studies/{study}/{route}", fields)
                statuses.add(r.status_code)
                assert r.status_code < 500, (study, route, w[:10], r.status_code, r.text[:200])
    assert 400 in statuses and 404 in statuses


def test_the_codebook_names_a_question_without_words_of_its_own_as_the_engine_does():
    """A question column's text is the question, else the engine's displayTitle (here the
    step's text, which a title-or-question rule of the exporter's own missed)."""
    definition = {"identifier": "cups", "steps": [
        {"type": "question", "identifier": "q", "text": "How many cups today?",
         "answerFormat": {"type": "numeric", "style": "integer"}},
        {"type": "question", "identifier": "r", "title": "Sleep", "question": "How did you sleep?",
         "answerFormat": {"type": "boolean"}}]}
    with stepkit.Task.from_json(definition) as task:
        columns = exports.codebook(definition, exports.display_titles(task.info))
    assert [(c.name, c.text) for c in columns] == [("q", "How many cups today?"), ("r", "How did you sleep?")]
