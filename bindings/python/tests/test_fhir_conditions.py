"""FHIR import, issue 29 items 2, 3 and 5: conditions evaluated or declined, value sets the host
supplies, FHIRPath's functions (docs/fhir.md "Declined items" and the FHIRPath subset).

Expectations come from the R4/SDC/FHIRPath specifications, and where a value can be computed
independently it is: fhirpathpy evaluates the same FHIRPath on the exported QuestionnaireResponse.
The published forms are read from STEPKIT_FHIR_FORMS (default ``<repo>/../shared/fhir/q``); the
tests that need them skip, saying so, when that folder is absent.
"""

from __future__ import annotations

import decimal
import json
import math
from typing import Any, Dict, List, Optional

import pytest

import stepkit
from test_fhir import FORMS, form, items_by_link, shown_after_answering, validate, visible

CODES_THAT_DECLINE = {"conditionNotTranslated", "conditionOnUnaskedItem", "externalValueSet", "unsupportedExpression",
                      "unsupportedItemType"}
ENABLE_WHEN_EXPRESSION = "http://hl7.org/fhir/uv/sdc/StructureDefinition/sdc-questionnaire-enableWhenExpression"
CALCULATED = "http://hl7.org/fhir/uv/sdc/StructureDefinition/sdc-questionnaire-calculatedExpression"
HIDDEN = "http://hl7.org/fhir/StructureDefinition/questionnaire-hidden"


def fhirpath(resource: Dict[str, Any], expression: str, env: Optional[Dict[str, Any]] = None) -> List[Any]:
    import fhirpathpy
    from fhirpathpy.models import models

    return fhirpathpy.evaluate(resource, expression, env or {"resource": resource}, models["r4"])


def walk_items(items: List[Dict[str, Any]], ancestors: List[str]) -> List[Any]:
    found = []
    for item in items:
        found.append((item, ancestors))
        found += walk_items(item.get("item", []), ancestors + [item["linkId"]])
    return found


def task_ids(task: Dict[str, Any]) -> Dict[str, Dict[str, Any]]:
    """Every step and form item of a translated task, by identifier."""
    found = {}
    for step in task["steps"]:
        found[step["identifier"]] = step
        for entry in step.get("formItems", []):
            if "identifier" in entry:
                found[entry["identifier"]] = entry
    return found


# -- every published form: each item run as specified, or declined with a report entry ------------


def published() -> List[str]:
    return sorted(p.name for p in FORMS.glob("*.json")) if FORMS.is_dir() else ["(absent)"]


@pytest.mark.parametrize("name", published())
def test_every_item_is_run_or_declined_with_a_report_entry(name: str) -> None:
    if name == "(absent)":
        pytest.skip(f"the published FHIR forms are not here: {FORMS} is absent (set STEPKIT_FHIR_FORMS)")
    questionnaire = form(name)
    translated = stepkit.Task.translate_fhir(questionnaire)
    task, report = translated["task"], translated["report"]
    ids = task_ids(task)
    declined = {e["linkId"] for e in report if e["code"] in CODES_THAT_DECLINE}
    for entry in report:
        if entry["code"] in CODES_THAT_DECLINE:
            assert "declined" in entry["reason"], entry
    skip_rules = task.get("skipRules", {})
    with stepkit.Task.from_fhir(questionnaire):
        pass
    for item, ancestors in walk_items(questionnaire.get("item", []), []):
        link = item["linkId"]
        is_declined = link in declined or any(a in declined for a in ancestors)
        if is_declined:
            # Declined: not presented anywhere, so never shown unconditionally.
            assert link not in ids, f"{link} is declined but still presented"
            continue
        conditional = "enableWhen" in item or any(e.get("url") == ENABLE_WHEN_EXPRESSION for e in item.get("extension", []))
        if not conditional or item["type"] == "display":
            continue
        if link in ids and ids[link].get("type") in ("question", "form", "instruction"):
            # A step: its condition is its skip rule (the translation of "not enabled").
            assert link in skip_rules, f"{link}'s condition was dropped"
        elif link in ids:
            assert "visibleWhen" in ids[link], f"{link}'s condition was dropped"
        elif item["type"] == "group":
            # A group inside a form: each asked item under it carries its condition.
            for child, _ in walk_items(item.get("item", []), []):
                if child["linkId"] in ids and "identifier" in ids[child["linkId"]] and "formItems" not in ids[child["linkId"]]:
                    assert "visibleWhen" in ids[child["linkId"]] or child["linkId"] in skip_rules, child["linkId"]


