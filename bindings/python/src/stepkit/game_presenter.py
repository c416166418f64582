"""The predefined active tasks' games in the terminal presenter (``python -m stepkit run``):
spatial span memory, PSAT, Stroop and the tower of Hanoi, played with the keyboard.

The engine decides everything (docs/active-tasks.md): what to show, when, which input counts,
and the result. This module only draws what the state's ``active.game`` says, when it says
(its times are seconds of the step's running time; the state's ``active.elapsed`` is that time
now, ``nextDeadline`` the moment a PSAT window closes), and hands what is typed to
:meth:`stepkit.Session.input`, timed by the session's clock:

- spatial span: the board's tiles are numbered from 1 row by row; the sequence is shown one
  tile at a time (``showFrom``, one per ``playSpeed``), then the participant types the tiles'
  numbers (several on a line, separated by spaces) — each a tap on that tile;
- PSAT: each digit is shown (or, for the auditory modes, printed as spoken) at its time; the
  participant types the sum of the last two digits, or Enter to let the window close;
- Stroop: the colour word is shown in its print colour (on a terminal; otherwise the print
  colour is named); the participant types the print colour, its initial, or its button's number;
- tower of Hanoi: the towers are drawn; the participant types a move as two tower numbers.

``:finish`` ends the game as it stands; ``:back``, ``:skip`` and ``:quit`` work as everywhere.

Time: the presenter lets time pass through a :class:`Timeline` over the session's clock. On the
system clock it sleeps (a terminal: the sequence plays in real time, a PSAT window closes
while the participant is typing); on a :class:`~stepkit.ManualClock` (tests, replays) it moves
the clock instead, so a scripted game runs at once and gives the same result every time.
"""

from __future__ import annotations

import select
import sys
import time
from typing import Any, Callable, Dict, List, Optional, Set, TextIO

from ._core import Session
from .clock import ManualClock, parse_iso8601_ms, system_time_ms
from .commands import NAVIGATION, command_name, navigate
from .errors import StepKitError

__all__ = ["GAMES", "is_game", "Timeline", "GamePresenter"]

State = Dict[str, Any]

#: The games this presenter plays (the state's ``active.game.type``).
GAMES = ("spatialSpanMemory", "psat", "stroop", "towerOfHanoi")

#: ANSI colours for Stroop's print colours on a terminal.
_ANSI = {"red": "31", "green": "32", "blue": "34", "yellow": "33"}


def is_game(state: State) -> bool:
    """Whether the current step is a game this presenter plays: the state's ``active.game``, or
    (before the step is started, when there is no game yet) the step's ``type``."""
    game = (state.get("active") or {}).get("game")
    if isinstance(game, dict):
        return game.get("type") in GAMES
    return (state.get("step") or {}).get("type") in GAMES


class Timeline:
    """How time passes for the presenter: over a :class:`~stepkit.ManualClock` (``clock``), by
    moving it; over the system clock (``clock`` None, the session's default), by sleeping."""

    def __init__(self, clock: Optional[ManualClock] = None) -> None:
        self.clock = clock

    @property
    def manual(self) -> bool:
        return self.clock is not None

    def now_ms(self) -> int:
        return self.clock.now_ms if self.clock is not None else system_time_ms()

    def wait_ms(self, ms: int) -> None:
        """Lets ``ms`` milliseconds pass (nothing when ``ms`` <= 0)."""
        if ms <= 0:
            return
        if self.clock is not None:
            self.clock.advance(ms)
        else:
            time.sleep(ms / 1000)


