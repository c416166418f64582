"""Bad input, each a test: a clear page or JSON error, nothing changed, never a 500."""

import html
import json
import logging

import sqlalchemy as sa

from conftest import KEY, answers, example, new_session, register
from stepkit_web.db import sessions
from stepkit_web.walk import page_fields, post_form


def stored(app, session_id):
    with app.state.service.store.engine.connect() as conn:
        return conn.execute(sa.select(sessions).where(sessions.c.id == session_id)).first()


def go_to(client, session_id, path, step, name="intake"):
    """Goes forward with the example's answers to ``step``."""
    for _ in range(10):
        info = client.get(f"/api/sessions/{session_id}").json()
        if info["state"]["step"]["identifier"] == step:
            return info
        fields = page_fields(info["state"], answers(name)) or []
        r = post_form(client, path, [("_version", str(info["version"])),
                                     ("_step", info["state"]["step"]["identifier"]),
                                     ("action", "next")] + fields)
        assert r.status_code == 303
    raise AssertionError(step)


def test_refused_answer_shows_engine_message_and_changes_nothing(client, app):
    session_id, path = new_session(client, "daily-checkin")
    info = go_to(client, session_id, path, "mood")
    before = stored(app, session_id)
    r = post_form(client, path, [("_version", str(info["version"])), ("_step", "mood"),
                                 ("answer", "9"), ("action", "next")])
    assert r.status_code == 422
    assert "There is a problem" in r.text
    assert r.text.count("Enter a whole number between 1 and 5.") == 2  # summary and inline
    assert 'href="#q"' in r.text and 'aria-describedby="q-error"' in r.text
    after = stored(app, session_id)
    assert (after.version, after.saved) == (before.version, before.saved)
    # A number that is not one: the engine says so too (the web layer does not judge it).
    r = post_form(client, path, [("_version", str(info["version"])), ("_step", "mood"),
                                 ("answer", "lots"), ("action", "next")])
    assert r.status_code == 422 and "There is a problem" in r.text


def test_form_shows_every_refused_item(client, app):
    session_id, path = new_session(client, "intake")
    info = go_to(client, session_id, path, "contact")
    r = post_form(client, path, [("_version", str(info["version"])), ("_step", "contact"),
                                 ("item:email", "not-an-email"), ("item:phone", "12"),
                                 ("action", "next")])
    assert r.status_code == 422
    assert "Enter the number with + and the country code" in r.text
    assert r.text.count('class="error-message"') >= 2
    assert 'value="not-an-email"' in r.text  # what was typed is shown again
    assert stored(app, session_id).version == info["version"]


def test_forward_refused_lists_the_engines_problems(client):
    session_id, path = new_session(client, "intake")
    info = go_to(client, session_id, path, "personal")
    r = post_form(client, path, [("_version", str(info["version"])), ("_step", "personal"),
                                 ("item:given_name", "Ada"), ("action", "next")])
    assert r.status_code == 303 and r.headers["location"].endswith("?error=1")
    page = client.get(r.headers["location"])
    assert 'Answer "Last name" to continue.' in html.unescape(page.text)
    assert 'value="Ada"' in page.text  # the accepted draft was stored
    info2 = client.get(f"/api/sessions/{session_id}").json()
    assert info2["version"] == info["version"] + 1
    assert info2["state"]["answer"] == {"given_name": "Ada"}


def test_edited_or_missing_hidden_fields(client, app):
    session_id, path = new_session(client, "daily-checkin")
    info = go_to(client, session_id, path, "mood")
    before = stored(app, session_id)
    cases = [
        [("_version", "999"), ("_step", "mood"), ("answer", "3"), ("action", "next")],
        [("_step", "mood"), ("answer", "3"), ("action", "next")],
        [("_version", str(info["version"])), ("_step", "sleep"), ("answer", "3"), ("action", "next")],
        [("_version", str(info["version"])), ("answer", "3"), ("action", "next")],
        [("_version", "x" * 300), ("_step", "\x00"), ("action", "next")],
    ]
    for pairs in cases:
        r = post_form(client, path, pairs)
        assert r.status_code == 303 and r.headers["location"].endswith("?notice=stale"), pairs
    for action in ([], [("action", "explode")]):
        r = post_form(client, path, [("_version", str(info["version"])), ("_step", "mood"),
                                     ("answer", "3")] + action)
        assert r.status_code == 400 and "nothing was saved" in r.text
    after = stored(app, session_id)
    assert (after.version, after.saved) == (before.version, before.saved)
    page = client.get(path + "?notice=stale")
    assert "This page had changed" in page.text