def test_strict_refuses_a_form_with_a_declined_item() -> None:
    questionnaire = form("sdc_enablewhen.json")
    with pytest.raises(stepkit.DefinitionError) as caught:
        stepkit.Task.from_fhir(questionnaire, strict=True)
    codes = {e["code"] for e in caught.value.errors}
    assert {"externalValueSet", "conditionOnUnaskedItem"} <= codes


# -- item 2: conditions evaluated or declined --------------------------------------------------------


def questionnaire(*items: Dict[str, Any]) -> Dict[str, Any]:
    return {"resourceType": "Questionnaire", "id": "t", "status": "active", "item": list(items)}


def expression_item(link: str, expression: str, **extra: Any) -> Dict[str, Any]:
    item = {"linkId": link, "type": "string", "text": link,
            "extension": [{"url": ENABLE_WHEN_EXPRESSION,
                           "valueExpression": {"language": "text/fhirpath", "expression": expression}}]}
    item.update(extra)
    return item


@pytest.mark.parametrize("first,second", [
    ("chic", "ken"), ("chicken", None), (None, "chicken"), ("chick", "en "), (None, None), ("Chic", "ken"),
])
def test_enable_when_expression_with_ampersand_matches_fhirpath(first: Optional[str], second: Optional[str]) -> None:
    """LHC-Forms' Q10: `a & b = 'chicken'`, `&` reading an empty operand as '' (FHIRPath 6.6.2)."""
    q = form("lhc_enablewhen_test.json")
    group = next(g for g in q["item"] if g["linkId"] == "g10")
    expression = next(e for e in group["item"][2]["extension"] if e["url"] == ENABLE_WHEN_EXPRESSION)["valueExpression"]["expression"]
    answers = {k: v for k, v in (("Q10", first), ("Q10b", second)) if v is not None}
    shown_items, response = shown_after_answering(stepkit.Task.from_fhir(q), "g10", answers)
    shown = "Q10-ewe" in shown_items
    expected = fhirpath(response, expression) == [True]
    assert shown == expected
    assert shown == (((first or "") + (second or "")) == "chicken")


@pytest.mark.parametrize("answer", ["tes", "test", "testing", "tesz", "Test", "ü", "", None])
def test_enable_when_orders_strings_by_code_point(answer: Optional[str]) -> None:
    """enableWhen `>`, `>=`, `<`, `<=` on a string question (R4: "the answer is compared"; FHIRPath
    orders strings by code point), checked against fhirpathpy on the exported response."""
    q = form("lhc_enablewhen_test.json")
    group = next(g for g in q["item"] if g["linkId"] == "g7")
    ordered = [i for i in group["item"] if i.get("enableWhen", [{}])[0].get("operator") in (">", "<", ">=", "<=")]
    assert len(ordered) == 6
    shown, response = shown_after_answering(stepkit.Task.from_fhir(q), "g7", {"Q7": answer} if answer else {})
    ops = {">": lambda a, b: a > b, "<": lambda a, b: a < b, ">=": lambda a, b: a >= b, "<=": lambda a, b: a <= b}
    for item in ordered:
        condition = item["enableWhen"][0]
        found = fhirpath(response, "QuestionnaireResponse.repeat(item).where(linkId = 'Q7').answer.value"
                                   f".where($this {condition['operator']} %v).exists()",
                         {"v": condition["answerString"]})
        # R4: an unanswered question never satisfies an ordering.
        spec = bool(answer) and ops[condition["operator"]](answer, condition["answerString"])
        assert (item["linkId"] in shown) == (found == [True]) == spec, (item["linkId"], answer)


