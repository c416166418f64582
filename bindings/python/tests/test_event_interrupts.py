"""Events are delivered or kept when a KeyboardInterrupt (Ctrl-C) interrupts their delivery
(issue 26, item 11: 770 of 5,599 events were lost when a signal's exception was raised inside
the event callback).

What is expected comes from a reference session that runs the same calls on the same task and
manual clock with a callback that never raises: the interrupted session's callback must end up
with exactly the reference's events, in the same order, each once; the KeyboardInterrupt must
reach the caller of the call during whose delivery it was raised, after that call took effect.
No test here depends on timing: the interrupt is raised by the callback itself, by a real
SIGINT the callback sends to its own process (signal.raise_signal: its handler runs inside the
callback, deterministically), or by a trace function at the callback's entry.
"""

from __future__ import annotations

import signal
import sys
from typing import Any, Callable, Dict, List, Optional, Tuple

import pytest

import stepkit

from conftest import RUN_UUID, START_MS

DEFINITION: Dict[str, Any] = {
    "identifier": "interrupts",
    "steps": [
        {"type": "instruction", "identifier": "a", "title": "A"},
        {"type": "instruction", "identifier": "b", "title": "B"},
        {
            "type": "active",
            "identifier": "walk",
            "stepDuration": 4,
            "spokenInstruction": "Walk",
            "finishedSpokenInstruction": "Stop",
            "shouldContinueOnFinish": True,
        },
        {"type": "instruction", "identifier": "c", "title": "C"},
        {"type": "completion", "identifier": "done"},
    ],
}

Call = Callable[[stepkit.Session, stepkit.ManualClock], Any]


def _advance_and_tick(session: stepkit.Session, clock: stepkit.ManualClock) -> Any:
    clock.advance(4000)
    return session.tick()


# Every call below produces at least one event; several produce more than one, so an interrupt
# can fall in the middle of a call's events.
CALLS: List[Call] = [
    lambda s, c: s.forward(),  # the events queued at open come with it
    lambda s, c: s.back(),
    lambda s, c: s.forward(),
    lambda s, c: s.forward(),  # into the active step
    lambda s, c: s.start(),
    lambda s, c: s.suspend(),
    lambda s, c: s.resume(),
    _advance_and_tick,  # the step ends and moves on
    lambda s, c: s.forward(),
]


def _open(task: stepkit.Task) -> Tuple[stepkit.Session, stepkit.ManualClock]:
    session = task.open({"taskRunUUID": RUN_UUID})
    clock = stepkit.ManualClock(START_MS)
    session.set_clock(clock)
    return session, clock


@pytest.fixture(scope="module")
def task() -> Any:
    with stepkit.Task.from_json(DEFINITION) as t:
        yield t


@pytest.fixture(scope="module")
def reference(task: stepkit.Task) -> Tuple[List[Dict[str, Any]], List[int], Dict[str, Any]]:
    """The reference run: every event received, how many had been received after each call,
    and the final state."""
    session, clock = _open(task)
    with session:
        received: List[Dict[str, Any]] = []
        session.on_event(received.append)
        returned: List[Dict[str, Any]] = []
        after_call: List[int] = []
        for call in CALLS:
            returned += call(session, clock)["events"]
            after_call.append(len(received))
        assert received == returned  # the callback got what the calls returned, in order
        assert all(b > a for a, b in zip([0] + after_call, after_call))  # every call has events
        assert len(received) >= len(CALLS) + 3  # some calls have several
        return received, after_call, session.state


def _call_index(after_call: List[int], n: int) -> int:
    """The index of the call that produced the n-th event (1-based)."""
    return next(i for i, count in enumerate(after_call) if count >= n)


def _run_interrupted(
    task: stepkit.Task, callback_for: Callable[[List[Dict[str, Any]]], Callable[[Dict[str, Any]], None]]
) -> Tuple[stepkit.Session, List[Dict[str, Any]], List[int], List[int]]:
    """Runs CALLS with the callback made by ``callback_for(received)``; returns the session,
    the events received, the indexes of the calls that raised KeyboardInterrupt, and how many
    events had been received right after each call returned or raised."""
    session, clock = _open(task)
    received: List[Dict[str, Any]] = []
    session.on_event(callback_for(received))
    interrupted: List[int] = []
    after_call: List[int] = []
    for index, call in enumerate(CALLS):
        try:
            call(session, clock)
        except KeyboardInterrupt:
            interrupted.append(index)
        after_call.append(len(received))
    return session, received, interrupted, after_call


