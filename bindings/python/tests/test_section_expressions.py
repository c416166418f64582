"""Expressions over repeating sections of steps from Python (issue 31): the household example
(examples/tasks/household.json, a section "person" asked once per member) walked through the
binding and through the CLI with its answers file, which answers each instance on its own; the
calculations over the section shown in the state and the result; a plain read of the section's
step from outside refused. Expected values are worked out by hand from the answers."""

from __future__ import annotations

import json

import pytest

import stepkit
from conftest import EXAMPLES, load_json, run_cli, write_json

HOUSEHOLD = EXAMPLES / "household.json"
ANSWERS = EXAMPLES / "household.answers.json"


def forward(session, answer=None):
    if answer is not None:
        session.set_answer(answer)
    return session.go_forward()


def test_calculations_over_the_section_in_the_state():
    with stepkit.Task.from_file(HOUSEHOLD) as task, task.open() as session:
        forward(session)
        state = forward(session, 3)
        assert state["step"]["identifier"] == "name" and state["instances"]["person"]["count"] == 3
        for name, age, relation, school in [("Maria", 41, "self", None), ("Lea", 9, "child", True), ("Tom", 16, "child", False)]:
            forward(session, name)
            forward(session, age)
            state = forward(session, [relation])
            if school is not None:  # under 18: the skip rule of "school" reads this member's age
                assert state["step"]["identifier"] == "school"
                state = forward(session, school)
        assert state["step"]["identifier"] == "summary"
        # 41, 9, 16: two under 18, one adult, one at school, the oldest 41.
        assert state["step"]["calculations"] == {"people": 3, "children": 2, "adults": 1, "inSchool": 1, "oldest": 41}
        assert state["step"]["text"] == "3 people live here: 2 under 18 and 1 adults. 1 go to school or nursery; the oldest is 41."
        assert forward(session)["step"]["text"] == "Thank you, Maria."


def test_cli_walks_each_instance_from_the_answers_file(tmp_path):
    out = tmp_path / "result.json"
    proc = run_cli("run", str(HOUSEHOLD), "--answers", str(ANSWERS), "--quiet", "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    result = load_json(out)
    # Maria 41, Jon 43, Lea 9 (school), Tom 16 (not): as the answers file gives them.
    assert result["calculations"] == {"people": 4, "children": 2, "adults": 2, "inSchool": 1, "oldest": 43, "respondent": "Maria"}
    person = next(r for r in result["results"] if r["identifier"] == "person")
    names = [i["results"][0]["results"][0]["answer"] for i in person["instances"]]
    assert names == ["Maria", "Jon", "Lea", "Tom"]
    # The adults' "school" was passed over by the skip rule: three steps, the children four.
    assert [len(i["results"]) for i in person["instances"]] == [3, 3, 4, 4]


def test_answers_listing_more_instances_add_them(tmp_path):
    answers = load_json(ANSWERS)
    answers["person"].append({"name": "Ida", "age": 70, "relation": ["parent"]})
    out = tmp_path / "result.json"
    proc = run_cli("run", str(HOUSEHOLD), "--answers", str(write_json(tmp_path / "more.json", answers)), "--quiet", "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    # howMany says 4; the fifth member was added: 3 adults now, the oldest 70.
    calculations = load_json(out)["calculations"]
    assert (calculations["people"], calculations["adults"], calculations["oldest"]) == (5, 3, 70)


def test_a_plain_read_from_outside_is_refused():
    definition = json.loads(HOUSEHOLD.read_text())
    definition["calculations"]["lastAge"] = {"answer": "age"}
    with pytest.raises(stepkit.DefinitionError) as refused:
        stepkit.Task.from_json(definition)
    # (The summary's pipes name the calculations refused with it: unknownPlaceholder too.)
    assert [(e["code"], e["path"]) for e in refused.value.errors if e["code"] != "unknownPlaceholder"] == [
        ("outsideInstance", "calculations.lastAge.answer")]
    # At an index it is fine: the last member's age.
    definition["calculations"]["lastAge"] = {"answer": {"section": "person", "step": "age", "index": -1}}
    with stepkit.Task.from_json(definition) as task:
        assert task.info["identifier"] == "household"


def test_the_graph_shows_the_sections_loop():
    """The engine's rule graph has the loop of the section (its last step back to its first, with
    the bounds), and the drawing shows it labelled with them."""
    from stepkit.graph import build_graph, to_dot

    with stepkit.Task.from_file(HOUSEHOLD) as task:
        edges = task.graph()["edges"]
        loops = [e for e in edges if e["kind"] == "nextInstance"]
        assert loops == [{"from": "school", "to": "name", "kind": "nextInstance", "section": "person", "minCount": 1, "maxCount": 12}]
        # After the step's own move (on to the summary, once the last instance is left).
        leaving = [e for e in edges if e["from"] == "school"]
        assert [e["kind"] for e in leaving] == ["next", "nextInstance"] and leaving[0]["to"] == "summary"
        dot = to_dot(build_graph(load_json(HOUSEHOLD), rules=task.graph()))
    line = next(line for line in dot.splitlines() if line.strip().startswith('"school" -> "name"'))
    assert 'label="next person (1 to 12)"' in line and "style=bold" in line and "constraint=false" in line


def test_the_graph_shows_the_move_past_a_section_with_no_instance():
    """A section whose count comes out as 0 (minCount 0) is passed over (the arrival says
    "noInstances"): the engine's graph holds that move, from the section's first step (where
    navigation enters it) to the step after it, with why, the bounds and the count; the drawing
    labels it; and the session's walk with a count of 0 moves along it, as the progress bounds
    say (fewest: "alone" and "done")."""
    from stepkit.graph import build_graph, to_dot

    definition = load_json(HOUSEHOLD)
    definition["steps"][1]["answerFormat"]["minimum"] = 0
    definition["steps"][2]["repeat"]["minCount"] = 0
    definition["steps"].insert(3, {"type": "instruction", "identifier": "alone", "title": "Nobody else"})
    with stepkit.Task.from_json(definition) as task:
        edges = task.graph()["edges"]
        passed = [e for e in edges if "passedOver" in e]
        assert passed == [{"from": "name", "to": "alone", "kind": "next", "passedOver": "person", "by": "noInstances",
                           "minCount": 0, "maxCount": 12, "count": {"answer": "howMany"}}]
        dot = to_dot(build_graph(definition, rules=task.graph()))
        with task.open() as session:
            forward(session)
            assert session.state["progress"]["fewestRemaining"] == 3  # alone, summary, done
            state = forward(session, 0)
            assert state["step"]["identifier"] == "alone"
            assert {"skipped": "person", "by": "noInstances"} in state["navigation"]["arrival"]
    line = next(line for line in dot.splitlines() if line.strip().startswith('"name" -> "alone"'))
    assert 'label="no person (howMany is 0)"' in line
