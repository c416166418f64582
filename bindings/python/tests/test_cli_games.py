"""The terminal presenter plays the games (stepkit.game_presenter): ``python -m stepkit run -i``
with the keyboard, driven here by a scripted typist on a ManualClock injected into the CLI
(``cli.main(clock=...)``): each line is typed a fixed time after the one before, and the
presenter's waits (the sequence playing, a PSAT window) move the clock. No sleeps.

What the participant sees (the sequence, the digits, the words) and every result field are
compared with values worked out by hand from docs/active-tasks.md's rules and the reference
draws (tests/pcg32.py through test_games' helpers), not read back from the engine.
"""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from typing import Any, Dict, List, Optional

import pytest

import stepkit
from stepkit import cli
from conftest import START_MS, load_json, run_cli, write_json
from test_games import COLORS, psat_digits, span_sequence, stroop_words


class Typist(io.TextIOBase):
    """stdin for input(): each line typed ``ms`` after the last one read (the clock moves
    then); the end of input once the lines run out."""

    def __init__(self, lines: List[str], clock: stepkit.ManualClock, ms: int) -> None:
        super().__init__()
        self.lines = list(lines)
        self.clock = clock
        self.ms = ms
        self.read_at: List[int] = []

    def readable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return False

    def readline(self, size: Optional[int] = -1) -> str:  # type: ignore[override]
        if not self.lines:
            return ""
        self.clock.advance(self.ms)
        self.read_at.append(self.clock.now_ms - START_MS)
        return self.lines.pop(0) + "\n"


def play(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
         step: Dict[str, Any], lines: List[str], ms: int, seed: int = 7) -> Dict[str, Any]:
    """Runs a one-game task through the CLI (-i, --seed) with ``lines`` typed; returns the
    printed text, the game's result and the typist."""
    task = write_json(tmp_path / "game.json", {"identifier": "games", "steps": [
        step, {"type": "completion", "identifier": "done"}]})
    clock = stepkit.ManualClock(START_MS)
    typist = Typist(lines + [""], clock, ms)  # "" : Enter on the completion step
    monkeypatch.setattr("sys.stdin", typist)
    output = tmp_path / "result.json"
    code = cli.main(["run", str(task), "-i", "--seed", str(seed), "-o", str(output),
                     "--output-dir", str(tmp_path / "files")], clock=clock)
    printed = capsys.readouterr().out
    assert code == 0, printed
    result = load_json(output)
    game = next(r for r in result["results"] if r["identifier"] == step["identifier"])["results"][0]
    return {"printed": printed, "game": game, "typist": typist}


SPAN = {"type": "spatialSpanMemory", "identifier": "span", "initialSpan": 3, "minimumSpan": 2,
        "maximumSpan": 5, "maximumTests": 4, "maximumConsecutiveFailures": 2}


def tiles(sequence: List[int]) -> str:
    """The tiles as the participant types them: numbered from 1."""
    return " ".join(str(t + 1) for t in sequence)


def test_spatial_span_by_keyboard(tmp_path, monkeypatch, capsys):
    g = [span_sequence(7, "span", k, n) for k, n in [(1, 3), (2, 4), (3, 3), (4, 4)]]
    wrong2 = next(t for t in range(9) if t != g[1][1])
    wrong4 = next(t for t in range(9) if t != g[3][0])
    lines = [
        "x",                                               # not a tile: nothing sent
        tiles(g[0]),                                       # game 1: right
        f"{g[1][0] + 1} {wrong2 + 1} {g[1][2] + 1}",       # game 2: wrong second tap (the third not taken)
        tiles(g[2]),                                       # game 3: right
        tiles([wrong4]),                                   # game 4: wrong first tap; 4 tests: over
    ]
    run = play(tmp_path, monkeypatch, capsys, SPAN, lines, ms=500)
    printed, r = run["printed"], run["game"]
    # Each game's sequence is shown, tile by tile, numbered from 1.
    shown = [int(line.split("▶")[1]) - 1 for line in printed.splitlines() if "▶" in line]
    assert shown == g[0] + g[1] + g[2] + g[3]
    assert "'x' is not a tile" in printed
    # Each line is typed 0.5 s after the one before, the first 0.5 s after the sequence has
    # been shown (tapsFrom = the game's start + span x playSpeed 1 s; the next game starts at
    # the tap that ended the one before): game 1 takes taps from 3 s, "x" is typed at 3.5 s,
    # the taps at 4.0; game 2 starts there and takes taps from 8.0: typed at 8.5; game 3
    # starts at 8.5, takes taps from 11.5: typed at 12.0; game 4 starts at 12.0, takes taps
    # from 16.0: typed at 16.5.
    assert run["typist"].read_at[:5] == [3500, 4000, 8500, 12000, 16500]
    assert r["type"] == "spatialSpanMemory"
    # ResearchKit's score, (round(log2 k) + 1) x 5 for the k-th right tap and for a whole
    # sequence of k: games 1 and 3 (span 3) 5 + 10 + 15 + 15 each, game 2's one right tap 5.
    assert r["score"] == 45 + 5 + 45
    assert r["numberOfGames"] == 4 and r["numberOfFailures"] == 2
    records = r["gameRecords"]
    assert [x["sequence"] for x in records] == g
    assert [x["gameStatus"] for x in records] == ["success", "failure", "success", "failure"]
    assert [[t["timestamp"] for t in x["touchSamples"]] for x in records] == [
        [4.0] * 3, [8.5] * 2, [12.0] * 3, [16.5]]
    assert [[t["targetIndex"] for t in x["touchSamples"]] for x in records] == [
        g[0], [g[1][0], wrong2], g[2], [wrong4]]
    assert [[t["correct"] for t in x["touchSamples"]] for x in records] == [
        [True] * 3, [True, False], [True] * 3, [False]]


