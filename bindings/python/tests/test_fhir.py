"""FHIR Questionnaire in, QuestionnaireResponse out (docs/fhir.md).

The published forms are read from STEPKIT_FHIR_FORMS, by default ``<repo>/../shared/fhir/q``;
the tests that need them are skipped, saying so, when that folder is absent. They are never
copied into the repository. Exported responses are validated with ``fhir.resources`` (R4B
models); enableWhen's meaning is checked against ``fhirpathpy`` evaluating the same condition
on the exported response.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional, Set, Tuple

import pytest

import stepkit
from conftest import REPO, SRC

FORMS = Path(os.environ.get("STEPKIT_FHIR_FORMS") or (REPO.parent / "shared" / "fhir" / "q"))
EXAMPLES = REPO / "examples" / "fhir"
EXPECTED_REPORTS = json.loads((Path(__file__).parent / "data" / "fhir_reports.json").read_text())


def form(name: str) -> Dict[str, Any]:
    if not FORMS.is_dir():
        pytest.skip(f"the published FHIR forms are not here: {FORMS} is absent (set STEPKIT_FHIR_FORMS)")
    return json.loads((FORMS / name).read_text(encoding="utf-8"))


def validate(response: Dict[str, Any]) -> None:
    """The response is a valid FHIR R4B QuestionnaireResponse (raises otherwise)."""
    from fhir.resources.R4B.questionnaireresponse import QuestionnaireResponse

    QuestionnaireResponse.model_validate(response)


def schema_validator(name: str) -> Any:
    import jsonschema

    schema = json.loads((REPO / "schema" / name).read_text(encoding="utf-8"))
    return jsonschema.Draft202012Validator(schema)


def items_by_link(response: Dict[str, Any]) -> Dict[str, Dict[str, Any]]:
    found: Dict[str, Dict[str, Any]] = {}

    def walk(items: List[Dict[str, Any]]) -> None:
        for item in items:
            found[item["linkId"]] = item
            walk(item.get("item", []))
            for answer in item.get("answer", []):
                walk(answer.get("item", []))

    walk(response.get("item", []))
    return found


# -- every published form ------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(EXPECTED_REPORTS))
def test_published_form_imports_with_exact_report(name: str) -> None:
    questionnaire = form(name)
    translated = stepkit.Task.translate_fhir(questionnaire)
    report = [[e["linkId"], e["path"], e["code"]] for e in translated["report"]]
    assert report == EXPECTED_REPORTS[name]
    for entry in translated["report"]:
        assert entry["reason"]
    schema_validator("task.schema.json").validate(translated["task"])
    # The translation compiles as a plain task, and the import compiles as a task too.
    with stepkit.Task.from_json(translated["task"]):
        pass
    with stepkit.Task.from_fhir(questionnaire) as task:
        assert task.info["stepCount"] == len(translated["task"]["steps"])
    if EXPECTED_REPORTS[name]:
        with pytest.raises(stepkit.DefinitionError) as caught:
            stepkit.Task.from_fhir(questionnaire, strict=True)
        assert [e["path"] for e in caught.value.errors] == [e[1] for e in EXPECTED_REPORTS[name]]
    else:
        stepkit.Task.from_fhir(questionnaire, strict=True).close()


def test_every_published_form_is_listed() -> None:
    if not FORMS.is_dir():
        pytest.skip(f"the published FHIR forms are not here: {FORMS} is absent (set STEPKIT_FHIR_FORMS)")
    assert sorted(p.name for p in FORMS.glob("*.json")) == sorted(EXPECTED_REPORTS)


# -- walks ------------------------------------------------------------------------------------------


def visible(session: stepkit.Session) -> List[str]:
    return list(session.state["visibleItems"])


def shown_after_answering(task: stepkit.Task, group: str, answer: Dict[str, Any]) -> Tuple[Set[str], Dict[str, Any]]:
    """Goes forward to the step `group`, gives it `answer` (nothing when it is empty): the items
    shown then, and the QuestionnaireResponse, checked to be valid R4."""
    with task.open() as s:
        while s.state["step"]["identifier"] != group:
            s.forward()
        if answer:
            s.set_answer(answer)
        shown = set(visible(s))
        response = s.result_as("fhir")
    validate(response)
    return shown, response


def test_enablewhen_boolean_group_visibility() -> None:
    task = stepkit.Task.from_fhir(form("lhc_enablewhen_test.json"))
    with task.open() as s:
        assert visible(s) == ["Q1", "Q1-not-exists", "Q1-not-true"]   # != holds while unanswered
        s.set_answer({"Q1": True})
        assert visible(s) == ["Q1", "Q1-exists", "Q1-true"]
        s.set_answer({"Q1": False})
        assert visible(s) == ["Q1", "Q1-exists", "Q1-false", "Q1-not-true"]
        response = s.result_as("fhir")
        validate(response)
        assert response["status"] == "in-progress"
        assert items_by_link(response)["Q1"]["answer"] == [{"valueBoolean": False}]


def test_enablewhen_choice_and_numbers() -> None:
    task = stepkit.Task.from_fhir(form("lhc_enablewhen_test.json"))
    with task.open() as s:
        s.forward()
        s.set_answer({"Q2": 5.6})
        assert visible(s) == ["Q2", "Q2-exists", "Q2-equal", "Q2-ge"]
        s.set_answer({"Q2": 4.0})
        assert visible(s) == ["Q2", "Q2-exists"]
        s.forward()
        s.set_answer({"Q3": 4})
        assert visible(s) == ["Q3", "Q3-exists", "Q3-ge"]
        for _ in range(5):
            s.forward()
        assert s.state["step"]["identifier"] == "g8"
        s.set_answer({"Q8": ["B", "C"]})
        assert visible(s) == ["Q8", "Q8-exists", "Q8-eq-B", "Q8-eq-B-and-C"]
        s.forward()
        assert visible(s) == ["Q9", "Q9-not-exists", "Q9-noteq-B"]
        s.set_answer({"Q9": ["B"]})
        assert visible(s) == ["Q9", "Q9-exists", "Q9-eq-B"]
        response = s.result_as("fhir")
    validate(response)
    by = items_by_link(response)
    assert by["Q8"]["answer"] == [
        {"valueCoding": {"system": "test-coding", "code": "B", "display": "B"}},
        {"valueCoding": {"system": "test-coding", "code": "C", "display": "C"}},
    ]
    assert by["Q2"]["answer"] == [{"valueDecimal": 4.0}]
    assert by["Q3"]["answer"] == [{"valueInteger": 4}]
    assert "Q2-equal" not in by  # disabled: absent


def test_nested_group_condition_applies_to_all_items() -> None:
    task = stepkit.Task.from_fhir(form("lhc_nested_enablewhen.json"))
    with task.open() as s:
        s.set_answer(["NO"])
        state = s.forward()
        assert state["status"] == "finished"  # the conditional group is skipped as a whole
    with task.open() as s:
        s.set_answer(["YES"])
        s.forward()
        assert visible(s) == ["c1", "d1", "cc1", "dd1"]
        s.set_answer({"c1": ["A"], "cc1": ["A"]})
        assert visible(s) == ["c1", "cc1"]
        s.set_answer({"c1": ["B"], "d1": "inner", "cc1": ["A"]})
        s.forward()
        response = s.result_as("fhir")
    validate(response)
    assert response["status"] == "completed"
    group = next(i for i in response["item"] if i["linkId"] == "g1")
    assert [i["linkId"] for i in group["item"]] == ["c1", "d1", "g2"]
    assert group["item"][2]["item"] == [
        {"linkId": "cc1", "text": "Inner controller", "answer": [{"valueCoding": {"code": "A", "display": "A"}}]}
    ]   # dd1 is disabled (cc1 = A): absent


def test_phq9_value_set_codes_reach_result_and_response() -> None:
    questionnaire = form("sdc_phq9.json")
    task = stepkit.Task.from_fhir(questionnaire)
    codes = ["Not-at-all", "Several-days", "More than half the days", "Nearly every day"]
    answers = {f"H1/T1/Q{i}": [codes[i % 4]] for i in range(1, 10)}
    with task.open() as s:
        s.set_answer(answers)
        s.forward()
        result = s.result
        response = s.result_as("fhir")
    validate(response)
    schema_validator("result.schema.json").validate(result)
    question = result["results"][0]["results"][0]
    assert question["codings"] == [{"system": "http://hl7.org/fhir/uv/sdc/CodeSystem/CSPHQ9", "code": "Several-days",
                                     "display": "Several days"}]
    assert response["questionnaire"] == questionnaire["url"] + "|" + questionnaire["version"]
    # The total score: calculatedExpression %resource.answers().value.ordinal().sum() over the
    # contained value set's ordinalValues (Q1..Q9 answered 1, 2, 3, 0, 1, 2, 3, 0, 1).
    assert result["calculations"] == {"fhir_1": 13}
    assert items_by_link(response)["H1/TS"]["answer"] == [{"valueQuantity": {"value": 13}}]
    q2 = items_by_link(response)["H1/T1/Q2"]
    assert q2["answer"] == [{"valueCoding": {"system": "http://hl7.org/fhir/uv/sdc/CodeSystem/CSPHQ9",
                                              "code": "More than half the days", "display": "More than half the days"}}]


def past_shown_values(s: Any) -> Dict[str, Any]:
    """Goes forward over the steps that only show values (visible calculated and read-only
    items, issue 29 item 6) to the next question; returns the state there."""
    state = s.state
    while state["status"] == "inProgress" and state["step"]["type"] == "instruction":
        state = s.forward()
    return state


def test_calculated_items_follow_their_source() -> None:
    """SDC: a calculatedExpression item is computed, not answered; questionnaire-hidden means
    "not displayed", so a visible calculated item is shown (read-only, with its value) and a
    hidden one, or one in a hidden group, is not, while all of them are in the response."""
    task = stepkit.Task.from_fhir(form("lhc_hidden_items.json"))
    presented = []
    with task.open() as s:
        state = s.state
        assert state["step"]["identifier"] == "CE-VISIBLE"   # shown, not asked
        assert "answerFormat" not in state["step"]
        presented.append(state["step"]["identifier"])
        state = s.forward()
        assert state["step"]["identifier"] == "ITEM-VISIBLE"
        presented.append("ITEM-VISIBLE")
        s.set_answer(7.5)
        state = s.forward()
        presented.append(state["step"]["identifier"])
        assert state["step"]["text"] == "GROUP-VISIBLE/CE-VISIBLE/1/1: 7.5"   # its current value
        assert s.forward()["status"] == "finished"
        response = s.result_as("fhir")
    # The hidden group (and the hidden items) never become a step.
    assert presented == ["CE-VISIBLE", "ITEM-VISIBLE", "GROUP-VISIBLE"]
    validate(response)
    by = items_by_link(response)
    for link in ["CE-HIDDEN", "CE-VISIBLE", "GROUP-VISIBLE/CE-HIDDEN", "GROUP-VISIBLE/CE-VISIBLE", "GROUP-HIDDEN/CE-HIDDEN"]:
        assert by[link]["answer"] == [{"valueDecimal": 7.5}], link
    assert by["ITEM-VISIBLE"]["answer"] == [{"valueDecimal": 7.5}]


def test_screener_hidden_items_exported_when_enabled() -> None:
    task = stepkit.Task.from_fhir(form("afhir_screener.json"))
    with task.open() as s:
        s.set_answer({"1.1.0": ["386661006"]})
        response = s.result_as("fhir")
    validate(response)
    by = items_by_link(response)
    assert by["1.2.1"]["answer"] == [{"valueCoding": {"code": "386661006", "display": "Fever", "system": "http://snomed.info/sct"}}]
    assert "1.3.0" not in by and "1.3.1" not in by   # its condition does not hold


# -- enableWhen against fhirpathpy --------------------------------------------------------------------


FHIRPATH_OPS = {"=": "=", "!=": "=", ">": ">", "<": "<", ">=": ">=", "<=": "<="}


def fhirpath_enabled(response: Dict[str, Any], condition: Dict[str, Any]) -> bool:
    """FHIR's enableWhen, evaluated by fhirpathpy on the exported response."""
    import fhirpathpy
    from fhirpathpy.models import models

    answers = "QuestionnaireResponse.repeat(item).where(linkId = %q).answer"
    env = {"q": condition["question"]}
    op = condition["operator"]
    if op == "exists":
        return fhirpathpy.evaluate(response, f"{answers}.exists()", env, models["r4"]) == [condition["answerBoolean"]]
    key = next(k for k in condition if k.startswith("answer"))
    value = "@" + condition[key] if key in ("answerDate", "answerDateTime") else "%v"
    env["v"] = condition[key]
    found = fhirpathpy.evaluate(response, f"{answers}.value.where($this {FHIRPATH_OPS[op]} {value}).exists()", env, models["r4"])
    holds = found == [True]
    return not holds if op == "!=" else holds


