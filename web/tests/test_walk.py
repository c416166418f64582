"""Every example task walked through the participant pages (HTTP, as a browser without
JavaScript posts them) gives the terminal presenter's result."""

import pytest

from conftest import WEB_TASKS, answers, closing_title, new_session, reference_result
from stepkit_web.walk import strip_volatile, walk_http


@pytest.mark.parametrize("name", WEB_TASKS)
def test_walk_equals_cli(client, name, tmp_path):
    session_id, path = new_session(client, name)
    result = walk_http(client, "", session_id, path, answers(name))
    assert strip_volatile(result) == strip_volatile(reference_result(name, tmp_path))
    info = client.get(f"/api/sessions/{session_id}").json()
    assert info["status"] == "finished" and info["finishReason"] == "completed"
    # A finished session keeps its result, and its page says so.
    page = client.get(path)
    assert page.status_code == 200 and f"<h1>{closing_title(name)}</h1>" in page.text
