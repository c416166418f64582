"""FHIR Questionnaires in the service: registered as application/fhir+json, walked through the
participant pages, their QuestionnaireResponse stored with the result and exported one at a
time and as a Bundle. Expected answers come from the Questionnaire's item types (FHIR R4:
quantity → valueQuantity, integer → valueInteger, choice with codes → valueCoding...) and the
answers file, not from the engine."""

from __future__ import annotations

import json

from conftest import ROOT
from stepkit_web.walk import walk_http

FHIR = ROOT / "examples" / "fhir"
FHIR_HEADERS = {"content-type": "application/fhir+json"}


def questionnaire(name: str) -> str:
    return (FHIR / f"{name}.json").read_text(encoding="utf-8")


def items_by_link(items, out=None):
    out = {} if out is None else out
    for item in items or []:
        out[item["linkId"]] = item
        items_by_link(item.get("item"), out)
    return out


def test_questionnaire_registers_runs_and_exports_its_response(client):
    r = client.post("/api/tasks", content=questionnaire("vitals"), headers=FHIR_HEADERS)
    assert r.status_code == 201, r.text
    reg = r.json()
    assert reg["identifier"] == "vitals" and reg["source"] == "fhir" and reg["version"] == 1
    # Registering the same Questionnaire again stores nothing new.
    again = client.post("/api/tasks", content=questionnaire("vitals"), headers=FHIR_HEADERS)
    assert again.json()["version"] == 1

    made = client.post("/api/tasks/vitals/sessions").json()
    path = made["resumeUrl"].replace("http://testserver", "")
    answers = json.loads((FHIR / "vitals.answers.json").read_text())
    walk_http(client, "", made["session"], path, answers)
    page = client.get(path)
    assert page.status_code == 200

    r = client.get(f"/api/sessions/{made['session']}/questionnaire-response")
    assert r.status_code == 200 and r.headers["content-type"].startswith("application/fhir+json")
    qr = r.json()
    source = json.loads(questionnaire("vitals"))
    assert qr["resourceType"] == "QuestionnaireResponse"
    assert qr["status"] == "completed"
    assert qr["questionnaire"] == f"{source['url']}|{source['version']}"
    got = items_by_link(qr["item"])
    assert got["weight"]["answer"] == [{"valueQuantity": {
        "value": 72.5, "unit": "kg", "system": "http://unitsofmeasure.org", "code": "kg"}}]
    assert got["temperature"]["answer"] == [{"valueDecimal": 36.8}]
    assert got["pain"]["answer"] == [{"valueInteger": 3}]
    assert got["measured-on"]["answer"] == [{"valueDate": "2026-03-02"}]
    assert got["smoker"]["answer"] == [{"valueBoolean": False}]
    assert got["clinic-id"]["answer"] == [{"valueString": "AB-123"}]
    assert [a["valueCoding"]["code"] for a in got["sport"]["answer"]] == ["run", "swim"]
    assert got["weight"]["text"] == "Weight"  # the item's text, from the Questionnaire

    # It is stored with the result: the row holds it, the same as the export.
    import sqlalchemy as sa
    from stepkit_web.db import sessions
    engine = client.app.state.service.store.engine
    with engine.connect() as conn:
        stored = conn.execute(sa.select(sessions.c.response).where(
            sessions.c.id == made["session"])).scalar_one()
    assert json.loads(stored) == qr

    # In bulk: a Bundle with every session, the open one in progress.
    other = client.post("/api/tasks/vitals/sessions").json()
    r = client.get("/api/tasks/vitals/questionnaire-responses")
    assert r.status_code == 200, r.text
    bundle = r.json()
    assert bundle["resourceType"] == "Bundle" and bundle["type"] == "collection"
    statuses = sorted(e["resource"]["status"] for e in bundle["entry"])
    assert statuses == ["completed", "in-progress"]
    assert other["session"]
    # A StepKit task has no Bundle of responses.
    client.post("/api/tasks", content=(ROOT / "examples/tasks/daily-checkin.json").read_bytes(),
                headers={"content-type": "application/json"})
    assert client.get("/api/tasks/daily-checkin/questionnaire-responses").status_code == 404
