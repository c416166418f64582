"""Active tasks through the real library: timed steps, countdowns, wait steps, prompts, recorders,
async actions, events, task-level suspend, save/restore, the real-time driver and the CLI.

Every test but the real-time ones runs on a ManualClock: a whole walk takes microseconds.
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
import threading
import time
import weakref
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple

import pytest

import stepkit
from stepkit.clock import iso8601_ms, parse_iso8601_ms, system_time_ms

from conftest import EXAMPLES, START_MS, run_cli, write_json

RUN = "0b3f1c2e-8d4a-4f6b-9c1d-2e3f4a5b6c7d"

# The Swift tests' walk: instruction, countdown (5 s, spoken), a 60 s walk that starts and
# continues by itself with two recorders and every prompt, a 30 s rest the host starts, done;
# a GPS async action from the countdown to the rest.
WALK: Dict[str, Any] = {
    "identifier": "walk",
    "steps": [
        {"type": "instruction", "identifier": "intro", "title": "Short walk"},
        {"type": "countdown", "identifier": "countdown", "shouldSpeakCountDown": True},
        {
            "type": "active",
            "identifier": "walking",
            "stepDuration": 60,
            "shouldStartTimerAutomatically": True,
            "shouldContinueOnFinish": True,
            "shouldSpeakRemainingTimeAtHalfway": True,
            "shouldSpeakCountDown": True,
            "spokenInstruction": "Walk up to 20 steps in a straight line.",
            "finishedSpokenInstruction": "Stop walking.",
            "shouldVibrateOnStart": True,
            "shouldPlaySoundOnFinish": True,
            "recorderConfigurations": [
                {"type": "accelerometer", "identifier": "accel", "frequency": 100},
                {"type": "pedometer", "identifier": "pedometer"},
            ],
        },
        {"type": "active", "identifier": "rest", "stepDuration": 30},
        {"type": "completion", "identifier": "done"},
    ],
    "asyncActions": [
        {
            "type": "location",
            "identifier": "gps",
            "startStepIdentifier": "countdown",
            "stopStepIdentifier": "rest",
        }
    ],
}


def at(offset_ms: int) -> str:
    return iso8601_ms(START_MS + offset_ms)


def closing_prompts(start_ms: int, seconds: int, finished: str) -> List[Tuple[str, str, Optional[str], str]]:
    """The prompts a timed step with every prompt on gives toward its end, as ResearchKit's
    active step does (docs/reference.md, `active`): the time remaining at halfway, the last three
    seconds counted down, then the finished instruction and the finish sound at the end."""
    end = start_ms + seconds * 1000
    return [
        ("speak", "halfway", f"{seconds // 2} seconds remaining", at(start_ms + seconds * 500)),
        *[("speak", "countDown", str(n), at(end - n * 1000)) for n in (3, 2, 1)],
        ("speak", "finishedSpokenInstruction", finished, at(end)),
        ("playSound", "finish", None, at(end)),
    ]


def types(events: List[Dict[str, Any]]) -> List[str]:
    return [e["type"] for e in events]


@pytest.fixture
def walk_task() -> Any:
    with stepkit.Task.from_json(WALK) as compiled:
        yield compiled


@pytest.fixture
def out_dir(tmp_path: Path) -> Path:
    directory = tmp_path / "out"
    directory.mkdir()
    return directory


Walk = Tuple[stepkit.Session, stepkit.ManualClock]


@pytest.fixture
def walk(walk_task: stepkit.Task, out_dir: Path) -> Iterator[Walk]:
    """The walk task's session (recording into out_dir) and its clock; closed after the test."""
    session, clock = open_walk(walk_task, out_dir)
    with session:
        yield session, clock


def after_an_instruction(identifier: str, *steps: Dict[str, Any]) -> Dict[str, Any]:
    """A task: an instruction ("i"), then `steps`."""
    return {"identifier": identifier, "steps": [{"type": "instruction", "identifier": "i"}, *steps]}


@contextlib.contextmanager
def walk_of(definition: Dict[str, Any], out_dir: Path) -> Iterator[Walk]:
    """A session of `definition` (recording into out_dir) and its clock, closed with its task."""
    with stepkit.Task.from_json(definition) as task:
        session, clock = open_walk(task, out_dir)
        with session:
            yield session, clock


def open_walk(
    task: stepkit.Task, out_dir: Optional[Path], **options: Any
) -> Tuple[stepkit.Session, stepkit.ManualClock]:
    opts: Dict[str, Any] = {"taskRunUUID": RUN, **options}
    if out_dir is not None:
        opts["outputDirectory"] = str(out_dir)
    session = task.open(opts)
    clock = stepkit.ManualClock(START_MS)
    session.set_clock(clock)
    return session, clock


def to_walking(session: stepkit.Session, clock: stepkit.ManualClock) -> Dict[str, Any]:
    session.forward()
    state = tick_after(session, clock, 5000, "walking")
    return state


def tick_after(
    session: stepkit.Session, clock: stepkit.ManualClock, ms: int, step: Optional[str] = None
) -> Dict[str, Any]:
    """Moves the clock on by `ms` and ticks: the new state, checked to be on `step` when given."""
    clock.advance(ms)
    state = session.tick()
    if step is not None:
        assert state["step"]["identifier"] == step
    return state


def step_result(result: Dict[str, Any], identifier: str) -> Dict[str, Any]:
    return next(r for r in result["results"] if r["identifier"] == identifier)


def read_items(directory: Path, file_result: Dict[str, Any]) -> List[Any]:
    with open(directory / file_result["fileName"], encoding="utf-8") as handle:
        document = json.load(handle)
    assert set(document) == {"items"}
    return document["items"]


# ------------------------------------------------------------------------------------------------
# Task info


def test_requested_permissions(walk_task: stepkit.Task, task: stepkit.Task) -> None:
    assert walk_task.requested_permissions == ["location", "motion"]
    assert walk_task.info["requestedPermissions"] == ["location", "motion"]
    assert task.requested_permissions == []
    audio = stepkit.Task.from_json(
        {
            "identifier": "t",
            "steps": [
                {
                    "type": "active",
                    "identifier": "a",
                    "stepDuration": 5,
                    "recorderConfigurations": [
                        {"type": "audio", "identifier": "mic"},
                        {"type": "heartRate", "identifier": "hr"},
                        {"type": "touch", "identifier": "touch"},
                    ],
                }
            ],
        }
    )
    assert sorted(audio.requested_permissions) == ["health", "microphone"]


