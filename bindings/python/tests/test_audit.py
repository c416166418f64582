"""The audit trail through the binding (Session.audit, Session.set_audit_context) and the CLI
(``run --audit FILE``): each accepted change with its date and old -> new value, nothing for a
refused call, streaming from an index, kept by save/restore, tampering refused by event."""

from __future__ import annotations

import hashlib
import hmac
import json

import pytest

import stepkit
from conftest import RUN_UUID, example, load_json, run_cli


def test_each_change_is_listed_with_old_and_new(session, clock):
    clock.advance(1000)
    session.go_forward()
    session.set_answer(True)
    with pytest.raises(stepkit.AnswerError):
        session.set_answer(3)  # not a boolean: refused, not recorded
    session.set_audit_context("dr-3", "read back to the participant")
    clock.advance(1000)
    session.set_answer(False)
    session.set_audit_context()
    session.go_forward()
    trail = session.audit()
    assert trail["count"] == 4 and trail["enabled"] is True
    events = trail["events"]
    assert [e["type"] for e in events] == ["forward", "answerSet", "answerSet", "forward"]
    assert (events[0]["step"], events[0]["to"], events[0]["date"]) == ("intro", "likes", "2026-01-01T00:00:01.000Z")
    assert (events[1]["old"], events[1]["new"]) == (None, True)
    assert (events[2]["old"], events[2]["new"]) == (True, False)
    assert (events[2]["actor"], events[2]["reason"]) == ("dr-3", "read back to the participant")
    assert events[2]["date"] == "2026-01-01T00:00:02.000Z"
    assert "actor" not in events[3]
    assert [e["index"] for e in events] == [0, 1, 2, 3]
    # Streaming: from an index; past the end, nothing.
    assert [e["index"] for e in session.audit(2)["events"]] == [2, 3]
    assert session.audit(99)["events"] == []
    with pytest.raises(stepkit.InvalidArgumentError):
        session.audit(-1)
    with pytest.raises(TypeError):
        session.audit("0")
    with pytest.raises(stepkit.InvalidArgumentError):
        session.set_audit_context("a" * 5000)


def test_the_chain_is_the_published_one(task):
    """Event i's digest: HMAC-SHA256 (key) of the previous digest (the run's UUID first), a
    newline and the event as saved without its digest (docs/audit.md)."""
    with task.open({"taskRunUUID": RUN_UUID, "integrityKey": "secret"}) as s:
        s.go_forward()
        s.set_answer(True)
        s.go_forward()
        saved = json.loads(s.save())
    previous = saved["taskRunUUID"]
    for event in saved["audit"]["events"]:
        unsigned = {k: v for k, v in event.items() if k != "digest"}
        text = previous + "\n" + json.dumps(unsigned, separators=(",", ":"), ensure_ascii=False)
        expected = hmac.new(b"secret", text.encode(), hashlib.sha256).hexdigest()
        assert event["digest"] == expected
        previous = expected
    assert saved["audit"]["count"] == 3


def test_restore_keeps_the_trail_and_tampering_names_the_event(task):
    options = {"taskRunUUID": RUN_UUID, "integrityKey": "secret"}
    with task.open(options) as s:
        s.go_forward()
        s.set_answer(True)
        s.set_answer(False)
        s.go_forward()
        text = s.save()
        listed = s.audit()["events"]
    with task.restore(text, {"integrityKey": "secret"}) as back:
        again = back.audit()
        assert again["events"][: len(listed)] == listed
        assert again["events"][-1]["type"] == "restored"
    document = json.loads(text)
    document["audit"]["events"][2]["new"] = True  # the corrected answer put back
    with pytest.raises(stepkit.RestorationError) as caught:
        task.restore(json.dumps(document), {"integrityKey": "secret"})
    assert caught.value.errors[0]["code"] == "auditTampered"
    assert caught.value.path == "audit.events[2]"
    document = json.loads(text)
    del document["audit"]["events"][3]  # cut off
    with pytest.raises(stepkit.RestorationError) as caught:
        task.restore(json.dumps(document), {"integrityKey": "secret"})
    assert caught.value.path == "audit.events[3]"


def test_the_trail_can_be_switched_off(task):
    with task.open({"audit": False}) as s:
        s.go_forward()
        assert s.audit() == {"count": 0, "enabled": False, "events": []}


def test_cli_writes_the_audit_trail(tmp_path):
    task_path = example("daily-checkin")
    answers_path = task_path.with_name("daily-checkin.answers.json")
    audit = tmp_path / "audit.json"
    proc = run_cli("run", str(task_path), "--answers", str(answers_path), "--quiet",
                   "--audit", str(audit), "--audit-actor", "batch")
    assert proc.returncode == 0, proc.stderr
    trail = load_json(audit)
    answers = load_json(answers_path)
    events = trail["events"]
    assert trail["count"] == len(events) > 0
    set_answers = {e["step"]: e["new"] for e in events if e["type"] == "answerSet"}
    for step, answer in answers.items():
        if answer is not None:
            assert set_answers.get(step) == answer, step
    assert events[-1]["type"] == "forward" and events[-1]["to"] is None  # completed
    assert all(e["actor"] == "batch" for e in events)
