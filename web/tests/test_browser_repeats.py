"""Repeating groups in Chromium, as a participant uses them with the mouse (issue 31): FHIR forms
with repeating groups walked with several repetitions, their QuestionnaireResponses exported and
checked against R4's nesting; a repeating question inside a repeating group (FHIR ``repeats`` on
a question in a repeating group) with its answers added and removed without JavaScript; and a
review page that changes one medication of several.

Expectations come from the forms and R4, not from the engine (R4 QuestionnaireResponse.item: a
repeating group is several items with its linkId side by side, in order, each holding its own
answers; a question repeats only its ``answer`` entries, in one item; a group has no answer).
Forms: the Android FHIR SDK catalog's repeated group and LHC-Forms' min/max-occurs form from
STEPKIT_FHIR_FORMS (default ``<repo>/../shared/fhir/q``; those tests skip when it is absent), and
the loop scenario, Tests/fixtures/fhir-loop.json (written from R4 and SDC)."""

from __future__ import annotations

import copy
import importlib.util
import json
import os
from pathlib import Path
from typing import Any, Dict, List

import httpx
import pytest

from conftest import AUTH, EXAMPLES, ROOT
from live import click, legends, live_service


def _binding_test_module(name: str) -> Any:
    """A helper module of the binding's tests (bindings/python/tests), loaded from its file."""
    spec = importlib.util.spec_from_file_location(name, ROOT / "bindings" / "python" / "tests" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# R4's nesting rules for a response, as the binding's repetition tests check them.
check_r4_shape = _binding_test_module("r4_response").check_r4_shape
FORMS = Path(os.environ.get("STEPKIT_FHIR_FORMS", ROOT.parent / "shared" / "fhir" / "q"))
FHIR_JSON = {"content-type": "application/fhir+json"}
api = httpx.Client(headers={**AUTH, "content-type": "application/json"}, timeout=60)
WCAG = {"runOnly": {"type": "tag", "values": ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]},
        "resultTypes": ["violations"]}


def published(name: str, identifier: str) -> Dict[str, Any]:
    """A published form as it is, given an id so that each registers as its own task."""
    path = FORMS / name
    if not path.exists():
        pytest.skip(f"the published FHIR forms are not here: {FORMS} is absent (set STEPKIT_FHIR_FORMS)")
    form = json.loads(path.read_text(encoding="utf-8"))
    form["id"] = identifier
    return form


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with live_service(tmp_path_factory, "repeats") as live:
        yield live


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1280, "height": 800}, locale="en-US")
    yield context.new_page()
    context.close()


def start(server, definition: Dict[str, Any], fhir: bool) -> tuple:
    r = api.post(server.url + "/api/tasks", content=json.dumps(definition), headers=FHIR_JSON if fhir else None)
    assert r.status_code == 201, r.text
    made = api.post(f"{server.url}/api/tasks/{r.json()['identifier']}/sessions").json()
    return made["session"], made["resumeUrl"]


def state(server, sid):
    return api.get(f"{server.url}/api/sessions/{sid}").json()


def response_of(server, sid):
    r = api.get(f"{server.url}/api/sessions/{sid}/questionnaire-response")
    assert r.status_code == 200, r.text
    return r.json()


def children(item: Dict[str, Any], link: str) -> List[Dict[str, Any]]:
    return [c for c in item.get("item", []) if c["linkId"] == link]


LOOP = json.loads((ROOT / "Tests" / "fixtures" / "fhir-loop.json").read_text(encoding="utf-8"))