def _interrupt_on(n: int, how: Callable[[], None]) -> Callable[[List[Dict[str, Any]]], Callable[[Dict[str, Any]], None]]:
    def callback_for(received: List[Dict[str, Any]]) -> Callable[[Dict[str, Any]], None]:
        def callback(event: Dict[str, Any]) -> None:
            received.append(event)
            if len(received) == n:
                how()

        return callback

    return callback_for


def _raise_keyboard_interrupt() -> None:
    raise KeyboardInterrupt


def _check(
    reference: Tuple[List[Dict[str, Any]], List[int], Dict[str, Any]],
    n: int,
    session: stepkit.Session,
    received: List[Dict[str, Any]],
    interrupted: List[int],
    after_call: List[int],
) -> None:
    expected, expected_after_call, final_state = reference
    raising_call = _call_index(expected_after_call, n)
    # The interrupt reached the caller of exactly the call whose delivery it interrupted.
    assert interrupted == [raising_call]
    # Its delivery stopped at the n-th event; the rest of its events stayed queued.
    assert after_call[raising_call] == n
    # The next call delivered them first, then its own: from there on, no event is behind.
    for index in range(raising_call + 1, len(CALLS)):
        assert after_call[index] == expected_after_call[index]
    # Nothing lost, nothing twice, nothing out of order.
    session.deliver_events()
    assert received == expected
    # The interrupted call had taken effect: the session is where the reference is.
    assert session.state == final_state
    session.close()


def test_the_reference_has_events_in_the_middle_of_calls(reference: Any) -> None:
    expected, after_call, _ = reference
    assert any(b - a >= 2 for a, b in zip([0] + after_call, after_call))


def test_a_keyboard_interrupt_from_the_callback_loses_no_event(task: stepkit.Task, reference: Any) -> None:
    expected, _, _ = reference
    for n in range(1, len(expected) + 1):  # an interrupt on each event in turn
        session, received, interrupted, after_call = _run_interrupted(
            task, _interrupt_on(n, _raise_keyboard_interrupt)
        )
        _check(reference, n, session, received, interrupted, after_call)


@pytest.mark.parametrize("n", [1, 2, 5, 9])
def test_a_real_sigint_raised_inside_the_callback_loses_no_event(task: stepkit.Task, reference: Any, n: int) -> None:
    # The default SIGINT handler raises KeyboardInterrupt; the signal is sent by the callback
    # to its own process, so the handler runs inside the callback, right after the send.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        session, received, interrupted, after_call = _run_interrupted(
            task, _interrupt_on(n, lambda: signal.raise_signal(signal.SIGINT))
        )
    finally:
        signal.signal(signal.SIGINT, previous)
    _check(reference, n, session, received, interrupted, after_call)


def test_queued_events_are_delivered_by_deliver_events(task: stepkit.Task, reference: Any) -> None:
    expected, expected_after_call, _ = reference
    # An interrupt on the first event of the first call: the rest of its events stay queued.
    session, clock = _open(task)
    with session:
        received: List[Dict[str, Any]] = []
        session.on_event(_interrupt_on(1, _raise_keyboard_interrupt)(received))
        with pytest.raises(KeyboardInterrupt):
            session.forward()
        assert received == expected[:1]
        assert session.state["step"]["identifier"] == "b"  # the call happened
        session.deliver_events()  # no call needed
        assert received == expected[: expected_after_call[0]]
        session.deliver_events()  # nothing left: nothing more
        assert received == expected[: expected_after_call[0]]