def test_an_untranslatable_condition_declines_the_item_never_shows_it() -> None:
    q = questionnaire(
        {"linkId": "a", "type": "string", "text": "a"},
        expression_item("b", "%resource.item.where(linkId='a').answer.value.toChars().count() > 2"),
        {"linkId": "c", "type": "string", "text": "c", "enableWhen": [{"question": "b", "operator": "exists", "answerBoolean": True}]},
        {"linkId": "d", "type": "string", "text": "d"},
    )
    translated = stepkit.Task.translate_fhir(q)
    report = [(e["linkId"], e["path"], e["code"]) for e in translated["report"]]
    assert report == [("b", "item[1].extension[0]", "conditionNotTranslated"),
                      ("c", "item[2].enableWhen[0].question", "conditionOnUnaskedItem")]
    assert [s["identifier"] for s in translated["task"]["steps"]] == ["a", "d"]
    with stepkit.Task.from_fhir(q).open() as s:
        s.set_answer("abcdef")
        assert s.forward()["step"]["identifier"] == "d"
        s.set_answer("x")
        s.forward()
        response = s.result_as("fhir")
    validate(response)
    assert [i["linkId"] for i in response["item"]] == ["a", "d"]
    with pytest.raises(stepkit.DefinitionError) as caught:
        stepkit.Task.from_fhir(q, strict=True)
    assert [e["path"] for e in caught.value.errors] == ["item[1].extension[0]", "item[2].enableWhen[0].question"]


@pytest.mark.parametrize("expression", [
    "%resource.item.item.where(linkId='n').answer.value > 3 and %resource.item.item.where(linkId='t').answer.value.exists()",
    "%resource.item.item.where(linkId='n').answer.value > 3 or %resource.item.item.where(linkId='t').answer.value = 'yes'",
    "%resource.item.item.where(linkId='t').answer.value.empty()",
    "(%resource.item.item.where(linkId='n').answer.value * 2 >= 10).not()",
    "iif(%resource.item.item.where(linkId='n').answer.value > 3, true, false)",
    "%resource.item.item.where(linkId='t').answer.value.upper().startsWith('Y')",
    "%resource.item.item.where(linkId='flag').answer.value.not()",
    "%resource.item.item.where(linkId='flag').answer.value = false",
])
@pytest.mark.parametrize("answers", [{}, {"n": 2}, {"n": 5}, {"n": 5, "t": "yes"}, {"t": "no"}, {"t": "Yes", "flag": False},
                                     {"flag": True, "n": 4}])
def test_enable_when_expressions_match_fhirpath(expression: str, answers: Dict[str, Any]) -> None:
    """SDC: an item is enabled when its enableWhenExpression is true (empty or false: disabled).
    The items are in a group, so FHIRPath reaches them with `%resource.item.item`."""
    q = questionnaire({"linkId": "g", "type": "group", "text": "g", "item": [
        {"linkId": "n", "type": "integer", "text": "n"},
        {"linkId": "t", "type": "string", "text": "t"},
        {"linkId": "flag", "type": "boolean", "text": "flag"},
        expression_item("x", expression),
    ]})
    translated = stepkit.Task.translate_fhir(q)
    assert translated["report"] == []
    with stepkit.Task.from_fhir(q).open() as s:
        if answers:
            s.set_answer(answers)
        shown = "x" in visible(s)
        response = s.result_as("fhir")
    validate(response)
    assert shown == (fhirpath(response, expression) == [True])


def test_not_of_a_conjunction_that_may_be_empty_is_declined() -> None:
    """`(a = 1 and c = 2).not()` is empty in FHIRPath when a is unanswered and c is 2; StepKit's
    `and` would be false and its negation true, so the translation is refused rather than
    differ (a single comparison's negation is translated: see the test above)."""
    q = questionnaire({"linkId": "a", "type": "integer", "text": "a"}, {"linkId": "c", "type": "integer", "text": "c"},
                      expression_item("b", "(%resource.item.where(linkId='a').answer.value = 1 and "
                                           "%resource.item.where(linkId='c').answer.value = 2).not()"))
    report = stepkit.Task.translate_fhir(q)["report"]
    assert [(e["linkId"], e["code"]) for e in report] == [("b", "conditionNotTranslated")]


