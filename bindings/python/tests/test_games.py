"""The predefined active tasks' games through the binding (stepkit_session_input,
docs/active-tasks.md), on a ManualClock.

The seeded sequences are checked against a SECOND implementation of the draws, written here from
docs/randomization.md (PCG32, FNV-1a 64 stream names, Fisher-Yates with the bounded draw) and
docs/active-tasks.md (each game's stream and draws) alone: it does not call the library. Every
result field is compared with values worked out by hand from the documented rules.
"""

import copy
import json
import math
from typing import Any, Dict, List, Optional, Tuple

import pytest

import stepkit
from conftest import START_MS
from pcg32 import PCG32, fnv1a64


def span_side(span: int) -> int:
    n = 2
    while n < 6 and n * n < 2 * span:
        n += 1
    return n


def span_sequence(seed: int, step: str, number: int, span: int) -> List[int]:
    tiles = list(range(span_side(span) ** 2))
    g = PCG32(seed, fnv1a64(f"{step}#game{number}"))
    for i in range(len(tiles) - 1, 0, -1):
        j = g.below(i + 1)
        tiles[i], tiles[j] = tiles[j], tiles[i]
    return tiles[:span]


def psat_digits(seed: int, step: str, length: int) -> List[int]:
    g = PCG32(seed, fnv1a64(step + "#psat"))
    digits = [1 + g.below(9)]
    for _ in range(length):
        r = 1 + g.below(8)
        digits.append(r + 1 if r >= digits[-1] else r)
    return digits


COLORS = ["red", "green", "blue", "yellow"]


def stroop_words(seed: int, step: str, count: int) -> List[Tuple[str, str]]:
    g = PCG32(seed, fnv1a64(step + "#stroop"))
    words = []
    for _ in range(count):
        text = COLORS[g.below(4)]
        color = COLORS[g.below(4)]
        words.append((text, color))
    return words


def task(step: Dict[str, Any]) -> Dict[str, Any]:
    return {"identifier": "games", "steps": [step, {"type": "completion", "identifier": "done"}]}


def open_game(step: Dict[str, Any], seed: int = 7) -> Tuple[stepkit.Task, stepkit.Session, stepkit.ManualClock]:
    t = stepkit.Task.from_json(task(step))
    s = t.open({"seed": seed})
    clock = stepkit.ManualClock(START_MS)
    s.set_clock(clock)
    return t, s, clock


def send(s: stepkit.Session, clock: stepkit.ManualClock, at: int, event: Dict[str, Any]) -> Dict[str, Any]:
    clock.set(START_MS + at)
    return s.input(event)


def game_result(s: stepkit.Session, step: str) -> Optional[Dict[str, Any]]:
    for entry in s.result["results"]:
        if entry["identifier"] == step:
            return entry["results"][0]
    return None


SPAN = {"type": "spatialSpanMemory", "identifier": "span", "initialSpan": 3, "minimumSpan": 2,
        "maximumSpan": 5, "maximumTests": 4, "maximumConsecutiveFailures": 2}


@pytest.mark.parametrize("seed", [0, 7, 12345, 2**53 - 1])
def test_the_engine_draws_the_documented_sequences(seed: int) -> None:
    _, s, _ = open_game({"type": "spatialSpanMemory", "identifier": "span", "initialSpan": 5, "maximumSpan": 15})
    s.close()
    _, s, _ = open_game({"type": "spatialSpanMemory", "identifier": "span", "initialSpan": 5, "maximumSpan": 15}, seed)
    assert s.state["active"]["game"]["sequence"] == span_sequence(seed, "span", 1, 5)
    _, p, _ = open_game({"type": "psat", "identifier": "p", "seriesLength": 60}, seed)
    digits = p.state["active"]["game"]["digits"]
    assert digits == psat_digits(seed, "p", 60)
    assert all(1 <= d <= 9 for d in digits) and all(a != b for a, b in zip(digits, digits[1:]))
    _, w, _ = open_game({"type": "stroop", "identifier": "w", "numberOfAttempts": 1}, seed)
    game = w.state["active"]["game"]
    assert (game["text"], game["color"]) == stroop_words(seed, "w", 1)[0]


def play_span(s: stepkit.Session, clock: stepkit.ManualClock, seed: int, taps: List[Tuple[int, int]]) -> None:
    for at, target in taps:
        send(s, clock, at, {"type": "tap", "target": target})


def span_taps(seed: int) -> List[Tuple[int, int]]:
    """Games 1-4 worked out from the rules: success (span 3 -> 4), failure on the second tap
    (4 -> 3), success (3 -> 4), failure on the first tap; each sequence shown one tile a second
    from the moment the game before ended, taps taken once it has been shown."""
    g1 = span_sequence(seed, "span", 1, 3)
    g2 = span_sequence(seed, "span", 2, 4)
    g3 = span_sequence(seed, "span", 3, 3)
    g4 = span_sequence(seed, "span", 4, 4)
    wrong2 = next(t for t in range(9) if t != g2[1])
    wrong4 = next(t for t in range(9) if t != g4[0])
    return [(3500, g1[0]), (4000, g1[1]), (4500, g1[2]),
            (9000, g2[0]), (9500, wrong2),
            (13000, g3[0]), (13500, g3[1]), (14000, g3[2]),
            (18500, wrong4)]


