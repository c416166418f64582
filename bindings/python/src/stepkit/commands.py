"""The participant's commands in the terminal presenter (``:back``, ``:skip``, ``:quit`` ...):
how they are typed and what the navigation ones do, for questions and active steps alike."""

from __future__ import annotations

from typing import Any, Callable, Dict, Optional

from ._core import Session
from .errors import StepKitError

__all__ = ["HELP", "command_name", "navigate", "NAVIGATION"]

HELP = """\
Type an answer and press Enter. Commands:
  :back   go back to the previous step
  :skip   skip this (optional) step
  :quit   stop: the task is finished as "discarded"
  :help   this help
  =JSON   enter the answer as raw JSON, e.g. =["a", "b"] or ="text starting with :"
  ?       "I don't know", where the question offers it
Enter alone keeps the current answer, or leaves an optional question unanswered.
Choices: type their numbers, separated by commas for several (e.g. 1,3)."""

#: Every command, by what may be typed.
_NAMES = {
    ":back": ":back", ":b": ":back",
    ":skip": ":skip", ":s": ":skip",
    ":quit": ":quit", ":q": ":quit",
    ":help": ":help", ":h": ":help", ":?": ":help",
    ":finish": ":finish", ":f": ":finish",
    ":suspend": ":suspend", ":resume": ":resume",
    ":start": ":start", ":continue": ":start",
}

#: The commands that move the session whatever the step is.
NAVIGATION = (":back", ":skip", ":quit")


def command_name(typed: str) -> Optional[str]:
    """The command a typed line names (``":b"`` -> ``":back"``), or None."""
    return _NAMES.get(typed.strip().lower())


def navigate(session: Session, name: str, say: Callable[[str], Any]) -> Optional[Dict[str, Any]]:
    """Runs ``:back``, ``:skip`` or ``:quit`` (which finishes the task as "discarded"); returns
    the new state, or None after saying why the session refused."""
    try:
        if name == ":back":
            return session.go_backward()
        if name == ":skip":
            return session.skip()
        if name == ":quit":
            state = session.finish("discarded")
            say("Discarded.")
            return state
        raise ValueError(f"{name} is not a navigation command")
    except StepKitError as exc:
        say(f"  ! {exc.message}")
        return None