# ------------------------------------------------------------------------------------------------
# Lifecycle


def test_countdown_starts_and_continues_by_itself(walk: Walk) -> None:
    session, clock = walk
    assert session.state["active"] is None
    assert session.state["nextDeadline"] is None
    state = session.forward()
    assert state["step"]["identifier"] == "countdown"
    assert types(state["events"])[-4:] == [
        "stepWillAppear",
        "stepDidChange",
        "recorderStarted",
        "activeStepStarted",
    ]
    active = state["active"]
    assert active["kind"] == "countdown"
    assert active["status"] == "running"
    assert active["duration"] == 5
    assert state["nextDeadline"] == at(2000)  # the spoken "3"
    assert state["problems"][0]["code"] == "activeStepNotFinished"
    assert state["navigation"]["canGoForward"] is False
    with pytest.raises(stepkit.StateError):
        session.forward()
    with pytest.raises(stepkit.StateError):
        session.start()  # already running
    state = tick_after(session, clock, 5000)
    spoken = [(e["text"], e["date"]) for e in state["events"] if e["type"] == "speak"]
    assert spoken[:3] == [("3", at(2000)), ("2", at(3000)), ("1", at(4000))]
    assert state["step"]["identifier"] == "walking"
    assert state["active"]["status"] == "running"
    result = session.result
    assert step_result(result, "countdown")["endDate"] == at(5000)
    assert step_result(result, "walking")["startDate"] == at(5000)


def test_a_whole_walk_in_one_tick_with_every_prompt_on_time(walk: Walk) -> None:
    session, clock = walk
    session.forward()
    state = tick_after(session, clock, 5000 + 60_000 + 30_000, "rest")
    assert state["active"]["status"] == "prepared"  # rest does not start by itself
    assert state["nextDeadline"] is None
    timeline = [
        (e["type"], e.get("kind"), e.get("text"), e["date"])
        for e in state["events"]
        if e.get("step") == "walking"
    ]
    assert timeline == [
        ("stepWillAppear", None, None, at(5000)),
        ("stepDidChange", None, None, at(5000)),
        ("activeStepStarted", None, None, at(5000)),
        ("speak", "spokenInstruction", "Walk up to 20 steps in a straight line.", at(5000)),
        ("vibrate", "start", None, at(5000)),
        *closing_prompts(5000, 60, "Stop walking."),
        ("activeStepFinished", None, None, at(65_000)),
    ]
    # Events come in date order, and the recorders stop when the walk finishes.
    dates = [parse_iso8601_ms(e["date"]) for e in state["events"]]
    assert dates == sorted(dates)
    stopped = [e for e in state["events"] if e["type"] == "recorderStopped"]
    assert {e["recorder"] for e in stopped} == {"accel", "pedometer"}
    assert all(e["date"] == at(65_000) for e in stopped)


def test_prompts_of_a_step_with_every_option(out_dir: Path) -> None:
    definition = after_an_instruction("p", {
        "type": "active", "identifier": "a", "stepDuration": 10, "shouldStartTimerAutomatically": True,
        "shouldSpeakCountDown": True, "shouldSpeakRemainingTimeAtHalfway": True,
        "spokenInstruction": "Go.", "finishedSpokenInstruction": "Stop.",
        "shouldPlaySoundOnStart": True, "shouldVibrateOnStart": True,
        "shouldPlaySoundOnFinish": True, "shouldVibrateOnFinish": True,
    }, {"type": "completion", "identifier": "done"})
    with walk_of(definition, out_dir) as (session, clock):
        state = session.forward()
        assert state["active"]["status"] == "running"  # started as it appeared
        assert [(e["type"], e.get("kind"), e["date"]) for e in state["events"][-6:]] == [
            ("stepWillAppear", None, at(0)),
            ("stepDidChange", None, at(0)),
            ("activeStepStarted", None, at(0)),
            ("speak", "spokenInstruction", at(0)),
            ("playSound", "start", at(0)),
            ("vibrate", "start", at(0)),
        ]
        deadlines = [state["nextDeadline"]]
        events: List[Dict[str, Any]] = []
        for _ in range(20):
            state = tick_after(session, clock, 500)
            events += state["events"]
            if state["nextDeadline"] not in deadlines:
                deadlines.append(state["nextDeadline"])
        prompts = [
            (e["type"], e.get("kind"), e.get("text"), e["date"])
            for e in events
            if e["type"] in ("speak", "playSound", "vibrate")
        ]
        assert prompts == [*closing_prompts(0, 10, "Stop."), ("vibrate", "finish", None, at(10_000))]
        # nextDeadline named each moment in turn, then nothing once finished.
        assert deadlines == [at(5000), at(7000), at(8000), at(9000), at(10_000), None]
        assert state["active"]["status"] == "finished"
        assert state["step"]["identifier"] == "a"  # no shouldContinueOnFinish
        assert session.forward()["step"]["identifier"] == "done"


def test_the_start_prompts_come_with_the_start(walk_task: stepkit.Task, out_dir: Path) -> None:
    definition = after_an_instruction("s", {
        "type": "active", "identifier": "a", "stepDuration": 4, "spokenInstruction": "Begin.",
        "shouldPlaySoundOnStart": True, "shouldVibrateOnStart": True})
    with walk_of(definition, out_dir) as (session, clock):
        session.forward()
        clock.advance(7000)
        state = session.start()
        assert [(e["type"], e.get("kind"), e["date"]) for e in state["events"]] == [
            ("activeStepStarted", None, at(7000)),
            ("speak", "spokenInstruction", at(7000)),
            ("playSound", "start", at(7000)),
            ("vibrate", "start", at(7000)),
        ]


