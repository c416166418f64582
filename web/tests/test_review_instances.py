"""Repeating blocks on review pages and a repeating question inside a repeating group, as a page
without JavaScript posts them (issue 31). The review lists each instance's answers under the
instance's title with a Change button per instance (stepkit_session_review_edit_instance); a
changed instance comes back to the review. A repeating question in each repetition of a group
(the loop scenario, Tests/fixtures/fhir-loop.json: FHIR ``repeats`` on "notes" inside the
repeating group "meds", maxOccurs 3) is one numbered input per answer with Add another answer and
Remove buttons. Bad actions are refused and change nothing."""

from __future__ import annotations

import copy
import json
import re

from conftest import EXAMPLES, ROOT, page_of, post_step, session_of, version_of
from stepkit_web.walk import post_form


def with_review(name: str, before: str) -> dict:
    task = copy.deepcopy(json.loads((EXAMPLES / f"{name}.json").read_text(encoding="utf-8")))
    at = next(i for i, s in enumerate(task["steps"]) if s["identifier"] == before)
    task["steps"].insert(at, {"type": "review", "identifier": "check"})
    task["identifier"] += "-review"
    return task


def state_of(client, session_id):
    return client.get(f"/api/sessions/{session_id}").json()


def test_the_medications_review_changes_one_medication(client):
    session_id, path = session_of(client, with_review("medications", "done"))
    post_step(client, session_id, path, "intro", [], "next")
    post_step(client, session_id, path, "takesMedication", [("answer", "true")], "next")
    post_step(client, session_id, path, "howMany", [("answer", "2")], "next")
    meds = [("item:medications:0:name", "Aspirin"), ("item:medications:0:dose", "100"),
            ("item:medications:0:frequency", "0"),
            ("item:medications:1:name", "Zinc"), ("item:medications:1:dose", "5"),
            ("item:medications:1:frequency", "2"), ("item:sideEffects", "false")]
    post_step(client, session_id, path, "medication", meds, "next")
    post_step(client, session_id, path, "missedDoses", [("answer", "1")], "next")
    assert state_of(client, session_id)["state"]["step"]["identifier"] == "check"
    page = page_of(client, path)
    # Each medication under its title, each with its own Change button.
    assert re.search(r'<span class="review-instance-title">Medication 1: Aspirin</span>\s*<ul><li><span class="review-label">Name:</span> Aspirin</li>'
                     r'<li><span class="review-label">Dose:</span> 100 mg</li>', page), page
    assert '<li><span class="review-label">How often?:</span> Only when needed</li>' in page
    assert 'value="edit-instance:medication:medications:0"' in page and 'value="edit-instance:medication:medications:1"' in page
    assert 'aria-label="Change your answers: Medication 2: Zinc"' in page
    # Bad actions: malformed, an instance out of range, a step in no repeating block.
    before = state_of(client, session_id)
    for action in ("edit-instance:medication:medications", "edit-instance:medication:medications:x",
                   "edit-instance:medication:medications:7", "edit-instance:medication:doses:0"):
        r = post_form(client, path, [("_version", version_of(client, session_id)), ("_step", "check"), ("action", action)])
        assert r.status_code == 400, (action, r.status_code)
    r = post_step(client, session_id, path, "check", [], "edit-instance:missedDoses:missedDoses:0")
    assert r.headers["location"].endswith("?error=1")
    assert state_of(client, session_id)["state"] == before["state"]
    # Change Zinc's dose: the form, in its second medication; Next comes back to the review.
    r = post_step(client, session_id, path, "check", [], "edit-instance:medication:medications:1")
    assert r.headers["location"].endswith("#instance-medications-1")  # the page opens at it
    assert 'id="instance-medications-1"' in page_of(client, path)
    now = state_of(client, session_id)["state"]
    assert now["step"]["identifier"] == "medication" and now["instances"]["medications"]["current"] == 1
    assert "Next brings you back to the review" in page_of(client, path)
    post_step(client, session_id, path, "medication", meds[:4] + [("item:medications:1:dose", "7")] + meds[5:], "next")
    assert state_of(client, session_id)["state"]["step"]["identifier"] == "check"
    assert '<li><span class="review-label">Dose:</span> 7 mg</li>' in page_of(client, path)


def test_the_household_review_changes_one_person(client):
    session_id, path = session_of(client, with_review("household", "summary"))
    post_step(client, session_id, path, "intro", [], "next")
    post_step(client, session_id, path, "howMany", [("answer", "2")], "next")
    for name, age, relation in (("Maria", "41", "0"), ("Lea", "9", "2")):
        post_step(client, session_id, path, "name", [("answer", name)], "next")
        post_step(client, session_id, path, "age", [("answer", age)], "next")
        post_step(client, session_id, path, "relation", [("answer", relation)], "next")
    post_step(client, session_id, path, "school", [("answer", "true")], "next")
    page = page_of(client, path)
    assert "Person 1: Maria — How old are they?" in page and "Person 2: Lea — How old are they?" in page
    assert 'value="edit-instance:age:person:0"' in page and 'value="edit-instance:age:person:1"' in page
    post_step(client, session_id, path, "check", [], "edit-instance:age:person:0")
    state = state_of(client, session_id)["state"]
    assert state["step"]["identifier"] == "age" and state["answer"] == 41
    post_step(client, session_id, path, "age", [("answer", "42")], "next")
    assert state_of(client, session_id)["state"]["step"]["identifier"] == "check"
    assert "42 years" in page_of(client, path)