# -- item 3: value sets the host supplies -------------------------------------------------------------


YES_NO_DONT_KNOW = [
    {"system": "http://terminology.hl7.org/CodeSystem/v2-0532", "code": "Y", "display": "Yes"},
    {"system": "http://terminology.hl7.org/CodeSystem/v2-0532", "code": "N", "display": "No"},
    {"system": "http://terminology.hl7.org/CodeSystem/v2-0532", "code": "ASKU", "display": "Asked but unknown"},
]
SCENARIO_2 = "http://sqlonfhir-r4.azurewebsites.net/fhir/ValueSet/a015b6a1ac024dc19baec940be2c1695"
QUESTION = "1acf93a7-0890-44cd-be48-542defb35248"
WHEN_YES = "945b97b5-6d74-4a55-9be1-1989751219fb"          # enabled when = Y
WHEN_NOT_ASKU = "fab7c5c4-0ac0-4afa-bd6d-c0ce4f5e0bdf"     # enabled when != ASKU


@pytest.mark.parametrize("code", ["Y", "N", "ASKU", None])
def test_supplied_value_set_becomes_coded_choices_with_conditions_kept(code: Optional[str]) -> None:
    q = form("sdc_enablewhen.json")
    options = {"valueSets": {SCENARIO_2: YES_NO_DONT_KNOW}}
    translated = stepkit.Task.translate_fhir(q, value_sets=options["valueSets"])
    assert not [e for e in translated["report"] if e["linkId"] in (QUESTION, WHEN_YES, WHEN_NOT_ASKU)]
    task = stepkit.Task.from_fhir(q, value_sets=options["valueSets"])
    shown, response = shown_after_answering(task, "02a7536f-06b2-4dee-94e1-f5cfcb0e8622", {QUESTION: [code]} if code else {})
    # R4 enableWhen: `=` holds when an answer equals the coding; `!=` when none does (unanswered too).
    assert ("840c08ad-4b27-4c1d-9d6e-824202518ad0" in shown) == (code == "Y")
    assert ("e78586ac-8c97-42a8-a56b-779c5c1d81f1" in shown) == (code != "ASKU")
    answers = items_by_link(response).get(QUESTION, {}).get("answer", [])
    assert answers == ([{"valueCoding": next(c for c in YES_NO_DONT_KNOW if c["code"] == code)}] if code else [])
    found = fhirpath(response, f"QuestionnaireResponse.repeat(item).where(linkId = '{QUESTION}').answer.value.code")
    assert found == ([code] if code else [])


def test_without_the_value_set_the_question_and_its_dependents_are_declined() -> None:
    q = form("sdc_enablewhen.json")
    report = stepkit.Task.translate_fhir(q)["report"]
    by = {(e["linkId"], e["code"]) for e in report}
    assert (QUESTION, "externalValueSet") in by
    assert (WHEN_YES, "conditionOnUnaskedItem") in by and (WHEN_NOT_ASKU, "conditionOnUnaskedItem") in by
    ids = task_ids(stepkit.Task.translate_fhir(q)["task"])
    for link in (QUESTION, "840c08ad-4b27-4c1d-9d6e-824202518ad0", "e78586ac-8c97-42a8-a56b-779c5c1d81f1"):
        assert link not in ids


def test_value_set_with_a_version_and_a_bad_option() -> None:
    q = questionnaire({"linkId": "c", "type": "choice", "text": "c", "answerValueSet": "http://x.org/vs|2.0"},
                      {"linkId": "d", "type": "string", "text": "d"})
    translated = stepkit.Task.translate_fhir(q, value_sets={"http://x.org/vs": [{"code": "a"}, {"code": "b", "display": "Bee"}]})
    assert translated["report"] == []
    choices = translated["task"]["steps"][0]["answerFormat"]["textChoices"]
    assert [(c["value"], c["text"]) for c in choices] == [("a", "a"), ("b", "Bee")]
    with pytest.raises(stepkit.StepKitError) as caught:
        stepkit.Task.translate_fhir(q, value_sets={"http://x.org/vs": [{"display": "no code"}, {"code": 3}, "x",
                                                                      {"code": "a", "weight": 1}]})
    paths = {e["path"] for e in caught.value.errors}
    assert paths == {'valueSets["http://x.org/vs"][0].code', 'valueSets["http://x.org/vs"][1].code',
                     'valueSets["http://x.org/vs"][2]', 'valueSets["http://x.org/vs"][3].weight'}
    with pytest.raises(stepkit.StepKitError):
        stepkit.Task.translate_fhir(q, value_sets=["not", "an", "object"])