def test_host_started_step_and_timer_expiry(walk: Walk) -> None:
    session, clock = walk
    session.forward()
    state = tick_after(session, clock, 65_000, "rest")
    assert state["active"]["status"] == "prepared"
    assert state["active"]["remaining"] == 30
    with pytest.raises(stepkit.StateError):
        session.forward()  # not finished
    with pytest.raises(stepkit.StateError):
        session.suspend()  # not running
    clock.advance(100_000)
    assert session.tick()["active"]["status"] == "prepared"  # nothing starts by itself
    state = session.start()
    assert types(state["events"]) == ["activeStepStarted"]
    assert state["active"]["status"] == "running"
    assert state["nextDeadline"] == at(165_000 + 30_000)
    with pytest.raises(stepkit.StateError):
        session.start()
    clock.advance(12_000)
    state = session.state
    assert state["active"]["elapsed"] == 12
    assert state["active"]["remaining"] == 18
    state = tick_after(session, clock, 18_000)
    assert types(state["events"]) == ["activeStepFinished"]  # gps runs until rest is left
    assert state["active"]["status"] == "finished"
    assert state["step"]["identifier"] == "rest"  # no shouldContinueOnFinish
    assert state["navigation"]["canGoForward"] is True
    with pytest.raises(stepkit.StateError):
        session.finish_active()  # already finished
    state = session.forward()
    assert state["step"]["identifier"] == "done"
    assert [e.get("recorder") for e in state["events"] if e["type"] == "recorderStopped"] == ["gps"]
    rest = step_result(session.result, "rest")
    assert rest["startDate"] == at(65_000)
    assert rest["endDate"] == at(195_000)


def test_suspended_time_does_not_count(walk: Walk) -> None:
    session, clock = walk
    to_walking(session, clock)
    clock.advance(10_000)
    state = session.suspend()
    assert types(state["events"]) == ["activeStepSuspended"]
    assert state["events"][0]["date"] == at(15_000)
    assert state["active"]["status"] == "suspended"
    assert state["nextDeadline"] is None
    with pytest.raises(stepkit.StateError):
        session.suspend()
    state = tick_after(session, clock, 100_000, "walking")
    assert state["active"]["elapsed"] == 10
    assert state["active"]["remaining"] == 50
    state = session.resume()
    assert types(state["events"]) == ["activeStepResumed"]
    with pytest.raises(stepkit.StateError):
        session.resume()
    # The halfway prompt comes 20 s of step time later: 20 s after the resume.
    assert state["nextDeadline"] == at(115_000 + 20_000)
    clock.advance(49_999)
    assert session.tick()["step"]["identifier"] == "walking"
    state = tick_after(session, clock, 1, "rest")
    assert step_result(session.result, "walking")["endDate"] == at(165_000)


def test_finish_early_by_the_host(walk: Walk) -> None:
    session, clock = walk
    state = session.forward()
    with pytest.raises(stepkit.StateError):
        session.start()
    state = session.finish_active()  # the countdown, at once; it continues by itself
    assert state["step"]["identifier"] == "walking"
    assert state["active"]["status"] == "running"
    clock.advance(10_000)
    state = session.finish_active()
    assert [(e["type"], e.get("step"), e.get("kind") or e.get("recorder")) for e in state["events"]] == [
        ("recorderStopped", None, "accel"),
        ("recorderStopped", None, "pedometer"),
        ("speak", "walking", "finishedSpokenInstruction"),
        ("playSound", "walking", "finish"),
        ("activeStepFinished", "walking", None),
        ("stepWillAppear", "rest", None),
        ("stepDidChange", "rest", None),
    ]
    assert all(e["date"] == at(10_000) for e in state["events"])
    assert state["step"]["identifier"] == "rest"  # shouldContinueOnFinish
    assert step_result(session.result, "walking")["endDate"] == at(10_000)
    # No halfway or countdown prompt ever comes for the finished walk.
    clock.advance(120_000)
    assert session.tick()["events"] == []


def test_zero_duration_step_starts_finished_and_wait_step_is_host_driven() -> None:
    definition = {
        "identifier": "t",
        "steps": [
            {"type": "active", "identifier": "a"},
            {"type": "wait", "identifier": "w", "indicatorType": "activityIndicator"},
            {"type": "instruction", "identifier": "i"},
        ],
    }
    with stepkit.Task.from_json(definition) as task, task.open() as session:
        clock = stepkit.ManualClock(START_MS)
        session.set_clock(clock)
        state = session.state
        assert state["active"]["status"] == "finished"
        assert state["nextDeadline"] is None
        assert state["navigation"]["canGoForward"] is True
        with pytest.raises(stepkit.StateError):
            session.start()
        state = session.forward()
        assert state["step"]["identifier"] == "w"
        assert state["active"]["kind"] == "wait"
        assert state["active"]["status"] == "running"  # a wait step always starts
        assert state["nextDeadline"] is None  # ... and never ends by itself
        clock.advance(3_600_000)
        assert session.tick()["active"]["status"] == "running"
        state = session.finish_active()
        assert "activeStepFinished" in types(state["events"])
        assert state["finishReason"] is None
        assert state["step"]["identifier"] == "w"
        state = session.forward()
        assert state["step"]["identifier"] == "i"
        with pytest.raises(stepkit.StateError):
            session.start()  # not an active step
        with pytest.raises(stepkit.InvalidArgumentError):
            session.active("jump")
        with pytest.raises(TypeError):
            session.active(3)  # type: ignore[arg-type]
        assert session.forward()["finishReason"] == "completed"
        assert session.tick()["events"] == []  # harmless once finished
        with pytest.raises(stepkit.StateError):
            session.start()


def test_going_forward_past_a_wait_step_finishes_it() -> None:
    definition = {
        "identifier": "t",
        "steps": [{"type": "wait", "identifier": "w"}, {"type": "instruction", "identifier": "i"}],
    }
    with stepkit.Task.from_json(definition) as task, task.open() as session:
        session.set_clock(stepkit.ManualClock(START_MS))
        assert session.state["active"]["status"] == "running"
        state = session.forward()
        assert state["step"]["identifier"] == "i"


def test_task_level_suspend_and_resume(walk: Walk) -> None:
    session, clock = walk
    session.forward()
    clock.advance(1000)
    state = session.suspend_task()
    assert state["taskSuspended"] is True
    assert "taskSuspended" in types(state["events"])
    assert "activeStepSuspended" in types(state["events"])
    assert state["active"]["status"] == "suspended"
    assert state["nextDeadline"] is None
    for op in (session.resume, session.start, session.suspend, session.suspend_task):
        with pytest.raises(stepkit.StateError):
            op()
    state = tick_after(session, clock, 60_000, "countdown")
    assert state["events"] == []
    state = session.resume_task()
    assert state["taskSuspended"] is False
    assert "taskResumed" in types(state["events"])
    assert state["active"]["status"] == "running"
    with pytest.raises(stepkit.StateError):
        session.resume_task()
    state = tick_after(session, clock, 4000, "walking")
    assert step_result(session.result, "countdown")["endDate"] == at(65_000)


