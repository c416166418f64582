"""requiredAnswersChecked (issue 29, item 1): FHIR's rule that a required item must be answered in
a *completed* response (R4 Questionnaire.item.required; SDC: the status SHALL NOT become
``completed`` while one is missing), so a participant moves freely and only completing is refused.
Expectations come from that rule, not from the engine's output."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

import stepkit
from conftest import run_cli

REPO = Path(__file__).resolve().parents[3]
FORMS = Path(os.environ.get("STEPKIT_FHIR_FORMS") or (REPO.parent / "shared" / "fhir" / "q"))

TASK = {
    "identifier": "t",
    "requiredAnswersChecked": "atCompletion",
    "steps": [
        {"type": "question", "identifier": "age", "title": "Age",
         "answerFormat": {"type": "numeric", "style": "integer", "minimum": 0, "maximum": 120}},
        {"type": "form", "identifier": "contact", "title": "Contact", "formItems": [
            {"identifier": "email", "text": "E-mail", "answerFormat": {"type": "text"}},
            {"identifier": "phone", "text": "Phone", "optional": True, "answerFormat": {"type": "text"}}]},
        {"type": "question", "identifier": "mood", "title": "Mood", "answerFormat": {"type": "boolean"}},
    ],
}


def form(name):
    if not FORMS.is_dir():
        pytest.skip(f"the published FHIR forms are not here: {FORMS} is absent (set STEPKIT_FHIR_FORMS)")
    return json.loads((FORMS / name).read_text(encoding="utf-8"))


def test_missing_answers_are_listed_and_only_completing_is_refused():
    s = stepkit.Task.from_json(TASK).open()
    s.forward()
    state = s.forward()
    assert state["step"]["identifier"] == "mood"
    assert [(m["step"], m.get("item")) for m in state["missingAnswers"]] == [
        ("age", None), ("contact", "email"), ("mood", None)]
    assert state["navigation"]["canGoForward"] is False
    with pytest.raises(stepkit.AnswerError):
        s.set_answer("yes")  # an invalid answer is refused at once, as always
    s.set_answer(True)
    before = s.save()
    with pytest.raises(stepkit.StateError) as refused:
        s.forward()
    assert [e["path"] for e in refused.value.errors] == ["age", "contact.email"]
    assert json.loads(s.save())["path"] == json.loads(before)["path"]
    s.back()
    s.set_answer({"email": "a@b.org"})
    s.back()
    s.set_answer(41)
    s.forward()
    s.forward()
    assert s.state["missingAnswers"] == []
    assert s.forward()["finishReason"] == "completed"


def test_per_step_is_the_default():
    task = dict(TASK)
    del task["requiredAnswersChecked"]
    s = stepkit.Task.from_json(task).open()
    with pytest.raises(stepkit.StateError):
        s.forward()
    assert s.state["step"]["identifier"] == "age"


def test_phq9_imports_checking_at_completion():
    """LHC-Forms' PHQ-9: items 1-8 are required, 9 and the difficulty question are not."""
    q = form("lhc_phq9.json")
    required = [i["linkId"] for i in q["item"] if i.get("required") is True]
    assert len(required) == 8
    s = stepkit.Task.from_fhir(q).open()
    # Answer item 9 first: FHIR lets a participant move freely.
    state = s.state
    while state["navigation"]["hasNextStep"]:
        state = s.forward()
    missing = state["missingAnswers"]
    assert [m["step"] for m in missing] == required
    with pytest.raises(stepkit.StateError) as refused:
        s.forward()
    assert [e["step"] for e in refused.value.errors] == required
    response = s.result_as("fhir")
    assert response["status"] == "in-progress"
    # With the import option, the first required item keeps the participant on its step.
    strict = stepkit.Task.from_fhir(q, required_answers_checked="perStep").open()
    with pytest.raises(stepkit.StateError):
        strict.forward()
    with pytest.raises(stepkit.StepKitError):
        stepkit.Task.from_fhir(q, required_answers_checked="sometimes")


def test_a_saved_run_exports_in_progress_and_a_discarded_one_stopped():
    q = form("lhc_phq9.json")
    saved = stepkit.Task.from_fhir(q).open()
    saved.finish("saved")
    assert saved.result_as("fhir")["status"] == "in-progress"
    discarded = stepkit.Task.from_fhir(q).open()
    discarded.finish("discarded")
    assert discarded.result_as("fhir")["status"] == "stopped"


def test_the_cli_summarises_what_is_missing_before_finishing(tmp_path):
    path = tmp_path / "task.json"
    path.write_text(json.dumps(TASK), encoding="utf-8")
    output = tmp_path / "result.json"
    # Enter leaves age and the form unanswered; on the last step the summary lists them, the
    # finish is refused, and :quit ends the run.
    proc = run_cli("run", str(path), "-i", "-o", str(output), input="\n\n\n\ny\n:quit\n")
    assert "Before finishing, 3 required answers must be given" in proc.stdout, proc.stdout
    assert 'Answer "Age" to finish. [age]' in proc.stdout
    assert 'Answer "E-mail" to finish. [contact.email]' in proc.stdout