# -- item 5: FHIRPath functions, and Smart Forms' CVD risk ---------------------------------------------


def calculated(link: str, expression: str, type_: str = "decimal") -> Dict[str, Any]:
    return {"linkId": link, "type": type_, "text": link, "readOnly": True,
            "extension": [{"url": CALCULATED, "valueExpression": {"language": "text/fhirpath", "expression": expression}}]}


FUNCTIONS = [
    ("ln", "%resource.repeat(item).where(linkId='n').answer.value.ln()", "decimal"),
    ("exp", "(%resource.repeat(item).where(linkId='n').answer.value / 10).exp()", "decimal"),
    ("sqrt", "%resource.repeat(item).where(linkId='n').answer.value.sqrt()", "decimal"),
    ("power", "%resource.repeat(item).where(linkId='n').answer.value.power(2)", "decimal"),
    ("abs", "(0 - %resource.repeat(item).where(linkId='n').answer.value).abs()", "decimal"),
    ("truncate", "(%resource.repeat(item).where(linkId='n').answer.value / 3).truncate()", "integer"),
    ("round", "(%resource.repeat(item).where(linkId='n').answer.value / 3).round(2)", "decimal"),
    ("upper", "%resource.repeat(item).where(linkId='t').answer.value.upper()", "string"),
    ("lower", "%resource.repeat(item).where(linkId='t').answer.value.lower()", "string"),
    ("length", "%resource.repeat(item).where(linkId='t').answer.value.length()", "integer"),
    ("substring", "%resource.repeat(item).where(linkId='t').answer.value.substring(1, 3)", "string"),
    ("substring1", "%resource.repeat(item).where(linkId='t').answer.value.substring(2)", "string"),
    ("startsWith", "%resource.repeat(item).where(linkId='t').answer.value.startsWith('ab')", "boolean"),
    ("contains", "%resource.repeat(item).where(linkId='t').answer.value.contains('cd')", "boolean"),
    ("replace", "%resource.repeat(item).where(linkId='t').answer.value.replace('b', 'XY')", "string"),
    ("amp", "%resource.repeat(item).where(linkId='t').answer.value & '!'", "string"),
]


@pytest.mark.parametrize("answers", [{"n": 4, "t": "abcde"}, {"n": 0.5, "t": "Zb"}, {"n": -9, "t": "b"}, {"n": 0}, {"t": "abcd"}, {}])
def test_functions_match_fhirpath_on_the_exported_response(answers: Dict[str, Any]) -> None:
    q = questionnaire({"linkId": "g", "type": "group", "text": "g", "item": [
        {"linkId": "n", "type": "decimal", "text": "n"}, {"linkId": "t", "type": "string", "text": "t"},
        *[calculated(link, expression, type_) for link, expression, type_ in FUNCTIONS]]})
    translated = stepkit.Task.translate_fhir(q)
    assert translated["report"] == []
    with stepkit.Task.from_fhir(q).open() as s:
        if answers:
            s.set_answer(answers)
        response = s.result_as("fhir")
    validate(response)
    by = items_by_link(response)
    for link, expression, _ in FUNCTIONS:
        mine = [next(v for k, v in a.items() if k.startswith("value")) for a in by.get(link, {}).get("answer", [])]
        try:
            expected = fhirpath(response, expression)
        except decimal.InvalidOperation:
            # fhirpathpy raises for sqrt(-9); FHIRPath says: "If the square root cannot be
            # represented (such as the square root of -1), the result is empty."
            expected = []
        # fhirpathpy gives ln(0) as -Infinity, which no FHIR decimal (nor JSON) can hold: FHIRPath
        # has no such value, the result is empty.
        expected = [b for b in expected if not (isinstance(b, decimal.Decimal) and not b.is_finite())]
        if link == "power" and answers.get("n") is not None and answers["n"] < 0:
            # fhirpathpy gives empty for every negative base; FHIRPath empties only a power that
            # "cannot be represented (such as -1 raised to the 0.5)": (-9)^2 is 81.
            assert expected == []
            expected = [answers["n"] ** 2]
        assert len(mine) == len(expected), (link, mine, expected)
        for a, b in zip(mine, expected):
            if isinstance(b, (int, float, decimal.Decimal)) and not isinstance(b, bool):
                assert math.isclose(float(a), float(b), rel_tol=1e-9, abs_tol=1e-12), (link, a, b)
            else:
                assert a == b, (link, a, b)


