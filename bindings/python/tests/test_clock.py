"""ManualClock and host clocks set on sessions."""

from __future__ import annotations

import gc
import threading

import pytest

import stepkit
from conftest import START_ISO, START_MS


def test_manual_clock_basics():
    clock = stepkit.ManualClock(START_MS)
    assert clock() == START_MS
    assert clock.now_ms == START_MS
    assert clock.iso == START_ISO
    assert clock.advance(250) == START_MS + 250
    assert clock.advance_seconds(1.5) == START_MS + 1750
    assert clock.iso == "2026-01-01T00:00:01.750Z"
    assert clock.set(START_MS) == START_MS
    clock.now_ms = 5
    assert clock() == 5
    assert repr(stepkit.ManualClock(7)) == "ManualClock(7)"
    assert stepkit.ManualClock().now_ms == 0


def test_manual_clock_from_iso_and_helpers():
    assert stepkit.ManualClock.from_iso("2026-01-01T00:00:00Z").now_ms == START_MS
    assert stepkit.ManualClock.from_iso("2026-01-01T01:00:00.250+01:00").now_ms == START_MS + 250
    assert stepkit.iso8601_ms(START_MS) == START_ISO
    assert stepkit.parse_iso8601_ms(START_ISO) == START_MS
    assert stepkit.iso8601_ms(0) == "1970-01-01T00:00:00.000Z"
    with pytest.raises(ValueError):
        stepkit.parse_iso8601_ms("2026-01-01T00:00:00")  # no offset


def test_manual_clock_bad_input():
    with pytest.raises(TypeError):
        stepkit.ManualClock("now")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        stepkit.ManualClock(1.5)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        stepkit.ManualClock(True)
    with pytest.raises(ValueError):
        stepkit.ManualClock(2**70)
    clock = stepkit.ManualClock(0)
    with pytest.raises(ValueError):
        clock.advance(-1)
    with pytest.raises(ValueError):
        clock.advance_seconds(float("nan"))
    with pytest.raises(TypeError):
        clock.advance_seconds("1")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        clock.set(None)  # type: ignore[arg-type]
    assert clock() == 0


def test_plain_function_clock_and_keepalive(task):
    now = [START_MS]
    with task.open() as session:
        session.set_clock(lambda: now[0])  # only the session references the lambda
        gc.collect()
        now[0] += 2000
        session.forward()
        gc.collect()
        result = session.result
        assert result["startDate"] == START_ISO
        assert result["results"][0]["endDate"] == "2026-01-01T00:00:02.000Z"


def test_one_clock_drives_several_sessions(task, clock):
    with task.open() as a, task.open() as b:
        a.set_clock(clock)
        b.set_clock(clock)
        clock.advance(1000)
        a.forward()
        b.forward()
        assert a.result["results"][0]["endDate"] == b.result["results"][0]["endDate"]


def test_set_clock_not_callable(session):
    for bad in ("clock", 42, object()):
        with pytest.raises(TypeError):
            session.set_clock(bad)  # type: ignore[arg-type]


def test_clock_that_raises_is_reported(task):
    class Boom(Exception):
        pass

    armed = {"on": False}

    def clock():
        if armed["on"]:
            raise Boom("clock broke")
        return START_MS

    with task.open() as session:
        session.set_clock(clock)
        armed["on"] = True
        with pytest.raises(Boom):
            session.forward()
        armed["on"] = False
        # the library got a time and the session is still usable
        assert session.state["status"] == "inProgress"
        session.set_clock(None)
        session.result


def test_clock_returning_non_int_is_reported(task):
    with task.open() as session:
        with pytest.raises(TypeError):
            session.set_clock(lambda: "soon")
            session.forward()
        session.set_clock(None)
        session.state


def test_clock_returning_float_is_accepted(task):
    with task.open() as session:
        session.set_clock(lambda: float(START_MS))
        assert session.result["startDate"] == START_ISO


