"""FHIR in the service: a Questionnaire registered with ``Content-Type: application/fhir+json``
is imported by the engine (``stepkit.Task.from_fhir``; the service keeps the Questionnaire and
its translation), runs like any task, and each finished session keeps its
QuestionnaireResponse (``Session.result_as("fhir")``) next to its result. This module only
wraps responses in a Bundle for the bulk export."""

from __future__ import annotations

import uuid
from typing import Any, Dict, Iterable

FHIR_JSON = "application/fhir+json"


def bundle(responses: Iterable[Dict[str, Any]], timestamp: str) -> Dict[str, Any]:
    """A FHIR R4 Bundle of type ``collection`` holding QuestionnaireResponses."""
    return {
        "resourceType": "Bundle",
        "id": uuid.uuid4().hex,
        "type": "collection",
        "timestamp": timestamp,
        "entry": [{"fullUrl": f"urn:uuid:{uuid.uuid4()}", "resource": r} for r in responses],
    }
