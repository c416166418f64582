"""The three scored instruments of examples/tasks (issue 13), run from Python through the C ABI
to the totals and bands computed by hand from the published scoring rules."""

from __future__ import annotations

import json

import pytest

import stepkit
from conftest import EXAMPLES, REPO, run_cli

OFTEN = ["never", "fewDays", "mostDays", "everyDay"]

# The item scores and the totals and bands worked out by hand, shared with the Swift tests.
CASES = json.loads((REPO / "Tests" / "fixtures" / "instrument-scores.json").read_text(encoding="utf-8"))


def walk(name, answers):
    """Answers each step named in `answers`, goes forward to the end; the path and the result."""
    with stepkit.Task.from_file(EXAMPLES / f"{name}.json") as task, task.open() as s:
        path = []
        state = s.state
        while state["status"] == "inProgress":
            step = state["step"]["identifier"]
            path.append(step)
            if step in answers:
                s.set_answer(answers[step])
            if step == "summary":
                shown = s.state["step"]["calculations"]
            state = s.forward()
        assert state["finishReason"] == "completed"
        return path, s.result["calculations"], shown


@pytest.mark.parametrize("scores,total,band,safety",
                         [(c["scores"], c["total"], c["band"], c["safety"]) for c in CASES["mood-screener"]])
def test_mood_screener(scores, total, band, safety):
    answers = {f"mood{i + 1}": [OFTEN[v]] for i, v in enumerate(scores)}
    path, calculations, shown = walk("mood-screener", answers)
    assert calculations == {"moodTotal": total, "moodBand": band}
    assert shown == calculations
    # Item 9 above 0 routes to the safety step by a rule on its score.
    assert ("safety" in path) == safety


@pytest.mark.parametrize("scores,total,band", [(c["scores"], c["total"], c["band"]) for c in CASES["worry-screener"]])
def test_worry_screener(scores, total, band):
    answers = {"worry": {f"worry{i + 1}": [OFTEN[v]] for i, v in enumerate(scores)}}
    _, calculations, _ = walk("worry-screener", answers)
    assert calculations == {"worryTotal": total, "worryBand": band}


FIRST = ["never", "monthlyOrLess", "twoToFourMonthly", "twoToThreeWeekly", "fourPlusWeekly"]
SECOND = ["oneTwo", "threeFour", "fiveSix", "sevenToNine", "tenPlus"]
PAST_YEAR = ["never", "lessThanMonthly", "monthly", "weekly", "daily"]
HARM = {0: "no", 2: "notPastYear", 4: "pastYear"}


@pytest.mark.parametrize("scores,total,zone", [(c["scores"], c["total"], c["zone"]) for c in CASES["drinking-screener"]])
def test_drinking_screener(scores, total, zone):
    answers = {"drink1": [FIRST[scores[0]]], "drink9": [HARM[scores[-2]]], "drink10": [HARM[scores[-1]]]}
    if len(scores) == 10:
        answers["drink2"] = [SECOND[scores[1]]]
        answers.update({f"drink{i + 1}": [PAST_YEAR[scores[i]]] for i in range(2, 8)})
    path, calculations, _ = walk("drinking-screener", answers)
    assert calculations == {"drinkTotal": total, "drinkZone": zone}
    # "Never" on item 1 goes straight to items 9 and 10.
    assert ("drink2" in path) == (len(scores) == 10)


@pytest.mark.parametrize("name,expected", [
    ("mood-screener", {"moodTotal": 11, "moodBand": "moderate"}),
    ("worry-screener", {"worryTotal": 10, "worryBand": "moderate"}),
    ("drinking-screener", {"drinkTotal": 10, "drinkZone": "zone2"}),
])
def test_answers_files_give_the_documented_scores(name, expected, tmp_path):
    answers = json.loads((EXAMPLES / f"{name}.answers.json").read_text())
    _, calculations, _ = walk(name, answers)
    assert calculations == expected
    out = tmp_path / "result.json"
    done = run_cli("run", str(EXAMPLES / f"{name}.json"), "--quiet", "--output", str(out))
    assert done.returncode == 0, done.stderr
    assert json.loads(out.read_text())["calculations"] == expected
