"""Seeded randomized order, filtered choices and time limits (issue 32), through the binding.

The order is checked against a SECOND implementation of the generator, written here from
docs/randomization.md alone (PCG32 as O'Neill's pcg_basic.c defines it, FNV-1a 64 stream names,
Fisher-Yates with the generator's bounded draw): it does not call the library.
"""

import hashlib
import json
from typing import Any, Dict, List, Set

import pytest

import stepkit
from conftest import START_MS
from pcg32 import PCG32, fnv1a64


def order(count: int, pinned: Set[int], seed: int, name: str) -> List[int]:
    movable = [i for i in range(count) if i not in pinned]
    shown = list(range(count))
    if len(movable) < 2:
        return shown
    generator = PCG32(seed, fnv1a64(name))
    a = list(movable)
    for i in range(len(a) - 1, 0, -1):
        j = generator.below(i + 1)
        a[i], a[j] = a[j], a[i]
    for position, entry in zip(movable, a):
        shown[position] = entry
    return shown


def test_the_python_generator_gives_pcg32s_published_output():
    # pcg32-demo: initstate 42, initseq 54.
    g = PCG32(42, 54)
    assert [g.next() for _ in range(6)] == [0xA15C02B7, 0x7B47F409, 0xBA1D3330, 0x83D2F293, 0xBFA4784B, 0xCBED606E]
    assert fnv1a64("a") == 0xAF63DC4C8601EC8C


CHOICES = ["a", "b", "c", "d", "e", "f", "g", "none"]
TASK: Dict[str, Any] = {
    "identifier": "shuffled",
    "steps": [
        {"type": "question", "identifier": "fruit", "answerFormat": {
            "type": "textChoice", "style": "multipleChoice", "shuffle": True,
            "textChoices": [{"text": v.upper(), "value": v} for v in CHOICES[:-1]]
            + [{"text": "None of the above", "value": "none", "exclusive": True, "pinned": True}]}},
        {"type": "form", "identifier": "about", "shuffleItems": True, "formItems": [
            {"sectionTitle": "Habits"},
            {"identifier": "x", "answerFormat": {"type": "boolean"}},
            {"identifier": "y", "answerFormat": {"type": "boolean"}},
            {"identifier": "z", "answerFormat": {"type": "textChoice", "style": "singleChoice", "shuffle": True,
                                                 "textChoices": [{"text": t, "value": t} for t in ["p", "q", "r", "s"]]}},
            {"identifier": "w", "pinned": True, "answerFormat": {"type": "boolean"}}]},
    ],
}


@pytest.mark.parametrize("seed", [0, 1, 12345, 2**31 + 7, 2**53 - 1])
def test_the_library_shows_the_order_the_documented_algorithm_gives(seed):
    with stepkit.Task.from_json(TASK) as task, task.open({"seed": seed}) as s:
        state = s.state
        shown = [c["value"] for c in state["step"]["answerFormat"]["textChoices"]]
        assert shown == [CHOICES[i] for i in order(8, {7}, seed, "fruit")]
        assert state["order"] == {"choices": shown}
        assert state["seed"] == seed
        state = s.set_answer(["b"])
        state = s.go_forward()
        entries = [None, "x", "y", "z", "w"]
        items = [e.get("identifier") for e in state["step"]["formItems"]]
        assert items == [entries[i] for i in order(5, {0, 4}, seed, "about#items")]
        z = next(e for e in state["step"]["formItems"] if e.get("identifier") == "z")
        assert [c["value"] for c in z["answerFormat"]["textChoices"]] == [["p", "q", "r", "s"][i] for i in order(4, set(), seed, "about/z")]
        assert state["order"]["items"] == items
        result = s.result
        assert result["randomization"]["seed"] == seed
        assert result["randomization"]["orders"]["fruit"] == {"choices": shown}


def test_a_drawn_seed_is_kept_through_save_and_restore():
    with stepkit.Task.from_json(TASK) as task:
        with task.open() as s:
            seed = s.state["seed"]
            assert isinstance(seed, int) and 0 <= seed < 2**53
            saved = s.save()
            before = s.state["step"]
        with task.restore(saved) as back:
            assert back.state["seed"] == seed
            assert back.state["step"] == before


def resign(document: Dict[str, Any]) -> str:
    body = {k: v for k, v in document.items() if k != "integrity"}
    text = json.dumps(body, separators=(",", ":"), ensure_ascii=False)
    integrity = {"algorithm": "SHA-256", "digest": hashlib.sha256(text.encode("utf-8")).hexdigest()}
    return json.dumps(dict(body, integrity=integrity), separators=(",", ":"), ensure_ascii=False)


