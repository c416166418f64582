"""The navigation graph: python -m stepkit graph TASK.json -o graph.svg|png|dot.

The picture is produced (SVG and PNG files, non-empty, with the right header), and the DOT has
every step and every edge navigation can take."""

from __future__ import annotations

import io
import json
import re
import shutil
from typing import List, Optional, Set, Tuple

import pytest

import stepkit
from conftest import EXAMPLE_TASKS, EXAMPLES, REPO, load_json, run_cli
from stepkit import graph
from stepkit.graph import END, START, build_graph, describe_predicate, to_dot

PNG_HEADER = b"\x89PNG\r\n\x1a\n"


@pytest.fixture
def graphviz() -> str:
    program = shutil.which("dot")
    if program is None:
        pytest.fail("Graphviz's 'dot' is not installed: apt-get install -y graphviz (scripts/lib/deps.sh installs it)",
                    pytrace=False)
    return program


def dot_nodes(dot: str) -> Set[str]:
    return set(re.findall(r'^\s*"((?:[^"\\]|\\.)*)" \[label=', dot, re.M))


def dot_edges(dot: str) -> List[Tuple[str, str, str]]:
    edges = []
    for source, target, attributes in re.findall(r'^\s*"((?:[^"\\]|\\.)*)" -> "((?:[^"\\]|\\.)*)"(?: \[(.*)\])?;$', dot, re.M):
        label = re.search(r'label="((?:[^"\\]|\\.)*)"', attributes or "")
        edges.append((source, target, label.group(1).replace("\\n", " ").replace('\\"', '"') if label else ""))
    return edges


# ------------------------------------------------------------------------------------------------
# Predicates in words


@pytest.mark.parametrize("predicate, words", [
    ({"not": {"result": "symptom", "contains": "headache"}}, 'symptom does not contain "headache"'),
    ({"result": "symptom", "contains": "headache"}, 'symptom contains "headache"'),
    ({"result": "symptom", "contains": ["a", "b"]}, 'symptom contains "a" and "b"'),
    ({"result": "symptom", "containsAny": ["a", "b", "c"]}, 'symptom contains any of "a", "b" or "c"'),
    ({"not": {"result": "symptom", "containsAny": ["a"]}}, 'symptom contains none of "a"'),
    ({"result": "severity", "equals": False}, "severity is false"),
    ({"result": "severity", "notEquals": True}, "severity is not true"),
    ({"result": "pain", "minimum": 3, "maximum": 7}, "pain is at least 3 and is at most 7"),
    ({"result": "pain", "exclusiveMinimum": 3}, "pain is more than 3"),
    ({"result": "pain", "exclusiveMaximum": 3}, "pain is less than 3"),
    ({"not": {"result": "pain", "minimum": 3}}, "pain is not at least 3"),
    ({"result": "note", "answered": True}, "note is answered"),
    ({"not": {"result": "note", "answered": True}}, "note is not answered"),
    ({"result": "hr", "dontKnow": True}, "hr is \"don't know\""),
    ({"result": "name", "matches": "^A"}, "name matches /^A/"),
    ({"result": {"step": "about", "item": "age"}, "minimum": 18}, "about.age is at least 18"),
    ({"result": {"task": "baseline", "step": "pain"}, "maximum": 2}, "baseline:pain is at most 2"),
    ({"result": "onset", "minimum": "08:00"}, 'onset is at least "08:00"'),
    ({"all": [{"result": "a", "equals": 1}, {"any": [{"result": "b", "equals": 2}, {"result": "c", "equals": 3}]}]},
     "a is 1 and (b is 2 or c is 3)"),
    ({"not": {"all": [{"result": "a", "equals": 1}, {"result": "b", "equals": 2}]}}, "not (a is 1 and b is 2)"),
    ({"not": {"result": "a", "equals": 1, "answered": True}}, "not (a is 1 and is answered)"),
    ({"always": True}, "always"),
    ({"always": False}, "never"),
    ({"any": []}, "never"),
    ({"all": []}, "always"),
])
def test_describe_predicate(predicate, words):
    assert describe_predicate(predicate) == words


# ------------------------------------------------------------------------------------------------
# The DOT


HEADACHE_EDGES = {
    (START, "intro", ""),
    ("intro", "symptom", ""),
    ("symptom", "about", 'symptom does not contain "headache"'),
    ("symptom", "severity", "otherwise"),
    ("severity", "pain", ""),
    ("pain", "onset", ""),
    ("onset", "aura", ""),
    ("aura", "about", ""),  # the section headacheDetails' direct rule
    ("about", "done", ""),
    ("done", END, ""),
}

