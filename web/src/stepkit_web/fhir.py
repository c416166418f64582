"""The seam for FHIR Questionnaires. The importer is another issue; until it lands, registering
a Questionnaire (Content-Type application/fhir+json) is refused with 415 and says so.

When it lands: ``import_questionnaire`` returns the StepKit task JSON for a Questionnaire, and
``questionnaire_response`` builds the QuestionnaireResponse from a task result; the service
stores the Questionnaire next to the task (tasks.source = "fhir") and serves the response at
``GET /api/sessions/{id}/questionnaire-response``."""

from __future__ import annotations

from typing import Any, Dict


class ImporterUnavailable(Exception):
    """The FHIR importer is not part of this build."""


def _importer() -> Any:
    try:
        from stepkit import fhir as importer  # type: ignore[attr-defined]
    except ImportError:
        raise ImporterUnavailable(
            "FHIR Questionnaire import is not available in this build of StepKit.") from None
    return importer


def import_questionnaire(text: str) -> str:
    return _importer().import_questionnaire(text)


def questionnaire_response(questionnaire: str, result: Dict[str, Any]) -> Dict[str, Any]:
    return _importer().questionnaire_response(questionnaire, result)
