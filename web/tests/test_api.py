"""The host's API: versions and migration, invites, keys, OpenAPI, timed steps."""

import hashlib
import json

import stepkit
from fastapi.testclient import TestClient

from conftest import KEY, example, new_session, register
from stepkit_web.app import create_app
from stepkit_web.walk import post_form


def test_openapi_describes_the_api(client):
    spec = client.get("/openapi.json").json()
    for p in ("/api/tasks", "/api/tasks/{identifier}/sessions", "/api/sessions/{session_id}",
              "/api/sessions/{session_id}/result", "/api/tasks/{identifier}/invites"):
        assert p in spec["paths"], p
    assert "/r/{token}" not in spec["paths"]


def test_same_definition_is_not_a_new_version_and_a_new_version_migrates_open_sessions(client):
    session_id, path = new_session(client, "daily-checkin")
    info = client.get(f"/api/sessions/{session_id}").json()
    post_form(client, path, [("_version", str(info["version"])), ("_step", "mood"),
                             ("answer", "4"), ("action", "next")])
    assert register(client, "daily-checkin")["version"] == 1
    task = json.loads(example("daily-checkin"))
    task["steps"] = [s for s in task["steps"] if s["identifier"] != "medication_taken"]
    task["steps"][0]["title"] = "How is your mood today?"
    r = client.post("/api/tasks", content=json.dumps(task), headers={"content-type": "application/json"})
    assert r.status_code == 201
    assert r.json()["version"] == 2 and r.json()["migratedSessions"] == 1
    info = client.get(f"/api/sessions/{session_id}").json()
    assert info["taskVersion"] == 2
    result = client.get(f"/api/sessions/{session_id}/result").json()
    assert [x for x in result["results"] if x["identifier"] == "mood"][0]["results"][0]["answer"] == 4
    versions = client.get("/api/tasks/daily-checkin").json()["versions"]
    assert [v["version"] for v in versions] == [1, 2]
    assert client.get("/api/tasks/nothing").status_code == 404