LOOP = (ROOT / "Tests" / "fixtures" / "fhir-loop.json").read_text(encoding="utf-8")


def test_a_repeating_question_inside_a_repeating_group(client):
    r = client.post("/api/tasks", content=LOOP, headers={"content-type": "application/fhir+json"})
    assert r.status_code == 201, r.text
    made = client.post(f"/api/tasks/{r.json()['identifier']}/sessions").json()
    session_id, path = made["session"], made["resumeUrl"].replace("http://testserver", "")
    page = page_of(client, path)
    # One numbered input for the first note, and Add another answer; no Remove for one input.
    assert 'name="item:meds:0:notes:0"' in page and 'value="add-answer:meds:0:notes"' in page
    assert 'value="remove-answer:meds:0:notes:0"' not in page
    first = [("item:meds:0:name", "Aspirin"), ("item:meds:0:dose", "100"), ("item:meds:0:daily", "true"),
             ("item:meds:0:notes:0", "with food")]
    post_step(client, session_id, path, "meds", first, "add-answer:meds:0:notes")
    page = page_of(client, path)
    assert 'name="item:meds:0:notes:1"' in page and "Notes (2)" in page
    assert 'value="remove-answer:meds:0:notes:1"' in page
    post_step(client, session_id, path, "meds", first + [("item:meds:0:notes:1", "mornings")], "add-answer:meds:0:notes")
    # Three notes (its maxOccurs): no more Add.
    page = page_of(client, path)
    assert 'value="add-answer:meds:0:notes"' not in page and 'name="item:meds:0:notes:2"' in page
    post_step(client, session_id, path, "meds", first + [("item:meds:0:notes:1", "mornings"), ("item:meds:0:notes:2", "at night")],
              "remove-answer:meds:0:notes:1")
    assert state_of(client, session_id)["state"]["answer"]["meds"][0]["notes"] == ["with food", "at night"]
    # Bad actions: nothing changes.
    before = state_of(client, session_id)
    for action in ("remove-answer:meds:0:notes:5", "add-answer:meds:3:notes", "add-answer:meds:0:name",
                   "remove-answer:meds:0:notes", "add-answer:nothing:0:notes"):
        r = post_form(client, path, [("_version", version_of(client, session_id)), ("_step", "meds"), ("action", action)])
        assert r.status_code == 400, (action, r.status_code)
    assert state_of(client, session_id) == before
    # A second repetition with its own note.
    post_step(client, session_id, path, "meds", [], "add:meds")
    kept = first + [("item:meds:0:notes:1", "at night")]
    post_step(client, session_id, path, "meds", kept + [("item:meds:1:name", "Iron"), ("item:meds:1:notes:0", "winter")], "next")
    assert state_of(client, session_id)["state"]["step"]["identifier"] == "summary"
    post_step(client, session_id, path, "summary", [("item:complete", "true")], "next")
    assert state_of(client, session_id)["status"] == "finished"
    qr = client.get(f"/api/sessions/{session_id}/questionnaire-response").json()
    reps = [i for i in qr["item"] if i["linkId"] == "meds"]
    notes = [[a["valueString"] for c in rep["item"] if c["linkId"] == "notes" for a in c["answer"]] for rep in reps]
    assert notes == [["with food", "at night"], ["winter"]]


REPEATING = {"resourceType": "Questionnaire", "id": "repeating-questions", "item": [
    {"linkId": "a", "type": "string", "text": "Allergies", "repeats": True},
    {"linkId": "g", "type": "group", "text": "More", "item": [
        {"linkId": "b", "type": "string", "text": "Other names", "repeats": True}]}]}


def test_repeating_questions_of_their_own(client):
    """A repeating question step and a repeating question on a form (FHIR ``repeats`` on a
    question, outside any repeating group): one numbered input per answer, Add another answer
    and Remove (the block's instance calls); the response has each answer in its one item."""
    r = client.post("/api/tasks", content=json.dumps(REPEATING), headers={"content-type": "application/fhir+json"})
    assert r.status_code == 201, r.text
    made = client.post("/api/tasks/repeating-questions/sessions").json()
    session_id, path = made["session"], made["resumeUrl"].replace("http://testserver", "")
    page = page_of(client, path)
    assert 'name="answer:0"' in page and 'value="add:a"' in page and "Allergies (1)" in page
    post_step(client, session_id, path, "a", [("answer:0", "nuts")], "add:a")
    page = page_of(client, path)
    assert 'name="answer:1"' in page and 'value="remove:a:0"' in page and 'value="remove:a:1"' in page
    post_step(client, session_id, path, "a", [("answer:0", "nuts"), ("answer:1", "pollen")], "next")
    assert state_of(client, session_id)["state"]["step"]["identifier"] == "g"
    post_step(client, session_id, path, "g", [("item:b:0", "x")], "add:b")
    post_step(client, session_id, path, "g", [("item:b:0", "x"), ("item:b:1", "y")], "remove:b:0")
    assert state_of(client, session_id)["state"]["answer"] == {"b": ["y"]}
    assert 'name="item:b:1"' not in page_of(client, path)
    post_step(client, session_id, path, "g", [("item:b:0", "y")], "next")
    assert state_of(client, session_id)["status"] == "finished"
    qr = client.get(f"/api/sessions/{session_id}/questionnaire-response").json()
    assert qr["item"][0]["linkId"] == "a" and [a["valueString"] for a in qr["item"][0]["answer"]] == ["nuts", "pollen"]
    assert [a["valueString"] for a in qr["item"][1]["item"][0]["answer"]] == ["y"]