def test_an_untranslatable_calculation_is_declined() -> None:
    q = questionnaire({"linkId": "t", "type": "string", "text": "t"},
                      calculated("chars", "%resource.item.where(linkId='t').answer.value.toChars()", "string"))
    report = stepkit.Task.translate_fhir(q)["report"]
    assert [(e["linkId"], e["code"]) for e in report] == [("chars", "unsupportedExpression")]
    assert "declined" in report[0]["reason"]


CVD_CASES = [
    {"gender": ["female"], "age": 60, "systolic-bp": 140.0, "current-smoker": True, "tot-chol": 6.0, "hdl-chol": 1.2,
     "has-diabetes": False, "ecg-lvh": False},
    {"gender": ["male"], "age": 50, "systolic-bp": 120.0, "current-smoker": False, "tot-chol": 5.0, "hdl-chol": 1.5,
     "has-diabetes": True, "ecg-lvh": True},
    {"gender": ["male"], "age": 80, "systolic-bp": 170.0, "current-smoker": True, "tot-chol": 7.5, "hdl-chol": 0.9,
     "has-diabetes": True, "ecg-lvh": False},
    {"gender": ["female"], "age": 30, "systolic-bp": 110.0, "tot-chol": 4.0, "hdl-chol": 1.6},
]


@pytest.mark.parametrize("answers", CVD_CASES)
def test_smart_forms_cvd_risk_matches_fhirpath(answers: Dict[str, Any]) -> None:
    """The CVD risk score (Framingham, as Smart Forms writes it: variables on the group reading
    its items with `item.where(...)`, `ln()`, `exp()`, `round(0)`) equals fhirpathpy evaluating
    the same variables, in order, on the exported response's group."""
    q = form("smartforms_cvd_check.json")
    report = stepkit.Task.translate_fhir(q)["report"]
    assert not [e for e in report if e["linkId"] in ("CVD-risk", "cvd-risk") and e["code"] in CODES_THAT_DECLINE]
    assert not [e for e in report if e["linkId"] == "CVD-risk"]   # every variable translated
    with stepkit.Task.from_fhir(q).open() as s:
        s.set_answer(answers)
        response = s.result_as("fhir")
    validate(response)
    group_item = next(i for i in response["item"] if i["linkId"] == "CVD-risk")
    group = q["item"][0]
    env: Dict[str, Any] = {"resource": response, "questionnaire": q}
    for e in group["extension"]:
        if e["url"].endswith("/variable"):
            v = e["valueExpression"]
            # The variable's context is the group: `item` is its items.
            env[v["name"]] = fhirpath(response, f"%resource.item.where(linkId='CVD-risk').select({v['expression']})", dict(env))
    expected = fhirpath(response, "%cvdScore.round(0)", env)
    assert len(expected) == 1
    mine = items_by_link(response)["cvd-risk"]["answer"]
    assert mine == [{"valueDecimal": expected[0]}] or float(mine[0]["valueDecimal"]) == float(expected[0])


# -- item 4: every R4 datatype on answers -----------------------------------------------------------


