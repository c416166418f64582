"""Verified submissions (issue 33, docs/verify.md): a result run elsewhere is verified by the
engine; a study that requires verified submissions refuses one that does not verify (with the
report, storing nothing) and stores the engine's recomputed result of one that does. Expected
divergences come from the edit made to the submission, not from the engine."""

from __future__ import annotations

import copy
import json
import sqlite3
import subprocess
import sys

from conftest import EXAMPLES, ROOT, reference_result, register

JSON_HEADERS = {"content-type": "application/json"}


def submissions_in(db_url: str) -> int:
    with sqlite3.connect(db_url.removeprefix("sqlite:///")) as db:
        return db.execute("select count(*) from submissions").fetchone()[0]


def verify(client, identifier, submission):
    return client.post(f"/api/tasks/{identifier}/verify", content=json.dumps(submission), headers=JSON_HEADERS)


def test_a_walked_result_verifies_and_a_lying_one_does_not(client, tmp_path):
    register(client, "mood-screener")
    result = reference_result("mood-screener", tmp_path)
    r = verify(client, "mood-screener", result)
    assert r.status_code == 200, r.text
    report = r.json()
    assert report["verified"] is True and report["divergences"] == [] and report["taskVersion"] == 1
    assert report["result"]["calculations"] == result["calculations"]
    lying = copy.deepcopy(result)
    name = next(iter(lying["calculations"]))
    lying["calculations"][name] = 999
    report = verify(client, "mood-screener", lying).json()
    assert report["verified"] is False
    assert [(d["code"], d["path"]) for d in report["divergences"]] == [("calculationMismatch", f"calculations.{name}")]
    assert report["result"]["calculations"][name] == result["calculations"][name]


def test_a_study_that_requires_verified_submissions_refuses_others_and_stores_the_engines_result(client, tmp_path, db_url):
    register(client, "headache")
    result = reference_result("headache", tmp_path)
    assert client.get("/api/tasks/headache/verification").json() == {"identifier": "headache", "requireVerified": False}
    # Without the setting a submission that does not verify is kept, marked as such.
    extra = dict(result, device="phone 7")
    r = client.post("/api/tasks/headache/submissions", content=json.dumps(extra), headers=JSON_HEADERS)
    assert r.status_code == 201, r.text
    assert r.json()["verified"] is False
    assert [d["code"] for d in r.json()["divergences"]] == ["unknownField"]
    r = client.put("/api/tasks/headache/verification", json={"requireVerified": True})
    assert r.status_code == 200 and r.json()["requireVerified"] is True
    before = submissions_in(db_url)
    # A required answer taken out: refused with the report, nothing stored.
    edited = copy.deepcopy(result)
    severity = next(s for s in edited["results"] if s["identifier"] == "severity")
    severity["results"][0]["answer"] = None
    r = client.post("/api/tasks/headache/submissions", content=json.dumps(edited), headers=JSON_HEADERS)
    assert r.status_code == 422, r.text
    body = r.json()
    assert body["code"] == "ENOTVERIFIED"
    first = body["report"]["divergences"][0]
    assert first["code"] == "requiredAnswerMissing" and first["step"] == "severity"
    assert submissions_in(db_url) == before
    # The clean one is stored, and what is stored is the engine's result.
    r = client.post("/api/tasks/headache/submissions", content=json.dumps(result), headers=JSON_HEADERS)
    assert r.status_code == 201, r.text
    stored = client.get(f"/api/submissions/{r.json()['submission']}").json()
    assert stored["verified"] is True and stored["task"] == "headache" and stored["taskVersion"] == 1
    assert stored["result"]["results"] == result["results"]
    assert submissions_in(db_url) == before + 1


def test_bad_submissions_are_refused_clearly(client):
    register(client, "headache")
    assert client.post("/api/tasks/headache/verify", content="{not json", headers=JSON_HEADERS).json()["code"] == "EPARSE"
    r = client.post("/api/tasks/headache/verify", content="[1]", headers=JSON_HEADERS)
    assert r.status_code == 400 and r.json()["errors"][0]["code"] == "notASubmission"
    deep = '{"identifier": "headache", "results": ' + "[" * 200 + "]" * 200 + "}"
    r = client.post("/api/tasks/headache/verify", content=deep, headers=JSON_HEADERS)
    assert r.status_code == 400 and r.json()["errors"][0]["code"] == "tooDeep"
    assert client.post("/api/tasks/headache/verify", content="{}", headers={"content-type": "text/plain"}).status_code == 415
    assert client.post("/api/tasks/nothing/verify", content="{}", headers=JSON_HEADERS).status_code == 404
    assert client.get("/api/submissions/not-an-id").status_code == 404
    assert client.get("/api/submissions/" + "0" * 32).status_code == 404
    assert client.put("/api/tasks/headache/verification", json={"requireVerified": "yes"}).status_code == 400
    assert client.put("/api/tasks/headache/verification", json={"require": True}).status_code == 400
    other = client.post("/api/tasks/headache/verify", content=json.dumps({"identifier": "intake", "results": []}),
                        headers=JSON_HEADERS).json()
    assert [d["code"] for d in other["divergences"]] == ["otherTask"]


def test_a_questionnaire_response_verifies(client, tmp_path):
    fhir = ROOT / "examples" / "fhir"
    r = client.post("/api/tasks", content=(fhir / "vitals.json").read_text(), headers={"content-type": "application/fhir+json"})
    assert r.status_code == 201, r.text
    out = tmp_path / "qr.json"
    subprocess.run([sys.executable, "-m", "stepkit", "run", str(fhir / "vitals.json"), "--answers",
                    str(fhir / "vitals.answers.json"), "--format", "fhir", "--quiet", "-o", str(out)],
                   check=True, capture_output=True, timeout=60)
    response = json.loads(out.read_text())
    r = client.post("/api/tasks/vitals/verify", content=json.dumps(response), headers={"content-type": "application/fhir+json"})
    assert r.status_code == 200, r.text
    assert r.json()["verified"] is True, r.json()["divergences"]
    assert r.json()["questionnaireResponse"]["item"] == response["item"]
