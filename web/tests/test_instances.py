"""A repeating group in the browser (issue 31), as a page without JavaScript posts it: each
instance a fieldset labelled with its title, "Add another" and "Remove" as submit buttons that
keep what the page holds, and the result one object per instance."""

import re

from conftest import new_session, page_of, post_step, version_of
from stepkit_web.walk import post_form


def test_add_and_remove_instances_without_javascript(client):
    session_id, path = new_session(client, "medications")
    post_step(client, session_id, path, "intro", [], "next")
    post_step(client, session_id, path, "takesMedication", [("answer", "true")], "next")
    post_step(client, session_id, path, "howMany", [("answer", "1")], "next")
    text = page_of(client, path)
    # One instance (the count), labelled, with no Remove (the count says 1) and an Add button.
    assert text.count('<fieldset class="instance">') == 1
    assert "<legend>Medication 1: </legend>" in text or "<legend>Medication 1</legend>" in text
    assert 'value="add:medications"' in text and 'value="remove:medications:0"' not in text
    post_step(client, session_id, path, "medication", [("item:medications:0:name", "Aspirin")], "add:medications")
    text = page_of(client, path)
    assert text.count('<fieldset class="instance">') == 2
    assert "<legend>Medication 1: Aspirin</legend>" in text  # the typed name was kept
    assert 'value="remove:medications:1"' in text
    post_step(client, session_id, path, "medication", [("item:medications:0:name", "Aspirin"),
                                                  ("item:medications:1:name", "Zinc")], "add:medications")
    state = client.get(f"/api/sessions/{session_id}").json()["state"]
    assert state["instances"]["medications"]["count"] == 3
    # A browser posts every field of the page with the button.
    post_step(client, session_id, path, "medication", [("item:medications:0:name", "Aspirin"),
                                                  ("item:medications:1:name", "Zinc"),
                                                  ("item:medications:2:name", "")], "remove:medications:1")
    state = client.get(f"/api/sessions/{session_id}").json()["state"]
    assert state["instances"]["medications"]["count"] == 2
    assert [i.get("name") for i in state["answer"]["medications"]] == ["Aspirin", None]
    # A malformed or out-of-range action is refused and changes nothing.
    before = client.get(f"/api/sessions/{session_id}").json()["state"]
    r = post_form(client, path, [("_version", version_of(client, session_id)), ("_step", "medication"),
                                 ("action", "remove:medications:x")])
    assert r.status_code == 400
    r = post_form(client, path, [("_version", version_of(client, session_id)), ("_step", "medication"),
                                 ("action", "remove:medications:9")])
    assert r.status_code == 400
    assert client.get(f"/api/sessions/{session_id}").json()["state"] == before
    # Both answered: Next goes on, and the result nests one object per instance.
    fields = []
    for k, (name, dose, often) in enumerate([("Aspirin", "100", "0"), ("Zinc", "5", "2")]):
        fields += [(f"item:medications:{k}:name", name), (f"item:medications:{k}:dose", dose),
                   (f"item:medications:{k}:frequency", often)]
    post_step(client, session_id, path, "medication", fields + [("item:sideEffects", "false")], "next")
    state = client.get(f"/api/sessions/{session_id}").json()["state"]
    assert state["step"]["identifier"] == "missedDoses", state["problems"]
    assert re.search(r"missedDoses", state["step"]["identifier"])
