"""Issue 32 in the browser: a time limit's remaining time is shown and the page moves on when it
runs out (the engine's tick, on the session's clock); a shuffled list is rendered in the order
the engine presents; a filtered list shows only the choices offered."""

from __future__ import annotations

import json

import stepkit
from fastapi.testclient import TestClient

from conftest import API_KEY, AUTH, BASE, KEY, START
from stepkit_web.app import create_app
from stepkit_web.walk import post_form

JSON = {"content-type": "application/json"}
TASK = {"identifier": "limited", "timeLimit": 600, "steps": [
    {"type": "question", "identifier": "colours", "title": "Colours you like", "timeLimit": 30,
     "answerFormat": {"type": "textChoice", "style": "multipleChoice", "shuffle": True, "textChoices": [
         {"text": "Red", "value": "red"}, {"text": "Green", "value": "green"}, {"text": "Blue", "value": "blue"},
         {"text": "Yellow", "value": "yellow"}, {"text": "None", "value": "none", "exclusive": True, "pinned": True}]}},
    {"type": "question", "identifier": "best", "title": "The best one", "optional": True,
     "answerFormat": {"type": "textChoice", "style": "singleChoice",
                      "choicesFrom": {"step": "colours", "which": "chosen"}}},
]}


def start(client):
    assert client.post("/api/tasks", content=json.dumps(TASK), headers=JSON).status_code == 201
    created = client.post("/api/tasks/limited/sessions").json()
    return created["session"], created["resumeUrl"].replace(BASE, "")


TEXTS = {"red": "Red", "green": "Green", "blue": "Blue", "yellow": "Yellow", "none": "None"}


def values(html: str) -> list:
    """The choices a page shows, in its order (by their labels)."""
    found = [(html.find(f">{text}</label>"), value) for value, text in TEXTS.items()]
    return [value for at, value in sorted(found) if at >= 0]


def test_the_page_shows_the_time_left_and_moves_on_when_it_runs_out(db_url):
    clock = stepkit.ManualClock.from_iso(START)
    app = create_app(db_url, KEY, api_key=API_KEY, base_url=BASE, clock=clock, time_source="instance")
    with TestClient(app, base_url=BASE, headers=AUTH) as client:
        sid, path = start(client)
        clock.set(clock() + 4_000)
        page = client.get(path).text
        assert "Time left: 26 s on this step, 596 s for the task" in page
        assert 'data-deadline-ms="26000"' in page
        state = client.get(f"/api/sessions/{sid}").json()["state"]
        # The list renders in the order the engine presents (the state's seeded order).
        assert values(page) == state["order"]["choices"]
        assert values(page)[-1] == "none"
        clock.set(clock() + 27_000)
        # The page names a choice by its place in the list shown.
        shown = state["order"]["choices"]
        r = post_form(client, path, [("_version", "1"), ("_step", "colours"), ("action", "tick"),
                                     ("answer", str(shown.index("green"))), ("answer", str(shown.index("blue")))])
        assert r.status_code == 303
        state = client.get(f"/api/sessions/{sid}").json()["state"]
        assert state["step"]["identifier"] == "best"
        # The answer the page held when the time ran out was kept; the next list offers only it.
        page = client.get(path).text
        assert sorted(values(page)) == ["blue", "green"]


def test_a_page_posted_after_the_time_ran_out_is_taken_as_the_tick(db_url):
    """Without the browser's tick (no JavaScript), "Next" on a required question left empty after
    its 30 s ran out: the step moves on as its time limit says, rather than refusing the page."""
    clock = stepkit.ManualClock.from_iso(START)
    app = create_app(db_url, KEY, api_key=API_KEY, base_url=BASE, clock=clock, time_source="instance")
    with TestClient(app, base_url=BASE, headers=AUTH) as client:
        sid, path = start(client)
        # Before the limit, the same page is refused: the question is required.
        post_form(client, path, [("_version", "1"), ("_step", "colours"), ("action", "next")])
        assert client.get(f"/api/sessions/{sid}").json()["state"]["step"]["identifier"] == "colours"
        clock.set(clock() + 31_000)
        version = client.get(f"/api/sessions/{sid}").json()["version"]
        r = post_form(client, path, [("_version", str(version)), ("_step", "colours"), ("action", "next")])
        assert r.status_code == 303
        state = client.get(f"/api/sessions/{sid}").json()["state"]
        assert state["step"]["identifier"] == "best"
        assert state["timeLimits"]["step"] is None


SECTION_TASK = {"identifier": "blocks", "steps": [
    {"type": "instruction", "identifier": "intro", "title": "Intro"},
    {"type": "section", "identifier": "block", "shuffleSteps": True, "steps": [
        {"type": "question", "identifier": f"q{i}", "title": f"Question {i}", "answerFormat": {"type": "boolean"}}
        for i in (1, 2)] + [{"type": "instruction", "identifier": "pause", "title": "Pause", "pinned": True}] + [
        {"type": "question", "identifier": f"q{i}", "title": f"Question {i}", "answerFormat": {"type": "boolean"}}
        for i in (3, 4)]},
    {"type": "instruction", "identifier": "after", "title": "After"},
    {"type": "completion", "identifier": "done", "title": "Done"}],
    "navigationRules": {"block": {"type": "direct", "destination": "done"}}}


def test_a_sections_steps_are_shown_in_the_seeded_order(db_url):
    """docs/randomization.md's example: seed 42 shows q1 q4 pause q3 q2, then the section's rule."""
    from stepkit_web.walk import walk_http
    clock = stepkit.ManualClock.from_iso(START)
    app = create_app(db_url, KEY, api_key=API_KEY, base_url=BASE, clock=clock, time_source="instance")
    with TestClient(app, base_url=BASE, headers=AUTH) as client:
        assert client.post("/api/tasks", content=json.dumps(SECTION_TASK), headers=JSON).status_code == 201
        created = client.post("/api/tasks/blocks/sessions", json={"options": {"seed": 42}}).json()
        sid, path = created["session"], created["resumeUrl"].replace(BASE, "")
        titles = []
        original = client.get

        def reading(url, *args, **kwargs):
            response = original(url, *args, **kwargs)
            if url == f"/api/sessions/{sid}" and response.json()["status"] != "finished":
                titles.append(response.json()["state"]["step"]["identifier"])
            return response
        client.get = reading
        page = original(path).text
        assert "Intro" in page
        result = walk_http(client, "", sid, path, {f"q{i}": True for i in range(1, 5)})
        client.get = original
        # The section's rule leads to the completion step, which ends the run.
        assert titles == ["intro", "q1", "q4", "pause", "q3", "q2"]
        shown = [r["identifier"] for r in result["results"]]
        assert shown[0] == "intro" and shown[-1] == "done" and "after" not in shown
        assert result["randomization"]["orders"]["block"] == {"steps": ["q1", "q4", "pause", "q3", "q2"]}
