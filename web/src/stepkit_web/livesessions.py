"""Live sessions kept per worker between a participant's page POSTs, so that the next POST
does not restore the session from its row (the restore replays the run and checks its HMAC:
the largest engine cost of a page).

An entry is the open session this worker wrote last, with the row it wrote: the row's
``version`` and its restoration text. A POST uses the entry only when the row it read (in the
same query that reads everything else of the page: resume token, task version, the database's
clock) has exactly that version and text, on the task version the entry runs; anything else
(another worker or instance wrote the session, a migration, a row edited by hand) restores
from the row as before. The entry is taken out while a request uses it, so two requests of
one worker never share a live session, and put back only after its conditional UPDATE
succeeded; a failed UPDATE, a refused answer, an error: the session is closed and the next
POST restores. A revoked link or a deleted participant finds no row, so the entry is never
reached (and ages out). Bounded: the least recently written entries are closed beyond
``capacity``."""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Dict, Optional


@dataclass
class LiveEntry:
    session: Any  # the TimedSession, open
    clock: Any  # its ResumeClock, frozen at the save
    version: int  # the row's version this worker wrote
    saved: str  # and its restoration text
    saved_at: int
    task_version: int
    # The state the last move returned, when nothing in it depends on the time (no running
    # step, no time limit, no deadline): the next POST reads it instead of asking the engine.
    state: Optional[Dict[str, Any]]


class LiveSessions:
    """A bounded LRU of :class:`LiveEntry` by session id (``capacity`` 0: none kept)."""

    def __init__(self, capacity: int) -> None:
        if capacity < 0:
            raise ValueError("the live session capacity cannot be negative")
        self.capacity = capacity
        self._entries: "OrderedDict[str, LiveEntry]" = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)

    def take(self, session_id: str, version: int, saved: str,
             task_version: int) -> Optional[LiveEntry]:
        """The entry for a row just read, taken out of the cache, if it is the row this worker
        wrote (same version, same text, same task version); else None (a stale entry is
        closed)."""
        if not self.capacity:
            return None
        with self._lock:
            entry = self._entries.pop(session_id, None)
        if entry is None:
            return None
        if entry.version == version and entry.task_version == task_version \
                and entry.saved == saved:
            return entry
        _close(entry)
        return None

    def put(self, session_id: str, entry: LiveEntry) -> None:
        """Keeps a session whose row was just written; the least recently written entries
        beyond the capacity are closed."""
        if not self.capacity:
            _close(entry)
            return
        evicted = []
        with self._lock:
            old = self._entries.pop(session_id, None)
            if old is not None:
                evicted.append(old)
            self._entries[session_id] = entry
            while len(self._entries) > self.capacity:
                evicted.append(self._entries.popitem(last=False)[1])
        for e in evicted:
            _close(e)

    def drop(self, session_id: str) -> None:
        with self._lock:
            entry = self._entries.pop(session_id, None)
        if entry is not None:
            _close(entry)

    def clear(self) -> None:
        with self._lock:
            entries = list(self._entries.values())
            self._entries.clear()
        for e in entries:
            _close(e)


def _close(entry: LiveEntry) -> None:
    try:
        entry.session.close()
    except Exception:  # closing never fails a request
        pass


def time_free(state: Optional[Dict[str, Any]]) -> bool:
    """Whether a state says nothing that changes with the time alone (so it can be read again
    later without asking the engine): no running or waiting step, no time limit, no
    deadline, not finished."""
    return isinstance(state, dict) and not state.get("active") and not state.get("timeLimits") \
        and not state.get("nextDeadline") and state.get("status") != "finished"