def span_points(k: int) -> int:
    """ResearchKit's points for the k-th right tap of a sequence and for a whole sequence of k:
    (round(log2 k) + 1) * 5, rounding half away from zero (never a tie for whole k)."""
    return (math.floor(math.log2(k) + 0.5) + 1) * 5


def check_span(result: Optional[Dict[str, Any]], seed: int) -> None:
    assert result is not None
    assert result["type"] == "spatialSpanMemory"
    whole3 = sum(span_points(k) for k in (1, 2, 3)) + span_points(3)
    assert result["score"] == whole3 + span_points(1) + whole3
    assert result["numberOfGames"] == 4
    assert result["numberOfFailures"] == 2
    records = result["gameRecords"]
    assert [r["gameStatus"] for r in records] == ["success", "failure", "success", "failure"]
    assert [r["sequence"] for r in records] == [span_sequence(seed, "span", k, n) for k, n in [(1, 3), (2, 4), (3, 3), (4, 4)]]
    assert [r["score"] for r in records] == [whole3, span_points(1), whole3, 0]
    assert [r["gameSize"] for r in records] == [9, 9, 9, 9]
    assert [r["stream"] for r in records] == ["span#game1", "span#game2", "span#game3", "span#game4"]
    assert [t["timestamp"] for t in records[0]["touchSamples"]] == [3.5, 4.0, 4.5]
    assert [t["correct"] for t in records[1]["touchSamples"]] == [True, False]


@pytest.mark.parametrize("seed", [7, 99])
def test_spatial_span_from_recorded_taps(seed: int) -> None:
    _, s, clock = open_game(SPAN, seed)
    play_span(s, clock, seed, span_taps(seed))
    assert s.state["step"]["identifier"] == "done"
    check_span(game_result(s, "span"), seed)


def test_spatial_span_saved_mid_game_finishes_the_same() -> None:
    t, s, clock = open_game(SPAN)
    taps = span_taps(7)
    play_span(s, clock, 7, taps[:4])
    saved = s.save()
    back = t.restore(saved)
    back.set_clock(clock)
    assert back.state["active"] == s.state["active"]
    play_span(back, clock, 7, taps[4:])
    check_span(game_result(back, "span"), 7)


def test_refused_inputs_change_nothing() -> None:
    _, s, clock = open_game(SPAN)
    clock.set(START_MS + 1000)
    before = s.state
    with pytest.raises(stepkit.AnswerError) as refused:
        s.input({"type": "tap", "target": 4})
    assert refused.value.errors[0]["code"] == "sequencePlaying"
    with pytest.raises(stepkit.InvalidArgumentError):
        s.input({"type": "tap"})
    with pytest.raises(stepkit.InvalidArgumentError):
        s.input({"type": "tap", "target": 1, "time": START_MS + 5000})
    with pytest.raises(TypeError):
        s.input([1])  # type: ignore[arg-type]
    assert s.state == before


def test_psat_windows_dyads_and_time() -> None:
    _, s, clock = open_game({"type": "psat", "identifier": "psat", "presentationMode": "auditoryAndVisual",
                             "interStimulusInterval": 2, "seriesLength": 4})
    digits = psat_digits(7, "psat", 4)
    sums = [a + b for a, b in zip(digits, digits[1:])]
    send(s, clock, 2600, {"type": "key", "key": str(sums[0])})       # right, 0.6 s after digit 1
    clock.set(START_MS + 6000)
    s.tick()                                                          # digit 2 missed
    send(s, clock, 6400, {"type": "key", "key": str(sums[2])})       # right, 0.4 s
    send(s, clock, 8300, {"type": "tap", "target": sums[3] + 1})     # wrong
    r = game_result(s, "psat")
    assert r is not None
    assert r["presentationMode"] == "auditoryAndVisual"
    assert r["initialDigit"] == digits[0]
    assert r["totalCorrect"] == 2
    assert r["totalDyad"] == 0
    assert r["totalTime"] == pytest.approx(0.6 + 2 + 0.4 + 0.3)  # every sample; a missed digit its 2 s
    assert [x["answer"] for x in r["samples"]] == [sums[0], -1, sums[2], sums[3] + 1]
    assert [x["correct"] for x in r["samples"]] == [True, False, True, False]
    assert [x["digit"] for x in r["samples"]] == digits[1:]