PSAT = {"type": "psat", "identifier": "psat", "presentationMode": "visual",
        "interStimulusInterval": 2, "seriesLength": 4}


def test_psat_by_keyboard(tmp_path, monkeypatch, capsys):
    d = psat_digits(7, "psat", 4)
    sums = [a + b for a, b in zip(d, d[1:])]
    wrong = sums[3] + 1
    # Digit k is shown at 2k s; each line is typed 0.4 s after the presenter starts reading:
    # the sum for digit 1 (right, 0.4 s), Enter for digit 2 (its window closes unanswered at
    # 6 s), the sum for digit 3 (right), a wrong sum for digit 4 (the test is over).
    run = play(tmp_path, monkeypatch, capsys, PSAT, [str(sums[0]), "", str(sums[2]), str(wrong)], ms=400)
    printed, r = run["printed"], run["game"]
    shown = [int(m.group(2)) for m in re.finditer(r"digit (\d+): (\d)", printed)]
    assert shown == d
    assert run["typist"].read_at[:4] == [2400, 4400, 6400, 8400]
    assert r["initialDigit"] == d[0]
    assert r["presentationMode"] == "visual" and r["interStimulusInterval"] == 2 and r["length"] == 4
    assert r["totalCorrect"] == 2
    assert r["totalDyad"] == 0  # no two right answers in a row
    assert r["totalTime"] == pytest.approx(0.4 + 2 + 0.4 + 0.4)  # every sample; the missed digit its 2 s
    samples = r["samples"]
    assert [x["digit"] for x in samples] == d[1:]
    assert [x["answer"] for x in samples] == [sums[0], -1, sums[2], wrong]
    assert [x["correct"] for x in samples] == [True, False, True, False]
    assert [x["time"] for x in samples] == [pytest.approx(0.4), pytest.approx(2), pytest.approx(0.4), pytest.approx(0.4)]


STROOP = {"type": "stroop", "identifier": "stroop", "numberOfAttempts": 3}


def test_stroop_by_keyboard(tmp_path, monkeypatch, capsys):
    words = stroop_words(7, "stroop", 3)
    wrong = next(c for c in COLORS if c != words[1][1])
    lines = [
        words[0][1][0],                           # right: the initial
        wrong,                                    # wrong: a colour's name
        "purple",                                 # refused by the engine: nothing recorded
        str(COLORS.index(words[2][1]) + 1),       # right: the button's number
    ]
    run = play(tmp_path, monkeypatch, capsys, STROOP, lines, ms=700)
    printed, r = run["printed"], run["game"]
    assert re.findall(r"\d/3  ([A-Z]+)  \(printed in ([a-z]+)\)", printed) == [(w.upper(), c) for w, c in words]
    assert "  ! " in printed  # the refusal is shown
    assert r["numberOfAttempts"] == 3 and r["totalCorrect"] == 2
    attempts = r["attempts"]
    assert [(a["text"], a["color"]) for a in attempts] == words
    assert [a["colorSelected"] for a in attempts] == [words[0][1], wrong, words[2][1]]
    assert [a["correct"] for a in attempts] == [True, False, True]
    # typed at 0.7, 1.4, (2.1 refused), 2.8 s; each attempt starts when the one before is answered
    assert [(a["startTime"], a["endTime"]) for a in attempts] == [
        (0, pytest.approx(0.7)), (pytest.approx(0.7), pytest.approx(1.4)), (pytest.approx(1.4), pytest.approx(2.8))]


