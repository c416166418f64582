"""A small program that uses the package's public API the way a user's typed code would.

ctest ``python.mypy`` (tests/check_types.sh) checks it with ``mypy --strict`` (the package is
marked typed, ``py.typed``: a user's type checker reads its annotations), then runs it against
the library, so the calls below are real ones, not only well-typed ones.
"""

from __future__ import annotations

import json
import sys
from typing import Any, Dict, List

import stepkit

DEFINITION: Dict[str, Any] = {
    "identifier": "typed",
    "steps": [
        {"type": "question", "identifier": "mood", "title": "Mood",
         "answerFormat": {"type": "scale", "minimum": 1, "maximum": 5}},
        {"type": "question", "identifier": "slept", "answerFormat": {"type": "boolean"}},
    ],
}


def answered_identifiers(result: Dict[str, Any]) -> List[str]:
    return [str(step["identifier"]) for step in result["results"]]


def main() -> int:
    print(f"stepkit {stepkit.__version__}, library {stepkit.version()} ({stepkit.version_number()})")
    task: stepkit.Task = stepkit.Task.from_json(DEFINITION)
    clock = stepkit.ManualClock.from_iso("2026-01-01T00:00:00Z")
    with task.open({"taskRunUUID": "0A2B3C4D-1111-4222-8333-444455556666"}) as session:
        session.set_clock(clock)
        state: Dict[str, Any] = session.state
        assert state["step"]["identifier"] == "mood", state
        try:
            session.set_answer(9)   # the scale runs from 1 to 5
        except stepkit.AnswerError as error:
            message: str = error.message
            print("refused:", message)
        else:
            print("an answer outside the scale was accepted", file=sys.stderr)
            return 1
        session.set_answer(4)
        session.forward()
        clock.advance_seconds(30)
        saved: str = session.save()
    with task.restore(saved) as again:
        again.set_answer(True)
        state = again.forward()
        assert state["finishReason"] == "completed", state
        identifiers = answered_identifiers(again.result)
    assert identifiers[:2] == ["mood", "slept"], identifiers
    print(json.dumps(identifiers))
    return 0


if __name__ == "__main__":
    sys.exit(main())
