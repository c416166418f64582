"""The live sessions a worker keeps between page POSTs (livesessions.py): a POST uses the kept
session only when the row it reads is the row this worker wrote; anything else restores from
the row, so no write by another worker or instance is ever missed, and nothing is served that
the database no longer serves."""

import json
import sys
import threading

import pytest
import sqlalchemy as sa
from fastapi.testclient import TestClient

from conftest import (API_KEY, AUTH, BASE, KEY, WEB_TASKS, answers, new_session,
                      reference_result, register)
from stepkit_web.app import create_app
from stepkit_web.db import sessions, token_hash
from stepkit_web.walk import page_fields, post_form, strip_volatile, walk_http


def counting_restores(app) -> list:
    """Counts the restores from a row for page POSTs (one served by a kept session makes
    none; the API's reads, which always restore, are not counted)."""
    service = app.state.service
    calls = []
    real = service.restore

    def restore(row):
        if sys._getframe(1).f_code.co_name == "_page_session":
            calls.append(row.id)
        return real(row)

    service.restore = restore
    return calls


def info(client, session_id):
    return client.get(f"/api/sessions/{session_id}").json()


def post_page(client, session_id, path, action="next", fields=None):
    """Posts the session's current page with the answers file's fields (or ``fields``)."""
    now = info(client, session_id)
    state = now["state"]
    if fields is None:
        fields = page_fields(state, answers("daily-checkin")) or []
    return post_form(client, path, [("_version", str(now["version"])),
                                    ("_step", state["step"]["identifier"]),
                                    ("action", action)] + list(fields))


def result_answers(client, session_id) -> dict:
    result = client.get(f"/api/sessions/{session_id}/result").json()
    return {r["identifier"]: r["results"] for r in result["results"]}


def test_a_post_after_a_post_uses_the_kept_session(app, client):
    session_id, path = new_session(client, "daily-checkin")
    restores = counting_restores(app)
    assert post_page(client, session_id, path).status_code == 303  # mood -> sleep
    assert restores == [session_id] and len(app.state.service.live) == 1
    assert post_page(client, session_id, path).status_code == 303  # sleep -> symptoms
    assert restores == [session_id]  # served by the kept session
    r = post_page(client, session_id, path, action="back")
    assert r.status_code == 303 and r.headers["location"] == path
    assert restores == [session_id]
    now = info(client, session_id)["state"]
    assert now["step"]["identifier"] == "sleep"
    assert now["answer"] == {"bedtime": "23:40", "wake_time": "06:55", "quality": [4]}


def test_a_write_by_another_instance_is_never_missed(app, client, db_url, clock):
    """Two instances on one database: the first's kept session is older than the row the
    second wrote, so the first restores from the row and keeps both answers."""
    session_id, path = new_session(client, "daily-checkin")
    other = create_app(db_url, KEY, api_key=API_KEY, base_url=BASE, clock=clock)
    restores = counting_restores(app)
    with TestClient(other, base_url=BASE, headers=AUTH) as second:
        assert post_page(client, session_id, path).status_code == 303  # A: mood -> sleep
        assert len(app.state.service.live) == 1
        r = post_page(second, session_id, path)  # B: sleep -> symptoms
        assert r.status_code == 303 and r.headers["location"] == path
        # A: symptoms -> medication_taken, on B's row: restored, not A's kept "sleep" session.
        r = post_page(client, session_id, path)
        assert r.status_code == 303 and r.headers["location"] == path
        assert restores == [session_id, session_id]
    assert info(client, session_id)["state"]["step"]["identifier"] == "medication_taken"
    got = result_answers(client, session_id)
    assert got["mood"][0]["answer"] == 4
    assert {r["identifier"]: r["answer"] for r in got["sleep"]}["bedtime"] == "23:40"  # B's
    assert got["symptoms"][0]["answer"] == ["headache", "fatigue"]  # A's, after B's


def test_a_failed_update_drops_the_kept_session(app, client):
    """Another writer gets in between this worker's read of the row and its UPDATE: the POST
    is told it is stale, the kept session is dropped, and the next POST restores."""
    session_id, path = new_session(client, "daily-checkin")
    service = app.state.service
    assert post_page(client, session_id, path).status_code == 303  # mood -> sleep, kept
    assert len(service.live) == 1
    store = service.store
    real = store.update_session

    def interleaved(row, **kw):  # someone else writes first (the row's version moves on)
        with store.engine.begin() as conn:
            conn.execute(sessions.update().where(sessions.c.id == row.id)
                         .values(version=sessions.c.version + 1))
        return real(row, **kw)

    store.update_session = interleaved
    r = post_page(client, session_id, path)
    assert r.status_code == 303 and r.headers["location"] == path + "?notice=stale"
    assert len(service.live) == 0  # dropped
    store.update_session = real
    restores = counting_restores(app)
    r = post_page(client, session_id, path)
    assert r.status_code == 303 and r.headers["location"] == path
    assert restores == [session_id]
    assert info(client, session_id)["state"]["step"]["identifier"] == "symptoms"