@pytest.mark.parametrize("edit", ["swap", "seed"])
def test_restore_refuses_an_order_the_seed_does_not_give(edit):
    with stepkit.Task.from_json(TASK) as task, task.open({"seed": 77}) as s:
        document = json.loads(s.save())
        if edit == "swap":
            choices = document["randomization"]["orders"]["fruit"]["choices"]
            choices[0], choices[1] = choices[1], choices[0]
        else:
            document["randomization"]["seed"] = 78
        with pytest.raises(stepkit.RestorationError) as refused:
            task.restore(resign(document))
        assert refused.value.errors[0]["code"] == "orderMismatch"
        # The untouched data, signed the same way, restores.
        with task.restore(resign(json.loads(s.save()))) as back:
            assert back.state["seed"] == 77


@pytest.mark.parametrize("seed", ["12", 1.5, -1, 2**53, True, None, [1]])
def test_a_seed_of_the_wrong_type_or_range_is_refused(seed):
    with stepkit.Task.from_json(TASK) as task:
        with pytest.raises(stepkit.InvalidArgumentError) as refused:
            task.open({"seed": seed})
        assert refused.value.errors[0]["path"] == "seed"


TIMED: Dict[str, Any] = {
    "identifier": "timed", "timeLimit": 60, "steps": [
        {"type": "question", "identifier": "q1", "timeLimit": 10, "answerFormat": {"type": "boolean"}},
        {"type": "question", "identifier": "q2", "timeLimit": 5, "onTimeLimit": "endTask", "answerFormat": {"type": "boolean"}},
        {"type": "completion", "identifier": "done"}]}


def test_a_step_time_limit_moves_on_and_another_ends_the_task_timed_out():
    clock = stepkit.ManualClock(START_MS)
    with stepkit.Task.from_json(TIMED) as task, task.open() as s:
        s.set_clock(clock)
        clock.now_ms = START_MS + 4000
        state = s.tick()
        assert state["timeLimits"]["step"]["remaining"] == 6
        assert state["timeLimits"]["task"]["remaining"] == 56
        saved = s.save()
        clock2 = stepkit.ManualClock(START_MS + 3_600_000)
        with task.restore(saved) as back:
            back.set_clock(clock2)
            assert back.state["timeLimits"]["step"]["remaining"] == 6
            clock2.now_ms = START_MS + 3_600_000 + 6000
            state = back.tick()
            assert state["step"]["identifier"] == "q2"
            events = [e["type"] for e in state["events"]]
            assert "timeLimitReached" in events
            clock2.now_ms = START_MS + 3_600_000 + 12000
            state = back.tick()
            assert state["status"] == "finished" and state["finishReason"] == "timedOut"
            result = back.result
            assert [r["timeSpent"] for r in result["results"]] == [10, 5]
            assert result["timeSpent"] == 15


@pytest.mark.parametrize("limit", [0, -3, 604801, 1e12, "10"])
def test_a_bad_time_limit_is_a_definition_error(limit):
    bad = json.loads(json.dumps(TIMED))
    bad["steps"][0]["timeLimit"] = limit
    with pytest.raises(stepkit.DefinitionError) as refused:
        stepkit.Task.from_json(bad)
    assert refused.value.errors[0]["path"] == "steps[0].timeLimit"


def test_the_checker_reports_a_filter_that_can_leave_no_choice():
    definition = {"identifier": "f", "steps": [
        {"type": "question", "identifier": "owned", "optional": True, "answerFormat": {
            "type": "textChoice", "style": "multipleChoice",
            "textChoices": [{"text": "Cat", "value": "cat"}, {"text": "Dog", "value": "dog"}]}},
        {"type": "question", "identifier": "favourite", "answerFormat": {
            "type": "textChoice", "style": "singleChoice", "choicesFrom": {"step": "owned", "which": "chosen"}}}]}
    with stepkit.Task.from_json(definition) as task:
        found = [(p["severity"], p["code"], p["path"]) for p in task.check()["problems"]]
        # A warning: with no choice offered, the required question does not hold the participant back.
        assert ("warning", "choicesMayRunOut", "steps[1]") in found
        with task.open() as s:
            state = s.skip()
            assert state["step"]["identifier"] == "favourite"
            assert state["step"]["answerFormat"]["textChoices"] == []
            assert s.go_forward()["status"] == "finished"
            favourite = s.result["results"][1]
            assert favourite["identifier"] == "favourite" and favourite["results"][0]["answer"] is None
        with task.open() as s:
            s.set_answer(["dog"])
            state = s.go_forward()
            assert [c["value"] for c in state["step"]["answerFormat"]["textChoices"]] == ["dog"]
            with pytest.raises(stepkit.AnswerError) as refused:
                s.set_answer(["cat"])
            assert refused.value.errors[0]["code"] == "unavailableChoice"
            assert s.state["answer"] is None  # the refused answer changed nothing