@pytest.mark.parametrize("answer", ["11:11:10", "11:11:11", "11:11:12", "23:59:59", None])
def test_time_answers_have_seconds_and_compare_to_the_second(answer: Optional[str]) -> None:
    """R4: time is hh:mm:ss. sdc_enablewhen enables one item when the time is > 11:11:11 and
    another when it is <= 11:11:11; fhirpathpy evaluates the same on the exported response."""
    q = form("sdc_enablewhen.json")
    group = "02a7536f-06b2-4dee-94e1-f5cfcb088990"
    shown, response = shown_after_answering(stepkit.Task.from_fhir(q), group, {"datetime_question": answer} if answer else {})
    by = items_by_link(response)
    assert by.get("datetime_question", {}).get("answer", []) == ([{"valueTime": answer}] if answer else [])
    for link, op in (("datetime_question_greter_than", ">"), ("datetime_question_less_than_equal", "<=")):
        found = fhirpath(response, "QuestionnaireResponse.repeat(item).where(linkId = 'datetime_question').answer.value"
                                   f".where($this {op} @T11:11:11).exists()")
        spec = answer is not None and (answer > "11:11:11" if op == ">" else answer <= "11:11:11")
        assert (link in shown) == spec == (found == [True]), (link, answer)


def test_time_without_seconds_is_refused_and_its_initial_keeps_them() -> None:
    q = questionnaire({"linkId": "t", "type": "time", "text": "t", "initial": [{"valueTime": "07:00:30"}]})
    task = stepkit.Task.translate_fhir(q)["task"]
    assert task["steps"][0]["answerFormat"] == {"type": "timeOfDay", "seconds": True, "defaultComponents": "07:00:30"}
    with stepkit.Task.from_fhir(q).open() as s:
        for bad in ("11:11", "24:00:00", "11:11:60", "11:11:11.5"):
            with pytest.raises(stepkit.AnswerError):
                s.set_answer(bad)
        s.set_answer("00:00:01")
        assert s.result_as("fhir")["item"][0]["answer"] == [{"valueTime": "00:00:01"}]


def answered_as(item: Dict[str, Any], value: Any, accepted: bool, key: str) -> Optional[Dict[str, Any]]:
    """Answers the one item of a Questionnaire with `value`. Accepted: the QuestionnaireResponse
    is valid R4 and holds the answer as `key` (returned). Refused: an AnswerError, and the
    response holds no answer (None)."""
    with stepkit.Task.from_fhir(questionnaire(item)).open() as s:
        if not accepted:
            with pytest.raises(stepkit.AnswerError):
                s.set_answer(value)
            assert "item" not in s.result_as("fhir")
            return None
        s.set_answer(value)
        response = s.result_as("fhir")
    validate(response)
    assert response["item"][0]["answer"] == [{key: value}]
    return response


@pytest.mark.parametrize("value,accepted", [(2147483647, True), (-2147483648, True), (2147483648, False), (-2147483649, False),
                                            (9007199254740991, False)])
def test_integer_answers_are_32_bits(value: int, accepted: bool) -> None:
    """R4: integer is a signed 32-bit integer (-2,147,483,648..2,147,483,647)."""
    answered_as({"linkId": "n", "type": "integer", "text": "n"}, value, accepted, "valueInteger")


def test_integer_bounds_stay_within_min_and_max_value() -> None:
    q = questionnaire({"linkId": "n", "type": "integer", "text": "n", "extension": [
        {"url": "http://hl7.org/fhir/StructureDefinition/minValue", "valueInteger": 3}]})
    fmt = stepkit.Task.translate_fhir(q)["task"]["steps"][0]["answerFormat"]
    assert (fmt["minimum"], fmt["maximum"]) == (3, 2147483647)


@pytest.mark.parametrize("value,accepted", [("2021-05-03T10:30:00Z", True), ("2021-05-03T10:30:00+02:00", True),
                                            ("2021-05-03T10:30:00", False), ("2021-05-03T10:30", False)])
def test_a_date_time_with_a_time_needs_a_zone(value: str, accepted: bool) -> None:
    """R4 dateTime: "If hours and minutes are specified, a time zone SHALL be populated"."""
    answered_as({"linkId": "d", "type": "dateTime", "text": "d"}, value, accepted, "valueDateTime")