MEDICATIONS_EDGES = {
    (START, "intro", ""),
    ("intro", "takesMedication", ""),
    ("takesMedication", "done", "takesMedication is false"),
    ("takesMedication", "howMany", "otherwise"),
    ("howMany", "medication", ""),
    ("medication", "missedDoses", ""),
    ("missedDoses", "done", ""),
    ("done", END, ""),
}


@pytest.mark.parametrize("name, expected", [("headache", HEADACHE_EDGES), ("medications", MEDICATIONS_EDGES)])
def test_dot_has_every_edge(name, expected):
    path = EXAMPLES / f"{name}.json"
    dot = to_dot(build_graph(load_json(path)))
    assert set(dot_edges(dot)) == expected


@pytest.mark.parametrize("path", EXAMPLE_TASKS, ids=lambda p: p.stem)
def test_dot_has_every_step(path):
    with stepkit.Task.from_file(path) as task:
        steps = [s["identifier"] for s in task.info["steps"]]
    dot = to_dot(build_graph(load_json(path)))
    assert dot_nodes(dot) == set(steps)
    edges = dot_edges(dot)
    # Every step is left by at least one edge and, but for the first, entered by one; the end is reached.
    assert {e[0] for e in edges} >= set(steps)
    assert {e[1] for e in edges} >= set(steps[1:]) | {END}
    assert len(edges) == len(build_graph(load_json(path)).edges)


def test_skip_rules_sections_and_modifiers_are_visible():
    dot = to_dot(build_graph(load_json(EXAMPLES / "headache.json")))
    about = next(line for line in dot.splitlines() if line.strip().startswith('"about" [label='))
    assert "dashed" in about and "skipped if severity is false" in about
    assert 'modifier: sets text if symptom\\ncontains \\"dizziness\\"' in about or "modifier: sets text" in about
    assert 'subgraph "cluster_headacheDetails"' in dot
    cluster = dot.split('subgraph "cluster_headacheDetails"')[1].split("}")[0]
    for step in ("pain", "onset", "aura"):
        assert f'"{step}" [label=' in cluster


def test_section_destination_and_section_skip_rule():
    definition = {
        "identifier": "s",
        "steps": [
            {"type": "question", "identifier": "q", "answerFormat": {"type": "boolean"}},
            {"type": "instruction", "identifier": "between"},
            {"type": "section", "identifier": "outer", "title": "Outer", "steps": [
                {"type": "section", "identifier": "inner", "steps": [{"type": "instruction", "identifier": "i1"}]},
                {"type": "instruction", "identifier": "o1"}]},
            {"type": "completion", "identifier": "done"},
        ],
        "navigationRules": {"q": {"type": "predicate", "branches": [
            {"when": {"result": "q", "equals": True}, "destination": "outer"},
            {"when": {"result": "q", "equals": False}, "destination": "$end"}], "defaultDestination": "between"}},
        "skipRules": {"inner": {"result": "q", "answered": False}},
    }
    stepkit.Task.from_json(definition).close()
    dot = to_dot(build_graph(definition))
    assert set(dot_edges(dot)) == {
        (START, "q", ""), ("q", "i1", "q is true"), ("q", END, "q is false"), ("q", "between", "otherwise"),
        ("between", "i1", ""), ("i1", "o1", ""), ("o1", "done", ""), ("done", END, ""),
    }
    assert 'lhead="cluster_outer"' in dot
    inner = dot.split('subgraph "cluster_inner"')[1].split("}")[0]
    assert "dashed" in inner and "skipped if q is not answered" in inner
    # Nested: the inner cluster is inside the outer one.
    assert dot.index('subgraph "cluster_outer"') < dot.index('subgraph "cluster_inner"')


def test_labels_are_escaped():
    definition = {"identifier": 'q"uote', "steps": [
        {"type": "instruction", "identifier": "a\"b", "title": 'Say "hi" \\ now'}]}
    stepkit.Task.from_json(definition).close()
    dot = to_dot(build_graph(definition))
    assert dot_nodes(dot) == {'a\\"b'}
    assert 'Say \\"hi\\" \\\\ now' in dot


# ------------------------------------------------------------------------------------------------
# Pictures


def run_graph(*argv: str):
    out, err = io.StringIO(), io.StringIO()
    parser = __import__("argparse").ArgumentParser()
    graph.add_arguments(parser)
    status = graph.run(parser.parse_args(list(argv)), out=out, err=err)
    return status, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("path", EXAMPLE_TASKS, ids=lambda p: p.stem)
def test_svg_and_png_are_produced(path, tmp_path, graphviz):
    svg = tmp_path / "graph.svg"
    png = tmp_path / "graph.png"
    assert run_graph(str(path), "-o", str(svg))[0] == 0
    assert run_graph(str(path), "-o", str(png))[0] == 0
    text = svg.read_text(encoding="utf-8")
    assert "<svg" in text and "</svg>" in text
    with stepkit.Task.from_file(path) as task:
        for step in task.info["steps"]:
            assert f"<title>{step['identifier']}</title>" in text
    data = png.read_bytes()
    assert len(data) > 1000 and data.startswith(PNG_HEADER)