def test_start_by_hand_and_finish_early(tmp_path, monkeypatch, capsys):
    """A game that does not start by itself waits for Enter; :finish ends it as it stands, and
    one that does not continue by itself waits for Enter again."""
    words = stroop_words(7, "stroop", 2)
    step = dict(STROOP, numberOfAttempts=5, shouldStartTimerAutomatically=False, shouldContinueOnFinish=False)
    run = play(tmp_path, monkeypatch, capsys, step, ["", words[0][1], ":finish", ""], ms=1000)
    assert "[Enter to start]" in run["printed"] and "[Enter to continue]" in run["printed"]
    r = run["game"]
    assert r["numberOfAttempts"] == 1 and r["totalCorrect"] == 1
    assert [a["colorSelected"] for a in r["attempts"]] == [words[0][1]]
    # started at 1 s (Enter), answered at 2 s: the attempt ran 1 s of the step's time
    assert (r["attempts"][0]["startTime"], r["attempts"][0]["endTime"]) == (0, pytest.approx(1.0))


def test_games_from_an_answers_file(tmp_path):
    """The answers file gives a game step the lines typed; with --seed the result is the same
    every time (run twice, in a subprocess, on the CLI's own manual clock)."""
    words = stroop_words(11, "stroop", 3)
    task = write_json(tmp_path / "t.json", {"identifier": "t", "steps": [
        STROOP, {"type": "towerOfHanoi", "identifier": "hanoi", "numberOfDisks": 2},
        {"type": "completion", "identifier": "done"}]})
    answers = write_json(tmp_path / "a.json", {
        "stroop": [words[0][1], words[1][1][0].upper(), "4" if words[2][1] != "yellow" else "1"],
        "hanoi": ["1 2", "1 2", "1 3", "2 3"],  # the second is illegal (disk 2 onto disk 1): refused
    })
    results = []
    for k in range(2):
        out = tmp_path / f"r{k}.json"
        done = run_cli("run", str(task), "--answers", str(answers), "--seed", "11", "-o", str(out),
                       "--output-dir", str(tmp_path / f"o{k}"))
        assert done.returncode == 0, done.stderr + done.stdout
        results.append(load_json(out))
    games = [{r["identifier"]: r["results"][0] for r in res["results"] if r["results"]} for res in results]
    stroop, hanoi = games[0]["stroop"], games[0]["hanoi"]
    assert [a["correct"] for a in stroop["attempts"]] == [True, True, False]
    assert hanoi["puzzleWasSolved"] is True
    assert [(m["donorTowerIndex"], m["recipientTowerIndex"]) for m in hanoi["moves"]] == [(0, 1), (0, 2), (1, 2)]
    strip = lambda g: json.dumps({k: v for k, v in g.items() if k not in ("startDate", "endDate")}, sort_keys=True)
    assert strip(games[0]["stroop"]) == strip(games[1]["stroop"])


def test_too_late_is_not_taken(tmp_path, monkeypatch, capsys):
    """A line typed after the game's deadline (20 s without a right tap end a spatial span game,
    counted from tapsFrom, 3 s here) is not taken: the game is over as a timeout. The same for a
    PSAT answer typed after its digit's window closed."""
    step = dict(SPAN, maximumTests=1, maximumConsecutiveFailures=1)
    run = play(tmp_path, monkeypatch, capsys, step, [tiles(span_sequence(7, "span", 1, 3))], ms=20_500)
    assert "Too late" in run["printed"] and "Game 1 over: the time ran out." in run["printed"]
    r = run["game"]
    assert r["numberOfGames"] == 1 and r["numberOfFailures"] == 1 and r["score"] == 0
    assert r["gameRecords"][0]["gameStatus"] == "timeout"
    assert r["gameRecords"][0]["touchSamples"] == []
    d = psat_digits(7, "psat", 1)
    run = play(tmp_path, monkeypatch, capsys, dict(PSAT, seriesLength=1), [str(d[0] + d[1])], ms=2500)
    assert "Too late" in run["printed"]
    assert run["game"]["totalCorrect"] == 0 and run["game"]["samples"][0]["answer"] == -1