# Behaviour stepkit.h promises that an earlier engine got wrong


def test_finish_is_refused_while_the_task_is_suspended(walk: Walk) -> None:
    session, clock = walk
    session.forward()
    session.suspend_task()
    with pytest.raises(stepkit.StateError):
        session.finish_active()


def test_set_clock_after_open_redates_a_first_step_that_started_by_itself(out_dir: Path) -> None:
    definition = {
        "identifier": "f",
        "steps": [
            {"type": "active", "identifier": "a", "stepDuration": 10, "shouldStartTimerAutomatically": True},
            {"type": "completion", "identifier": "done"},
        ],
    }
    with walk_of(definition, out_dir) as (session, clock):
        assert session.result["results"][0]["startDate"] == at(0)
        assert session.state["nextDeadline"] == at(10_000)


# ------------------------------------------------------------------------------------------------
# Recorders


def test_recorder_files_hold_every_sample(walk: Walk, out_dir: Path) -> None:
    session, clock = walk
    state = to_walking(session, clock)
    started = {e["recorder"]: e for e in state["events"] if e["type"] == "recorderStarted"}
    assert set(started) == {"accel", "pedometer"}
    assert started["accel"]["recorderType"] == "accelerometer"
    assert started["accel"]["configuration"]["frequency"] == 100
    pushed: List[Dict[str, Any]] = []
    for i in range(5):
        batch = [{"timestamp": i + j / 10, "x": 0.25, "y": -1, "z": i} for j in range(3)]
        state = session.record("accel", batch)
        pushed += batch
        accel = next(r for r in state["active"]["recorders"] if r["identifier"] == "accel")
        assert accel["samples"] == len(pushed)
        # The file is valid JSON after every call.
        files = step_result(session.result, "walking")["results"]
        assert read_items(out_dir, files[0]) == pushed
    session.record("pedometer", {"timestamp": 1.0, "steps": 3})
    with pytest.raises(stepkit.StateError):
        session.record("nope", {"x": 1})
    with pytest.raises(TypeError):
        session.record("accel", [1, 2])  # type: ignore[list-item]
    with pytest.raises(TypeError):
        session.record("accel", "[]")  # type: ignore[arg-type]
    with pytest.raises(stepkit.InvalidArgumentError):
        session.record("accel", {"x": float("nan")})
    clock.advance(60_000)
    assert session.tick()["step"]["identifier"] == "rest"
    files = step_result(session.result, "walking")["results"]
    by_id = {f["identifier"]: f for f in files}
    assert set(by_id) == {"accel", "pedometer"}
    for f in files:
        assert f["type"] == "file"
        assert f["contentType"] == "application/json"
        assert (out_dir / f["fileName"]).is_file()
        assert RUN.upper() in f["fileName"].upper()
        assert f["startDate"] and f["endDate"]
    assert read_items(out_dir, by_id["accel"]) == pushed
    assert read_items(out_dir, by_id["pedometer"]) == [{"timestamp": 1.0, "steps": 3}]
    with pytest.raises(stepkit.StateError):
        session.record("accel", {"x": 1})  # stopped with the walk


def test_recorder_files_roll_past_the_size_limit(walk_task: stepkit.Task, out_dir: Path) -> None:
    session, clock = open_walk(walk_task, out_dir, recorderFileSizeLimit=1024)
    with session:
        to_walking(session, clock)
        pushed = [{"t": i, "payload": "x" * 100} for i in range(40)]
        for sample in pushed[:30]:
            session.record("accel", sample)
        batch = pushed[30:]  # a batch is never split: it goes whole into a file
        session.record("accel", batch)
        files = [
            f for f in step_result(session.result, "walking")["results"] if f["identifier"] == "accel"
        ]
        assert len(files) > 2
        assert len({f["fileName"] for f in files}) == len(files)
        assert [f["fileName"].rsplit("-", 1)[-1] for f in files] == [f"{n}.json" for n in range(len(files))]
        items: List[Any] = []
        for f in files:
            part = read_items(out_dir, f)
            size = os.path.getsize(out_dir / f["fileName"])
            assert size <= 1024 or part == batch
            items += part
        assert items == pushed  # every sample, once, in order
        for f in files[:-1]:
            assert f["endDate"] is not None


def test_without_an_output_directory_the_task_fails(walk_task: stepkit.Task) -> None:
    session, clock = open_walk(walk_task, None)
    with session:
        state = session.forward()  # the async GPS recorder starts with the countdown
        assert state["status"] == "finished"
        assert state["finishReason"] == "failed"
        failed = [e for e in state["events"] if e["type"] == "recorderFailed"]
        assert failed and failed[0]["recorder"] == "gps"
        assert failed[0]["message"]
        assert failed[0]["samplesLost"] == 0
        assert state["events"][-1]["type"] == "taskFinished"
        assert state["events"][-1]["reason"] == "failed"
        assert session.tick()["events"] == []  # harmless once finished
        with pytest.raises(stepkit.StateError):
            session.start()


def test_continue_on_recorder_failure_keeps_going(walk_task: stepkit.Task) -> None:
    session, clock = open_walk(walk_task, None, continueOnRecorderFailure=True)
    with session:
        state = session.forward()
        assert state["finishReason"] is None
        assert "recorderFailed" in types(state["events"])
        state = tick_after(session, clock, 5000, "walking")
        assert types(state["events"]).count("recorderFailed") == 2  # accel and pedometer
        with pytest.raises(stepkit.StateError):
            session.record("accel", {"x": 1})  # failed: not running
        clock.advance(60_000)
        assert session.tick()["step"]["identifier"] == "rest"
        assert step_result(session.result, "walking")["results"] == []