def test_racing_posts_on_a_kept_session_exactly_one_wins(app, client):
    session_id, path = new_session(client, "daily-checkin")
    service = app.state.service
    assert post_page(client, session_id, path).status_code == 303  # kept, on "sleep"
    row = service.store.session_by_resume_token(token_hash(path.rsplit("/", 1)[1]))
    outcomes = []
    barrier = threading.Barrier(10)

    def race():
        barrier.wait()
        try:
            service.act(row, str(row.version), "sleep", "back", None)
            outcomes.append("won")
        except Exception as error:  # Stale
            outcomes.append(type(error).__name__)

    threads = [threading.Thread(target=race) for _ in range(10)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(outcomes) == ["Stale"] * 9 + ["won"]
    after = info(client, session_id)
    assert after["version"] == row.version + 1 and after["state"]["step"]["identifier"] == "mood"


def test_the_kept_sessions_are_bounded(db_url, clock):
    app = create_app(db_url, KEY, api_key=API_KEY, base_url=BASE, clock=clock, live_sessions=2)
    with TestClient(app, base_url=BASE, headers=AUTH) as client:
        made = [new_session(client, "daily-checkin") for _ in range(3)]
        for session_id, path in made:
            assert post_page(client, session_id, path).status_code == 303
        live = app.state.service.live
        assert len(live) == 2  # the least recently written was closed
        restores = counting_restores(app)
        for session_id, path in reversed(made):
            assert post_page(client, session_id, path).status_code == 303
        assert restores == [made[0][0]] and len(live) == 2
        for session_id, _ in made:
            assert info(client, session_id)["state"]["step"]["identifier"] == "symptoms"


def test_none_kept_every_post_restores(db_url, clock):
    app = create_app(db_url, KEY, api_key=API_KEY, base_url=BASE, clock=clock, live_sessions=0)
    with TestClient(app, base_url=BASE, headers=AUTH) as client:
        session_id, path = new_session(client, "daily-checkin")
        restores = counting_restores(app)
        for _ in range(3):
            assert post_page(client, session_id, path).status_code == 303
        assert restores == [session_id] * 3 and len(app.state.service.live) == 0
        assert info(client, session_id)["state"]["step"]["identifier"] == "medication_taken"


def test_a_revoked_link_is_not_served_from_the_kept_session(app, client):
    session_id, path = new_session(client, "daily-checkin")
    assert post_page(client, session_id, path).status_code == 303  # kept
    before = info(client, session_id)["version"]
    assert client.delete(f"/api/sessions/{session_id}/resume-links").status_code == 200
    r = post_page(client, session_id, path)
    assert r.status_code == 404
    assert info(client, session_id)["version"] == before  # nothing written


def test_a_deleted_participant_is_not_served_from_the_kept_session(app, client):
    register(client, "daily-checkin")
    r = client.post("/api/tasks/daily-checkin/invites", headers={"content-type": "application/json"},
                    content=json.dumps({"participants": ["P-9"]}))
    link = r.json()["invites"][0]["inviteUrl"].replace(BASE, "")
    r = post_form(client, link, [])  # Start: the participant's one session
    assert r.status_code == 303
    path = r.headers["location"]
    with app.state.service.store.engine.connect() as conn:
        session_id = conn.execute(sa.select(sessions.c.id)).scalar_one()
    assert post_page(client, session_id, path).status_code == 303  # kept
    assert len(app.state.service.live) == 1
    assert app.state.service.store.delete_participant("daily-checkin", "P-9") == 1
    stale_fields = [("_version", "3"), ("_step", "sleep"), ("action", "back")]
    r = post_form(client, path, stale_fields)
    assert r.status_code == 404
    with app.state.service.store.engine.connect() as conn:
        assert conn.execute(sa.select(sa.func.count()).select_from(sessions)).scalar_one() == 0


def test_a_row_changed_under_the_same_version_is_restored_and_checked(app, client):
    """Restoration data edited in the database without moving the version: not the row this
    worker wrote, so it is restored, fails its check, and the POST is a 409 (row kept)."""
    session_id, path = new_session(client, "daily-checkin")
    assert post_page(client, session_id, path).status_code == 303  # kept
    engine = app.state.service.store.engine
    with engine.begin() as conn:
        saved, version = conn.execute(sa.select(sessions.c.saved, sessions.c.version)
                                      .where(sessions.c.id == session_id)).one()
        tampered = saved.replace('"mood"', '"m00d"', 1)
        assert tampered != saved
        conn.execute(sessions.update().where(sessions.c.id == session_id)
                     .values(saved=tampered))
    r = post_form(client, path, [("_version", str(version)), ("_step", "sleep"),
                                 ("action", "back")])
    assert r.status_code == 409
    with engine.connect() as conn:
        assert conn.execute(sa.select(sessions.c.saved)
                            .where(sessions.c.id == session_id)).scalar_one() == tampered


@pytest.mark.parametrize("name", WEB_TASKS)
def test_a_kept_session_is_its_row_restored(app, client, name, tmp_path):
    """Every example task walked through its pages: each session the worker keeps saves
    exactly the restoration data a restore of the row it wrote saves, and the state it keeps
    for the next POST is that restore's state; the walk's result is the terminal presenter's."""
    service = app.state.service
    real_put = service.live.put
    checked = []

    def put(session_id, entry):
        row = service.session_row(session_id)
        assert (row.version, row.saved) == (entry.version, entry.saved)
        restored, _ = service.restore(row)
        with restored:
            restored.set_clock(lambda: entry.saved_at)  # read at the save's time, as kept
            assert entry.session.save() == restored.save()
            if entry.state is not None:
                assert entry.state == restored.state
        checked.append(entry.state is not None)
        real_put(session_id, entry)

    service.live.put = put
    session_id, path = new_session(client, name)
    result = walk_http(client, "", session_id, path, answers(name))
    assert strip_volatile(result) == strip_volatile(reference_result(name, tmp_path))
    assert checked and any(checked)
