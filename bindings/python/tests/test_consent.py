"""Consent (issue 34 part B): the onboarding example walked through the binding, its result's
consent record and digests checked against what docs/task-format.md ("Consent") says they are,
and every host report refused when it does not fit, changing nothing."""

import base64
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List

import jsonschema
import pytest

import stepkit
from conftest import EXAMPLES, REPO

ONBOARDING = EXAMPLES / "onboarding.json"
ANSWERS = EXAMPLES / "onboarding.answers.json"
RESULT = jsonschema.Draft202012Validator(json.loads((REPO / "schema" / "result.schema.json").read_text(encoding="utf-8")))

# The smallest valid PNG: a 1×1 image (its signature, IHDR, IDAT, IEND).
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=")


def review_text(document: Dict[str, Any]) -> str:
    """The review text as docs/task-format.md defines it, built from the definition."""
    default_titles = {"overview": "Welcome", "dataGathering": "Data Gathering", "privacy": "Privacy",
                      "dataUse": "Data Use", "timeCommitment": "Time Commitment", "studySurvey": "Study Survey",
                      "studyTasks": "Study Tasks", "withdrawing": "Withdrawing"}
    text = f"# {document['title']}\n\nVersion {document['version']}\n"
    for section in document["sections"]:
        title = section.get("title") or default_titles[section["type"]]
        text += f"\n## {title}\n\n{section.get('content') or section['summary']}\n"
    return text


def walk(session: stepkit.Session, answers: Dict[str, Any]) -> Dict[str, Any]:
    """Walks like a host: a reported step gets its entry as the report, others as answers."""
    state = session.state
    while state["step"] is not None:
        step = state["step"]
        entry = answers.get(step["identifier"])
        if entry is not None and step.get("reportedByHost"):
            session.report(step["identifier"], **entry)
        elif entry is not None:
            session.set_answer(entry)
        state = session.go_forward()
    return state


def files(directory: Path) -> List[Path]:
    return sorted(p for p in directory.iterdir())


def step_result(result: Dict[str, Any], identifier: str) -> Dict[str, Any]:
    return next(r for r in result["results"] if r["identifier"] == identifier)


def test_onboarding_walks_and_its_result_carries_the_consent(tmp_path: Path) -> None:
    definition = json.loads(ONBOARDING.read_text(encoding="utf-8"))
    answers = json.loads(ANSWERS.read_text(encoding="utf-8"))
    expected_digest = hashlib.sha256(review_text(definition["consentDocument"]).encode("utf-8")).hexdigest()
    with stepkit.Task.from_file(ONBOARDING) as task, task.open({"outputDirectory": str(tmp_path)}) as s:
        state = s.state
        sections = state["step"]["consentSections"]
        # The visual consent walks every section but the one only in the document.
        assert [x["type"] for x in sections] == [x["type"] for x in definition["consentDocument"]["sections"]][:-1]
        s.go_forward()
        review = s.state["step"]
        assert review["document"]["markdown"] == review_text(definition["consentDocument"])
        assert review["document"]["sha256"] == expected_digest
        assert walk(s, answers)["finishReason"] == "completed"
        result = s.result
        assert RESULT.iter_errors(result) is not None and list(RESULT.iter_errors(result)) == []
        consent = step_result(result, "consent_review")["consent"]
        assert consent["consented"] is True
        assert consent["documentVersion"] == "2.1"
        assert consent["documentSHA256"] == expected_digest
        assert (consent["givenName"], consent["familyName"]) == ("Ada", "Lovelace")
        signature = step_result(result, "consent_signature")["results"][0]
        assert signature["type"] == "file"
        record = signature["answer"]
        written = tmp_path / record["fileName"]
        # The typed name is written as a text file of the name and a newline; its digest is the file's.
        assert written.read_bytes() == b"Ada Lovelace\n"
        assert record["sha256"] == hashlib.sha256(written.read_bytes()).hexdigest()
        assert record["bytes"] == len(b"Ada Lovelace\n")
        assert record["fileName"].startswith(s.state["taskRunUUID"] + "-consent_signature-3-" + record["sha256"][:16])
        signed = s.consent_document()
        assert "Participant: Ada Lovelace" in signed["markdown"]
        assert f"Signature: {record['fileName']} (text/plain), SHA-256 {record['sha256']}" in signed["markdown"]
        assert f"Document SHA-256: {expected_digest}" in signed["markdown"]
        assert "<p>Participant: Ada Lovelace</p>" in signed["html"]


def test_disagreeing_ends_without_a_signature(tmp_path: Path) -> None:
    with stepkit.Task.from_file(ONBOARDING) as task, task.open({"outputDirectory": str(tmp_path)}) as s:
        s.go_forward()
        s.set_answer({"consented": False})
        state = s.go_forward()
        assert state["step"]["identifier"] == "not_consented"
        assert s.consent_document()["consented"] is False
        assert s.consent_document()["signature"] is None
        assert files(tmp_path) == []