def test_the_registered_fingerprint_is_the_one_saved_sessions_name(app, client):
    """The fingerprint a registration answers is the SHA-256 of the definition's canonical
    form (keys sorted, compact; daily-checkin has no whole number written as a real), and the
    one the stored restoration data names; the same definition written another way has the
    same fingerprint."""
    body = register(client, "daily-checkin")
    definition = json.loads(example("daily-checkin"))
    canonical = json.dumps(definition, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert body["fingerprint"] == hashlib.sha256(canonical.encode("utf-8")).hexdigest()
    r = client.post("/api/tasks/daily-checkin/sessions")
    saved = app.state.service.store.session(r.json()["session"]).saved
    assert json.loads(saved)["task"]["fingerprint"] == body["fingerprint"]
    respelled = json.dumps(definition, indent=3, sort_keys=True)
    r = client.post("/api/tasks", content=respelled, headers={"content-type": "application/json"})
    assert r.status_code == 201 and r.json()["fingerprint"] == body["fingerprint"]


def test_invite_link_starts_a_new_session_for_each_browser(client):
    register(client, "daily-checkin")
    r = client.post("/api/tasks/daily-checkin/invites")
    invite = r.json()["inviteUrl"].replace("http://testserver", "")
    page = client.get(invite)
    assert page.status_code == 200 and "Start" in page.text
    a = client.post(invite, follow_redirects=False)
    client.cookies.clear()  # another browser (the same one resumes: tests/test_links.py)
    b = client.post(invite, follow_redirects=False)
    assert a.status_code == b.status_code == 303
    assert a.headers["location"].startswith("/r/") and a.headers["location"] != b.headers["location"]
    assert client.get(a.headers["location"]).status_code == 200
    assert client.post("/api/tasks/unknown/invites").status_code == 404


def test_api_key_when_configured(db_url):
    app = create_app(db_url, KEY, api_key="s3cret")
    json_type = {"content-type": "application/json"}
    with TestClient(app) as c:
        r = c.post("/api/tasks", content=example("daily-checkin"), headers=json_type)
        assert r.status_code == 401 and r.json()["code"] == "EAUTH"
        r = c.post("/api/tasks", content=example("daily-checkin"),
                   headers={"authorization": "Bearer s3cret", **json_type})
        assert r.status_code == 201


def test_restoration_data_is_signed_with_the_server_key(app, client):
    session_id, _ = new_session(client, "daily-checkin")
    saved = app.state.service.store.session(session_id).saved
    task = stepkit.Task.from_json(example("daily-checkin"))
    try:
        task.restore(saved)
        raise AssertionError("restored without the key")
    except stepkit.RestorationError as e:
        assert e.errors[0]["code"] == "keyRequired"
    task.restore(saved, {"integrityKey": KEY}).close()


TIMED = {
    "identifier": "timed",
    "steps": [
        {"type": "instruction", "identifier": "intro", "title": "Get ready"},
        {"type": "countdown", "identifier": "countdown", "title": "Starting", "stepDuration": 5},
        {"type": "question", "identifier": "q", "title": "Done?", "answerFormat": {"type": "boolean"}},
    ],
}


def test_timed_steps_follow_next_deadline_on_the_injected_clock(client, clock):
    r = client.post("/api/tasks", content=json.dumps(TIMED), headers={"content-type": "application/json"})
    assert r.status_code == 201
    r = client.post("/api/tasks/timed/sessions")
    sid, path = r.json()["session"], r.json()["resumeUrl"].replace("http://testserver", "")
    info = client.get(f"/api/sessions/{sid}").json()
    post_form(client, path, [("_version", str(info["version"])), ("_step", "intro"), ("action", "next")])
    info = client.get(f"/api/sessions/{sid}").json()
    assert info["state"]["step"]["identifier"] == "countdown"
    deadline = info["state"]["nextDeadline"]
    assert deadline is not None
    page = client.get(path)
    assert 'data-deadline-ms="5000"' in page.text and 'value="tick"' in page.text
    # The page says what the step waits for.
    assert "This step waits until its time is up" in page.text and "5</span> seconds left" in page.text
    # Continue before the deadline: nothing is due, the step stays, and the page says why.
    early = post_form(client, path, [("_version", str(info["version"])), ("_step", "countdown"),
                                     ("action", "tick")])
    assert early.headers["location"].endswith("?notice=early")
    assert "The time for this step is not up yet" in client.get(early.headers["location"]).text
    info = client.get(f"/api/sessions/{sid}").json()
    assert info["state"]["step"]["identifier"] == "countdown"
    clock.set(stepkit.parse_iso8601_ms(deadline))
    post_form(client, path, [("_version", str(info["version"])), ("_step", "countdown"), ("action", "tick")])
    info = client.get(f"/api/sessions/{sid}").json()
    assert info["state"]["step"]["identifier"] == "q"


def test_a_wait_step_offers_next_and_no_timer(client):
    task = {"identifier": "wait", "steps": [
        {"type": "wait", "identifier": "w1", "title": "Please wait"},
        {"type": "completion", "identifier": "done", "title": "All done"}]}
    assert client.post("/api/tasks", content=json.dumps(task),
                       headers={"content-type": "application/json"}).status_code == 201
    r = client.post("/api/tasks/wait/sessions").json()
    sid, path = r["session"], r["resumeUrl"].replace("http://testserver", "")
    page = client.get(path).text
    assert 'value="next"' in page and 'value="tick"' not in page and "In progress." in page
    post_form(client, path, [("_version", "1"), ("_step", "w1"), ("action", "next")])
    # The last step is a completion step: reaching it finishes the run, and the one page the
    # participant sees after is that step, with its own title.
    assert client.get(f"/api/sessions/{sid}").json()["status"] == "finished"
    assert "<h1>All done</h1>" in client.get(path).text


def test_image_choices_show_their_images(client):
    task = {"identifier": "pictures", "steps": [
        {"type": "question", "identifier": "pick", "question": "Which one?",
         "answerFormat": {"type": "imageChoice", "imageChoices": [
             {"normalImage": "/static/cat.png", "text": "Cat", "value": "cat"},
             {"normalImage": "/static/dog.png", "text": "Dog", "value": "dog"}]}}]}
    r = client.post("/api/tasks", content=json.dumps(task),
                    headers={"content-type": "application/json"})
    assert r.status_code == 201, r.text
    made = client.post("/api/tasks/pictures/sessions").json()
    page = client.get(made["resumeUrl"].replace("http://testserver", "")).text
    assert '<img src="/static/cat.png" alt="" class="choice-image"> Cat' in page
    assert '<img src="/static/dog.png" alt="" class="choice-image"> Dog' in page


def test_a_question_without_words_of_its_own_is_labelled_with_the_engines_display_title(client):
    """The field's label is the step's question, else what the engine calls the step
    (displayTitle): here its text, which a title-or-question rule of the page's own missed."""
    task = {"identifier": "cups", "steps": [
        {"type": "question", "identifier": "q", "text": "How many cups today?",
         "answerFormat": {"type": "numeric", "style": "integer"}}]}
    r = client.post("/api/tasks", content=json.dumps(task), headers={"content-type": "application/json"})
    assert r.status_code == 201, r.text
    made = client.post("/api/tasks/cups/sessions").json()
    state = client.get(f"/api/sessions/{made['session']}").json()["state"]
    assert state["step"]["displayTitle"] == "How many cups today?"  # the engine's rule
    page = client.get(made["resumeUrl"].replace("http://testserver", "")).text
    assert '<label for="q">How many cups today?</label>' in page
    assert "<h1>How many cups today?</h1>" in page
