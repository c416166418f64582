"""A migration keeps the history it replaces (issue 26, item 2): re-registering a changed task
moves open sessions onto the new version, and the row as it was (its restoration data, its
visit dates, every answer) stays in an append-only history with what was kept and dropped.
The schema migration that adds the history keeps every existing row."""

from __future__ import annotations

import json

import sqlalchemy as sa
import stepkit

from conftest import KEY, answers, example, new_session
from stepkit_web.db import make_engine, session_history, sessions, tasks, tokens
from stepkit_web.migrate import upgrade
from stepkit_web.walk import page_fields, post_form

JSON = {"content-type": "application/json"}


def answer_pages(client, clock, session_id, path, n):
    """Answers ``n`` pages of daily-checkin, one minute apart on the manual clock."""
    for _ in range(n):
        clock.set(clock() + 60_000)
        info = client.get(f"/api/sessions/{session_id}").json()
        state = info["state"]
        r = post_form(client, path, [("_version", str(info["version"])),
                                     ("_step", state["step"]["identifier"]),
                                     ("action", "next")] + page_fields(state, answers("daily-checkin")))
        assert r.status_code == 303, r.text


def visits(result):
    return {s["identifier"]: (s["startDate"], s["endDate"]) for s in result["results"]}


def test_a_migration_keeps_the_old_row_its_dates_and_records_dropped_answers(client, clock):
    session_id, path = new_session(client, "daily-checkin")
    answer_pages(client, clock, session_id, path, 3)  # mood, sleep, symptoms
    before = client.get(f"/api/sessions/{session_id}/result").json()
    dates_before = visits(before)
    assert set(dates_before) >= {"mood", "sleep", "symptoms"}

    v2 = json.loads(example("daily-checkin"))
    v2["steps"] = [s for s in v2["steps"] if s["identifier"] != "sleep"]  # removed
    for s in v2["steps"]:
        if s["identifier"] == "symptoms":
            s["identifier"] = "symptoms_today"  # renamed
    clock.set(clock() + 3_600_000)
    r = client.post("/api/tasks", content=json.dumps(v2), headers=JSON)
    assert r.status_code == 201 and r.json()["migratedSessions"] == 1

    history = client.get(f"/api/sessions/{session_id}/history").json()["history"]
    assert len(history) == 1
    old = history[0]
    assert (old["taskVersion"], old["toTaskVersion"], old["reason"]) == (1, 2, "migrated")
    # The old data, as it was: every answer and every visit's dates.
    assert old["result"] == before
    assert visits(old["result"]) == dates_before
    # Every answer that did not survive is recorded with where it went (nowhere, and why).
    dropped = {d["step"] for d in old["report"]["dropped"]}
    assert dropped == {"sleep", "symptoms"}
    assert {k["step"] for k in old["report"]["kept"]} == {"mood"}
    # The old restoration data itself restores on version 1, byte for byte as it was.
    task_v1 = stepkit.Task.from_json(example("daily-checkin"))
    with task_v1.restore(old["saved"], {"integrityKey": KEY}) as s:
        assert s.state["step"]["identifier"] == "medication_taken"

    # The session goes on, on version 2, with the answer that still fits.
    info = client.get(f"/api/sessions/{session_id}").json()
    assert info["taskVersion"] == 2
    result = client.get(f"/api/sessions/{session_id}/result").json()
    mood = [s for s in result["results"] if s["identifier"] == "mood"][0]
    assert mood["results"][0]["answer"] == answers("daily-checkin")["mood"]
    # The live row keeps the kept visit's dates, not the migration's time (the mood page's
    # response time is what a study analyses).
    assert visits(result)["mood"] == dates_before["mood"]


def test_a_lazy_migration_on_the_next_page_keeps_history_too(app, client, clock):
    """A session written while the new version was registered migrates on its next request:
    that write keeps the old row as well."""
    session_id, path = new_session(client, "daily-checkin")
    answer_pages(client, clock, session_id, path, 1)
    store = app.state.service.store
    row = store.session(session_id)
    v2 = json.loads(example("daily-checkin"))
    v2["steps"][0]["title"] = "How is your mood today?"
    # Register without migrating (as if the session was being written at that moment).
    reg = store.add_task("daily-checkin", json.dumps(v2), "x", "stepkit", None)
    assert reg.version == 2
    info = client.get(f"/api/sessions/{session_id}").json()
    assert "state" in info, info
    state = info["state"]
    r = post_form(client, path, [("_version", str(info["version"])),
                                 ("_step", state["step"]["identifier"]), ("action", "next")]
                  + page_fields(state, answers("daily-checkin")))
    assert r.status_code == 303
    assert store.session(session_id).task_version == 2
    history = store.history(session_id)
    assert len(history) == 1 and history[0]["saved"] == row.saved
    assert history[0]["task_version"] == 1


def test_the_schema_migration_keeps_existing_rows(tmp_path):
    url = f"sqlite:///{tmp_path / 'old.db'}"
    engine = make_engine(url)
    upgrade(engine, "0001")
    with engine.begin() as conn:
        assert "session_history" not in sa.inspect(conn).get_table_names()
        conn.execute(tasks.insert().values(identifier="t", version=1, definition="{}",
                                           fingerprint="f", source="stepkit",
                                           created_at="2026-01-01"))
        conn.execute(sessions.insert().values(
            id="a" * 32, task_identifier="t", task_version=1, saved="SAVED", saved_at=1,
            version=3, status="open", created_at="2026-01-01", updated_at="2026-01-02"))
        conn.execute(tokens.insert().values(hash="h", kind="resume", session_id="a" * 32,
                                            revoked=False, created_at="2026-01-01"))
    upgrade(engine)
    with engine.connect() as conn:
        row = conn.execute(sa.select(sessions)).one()
        assert (row.id, row.saved, row.version, row.updated_at) == ("a" * 32, "SAVED", 3,
                                                                   "2026-01-02")
        assert conn.execute(sa.select(sa.func.count()).select_from(tasks)).scalar() == 1
        assert conn.execute(sa.select(sa.func.count()).select_from(tokens)).scalar() == 1
        assert conn.execute(sa.select(sa.func.count()).select_from(session_history)).scalar() == 0
    engine.dispose()
