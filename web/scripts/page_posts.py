"""What web/scripts/ratio.py and web/scripts/profile_post.py share: the database a run writes to
and the page POST a participant of daily-checkin makes (``next`` with an answer on the first step,
``back`` from the second), so both measure the same request on the same set-up.

Importing it puts web/tests on ``sys.path`` (the load harness, ``harness.py``, lives there)."""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path
from typing import Iterator, List, Tuple

WEB = Path(__file__).resolve().parents[1]
ROOT = WEB.parent
CHECKIN = ROOT / "examples" / "tasks" / "daily-checkin.json"
if str(WEB / "tests") not in sys.path:
    sys.path.insert(0, str(WEB / "tests"))


@contextlib.contextmanager
def database(kind: str, folder: Path) -> Iterator[str]:
    """The URL of a fresh database for one run: a SQLite file in ``folder``, or a throw-away
    PostgreSQL cluster (``harness.Postgres``, removed on exit). The harness imports httpx, so it
    is imported only for PostgreSQL: a SQLite run needs nothing but the service."""
    if kind != "postgres":
        yield f"sqlite:///{folder / 'runs.db'}"
        return
    from harness import Postgres

    pg = Postgres().start()
    try:
        yield pg.url
    finally:
        pg.cleanup()


def checkin_fields(step: str, version: int) -> List[Tuple[str, str]]:
    """The form fields of daily-checkin's page POST on ``step`` at the session's ``version``:
    the answer 4 and ``next`` on ``mood``, ``back`` on ``sleep``."""
    if step == "mood":
        return [("_version", str(version)), ("_step", "mood"), ("answer", "4"), ("action", "next")]
    return [("_version", str(version)), ("_step", "sleep"), ("action", "back")]


def after(step: str) -> str:
    """The step the page shows after a POST on ``step`` (the two alternate)."""
    return "sleep" if step == "mood" else "mood"