def test_an_unwritable_directory_fails_the_recorder(walk_task: stepkit.Task, tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    session, clock = open_walk(walk_task, blocker / "sub")
    with session:
        state = session.forward()  # the GPS recorder cannot create its file
        assert state["finishReason"] == "failed"
        failed = [e for e in state["events"] if e["type"] == "recorderFailed"]
        assert failed[0]["recorder"] == "gps"
        assert failed[0]["samplesLost"] == 0
        assert state["events"][-1]["type"] == "taskFinished"
        assert state["events"][-1]["reason"] == "failed"
        assert not (blocker / "sub").exists()
    # Continuing past the failure: the walk's recorders fail too, the task goes on.
    session, clock = open_walk(walk_task, blocker / "sub", continueOnRecorderFailure=True)
    with session:
        state = to_walking(session, clock)
        assert {e["recorder"] for e in state["events"] if e["type"] == "recorderFailed"} == {
            "accel",
            "pedometer",
        }
        assert state["finishReason"] is None


def test_a_write_failure_keeps_earlier_samples(walk_task: stepkit.Task, out_dir: Path) -> None:
    session, clock = open_walk(walk_task, out_dir, continueOnRecorderFailure=True)
    with session:
        to_walking(session, clock)
        session.record("accel", [{"t": 1}, {"t": 2}])
        name = step_result(session.result, "walking")["results"][0]["fileName"]
        path = out_dir / name
        kept = path.read_text(encoding="utf-8")
        path.unlink()
        path.mkdir()  # the file cannot be reopened for writing
        state = session.record("accel", [{"t": 3}, {"t": 4}, {"t": 5}])
        failed = [e for e in state["events"] if e["type"] == "recorderFailed"]
        assert failed[0]["recorder"] == "accel"
        assert failed[0]["samplesLost"] == 3
        assert state["finishReason"] is None  # continueOnRecorderFailure
        assert json.loads(kept)["items"] == [{"t": 1}, {"t": 2}]
        session.record("pedometer", {"steps": 1})  # the other recorder still runs


# ------------------------------------------------------------------------------------------------
# Async actions


def test_async_action_records_across_steps(walk: Walk, out_dir: Path) -> None:
    session, clock = walk
    session.forward()
    fixes = [{"latitude": 52.5 + i / 1000, "longitude": 13.4} for i in range(4)]
    session.record("gps", fixes[0])  # countdown
    clock.advance(5000)
    assert session.tick()["step"]["identifier"] == "walking"
    session.record("gps", fixes[1])  # walking
    clock.advance(60_000)
    session.tick()
    session.record("gps", fixes[2])  # rest, prepared
    session.start()
    session.record("gps", [fixes[3]])  # rest, running
    state = tick_after(session, clock, 30_000)
    assert "recorderStopped" not in types(state["events"])  # until rest is left
    state = session.forward()
    stopped = [e for e in state["events"] if e["type"] == "recorderStopped"]
    assert [e["recorder"] for e in stopped] == ["gps"]
    with pytest.raises(stepkit.StateError):
        session.record("gps", fixes[0])
    result = session.result
    asynchronous = result["asyncResults"]
    assert len(asynchronous) == 1
    assert asynchronous[0]["identifier"] == "gps"
    assert asynchronous[0]["type"] == "file"
    assert read_items(out_dir, asynchronous[0]) == fixes
    # Not in any step's results.
    assert all(f["identifier"] != "gps" for r in result["results"] for f in r["results"])


def test_async_actions_stop_cleanly_when_the_task_ends_early(walk: Walk, out_dir: Path) -> None:
    session, clock = walk
    to_walking(session, clock)
    session.record("gps", {"latitude": 1.0, "longitude": 2.0})
    session.record("accel", {"x": 1})
    clock.advance(3000)
    state = session.finish("discarded")
    names = types(state["events"])
    assert names[-1] == "taskFinished"
    assert state["events"][-1]["reason"] == "discarded"
    stopped = {e["recorder"] for e in state["events"] if e["type"] == "recorderStopped"}
    assert stopped == {"gps", "accel", "pedometer"}
    assert names.index("recorderStopped") < names.index("taskFinished")
    result = session.result
    assert read_items(out_dir, result["asyncResults"][0]) == [{"latitude": 1.0, "longitude": 2.0}]
    accel = step_result(result, "walking")["results"][0]
    assert read_items(out_dir, accel) == [{"x": 1}]
    assert session.tick()["events"] == []  # harmless once finished
    for op in (session.start, session.suspend_task, session.finish_active):
        with pytest.raises(stepkit.StateError):
            op()
    with pytest.raises(stepkit.StateError):
        session.record("gps", {"latitude": 1.0, "longitude": 2.0})


# ------------------------------------------------------------------------------------------------
# Events


def test_events_reach_the_callback_in_the_order_of_each_call(walk: Walk) -> None:
    session, clock = walk
    received: List[Dict[str, Any]] = []
    session.on_event(received.append)
    returned: List[Dict[str, Any]] = []
    returned += session.forward()["events"]
    session.record("gps", {"latitude": 1.0, "longitude": 2.0})
    for _ in range(70):
        clock.advance(1000)
        returned += session.tick()["events"]
    assert session.state["events"] == []  # reading the state hands out nothing
    returned += session.start()["events"]
    returned += session.suspend()["events"]
    returned += session.resume()["events"]
    returned += session.finish_active()["events"]
    returned += session.forward()["events"]
    returned += session.forward()["events"]
    assert received == returned
    names = types(received)
    for expected in (
        "stepWillAppear",
        "stepDidChange",
        "activeStepStarted",
        "activeStepSuspended",
        "activeStepResumed",
        "activeStepFinished",
        "speak",
        "playSound",
        "vibrate",
        "recorderStarted",
        "recorderStopped",
        "taskFinished",
    ):
        assert expected in names, expected
    assert names[-1] == "taskFinished"
    assert all(isinstance(e["date"], str) for e in received)


def test_events_queued_at_open_come_with_the_first_call(walk_task: stepkit.Task) -> None:
    with walk_task.open({"taskRunUUID": RUN}) as session:
        received: List[Dict[str, Any]] = []
        session.on_event(received.append)
        state = session.forward()
        assert types(state["events"])[:2] == ["stepWillAppear", "stepDidChange"]
        assert state["events"][0]["step"] == "intro"
        assert received == state["events"]


def test_removing_and_replacing_the_callback(walk_task: stepkit.Task, out_dir: Path) -> None:
    class Sink:
        def __init__(self) -> None:
            self.events: List[Dict[str, Any]] = []

        def __call__(self, event: Dict[str, Any]) -> None:
            self.events.append(event)

    session, clock = open_walk(walk_task, out_dir)
    with session:
        first = Sink()
        session.on_event(first)
        assert first.events == session.forward()["events"]
        second = Sink()
        session.on_event(second)
        ref = weakref.ref(first)
        del first
        gc.collect()
        assert ref() is None  # released when replaced
        clock.advance(5000)
        assert second.events == session.tick()["events"]
        delivered = len(second.events)
        session.on_event(None)
        clock.advance(60_000)
        assert session.tick()["events"]  # still in the state, no longer delivered
        assert len(second.events) == delivered
        with pytest.raises(TypeError):
            session.on_event(42)  # type: ignore[arg-type]
    with pytest.raises(stepkit.StateError):
        session.on_event(print)


def test_a_callback_that_raises(walk: Walk) -> None:
    session, clock = walk
    seen: List[str] = []

    def callback(event: Dict[str, Any]) -> None:
        seen.append(event["type"])
        if event["type"] == "speak":
            raise KeyError("boom")

    session.on_event(callback)
    session.forward()
    clock.advance(5000)
    with pytest.raises(KeyError, match="boom"):
        session.tick()
    # The call happened, every event was still delivered, and the first exception raised.
    state = session.state
    assert state["step"]["identifier"] == "walking"
    assert seen.count("speak") >= 3
    assert "recorderStarted" in seen[seen.index("speak") :]
    # The session keeps working, and the next call raises only for its own events.
    session.on_event(lambda event: None)
    assert session.record("accel", {"x": 1})["status"] == "inProgress"


def test_a_callback_that_calls_back_into_the_session(walk_task: stepkit.Task, out_dir: Path) -> None:
    session, clock = open_walk(walk_task, out_dir)
    outcome: Dict[str, Any] = {}

    def run() -> None:
        with session:
            order: List[str] = []

            def callback(event: Dict[str, Any]) -> None:
                order.append(event["type"])
                if event["type"] == "recorderStarted":
                    # Re-entrant: the session's locks are free during delivery.
                    state = session.record(event["recorder"], {"from": "callback"})
                    order.append("recorded:" + event["recorder"])
                    assert state["status"] == "inProgress"
                    assert session.state["step"]["identifier"] in ("countdown", "walking")

            session.on_event(callback)
            session.forward()
            clock.advance(5000)
            session.tick()
            clock.advance(60_000)
            session.tick()
            outcome["order"] = order
            outcome["result"] = session.result

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(20)
    assert not worker.is_alive(), "a re-entrant call from the event callback deadlocked"
    order = outcome["order"]
    for recorder in ("gps", "accel", "pedometer"):
        started = order.index("recorderStarted")
        assert f"recorded:{recorder}" in order
        assert started < order.index(f"recorded:{recorder}")
    walking = step_result(outcome["result"], "walking")["results"]
    assert sorted(f["identifier"] for f in walking) == ["accel", "pedometer"]
    for f in walking:
        assert read_items(out_dir, f) == [{"from": "callback"}]


def test_a_callback_that_ticks_delivers_nested_events_first(out_dir: Path) -> None:
    definition = {
        "identifier": "n",
        "steps": [
            {"type": "instruction", "identifier": "i"},
            {"type": "active", "identifier": "a", "stepDuration": 3, "spokenInstruction": "Go"},
            {"type": "completion", "identifier": "done"},
        ],
    }
    with walk_of(definition, out_dir) as (session, clock):
        order: List[str] = []

        def callback(event: Dict[str, Any]) -> None:
            order.append(event["type"])
            if event["type"] == "stepDidChange" and event["step"] == "a":
                session.start()  # nested events are delivered right here

        session.on_event(callback)
        session.forward()
        session.on_event(None)
        # The events queued at open, then forward's; start's own (nested) events come right
        # after the event whose callback made the call.
        assert order == [
            "stepWillAppear",
            "stepDidChange",
            "stepWillAppear",
            "stepDidChange",
            "activeStepStarted",
            "speak",
        ]
        assert session.state["active"]["status"] == "running"


def test_a_callback_may_close_its_session(walk_task: stepkit.Task, out_dir: Path) -> None:
    session, clock = open_walk(walk_task, out_dir)
    seen: List[str] = []

    def callback(event: Dict[str, Any]) -> None:
        seen.append(event["type"])
        if event["type"] == "stepDidChange":
            session.close()

    session.on_event(callback)
    state = session.forward()  # the call completes and returns its state
    assert state["step"]["identifier"] == "countdown"
    assert seen == ["stepWillAppear", "stepDidChange"]  # nothing after the close
    assert session.closed
    with pytest.raises(stepkit.StateError):
        session.tick()


def test_events_from_several_threads(walk: Walk, out_dir: Path) -> None:
    session, clock = walk
    to_walking(session, clock)
    received: List[Dict[str, Any]] = []
    lock = threading.Lock()

    def callback(event: Dict[str, Any]) -> None:
        with lock:
            received.append(event)

    session.on_event(callback)
    returned: List[List[Dict[str, Any]]] = []
    errors: List[BaseException] = []

    def work(recorder: str) -> None:
        try:
            for i in range(200):
                events = session.record(recorder, {"i": i})["events"]
                events += session.tick()["events"]
                with lock:
                    returned.append(events)
        except BaseException as exc:  # noqa: B902
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(r,)) for r in ("accel", "pedometer")]
    for t in threads:
        t.start()
    for _ in range(30):
        clock.advance(1000)
        time.sleep(0.001)
    for t in threads:
        t.join(30)
    assert not errors
    flat = [e for events in returned for e in events]
    assert sorted(json.dumps(e, sort_keys=True) for e in flat) == sorted(
        json.dumps(e, sort_keys=True) for e in received
    )
    files = step_result(session.result, "walking")["results"]
    counts = {f["identifier"]: len(read_items(out_dir, f)) for f in files}
    assert counts == {"accel": 200, "pedometer": 200}