@pytest.mark.parametrize("group,answer", [
    ("g1", {"Q1": True}), ("g1", {"Q1": False}), ("g1", {}),
    ("g2", {"Q2": 5.6}), ("g2", {"Q2": 4.8}), ("g2", {"Q2": -1}), ("g2", {}),
    ("g3", {"Q3": 5}), ("g3", {"Q3": 3}), ("g3", {}),
    ("g4", {"Q4": "2020-05-01"}), ("g4", {"Q4": "2019-12-31"}), ("g4", {}),
    ("g7", {"Q7": "test"}), ("g7", {"Q7": "other"}), ("g7", {}),
])
def test_enablewhen_matches_fhirpath(group: str, answer: Dict[str, Any]) -> None:
    questionnaire = form("lhc_enablewhen_test.json")
    task = stepkit.Task.from_fhir(questionnaire)
    spec = next(g for g in questionnaire["item"] if g["linkId"] == group)
    translated = {e["linkId"] for e in stepkit.Task.translate_fhir(questionnaire)["report"]}
    shown, response = shown_after_answering(task, group, answer)
    for item in spec["item"]:
        if "enableWhen" not in item or item["linkId"] in translated:
            continue   # string ordering is reported as not translated
        expected = all(fhirpath_enabled(response, c) for c in item["enableWhen"])
        assert (item["linkId"] in shown) == expected, item["linkId"]