def test_dot_output(tmp_path):
    target = tmp_path / "graph.dot"
    status, _, _ = run_graph(str(EXAMPLES / "headache.json"), "-o", str(target))
    assert status == 0
    assert set(dot_edges(target.read_text(encoding="utf-8"))) == HEADACHE_EDGES
    status, out, _ = run_graph(str(EXAMPLES / "headache.json"))
    assert status == 0 and out == target.read_text(encoding="utf-8")


def test_bad_input(tmp_path):
    assert run_graph(str(tmp_path / "missing.json"))[0] == 2
    bad = tmp_path / "bad.json"
    bad.write_text('{"identifier": "x", "steps": [{"type": "question", "identifier": "q"}]}', encoding="utf-8")
    status, _, err = run_graph(str(bad), "-o", str(tmp_path / "g.svg"))
    assert status == 2 and "steps[0].answerFormat" in err
    assert run_graph(str(EXAMPLES / "headache.json"), "-o", str(tmp_path / "g.gif"))[0] == 2


def test_cli_graph(tmp_path, graphviz):
    png = tmp_path / "headache.png"
    proc = run_cli("graph", str(EXAMPLES / "headache.json"), "-o", str(png))
    assert proc.returncode == 0, proc.stderr
    assert png.read_bytes().startswith(PNG_HEADER)
    svg = tmp_path / "medications.svg"
    assert run_cli("graph", str(EXAMPLES / "medications.json"), "-o", str(svg)).returncode == 0
    assert svg.stat().st_size > 0
    dot = run_cli("graph", str(EXAMPLES / "headache.json"))
    assert dot.returncode == 0 and set(dot_edges(dot.stdout)) == HEADACHE_EDGES


def test_active_steps_and_async_actions_are_visible():
    dot = to_dot(build_graph(load_json(EXAMPLES / "short-walk.json")))
    walking = next(line for line in dot.splitlines() if line.strip().startswith('"walking" [label='))
    assert "30 s" in walking and "records accelerometer, pedometer" in walking
    assert "starts recording location" in dot and "stops recording location" in dot


def test_a_countdown_shows_the_engines_default_duration():
    definition = {"identifier": "g", "steps": [{"type": "countdown", "identifier": "ready"},
                                               {"type": "active", "identifier": "walk", "stepDuration": 30}]}
    dot = to_dot(build_graph(definition))
    ready = next(line for line in dot.splitlines() if line.strip().startswith('"ready" [label='))
    assert "5 s" in ready


def test_task_graph_is_the_engines_rule_graph():
    with stepkit.Task.from_file(EXAMPLES / "headache.json") as task:
        edges = task.graph()["edges"]
        assert "edges" not in task.info  # task_info stays the same size; the graph is on demand
    assert edges[0] == {"from": None, "to": "intro", "kind": "start"}
    assert {"from": "symptom", "to": "about", "kind": "branch", "rule": "symptom", "branch": 0,
            "when": {"not": {"result": "symptom", "contains": "headache"}}} in edges
    assert {"from": "aura", "to": "about", "kind": "direct", "rule": "headacheDetails"} in edges
    assert edges[-1] == {"from": "done", "to": None, "kind": "next"}
    with pytest.raises(stepkit.StateError):
        task.graph()


# ------------------------------------------------------------------------------------------------
# The drawing against a real run


def walk_moves(path, tmp_path) -> List[Tuple[str, str, list]]:
    """Walks an example with its answers file (the CLI's walk; active steps run on a manual
    clock) and returns every move: (step left or START, step reached or END, the arrival)."""
    import io as _io

    from stepkit.active_presenter import ActiveRunner
    from stepkit.answers_file import walk_with_answers

    from conftest import START_MS

    answers = load_json(path.with_name(path.stem + ".answers.json"))
    with stepkit.Task.from_file(path) as task, task.open({"outputDirectory": str(tmp_path)}) as session:
        state = session.state
        moves = [(START, state["step"]["identifier"], state["navigation"]["arrival"])]
        left = [state["step"]["identifier"]]

        def on_move(state):
            if state["status"] == "inProgress":
                moves.append((left[0], state["step"]["identifier"], state["navigation"]["arrival"]))
                left[0] = state["step"]["identifier"]
            else:
                moves.append((left[0], END, None))

        runner = ActiveRunner(quiet=True, out=_io.StringIO(), clock=stepkit.ManualClock(START_MS))
        with runner.attach(session):
            final = walk_with_answers(session, answers, _io.StringIO(), quiet=True, runner=runner, on_move=on_move)
        assert final["finishReason"] == "completed"
    return moves


