"""The sensed predefined active tasks through the binding (docs/active-tasks.md): range of motion,
the Amsler grid and tone audiometry, on a ManualClock. Every result field is compared with values
worked out by hand from the documented rules (the formulas are written out here, not asked of the
library); a game saved in the middle restores and finishes with the same result.
"""

import math
from typing import Any, Dict, List, Optional, Tuple

import pytest

import stepkit
from conftest import START_MS


def open_game(step: Dict[str, Any], seed: int = 7) -> Tuple[stepkit.Task, stepkit.Session, stepkit.ManualClock]:
    t = stepkit.Task.from_json({"identifier": "games", "steps": [step, {"type": "completion", "identifier": "done"}]})
    s = t.open({"seed": seed})
    clock = stepkit.ManualClock(START_MS)
    s.set_clock(clock)
    return t, s, clock


def play(s: stepkit.Session, clock: stepkit.ManualClock, inputs: List[Tuple[int, Dict[str, Any]]]) -> None:
    for at, event in inputs:
        clock.set(START_MS + at)
        s.input(event)


def restored(t: stepkit.Task, s: stepkit.Session, clock: stepkit.ManualClock) -> stepkit.Session:
    back = t.restore(s.save())
    back.set_clock(clock)
    assert back.state["active"] == s.state["active"]
    return back


def game_result(s: stepkit.Session, step: str) -> Optional[Dict[str, Any]]:
    for entry in s.result["results"]:
        if entry["identifier"] == step:
            return entry["results"][0]
    return None


def pitch(x: float, y: float, z: float, w: float) -> float:
    """docs/active-tasks.md: the normalized quaternion's atan2(2(wx + yz), 1 - 2(x^2 + z^2)), degrees."""
    n = math.sqrt(x * x + y * y + z * z + w * w)
    x, y, z, w = x / n, y / n, z / n, w / n
    return math.degrees(math.atan2(2 * (w * x + y * z), 1 - 2 * (x * x + z * z)))


# A knee test: angles 70 and 20 degrees directly, a quaternion of 30 degrees about x
# (sin 15, cos 15), one of the yz term, then the finishing tap at 3 s.
Q30 = (math.sin(math.radians(15)), 0.0, 0.0, math.cos(math.radians(15)))
ROM_INPUTS: List[Tuple[int, Dict[str, Any]]] = [
    (500, {"type": "sample", "x": 70, "y": 0, "z": 0}),
    (1000, {"type": "sample", "x": Q30[0], "y": 0, "z": 0, "w": Q30[3]}),
    (1500, {"type": "sample", "x": 0.5, "y": 0.5, "z": 0.5, "w": 0.5}),
    (2000, {"type": "sample", "x": 20, "y": 0, "z": 0}),
    (3000, {"type": "tap", "target": 0}),
]


def check_knee(r: Optional[Dict[str, Any]]) -> None:
    assert r is not None and r["type"] == "rangeOfMotion"
    angles = [70.0, pitch(*Q30), pitch(0.5, 0.5, 0.5, 0.5), 20.0]
    assert angles[1] == pytest.approx(30.0) and angles[2] == pytest.approx(90.0)
    assert r["numberOfSamples"] == 4
    assert r["start"] == 70 and r["finish"] == 20
    assert r["minimum"] == 20 and r["maximum"] == pytest.approx(90.0)
    assert r["range"] == pytest.approx(70.0)
    assert (r["flexed"], r["extended"]) == (70, 20)
    assert r["finished"] is True and r["finishTime"] == 3


def test_range_of_motion_from_recorded_samples() -> None:
    _, s, clock = open_game({"type": "rangeOfMotion", "identifier": "rom", "joint": "knee"})
    clock.set(START_MS + 100)
    with pytest.raises(stepkit.AnswerError) as refused:
        s.input({"type": "tap", "target": 0})
    assert refused.value.errors[0]["code"] == "notYet"
    play(s, clock, ROM_INPUTS)
    assert s.state["step"]["identifier"] == "done"
    check_knee(game_result(s, "rom"))


def test_range_of_motion_saved_mid_test_finishes_the_same() -> None:
    t, s, clock = open_game({"type": "rangeOfMotion", "identifier": "rom", "joint": "knee"})
    play(s, clock, ROM_INPUTS[:2])
    back = restored(t, s, clock)
    play(back, clock, ROM_INPUTS[2:])
    check_knee(game_result(back, "rom"))