def test_an_interrupt_at_the_callbacks_entry_keeps_its_event(
    task: stepkit.Task, reference: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A signal whose handler runs as the callback's frame begins (before its first line) raises
    there: the callback never saw that event, so it is kept, and delivered again."""
    expected, expected_after_call, _ = reference
    received: List[Dict[str, Any]] = []

    def callback(event: Dict[str, Any]) -> None:
        received.append(event)

    calls_seen = [0]

    def tracer(frame: Any, event: str, arg: Any) -> Optional[Any]:
        # Raise on the third call of the callback, at its entry: as a pending signal would.
        if event == "call" and frame.f_code is callback.__code__:
            calls_seen[0] += 1
            if calls_seen[0] == 3:
                raise KeyboardInterrupt
        return None

    session, clock = _open(task)
    with session:
        session.on_event(callback)
        sys.settrace(tracer)
        try:
            with pytest.raises(KeyboardInterrupt):
                for call in CALLS:
                    call(session, clock)
        finally:
            sys.settrace(None)
        assert received == expected[:2]  # the third was not seen: it stayed queued...
        session.deliver_events()
        # ...and came with the rest of its call's events, once
        assert received == expected[: expected_after_call[_call_index(expected_after_call, 3)]]


def test_an_interrupt_during_the_library_call_reaches_the_caller_with_every_event_delivered(
    task: stepkit.Task, reference: Any
) -> None:
    """A SIGINT whose handler runs while the library is inside the call (here: in the session's
    clock, which the library calls during the call) is raised by the method after the call,
    and the call's events have all been delivered by then."""
    expected, expected_after_call, final_state = reference
    session, clock = _open(task)
    received: List[Dict[str, Any]] = []
    session.on_event(received.append)
    last = len(CALLS) - 1  # forward: the clock does not move before it
    for call in CALLS[:last]:
        call(session, clock)
    assert received == expected[: expected_after_call[last - 1]]

    fire = [False]

    def interrupting_clock() -> int:
        if fire[0]:
            fire[0] = False
            signal.raise_signal(signal.SIGINT)  # its handler raises here, in the clock
        return clock.now_ms

    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        session.set_clock(interrupting_clock)
        fire[0] = True
        with pytest.raises(KeyboardInterrupt):
            CALLS[last](session, clock)
    finally:
        signal.signal(signal.SIGINT, previous)
    assert not fire[0]  # the library did read the clock
    assert received == expected  # every event of the call was delivered before the raise
    assert session.state == final_state  # and the call took effect
    session.close()


def test_no_python_code_runs_while_the_library_hands_over_events(
    task: stepkit.Task, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The root of the loss: the library handed each event to a Python function (a ctypes
    callback), at whose entry a pending signal's handler ran and raised KeyboardInterrupt,
    which ctypes printed and swallowed, with the event. Here a trace function raises
    KeyboardInterrupt at the entry of any Python function run while the library call is under
    way, as such a handler would; no event may go missing and no interrupt may be swallowed.
    (The session keeps the system clock: a Python clock would be such a function.)"""
    names = [
        "stepkit_session_go_forward",
        "stepkit_session_go_backward",
    ]
    moves: List[Callable[[stepkit.Session], Any]] = [
        lambda s: s.forward(),
        lambda s: s.back(),
        lambda s: s.forward(),
        lambda s: s.forward(),
        lambda s: s.back(),
        lambda s: s.forward(),
    ]

    def run(trace: bool) -> Tuple[List[Tuple[str, str]], List[Tuple[str, str]], List[str]]:
        session = task.open({"taskRunUUID": RUN_UUID})
        received: List[Dict[str, Any]] = []
        returned: List[Dict[str, Any]] = []
        entered: List[str] = []
        inside = [False]
        lib = session._lib
        for name in names:
            real = getattr(lib, name)

            def wrapper(*args: Any, _real: Any = real) -> Any:
                inside[0] = True
                try:
                    return _real(*args)
                finally:
                    inside[0] = False

            monkeypatch.setattr(lib, name, wrapper)

        def tracer(frame: Any, event: str, arg: Any) -> Optional[Any]:
            if event == "call" and inside[0]:
                entered.append(frame.f_code.co_name)
                raise KeyboardInterrupt
            return None

        session.on_event(received.append)
        if trace:
            sys.settrace(tracer)
        try:
            for move in moves:
                returned += move(session)["events"]
        finally:
            sys.settrace(None)
            monkeypatch.undo()
        session.close()
        pairs = [(e["type"], str(e.get("step"))) for e in received]
        return pairs, [(e["type"], str(e.get("step"))) for e in returned], entered

    plain, plain_returned, _ = run(trace=False)
    assert plain == plain_returned and len(plain) >= 2 * len(moves)
    traced, traced_returned, entered = run(trace=True)
    assert entered == []  # nothing in Python ran inside the library call...
    assert traced == plain == traced_returned  # ...so nothing could be lost there


def test_an_event_that_is_not_json_is_reported_once_and_does_not_block_the_rest(task: stepkit.Task) -> None:
    """A library bug handing over a text that is not JSON: the call raises InternalError once,
    the other events are delivered, and the next call is not blocked by the bad one."""
    session, clock = _open(task)
    with session:
        received: List[Dict[str, Any]] = []
        session.on_event(received.append)
        sink = session._events
        assert sink is not None
        sink.inbox.put(b"{not json", None)  # as if the library had handed it over first
        with pytest.raises(stepkit.InternalError, match="not valid JSON"):
            session.forward()
        assert [e["type"] for e in received] == ["stepWillAppear", "stepDidChange"] * 2
        assert [e["type"] for e in session.back()["events"]] == [e["type"] for e in received[-2:]]
        assert len(received) == 6
