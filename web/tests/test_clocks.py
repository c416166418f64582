"""Clocks across instances (issue 26, item 9): two instances whose clocks are five minutes apart
serve one session. Sessions are dated on the database's clock (the default), so a timed step
is neither shortened nor lengthened and durations are the real ones; on the instances' own
clocks (time_source="instance", what the tests of timed steps inject) the skew shows, and a
session's time still never moves backwards."""

from __future__ import annotations

import json

import stepkit
from fastapi.testclient import TestClient

from conftest import API_KEY, AUTH, BASE, KEY, START
from stepkit_web.app import create_app
from stepkit_web.service import ResumeClock
from stepkit_web.walk import post_form

JSON = {"content-type": "application/json"}
SKEW_MS = 5 * 60 * 1000
TASK = {"identifier": "timed", "steps": [
    {"type": "instruction", "identifier": "intro", "title": "Get ready"},
    {"type": "countdown", "identifier": "countdown", "title": "Wait", "stepDuration": 600},
    {"type": "question", "identifier": "q", "title": "Done?", "answerFormat": {"type": "boolean"}},
]}


def two_instances(db_url, time_source):
    slow = stepkit.ManualClock.from_iso(START)
    fast = stepkit.ManualClock.from_iso(START)
    fast.set(fast() + SKEW_MS)  # five minutes ahead
    a = create_app(db_url, KEY, api_key=API_KEY, base_url=BASE, clock=slow,
                   time_source=time_source)
    b = create_app(db_url, KEY, api_key=API_KEY, base_url=BASE, clock=fast,
                   time_source=time_source)
    return a, b


def start_countdown_on(client):
    assert client.post("/api/tasks", content=json.dumps(TASK), headers=JSON).status_code == 201
    created = client.post("/api/tasks/timed/sessions").json()
    sid, path = created["session"], created["resumeUrl"].replace(BASE, "")
    r = post_form(client, path, [("_version", "1"), ("_step", "intro"), ("action", "next")])
    assert r.status_code == 303
    return sid, path


def remaining(client, sid):
    state = client.get(f"/api/sessions/{sid}").json()["state"]
    assert state["step"]["identifier"] == "countdown"
    return state["active"]["remaining"]


def test_on_the_database_clock_skewed_instances_neither_shorten_nor_stretch(db_url):
    slow_app, fast_app = two_instances(db_url, "database")
    with TestClient(slow_app, base_url=BASE, headers=AUTH) as slow, \
            TestClient(fast_app, base_url=BASE, headers=AUTH) as fast:
        sid, path = start_countdown_on(slow)
        seen_fast = remaining(fast, sid)
        seen_slow = remaining(slow, sid)
        # Real time only (this test takes seconds): not five minutes less, not frozen.
        assert 590 <= seen_fast <= 600 and 590 <= seen_slow <= 600
        # Durations in the result are real too: the countdown's start and the intro's end
        # come from one clock, whichever instance served each page.
        result = fast.get(f"/api/sessions/{sid}/result").json()
        steps = {s["identifier"]: s for s in result["results"]}
        intro_end = stepkit.parse_iso8601_ms(steps["intro"]["endDate"])
        countdown_start = stepkit.parse_iso8601_ms(steps["countdown"]["startDate"])
        assert 0 <= countdown_start - intro_end < 10_000
        task_start = stepkit.parse_iso8601_ms(result["startDate"])
        assert 0 <= intro_end - task_start < 10_000


def test_on_instance_clocks_the_skew_shows_and_time_never_goes_back(db_url):
    """What the database clock avoids (and the guard that remains): on the instances' own
    clocks, a step started on the slow one is five minutes shorter on the fast one, and a
    session saved on the fast one does not go back in time on the slow one."""
    slow_app, fast_app = two_instances(db_url, "instance")
    with TestClient(slow_app, base_url=BASE, headers=AUTH) as slow, \
            TestClient(fast_app, base_url=BASE, headers=AUTH) as fast:
        sid, path = start_countdown_on(slow)
        assert remaining(fast, sid) == 300  # the skew taken as elapsed time
        # Saved on the fast instance (a tick), then read on the slow one: not earlier.
        post_form(fast, path, [("_version", "2"), ("_step", "countdown"), ("action", "tick")])
        row = fast_app.state.service.store.session(sid)
        assert row.saved_at == START_MS + SKEW_MS
        assert remaining(slow, sid) == 300  # stands still until the slow clock catches up


START_MS = stepkit.parse_iso8601_ms(START)


def test_a_resume_clock_never_reads_before_the_save():
    now = [1_000]
    clock = ResumeClock(lambda: now[0], saved_at=5_000)
    assert clock() == 5_000
    clock.live = True
    assert clock() == 5_000  # the instance's clock is behind the save
    now[0] = 7_000
    assert clock() == 7_000