@pytest.mark.parametrize("answer", ["2021", "2020", "2019", "2020-06", "2020-05", "2020-04", "2020-05-01", "2020-04-30", None])
def test_reduced_precision_dates_are_kept_and_compared_as_far_as_both_go(answer: Optional[str]) -> None:
    """R4 date: "a year, year-month, or year-month-day"; FHIRPath compares dates of different
    precision component by component and is empty (not true) where one side stops first. LHC's Q4
    items are enabled when the date is >= 2020-05-01 (and exists); checked against fhirpathpy."""
    q = form("lhc_enablewhen_test.json")
    group = next(g for g in q["item"] if g["linkId"] == "g4")
    conditional = [i for i in group["item"] if i.get("enableWhen")]
    shown, response = shown_after_answering(stepkit.Task.from_fhir(q), "g4", {"Q4": answer} if answer else {})
    assert items_by_link(response).get("Q4", {}).get("answer", []) == ([{"valueDate": answer}] if answer else [])
    for item in conditional:
        c = item["enableWhen"][0]
        if c["operator"] == "exists":
            expected = fhirpath(response, "QuestionnaireResponse.repeat(item).where(linkId = 'Q4').answer.exists()") == [c["answerBoolean"]]
        else:
            found = fhirpath(response, "QuestionnaireResponse.repeat(item).where(linkId = 'Q4').answer.value"
                                       f".where($this {c['operator']} @{c['answerDate']}).exists()")
            expected = found == [True]
        assert (item["linkId"] in shown) == expected, (item["linkId"], answer)


@pytest.mark.parametrize("value,accepted", [("2021", True), ("2021-05", True), ("2021-05-03", True), ("2021-05-03T10:30:00Z", True),
                                            ("2021-13", False), ("0000", False), ("21", False), ("2021-5", False)])
def test_date_time_answers_at_reduced_precision_are_exported_as_written(value: str, accepted: bool) -> None:
    response = answered_as({"linkId": "d", "type": "dateTime", "text": "d"}, value, accepted, "valueDateTime")
    if accepted:
        assert fhirpath(response, "QuestionnaireResponse.item.answer.value.toString()") == [value]


def test_a_partial_date_respects_its_limits_where_it_is_wholly_outside() -> None:
    q = questionnaire({"linkId": "d", "type": "date", "text": "d", "extension": [
        {"url": "http://hl7.org/fhir/StructureDefinition/minValue", "valueDate": "2020-05-01"}]})
    with stepkit.Task.from_fhir(q).open() as s:
        for bad in ("2019", "2020-04"):
            with pytest.raises(stepkit.AnswerError):
                s.set_answer(bad)
        for good in ("2020", "2020-05", "2021"):
            s.set_answer(good)


@pytest.mark.parametrize("by_expression", [False, True])
def test_a_chain_of_conditions_on_a_declined_item_declines_every_link(by_expression: bool) -> None:
    """q0 reads q1, q1 reads q2, ... and the last item is declined (its value set is unknown):
    every item of the chain is declined, each with its own entry, whatever the chain's length
    (the importer follows the chain; it does not pass over the form once per link)."""
    n = 300
    items: List[Dict[str, Any]] = []
    for i in range(n - 1):
        item: Dict[str, Any] = {"linkId": f"q{i}", "type": "string", "text": "x"}
        if by_expression:
            item["extension"] = [{"url": ENABLE_WHEN_EXPRESSION, "valueExpression": {
                "language": "text/fhirpath", "expression": f"%resource.item.item.where(linkId='q{i + 1}').answer.value.exists()"}}]
        else:
            item["enableWhen"] = [{"question": f"q{i + 1}", "operator": "exists", "answerBoolean": True}]
        items.append(item)
    items.append({"linkId": f"q{n - 1}", "type": "choice", "answerValueSet": "http://example.org/unknown"})
    q = questionnaire({"linkId": "first", "type": "string", "text": "first"}, {"linkId": "g", "type": "group", "item": items})
    translated = stepkit.Task.translate_fhir(q)
    codes = {e["linkId"]: e["code"] for e in translated["report"]}
    assert codes.pop(f"q{n - 1}") == "externalValueSet"
    assert codes == {f"q{i}": "conditionOnUnaskedItem" for i in range(n - 1)}
    assert [s["identifier"] for s in translated["task"]["steps"]] == ["first"]