# -- bad input ------------------------------------------------------------------------------------------


def test_bad_questionnaires_report_every_problem_with_fhir_paths() -> None:
    with pytest.raises(stepkit.DefinitionError) as caught:
        stepkit.Task.from_fhir({"resourceType": "Patient"})
    assert caught.value.errors[0]["code"] == "notAQuestionnaire"
    bad = {"resourceType": "Questionnaire", "item": [
        {"linkId": "a", "type": "string"},
        {"type": "string"},
        {"linkId": "g", "type": "group", "item": [
            {"linkId": "a", "type": "integer", "answerOption": [{"valueString": "x"}],
             "enableWhen": [{"question": "d", "operator": "exists", "answerBoolean": True},
                            {"question": "missing", "operator": "=", "answerString": "x"}]}]},
        {"linkId": "d", "type": "date", "initial": [{"valueBoolean": True}]},
    ]}
    with pytest.raises(stepkit.DefinitionError) as caught:
        stepkit.Task.from_fhir(bad)
    problems = {(e["code"], e["path"]) for e in caught.value.errors}
    assert problems == {
        ("missingLinkId", "item[1].linkId"),
        ("duplicateLinkId", "item[2].item[0].linkId"),
        ("answerTypeMismatch", "item[2].item[0].answerOption[0].valueString"),
        ("answerTypeMismatch", "item[3].initial[0].valueBoolean"),
        ("unknownQuestion", "item[2].item[0].enableWhen[1].question"),
    }