def test_names_are_required_to_agree(tmp_path: Path) -> None:
    with stepkit.Task.from_file(ONBOARDING) as task, task.open({"outputDirectory": str(tmp_path)}) as s:
        s.go_forward()
        s.set_answer({"consented": True, "givenName": "Ada"})
        with pytest.raises(stepkit.StateError) as refused:
            s.go_forward()
        assert "family name" in str(refused.value)


def at_signature(task: stepkit.Task, directory: Path) -> stepkit.Session:
    s = task.open({"outputDirectory": str(directory)})
    s.go_forward()
    s.set_answer({"consented": True, "givenName": "Ada", "familyName": "Lovelace"})
    s.go_forward()
    assert s.state["step"]["identifier"] == "consent_signature"
    return s


@pytest.mark.parametrize("report, error", [
    ({"typedName": "  "}, stepkit.AnswerError),
    ({"typedName": "A", "path": "M0 0"}, stepkit.AnswerError),
    ({"image": {"contentType": "image/png", "base64": base64.b64encode(b"GIF89a").decode()}}, stepkit.AnswerError),
    ({"image": {"contentType": "image/png", "base64": "not base64!"}}, stepkit.AnswerError),
    ({"image": {"contentType": "image/bmp", "base64": base64.b64encode(PNG).decode()}}, stepkit.AnswerError),
    ({"path": "M 0 0 L 1 1\"/><script>alert(1)</script>"}, stepkit.AnswerError),
    ({"viewed": True}, stepkit.AnswerError),
    ({}, stepkit.AnswerError),
])
def test_a_bad_signature_report_changes_nothing(tmp_path: Path, report: Dict[str, Any], error: type) -> None:
    with stepkit.Task.from_file(ONBOARDING) as task:
        s = at_signature(task, tmp_path)
        before = s.save()
        with pytest.raises(error):
            s.report("consent_signature", **report)
        assert s.save() == before
        assert files(tmp_path) == []
        s.close()


def test_reports_go_to_the_current_reported_step_only(tmp_path: Path) -> None:
    with stepkit.Task.from_file(ONBOARDING) as task:
        s = at_signature(task, tmp_path)
        with pytest.raises(stepkit.StateError):
            s.report("consent_review", typedName="Ada")
        with pytest.raises(stepkit.StateError):
            s.set_answer({"typedName": "Ada"})
        s.go_backward()
        with pytest.raises(stepkit.StateError):
            s.report("consent_review", viewed=True)
        s.close()


def test_an_image_signature_is_written_and_restored(tmp_path: Path) -> None:
    with stepkit.Task.from_file(ONBOARDING) as task:
        s = at_signature(task, tmp_path)
        s.report("consent_signature", image={"contentType": "image/png", "base64": base64.b64encode(PNG).decode()})
        s.report("consent_signature", path="M 10 10 L 20 20")
        record = s.state  # the state after the report; the answer is in the result
        answer = s.result["results"][-1]["results"][0]["answer"]
        svg = (tmp_path / answer["fileName"]).read_bytes()
        assert answer["kind"] == "path" and answer["contentType"] == "image/svg+xml"
        assert b'd="M 10 10 L 20 20"' in svg
        assert answer["sha256"] == hashlib.sha256(svg).hexdigest()
        # The PNG an earlier report wrote stays, whole.
        png = [p for p in files(tmp_path) if p.suffix == ".png"]
        assert [p.read_bytes() for p in png] == [PNG]
        saved = s.save()
        with task.restore(saved) as back:
            assert back.result["results"][-1]["results"][0]["answer"] == answer
        assert record["step"]["identifier"] == "consent_signature"
        s.close()


HOSTED = {
    "identifier": "hosted",
    "steps": [
        {"type": "table", "identifier": "table", "items": ["Mon", "Tue"]},
        {"type": "webView", "identifier": "web", "html": "<button>Done</button>"},
        {"type": "videoInstruction", "identifier": "video", "videoURL": "https://example.org/v.mp4"},
        {"type": "pdfViewer", "identifier": "pdf", "pdfURL": "https://example.org/info.pdf"},
        {"type": "requestPermissions", "identifier": "perm", "permissions": ["notifications", "location"]},
        {"type": "imageCapture", "identifier": "photo"},
    ],
}


def test_each_reported_step_records_what_the_host_reports(tmp_path: Path) -> None:
    reports = {
        "table": {"viewed": True},
        "web": {"message": "{\"pressed\": \"done\"}"},
        "video": {"playbackCompleted": False, "position": 7.5},
        "pdf": {"viewed": True},
        "perm": {"granted": ["location"], "denied": ["notifications"]},
        "photo": {"image": {"contentType": "image/png", "base64": base64.b64encode(PNG).decode()}},
    }
    with stepkit.Task.from_json(HOSTED) as task, task.open({"outputDirectory": str(tmp_path)}) as s:
        # A required reported step may not be left before its report.
        with pytest.raises(stepkit.StateError):
            s.go_forward()
        assert walk(s, reports)["finishReason"] == "completed"
        result = s.result
        assert list(RESULT.iter_errors(result)) == []
        answers = {r["identifier"]: r["results"][0] for r in result["results"]}
        for key in ["table", "web", "video", "pdf"]:
            assert answers[key]["type"] == "report"
            assert answers[key]["answer"] == reports[key]
        assert answers["perm"]["answer"] == {"granted": ["location"], "denied": ["notifications"]}
        photo = answers["photo"]["answer"]
        assert (tmp_path / photo["fileName"]).read_bytes() == PNG
        assert photo["sha256"] == hashlib.sha256(PNG).hexdigest()
        audit = s.audit()["events"]
        assert [e["step"] for e in audit if e["type"] == "answerSet"] == list(reports)


