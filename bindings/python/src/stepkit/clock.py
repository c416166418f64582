"""Clocks for sessions: :class:`ManualClock`, a clock the caller moves by hand."""

from __future__ import annotations

import operator
import threading
import time
from datetime import datetime, timezone
from typing import Union

__all__ = ["ManualClock", "system_time_ms", "iso8601_ms", "parse_iso8601_ms"]

_INT64_MIN = -(2**63)
_INT64_MAX = 2**63 - 1


def system_time_ms() -> int:
    """Milliseconds since 1970-01-01T00:00:00Z, from the system clock."""
    return time.time_ns() // 1_000_000


def _as_ms(value: object, what: str) -> int:
    if isinstance(value, bool):
        raise TypeError(f"{what} must be an int number of milliseconds, not bool")
    try:
        ms = operator.index(value)  # type: ignore[arg-type]
    except TypeError:
        raise TypeError(
            f"{what} must be an int number of milliseconds, not {type(value).__name__}"
        ) from None
    if not _INT64_MIN <= ms <= _INT64_MAX:
        raise ValueError(f"{what} is out of the int64 range: {ms}")
    return ms


def iso8601_ms(ms: int) -> str:
    """Formats milliseconds since the epoch the way StepKit writes dates:
    ``1767225600000`` -> ``"2026-01-01T00:00:00.000Z"``."""
    seconds, millis = divmod(_as_ms(ms, "ms"), 1000)
    moment = datetime.fromtimestamp(seconds, tz=timezone.utc)
    return moment.strftime("%Y-%m-%dT%H:%M:%S") + f".{millis:03d}Z"


def parse_iso8601_ms(text: str) -> int:
    """Parses an ISO 8601 date-time with an offset or ``Z`` into milliseconds since the epoch."""
    if not isinstance(text, str):
        raise TypeError("expected an ISO 8601 string")
    value = text.strip()
    if value.endswith(("Z", "z")):
        value = value[:-1] + "+00:00"
    moment = datetime.fromisoformat(value)
    if moment.tzinfo is None:
        raise ValueError(f"ISO 8601 date-time without an offset: {text!r}")
    delta = moment - datetime(1970, 1, 1, tzinfo=timezone.utc)
    return (delta.days * 86400 + delta.seconds) * 1000 + delta.microseconds // 1000


class ManualClock:
    """A clock that moves only when told to: for tests and replays.

    ``ManualClock(1767225600000)`` starts at 2026-01-01T00:00:00.000Z. A ManualClock is a
    callable returning the current time in milliseconds, so it can be passed to
    :meth:`stepkit.Session.set_clock`; one clock may drive several sessions.

    >>> clock = ManualClock(1767225600000)
    >>> clock.advance_seconds(1.5)
    1767225601500
    >>> clock.iso
    '2026-01-01T00:00:01.500Z'
    """

    __slots__ = ("_ms", "_lock")

    def __init__(self, start_ms: int = 0) -> None:
        self._ms = _as_ms(start_ms, "start_ms")
        self._lock = threading.Lock()

    @classmethod
    def from_iso(cls, text: str) -> "ManualClock":
        """A clock starting at an ISO 8601 date-time, e.g. ``"2026-01-01T00:00:00Z"``."""
        return cls(parse_iso8601_ms(text))

    @property
    def now_ms(self) -> int:
        """The current time, in milliseconds since the epoch."""
        return self._ms

    @now_ms.setter
    def now_ms(self, value: int) -> None:
        self.set(value)

    @property
    def iso(self) -> str:
        """The current time as StepKit writes it (ISO 8601 UTC with milliseconds)."""
        return iso8601_ms(self._ms)

    def __call__(self) -> int:
        return self._ms

    def set(self, ms: int) -> int:
        """Sets the time (milliseconds since the epoch; may go backwards). Returns it."""
        value = _as_ms(ms, "ms")
        with self._lock:
            self._ms = value
        return value

    def advance(self, ms: int = 1000) -> int:
        """Moves the clock forward by ``ms`` milliseconds (>= 0). Returns the new time."""
        delta = _as_ms(ms, "ms")
        if delta < 0:
            raise ValueError("a ManualClock only advances: use set() to go back in time")
        with self._lock:
            self._ms = _as_ms(self._ms + delta, "the clock")
            return self._ms

    def advance_seconds(self, seconds: Union[int, float] = 1) -> int:
        """Moves the clock forward by ``seconds`` (rounded to the millisecond)."""
        if isinstance(seconds, bool) or not isinstance(seconds, (int, float)):
            raise TypeError(f"seconds must be a number, not {type(seconds).__name__}")
        if seconds != seconds or seconds in (float("inf"), float("-inf")):
            raise ValueError("seconds must be finite")
        return self.advance(round(seconds * 1000))

    def __repr__(self) -> str:
        return f"ManualClock({self._ms})"
