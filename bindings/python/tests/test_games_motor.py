"""Trail making, reaction time, two-finger tapping and hole peg through the binding
(docs/active-tasks.md), on a ManualClock.

Seeded layouts and delays are drawn here by a SECOND implementation of the documented streams
(tests/pcg32.py, written from docs/randomization.md), not by the library; every result field is
compared with values worked out by hand from the documented rules. The task, the result and the
restoration data of each game validate against schema/.
"""

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
    validator("restoration.schema.json").validate(__import__("json").loads(s.save()))


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