# A section that shuffles its steps (docs/randomization.md, "A section's steps"): `pause` is
# pinned, and the section's rule goes to `done` after the step shown last.
BLOCK = ["q1", "q2", "pause", "q3", "q4"]
SECTION_TASK: Dict[str, Any] = {
    "identifier": "blocks",
    "steps": [
        {"type": "instruction", "identifier": "intro"},
        {"type": "section", "identifier": "block", "shuffleSteps": True, "steps": [
            {"type": "question", "identifier": "q1", "answerFormat": {"type": "boolean"}},
            {"type": "question", "identifier": "q2", "answerFormat": {"type": "boolean"}},
            {"type": "instruction", "identifier": "pause", "pinned": True},
            {"type": "question", "identifier": "q3", "answerFormat": {"type": "boolean"}},
            {"type": "question", "identifier": "q4", "answerFormat": {"type": "boolean"}}]},
        {"type": "instruction", "identifier": "after"},
        {"type": "completion", "identifier": "done"},
    ],
    "navigationRules": {"block": {"type": "direct", "destination": "done"}},
}


def walk(s: "stepkit.Session", shown: List[str]) -> None:
    """Answers every question true and goes forward to the end, listing the steps shown."""
    state = s.state
    while state["status"] == "inProgress":
        step = state["step"]
        shown.append(step["identifier"])
        if step["type"] == "question":
            s.set_answer(True)
        state = s.go_forward()


def test_the_documented_example_of_a_sections_order():
    # docs/randomization.md: seed 42 shows q1 q4 pause q3 q2.
    assert [BLOCK[i] for i in order(5, {2}, 42, "block#steps")] == ["q1", "q4", "pause", "q3", "q2"]


@pytest.mark.parametrize("seed", [0, 1, 42, 12345, 2**31 + 7, 2**53 - 1])
def test_the_library_walks_a_sections_steps_in_the_order_the_documented_algorithm_gives(seed):
    expected = [BLOCK[i] for i in order(5, {2}, seed, "block#steps")]
    with stepkit.Task.from_json(SECTION_TASK) as task, task.open({"seed": seed}) as s:
        shown: List[str] = []
        walk(s, shown)
        assert shown == ["intro"] + expected + ["done"]
        result = s.result
        assert result["randomization"]["orders"]["block"] == {"steps": expected}
        assert task.verify(result)["verified"] is True


def test_a_sections_order_is_kept_through_save_and_restore_and_checked_by_verify():
    seed = 2026
    expected = [BLOCK[i] for i in order(5, {2}, seed, "block#steps")]
    with stepkit.Task.from_json(SECTION_TASK) as task:
        with task.open({"seed": seed}) as s:
            s.go_forward()
            s.set_answer(False)
            s.go_forward()
            saved = s.save()
            assert json.loads(saved)["randomization"]["orders"]["block"] == {"steps": expected}
        with task.restore(saved) as back:
            assert back.state["step"]["identifier"] == expected[1]
            shown: List[str] = []
            walk(back, shown)
            assert shown == expected[1:] + ["done"]
            result = back.result
        # Another order recorded than the seed gives: verify reports it.
        edited = json.loads(json.dumps(result))
        steps = edited["randomization"]["orders"]["block"]["steps"]
        steps[0], steps[-1] = steps[-1], steps[0]
        report = task.verify(edited)
        assert [d["code"] for d in report["divergences"]] == ["orderMismatch"]
        assert report["divergences"][0]["path"] == "randomization.orders.block"
        # Restore refuses data with another order.
        document = json.loads(saved)
        document["randomization"]["orders"]["block"]["steps"].reverse()
        with pytest.raises(stepkit.RestorationError) as refused:
            task.restore(resign(document))
        assert refused.value.errors[0]["code"] == "orderMismatch"


def test_the_graph_lists_the_moves_of_every_order():
    with stepkit.Task.from_json(SECTION_TASK) as task:
        edges = task.graph()["edges"]
        after_q1 = {e["to"] for e in edges if e["from"] == "q1"}
        assert after_q1 == {"q2", "q3", "q4", "pause", "done"}
        assert {e["to"] for e in edges if e["from"] == "intro"} == {"q1", "q2", "q3", "q4"}


def test_the_cli_walks_a_sections_steps_in_the_seeded_order(tmp_path):
    from conftest import run_cli

    seed = 7
    expected = [BLOCK[i] for i in order(5, {2}, seed, "block#steps")]
    task_file = tmp_path / "blocks.json"
    task_file.write_text(json.dumps(SECTION_TASK), encoding="utf-8")
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps({q: True for q in ["q1", "q2", "q3", "q4"]}), encoding="utf-8")
    proc = run_cli("run", str(task_file), "--answers", str(answers), "--seed", str(seed))
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout[proc.stdout.index("{"):])

    def identifiers(results: List[Dict[str, Any]]) -> List[str]:
        out: List[str] = []
        for r in results:
            if r["identifier"] == "block":
                out += identifiers(r["results"])
            else:
                out.append(r["identifier"])
        return out

    assert identifiers(result["results"]) == ["intro"] + expected + ["done"]
    assert result["randomization"] == {"seed": seed, "orders": {"block": {"steps": expected}}}
