"""SDC's initialExpression (issue 29, item 7): "an expression whose result provides the initial
value for the item", evaluated when the item is first enabled and not recomputed once the
participant has changed it. The initial value StepKit starts is checked against fhirpathpy
evaluating the same FHIRPath on the exported QuestionnaireResponse."""

from __future__ import annotations

import fhirpathpy
import pytest
from fhirpathpy.models import models

import stepkit

URL = "http://hl7.org/fhir/uv/sdc/StructureDefinition/sdc-questionnaire-initialExpression"
COPY = "%resource.item.where(linkId='weight').answer.value"
QUESTIONNAIRE = {
    "resourceType": "Questionnaire", "id": "ie", "status": "active", "item": [
        {"linkId": "weight", "text": "Weight", "type": "decimal"},
        {"linkId": "again", "text": "Weight again", "type": "decimal",
         "extension": [{"url": URL, "valueExpression": {"language": "text/fhirpath", "expression": COPY}}]},
        {"linkId": "sex", "text": "Sex", "type": "string",
         "extension": [{"url": URL, "valueExpression": {"language": "text/fhirpath", "expression": "%patient.gender"}}]}]}


def answer_of(response, link_id):
    for item in response.get("item", []):
        if item["linkId"] == link_id:
            return [next(v for k, v in a.items() if k.startswith("value")) for a in item["answer"]]
    return []


@pytest.mark.parametrize("weight", [70.5, 0, 123.25])
def test_the_initial_value_is_what_fhirpath_gives_and_an_edit_stays(weight):
    task = stepkit.Task.from_fhir(QUESTIONNAIRE)
    with task.open() as s:
        s.set_answer(weight)
        state = s.forward()
        assert state["step"]["identifier"] == "again"
        response = s.result_as("fhir")
        expected = fhirpathpy.evaluate(response, COPY, {"resource": response}, models["r4"])
        assert [state["answer"]] == expected
        assert answer_of(response, "again") == expected
        s.set_answer(weight + 1)
        s.back()
        s.set_answer(weight + 5)
        assert s.forward()["answer"] == weight + 1   # not recomputed after the edit


def test_an_expression_reading_the_patient_record_is_reported():
    report = stepkit.Task.translate_fhir(QUESTIONNAIRE)["report"]
    assert [(e["linkId"], e["path"], e["code"]) for e in report] == [
        ("sex", "item[2].extension[0]", "initialNotTranslated")]