def test_a_repeating_question_inside_a_repeating_group(server, page):
    """The loop scenario: "notes" repeats (maxOccurs 3) inside each repetition of "meds". Its
    answers get one numbered input each; Add another answer and Remove are buttons; each
    repetition is its own fieldset. The response nests each repetition's notes in its item."""
    from axe_playwright_python.sync_playwright import Axe

    sid, url = start(server, LOOP, fhir=True)
    page.goto(url)
    assert legends(page) == ["Medication 1"]
    assert page.query_selector('button[value="remove-answer:meds:0:notes:0"]') is None  # one input: nothing to remove
    page.fill('[name="item:meds:0:name"]', "Aspirin")
    page.fill('[name="item:meds:0:dose"]', "100")
    page.check('input[type=radio][name="item:meds:0:daily"][value="true"]')
    page.fill('[name="item:meds:0:notes:0"]', "with food")
    click(page, "add-answer:meds:0:notes")
    # What was typed is kept; a second input, labelled with its number.
    assert page.input_value('[name="item:meds:0:notes:0"]') == "with food"
    assert page.get_by_label("Notes (2) (optional)", exact=True).count() == 1
    page.fill('[name="item:meds:0:notes:1"]', "mornings")
    click(page, "add-answer:meds:0:notes")
    page.fill('[name="item:meds:0:notes:2"]', "at night")
    # maxOccurs 3: no fourth.
    assert page.query_selector('button[value="add-answer:meds:0:notes"]') is None
    assert Axe().run(page, options=WCAG).violations_count == 0
    click(page, "remove-answer:meds:0:notes:1")
    assert [page.input_value(f'[name="item:meds:0:notes:{n}"]') for n in range(2)] == ["with food", "at night"]
    assert page.query_selector('[name="item:meds:0:notes:2"]') is None
    # A second and a third repetition, each with its own notes.
    click(page, "add:meds")
    click(page, "add:meds")
    assert legends(page) == ["Medication 1", "Medication 2", "Medication 3"]
    page.fill('[name="item:meds:1:name"]', "Ibuprofen")
    page.fill('[name="item:meds:1:dose"]', "200")
    page.check('input[type=radio][name="item:meds:1:daily"][value="false"]')
    page.fill('[name="item:meds:2:name"]', "Vitamin D")
    page.fill('[name="item:meds:2:notes:0"]', "winter")
    click(page, "add-answer:meds:2:notes")
    page.fill('[name="item:meds:2:notes:1"]', "with milk")
    click(page, "next")
    assert state(server, sid)["state"]["step"]["identifier"] == "summary"
    page.check('input[type=radio][name="item:complete"][value="true"]')
    click(page, "next")
    assert state(server, sid)["status"] == "finished"
    response = response_of(server, sid)
    check_r4_shape(response, LOOP)
    reps = [i for i in response["item"] if i["linkId"] == "meds"]
    assert len(reps) == 3
    assert [[a["valueString"] for c in children(r, "name") for a in c["answer"]] for r in reps] == [["Aspirin"], ["Ibuprofen"], ["Vitamin D"]]
    assert [[a["valueString"] for c in children(r, "notes") for a in c["answer"]] for r in reps] == [
        ["with food", "at night"], [], ["winter", "with milk"]]
    assert response["status"] == "completed"


def test_lhc_min_max_occurs_walks_three_repetitions(server, page):
    """LHC-Forms' min/max-occurs form: the group starts with its minOccurs (2) repetitions and
    takes one more (maxOccurs 3: then no Add); each repetition's answers are its own."""
    form = published("lhc_min_max_occurs.json", "lhc-min-max-occurs")
    sid, url = start(server, form, fhir=True)
    page.goto(url)
    assert len(legends(page)) == 2
    add = [b.get_attribute("value") for b in page.query_selector_all('button[name=action][value^="add:"]')]
    assert len(add) == 1
    click(page, add[0])
    assert len(legends(page)) == 3 and page.query_selector('button[name=action][value^="add:"]') is None
    fruits = [["0", "1"], ["2", "3"], ["4", "0"]]  # by position: Apple, Orange, Banana, Pear, Peach
    for k in range(3):
        for link in ("1.1", "1.3"):
            for v in fruits[k]:
                page.check(f'input[type=checkbox][name="item:1:{k}:{link}"][value="{v}"]')
        page.fill(f'[name="item:1:{k}:1.2"]', f"note {k + 1}")
    click(page, "next")
    assert state(server, sid)["status"] == "finished", state(server, sid)["state"].get("problems")
    response = response_of(server, sid)
    check_r4_shape(response, form)
    reps = [i for i in response["item"] if i["linkId"] == "1"]
    names = ["Apple", "Orange", "Banana", "Pear", "Peach"]

    def picked(rep, link):
        return [a.get("valueString") or (a.get("valueCoding") or {}).get("code") or (a.get("valueCoding") or {}).get("display")
                for c in children(rep, link) for a in c["answer"]]

    assert [picked(r, "1.1") for r in reps] == [[names[int(v)] for v in f] for f in fruits] or \
        [sorted(picked(r, "1.1")) for r in reps] == [sorted(names[int(v)] for v in f) for f in fruits]
    assert [sorted(picked(r, "1.3")) for r in reps] == [sorted(names[int(v)] for v in f) for f in fruits]
    assert [[a["valueString"] for c in children(r, "1.2") for a in c["answer"]] for r in reps] == [["note 1"], ["note 2"], ["note 3"]]


