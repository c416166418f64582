"""Active steps (``active``, ``countdown``, ``wait``) in the terminal presenter (``python -m stepkit run``).

The engine owns the lifecycle, the timing, the files and the results; this module plays the
host: it shows the step, starts it when it does not start by itself, prints what the engine
asks to speak, play or vibrate (``speak`` / ``playSound`` / ``vibrate`` events), and, having no
sensors, pushes simulated samples (one per second of step time) to every recorder a
``recorderStarted`` event announces, until its ``recorderStopped``.

Non-interactive (``--answers FILE``, or stdin not a terminal): the session runs on a
:class:`~stepkit.ManualClock` that starts at the current time; each active step is run to its
end at once by advancing the clock to each ``nextDeadline`` (a second at a time, pushing
samples) and calling :meth:`~stepkit.Session.tick`. A ``wait`` step is finished by the host
after one simulated second. Prompts are printed with their time since the step appeared.

Interactive (a terminal): the session runs on the system clock, ticked by a
:class:`~stepkit.RealTimeDriver`; a live countdown shows the remaining seconds. Enter starts a
step that does not start by itself (and leaves a finished step that does not continue by
itself); ``:finish`` finishes the step now, ``:suspend``/``:resume`` pause it, ``:skip``
skips an optional step, ``:back`` goes back, ``:quit`` discards the task.

Recorders write under the session option ``outputDirectory``: ``--output-dir DIR``, or a new
temporary directory (kept after the run, since the result names its files; its path is printed
on stderr). The task result then lists the file results.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import select
import sys
import tempfile
import threading
from typing import Any, Dict, Iterator, List, Optional, Set, TextIO

from ._core import Session, Task
from .clock import ManualClock, parse_iso8601_ms, system_time_ms
from .commands import NAVIGATION, command_name, navigate
from .errors import StepKitError
from .realtime import RealTimeDriver
from .rendering import is_active, step_title

__all__ = [
    "is_active_step",
    "add_arguments",
    "prepare",
    "ActiveRunner",
    "simulated_sample",
]

def is_active_step(step: Any) -> bool:
    """Whether a step (the state's ``step``) is an active, countdown or wait step: the engine's
    ``isActive`` (:func:`stepkit.rendering.is_active`)."""
    return is_active(step)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Adds the ``run`` options of active tasks to the ``run`` subcommand's parser."""
    parser.add_argument(
        "--output-dir",
        metavar="DIR",
        help="where recorders write their files (default: a new temporary directory, kept)",
    )


def _needs_recorders(task: Task) -> bool:
    info = task.info
    if info.get("requestedPermissions"):
        return True
    return any(is_active(s) for s in info.get("steps", []))


def prepare(
    task: Task, args: argparse.Namespace, options: Dict[str, Any], *, interactive: bool
) -> "ActiveRunner":
    """Adds ``outputDirectory`` to the session ``options`` when the task has active steps or
    recorders (``--output-dir``, or a new temporary directory), and returns the runner to
    :meth:`~ActiveRunner.attach` to the session once it is open."""
    active = _needs_recorders(task)
    directory: Optional[str] = getattr(args, "output_dir", None)
    temporary = False
    # --output-dir is where captured files (a signature, an image) go too, recorders or not.
    if (active or directory is not None) and "outputDirectory" not in options:
        if directory is None:
            directory = tempfile.mkdtemp(prefix="stepkit-run-")
            temporary = True
        else:
            os.makedirs(directory, exist_ok=True)
        options["outputDirectory"] = os.path.abspath(directory)
    runner = ActiveRunner(
        enabled=active,
        interactive=interactive,
        quiet=bool(getattr(args, "quiet", False)),
        output_directory=options.get("outputDirectory"),
    )
    runner.temporary_directory = temporary
    return runner


# ------------------------------------------------------------------------------------------------
# Simulated sensors


def simulated_sample(recorder_type: str, seconds: float, index: int) -> Dict[str, Any]:
    """A plausible sample for a recorder type at ``seconds`` (since the epoch), the ``index``-th
    of its run (a cheap deterministic waveform, not real data)."""
    t = round(seconds, 3)
    phase = index * 0.7
    if recorder_type in ("accelerometer", "gyroscope"):
        return {
            "timestamp": t,
            "x": round(0.1 * math.sin(phase), 4),
            "y": round(0.1 * math.cos(phase), 4),
            "z": round(-1.0 + 0.05 * math.sin(2 * phase), 4),
        }
    if recorder_type == "pedometer":
        return {"timestamp": t, "steps": 2 * (index + 1), "distance": round(1.5 * (index + 1), 2)}
    if recorder_type == "deviceMotion":
        return {
            "timestamp": t,
            "attitude": {"x": 0.0, "y": 0.0, "z": round(0.01 * index, 4), "w": 1.0},
            "rotationRate": {"x": round(0.02 * math.sin(phase), 4), "y": 0.0, "z": 0.0},
            "gravity": {"x": 0.0, "y": 0.0, "z": -1.0},
            "userAcceleration": {"x": round(0.01 * math.cos(phase), 4), "y": 0.0, "z": 0.0},
        }
    if recorder_type == "location":
        return {
            "timestamp": t,
            "latitude": round(47.3769 + 0.00001 * index, 6),
            "longitude": round(8.5417 + 0.00001 * index, 6),
            "horizontalAccuracy": 5.0,
        }
    if recorder_type == "audio":
        return {"timestamp": t, "level": round(-40 + 5 * math.sin(phase), 2)}
    if recorder_type in ("heartRate", "healthQuantity"):
        return {"timestamp": t, "value": 70 + index % 5}
    if recorder_type == "touch":
        return {"timestamp": t, "x": 100 + index, "y": 200}
    return {"timestamp": t, "value": index}


# ------------------------------------------------------------------------------------------------
# The runner


def _clock_text(ms: int) -> str:
    seconds = max(ms, 0) // 1000
    return f"{seconds // 60:02d}:{seconds % 60:02d}"


class ActiveRunner:
    """Plays the host of a session's active steps: prints prompts, feeds recorders.

    Non-interactive, it runs on a :class:`ManualClock`: ``clock``, or one starting at the
    current time."""

    def __init__(
        self,
        *,
        enabled: bool = True,
        interactive: bool = False,
        quiet: bool = False,
        output_directory: Optional[str] = None,
        out: Optional[TextIO] = None,
        clock: Optional[ManualClock] = None,
    ) -> None:
        self.enabled = enabled
        self.interactive = interactive
        self.quiet = quiet
        self.output_directory = output_directory
        self.out: TextIO = out if out is not None else sys.stdout
        self.session: Optional[Session] = None
        self.clock: Optional[ManualClock] = clock
        self.driver: Optional[RealTimeDriver] = None
        #: running recorders: identifier -> [type, samples pushed]
        self.recorders: Dict[str, List[Any]] = {}
        self.files_written = False
        #: the output directory is a temporary one made for this run (removed if left empty)
        self.temporary_directory = False
        self._step_ms: Dict[str, int] = {}  # step -> when it appeared (ms)
        self._current: Optional[str] = None  # the step that appeared last
        self._announced: Optional[str] = None  # the step whose header was printed last
        self._active_steps: Optional[Set[str]] = None
        self._print_lock = threading.Lock()
        self._live = False  # a live countdown line is on the terminal

    # -- attaching -------------------------------------------------------------------------------

    @contextlib.contextmanager
    def attach(self, session: Session) -> Iterator["ActiveRunner"]:
        """Attaches the runner to an open session for the duration of a ``with`` block: the
        event callback, and the clock (a ManualClock from now when not interactive). Does
        nothing for a task without active steps."""
        if not self.enabled:
            yield self
            return
        self.session = session
        if not self.interactive:
            if self.clock is None:
                self.clock = ManualClock(system_time_ms())
            session.set_clock(self.clock)
        session.on_event(self._on_event)
        try:
            yield self
        finally:
            if self.driver is not None:
                try:
                    self.driver.stop()
                except StepKitError:
                    pass
                self.driver = None
            if not session.closed:
                session.on_event(None)
            directory = self.output_directory
            if directory and self.temporary_directory:
                with contextlib.suppress(OSError):
                    os.rmdir(directory)  # only if empty: nothing was recorded
            if directory and os.path.isdir(directory) and os.listdir(directory):
                print(f"Recorder files are in {directory}", file=sys.stderr)

    # -- output ----------------------------------------------------------------------------------

    def say(self, text: str) -> None:
        if self.quiet:
            return
        with self._print_lock:
            if self._live:
                self.out.write("\r\033[K")
                self._live = False
            print(text, file=self.out, flush=True)

    def clear_live(self) -> None:
        """Clears the live countdown line, if one is on the terminal."""
        with self._print_lock:
            if self._live:
                self.out.write("\r\033[K")
                self.out.flush()
                self._live = False

    def live(self, text: str) -> None:
        """Rewrites the live countdown line (terminals only)."""
        if self.quiet or not getattr(self.out, "isatty", lambda: False)():
            return
        with self._print_lock:
            self.out.write("\r\033[K" + text)
            self.out.flush()
            self._live = True

    def _stamp(self, event: Dict[str, Any]) -> str:
        if self.interactive:
            return "  "
        step = event.get("step", self._current)
        date = event.get("date")
        if isinstance(step, str) and step in self._step_ms and isinstance(date, str):
            try:
                return f"  {_clock_text(parse_iso8601_ms(date) - self._step_ms[step])}  "
            except ValueError:
                pass
        return "  "

    def _on_event(self, event: Dict[str, Any]) -> None:
        kind = event.get("type")
        if kind == "stepWillAppear":
            step = event.get("step")
            date = event.get("date")
            if isinstance(step, str) and isinstance(date, str):
                self._step_ms[step] = parse_iso8601_ms(date)
                self._current = step
                self._appeared(step)
            return
        if kind == "recorderStarted":
            recorder = str(event.get("recorder"))
            self.recorders[recorder] = [str(event.get("recorderType")), 0]
            self.say(f"{self._stamp(event)}[recording {recorder}]")
        elif kind == "recorderStopped":
            recorder = str(event.get("recorder"))
            run = self.recorders.pop(recorder, None)
            count = run[1] if run else 0
            self.say(f"{self._stamp(event)}[stopped {recorder}: {count} sample{'s' if count != 1 else ''}]")
        elif kind == "recorderFailed":
            recorder = str(event.get("recorder"))
            self.recorders.pop(recorder, None)
            lost = event.get("samplesLost")
            self.say(f"{self._stamp(event)}! recorder {recorder} failed: {event.get('message')} ({lost} samples lost)")
        elif kind == "speak":
            text = str(event.get("text", ""))
            if event.get("kind") == "countDown":
                self.say(f"{self._stamp(event)}{text}")
            else:
                self.say(f"{self._stamp(event)}speak: {text}")
        elif kind == "playSound":
            self.say(f"{self._stamp(event)}[sound]")
        elif kind == "vibrate":
            self.say(f"{self._stamp(event)}[vibrate]")
        elif kind == "activeStepStarted":
            self.say(f"{self._stamp(event)}[started]")
        elif kind == "activeStepSuspended":
            self.say(f"{self._stamp(event)}[suspended]")
        elif kind == "activeStepResumed":
            self.say(f"{self._stamp(event)}[resumed]")
        elif kind == "activeStepFinished":
            self.say(f"{self._stamp(event)}[finished]")
        elif kind == "taskSuspended":
            self.say("  [task suspended]")
        elif kind == "taskResumed":
            self.say("  [task resumed]")
        elif kind == "taskFinished" and event.get("reason") == "failed":
            self.say("  ! the task failed")

    def push_samples(self, now_ms: int) -> Optional[Dict[str, Any]]:
        """Pushes one simulated sample to every running recorder; returns the state after the
        last one taken (None when no recorder took one)."""
        session = self.session
        state: Optional[Dict[str, Any]] = None
        if session is None:
            return state
        for recorder, run in list(self.recorders.items()):
            if recorder not in self.recorders:
                continue  # stopped or failed meanwhile
            sample = simulated_sample(run[0], now_ms / 1000.0, run[1])
            try:
                state = session.record(recorder, sample)
            except StepKitError as exc:
                self.say(f"  ! cannot record {recorder}: {exc.message}")
                self.recorders.pop(recorder, None)
                continue
            run[1] += 1
            self.files_written = True
        return state

    def _appeared(self, identifier: str) -> None:
        """An active step appeared: prints its header before its events."""
        session = self.session
        if session is None or self.interactive:  # the Presenter prints the header
            return
        if self._active_steps is None:
            steps = session.task.info.get("steps", [])
            self._active_steps = {str(s.get("identifier")) for s in steps if is_active(s)}
        if identifier not in self._active_steps:
            return
        state = session.state  # allowed: events are delivered outside the session's lock
        if (state.get("step") or {}).get("identifier") == identifier:
            self._header(state)
        else:  # passed through already (one tick ran several steps)
            self._announced = identifier
            self.say(identifier)

    def _header(self, state: Dict[str, Any]) -> None:
        step = state.get("step") or {}
        active = state.get("active") or {}
        self._announced = step.get("identifier")
        title = step_title(step)
        duration = active.get("duration") or 0
        kind = active.get("kind") or step.get("type")
        what = f"{kind}, {duration:g} s" if duration else str(kind)
        self.say(f"{title} ({what})")
        for key in ("text", "detailText"):
            value = step.get(key)
            if isinstance(value, str) and value:
                self.say(f"  {value}")

    # -- non-interactive ---------------------------------------------------------------------

    def run_step(self, max_iterations: int = 1_000_000) -> Dict[str, Any]:
        """Runs the current active step to its end on the manual clock and leaves it. Returns
        the state once the session is on another step (or finished)."""
        session = self.session
        clock = self.clock
        if session is None or clock is None or self.interactive:
            raise RuntimeError("this runner is not attached to run steps on a manual clock")
        state = session.state
        step_id = (state.get("step") or {}).get("identifier")
        if self._announced != step_id:
            self._header(state)
        next_sample = clock.now_ms + 1000
        for _ in range(max_iterations):
            step = state.get("step")
            if (
                state.get("status") != "inProgress"
                or not is_active_step(step)
                or (step or {}).get("identifier") != step_id
            ):
                return state
            active = state.get("active") or {}
            status = active.get("status")
            if state.get("taskSuspended"):
                state = session.resume_task()
            elif status == "prepared":
                self.say("  (start)")
                state = session.start()
                next_sample = clock.now_ms + 1000
            elif status == "suspended":
                state = session.resume()
            elif status == "finished":
                state = session.go_forward()
            else:
                deadline = state.get("nextDeadline")
                deadline_ms = parse_iso8601_ms(deadline) if isinstance(deadline, str) else None
                if deadline_ms is None:
                    # A wait step (or a step with no timer): the host finishes it, after a second.
                    clock.set(max(clock.now_ms, next_sample))
                    self.push_samples(clock.now_ms)
                    next_sample = clock.now_ms + 1000
                    self.say("  (finish)")
                    state = session.finish_active()
                    continue
                if next_sample <= deadline_ms:
                    clock.set(max(clock.now_ms, next_sample))
                    state = self.push_samples(clock.now_ms) or state
                    next_sample += 1000
                    if clock.now_ms < deadline_ms:
                        continue
                clock.set(max(clock.now_ms, deadline_ms))
                state = session.tick()
        raise RuntimeError(f"the active step {step_id!r} did not end")

    # -- interactive -------------------------------------------------------------------------

    def present(self, presenter: Any, state: Dict[str, Any]) -> Dict[str, Any]:
        """Presents the current active step on a terminal until the session leaves it; returns
        the state then. The clock is the system clock, ticked by a RealTimeDriver: the state is
        read again as time passes."""
        session = self.session
        assert session is not None
        if self.driver is None or not self.driver.running:
            self.driver = RealTimeDriver(session)
        step_id = (state.get("step") or {}).get("identifier")
        active = state.get("active") or {}
        duration = active.get("duration") or 0
        self.say(f"  ({active.get('kind')}{f', {duration:g} s' if duration else ''})")
        self.say("  Enter: start / continue   :finish   :suspend   :resume   :skip   :back   :quit")
        next_sample = system_time_ms()
        shown: Optional[str] = None
        while True:
            state = session.state
            step = state.get("step")
            if (
                state.get("status") != "inProgress"
                or not is_active_step(step)
                or (step or {}).get("identifier") != step_id
            ):
                self.clear_live()
                return state
            active = state.get("active") or {}
            status = active.get("status")
            now = system_time_ms()
            if status == "running" and now >= next_sample:
                self.push_samples(now)
                next_sample = now + 1000
            remaining = active.get("remaining")
            if status == "running" and isinstance(remaining, (int, float)) and active.get("duration"):
                text = f"  {math.ceil(remaining)} s remaining"
            elif status == "running":
                text = "  running (:finish to finish)"
            elif status == "prepared":
                text = "  [Enter to start]"
            elif status == "finished":
                text = "  [Enter to continue]"
            else:
                text = f"  {status}"
            if text != shown:
                if getattr(self.out, "isatty", lambda: False)():
                    self.live(text)
                else:
                    self.say(text)
                shown = text
            line = self._poll_line(
                presenter,
                0.2 if status == "running" else None,
                waits_for_time=state.get("nextDeadline") is not None,
            )
            if line is None:
                continue
            command = ":quit" if line == ":eof" else (command_name(line) if line.strip() else ":start")
            try:
                if command == ":start":
                    if status == "prepared":
                        session.start()
                    elif status == "finished":
                        session.go_forward()
                    elif status == "suspended":
                        session.resume()
                elif command == ":finish":
                    session.finish_active()
                elif command == ":suspend":
                    session.suspend()
                elif command == ":resume":
                    session.resume()
                elif command in NAVIGATION:
                    navigate(session, command, self.say)
                else:
                    self.say("  ! Commands: Enter, :finish, :suspend, :resume, :skip, :back, :quit")
            except StepKitError as exc:
                self.say(f"  ! {exc.message}")
            if self.driver is not None:
                self.driver.wake()
            shown = None

    def _poll_line(
        self, presenter: Any, timeout: Optional[float], *, waits_for_time: bool = True
    ) -> Optional[str]:
        """A line typed by the participant, or None when none came within ``timeout``
        (``":eof"`` at the end of input)."""
        read = getattr(presenter, "read", None)
        default_reader = getattr(type(presenter), "_read_stdin", None)
        uses_stdin = read is None or getattr(read, "__func__", read) is default_reader
        try:
            tty = uses_stdin and sys.stdin.isatty()
        except (AttributeError, OSError, ValueError):
            tty = False
        if timeout is not None and not tty and waits_for_time:
            # Not a terminal (piped input, a test's reader): no commands while a timed step
            # runs; lines are read only when the step waits for the participant.
            threading.Event().wait(timeout)
            return None
        if tty:
            try:
                fd = sys.stdin.fileno()
            except (AttributeError, OSError, ValueError):
                fd = -1
            if fd >= 0:
                ready, _, _ = select.select([fd], [], [], timeout)
                if not ready:
                    return None
                line = sys.stdin.readline()
                if line == "":
                    return ":eof"
                with self._print_lock:
                    self._live = False
                return line.rstrip("\n")
        line = read("") if read is not None else None
        return ":eof" if line is None else line
