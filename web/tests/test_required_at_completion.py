"""A FHIR Questionnaire's required items in the participant pages (issue 29, item 1). FHIR R4: a
required item must be answered in a *completed* response; SDC: the status shall not become
``completed`` while one is missing, and a participant may move freely. So every page can be left
unanswered, and the page that would finish lists every missing answer."""

from __future__ import annotations

import json

from stepkit_web.walk import post_form

FHIR_HEADERS = {"content-type": "application/fhir+json"}
QUESTIONNAIRE = {
    "resourceType": "Questionnaire", "id": "required-web", "status": "active", "item": [
        {"linkId": "first", "text": "First name", "type": "string", "required": True},
        {"linkId": "group", "text": "About you", "type": "group", "item": [
            {"linkId": "age", "text": "Age", "type": "integer", "required": True},
            {"linkId": "note", "text": "Note", "type": "string"}]},
        {"linkId": "last", "text": "Anything else", "type": "string", "required": True}]}


def test_pages_can_be_left_and_finishing_lists_every_missing_answer(client):
    r = client.post("/api/tasks", content=json.dumps(QUESTIONNAIRE), headers=FHIR_HEADERS)
    assert r.status_code == 201, r.text
    made = client.post("/api/tasks/required-web/sessions").json()
    path = made["resumeUrl"].replace("http://testserver", "")

    def post(fields):
        info = client.get(f"/api/sessions/{made['session']}").json()
        base = [("_version", str(info["version"])), ("_step", info["state"]["step"]["identifier"])]
        return post_form(client, path, base + fields + [("action", "next")])

    assert post([]).status_code == 303  # "first" left unanswered
    assert post([]).status_code == 303  # the group's form too
    # The last page says what is missing before Done is pressed (the missing answers of other
    # pages; this page's own question shows as usual).
    ahead = client.get(path).text
    assert "Before you finish:" in ahead
    assert ahead.count("to finish.") == 2, ahead
    refused = post([("answer", "no")])
    assert refused.status_code == 303 and refused.headers["location"].endswith("?error=1")
    shown = client.get(refused.headers["location"].replace("http://testserver", ""))
    assert shown.status_code == 200
    page = shown.text
    assert 'Answer &#34;First name&#34; to finish.' in page or 'Answer "First name" to finish.' in page
    assert 'Answer &#34;Age&#34; to finish.' in page or 'Answer "Age" to finish.' in page
    # Each is listed once, in the summary: neither belongs to this page's question.
    assert page.count("to finish.") == 2, page
    info = client.get(f"/api/sessions/{made['session']}").json()
    assert info["status"] != "finished"
    response = client.get(f"/api/sessions/{made['session']}/questionnaire-response").json()
    assert response["status"] == "in-progress"