def test_unknown_and_revoked_tokens_are_404_pages(client):
    session_id, path = new_session(client, "daily-checkin")
    for url in ("/r/AAAAAAAAAAAAAAAAAAAAAA", "/r/" + "x" * 500, "/i/nothing"):
        r = client.get(url)
        assert r.status_code == 404 and "Page not found" in r.text
    r = post_form(client, "/r/AAAAAAAAAAAAAAAAAAAAAA", [("action", "next")])
    assert r.status_code == 404
    assert client.delete(f"/api/sessions/{session_id}/resume-links").json() == {"revoked": 1}
    assert client.get(path).status_code == 404
    assert post_form(client, path, [("action", "next")]).status_code == 404
    # The host can hand out a new link; the session is where it was.
    r = client.post(f"/api/sessions/{session_id}/resume-links")
    new_path = r.json()["resumeUrl"].replace("http://testserver", "")
    assert client.get(new_path).status_code == 200


def test_body_over_64_kib_is_413(client):
    session_id, path = new_session(client, "daily-checkin")
    big = [("answer", "x" * (64 * 1024)), ("action", "next")]
    r = post_form(client, path, big)
    assert r.status_code == 413 and "Too much data" in r.text
    r = client.post("/api/tasks", content=b"{" + b" " * (70 * 1024) + b"}",
                    headers={"content-type": "application/json"})
    assert r.status_code == 413 and r.json()["code"] == "ETOOLARGE"
    # Chunked (no Content-Length): counted as it arrives.
    r = client.post("/api/tasks", content=iter([b"{", b" " * (65 * 1024), b"}"]),
                    headers={"content-type": "application/json"})
    assert r.status_code == 413


def test_malformed_json_on_the_api_is_400_with_the_engines_error(client):
    r = client.post("/api/tasks", content=b'{"identifier": "x", "steps": [',
                    headers={"content-type": "application/json"})
    assert r.status_code == 400
    body = r.json()
    assert body["code"] == "EPARSE" and body["status"] == -2 and body["message"]
    r = client.post("/api/tasks", content=b'{"identifier": "x", "steps": []}',
                    headers={"content-type": "application/json"})
    assert r.status_code == 400 and r.json()["code"] == "EDEFINITION"
    long_id = json.dumps({"identifier": "x" * 201, "steps": [
        {"type": "instruction", "identifier": "i", "title": "Hi"}]})
    r = client.post("/api/tasks", content=long_id, headers={"content-type": "application/json"})
    assert r.status_code == 400 and r.json()["path"] == "identifier"
    r = client.post("/api/tasks", content=b"\xff\xfe", headers={"content-type": "application/json"})
    assert r.status_code == 400
    register(client, "daily-checkin")
    r = client.post("/api/tasks/daily-checkin/sessions", content=b"{nope",
                    headers={"content-type": "application/json"})
    assert r.status_code == 400 and r.json()["code"] == "EPARSE"
    r = client.post("/api/tasks/daily-checkin/sessions", content=b'{"options": {"integrityKey": "mine"}}',
                    headers={"content-type": "application/json"})
    assert r.status_code == 400 and r.json()["path"] == "integrityKey"


def test_damaged_restoration_data_is_an_error_page_and_the_row_is_kept(client, app, caplog):
    session_id, path = new_session(client, "daily-checkin")
    engine = app.state.service.store.engine
    with engine.begin() as conn:
        saved = conn.execute(sa.select(sessions.c.saved).where(sessions.c.id == session_id)).scalar()
        tampered = saved.replace('"finishReason":null', '"finishReason":"completed"')
        assert tampered != saved
        conn.execute(sessions.update().where(sessions.c.id == session_id).values(saved=tampered))
    with caplog.at_level(logging.ERROR, logger="stepkit_web"):
        r = client.get(path)
    assert r.status_code == 409 and "integrity check" in r.text
    assert any(session_id in rec.getMessage() for rec in caplog.records)
    r = post_form(client, path, [("_version", "1"), ("_step", "intro"), ("action", "next")])
    assert r.status_code == 409
    assert client.get(f"/api/sessions/{session_id}").status_code == 409
    assert stored(app, session_id).saved == tampered  # kept as it was, for the team to look at


def test_database_down_is_a_503_page(client, app):
    session_id, path = new_session(client, "daily-checkin")
    service = app.state.service
    good = service.store.engine
    service.store.engine = sa.create_engine("sqlite:////nonexistent-dir/for/sure/runs.db")
    try:
        r = client.get(path)
        assert r.status_code == 503
        assert "answers up to the last page you completed are saved" in r.text
        r = post_form(client, path, [("_version", "1"), ("_step", "intro"), ("action", "next")])
        assert r.status_code == 503
        assert client.get(f"/api/sessions/{session_id}").status_code == 503
        assert client.get("/healthz").status_code == 503
    finally:
        service.store.engine = good
    assert client.get(path).status_code == 200