def test_stroop_and_hanoi() -> None:
    _, s, clock = open_game({"type": "stroop", "identifier": "stroop", "numberOfAttempts": 3})
    words = stroop_words(7, "stroop", 3)
    send(s, clock, 1000, {"type": "key", "key": words[0][1]})                  # right
    send(s, clock, 2000, {"type": "key", "key": words[1][1][0].upper()})       # right, by initial
    wrong = next(c for c in COLORS if c != words[2][1])
    send(s, clock, 3500, {"type": "tap", "target": COLORS.index(wrong)})       # wrong
    r = game_result(s, "stroop")
    assert r is not None and r["totalCorrect"] == 2
    assert [(a["text"], a["color"]) for a in r["attempts"]] == words
    assert [(a["startTime"], a["endTime"]) for a in r["attempts"]] == [(0, 1), (1, 2), (2, 3.5)]
    assert r["attempts"][2]["colorSelected"] == wrong

    _, h, clock = open_game({"type": "towerOfHanoi", "identifier": "hanoi", "numberOfDisks": 3})
    # The seven moves of the three-disk solution onto tower 2.
    moves = [(0, 2), (0, 1), (2, 1), (0, 2), (1, 0), (1, 2), (0, 2)]
    for i, (a, b) in enumerate(moves):
        if i == 1:
            with pytest.raises(stepkit.AnswerError):
                h.input({"type": "drag", "from": 0, "to": 2})  # disk 2 onto disk 1
        send(h, clock, 1000 * (i + 1), {"type": "drag", "from": a, "to": b})
    r = game_result(h, "hanoi")
    assert r is not None and r["puzzleWasSolved"] is True
    assert [(m["donorTowerIndex"], m["recipientTowerIndex"]) for m in r["moves"]] == moves
    assert h.state["step"]["identifier"] == "done"


def test_verify_recomputes_a_game_from_its_recorded_inputs() -> None:
    """Issue 35: a game's result is recomputed from the inputs it records; the genuine result
    verifies, a forged score is refused naming the field (docs/active-tasks.md, docs/verify.md)."""
    t, s, clock = open_game({"type": "stroop", "identifier": "stroop", "numberOfAttempts": 3})
    words = stroop_words(7, "stroop", 3)
    send(s, clock, 1000, {"type": "key", "key": words[0][1]})                  # right
    wrong = next(c for c in COLORS if c != words[1][1])
    send(s, clock, 2000, {"type": "tap", "target": COLORS.index(wrong)})       # wrong
    send(s, clock, 3500, {"type": "key", "key": words[2][1]})                  # right
    result = s.result
    game = result["results"][0]["results"][0]
    assert game["totalCorrect"] == 2
    assert game["recorded"] == {"inputs": [{"type": "key", "at": 1000, "key": words[0][1]},
                                           {"type": "tap", "at": 2000, "target": COLORS.index(wrong)},
                                           {"type": "key", "at": 3500, "key": words[2][1]}],
                                "time": 3500}
    report = t.verify(result)
    assert report["verified"] is True, report["divergences"]
    assert report["result"]["results"][0]["results"][0] == game

    forged = copy.deepcopy(result)
    forged["results"][0]["results"][0]["totalCorrect"] = 3
    report = t.verify(forged)
    assert report["verified"] is False
    assert [(d["code"], d["path"]) for d in report["divergences"]] == [
        ("gameMismatch", "results[0].results[0].totalCorrect")]
    assert "totalCorrect" in report["divergences"][0]["message"]
    # the report's result is the engine's game, not the forged one
    assert report["result"]["results"][0]["results"][0]["totalCorrect"] == 2

    forged = copy.deepcopy(result)
    forged["results"][0]["results"][0]["attempts"][1]["correct"] = True
    report = t.verify(forged)
    assert [(d["code"], d["path"]) for d in report["divergences"]] == [
        ("gameMismatch", "results[0].results[0].attempts")]

    # another seed draws other words: the recorded keys no longer give the submitted fields
    forged = copy.deepcopy(result)
    other = next(seed for seed in range(1, 100) if stroop_words(seed, "stroop", 3) != words)
    forged["randomization"]["seed"] = other
    report = t.verify(forged)
    assert report["verified"] is False
    assert "gameMismatch" in {d["code"] for d in report["divergences"]}

    forged = copy.deepcopy(result)
    del forged["results"][0]["results"][0]["recorded"]
    report = t.verify(forged)
    assert [(d["code"], d["path"]) for d in report["divergences"]] == [
        ("gameMismatch", "results[0].results[0].recorded")]

    # a recorded input the game does not take
    forged = copy.deepcopy(result)
    forged["results"][0]["results"][0]["recorded"]["inputs"][1] = {"type": "drag", "at": 2000, "from": 0, "to": 1}
    report = t.verify(forged)
    codes = [(d["code"], d["path"]) for d in report["divergences"]]
    assert codes == [("gameMismatch", "results[0].results[0].recorded.inputs")], codes


def test_verify_recomputes_a_game_without_a_seed() -> None:
    """The tower of Hanoi draws nothing: its moves alone give its result."""
    t, h, clock = open_game({"type": "towerOfHanoi", "identifier": "hanoi", "numberOfDisks": 2})
    for i, (a, b) in enumerate([(0, 1), (0, 2), (1, 2)]):
        send(h, clock, 1000 * (i + 1), {"type": "drag", "from": a, "to": b})
    result = h.result
    assert t.verify(result)["verified"] is True
    forged = copy.deepcopy(result)
    forged["results"][0]["results"][0]["puzzleWasSolved"] = False
    report = t.verify(forged)
    assert [(d["code"], d["path"]) for d in report["divergences"]] == [
        ("gameMismatch", "results[0].results[0].puzzleWasSolved")]