def follow(g, source: str, arrival, reached: Optional[str] = None) -> str:
    """Where the drawn edges lead from `source` when navigation decides as `arrival` says: each
    rule it names picks that rule's edge (a branch by its index among the rule's branches), a
    step without a rule takes its one unlabelled edge, and a step or section it says was passed
    over is left by its own edges. A repeating section's last step is left by its loop
    ("nextInstance") when the step `reached` is where that loop leads (the arrival does not say
    which instance), else by its other edges. Fails when no drawn edge fits."""
    sections = {s.identifier: s for s in g.sections}
    notes = [n for n in (arrival or []) if "modified" not in n and "end" not in n]
    at, i = source, 0
    while True:
        edges = [e for e in g.edges if e.source == at]
        note = notes[i] if i < len(notes) else None
        if note is not None and "rule" in note:
            ruled = [e for e in edges if e.rule == note["rule"]]
            if note["type"] == "direct":
                chosen = [e for e in ruled if e.kind == "direct"]
            elif note["branch"] == "defaultDestination":
                chosen = [e for e in ruled if e.kind == "default"]
            elif note["branch"] == "nextInOrder":
                chosen = [e for e in ruled if e.kind == "next"]
            else:
                branches = [e for e in ruled if e.kind == "branch"]
                chosen = branches[note["branch"]:note["branch"] + 1]
            i += 1
        else:
            chosen = [e for e in edges if e.rule is None]
            looping = [e for e in chosen if e.kind == "nextInstance" and e.target == reached]
            chosen = looping or [e for e in chosen if e.kind != "nextInstance"]
            # A section's last step passed over by its skip rule on the way to the next instance:
            # the next instance's arrival is told afresh (it does not name the step passed over),
            # so the drawn move is the next edge to it, then its loop.
            if not looping and reached is not None and len(chosen) == 1:
                passed = next((s for s in g.steps if s.identifier == chosen[0].target and s.skip), None)
                if passed is not None and any(e.source == passed.identifier and e.kind == "nextInstance" and e.target == reached
                                              for e in g.edges):
                    return reached
        assert len(chosen) == 1, f"no single drawn edge from {at} for {note}: {edges}"
        target = chosen[0].target
        note = notes[i] if i < len(notes) else None
        if note is None or "skipped" not in note:
            return target
        skipped = note["skipped"]
        i += 1
        if skipped in sections:
            assert sections[skipped].first == target, f"{skipped} passed over, but the edge leads to {target}"
            at = sections[skipped].last
        else:
            assert skipped == target, f"{skipped} passed over, but the edge leads to {target}"
            at = skipped


@pytest.mark.parametrize("path", EXAMPLE_TASKS, ids=lambda p: p.stem)
def test_drawn_edges_are_the_moves_a_session_makes(path, tmp_path):
    g = build_graph(load_json(path))
    drawn = set(dot_edges(to_dot(g)))
    assert {(e.source, e.target, e.label) for e in g.edges} == drawn
    moves = walk_moves(path, tmp_path)
    assert len(moves) > 2
    for source, target, arrival in moves:
        if target == END:
            # Completing: the edge the last step's rule (or order) gives leads to the end.
            assert any(e.source == source and e.target == END for e in g.edges), source
            continue
        assert follow(g, source, arrival, target) == target, (source, target, arrival)


# a, section "extra" (s1, s2), b, c, d, done; "extra" is skipped when a is false, and s2's rule
# ends the task. Shared with the engine's own test (Tests/StepKitTests/PassOverTests.swift).
PASS_OVER = json.loads((REPO / "Tests" / "fixtures" / "pass-over.json").read_text(encoding="utf-8"))


def test_a_section_passed_over_has_its_edge_and_bounds_hold() -> None:
    """A section passed over by its skip rule leaves by its own rule (here: none, so the step
    after it), not by its last step's: the engine's graph holds that move (from the section's
    first step, with "passedOver") and the progress bounds count the route it opens."""
    with stepkit.Task.from_json(PASS_OVER) as task:
        edges = task.graph()["edges"]
        passed = [e for e in edges if "passedOver" in e]
        assert passed == [{"from": "s1", "to": "b", "kind": "next", "passedOver": "extra"}]
        with task.open() as session:
            progress = session.state["progress"]
            assert progress["mostRemaining"] == 5  # s1 + b, c, d, done: an upper bound of 4
            assert progress["fewestRemaining"] == 1
            session.set_answer(False)
            session.forward()
            assert session.state["step"]["identifier"] == "b"
            assert session.state["progress"]["mostRemaining"] == 3
        # The picture shows the move too.
        assert ("s1", "b") in {(e.source, e.target) for e in build_graph(PASS_OVER, rules=task.graph()).edges}