# ------------------------------------------------------------------------------------------------
# Save and restore


@contextlib.contextmanager
def restored_as_saved(
    walk: Walk, walk_task: stepkit.Task, out_dir: Path,
    before_clock: Optional[Callable[[], None]] = None,
) -> Iterator[Tuple[stepkit.Session, str]]:
    """The walk's session saved and restored (recording into out_dir), `before_clock()` run
    between the restore and the host's clock set on it: the restored state is the session's."""
    session, clock = walk
    saved = session.save()
    with walk_task.restore(saved, {"outputDirectory": str(out_dir)}) as restored:
        if before_clock is not None:
            before_clock()
        restored.set_clock(clock)
        assert restored.state == session.state
        yield restored, saved


def test_save_and_restore_in_the_middle_of_an_active_step(
    walk: Walk, walk_task: stepkit.Task, out_dir: Path
) -> None:
    session, clock = walk
    to_walking(session, clock)
    clock.advance(20_000)
    session.record("accel", {"t": 1})
    with restored_as_saved(walk, walk_task, out_dir) as (restored, _):
        assert restored.state["active"]["elapsed"] == 20
        assert restored.result == session.result
        clock.advance(40_000)
        a, b = session.tick(), restored.tick()
        assert a["events"] == b["events"]
        assert b["step"]["identifier"] == "rest"
        assert restored.state == session.state