def test_android_repeated_group_walks_three_repetitions(server, page):
    """The Android FHIR SDK catalog's repeated group (no repetition to start: minOccurs 0),
    three added, each with its date and dropdown answer, then the middle one removed."""
    form = published("afhir_repeated_group.json", "afhir-repeated-group")
    sid, url = start(server, form, fhir=True)
    page.goto(url)
    assert legends(page) == []
    for _ in range(3):
        click(page, "add:1")
    assert len(legends(page)) == 3
    for k, (day, choice) in enumerate((("2024-01-01", "0"), ("2024-01-02", "1"), ("2024-01-03", "2"))):
        page.fill(f'[name="item:1:{k}:1-1"]', day)
        page.select_option(f'[name="item:1:{k}:1-2"]', choice)
    click(page, "remove:1:1")
    assert len(legends(page)) == 2
    assert page.input_value('[name="item:1:1:1-1"]') == "2024-01-03"
    click(page, "next")
    assert state(server, sid)["status"] == "finished"
    response = response_of(server, sid)
    check_r4_shape(response, form)
    reps = [i for i in response["item"] if i["linkId"] == "1"]
    assert [[a["valueDate"] for c in children(r, "1-1") for a in c["answer"]] for r in reps] == [["2024-01-01"], ["2024-01-03"]]
    assert [[a["valueCoding"]["code"] for c in children(r, "1-2") for a in c["answer"]] for r in reps] == [["answer-a"], ["answer-c"]]


def test_the_review_page_changes_one_medication(server, page):
    """The medications example with a review step: the review lists each medication under its
    title, each with a Change button; Change on the second goes to the form in that
    medication, and Next comes straight back to the review with the new dose."""
    task = copy.deepcopy(json.loads((EXAMPLES / "medications.json").read_text(encoding="utf-8")))
    task["identifier"] = "medications-review"
    task["steps"].insert(len(task["steps"]) - 1, {"type": "review", "identifier": "check"})
    sid, url = start(server, task, fhir=False)
    page.goto(url)
    click(page, "next")
    page.check('input[type=radio][name="answer"][value="true"]')
    click(page, "next")
    page.fill('[name="answer"]', "2")
    click(page, "next")
    for k, (name, dose, frequency) in enumerate((("Aspirin", 100, 0), ("Zinc", 5, 2))):
        page.fill(f'[name="item:medications:{k}:name"]', name)
        page.fill(f'[name="item:medications:{k}:dose"]', str(dose))
        page.check(f'input[type=radio][name="item:medications:{k}:frequency"][value="{frequency}"]')
    page.check('input[type=radio][name="item:sideEffects"][value="false"]')
    click(page, "next")
    page.fill('[name="answer"]', "1")
    click(page, "next")
    assert state(server, sid)["state"]["step"]["identifier"] == "check"
    titles = [el.inner_text().strip() for el in page.query_selector_all(".review-instance-title")]
    assert titles == ["Medication 1: Aspirin", "Medication 2: Zinc"]
    from axe_playwright_python.sync_playwright import Axe

    assert Axe().run(page, options=WCAG).violations_count == 0
    with page.expect_navigation():
        page.get_by_role("button", name="Change your answers: Medication 2: Zinc").click()
    now = state(server, sid)["state"]
    assert now["step"]["identifier"] == "medication" and now["instances"]["medications"]["current"] == 1
    page.fill('[name="item:medications:1:dose"]', "7")
    click(page, "next")
    assert state(server, sid)["state"]["step"]["identifier"] == "check"
    doses = [el.inner_text().strip() for el in page.query_selector_all('.review-instance li') if "Dose" in el.inner_text()]
    assert doses == ["Dose: 100 mg", "Dose: 7 mg"]


def test_repeating_questions_of_their_own(server, page):
    """A repeating question step and a repeating question on a form (FHIR ``repeats`` outside
    any repeating group): answers typed, added and removed with the buttons."""
    questionnaire = {"resourceType": "Questionnaire", "id": "repeating-questions-browser", "item": [
        {"linkId": "a", "type": "string", "text": "Allergies", "repeats": True},
        {"linkId": "g", "type": "group", "text": "More", "item": [
            {"linkId": "b", "type": "string", "text": "Other names", "repeats": True}]}]}
    sid, url = start(server, questionnaire, fhir=True)
    page.goto(url)
    page.fill('[name="answer:0"]', "nuts")
    click(page, "add:a")
    page.fill('[name="answer:1"]', "pollen")
    click(page, "add:a")
    page.fill('[name="answer:2"]', "dust")
    click(page, "remove:a:1")
    assert [page.input_value(f'[name="answer:{n}"]') for n in range(2)] == ["nuts", "dust"]
    click(page, "next")
    page.fill('[name="item:b:0"]', "Bee")
    click(page, "add:b")
    page.fill('[name="item:b:1"]', "Bea")
    click(page, "next")
    assert state(server, sid)["status"] == "finished"
    response = response_of(server, sid)
    check_r4_shape(response, questionnaire)
    assert [a["valueString"] for a in response["item"][0]["answer"]] == ["nuts", "dust"]
    assert [a["valueString"] for a in response["item"][1]["item"][0]["answer"]] == ["Bee", "Bea"]
