"""A repeating section in the browser (issue 31), as a page without JavaScript posts it: each
step's page names its instance ("Child 2 of 2"), the last instance's last step has "Add another"
(going on into the new instance) and a Remove button per instance, and the result has one
object per instance."""

import json

from conftest import ROOT, page_of, post_step, session_of

TASK = json.loads((ROOT / "Tests" / "fixtures" / "household.json").read_text(encoding="utf-8"))


def test_a_repeating_section_without_javascript(client):
    session_id, path = session_of(client, TASK)
    post_step(client, session_id, path, "howMany", [("answer", "1")], "next")
    text = page_of(client, path)
    assert "(1 of 1)" in text and 'value="add:child"' not in text  # not yet the last step
    post_step(client, session_id, path, "name", [("answer", "Ann")], "next")
    text = page_of(client, path)
    # The last step of the last instance: Add another; no Remove (the count says 1).
    assert "Child 1: Ann (1 of 1)" in text
    assert 'value="add:child"' in text and 'value="remove:child:0"' not in text
    post_step(client, session_id, path, "age", [("answer", "7")], "add:child")
    text = page_of(client, path)
    assert "(2 of 2)" in text and 'name="_step" value="name"' in text
    post_step(client, session_id, path, "name", [("answer", "Ben")], "next")
    text = page_of(client, path)
    assert 'value="remove:child:1"' in text
    post_step(client, session_id, path, "age", [], "next")
    post_step(client, session_id, path, "done", [], "next")
    result = client.get(f"/api/sessions/{session_id}/result")
    assert result.status_code == 200, result.text
    block = next(x for x in result.json()["results"] if x["identifier"] == "child")
    assert [[s["results"][0]["answer"] for s in i["results"]] for i in block["instances"]] == [["Ann", 7], ["Ben", None]]
