"""Review and page steps through the Python binding (docs/task-format.md, "Review steps",
"Page steps"): the review's list with display texts, an edit that changes a branch drops the
answer left off the path, the read-only review of a save and a result, a page's one answer and
its ``page.substep`` results."""
from __future__ import annotations

import json

import pytest

import stepkit
from conftest import REPO

# By the rule: a non-smoker goes from "smoker" straight to "about" (the page). The web's review
# test reads the same file.
HABITS = json.loads((REPO / "Tests" / "fixtures" / "habits.json").read_text(encoding="utf-8"))


def listed(review):
    return {e["step"]: [a["displayText"] for a in e["answers"]] for e in review["steps"]}


def event_steps(state, kind):
    return [e.get("step") for e in state.get("events", []) if e["type"] == kind]


@pytest.fixture
def task():
    return stepkit.Task.from_json(json.dumps(HABITS))


def walk_to_review(task):
    s = task.open()
    s.set_answer(True)
    s.go_forward()
    s.set_answer(10)
    s.go_forward()
    state = s.set_answer({"age": 40, "sport": ["weekly"], "club": "Rovers"})
    assert state["visibleItems"] == ["age", "sport", "club"]
    state = s.go_forward()
    assert state["step"]["identifier"] == "review"
    return s, state


def test_review_lists_the_path_with_display_texts(task):
    _, state = walk_to_review(task)
    assert listed(state["review"]) == {"smoker": ["Yes"], "cigarettes": ["10 per day"], "about": ["40", "Weekly", "Rovers"]}
    about = state["review"]["steps"][2]
    assert [a["identifier"] for a in about["answers"]] == ["about.age", "about.sport", "about.club"]


def test_an_edit_that_changes_the_branch_drops_the_answer_left_off_the_path(task):
    s, _ = walk_to_review(task)
    state = s.review_edit("smoker")
    assert state["step"]["identifier"] == "smoker" and state["returnsToReview"] == "review"
    s.set_answer(False)
    state = s.go_forward()
    assert state["step"]["identifier"] == "review"
    assert "returnsToReview" not in state
    assert list(listed(state["review"])) == ["smoker", "about"]
    assert event_steps(state, "answerDropped") == ["cigarettes"]
    s.go_forward()
    s.go_forward()
    result = s.result
    assert [r["identifier"] for r in result["results"]] == ["smoker", "about", "review", "done"]
    assert [q["identifier"] for q in result["results"][1]["results"]] == ["about.age", "about.sport", "about.club"]
    assert task.verify(result)["verified"] is True
    assert listed(task.review(result)) == {"smoker": ["No"], "about": ["40", "Weekly", "Rovers"]}


def test_the_review_of_a_saved_run_and_bad_input(task):
    s, state = walk_to_review(task)
    saved = s.save()
    review = task.review(saved)
    assert review["source"] == "restorationData" and listed(review) == listed(state["review"])
    before = s.state
    with pytest.raises(stepkit.StateError) as e:
        s.review_edit("done")
    assert e.value.errors[0]["code"] == "notReviewed"
    assert s.state == before
    with pytest.raises(stepkit.InvalidArgumentError):
        task.review("[]")
    with pytest.raises(stepkit.ParseError):
        task.review("{not json")
    with pytest.raises(stepkit.RestorationError):
        task.review({"format": "stepkit-restoration"})
    with pytest.raises(TypeError):
        task.review(3)  # type: ignore[arg-type]


def test_a_page_is_validated_as_one(task):
    s = task.open()
    s.set_answer(False)
    s.go_forward()
    s.set_answer({"age": 40})
    with pytest.raises(stepkit.StateError):
        s.go_forward()
    state = s.set_answer({"age": 40, "sport": ["never"]})
    assert state["visibleItems"] == ["age", "sport"]
    assert s.go_forward()["step"]["identifier"] == "review"


def test_the_terminal_presenter_reviews_and_edits(task, capsys):
    """The CLI's text rendering of a review and an edit from it, typed as a participant would."""
    import io

    from stepkit.presenter import Presenter

    typed = iter([
        "y",              # smoker: yes
        "10",             # cigarettes
        "40", "2",        # the page: age, sport (the second choice: Weekly)
        "Rovers",         # ... and club, which Weekly shows
        "1",              # the review: edit "Do you smoke?"
        "n",              # not a smoker: by the rule, cigarettes leaves the path
        "",               # back at the review: continue
        "",               # completion: finish
    ])
    out = io.StringIO()
    session = task.open()
    final = Presenter(session, out=out, read=lambda prompt: next(typed, None)).run()
    text = out.getvalue()
    assert final["finishReason"] == "completed", text
    # The first review lists the smoker's path; the second, the new one, without cigarettes.
    first, second = text.split("1. Do you smoke?")[1:3]
    assert "Yes" in first and "10 per day" in first and "Sport: Weekly" in first
    assert "No" in second and "A day" not in second and "Sport: Weekly" in second
    assert "going on returns to the review" in text
    assert [r["identifier"] for r in session.result["results"]] == ["smoker", "about", "review", "done"]


def test_the_schemas_take_an_edit_going_on_and_page_results(task):
    """Restoration data saved in the middle of an edit (its reviewReturn) and a result with page
    results validate against schema/."""
    jsonschema = pytest.importorskip("jsonschema")

    def validator(name):
        return jsonschema.Draft202012Validator(json.loads((REPO / "schema" / name).read_text()))

    s, _ = walk_to_review(task)
    s.review_edit("smoker")
    saved = json.loads(s.save())
    assert saved["reviewReturn"] == {"review": "review", "edited": "smoker", "offPath": ["cigarettes", "about"]}
    assert list(validator("restoration.schema.json").iter_errors(saved)) == []
    restored = task.restore(s.save())
    restored.set_answer(False)
    assert restored.go_forward()["step"]["identifier"] == "review"
    assert "reviewReturn" not in json.loads(restored.save())
    assert list(validator("result.schema.json").iter_errors(restored.result)) == []


def test_an_edit_goes_on_after_a_restore_from_the_autosave_journal(task, tmp_path):
    """The autosave file's journal records the edit going on (reviewReturn set, then cleared)."""
    autosave = tmp_path / "run.json"
    s = task.open({"autosave": str(autosave)})
    s.set_answer(True)
    s.go_forward()
    s.set_answer(10)
    s.go_forward()
    s.set_answer({"age": 40, "sport": ["weekly"], "club": "Rovers"})
    s.go_forward()
    s.review_edit("smoker")
    s.close()
    back = task.restore(autosave.read_text(), {"autosave": str(autosave)})
    assert back.state["returnsToReview"] == "review"
    back.set_answer(False)
    assert back.go_forward()["step"]["identifier"] == "review"
    back.close()
    again = task.restore(autosave.read_text())
    assert "returnsToReview" not in again.state
    assert list(listed(again.state["review"])) == ["smoker", "about"]