def test_result_as_fhir_needs_an_imported_task() -> None:
    task = stepkit.Task.from_json({"identifier": "t", "steps": [{"type": "instruction", "identifier": "i"}]})
    with task.open() as s:
        with pytest.raises(stepkit.InvalidArgumentError):
            s.result_as("fhir")
        with pytest.raises(ValueError):
            s.result_as("xml")


# -- the examples in this repository ----------------------------------------------------------------


def example_files() -> List[Path]:
    return sorted(p for p in EXAMPLES.glob("*.json") if not p.name.endswith(".answers.json"))


@pytest.mark.parametrize("path", example_files(), ids=lambda p: p.name)
def test_examples_import_without_report(path: Path) -> None:
    translated = stepkit.Task.translate_fhir(path.read_text(encoding="utf-8"))
    assert translated["report"] == []
    schema_validator("task.schema.json").validate(translated["task"])


# -- the CLI --------------------------------------------------------------------------------------


def run_cli(*args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(SRC))
    return subprocess.run([sys.executable, "-m", "stepkit", *args], capture_output=True, text=True, env=env, timeout=120)


def test_cli_import_and_run_with_fhir_format(tmp_path: Path) -> None:
    source = EXAMPLES / "vitals.json"
    out = tmp_path / "task.json"
    done = run_cli("import-fhir", str(source), "-o", str(out))
    assert done.returncode == 0, done.stderr
    assert json.loads(out.read_text())["steps"]
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps(json.loads((EXAMPLES / "vitals.answers.json").read_text())))
    done = run_cli("run", str(source), "--answers", str(answers), "--format", "fhir", "-q")
    assert done.returncode == 0, done.stderr
    response = json.loads(done.stdout)
    validate(response)
    assert response["status"] == "completed"


