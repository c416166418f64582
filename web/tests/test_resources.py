"""Bounded resources (issue 26, item 7): the compiled-task cache keeps at most its configured
number of task versions (least recently used out), and session creation is rate-limited per
invite link and per client, on an injected clock (no sleeping)."""

from __future__ import annotations

import json
from contextlib import contextmanager

from fastapi.testclient import TestClient

from conftest import API_KEY, AUTH, BASE, KEY, example, register
from stepkit_web.app import create_app
from stepkit_web.ratelimit import Rate, TokenBuckets

JSON = {"content-type": "application/json"}


def test_the_task_cache_is_bounded_lru(db_url, clock):
    app = create_app(db_url, KEY, api_key=API_KEY, base_url=BASE, clock=clock,
                     task_cache_size=2)
    service = app.state.service
    with TestClient(app, base_url=BASE, headers=AUTH) as c:
        for i in range(5):  # five versions of one task, each used by a session
            task = json.loads(example("daily-checkin"))
            task["steps"][0]["title"] = f"Mood, edition {i}"
            assert c.post("/api/tasks", content=json.dumps(task), headers=JSON).status_code == 201
            r = c.post("/api/tasks/daily-checkin/sessions")
            assert r.status_code == 201
            assert len(service.cached_tasks()) <= 2
        for name in ("headache", "intake"):
            register(c, name)
            c.post(f"/api/tasks/{name}/sessions")
        assert service.cached_tasks() == [("headache", 1), ("intake", 1)]
        # An evicted version is compiled again when needed, and works.
        sid = c.post("/api/tasks/daily-checkin/sessions").json()["session"]
        assert c.get(f"/api/sessions/{sid}").json()["state"]["step"]["identifier"] == "mood"
        assert service.cached_tasks() == [("intake", 1), ("daily-checkin", 5)]


def test_token_buckets_refill_on_the_injected_clock():
    now = [0]
    buckets = TokenBuckets(Rate(burst=3, per_ms=1000), clock=lambda: now[0])
    assert [buckets.take("a") for _ in range(3)] == [None, None, None]
    assert buckets.take("a") == 1.0  # empty: one token in a second
    assert buckets.take("b") is None  # another key has its own bucket
    now[0] += 500
    assert buckets.take("a") == 0.5
    now[0] += 500
    assert buckets.take("a") is None
    now[0] += 10_000  # refills up to the burst, not beyond
    assert [buckets.take("a") for _ in range(4)][-1] is not None


@contextmanager
def rate_limited(db_url, clock, invite_rate, client_rate):
    """A client of the service with these session-creation rates, daily-checkin registered, and
    the rate buckets' clock: now[0] (ms), which the test moves."""
    now = [0]
    app = create_app(db_url, KEY, api_key=API_KEY, base_url=BASE, clock=clock,
                     invite_rate=invite_rate, client_rate=client_rate, rate_clock=lambda: now[0])
    with TestClient(app, base_url=BASE, headers=AUTH) as c:
        register(c, "daily-checkin")
        yield c, now


def new_invite(c):
    """A new open link to daily-checkin, as a path."""
    return c.post("/api/tasks/daily-checkin/invites").json()["inviteUrl"].replace(BASE, "")


def fresh(c, url):
    """A script's POST to an open link: no cookie kept (a browser's cookie resumes instead)."""
    c.cookies.clear()
    return c.post(url, follow_redirects=False)


def test_one_invite_link_cannot_create_sessions_without_bound(db_url, clock):
    with rate_limited(db_url, clock, Rate(burst=5, per_ms=1000), Rate(burst=1000, per_ms=1)) as (c, now):
        invite, other = new_invite(c), new_invite(c)
        codes = [fresh(c, invite).status_code for _ in range(8)]
        assert codes == [303] * 5 + [429] * 3
        r = fresh(c, invite)
        assert r.status_code == 429 and r.headers["retry-after"] == "1"
        assert "Too many sessions" in r.text
        assert fresh(c, other).status_code == 303  # its own bucket
        now[0] += 2000
        assert [fresh(c, invite).status_code for _ in range(3)] == \
            [303, 303, 429]
        assert c.post("/i/unknown-link", follow_redirects=False).status_code == 404


def test_one_client_cannot_create_sessions_without_bound(db_url, clock):
    with rate_limited(db_url, clock, Rate(burst=1000, per_ms=1), Rate(burst=3, per_ms=6000)) as (c, now):
        links = [new_invite(c) for _ in range(5)]
        codes = [c.post(link, follow_redirects=False).status_code for link in links]
        assert codes == [303, 303, 303, 429, 429]  # a new link each time does not help
        now[0] += 6000
        assert c.post(links[4], follow_redirects=False).status_code == 303
