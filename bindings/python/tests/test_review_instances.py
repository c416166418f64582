"""A review step over repeating blocks through the Python binding and the CLI (issue 31): the
review lists every instance's answers, each with its instance and title, in the order the
participant walked them; ``review_edit_instance`` goes back into one chosen instance (a repeating
group's, on the medications example; a repeating section's, on the household example) and the
participant comes back to the review; bad input is refused, changing nothing. The expected texts
come from the examples' titles and the answers typed here."""
from __future__ import annotations

import copy
import json
from typing import Any, Dict, List, Tuple

import stepkit
from conftest import EXAMPLES, load_json, run_cli, unchanged, write_json


def with_review(name: str, before: str) -> Dict[str, Any]:
    """The example `name` with a review step inserted before step `before`."""
    task = copy.deepcopy(json.loads((EXAMPLES / f"{name}.json").read_text(encoding="utf-8")))
    at = next(i for i, s in enumerate(task["steps"]) if s["identifier"] == before)
    task["steps"].insert(at, {"type": "review", "identifier": "check"})
    return task


MEDS = with_review("medications", "done")
HOUSE = with_review("household", "summary")


def typed_on_the_terminal(tmp_path, task: Dict[str, Any], lines: List[str]) -> Tuple[str, Dict[str, Any]]:
    """The CLI presenter run on `task` with `lines` typed: what it printed and the result."""
    output = tmp_path / "out.json"
    proc = run_cli("run", str(write_json(tmp_path / "task.json", task)), "-i", "-o", str(output),
                   input="\n".join(lines) + "\n")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout, load_json(output)


def entry(state: Dict[str, Any], step: str, nth: int = 0) -> Dict[str, Any]:
    return [e for e in state["review"]["steps"] if e["step"] == step][nth]


def shown(e: Dict[str, Any]) -> List[Any]:
    return [(a.get("instanceTitle"), a["label"], a["displayText"]) for a in e["answers"]]


def meds_at_review() -> stepkit.Session:
    s = stepkit.Task.from_json(json.dumps(MEDS)).open()
    s.go_forward()
    s.set_answer(True)
    s.go_forward()
    s.set_answer(2)
    s.go_forward()
    s.add_instance("medications")  # a third, past the count
    s.set_answer({"medications": [
        {"name": "Aspirin", "dose": 100, "frequency": ["daily"]},
        {"name": "Zinc", "dose": 5, "frequency": ["asNeeded"], "reason": "colds"},
        {"name": "Iron", "dose": 20, "frequency": ["weekly"]}], "sideEffects": False})
    s.go_forward()
    s.set_answer(1)
    state = s.go_forward()
    assert state["step"]["identifier"] == "check"
    return s


def test_the_review_lists_each_medication_under_its_title() -> None:
    state = meds_at_review().state
    m1, m2, m3 = "Medication 1: Aspirin", "Medication 2: Zinc", "Medication 3: Iron"
    assert shown(entry(state, "medication")) == [
        (m1, "Name", "Aspirin"), (m1, "Dose", "100 mg"), (m1, "How often?", "Every day"), (m1, "What do you take it for?", None),
        (m2, "Name", "Zinc"), (m2, "Dose", "5 mg"), (m2, "How often?", "Only when needed"), (m2, "What do you take it for?", "colds"),
        (m3, "Name", "Iron"), (m3, "Dose", "20 mg"), (m3, "How often?", "Every week"), (m3, "What do you take it for?", None),
        (None, "Have you noticed side effects?", "No")]
    assert [a.get("instance") for a in entry(state, "medication")["answers"]] == [0] * 4 + [1] * 4 + [2] * 4 + [None]


def test_an_edit_into_the_second_medication_comes_back_to_the_review() -> None:
    s = meds_at_review()
    state = s.review_edit_instance("medication", 1)
    assert state["step"]["identifier"] == "medication" and state["returnsToReview"] == "check"
    assert state["instances"]["medications"]["current"] == 1
    restored = s.task.restore(s.save())
    assert restored.state == s.state
    s.set_answer({"medications": [{}, {"dose": 10}]})
    state = s.go_forward()
    assert state["step"]["identifier"] == "check"  # missed doses passed over: still answered
    assert [a["displayText"] for a in entry(state, "medication")["answers"] if a["label"] == "Dose"] == ["100 mg", "10 mg", "20 mg"]
    s.go_forward()
    group = next(r for r in s.result["results"] if r["identifier"] == "medication")["results"][0]
    assert [i["results"][1]["answer"] for i in group["instances"]] == [100, 10, 20]