def wait_for_the_system_clock(ms: int) -> None:
    """Returns once the system clock (the one a restore reads) has moved on by `ms` milliseconds:
    a condition waited for, not a sleep that hopes."""
    mark = system_time_ms()
    while system_time_ms() - mark < ms:
        pass


def test_restore_is_exact_when_the_clock_is_set_a_moment_later(
    walk: Walk, walk_task: stepkit.Task, out_dir: Path
) -> None:
    # The restore reads the system clock; it moves on before the host sets its own clock. The
    # first clock set after the restore takes the restore over (stepkit.h): nothing the system
    # clock read in between counts, so state and restoration data equal the saved ones.
    session, clock = walk
    to_walking(session, clock)
    clock.advance(20_000)
    with restored_as_saved(walk, walk_task, out_dir,
                           before_clock=lambda: wait_for_the_system_clock(3)) as (restored, saved):
        assert restored.state["active"]["elapsed"] == 20
        assert restored.save() == saved
        # A second clock carries on: the step keeps the time it has run.
        clock.advance(1000)
        restored.set_clock(stepkit.ManualClock(START_MS + 3_600_000))
        assert restored.state["active"]["elapsed"] == 21


def test_a_restored_untouched_run_keeps_its_start(walk_task: stepkit.Task) -> None:
    session, clock = open_walk(walk_task, None)
    with session:
        saved = session.save()
        with walk_task.restore(saved) as restored:
            restored.set_clock(stepkit.ManualClock(START_MS + 86_400_000))
            assert restored.save() == saved
            assert restored.result["startDate"] == iso8601_ms(START_MS)


def test_a_tick_before_the_first_answer_leaves_the_start_to_the_clock(walk_task: stepkit.Task) -> None:
    # Issue #11, item 11: a tick on the system clock before set_clock made the run start on the
    # system clock's date and end on the host clock's, before it.
    with walk_task.open({"continueOnRecorderFailure": True}) as session:
        session.tick()
        clock = stepkit.ManualClock(START_MS)
        session.set_clock(clock)
        clock.advance(1000)
        session.forward()
        session.finish("discarded")
        result = session.result
        assert result["startDate"] == iso8601_ms(START_MS)
        assert result["endDate"] == iso8601_ms(START_MS + 1000)


def test_save_and_restore_a_suspended_step(walk: Walk, walk_task: stepkit.Task, out_dir: Path) -> None:
    session, clock = walk
    to_walking(session, clock)
    clock.advance(7000)
    session.suspend()
    clock.advance(50_000)
    with restored_as_saved(walk, walk_task, out_dir) as (restored, _):
        state = restored.state
        assert state["active"]["status"] == "suspended"
        assert state["active"]["elapsed"] == 7
        restored.resume()
        clock.advance(53_000)
        assert restored.tick()["step"]["identifier"] == "rest"


# ------------------------------------------------------------------------------------------------
# The real-time driver

QUICK = {
    "identifier": "quick",
    "steps": [
        {
            "type": "active",
            "identifier": "a",
            "stepDuration": 0.3,
            "shouldStartTimerAutomatically": True,
            "shouldContinueOnFinish": True,
            "finishedSpokenInstruction": "Done.",
        },
    ],
}


def test_the_real_time_driver_finishes_a_short_step() -> None:
    with stepkit.Task.from_json(QUICK) as task, task.open() as session:
        received: List[Dict[str, Any]] = []
        callback_threads = set()

        def on_session_event(event: Dict[str, Any]) -> None:
            callback_threads.add(threading.current_thread().name)

        session.on_event(on_session_event)
        begin = time.monotonic()
        with stepkit.RealTimeDriver(session, on_event=received.append) as driver:
            assert driver.wait(timeout=10) is True
        elapsed = time.monotonic() - begin
        assert elapsed >= 0.25  # it waited the step's own time (the wait's timeout bounds the rest)
        assert not driver.running
        assert driver.ticks >= 1
        state = session.state
        assert state["status"] == "finished"
        assert state["finishReason"] == "completed"
        names = types(received)
        assert "activeStepFinished" in names and names[-1] == "taskFinished"
        spoken = [e for e in received if e["type"] == "speak"]
        assert spoken[0]["text"] == "Done."
        # Dated when it came due (0.3 s after the start), not when the thread woke.
        result = session.result
        duration = parse_iso8601_ms(result["results"][0]["endDate"]) - parse_iso8601_ms(
            result["results"][0]["startDate"]
        )
        assert duration == 300
        assert callback_threads == {"stepkit-realtime-driver"}
        driver.stop()  # idempotent


def test_the_real_time_driver_sees_a_step_started_elsewhere() -> None:
    definition = {
        "identifier": "q2",
        "steps": [
            {"type": "active", "identifier": "a", "stepDuration": 0.2},
            {"type": "completion", "identifier": "done"},
        ],
    }
    with stepkit.Task.from_json(definition) as task, task.open() as session:
        driver = stepkit.RealTimeDriver(session, poll_interval=5)
        try:
            time.sleep(0.05)
            assert session.state["active"]["status"] == "prepared"
            session.start()
            driver.wake()
            deadline = time.monotonic() + 30  # a 0.2 s step: the bound only stops a hang
            while session.state["active"]["status"] != "finished" and time.monotonic() < deadline:
                time.sleep(0.02)
            assert session.state["active"]["status"] == "finished"
            assert driver.running  # the task has not finished: the driver waits on
        finally:
            driver.stop()
        assert not driver.running


