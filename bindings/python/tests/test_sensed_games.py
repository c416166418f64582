"""The sensed predefined active tasks through the binding (docs/active-tasks.md): range of motion,
the Amsler grid and tone audiometry, on a ManualClock. Every result field is compared with values
worked out by hand from the documented rules (the formulas are written out here, not asked of the
library); a game saved in the middle restores and finishes with the same result.
"""

import json
import math
from typing import Any, Dict, List, Optional, Tuple

import jsonschema
import pytest

import stepkit
from conftest import REPO, START_MS
from pcg32 import PCG32, fnv1a64


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


def amsler_cells(points: List[Tuple[float, float]], n: int) -> List[List[int]]:
    """docs/active-tasks.md: the squares of the points, and those whose centres lie inside the
    closed polygon (even-odd), as [column, row], row by row."""
    marked = {(min(int(x * n), n - 1), min(int(y * n), n - 1)) for x, y in points}
    if len(points) >= 3:
        for row in range(n):
            cy = (row + 0.5) / n
            for col in range(n):
                cx = (col + 0.5) / n
                inside = False
                j = len(points) - 1
                for i, (ax, ay) in enumerate(points):
                    bx, by = points[j]
                    if (ay > cy) != (by > cy) and cx < (bx - ax) * (cy - ay) / (by - ay) + ax:
                        inside = not inside
                    j = i
                if inside:
                    marked.add((col, row))
    return [[c, r] for c, r in sorted(marked, key=lambda cr: (cr[1], cr[0]))]


# A triangle on a 4 x 4 grid: corners (0.1, 0.1), (0.95, 0.1), (0.1, 0.95). By hand: the squares'
# centres are 0.125, 0.375, 0.625, 0.875 along each side; those inside (x + y < 1.05) are the
# squares with column + row <= 3 (centre sums 0.25 ... 1.0), ten squares, which hold the corners'
# squares (0, 0), (3, 0) and (0, 3) too.
TRIANGLE = [(0.1, 0.1), (0.95, 0.1), (0.1, 0.95)]
TRIANGLE_CELLS = [[0, 0], [1, 0], [2, 0], [3, 0], [0, 1], [1, 1], [2, 1], [0, 2], [1, 2], [0, 3]]
AMSLER_INPUTS: List[Tuple[int, Dict[str, Any]]] = (
    [(1000 + 100 * i, {"type": "sample", "x": x, "y": y, "z": 0}) for i, (x, y) in enumerate(TRIANGLE)]
    + [(1500, {"type": "key", "key": "lift"}),
       (2000, {"type": "sample", "x": 0.8, "y": 0.8, "z": 0}),
       (2500, {"type": "key", "key": "done"})]
)


def check_amsler(r: Optional[Dict[str, Any]]) -> None:
    assert r is not None and r["type"] == "amslerGrid"
    assert amsler_cells(TRIANGLE, 4) == TRIANGLE_CELLS
    assert r["eyeSide"] == "left" and r["gridSize"] == 4
    assert r["numberOfAreas"] == 2 and r["cleared"] == 0 and r["finished"] is True
    first, second = r["areas"]
    assert first["cells"] == TRIANGLE_CELLS
    assert first["points"] == [list(p) for p in TRIANGLE]
    assert (first["startTime"], first["endTime"]) == (1, 1.2)
    assert first["bounds"] == {"minX": 0.1, "minY": 0.1, "maxX": 0.95, "maxY": 0.95}
    assert second["cells"] == [[3, 3]]
    assert r["markedCells"] == TRIANGLE_CELLS + [[3, 3]]


def test_amsler_grid_from_a_recorded_drawing() -> None:
    t, s, clock = open_game({"type": "amslerGrid", "identifier": "amsler", "eyeSide": "left", "gridSize": 4})
    play(s, clock, AMSLER_INPUTS[:2])
    back = restored(t, s, clock)   # saved while the triangle is being drawn
    clock.set(START_MS + 1300)
    with pytest.raises(stepkit.AnswerError) as refused:
        back.input({"type": "sample", "x": -0.1, "y": 0.5, "z": 0})
    assert refused.value.errors[0]["code"] == "outOfGrid"
    play(back, clock, AMSLER_INPUTS[2:])
    assert back.state["step"]["identifier"] == "done"
    check_amsler(game_result(back, "amsler"))
    play(s, clock, AMSLER_INPUTS[2:])
    check_amsler(game_result(s, "amsler"))


def staircase(responses: List[bool], initial: int = 30, up: int = 5, down: int = 10,
              lowest: int = -10, highest: int = 75) -> Tuple[List[Tuple[int, bool]], Optional[int]]:
    """docs/active-tasks.md's staircase, written again: (level, ascending) per presentation and
    the threshold, for the given responses (True: heard)."""
    level, ascending, tallies, units = initial, False, {}, []
    for heard in responses:
        units.append((level, ascending))
        if ascending or level == lowest:
            presented, responded = tallies.get(level, (0, 0))
            tallies[level] = (presented + 1, responded + heard)
            if heard and responded + 1 == 2 and presented + 1 <= 3:
                return units, level
        if heard:
            level, ascending = max(level - down, lowest), False
        elif level >= highest:
            return units, None
        else:
            level, ascending = min(level + up, highest), True
    return units, None