@pytest.mark.parametrize("step, report", [
    ("table", {"viewed": False}),
    ("table", {"seen": True}),
    ("web", {"message": 1}),
    ("video", {"position": 3}),
    ("video", {"playbackCompleted": True, "position": -2}),
    ("pdf", {}),
    ("perm", {"granted": ["location"], "denied": []}),
    ("perm", {"granted": ["location", "camera"], "denied": ["notifications"]}),
    ("photo", {"typedName": "Ada"}),
])
def test_a_report_that_does_not_fit_is_refused(tmp_path: Path, step: str, report: Dict[str, Any]) -> None:
    with stepkit.Task.from_json(HOSTED) as task, task.open({"outputDirectory": str(tmp_path)}) as s:
        while s.state["step"]["identifier"] != step:
            current = s.state["step"]["identifier"]
            s.report(current, **{"table": {"viewed": True}, "web": {"message": ""}, "video": {"playbackCompleted": True},
                                 "pdf": {"viewed": True}, "perm": {"granted": [], "denied": ["notifications", "location"]}}[current])
            s.go_forward()
        before = s.save()
        with pytest.raises(stepkit.AnswerError):
            s.report(step, **report)
        assert s.save() == before
        assert files(tmp_path) == []


def test_the_checker_finds_a_signature_without_a_consent_document() -> None:
    from stepkit import checker
    with stepkit.Task.from_json({"identifier": "t", "steps": [{"type": "signature", "identifier": "sig"}]}) as task:
        report = checker.check_task(task)
    assert [p["code"] for p in report["problems"]] == ["signatureWithoutConsent"]


# -- the CLI ---------------------------------------------------------------------------------------


def run_cli(*args: str, typed: str = "") -> "subprocess.CompletedProcess[str]":
    env = dict(os.environ, PYTHONPATH=str(REPO / "bindings" / "python" / "src"))
    return subprocess.run([sys.executable, "-m", "stepkit", *args], input=typed, capture_output=True, text=True,
                          env=env, timeout=120)


def check_cli_result(result: Dict[str, Any], directory: Path, typed_name: str) -> None:
    definition = json.loads(ONBOARDING.read_text(encoding="utf-8"))
    consent = step_result(result, "consent_review")["consent"]
    assert consent["consented"] is True
    assert consent["documentSHA256"] == hashlib.sha256(review_text(definition["consentDocument"]).encode()).hexdigest()
    record = step_result(result, "consent_signature")["results"][0]["answer"]
    assert (directory / record["fileName"]).read_bytes() == (typed_name + "\n").encode()
    assert record["sha256"] == hashlib.sha256((typed_name + "\n").encode()).hexdigest()


def test_the_cli_walks_onboarding_with_its_answers(tmp_path: Path) -> None:
    proc = run_cli("run", str(ONBOARDING), "--answers", str(ANSWERS), "--output", str(tmp_path / "r.json"),
                   "--output-dir", str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    assert "Signature: signed as Ada Lovelace" in proc.stdout
    check_cli_result(json.loads((tmp_path / "r.json").read_text()), tmp_path, "Ada Lovelace")


def test_the_cli_asks_for_consent_and_a_typed_signature(tmp_path: Path) -> None:
    typed = "\n".join([
        "",                  # the consent sections: continue
        "y", "Ada", "",      # agree, given name, no family name: refused (agreeing needs both)
        "", "", "Lovelace",  # asked again: the agreement and given name kept, the family name
        "   ",               # a blank signature is refused: asked again
        "Ada King",          # the typed name
        "36", "22:30",       # about you
        "4",                 # sleep quality
        "",                  # the review of the answers: continue
        "",                  # finish
    ]) + "\n"
    proc = run_cli("run", str(ONBOARDING), "-i", "-o", str(tmp_path / "r.json"), "--output-dir", str(tmp_path), typed=typed)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = proc.stdout
    # The sections, then the document under review with its version and digest, as text.
    assert "■ Privacy" in out
    assert "│ # Consent to take part in the Sleep and Mood Study" in out
    assert "(version 2.1, SHA-256 " in out
    assert "Type your full name to sign:" in out
    assert "not blank" in out  # the blank signature, refused by the engine
    check_cli_result(json.loads((tmp_path / "r.json").read_text()), tmp_path, "Ada King")