def test_the_real_time_driver_stops_with_the_session_and_reports_errors() -> None:
    long = {"identifier": "l", "steps": [{"type": "active", "identifier": "a", "stepDuration": 100}]}
    with stepkit.Task.from_json(long) as task:
        session = task.open()
        driver = stepkit.RealTimeDriver(session, poll_interval=0.01)
        session.close()
        assert driver.wait(timeout=5) is False
        driver.stop()  # a closed session is a normal end: nothing raised

        with task.open() as other:
            other.start()
            driver = stepkit.RealTimeDriver(other, poll_interval=0.01)
            time.sleep(0.05)
            assert driver.running and driver.ticks == 0  # nothing due for 100 s
            begin = time.monotonic()
            driver.stop()
            # stop() wakes the sleeping thread, which would otherwise sleep until the step's
            # 100 s deadline: a bound far from both, so a loaded machine cannot fail it
            assert time.monotonic() - begin < 30
            assert not driver.running and driver.wait(0) is False

    with stepkit.Task.from_json(QUICK) as task, task.open() as session:
        def bad(event: Dict[str, Any]) -> None:
            raise RuntimeError("on_event failed")

        driver = stepkit.RealTimeDriver(session, on_event=bad)
        driver.wait(timeout=10)
        with pytest.raises(RuntimeError, match="on_event failed"):
            driver.stop()
        driver.stop()  # raised once
    with pytest.raises(TypeError):
        stepkit.RealTimeDriver(object())  # type: ignore[arg-type]


# ------------------------------------------------------------------------------------------------
# The terminal presenter


def _split_output(stdout: str) -> Tuple[List[str], Dict[str, Any]]:
    start = stdout.index("\n{") + 1 if not stdout.startswith("{") else 0
    return stdout[:start].splitlines(), json.loads(stdout[start:])


def test_cli_runs_the_short_walk_without_a_terminal(tmp_path: Path) -> None:
    out = tmp_path / "rec"
    done = run_cli("run", str(EXAMPLES / "short-walk.json"), "--output-dir", str(out))
    assert done.returncode == 0, done.stderr
    lines, result = _split_output(done.stdout)
    stripped = [line.strip() for line in lines]
    assert any(line.endswith("speak: Walk up to 20 steps in a straight line.") for line in stripped)
    assert any(line.endswith("[vibrate]") for line in stripped)
    assert any(line.endswith("speak: 15 seconds remaining") for line in stripped)
    countdown = [line.split()[-1] for line in stripped if line.split()[-1:] in (["3"], ["2"], ["1"])]
    assert countdown[:6] == ["3", "2", "1", "3", "2", "1"]  # the countdown step, then the walk
    assert any(line.endswith("speak: You are done.") for line in stripped)
    by_step = {r["identifier"]: r for r in result["results"]}
    walking = {f["identifier"]: f for f in by_step["walking"]["results"]}
    assert set(walking) == {"accelerometer", "pedometer"}
    assert {f["identifier"] for f in by_step["rest"]["results"]} == {"restMotion"}
    files = list(walking.values()) + by_step["rest"]["results"] + result["asyncResults"]
    for f in files:
        assert f["type"] == "file"
        items = read_items(out, f)
        assert items and all("timestamp" in item for item in items)
    assert len(read_items(out, walking["accelerometer"])) == 30  # one a second for 30 s
    assert {"x", "y", "z"} <= set(read_items(out, walking["accelerometer"])[0])
    assert "steps" in read_items(out, walking["pedometer"])[0]
    location = read_items(out, result["asyncResults"][0])
    assert {"latitude", "longitude"} <= set(location[0])
    # The dates are those of the simulated run: 5 s countdown, 30 s walk, 10 s rest.
    span = parse_iso8601_ms(result["endDate"]) - parse_iso8601_ms(result["startDate"])
    assert span == 45_000


def test_cli_uses_a_temporary_directory_by_default(tmp_path: Path) -> None:
    done = run_cli("run", str(EXAMPLES / "short-walk.json"), "--quiet")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    line = next(l for l in done.stderr.splitlines() if l.startswith("Recorder files are in "))
    directory = Path(line[len("Recorder files are in ") :])
    try:
        names = [f["fileName"] for r in result["results"] for f in r["results"]]
        assert names and all((directory / n).is_file() for n in names)
    finally:
        for child in directory.iterdir():
            child.unlink()
        directory.rmdir()


def test_cli_wait_and_host_started_steps(tmp_path: Path) -> None:
    task = write_json(tmp_path / "t.json", {"identifier": "t", "steps": [
        {"type": "wait", "identifier": "w", "title": "Connecting"},
        {"type": "active", "identifier": "tap", "title": "Tap", "stepDuration": 3,
         "recorderConfigurations": [{"type": "touch", "identifier": "touches"}]},
        {"type": "question", "identifier": "q", "answerFormat": {"type": "boolean"}}]})
    answers = tmp_path / "a.json"
    answers.write_text('{"q": true}')
    done = run_cli("run", str(task), "--answers", str(answers), "--output-dir", str(tmp_path / "o"))
    assert done.returncode == 0, done.stderr
    lines, result = _split_output(done.stdout)
    assert "  (start)" in lines and "  (finish)" in lines
    tap = next(r for r in result["results"] if r["identifier"] == "tap")
    assert len(read_items(tmp_path / "o", tap["results"][0])) == 3


def test_cli_interactive_active_steps(tmp_path: Path) -> None:
    task = write_json(tmp_path / "t.json", {"identifier": "t", "steps": [
        {"type": "instruction", "identifier": "i", "title": "Hello"},
        {"type": "active", "identifier": "a", "title": "Hold", "stepDuration": 0.5,
         "spokenInstruction": "Hold still."},
        {"type": "wait", "identifier": "w", "title": "Wait"},
        {"type": "completion", "identifier": "done"}]})
    # Enter (intro), Enter (start), Enter (leave the finished step), :finish (wait), Enter, Enter
    done = run_cli("run", str(task), "-i", input="\n\n\n:finish\n\n\n", timeout=30)
    assert done.returncode == 0, done.stderr + done.stdout
    assert "speak: Hold still." in done.stdout
    assert "[finished]" in done.stdout