def test_clock_calling_into_its_own_session_does_not_deadlock(task):
    outcome = {}

    def run():
        with task.open() as session:
            def clock():
                session.state  # forbidden: re-entrant
                return START_MS

            try:
                session.set_clock(clock)
                session.forward()
            except stepkit.StateError as exc:
                outcome["error"] = exc
            except BaseException as exc:  # pragma: no cover - reported below
                outcome["other"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(30)
    assert not thread.is_alive(), "deadlock: a clock calling into its own session"
    assert "other" not in outcome, outcome
    assert "re-entrant" in outcome["error"].message


def test_clock_set_after_navigation_keeps_the_start_time(task):
    import time

    with task.open() as session:
        session.forward()
        session.set_clock(stepkit.ManualClock(START_MS))
        start = stepkit.parse_iso8601_ms(session.result["startDate"])
        assert abs(start - time.time() * 1000) < 60_000  # not moved to 2026-01-01
        session.set_answer(True)
        session.forward()
        likes = session.result["results"][1]
        # Later times come from the new clock, but never before the run's latest date: this
        # clock is earlier than the visit's start, so the session's time stands still until it
        # catches up (a visit ending before it starts is data restore refuses, issue 11).
        assert likes["endDate"] == likes["startDate"] != START_ISO


# ------------------------------------------------------------------------------------------------
# Any int64 a host clock returns (issue #11: none may kill the host)

INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1

TIMED = {
    "identifier": "timed",
    "steps": [
        {"type": "active", "identifier": "hold", "stepDuration": 10, "shouldStartTimerAutomatically": True,
         "shouldContinueOnFinish": True, "shouldSpeakCountDown": True, "shouldSpeakRemainingTimeAtHalfway": True},
        {"type": "question", "identifier": "felt", "answerFormat": {"type": "boolean"}},
    ],
}


@pytest.fixture
def timed():
    with stepkit.Task.from_json(TIMED) as compiled:
        yield compiled


@pytest.mark.parametrize("value", [INT64_MIN, INT64_MAX, -2_000_000_000_000, 0, INT64_MIN + 1, INT64_MAX - 1])
def test_a_running_step_survives_any_clock(timed, value):
    clock = stepkit.ManualClock(START_MS)
    with timed.open() as session:
        session.set_clock(clock)
        clock.advance(4000)
        clock.set(value)
        state = session.tick()
        if value < START_MS:
            # a clock behind the step's start counts no running time
            assert state["active"]["status"] == "running"
            assert state["active"]["elapsed"] == 0
        else:
            assert state["step"]["identifier"] == "felt"
        saved = session.save()
        with timed.restore(saved) as restored:
            restored.set_clock(clock)
            restored.tick()
            restored.result
        session.result


def test_suspend_at_max_resume_far_back_and_tick(timed):
    clock = stepkit.ManualClock(START_MS)
    with timed.open() as session:
        session.set_clock(clock)
        clock.advance(4000)
        clock.set(INT64_MAX)
        session.suspend()
        clock.set(-2_000_000_000_000)
        session.resume()
        state = session.tick()
        assert state["step"]["identifier"] == "felt"
        # the session's time never goes back before the run's latest date (the step's start):
        # everything that came due is dated then, not on the clock's far-back scale
        assert {e["date"] for e in state["events"]} == {START_ISO}
        hold = session.result["results"][0]
        assert hold["endDate"] == START_ISO


def _signed(document):
    import hashlib
    import json

    body = {k: v for k, v in document.items() if k != "integrity"}
    text = json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    return dict(body, integrity={"algorithm": "SHA-256", "digest": hashlib.sha256(text).hexdigest()})


@pytest.mark.parametrize("elapsed", [INT64_MAX, INT64_MAX - 5, 2**62])
def test_a_restored_elapsed_time_near_int64_max(timed, elapsed):
    import json

    clock = stepkit.ManualClock(START_MS)
    with timed.open() as session:
        session.set_clock(clock)
        clock.advance(1000)
        session.suspend()
        document = json.loads(session.save())
    document["path"][0]["active"]["elapsed"] = elapsed
    with timed.restore(_signed(document)) as restored:
        restored.set_clock(clock)
        assert restored.state["active"]["elapsed"] == elapsed / 1000
        state = restored.resume()
        assert state["nextDeadline"] is not None
        clock.set(INT64_MAX)
        state = restored.tick()
        assert state["step"]["identifier"] == "felt"
        restored.save()


def test_dates_beyond_the_four_digit_years_are_clamped(task):
    with task.open() as session:
        session.set_clock(lambda: INT64_MIN)
        assert session.result["startDate"] == "0000-01-01T00:00:00.000Z"
        session.set_clock(lambda: INT64_MAX)
        session.forward()
        assert session.result["results"][0]["endDate"] == "9999-12-31T23:59:59.999Z"