class GamePresenter:
    """Plays the game of the current step until the session leaves the step.

    ``read(prompt)``: a typed line, None at the end of input; ``out``: where it draws."""

    def __init__(
        self,
        session: Session,
        out: TextIO,
        read: Callable[[str], Optional[str]],
        timeline: Timeline,
        *,
        reads_stdin: bool = False,
    ) -> None:
        self.session = session
        self.out = out
        self.read = read
        self.timeline = timeline
        self.reads_stdin = reads_stdin
        self._shown: Set[Any] = set()  # what was drawn already (games, digits, attempts)

    # -- drawing and reading ----------------------------------------------------------------------

    def say(self, text: str = "") -> None:
        print(text, file=self.out, flush=True)

    def _tty(self) -> bool:
        return bool(getattr(self.out, "isatty", lambda: False)())

    def _line(self, prompt: str, timeout_ms: Optional[int] = None) -> Optional[str]:
        """A typed line; None when ``timeout_ms`` passed first (only on a terminal on the system
        clock: a scripted reader is read whole lines at a time); ``":quit"`` at the end of input."""
        if timeout_ms is not None and not self.timeline.manual and self.reads_stdin:
            try:
                tty = sys.stdin.isatty()
                fd = sys.stdin.fileno()
            except (AttributeError, OSError, ValueError):
                tty, fd = False, -1
            if tty and fd >= 0:
                self.out.write(prompt)
                self.out.flush()
                ready, _, _ = select.select([fd], [], [], max(timeout_ms, 0) / 1000)
                if not ready:
                    self.say()
                    return None
                line = sys.stdin.readline()
                return ":quit" if line == "" else line.rstrip("\n")
        line = self.read(prompt)
        return ":quit" if line is None else line

    def _wait_step_time(self, state: State, seconds: float) -> State:
        """Lets time pass until the step's running time is ``seconds`` (the state's
        ``active.elapsed`` is its time now); returns the state then."""
        elapsed = (state.get("active") or {}).get("elapsed") or 0
        self.timeline.wait_ms(round((seconds - elapsed) * 1000))
        return self.session.state

    # -- the loop ---------------------------------------------------------------------------------

    def run(self, state: State) -> State:
        """Plays until the session leaves the current step; returns the state then."""
        step_id = (state.get("step") or {}).get("identifier")
        self.say("  (type :finish to end the game now, :help for the keys)")
        while True:
            step = state.get("step") or {}
            if state.get("status") != "inProgress" or step.get("identifier") != step_id:
                return state
            active = state.get("active") or {}
            status = active.get("status")
            try:
                if state.get("taskSuspended"):
                    state = self.session.resume_task()
                    continue
                if status in ("prepared", "suspended", "finished"):
                    label = {"prepared": "start", "suspended": "resume", "finished": "continue"}[status]
                    line = self._line(f"[Enter to {label}] ") or ""
                    if self._command(line):
                        state = self.session.state
                    elif status == "prepared":
                        state = self.session.start()
                    elif status == "suspended":
                        state = self.session.resume()
                    else:
                        state = self.session.go_forward()
                    continue
                game = active.get("game") or {}
                kind = game.get("type")
                if kind == "spatialSpanMemory":
                    state = self._span(state, game)
                elif kind == "psat":
                    state = self._psat(state, game)
                elif kind == "stroop":
                    state = self._stroop(game)
                else:
                    state = self._hanoi(game)
            except _Moved as moved:
                state = moved.state
            except StepKitError as exc:
                self.say(f"  ! {exc.message}")
                state = self.session.state

    def _command(self, line: str) -> bool:
        """Runs a command typed instead of a move; True when the line was one (the session may
        have moved: the caller reads the state again)."""
        name = command_name(line) if line.strip().startswith(":") else None
        if name is None:
            return False
        if name == ":help":
            self.say(_HELP)
        elif name == ":finish":
            self.session.finish_active()
        elif name in NAVIGATION:
            navigate(self.session, name, self.say)
        else:
            self.say(f"  ! {line.strip()} does nothing here; :help lists the keys")
        return True

    def _typed(self, prompt: str, timeout_ms: Optional[int] = None) -> Optional[str]:
        """A typed move (stripped); raises _Moved after a command; None after a timeout."""
        line = self._line(prompt, timeout_ms)
        if line is None:
            return None
        if self._command(line):
            raise _Moved(self.session.state)
        return line.strip()

    def _input(self, event: Dict[str, Any]) -> Optional[State]:
        """Hands the game one input: the new state, or None after saying why it was refused."""
        try:
            return self.session.input(event)
        except StepKitError as exc:
            self.say(f"  ! {exc.message}")
            return None

    # -- spatial span memory ----------------------------------------------------------------------

    def _span(self, state: State, game: Dict[str, Any]) -> State:
        step_id = (state.get("step") or {}).get("identifier")
        number = game.get("gameNumber")
        rows, columns = int(game.get("rows") or 0), int(game.get("columns") or 0)
        if ("span", number) not in self._shown:
            self._shown.add(("span", number))
            order = "in REVERSE order" if game.get("reversed") else "in order"
            self.say(f"  Game {number}: {game.get('span')} tiles light up; then type them {order}.")
            width = len(str(rows * columns))
            for r in range(rows):
                self.say("    " + " ".join(str(r * columns + c + 1).rjust(width) for c in range(columns)))
            speed = float(game.get("playSpeed") or 1)
            show_from = float(game.get("showFrom") or 0)
            for i, tile in enumerate(game.get("sequence") or []):
                state = self._wait_step_time(state, show_from + i * speed)
                if self._tty():
                    self.out.write(f"\r\033[K    ▶ {int(tile) + 1}")
                    self.out.flush()
                else:
                    self.say(f"    ▶ {int(tile) + 1}")
            state = self._wait_step_time(state, float(game.get("tapsFrom") or 0))
            if self._tty():
                self.out.write("\r\033[K")
                self.out.flush()
        # 20 s without a right tap end the game (the state's nextDeadline): on a terminal the
        # prompt gives up then and the presenter ticks.
        line = self._typed_in_time(state, f"  tiles (1-{rows * columns})> ")
        if line is None:
            state = self._wait_deadline(self.session.state)
            if not _same_game(state, step_id, number):
                self.say(f"  Game {number} over: the time ran out.")
            return state
        if not line:
            return self.session.state
        for token in line.replace(",", " ").split():
            if not token.isdigit() or not 1 <= int(token) <= rows * columns:
                self.say(f"  ! {token!r} is not a tile: type numbers from 1 to {rows * columns}")
                break
            moved = self._input({"type": "tap", "target": int(token) - 1})
            if moved is None:
                break
            state = moved
            if not _same_game(state, step_id, number):
                break  # the game ended: what was typed after it is not taken
        if not _same_game(state, step_id, number):
            self.say(f"  Game {number} over.")
        return self.session.state

    # -- PSAT -------------------------------------------------------------------------------------

    def _present_digit(self, game: Dict[str, Any], index: int) -> None:
        if ("psat", index) in self._shown:
            return
        self._shown.add(("psat", index))
        digits = game.get("digits") or []
        if not 0 <= index < len(digits):
            return
        mode = game.get("presentationMode")
        spoken = "spoken " if mode == "auditory" else ""
        self.say(f"    {spoken}digit {index + 1}: {digits[index]}")

    def _psat(self, state: State, game: Dict[str, Any]) -> State:
        index = int(game.get("digit") or 0)
        if index == 0 or game.get("over"):
            return self._wait_deadline(state)
        if ("psat", "intro") not in self._shown:
            self._shown.add(("psat", "intro"))
            self.say("  Add each digit to the one before it and type the sum (Enter: no answer).")
        self._present_digit(game, index - 1)
        state = self._wait_step_time(state, float(game.get("presentedAt") or 0))
        self._present_digit(game, index)
        line = self._typed_in_time(state, "  sum> ")
        if not line:  # the window closes unanswered (or closed before the line came)
            return self._wait_deadline(self.session.state)
        moved = self._input({"type": "key", "key": line})
        return moved if moved is not None else self.session.state

    def _typed_in_time(self, state: State, prompt: str) -> Optional[str]:
        """A typed move before the state's ``nextDeadline``; None when the deadline came first
        (a terminal's prompt gives up then; a line read after it, on a scripted clock, is too
        late and not taken)."""
        line = self._typed(prompt, self._until_deadline(state))
        left = self._until_deadline(state)
        if line is not None and left is not None and left <= 0:
            if line:
                self.say("  ! Too late: the time ran out before that was typed.")
            return None
        return line

    def _until_deadline(self, state: State) -> Optional[int]:
        """Milliseconds until the state's ``nextDeadline`` (None: none)."""
        deadline = state.get("nextDeadline")
        return parse_iso8601_ms(deadline) - self.timeline.now_ms() if isinstance(deadline, str) else None

    def _wait_deadline(self, state: State) -> State:
        """Lets time pass to the state's ``nextDeadline`` and ticks."""
        deadline = state.get("nextDeadline")
        if not isinstance(deadline, str):
            return state
        self.timeline.wait_ms(parse_iso8601_ms(deadline) - self.timeline.now_ms())
        return self.session.tick()

    # -- Stroop -----------------------------------------------------------------------------------

    def _stroop(self, game: Dict[str, Any]) -> State:
        colors: List[str] = [str(c) for c in game.get("colors") or []]
        attempt = game.get("attempt")
        if ("stroop", "intro") not in self._shown:
            self._shown.add(("stroop", "intro"))
            keys = "  ".join(f"{i + 1} {c}" for i, c in enumerate(colors))
            self.say(f"  Type the colour the word is PRINTED in: its name, its initial, or {keys}.")
        if ("stroop", attempt) not in self._shown:
            self._shown.add(("stroop", attempt))
            word, color = str(game.get("text", "")).upper(), str(game.get("color", ""))
            if self._tty() and color in _ANSI:
                self.say(f"    {attempt}/{game.get('numberOfAttempts')}  \033[1;{_ANSI[color]}m{word}\033[0m")
            else:
                self.say(f"    {attempt}/{game.get('numberOfAttempts')}  {word}  (printed in {color})")
        line = self._typed("  colour> ")
        if not line:
            return self.session.state
        event: Dict[str, Any]
        if line.isdigit() and 1 <= int(line) <= len(colors):
            event = {"type": "tap", "target": int(line) - 1}
        else:
            event = {"type": "key", "key": line}
        moved = self._input(event)
        return moved if moved is not None else self.session.state

    # -- tower of Hanoi ---------------------------------------------------------------------------

    def _hanoi(self, game: Dict[str, Any]) -> State:
        towers = game.get("towers") or []
        if ("hanoi", "intro") not in self._shown:
            self._shown.add(("hanoi", "intro"))
            target = int(game.get("targetTower") or 0) + 1
            self.say(f"  Move every disk to tower {target}, one at a time, never onto a smaller one. "
                     "Type a move as two tower numbers, e.g. 1 3.")
        for i, disks in enumerate(towers):
            self.say(f"    tower {i + 1}: {' '.join(str(d) for d in disks) or '-'}")
        line = self._typed("  move> ")
        if not line:
            return self.session.state
        parts = line.replace(",", " ").split()
        if len(parts) != 2 or not all(p.isdigit() for p in parts):
            self.say(f"  ! Type two tower numbers from 1 to {len(towers)}, e.g. 1 3")
            return self.session.state
        moved = self._input({"type": "drag", "from": int(parts[0]) - 1, "to": int(parts[1]) - 1})
        return moved if moved is not None else self.session.state


def _same_game(state: State, step_id: Any, number: Any) -> bool:
    """Whether the state still shows game ``number`` of spatial span step ``step_id``."""
    game = (state.get("active") or {}).get("game") or {}
    return (
        (state.get("step") or {}).get("identifier") == step_id
        and game.get("type") == "spatialSpanMemory"
        and game.get("gameNumber") == number
    )


class _Moved(Exception):
    """A command moved the session: the state to go on with."""

    def __init__(self, state: State) -> None:
        super().__init__("moved")
        self.state = state


_HELP = """\
Games: type your move and press Enter.
  spatial span: the tiles' numbers, in the order shown (e.g. 5 2 7)
  PSAT: the sum of the last two digits (Enter: no answer)
  Stroop: the print colour (red, r, or its number)
  tower of Hanoi: from and to tower (e.g. 1 3)
  :finish  end the game now        :back  :skip  :quit  as everywhere"""
