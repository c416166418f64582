"""Task info's fingerprint and recorders (``stepkit_task_info``; include/stepkit.h), each checked
against what the definition itself says: the fingerprint is worked out here from the published
rule (the SHA-256 of the canonical form: keys sorted, whole numbers as integers, compact) and
compared with the one restoration data names; the recorders are read off the definition by a walk
of its own."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Dict, List

import pytest

import stepkit
from conftest import EXAMPLE_TASKS, REPO


def canonical_form(value: Any) -> Any:
    """The canonical form's values: a whole float becomes an integer (key order is left to
    ``json.dumps(sort_keys=True)``, which sorts ASCII keys as their UTF-8 bytes sort)."""
    if isinstance(value, float) and value.is_integer() and -2**63 <= value < 2**63:
        return int(value)
    if isinstance(value, list):
        return [canonical_form(v) for v in value]
    if isinstance(value, dict):
        return {k: canonical_form(v) for k, v in value.items()}
    return value


def sha256_of_canonical(definition: Any) -> str:
    text = json.dumps(canonical_form(definition), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def recorders_in(definition: Dict[str, Any]) -> List[Dict[str, Any]]:
    """The recorders a definition lists, in the order include/stepkit.h gives: active steps'
    (sections entered in place), then async actions'."""
    permissions = {"accelerometer": "motion", "deviceMotion": "motion", "pedometer": "motion",
                   "gyroscope": "motion", "location": "location", "audio": "microphone",
                   "healthQuantity": "health", "heartRate": "health", "touch": None, "custom": None}
    found: List[Dict[str, Any]] = []

    def walk(steps: List[Dict[str, Any]]) -> None:
        for step in steps:
            for r in step.get("recorderConfigurations", []):
                found.append({"identifier": r["identifier"], "type": r["type"],
                              "permission": permissions[r["type"]], "step": step["identifier"]})
            walk(step.get("steps", []))

    walk(definition["steps"])
    for a in definition.get("asyncActions", []):
        found.append({"identifier": a["identifier"], "type": a["type"], "permission": permissions[a["type"]],
                      "startStep": a["startStepIdentifier"], "stopStep": a.get("stopStepIdentifier")})
    return found


def saved_fingerprint(task: stepkit.Task) -> str:
    with task.open() as session:
        return str(json.loads(session.save())["task"]["fingerprint"])


@pytest.mark.parametrize("path", EXAMPLE_TASKS, ids=lambda p: p.stem)
def test_every_example_names_its_fingerprint_and_recorders(path: Path) -> None:
    definition = json.loads(path.read_text(encoding="utf-8"))
    with stepkit.Task.from_file(path) as task:
        assert task.fingerprint == sha256_of_canonical(definition)
        assert task.info["fingerprint"] == task.fingerprint == saved_fingerprint(task)
        assert task.recorders == task.info["recorders"] == recorders_in(definition)


def test_the_examples_include_one_with_recorders() -> None:
    """So that the test above checks a non-empty list (short-walk: an active step's and an
    async action's)."""
    with_recorders = [p.stem for p in EXAMPLE_TASKS if recorders_in(json.loads(p.read_text(encoding="utf-8")))]
    assert "short-walk" in with_recorders


# Recorders of both kinds, one inside a section (the Swift TaskInfoTests read the same file).
RECORDING: Dict[str, Any] = json.loads((REPO / "Tests" / "fixtures" / "recording.json").read_text(encoding="utf-8"))


def test_recorders_in_sections_and_async_actions() -> None:
    task = stepkit.Task.from_json(RECORDING)
    assert task.recorders == [
        {"identifier": "accel", "type": "accelerometer", "permission": "motion", "step": "walk"},
        {"identifier": "taps", "type": "custom", "permission": None, "step": "walk"},
        {"identifier": "pulse", "type": "healthQuantity", "permission": "health", "step": "rest"},
        {"identifier": "gps", "type": "location", "permission": "location", "startStep": "getReady", "stopStep": "rest"},
        {"identifier": "mic", "type": "audio", "permission": "microphone", "startStep": "walk", "stopStep": None},
    ]
    assert task.recorders == recorders_in(RECORDING)
    # requestedPermissions is the set of the recorders' permissions.
    assert task.requested_permissions == sorted({r["permission"] for r in task.recorders if r["permission"]})
    # A returned list is the caller's: changing it changes nothing the task says.
    task.recorders.clear()
    assert len(task.recorders) == 5


def test_a_task_without_recorders_lists_none() -> None:
    task = stepkit.Task.from_json({"identifier": "t", "steps": [
        {"type": "active", "identifier": "a", "stepDuration": 5},
        {"type": "question", "identifier": "q", "answerFormat": {"type": "boolean"}}]})
    assert task.recorders == [] and task.info["recorders"] == []


def test_the_fingerprint_names_content_not_text() -> None:
    text = json.dumps(RECORDING)
    respelled = json.dumps(RECORDING, sort_keys=True, indent=3).replace('"stepDuration": 30', '"stepDuration": 30.0')
    assert respelled != text
    first, second = stepkit.Task.from_json(text), stepkit.Task.from_json(respelled)
    assert first.fingerprint == second.fingerprint == sha256_of_canonical(RECORDING)
    # A restore on the other compile accepts the first one's data: they are the same task.
    # (No output directory: the recorders fail, which need not end the run.)
    options = {"continueOnRecorderFailure": True}
    with first.open(options) as session:
        saved = session.save()
    with second.restore(saved, options) as restored:
        assert restored.state["step"]["identifier"] == "getReady"
    changed = json.loads(text)
    changed["steps"][2]["stepDuration"] = 11
    other = stepkit.Task.from_json(changed)
    assert other.fingerprint != first.fingerprint
    assert other.fingerprint == sha256_of_canonical(changed) == saved_fingerprint(other)


def test_a_fhir_import_is_named_as_its_translation() -> None:
    for path in sorted((REPO / "examples" / "fhir").glob("*.json")):
        questionnaire = json.loads(path.read_text(encoding="utf-8"))
        if questionnaire.get("resourceType") != "Questionnaire":
            continue
        translated = stepkit.Task.translate_fhir(questionnaire)["task"]
        imported = stepkit.Task.from_fhir(questionnaire)
        assert imported.fingerprint == stepkit.Task.from_json(translated).fingerprint, path.name
        assert imported.fingerprint == sha256_of_canonical(translated) == saved_fingerprint(imported), path.name
        assert imported.recorders == []