# -- calculatedExpression against fhirpathpy -------------------------------------------------------


def calculated_items(items: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
    found = []
    for item in items:
        for e in item.get("extension", []):
            if e["url"].endswith("sdc-questionnaire-calculatedExpression"):
                found.append({"linkId": item["linkId"], "expression": e["valueExpression"]["expression"]})
        found += calculated_items(item.get("item", []))
    return found


def test_calculated_answer_copies_match_fhirpath() -> None:
    """`%resource.item.where(linkId='X').answer.value`, evaluated by fhirpathpy on the exported
    response, gives the answer StepKit computed for the item."""
    import fhirpathpy
    from fhirpathpy.models import models

    cases = [(json.loads((EXAMPLES / "scores.json").read_text()), {"interest": ["1"], "mood": ["2"]})]
    if FORMS.is_dir():
        cases.append((form("lhc_hidden_items.json"), 12.25))
    for questionnaire, answer in cases:
        task = stepkit.Task.from_fhir(questionnaire)
        with task.open() as s:
            past_shown_values(s)
            s.set_answer(answer)
            s.forward()
            response = s.result_as("fhir")
        validate(response)
        by = items_by_link(response)
        checked = 0
        for calc in calculated_items(questionnaire["item"]):
            if "answer.value" not in calc["expression"]:
                continue
            expected = fhirpathpy.evaluate(response, calc["expression"], {"resource": response}, models["r4"])
            values = [next(v for k, v in a.items() if k.startswith("value")) for a in by[calc["linkId"]]["answer"]]
            assert values == expected, calc["linkId"]
            checked += 1
        assert checked > 0


def test_total_score_is_the_sum_of_ordinal_values() -> None:
    questionnaire = json.loads((EXAMPLES / "scores.json").read_text())
    weights = {}
    for item in questionnaire["item"][0]["item"][:2]:
        for option in item["answerOption"]:
            weights[(item["linkId"], option["valueCoding"]["code"])] = option["extension"][0]["valueDecimal"]
    task = stepkit.Task.from_fhir(questionnaire)
    for interest in "012":
        for mood in "012":
            with task.open() as s:
                s.set_answer({"interest": [interest], "mood": [mood]})
                s.forward()
                response = s.result_as("fhir")
            total = items_by_link(response)["total"]["answer"]
            assert total == [{"valueInteger": weights[("interest", interest)] + weights[("mood", mood)]}]


def fhirpath_calculation(questionnaire: Dict[str, Any], link_id: str, response: Dict[str, Any]) -> List[Any]:
    """What fhirpathpy gives for an item's calculatedExpression on `response`, its `variable`
    extensions (the Questionnaire's, then the item's ancestors' and its own, in order) evaluated
    first and passed in as `%name`, as the SDC specification evaluates them."""
    import fhirpathpy
    from fhirpathpy.models import models

    def chain(items: List[Dict[str, Any]], trail: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
        for item in items:
            if item["linkId"] == link_id:
                return trail + [item]
            found = chain(item.get("item", []), trail + [item])
            if found:
                return found
        return []

    context: Dict[str, Any] = {"resource": response, "questionnaire": questionnaire}
    expression = None
    for element in [questionnaire] + chain(questionnaire["item"], []):
        for e in element.get("extension", []):
            if e["url"].endswith("/variable"):
                v = e["valueExpression"]
                context[v["name"]] = fhirpathpy.evaluate(response, v["expression"], dict(context), models["r4"])
            elif e["url"].endswith("calculatedExpression") and element.get("linkId") == link_id:
                expression = e["valueExpression"]["expression"]
    assert expression is not None
    return fhirpathpy.evaluate(response, expression, context, models["r4"])


# Answer sets for the two LHC-Forms totals written with variables: an option index per question
# (in step order), None for a question left unanswered.
LHC_TOTALS = {
    # The first eight are required; the ninth and the difficulty question are not.
    "lhc_phq9.json": ("/44261-6", [
        [0, 0, 0, 0, 0, 0, 0, 0, 0, None],
        [1, 2, 3, 0, 1, 2, 3, 0, 1, 2],
        [3, 3, 3, 3, 3, 3, 3, 3, 3, 3],
        [2, 0, 1, 0, 3, 0, 0, 1, None, None],
    ]),
    "lhc_apgar_itemweight.json": ("9272-6", [
        [0, 1, 2, 0, 1],
        [2, 2, 2, 2, 2],
        [1, None, 2, 0, 1],
    ]),
}
assert any(None in choices for _, sets in LHC_TOTALS.values() for choices in sets)


@pytest.mark.parametrize("name", sorted(LHC_TOTALS))
def test_totals_through_variables_match_fhirpath(name: str) -> None:
    """A total written as LHC-Forms writes it (each option's score looked up through
    `%questionnaire` in a `variable`, then summed with `iif` and `exists()`) is computed, and
    equals what fhirpathpy gives for the same FHIRPath on the exported response; unanswered
    questions follow FHIR's empty-collection rules (the Apgar total needs all five, so one of
    its sets gives no total)."""
    questionnaire = form(name)
    link_id, answer_sets = LHC_TOTALS[name]
    task = stepkit.Task.from_fhir(questionnaire)
    seen = set()
    for choices in answer_sets:
        with task.open() as s:
            for choice in choices:
                answer_format = past_shown_values(s)["step"]["answerFormat"]
                value = None if choice is None else answer_format["textChoices"][choice]["value"]
                if value is None:
                    s.skip()
                else:
                    s.set_answer([value])  # choices are answered with the list of chosen values
                    s.forward()
            past_shown_values(s)
            assert s.state["status"] == "finished"
            response = s.result_as("fhir")
        validate(response)
        expected = fhirpath_calculation(questionnaire, link_id, response)
        item = items_by_link(response).get(link_id)
        got = [next(v for k, v in a.items() if k.startswith("value")) for a in item["answer"]] if item else []
        assert got == expected, choices
        seen.add(bool(expected))
    assert True in seen


@pytest.mark.parametrize("tired, naps, coffee", [("t2", "n1", 3), ("t0", "n0", None), ("t1", None, 2)])
def test_example_total_through_variables_matches_fhirpath(tired: str, naps: Optional[str], coffee: Optional[int]) -> None:
    """examples/fhir/variables.json (the repository's own): a Questionnaire-level variable holds
    the itemWeight URL, two item variables look the scores up, and the total adds half the
    coffee only when it was answered; fhirpathpy agrees on the exported response."""
    questionnaire = json.loads((EXAMPLES / "variables.json").read_text())
    with stepkit.Task.from_fhir(questionnaire, strict=True) as task, task.open() as s:
        for value in ([tired], [naps] if naps else None, coffee):
            if value is None:
                s.skip()
            else:
                s.set_answer(value)
                s.forward()
        response = s.result_as("fhir")
    validate(response)
    expected = fhirpath_calculation(questionnaire, "total", response)
    item = items_by_link(response).get("total")
    got = [a["valueDecimal"] for a in item["answer"]] if item else []
    assert got == expected
    assert bool(got) == (naps is not None)
