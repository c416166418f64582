"""The medications page (examples/tasks/medications.json, a repeating group) in Chromium, as a
participant uses it with the mouse: one instance to start (the count answered 1), "Add another"
twice, each instance typed into, the middle one removed, then on to the end. The result is one
object per remaining instance, in the order they are on the page, each with what was typed into
it; the removed instance's answers are nowhere (issue 31)."""

from __future__ import annotations

import json

import httpx
import pytest

from conftest import AUTH, example
from live import click, legends, live_service

api = httpx.Client(headers={**AUTH, "content-type": "application/json"}, timeout=60)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with live_service(tmp_path_factory, "medications") as live:
        r = api.post(live.url + "/api/tasks", content=example("medications"))
        assert r.status_code == 201, r.text
        yield live


@pytest.fixture(scope="module")
def page(server, browser):
    context = browser.new_context(viewport={"width": 1280, "height": 800}, locale="en-US")
    yield context.new_page()
    context.close()


def state(server, sid):
    return api.get(f"{server.url}/api/sessions/{sid}").json()




def fill_instance(page, k, name, dose, frequency):
    page.fill(f'[name="item:medications:{k}:name"]', name)
    page.fill(f'[name="item:medications:{k}:dose"]', str(dose))
    page.check(f'input[type=radio][name="item:medications:{k}:frequency"][value="{frequency}"]')


def test_add_two_remove_one_and_finish(server, page):
    identifier = json.loads(example("medications"))["identifier"]
    r = api.post(f"{server.url}/api/tasks/{identifier}/sessions").json()
    sid = r["session"]
    page.goto(r["resumeUrl"])
    click(page, "next")                                   # the introduction
    page.check('input[type=radio][name="answer"][value="true"]')
    click(page, "next")                                   # takes medication: yes
    page.fill('[name="answer"]', "1")
    click(page, "next")                                   # how many: 1
    assert state(server, sid)["state"]["step"]["identifier"] == "medication"
    # One instance (the count), no Remove: the count keeps it.
    assert legends(page) == ["Medication 1:"]
    assert page.query_selector('button[value="remove:medications:0"]') is None
    # Frequencies by position: 0 every day, 1 every week, 2 only when needed.
    fill_instance(page, 0, "Ibuprofen", 400, 2)
    click(page, "add:medications")
    assert legends(page) == ["Medication 1: Ibuprofen", "Medication 2:"]
    fill_instance(page, 1, "Zinc", 25, 1)
    click(page, "add:medications")
    assert legends(page) == ["Medication 1: Ibuprofen", "Medication 2: Zinc", "Medication 3:"]
    fill_instance(page, 2, "Metformin", 500, 0)
    # Remove the second: the third moves up, what was typed into it kept.
    click(page, "remove:medications:1")
    assert legends(page) == ["Medication 1: Ibuprofen", "Medication 2: Metformin"]
    assert page.input_value('[name="item:medications:1:name"]') == "Metformin"
    assert state(server, sid)["state"]["instances"]["medications"]["count"] == 2
    page.check('input[type=radio][name="item:sideEffects"][value="false"]')
    click(page, "next")
    assert state(server, sid)["state"]["step"]["identifier"] == "missedDoses"
    page.fill('[name="answer"]', "0")
    click(page, "next")
    for _ in range(3):                                    # the completion step
        if state(server, sid)["status"] == "finished":
            break
        click(page, "next")
    assert state(server, sid)["status"] == "finished"
    result = api.get(f"{server.url}/api/sessions/{sid}/result").json()
    form = next(s for s in result["results"] if s["identifier"] == "medication")
    group = next(r for r in form["results"] if r["identifier"] == "medications")
    assert group["type"] == "group"
    instances = group["instances"]
    assert [i["index"] for i in instances] == [0, 1]

    def answers(instance):
        return {r["identifier"]: r.get("answer") for r in instance["results"]}

    first, second = answers(instances[0]), answers(instances[1])
    assert first["name"] == "Ibuprofen" and first["dose"] == 400 and first["frequency"] == ["asNeeded"]
    assert second["name"] == "Metformin" and second["dose"] == 500 and second["frequency"] == ["daily"]
    assert "Zinc" not in json.dumps(result)