def test_the_household_review_lists_each_person_and_edits_one() -> None:
    s = stepkit.Task.from_json(json.dumps(HOUSE)).open()
    s.go_forward()
    for answer in (2, "Maria", 41, ["self"], "Lea", 9, ["child"], True):
        s.set_answer(answer)
        state = s.go_forward()
    assert state["step"]["identifier"] == "check"
    listed = [(e["step"], e.get("instance"), e.get("instanceTitle")) for e in state["review"]["steps"]]
    maria, lea = "Person 1: Maria", "Person 2: Lea"
    assert listed == [("howMany", None, None), ("name", 0, maria), ("age", 0, maria), ("relation", 0, maria),
                      ("name", 1, lea), ("age", 1, lea), ("relation", 1, lea), ("school", 1, lea)]
    assert all(e["section"] == "person" for e in state["review"]["steps"][1:])
    state = s.review_edit_instance("name", 0, "person")
    assert state["answer"] == "Maria" and state["instances"]["person"]["current"] == 0
    s.set_answer("Mia")
    state = s.go_forward()
    assert state["step"]["identifier"] == "check"
    assert entry(state, "name", 0)["instanceTitle"] == "Person 1: Mia" and entry(state, "name", 1)["instanceTitle"] == lea


def test_bad_edits_into_instances_change_nothing() -> None:
    s = meds_at_review()
    unchanged(s, stepkit.InvalidArgumentError, "instanceOutOfRange", lambda: s.review_edit_instance("medication", 3))
    unchanged(s, stepkit.InvalidArgumentError, "instanceOutOfRange", lambda: s.review_edit_instance("medication", -1))
    unchanged(s, stepkit.InvalidArgumentError, "unknownBlock", lambda: s.review_edit_instance("medication", 0, "doses"))
    unchanged(s, stepkit.StateError, "noRepeatingBlock", lambda: s.review_edit_instance("missedDoses", 0))
    unchanged(s, stepkit.StateError, "notReviewed", lambda: s.review_edit_instance("done", 0))
    unchanged(s, stepkit.StateError, "notReviewed", lambda: s.review_edit_instance("nowhere", 0))
    for bad in ((None, 0), ("medication", "1"), ("medication", True)):
        try:
            s.review_edit_instance(*bad)  # type: ignore[arg-type]
        except TypeError:
            pass
        else:
            raise AssertionError(f"{bad} was taken")
    h = stepkit.Task.from_json(json.dumps(HOUSE)).open()
    h.go_forward()
    for answer in (1, "Maria", 41, ["self"]):
        h.set_answer(answer)
        h.go_forward()
    assert h.state["step"]["identifier"] == "check"
    unchanged(h, stepkit.InvalidArgumentError, "instanceOutOfRange", lambda: h.review_edit_instance("age", 1))
    unchanged(h, stepkit.StateError, "notReviewed", lambda: h.review_edit_instance("school", 0))  # an adult: passed over
    h.go_backward()
    unchanged(h, stepkit.StateError, "notReview", lambda: h.review_edit_instance("age", 0))


def test_the_cli_lists_each_instance_and_edits_the_one_picked(tmp_path) -> None:
    """On a terminal: the review lists each medication under its title (numbered 3.1, 3.2 under
    the form, step 3); "3.2" asks the second medication again (Enter keeps an answer), then the
    rest of the form, and forward comes back to the review."""
    stdout, result = typed_on_the_terminal(tmp_path, MEDS, [
        "",  # intro
        "y",  # takes medication
        "2",  # how many
        "Aspirin", "100", "1", "",  # medication 1
        "Zinc", "5", "3", "colds",  # medication 2
        "",  # done with the list
        "n",  # side effects
        "1",  # missed doses
        "3.2",  # the review: change medication 2
        "", "7", "", "",  # its name kept, dose 7, frequency and reason kept
        "",  # done with the list
        "",  # side effects kept
        "",  # the review again: continue
        "",  # completion
    ])
    assert "     3.1 Medication 1: Aspirin" in stdout and "     3.2 Medication 2: Zinc" in stdout
    assert "        Dose: 5 mg" in stdout and "        Dose: 7 mg" in stdout
    # The edit asked only medication 2.
    after = stdout.split("change its answer] ", 1)[1]
    assert "── Medication 2: Zinc" in after and "── Medication 1: Aspirin" not in after.split("change its answer] ")[0]
    group = next(r for r in result["results"] if r["identifier"] == "medication")["results"][0]
    assert [{q["identifier"]: q["answer"] for q in i["results"]}["dose"] for i in group["instances"]] == [100, 7]


def test_the_cli_edits_one_person_of_a_repeating_section(tmp_path) -> None:
    """A repeating section's steps are listed once per person, headed by the person's title; the
    number of Maria's age goes back to her age alone, and forward returns to the review."""
    stdout, result = typed_on_the_terminal(tmp_path, HOUSE, [
        "",  # intro
        "2",  # household size
        "Maria", "41", "1",  # person 1 (an adult: no school question)
        "Lea", "9", "3", "y",  # person 2
        "",  # the last person's last step: done (no one added)
        "3",  # the review: Maria's age (1 household size, 2 her name, 3 her age)
        "42",
        "",  # the review again: continue
        "",  # the summary
        "",  # completion
    ])
    assert "  3. Person 1: Maria — How old are they?" in stdout
    assert "  6. Person 2: Lea — How old are they?" in stdout
    assert "     42 years" in stdout
    block = next(r for r in result["results"] if r["identifier"] == "person")
    ages = [next(s for s in i["results"] if s["identifier"] == "age")["results"][0]["answer"] for i in block["instances"]]
    assert ages == [42, 9]