def test_recorder_tasks_are_refused_naming_the_step(client):
    r = client.post("/api/tasks", content=example("short-walk"),
                    headers={"content-type": "application/json"})
    assert r.status_code == 422
    assert "'walking'" in r.json()["message"] and r.json()["path"] == "walking"
    # Every recorder the definition lists is named: the steps' and the async action's.
    definition = json.loads(example("short-walk"))
    listed = [c["identifier"] for s in definition["steps"] for c in s.get("recorderConfigurations", [])]
    listed += [a["identifier"] for a in definition["asyncActions"]]
    assert len(listed) == 4
    for identifier in listed:
        assert repr(identifier) in r.json()["message"], identifier
    assert client.get(f"/api/tasks/{definition['identifier']}").status_code == 404  # nothing stored


def test_a_task_recording_only_in_an_async_action_is_refused(client):
    task = {"identifier": "gps-only", "steps": [
        {"type": "instruction", "identifier": "intro", "title": "Hello"},
        {"type": "completion", "identifier": "done", "title": "Thanks"}],
        "asyncActions": [{"type": "location", "identifier": "gps", "startStepIdentifier": "intro"}]}
    r = client.post("/api/tasks", content=json.dumps(task), headers={"content-type": "application/json"})
    assert r.status_code == 422
    assert r.json()["path"] == "asyncActions" and "'gps'" in r.json()["message"]
    assert client.get("/api/tasks/gps-only").status_code == 404


def test_a_bad_questionnaire_is_refused_and_changes_nothing(client):
    """A Questionnaire the importer refuses: 400 with the engine's error (its FHIR path), no
    task stored; a StepKit task has no QuestionnaireResponse (404)."""
    bad = {"resourceType": "Questionnaire", "id": "broken", "status": "draft",
           "item": [{"linkId": "a", "type": "no-such-type", "text": "A"}]}
    r = client.post("/api/tasks", content=json.dumps(bad).encode(),
                    headers={"content-type": "application/fhir+json"})
    assert r.status_code == 400, r.text
    assert r.json()["code"] and r.json()["message"]
    assert client.get("/api/tasks/broken").status_code == 404
    session_id, _ = new_session(client, "daily-checkin")
    r = client.get(f"/api/sessions/{session_id}/questionnaire-response")
    assert r.status_code == 404


def test_garbage_posts_are_never_a_500(client):
    session_id, path = new_session(client, "health-survey")
    info = client.get(f"/api/sessions/{session_id}").json()
    weird = ["", "\x00", "é" * 100, "-1", "1e309", "99999999999999999999", "[]", "{}", "0x10",
             "NaN", "<script>", "1" * 5000]
    statuses = set()
    for _ in range(25):
        info = client.get(f"/api/sessions/{session_id}").json()
        if info["status"] == "finished":
            break
        step = info["state"]["step"]
        names = ["answer"] + [f"item:{i.get('identifier')}" for i in step.get("formItems") or []]
        for w in weird:
            info = client.get(f"/api/sessions/{session_id}").json()
            if info["status"] == "finished" or info["state"]["step"]["identifier"] != step["identifier"]:
                break
            pairs = [("_version", str(info["version"])), ("_step", step["identifier"]),
                     ("action", "next")]
            for n in names:
                pairs += [(n, w), (n + ".0", w), (n + ".1", w), (n + ".dontknow", w),
                          (n + ".hours", w), (n + ".minutes", w), (n + ".latitude", w),
                          (n + ".longitude", w), (n + ".offset", w), (n + ".other.0", w)]
            r = post_form(client, path, pairs)
            statuses.add(r.status_code)
            assert r.status_code in (303, 400, 413, 422), (step["identifier"], w, r.status_code, r.text[:300])
        # move on with the skip button or the answers file
        info = client.get(f"/api/sessions/{session_id}").json()
        if info["status"] == "finished":  # reaching the completion step finishes the run
            break
        fields = page_fields(info["state"], answers("health-survey"))
        action = "skip" if fields is None else "next"
        post_form(client, path, [("_version", str(info["version"])),
                                 ("_step", info["state"]["step"]["identifier"]),
                                 ("action", action)] + (fields or []))
    assert 422 in statuses


def test_bodies_that_are_not_forms_are_400(client, app):
    session_id, path = new_session(client, "daily-checkin")
    before = stored(app, session_id)
    many = b"&".join(b"a%d=1" % i for i in range(3000))
    for ctype, body in [
        ("multipart/form-data", b"garbage"),
        ("multipart/form-data; boundary=xyz", b"--xyz\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nv\r\n"),
        ("multipart/form-data; boundary=xyz", b"--xyz\r\nContent-Disposition: form-data; name=\"f\"; "
                                              b"filename=\"x.txt\"\r\n\r\nfile\r\n--xyz--\r\n"),
        ("application/x-www-form-urlencoded", b"%%%&&&==="),
        ("application/x-www-form-urlencoded", many),
        ("text/plain", b"hello"),
    ]:
        r = client.post(path, content=body, headers={"content-type": ctype}, follow_redirects=False)
        # text/plain is not a form at all (what another site can post without asking): 415
        assert r.status_code == (415 if ctype == "text/plain" else 400), (ctype, r.status_code)
    after = stored(app, session_id)
    assert (after.version, after.saved) == (before.version, before.saved)
