"""An optional real-time driver: a small timer thread that ticks a session when its deadlines come.

The engine never sleeps: a session's state carries ``nextDeadline`` (when something next comes
due: a spoken countdown, the halfway prompt, the end of a timed step) and the host calls
:meth:`stepkit.Session.tick` then. :class:`RealTimeDriver` does that for hosts that want it:

>>> session.set_clock(None)                                        # doctest: +SKIP
>>> with stepkit.RealTimeDriver(session, on_event=print) as driver:  # doctest: +SKIP
...     session.go_forward()           # an active step that starts by itself
...     driver.wait(timeout=60)     # until the task finishes (True) or the timeout

The driver is a daemon thread. It reads the session's ``nextDeadline``, sleeps until then on the
driver's clock (the system clock, which is also the session's default clock), and calls
:meth:`~stepkit.Session.tick`; ``on_event``, if given, receives each event of its ticks, on the
driver thread (an event callback set with :meth:`~stepkit.Session.on_event` receives them too,
also on the driver thread). Calls from other threads are safe: they are serialised with the
driver's by the session's lock. A call elsewhere that changes the deadline (starting a step,
going forward) is noticed within ``poll_interval`` seconds, or at once after :meth:`wake`.

The driver stops by itself when the task finishes or the session is closed, and with
:meth:`stop` (or at the end of a ``with`` block). An exception raised by a tick or by
``on_event`` stops the driver; it is kept in :attr:`error` and raised by :meth:`stop`.
"""

from __future__ import annotations

import threading
from typing import Any, Callable, Dict, Optional

from ._core import Session
from .clock import parse_iso8601_ms, system_time_ms
from .errors import StateError

__all__ = ["RealTimeDriver"]


class RealTimeDriver:
    """Ticks ``session`` on a daemon thread whenever its ``nextDeadline`` comes.

    ``on_event(event_dict)``: called with each event of the driver's ticks, on the driver
    thread. ``clock``: the driver's clock in milliseconds since the epoch; it must tell the same
    time as the session's clock (default: the system clock, the session's default).
    ``poll_interval``: how often, at most, the driver re-reads the state while it waits (to
    notice a deadline changed by a call on another thread). ``start``: start the thread now
    (else call :meth:`start`).
    """

    def __init__(
        self,
        session: Session,
        on_event: Optional[Callable[[Dict[str, Any]], Any]] = None,
        *,
        clock: Callable[[], int] = system_time_ms,
        poll_interval: float = 0.25,
        start: bool = True,
    ) -> None:
        if not isinstance(session, Session):
            raise TypeError(f"a RealTimeDriver drives a stepkit.Session, not {type(session).__name__}")
        if on_event is not None and not callable(on_event):
            raise TypeError("on_event must be callable or None")
        if not poll_interval > 0:
            raise ValueError("poll_interval must be positive")
        self.session = session
        self.on_event = on_event
        self.clock = clock
        self.poll_interval = float(poll_interval)
        #: The exception that stopped the driver, if one did.
        self.error: Optional[BaseException] = None
        #: How many times the driver has ticked the session.
        self.ticks = 0
        self._stopping = threading.Event()
        self._wake = threading.Event()
        self._done = threading.Event()
        self._finished = False
        self._thread = threading.Thread(target=self._run, name="stepkit-realtime-driver", daemon=True)
        if start:
            self.start()

    # -- control -------------------------------------------------------------------------------

    def start(self) -> "RealTimeDriver":
        """Starts the thread (once)."""
        self._thread.start()
        return self

    @property
    def running(self) -> bool:
        """True while the driver thread runs."""
        return self._thread.is_alive()

    @property
    def finished(self) -> bool:
        """True once the driver saw the task finished."""
        return self._finished

    def wake(self) -> None:
        """Makes the driver re-read the state now (e.g. after starting a step)."""
        self._wake.set()

    def wait(self, timeout: Optional[float] = None) -> bool:
        """Waits until the driver stops (the task finished, the session closed, :meth:`stop`,
        or an error). Returns True if the task finished, False otherwise (or on timeout)."""
        self._done.wait(timeout)
        return self._finished

    def stop(self, timeout: Optional[float] = 5.0) -> None:
        """Stops the driver and waits (up to ``timeout`` seconds) for its thread to end. A tick in
        progress completes first. Raises the exception that stopped the driver, if any (once).
        Idempotent; may be called from ``on_event`` (it then does not wait)."""
        self._stopping.set()
        self._wake.set()
        if self._thread.is_alive() and threading.current_thread() is not self._thread:
            self._thread.join(timeout)
        error, self.error = self.error, None
        if error is not None:
            raise error

    def __enter__(self) -> "RealTimeDriver":
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if exc_type is None:
            self.stop()
        else:
            try:
                self.stop()
            except BaseException:  # noqa: B902 - the exception already propagating wins
                pass

    # -- the thread ----------------------------------------------------------------------------

    def _run(self) -> None:
        try:
            while not self._stopping.is_set():
                self._wake.clear()
                state = self.session.state
                if state.get("status") != "inProgress":
                    self._finished = True
                    return
                deadline = state.get("nextDeadline")
                deadline_ms = parse_iso8601_ms(deadline) if isinstance(deadline, str) else None
                now = self.clock()
                if deadline_ms is not None and now >= deadline_ms:
                    state = self.session.tick()
                    self.ticks += 1
                    if self.on_event is not None:
                        for event in state.get("events") or []:
                            self.on_event(event)
                    continue
                delay = self.poll_interval
                if deadline_ms is not None:
                    delay = min(delay, (deadline_ms - now) / 1000.0)
                self._wake.wait(max(delay, 0.0))
        except StateError as exc:
            if not self.session.closed:  # a closed session just ends the driver
                self.error = exc
        except BaseException as exc:  # noqa: B902 - kept for stop()
            self.error = exc
        finally:
            self._done.set()

    def __repr__(self) -> str:
        status = "running" if self.running else ("finished" if self._finished else "stopped")
        return f"<stepkit.RealTimeDriver {status}, {self.ticks} ticks>"
