"""Trail making, reaction time, two-finger tapping and hole peg through the binding
(docs/active-tasks.md), on a ManualClock.

Seeded layouts and delays are drawn here by a SECOND implementation of the documented streams
(tests/pcg32.py, written from docs/randomization.md), not by the library; every result field is
compared with values worked out by hand from the documented rules. The task, the result and the
restoration data of each game validate against schema/.
"""

import json
import math
from typing import Any, Dict, List, Tuple

import jsonschema
import pytest

import stepkit
from conftest import REPO, START_MS, load_json
from pcg32 import PCG32, fnv1a64
from test_games import game_result, open_game, send, task


def validator(name: str) -> Any:
    return jsonschema.Draft202012Validator(load_json(REPO / "schema" / name))


def check_schemas(step: Dict[str, Any], s: stepkit.Session) -> None:
    validator("task.schema.json").validate(task(step))
    validator("result.schema.json").validate(s.result)
    validator("restoration.schema.json").validate(json.loads(s.save()))


def trail_layout(seed: int, step: str) -> List[Tuple[float, float]]:
    """Target k sits in the k-th cell of the seeded order of the 4 x 6 grid's 24 cells."""
    cells = list(range(24))
    g = PCG32(seed, fnv1a64(step + "#trailmaking"))
    for i in range(len(cells) - 1, 0, -1):
        j = g.below(i + 1)
        cells[i], cells[j] = cells[j], cells[i]
    return [((c % 4 + 0.5) / 4, (c // 4 + 0.5) / 6) for c in cells[:13]]


TRAIL_B = {"type": "trailmaking", "identifier": "trail", "trailType": "B"}


@pytest.mark.parametrize("seed", [0, 7, 2**53 - 1])
def test_trail_layout_is_the_documented_draw(seed: int) -> None:
    _, s, _ = open_game(TRAIL_B, seed)
    targets = s.state["active"]["game"]["targets"]
    assert [(t["x"], t["y"]) for t in targets] == trail_layout(seed, "trail")
    assert [t["label"] for t in targets] == ["1", "A", "2", "B", "3", "C", "4", "D", "5", "E", "6", "F", "7"]
    assert len({(t["x"], t["y"]) for t in targets}) == 13


def test_trail_making_errors_timing_and_restore() -> None:
    t, s, clock = open_game(TRAIL_B)
    # Target 2 when 1 was next and 6 when 5 was are errors; the trail waits for the right one.
    taps = [(1000, 0), (1800, 2), (2500, 1), (3000, 2), (3500, 3), (4000, 4), (4200, 6), (4500, 5),
            (5000, 6), (5500, 7), (6000, 8), (6500, 9), (7000, 10), (7500, 11), (8000, 12)]
    with pytest.raises(stepkit.AnswerError) as refused:
        send(s, clock, 500, {"type": "tap", "target": 13})
    assert refused.value.errors[0]["code"] == "noSuchTarget"
    for at, target in taps[:7]:
        send(s, clock, at, {"type": "tap", "target": target})
    assert s.state["active"]["game"]["next"] == 5
    assert s.state["active"]["game"]["numberOfErrors"] == 2
    back = t.restore(s.save())
    back.set_clock(clock)
    assert back.state["active"] == s.state["active"]
    for at, target in taps[7:]:
        send(back, clock, at, {"type": "tap", "target": target})
    assert back.state["step"]["identifier"] == "done"
    r = game_result(back, "trail")
    assert r is not None
    assert r["type"] == "trailmaking" and r["trailType"] == "B"
    assert r["numberOfErrors"] == 2
    assert r["taps"] == [{"timestamp": at / 1000, "index": target, "incorrect": i in (1, 6)}
                         for i, (at, target) in enumerate(taps)]
    check_schemas(TRAIL_B, back)


def reaction_delays(seed: int, step: str, low_ms: int, high_ms: int, count: int) -> List[int]:
    """Each wait's delay: the minimum plus a number below (maximum - minimum + 1), in ms."""
    g = PCG32(seed, fnv1a64(step + "#reactionTime"))
    return [low_ms + g.below(high_ms - low_ms + 1) for _ in range(count)]


REACTION = {"type": "reactionTime", "identifier": "rt", "minimumStimulusInterval": 2, "maximumStimulusInterval": 4,
            "timeout": 1.5, "numberOfAttempts": 3, "thresholdAcceleration": 0.5,
            "successSound": 1013, "timeoutSound": 1005, "failureSound": 1006}


@pytest.mark.parametrize("seed", [7, 4242])
def test_reaction_time_attempts_timeouts_early_movement_and_restore(seed: int) -> None:
    t, s, clock = open_game(REACTION, seed)
    d = reaction_delays(seed, "rt", 2000, 4000, 4)
    assert s.state["active"]["game"]["stimulusAt"] == d[0] / 1000
    with pytest.raises(stepkit.AnswerError) as refused:
        send(s, clock, 100, {"type": "tap", "target": 0})
    assert refused.value.errors[0]["code"] == "wrongInput"
    send(s, clock, 1000, {"type": "sample", "x": 0.2, "y": -0.2, "z": 0.2})   # |a| < 0.5: nothing
    send(s, clock, 1500, {"type": "sample", "x": 0, "y": 0.5, "z": 0})        # at the threshold: early
    game = s.state["active"]["game"]
    assert game["lastOutcome"] == {"outcome": "early", "at": 1.5, "sound": 1006}
    stimulus1 = 1500 + d[1]                     # the wait started again at 1.5 s
    assert game["stimulusAt"] == stimulus1 / 1000 and game["stimulus"] is False
    clock.set(START_MS + stimulus1)
    s.tick()
    assert s.state["active"]["game"]["stimulus"] is True
    send(s, clock, stimulus1 + 420, {"type": "sample", "x": 0, "y": 0, "z": 1.1})  # response, 0.42 s
    stimulus2 = stimulus1 + 420 + d[2]
    timeout2 = stimulus2 + 1500
    clock.set(START_MS + timeout2)
    s.tick()                                                                 # attempt 2 timed out
    assert s.state["active"]["game"]["lastOutcome"] == {"outcome": "timeout", "at": timeout2 / 1000, "sound": 1005}
    back = t.restore(s.save())
    back.set_clock(clock)
    assert back.state["active"] == s.state["active"]
    stimulus3 = timeout2 + d[3]
    send(back, clock, stimulus3 + 1499, {"type": "sample", "x": -0.7, "y": 0, "z": 0})  # response, 1.499 s
    assert back.state["step"]["identifier"] == "done"
    r = game_result(back, "rt")
    assert r is not None
    assert r["numberOfAttempts"] == 3 and r["numberOfTimeouts"] == 1
    assert r["attempts"] == [
        {"timestamp": stimulus1 / 1000, "stimulusDelay": d[1] / 1000, "responseTime": 0.42, "timedOut": False, "earlyResponses": 1},
        {"timestamp": stimulus2 / 1000, "stimulusDelay": d[2] / 1000, "responseTime": None, "timedOut": True, "earlyResponses": 0},
        {"timestamp": stimulus3 / 1000, "stimulusDelay": d[3] / 1000, "responseTime": 1.499, "timedOut": False, "earlyResponses": 0},
    ]
    check_schemas(REACTION, back)


TAPPING = {"type": "tappingInterval", "identifier": "tap", "duration": 2.5, "hand": "left"}
LEFT, RIGHT = (50, 517, 100, 100), (225, 517, 100, 100)


def button_of(x: float, y: float) -> str:
    for name, (bx, by, w, h) in (("left", LEFT), ("right", RIGHT)):
        if bx <= x < bx + w and by <= y < by + h:
            return name
    return "none"


def test_two_finger_tapping_counts_and_restore() -> None:
    t, s, clock = open_game(TAPPING)
    game = s.state["active"]["game"]
    assert (game["buttonRect1"], game["buttonRect2"]) == (
        dict(zip(("x", "y", "width", "height"), LEFT)), dict(zip(("x", "y", "width", "height"), RIGHT)))
    touches = [(200, 0.0, 0.0, 0), (700, 100.0, 560.0, 40), (900, 275.0, 560.0, 0), (1100, 149.9, 616.9, 0),
               (1300, 225.0, 617.0, 0), (2000, 240.0, 530.0, 120), (3199, 70.0, 600.0, 0)]
    for at, x, y, held in touches[:3]:
        send(s, clock, at, {"type": "touch", "x": x, "y": y, "duration": held})
    back = t.restore(s.save())
    back.set_clock(clock)
    assert back.state["active"] == s.state["active"]
    for at, x, y, held in touches[3:]:
        send(back, clock, at, {"type": "touch", "x": x, "y": y, "duration": held})
    with pytest.raises(stepkit.AnswerError) as refused:
        send(back, clock, 3200, {"type": "touch", "x": 70, "y": 600})
    assert refused.value.errors[0]["code"] == "gameOver"
    check_schemas(TAPPING, back)
    back.tick()
    assert back.state["step"]["identifier"] == "done"
    r = game_result(back, "tap")
    assert r is not None
    # The first touch (on neither button, before the start) is no sample; the test runs 0.7-3.2 s.
    taken = touches[1:]
    names = [button_of(x, y) for _, x, y, _ in taken]
    assert names == ["left", "right", "left", "none", "right", "left"]
    assert r["samples"] == [{"timestamp": at / 1000, "duration": held / 1000, "buttonIdentifier": name,
                             "location": {"x": x, "y": y}} for (at, x, y, held), name in zip(taken, names)]
    assert (r["totalTaps"], r["leftTaps"], r["rightTaps"]) == (5, 3, 2)
    assert r["stepViewSize"] == {"width": 375, "height": 667}


def test_hole_peg_remove_and_place() -> None:
    step = {"type": "holePegTestRemove", "identifier": "peg", "numberOfPegs": 2, "movingDirection": "left",
            "threshold": 0.1, "dominantHand": True}
    t, s, clock = open_game(step)
    game = s.state["active"]["game"]
    # Removing leftwards: the peg starts in the hole at (0.75, 0.5) and goes to the spot (0.25, 0.5).
    assert game["hole"] == {"x": 0.75, "y": 0.5} and game["to"] == {"x": 0.25, "y": 0.5}
    send(s, clock, 900, {"type": "touch", "x": 0.375, "y": 0.5})        # 0.125 > 0.1 away: failure
    send(s, clock, 1600, {"type": "touch", "x": 0.25, "y": 0.5625})     # 0.0625 away: success, 1.6 s
    back = t.restore(s.save())
    back.set_clock(clock)
    assert back.state["active"] == s.state["active"]
    send(back, clock, 2100, {"type": "touch", "x": 0.1875, "y": 0.5, "rotation": 33})  # success, 0.5 s
    assert back.state["step"]["identifier"] == "done"
    r = game_result(back, "peg")
    assert r is not None
    d1 = math.sqrt((0.75 - 0.25) ** 2 + (0.5 - 0.5625) ** 2)
    assert r["samples"] == [{"time": 1.6, "distance": d1}, {"time": 0.5, "distance": 0.5625}]
    assert (r["totalSuccesses"], r["totalFailures"]) == (2, 1)
    assert r["totalTime"] == 2.1 and r["totalDistance"] == pytest.approx(d1 + 0.5625)
    assert (r["movingDirection"], r["dominantHand"], r["numberOfPegs"], r["threshold"], r["rotated"]) == ("left", True, 2, 0.1, False)
    check_schemas(step, back)