def test_tone_audiometry_staircase_with_seeded_delays() -> None:
    t, s, clock = open_game({"type": "toneAudiometry", "identifier": "hear", "earPreference": "left",
                             "frequencyList": [4000], "initialdBHLValue": 40, "dBHLStepDownSize": 20})
    g = PCG32(7, fnv1a64("hear#audiometry"))
    # By hand (down 20, up 5, minimum -10): 40 heard -> 20 heard -> 0 missed -> 5 asc missed
    # (5: 0/1) -> 10 asc heard (10: 1/1) -> -10 missed (the minimum is tallied: 0/1) -> -5 asc
    # heard (-5: 1/1) -> -10 missed (0/2) -> -5 asc heard (-5: 2/2): the threshold is -5.
    responses = [True, True, False, False, True, False, True, False, True]
    expected, threshold = staircase(responses, initial=40, down=20)
    assert threshold == -5
    assert [level for level, _ in expected] == [40, 20, 0, 5, 10, -10, -5, -10, -5]
    start = 0
    for i, heard in enumerate(responses[:len(expected)]):
        if i == 4:
            s = restored(t, s, clock)
        delay = g.below(2001)
        state = s.state["active"]["game"]
        assert (state["level"], state["startedAt"] * 1000, state["toneAt"] * 1000) == (expected[i][0], pytest.approx(start), pytest.approx(start + delay))
        if heard:
            start = start + delay + 300
            play(s, clock, [(start, {"type": "tap", "target": 0})])
        else:
            start = start + delay + 2000
            clock.set(START_MS + start)
            s.tick()
    r = game_result(s, "hear")
    assert r is not None
    sample = r["samples"][0]
    assert (sample["channel"], sample["frequency"], sample["calculatedThreshold"]) == ("left", 4000, threshold)
    assert [(u["dBHLValue"], u["ascending"]) for u in sample["units"]] == expected
    assert [u["responded"] for u in sample["units"]] == responses[:len(expected)]
    assert s.state["step"]["identifier"] == "done"


def test_the_schemas_take_these_steps_and_their_results() -> None:
    def validator(name: str) -> Any:
        return jsonschema.Draft202012Validator(json.loads((REPO / "schema" / name).read_text(encoding="utf-8")))

    task_schema, result_schema = validator("task.schema.json"), validator("result.schema.json")
    steps = [
        {"type": "rangeOfMotion", "identifier": "rom", "joint": "shoulder", "limbOption": "right"},
        {"type": "amslerGrid", "identifier": "amsler", "eyeSide": "left", "gridSize": 4},
        {"type": "toneAudiometry", "identifier": "hear", "frequencyList": [1000, 500], "earPreference": "left",
         "maxRandomPreStimulusDelay": 0.5, "dBHLStepDownSize": 20},
        {"type": "sensorTask", "identifier": "walk", "task": "shortWalk", "numberOfStepsPerLeg": 10, "options": ["excludePedometer"]},
        {"type": "sensorTask", "identifier": "tremor", "task": "tremor", "handOptions": "left", "activeStepDuration": 5},
    ]
    definition = {"identifier": "sensed", "steps": steps}
    assert list(task_schema.iter_errors(definition)) == []
    stepkit.Task.from_json(definition)  # the engine takes what the schema takes
    for bad in [{"type": "sensorTask", "identifier": "x", "task": "marathon"},
                {"type": "toneAudiometry", "identifier": "x", "frequencyList": []},
                {"type": "amslerGrid", "identifier": "x", "eyeSide": "both"}]:
        assert list(task_schema.iter_errors({"identifier": "t", "steps": [bad]})) != []
        with pytest.raises(stepkit.DefinitionError):
            stepkit.Task.from_json({"identifier": "t", "steps": [bad]})
    for step, inputs in [(steps[0], ROM_INPUTS), (steps[1], AMSLER_INPUTS)]:
        _, s, clock = open_game(step)
        play(s, clock, inputs)
        assert list(result_schema.iter_errors(s.result)) == []


# docs/active-tasks.md, "Sensor task templates": (step, type, duration in s) in order, and each
# recorder as (step, type) with its identifier "<step>.<type>".
MOTION = ["accelerometer", "deviceMotion"]
TEMPLATES = {
    "shortWalk": ({}, [("instruction0", "instruction", None), ("instruction1", "instruction", None), ("countdown", "countdown", 5),
                       ("walking.outbound", "active", 100), ("walking.return", "active", 100), ("walking.rest", "active", 20),
                       ("conclusion", "completion", None)],
                  {"walking.outbound": MOTION + ["pedometer"], "walking.return": MOTION + ["pedometer"], "walking.rest": MOTION}),
    "fitnessCheck": ({"walkDuration": 60, "restDuration": 30},
                     [("instruction0", "instruction", None), ("instruction1", "instruction", None), ("countdown", "countdown", 5),
                      ("fitness.walk", "active", 60), ("fitness.rest", "active", 30), ("conclusion", "completion", None)],
                     {"fitness.walk": ["pedometer"] + MOTION + ["location", "heartRate"], "fitness.rest": MOTION + ["heartRate"]}),
    "audio": ({"options": ["excludeInstructions"]}, [("countdown", "countdown", 5), ("audio", "active", 20), ("conclusion", "completion", None)],
              {"audio": ["audio"]}),
}


@pytest.mark.parametrize("name", sorted(TEMPLATES))
def test_sensor_templates_expand_to_the_documented_steps(name: str) -> None:
    params, steps, recorders = TEMPLATES[name]
    info = stepkit.Task.from_json({"identifier": "t", "steps": [{"type": "sensorTask", "task": name, "identifier": "x", **params}]}).info
    assert [(s["identifier"], s["type"], s.get("stepDuration")) for s in info["steps"]] == [("x." + i, k, d) for i, k, d in steps]
    assert info["sections"] == [{"identifier": "x", "steps": ["x." + i for i, _, _ in steps]}]
    expected = [("x." + step + "." + kind, kind, "x." + step) for step, kinds in recorders.items() for kind in kinds]
    assert sorted((r["identifier"], r["type"], r["step"]) for r in info["recorders"]) == sorted(expected)
