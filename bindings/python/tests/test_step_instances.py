"""Repeating sections from Python (issue 31): a block of steps walked once per instance —
forward through each, back into an earlier one with its answers kept, add / remove / enter,
the state's "instances" and progress, the result nested per instance, exact save and restore,
and each bad input (past maxCount, below the count, an index out of range, an instance not
reached, a count out of bounds, restoration data past the bounds) refused, changing nothing."""

from __future__ import annotations

import hashlib
import json

import pytest

import stepkit
from conftest import REPO, unchanged

# How many children (a question), a repeating section of two steps asked once per child, a
# completion step: shared with the web service's tests.
TASK = json.loads((REPO / "Tests" / "fixtures" / "household.json").read_text(encoding="utf-8"))


def child(state):
    return state["instances"]["child"]


def step(session, answer=None):
    if answer is not None:
        session.set_answer(answer)
    return session.go_forward()


def test_each_instance_is_walked_and_the_result_nests_them():
    session = stepkit.Task.from_json(TASK).open()
    state = step(session, 2)
    assert state["step"]["identifier"] == "name"
    assert {k: child(state)[k] for k in ("count", "current", "expectedCount", "canAdd", "canRemove", "steps")} == {
        "count": 2, "current": 0, "expectedCount": 2, "canAdd": True, "canRemove": False, "steps": ["name", "age"]}
    # Progress counts each instance's steps: 2 shown, age + the second child's 2 + done to come.
    assert (state["progress"]["current"], state["progress"]["total"]) == (2, 6)
    step(session, "Ann")
    state = step(session, 7)
    assert state["step"]["identifier"] == "name" and child(state)["current"] == 1
    assert state["answer"] is None
    session.set_answer("Ben")
    state = session.go_backward()
    assert state["step"]["identifier"] == "age" and child(state)["current"] == 0 and state["answer"] == 7
    state = session.go_forward()
    assert state["answer"] == "Ben"
    assert child(state)["titles"] == ["Child 1: Ann", "Child 2: Ben"]
    step(session)
    assert step(session)["step"]["identifier"] == "done"
    step(session)
    block = session.result["results"][1]
    assert block["identifier"] == "child"
    assert [(i["index"], [r["results"][0]["answer"] for r in i["results"]]) for i in block["instances"]] == [
        (0, ["Ann", 7]), (1, ["Ben", None])]


def test_add_remove_enter_and_bad_input():
    session = stepkit.Task.from_json(TASK).open()
    unchanged(session, stepkit.StateError, "noRepeatingBlock", lambda: session.add_instance())
    unchanged(session, stepkit.AnswerError, "countOutOfRange", lambda: session.set_answer(4))
    step(session, 1)
    step(session, "Ann")
    unchanged(session, stepkit.StateError, "tooFewInstances", lambda: session.remove_instance(0))
    unchanged(session, stepkit.InvalidArgumentError, "instanceOutOfRange", lambda: session.remove_instance(7, "child"))
    unchanged(session, stepkit.InvalidArgumentError, "instanceOutOfRange", lambda: session.enter_instance(7))
    unchanged(session, stepkit.InvalidArgumentError, "unknownBlock", lambda: session.add_instance("medication"))
    session.add_instance()
    state = session.add_instance("child")
    assert child(state)["count"] == 3 and child(state)["current"] == 0 and child(state)["overCount"] == 2
    unchanged(session, stepkit.StateError, "tooManyInstances", lambda: session.add_instance())
    unchanged(session, stepkit.StateError, "instanceNotReached", lambda: session.enter_instance(2))
    step(session)
    step(session, "Ben")
    step(session)
    session.set_answer("Cy")
    state = session.remove_instance(1)
    assert child(state)["count"] == 2 and child(state)["current"] == 1 and state["answer"] == "Cy"
    state = session.enter_instance(0, "child")
    assert state["step"]["identifier"] == "name" and state["answer"] == "Ann"
    saved = session.save()
    restored = session.task.restore(saved)
    assert restored.save() == saved
    assert restored.state["instances"] == session.state["instances"]


def resign(text: str) -> str:
    """Restoration data edited by hand and signed again as the engine signs it (SHA-256 of the
    text before the integrity member, closed)."""
    start = text.rindex(',"integrity":')
    body = text[:start]
    digest = hashlib.sha256((body + "}").encode()).hexdigest()
    return body + ',"integrity":{"algorithm":"SHA-256","digest":"' + digest + '"}}'


def test_restoration_past_the_bounds_is_refused():
    task = stepkit.Task.from_json(TASK)
    session = task.open()
    step(session, 2)
    step(session, "Ann")
    step(session)
    session.set_answer("Ben")
    saved = session.save()
    assert task.restore(resign(saved)).save() == saved
    document = json.loads(saved)
    assert document["stepInstances"]["child"]["made"] == 2
    made = '"stepInstances":{"child":{"made":2,'
    assert made in saved
    with pytest.raises(stepkit.RestorationError):
        task.restore(resign(saved.replace(made, '"stepInstances":{"child":{"made":9,')))
    visit = '"arrival":[],"instance":1}'
    assert visit in saved
    with pytest.raises(stepkit.RestorationError):
        task.restore(resign(saved.replace(visit, '"arrival":[],"instance":5}')))


def test_cli_add_remove_done(tmp_path):
    """The CLI presenter on a repeating section: each step under its instance's title, then on
    the last instance's last step "a" adds another (and goes on into it), "r N" removes one (its
    answers go), Enter is done; the result has one object per instance, in order."""
    from conftest import load_json, run_cli, write_json

    task = write_json(tmp_path / "household.json", TASK)
    output = tmp_path / "out.json"
    typed = "\n".join([
        "2",            # how many children
        "Ann", "7",     # child 1
        "Ben", "",      # child 2, age skipped
        "x",            # not a menu choice: asked again
        "a",            # add another
        "Cy", "3",      # child 3
        "r 2",          # remove Ben: back on Cy's age (now the second child)
        "",             # keep Cy's age
        "",             # done
        "",             # completion
    ]) + "\n"
    proc = run_cli("run", str(task), "-i", "-o", str(output), input=typed)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "[Child 2: Ben — 2 of 2]" in proc.stdout
    assert "Type a, r N or press Enter." in proc.stdout
    assert "Removed number 2; 2 left." in proc.stdout
    result = load_json(output)
    block = next(r for r in result["results"] if r["identifier"] == "child")
    assert [[r["results"][0]["answer"] for r in i["results"]] for i in block["instances"]] == [["Ann", 7], ["Cy", 3]]
