"""A repeating section in the browser (issue 31), as a page without JavaScript posts it: each
step's page names its instance ("Child 2 of 2"), the last instance's last step has "Add another"
(going on into the new instance) and a Remove button per instance, and the result has one
object per instance."""

import json

from stepkit_web.walk import post_form

TASK = {
    "identifier": "household",
    "steps": [
        {"type": "question", "identifier": "howMany",
         "answerFormat": {"type": "numeric", "style": "integer", "minimum": 0, "maximum": 20}},
        {"type": "section", "identifier": "child",
         "repeat": {"maxCount": 3, "count": {"answer": "howMany"}, "title": "Child {{index}}: {{name}}"},
         "steps": [
             {"type": "question", "identifier": "name", "answerFormat": {"type": "text"}},
             {"type": "question", "identifier": "age", "optional": True,
              "answerFormat": {"type": "numeric", "style": "integer", "minimum": 0}}]},
        {"type": "completion", "identifier": "done"},
    ],
}


def version_of(client, session_id):
    return str(client.get(f"/api/sessions/{session_id}").json()["version"])


def post(client, session_id, path, step, pairs, action):
    r = post_form(client, path, [("_version", version_of(client, session_id)), ("_step", step)]
                  + pairs + [("action", action)])
    assert r.status_code in (303, 422), r.text[:500]
    return r


def page_of(client, path):
    page = client.get(path)
    assert page.status_code == 200
    return page.text


def test_a_repeating_section_without_javascript(client):
    r = client.post("/api/tasks", content=json.dumps(TASK), headers={"content-type": "application/json"})
    assert r.status_code == 201, r.text
    r = client.post("/api/tasks/household/sessions")
    assert r.status_code == 201, r.text
    session_id, path = r.json()["session"], r.json()["resumeUrl"].replace("http://testserver", "")
    post(client, session_id, path, "howMany", [("answer", "1")], "next")
    text = page_of(client, path)
    assert "(1 of 1)" in text and 'value="add:child"' not in text  # not yet the last step
    post(client, session_id, path, "name", [("answer", "Ann")], "next")
    text = page_of(client, path)
    # The last step of the last instance: Add another; no Remove (the count says 1).
    assert "Child 1: Ann (1 of 1)" in text
    assert 'value="add:child"' in text and 'value="remove:child:0"' not in text
    post(client, session_id, path, "age", [("answer", "7")], "add:child")
    text = page_of(client, path)
    assert "(2 of 2)" in text and 'name="_step" value="name"' in text
    post(client, session_id, path, "name", [("answer", "Ben")], "next")
    text = page_of(client, path)
    assert 'value="remove:child:1"' in text
    post(client, session_id, path, "age", [], "next")
    post(client, session_id, path, "done", [], "next")
    result = client.get(f"/api/sessions/{session_id}/result")
    assert result.status_code == 200, result.text
    block = next(x for x in result.json()["results"] if x["identifier"] == "child")
    assert [[s["results"][0]["answer"] for s in i["results"]] for i in block["instances"]] == [["Ann", 7], ["Ben", None]]
