"""Review and page steps in the participant pages (docs/task-format.md, "Review steps", "Page
steps"): a page's sub-steps posted as one form, its results named page.substep; the review lists
the answers with their display texts and a Change button per step; a change that switches the
branch (by the task's rule a non-smoker skips "cigarettes") drops that answer and comes back."""

from __future__ import annotations

import json

from conftest import ROOT, session_of
from stepkit_web.walk import post_form

# By the task's rule a non-smoker skips "cigarettes"; "club" shows when the sport is weekly (the
# binding's review test reads the same file).
HABITS = json.loads((ROOT / "Tests" / "fixtures" / "habits.json").read_text(encoding="utf-8"))


def test_page_review_and_a_change_that_switches_the_branch(client):
    session_id, path = session_of(client, HABITS)

    def info():
        return client.get(f"/api/sessions/{session_id}").json()

    def post(fields, action="next"):
        now = info()
        base = [("_version", str(now["version"])), ("_step", now["state"]["step"]["identifier"])]
        return post_form(client, path, base + fields + [("action", action)])

    assert post([("answer", "true")]).status_code == 303
    assert post([("answer", "12")]).status_code == 303
    # The page: its sub-steps on one page, validated together (age missing: Next refused; "club",
    # shown once the sport is weekly, is then required too).
    page = client.get(path).text
    assert "Age" in page and "Sport" in page
    refused = post([("item:sport", "1")])
    assert refused.status_code == 303 and refused.headers["location"].endswith("?error=1")
    assert info()["state"]["step"]["identifier"] == "about"
    assert post([("item:age", "40"), ("item:sport", "1"), ("item:club", "Rovers")]).status_code == 303
    assert info()["state"]["step"]["identifier"] == "review"
    review = client.get(path).text
    for shown in ("Do you smoke?", "Yes", "A day", "12 per day", "Sport:", "Weekly"):
        assert shown in review, shown
    assert review.count('value="edit:') == 3
    assert 'aria-label="Change your answer: Do you smoke?"' in review
    # A step the review does not list: refused, nothing changes.
    before = info()
    assert post([], "edit:done").status_code in (303, 422)
    assert info()["state"]["step"]["identifier"] == "review" and info()["state"] == before["state"]
    # Change "Do you smoke?" to no: back at the review without "cigarettes".
    assert post([], "edit:smoker").status_code == 303
    assert info()["state"]["step"]["identifier"] == "smoker"
    assert "Next brings you back to the review" in client.get(path).text
    assert post([("answer", "false")]).status_code == 303
    assert info()["state"]["step"]["identifier"] == "review"
    review = client.get(path).text
    assert "A day" not in review and "12 per day" not in review and "No" in review
    assert post([]).status_code == 303  # the review: Next
    result = client.get(f"/api/sessions/{session_id}/result").json()
    assert [s["identifier"] for s in result["results"]] == ["smoker", "about", "review", "done"]
    assert [q["identifier"] for q in result["results"][1]["results"]] == ["about.age", "about.sport", "about.club"]
