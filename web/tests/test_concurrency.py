"""Optimistic concurrency: a double click, a second tab, the browser's Back button and racing
threads never overwrite a newer answer; the loser is sent to the current step."""

import threading

from conftest import answers, new_session
from stepkit_web.walk import page_fields, post_form


def state(client, session_id):
    return client.get(f"/api/sessions/{session_id}").json()


def to_mood(client, session_id, path):
    info = state(client, session_id)
    assert info["state"]["step"]["identifier"] == "mood"  # the task's first step
    return info


def test_double_submit_keeps_the_first_and_redirects_the_second(client):
    session_id, path = new_session(client, "daily-checkin")
    info = to_mood(client, session_id, path)
    page = [("_version", str(info["version"])), ("_step", "mood"), ("answer", "4"),
            ("action", "next")]
    first = post_form(client, path, page)
    second = post_form(client, path, page)
    assert first.status_code == 303 and first.headers["location"] == path
    assert second.status_code == 303 and second.headers["location"] == path + "?notice=stale"
    after = state(client, session_id)
    assert after["version"] == info["version"] + 1
    assert after["state"]["step"]["identifier"] == "sleep"
    result = client.get(f"/api/sessions/{session_id}/result").json()
    mood = [r for r in result["results"] if r["identifier"] == "mood"]
    assert mood[0]["results"][0]["answer"] == 4


def test_two_tabs_the_second_is_told_and_changes_nothing(client):
    session_id, path = new_session(client, "daily-checkin")
    info = to_mood(client, session_id, path)
    tab_a = [("_version", str(info["version"])), ("_step", "mood")]
    tab_b = list(tab_a)
    assert post_form(client, path, tab_a + [("answer", "2"), ("action", "save")]).status_code == 303
    r = post_form(client, path, tab_b + [("answer", "5"), ("action", "next")])
    assert r.headers["location"].endswith("?notice=stale")
    after = state(client, session_id)
    assert after["state"]["step"]["identifier"] == "mood" and after["state"]["answer"] == 2
    page = client.get(r.headers["location"])
    assert "This page had changed" in page.text and 'value="2" checked' in page.text


def test_browser_back_posts_an_old_page_and_lands_on_the_current_step(client):
    session_id, path = new_session(client, "daily-checkin")
    info = to_mood(client, session_id, path)
    old = [("_version", str(info["version"])), ("_step", "mood"), ("answer", "3"), ("action", "next")]
    assert post_form(client, path, old).status_code == 303
    now = state(client, session_id)
    assert now["state"]["step"]["identifier"] == "sleep"
    # Back in the browser shows the cached mood page; posting it again changes nothing.
    r = post_form(client, path, [("_version", str(info["version"])), ("_step", "mood"),
                                 ("answer", "1"), ("action", "next")])
    assert r.headers["location"].endswith("?notice=stale")
    assert state(client, session_id)["version"] == now["version"]
    # The page's own Back button goes back, keeping the answer.
    r = post_form(client, path, [("_version", str(now["version"])), ("_step", "sleep"),
                                 ("action", "back")])
    assert r.status_code == 303
    back = state(client, session_id)
    assert back["state"]["step"]["identifier"] == "mood" and back["state"]["answer"] == 3
    # A reload (GET) changes nothing.
    client.get(path)
    assert state(client, session_id)["version"] == back["version"]


def test_racing_threads_exactly_one_write_wins(app, client):
    """Twenty threads apply the same page at once to the store: one is stored, every other is
    told it is stale; nothing is half-written."""
    session_id, path = new_session(client, "daily-checkin")
    to_mood(client, session_id, path)
    service = app.state.service
    row = service.session_row(session_id)
    outcomes = []
    barrier = threading.Barrier(20)

    def one(value):
        barrier.wait()
        try:
            service.act(row, str(row.version), "mood", "next", lambda s: (value, True))
            outcomes.append(("ok", value))
        except Exception as e:  # Stale
            outcomes.append((type(e).__name__, value))

    threads = [threading.Thread(target=one, args=(1 + i % 5,)) for i in range(20)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wins = [v for k, v in outcomes if k == "ok"]
    assert len(wins) == 1 and sorted(k for k, _ in outcomes).count("Stale") == 19
    after = state(client, session_id)
    assert after["version"] == row.version + 1
    result = client.get(f"/api/sessions/{session_id}/result").json()
    assert [r for r in result["results"] if r["identifier"] == "mood"][0]["results"][0]["answer"] == wins[0]


def test_resume_in_another_browser_reopens_the_exact_step(app, client):
    from fastapi.testclient import TestClient

    session_id, path = new_session(client, "intake")
    for _ in range(3):
        info = state(client, session_id)
        fields = page_fields(info["state"], answers("intake"))
        post_form(client, path, [("_version", str(info["version"])),
                                 ("_step", info["state"]["step"]["identifier"]),
                                 ("action", "next")] + (fields or []))
    info = state(client, session_id)
    assert info["state"]["step"]["identifier"] == "emergency_contact"
    with TestClient(app) as other:  # no cookies, nothing shared but the link
        page = other.get(path)
        assert page.status_code == 200 and "Emergency contact" in page.text
        assert page.headers["cache-control"] == "no-store"
        assert page.headers["referrer-policy"] == "same-origin"
        assert f'name="_version" value="{info["version"]}"' in page.text
