"""FHIR repeating groups walked with several repetitions (issue 31), from Python and the CLI.

Expectations come from the specifications, not from the engine:

- R4 ``Questionnaire.item.repeats`` / ``QuestionnaireResponse.item``: a repeating group is several
  response items with the same linkId, one per repetition, side by side in order; any other item
  appears at most once among its siblings; a repeating question has several ``answer`` entries
  in one item, a question that does not repeat at most one; a group has no ``answer``; items
  appear in the Questionnaire's order, each under its own parent;
- R4 ``enableWhen``: inside a repetition a sibling's answer is that repetition's; a disabled item
  has no answer;
- SDC ``calculatedExpression`` / ``variable``: an item's expression is evaluated in its
  repetition (a group's variable reads ``item`` as that repetition's children), and
  ``%resource`` is the whole response (every repetition).

The loop scenario is ``Tests/fixtures/fhir-loop.json``, written from those rules. The published
forms are read from STEPKIT_FHIR_FORMS (default ``<repo>/../shared/fhir/q``); their tests skip
with a message when the folder is absent. Responses are validated with ``fhir.resources``.
"""

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional

import pytest

import stepkit
from r4_response import check_r4_shape

REPO = Path(__file__).resolve().parents[3]
FORMS = Path(os.environ.get("STEPKIT_FHIR_FORMS", REPO.parent / "shared" / "fhir" / "q"))
LOOP: Dict[str, Any] = json.loads((REPO / "Tests" / "fixtures" / "fhir-loop.json").read_text(encoding="utf-8"))


def validate(response: Dict[str, Any]) -> None:
    """A valid FHIR R4B QuestionnaireResponse (raises otherwise)."""
    from fhir.resources.R4B.questionnaireresponse import QuestionnaireResponse

    QuestionnaireResponse.model_validate(response)


def repetitions(response: Dict[str, Any], link: str) -> List[Dict[str, Any]]:
    return [i for i in response.get("item", []) if i["linkId"] == link]


def answers_of(item: Dict[str, Any], link: str) -> Optional[List[Dict[str, Any]]]:
    for child in item.get("item", []):
        if child["linkId"] == link:
            return child.get("answer")
    return None


MEDS = [
    {"name": "Aspirin", "dose": 100, "daily": True, "times": 2, "notes": ["with food", "mornings"]},
    {"name": "Ibuprofen", "dose": 200, "daily": False, "times": 3},
    {"name": "Vitamin D", "daily": True, "times": 1, "notes": ["winter"]},
]


def check_loop_response(response: Dict[str, Any]) -> None:
    """The loop walked with MEDS: every value worked out from the rules above."""
    validate(response)
    check_r4_shape(response, LOOP)
    assert response["status"] == "completed"
    reps = repetitions(response, "meds")
    assert [answers_of(r, "name") for r in reps] == [[{"valueString": m["name"]}] for m in MEDS]
    # perDay = dose × times where daily is true (enableWhen in that repetition): 100 × 2;
    # Ibuprofen is not daily: times and perDay are disabled there, whatever was typed;
    # Vitamin D has no dose: FHIRPath's empty, no answer.
    assert answers_of(reps[0], "perDay") == [{"valueDecimal": 200}]
    assert [c["linkId"] for c in reps[1]["item"]] == ["name", "dose", "daily"]
    assert answers_of(reps[2], "perDay") is None
    assert answers_of(reps[0], "notes") == [{"valueString": "with food"}, {"valueString": "mornings"}]
    assert answers_of(reps[2], "notes") == [{"valueString": "winter"}]
    # %resource.item.where(linkId='meds').count() and the sum of every repetition's dose.
    summary = repetitions(response, "summary")[0]
    assert answers_of(summary, "total") == [{"valueInteger": 3}]
    assert answers_of(summary, "totalDose") == [{"valueDecimal": 300}]


def test_the_loop_scenario_walks_with_several_repetitions() -> None:
    translated = stepkit.Task.translate_fhir(LOOP)
    assert [(e["linkId"], e["code"]) for e in translated["report"]] == [("perDay", "valueNotShown")]
    with stepkit.Task.from_fhir(LOOP) as task, task.open() as s:
        state = s.state
        assert state["instances"]["meds"]["count"] == 1  # required: one repetition from the start
        s.add_instance("meds")
        s.add_instance("meds")
        s.set_answer({"meds": MEDS})
        assert s.state["instances"]["meds"]["hidden"] == [[], ["times"], []]
        assert s.state["instances"]["meds"]["canAdd"] is True  # maxOccurs 4
        with pytest.raises(stepkit.StepKitError):
            s.set_answer({"meds": [{"notes": ["a", "b", "c", "d"]}]})  # notes: maxOccurs 3
        s.go_forward()
        s.set_answer({"complete": True})
        assert s.go_forward()["status"] == "finished"
        response = s.result_as("fhir")
        check_loop_response(response)
        assert task.verify(response)["divergences"] == []
        assert task.verify(s.result)["divergences"] == []
        # The result nests each repetition, and the repeating question's answers in it.
        group = s.result["results"][0]["results"][0]
        notes = [next(q for q in i["results"] if q["identifier"] == "notes") for i in group["instances"]]
        assert [[a["answer"] for a in n["instances"]] for n in notes] == [["with food", "mornings"], [], ["winter"]]


def test_a_required_answer_missing_in_one_repetition_holds_completion() -> None:
    with stepkit.Task.from_fhir(LOOP) as task, task.open() as s:
        s.add_instance("meds")
        s.set_answer({"meds": [{"name": "Aspirin"}, {"dose": 5}]})
        s.go_forward()
        assert [m["path"] for m in s.state["missingAnswers"]] == ["meds.meds[1].name"]
        with pytest.raises(stepkit.StepKitError):
            s.go_forward()
        assert s.result_as("fhir")["status"] == "in-progress"


def test_the_loop_scenario_through_the_cli(tmp_path: Path) -> None:
    typed = "\n".join(
        [
            "Aspirin", "100", "y", "2", "with food", "mornings", "",  # repetition 1, notes end with an empty line
            "a",  # add another
            "Ibuprofen", "200", "n", "",  # not daily: times is not asked
            "a",
            "Vitamin D", "", "y", "1", "winter", "",
            "",  # done
            "y",  # the list is complete
        ]
    ) + "\n"
    output = tmp_path / "response.json"
    env = dict(os.environ, PYTHONPATH=str(REPO / "bindings" / "python" / "src"))
    proc = subprocess.run(
        [sys.executable, "-m", "stepkit", "run", str(REPO / "Tests" / "fixtures" / "fhir-loop.json"), "-i",
         "--format", "fhir", "-o", str(output)],
        input=typed, capture_output=True, text=True, env=env, timeout=120,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "── Medication 3" in proc.stdout and "Medications listed: 3" in proc.stdout
    check_loop_response(json.loads(output.read_text(encoding="utf-8")))


# -- every published form with a repeating group ---------------------------------------------------


def repeating_group_forms() -> List[str]:
    if not FORMS.is_dir():
        return []

    def has(items: List[Dict[str, Any]]) -> bool:
        return any((i.get("type") == "group" and i.get("repeats") in (True, "true")) or has(i.get("item", [])) for i in items)

    return sorted(p.name for p in FORMS.glob("*.json") if has(json.loads(p.read_text(encoding="utf-8")).get("item", [])))


def sample(fmt: Dict[str, Any], k: int) -> Any:
    """An answer the format takes, different in each repetition k where the format allows."""
    kind = fmt.get("type")
    if kind == "text":
        return f"answer {k + 1}"
    if kind == "numeric":
        return k + 1
    if kind == "boolean":
        return k % 2 == 0
    if kind == "date":
        return f"2024-01-{k + 1:02d}"
    if kind in ("textChoice", "valuePicker"):
        values = [c["value"] for c in fmt.get("textChoices", fmt.get("choices", []))]
        if fmt.get("style") == "multipleChoice":
            return values[k % len(values):][:2] if len(values) - k % len(values) >= 2 else values[:2]
        return [values[k % len(values)]]
    return None


@pytest.mark.parametrize("name", repeating_group_forms() or ["(absent)"])
def test_every_published_form_with_repeating_groups_walks_several_repetitions(name: str) -> None:
    if name == "(absent)":
        pytest.skip(f"the published FHIR forms are not here: {FORMS} is absent (set STEPKIT_FHIR_FORMS)")
    questionnaire = json.loads((FORMS / name).read_text(encoding="utf-8"))
    translated = stepkit.Task.translate_fhir(questionnaire)
    assert not [e for e in translated["report"] if e["code"] in ("repeatingGroup", "repeatingAnswer")]
    groups = {}
    for step in translated["task"]["steps"]:
        for item in step.get("formItems", []):
            if isinstance(item.get("repeat"), dict) and "items" in item:
                groups[item["identifier"]] = (step["identifier"], item)
    assert groups, f"{name}: no repeating group was imported as one"
    typed: Dict[str, List[Dict[str, Any]]] = {}
    with stepkit.Task.from_fhir(questionnaire) as task, task.open() as s:
        for _ in range(50):
            state = s.state
            if state["status"] != "inProgress":
                break
            step = state["step"]["identifier"]
            for group, (owner, item) in groups.items():
                if owner != step:
                    continue
                bounds = state["instances"][group]
                want = min(3, bounds["maxCount"])
                while s.state["instances"][group]["count"] < want:
                    s.add_instance(group)
                entries: List[Dict[str, Any]] = []
                for k in range(want):
                    entry: Dict[str, Any] = {}
                    for inner in item["items"]:
                        value = sample(inner["answerFormat"], k)
                        if value is None:
                            continue
                        if isinstance(inner.get("repeat"), dict):
                            value = [value, value] if not isinstance(value, list) else [value]
                        try:
                            s.set_answer({group: [{} for _ in range(k)] + [{inner["identifier"]: value}]})
                            entry[inner["identifier"]] = value
                        except stepkit.StepKitError:
                            pass  # not enabled, or not what this item takes: left unanswered
                    entries.append(entry)
                typed[group] = entries
            try:
                s.go_forward()
            except stepkit.StepKitError:
                break  # a required answer elsewhere: the response is still written, in progress
        response = s.result_as("fhir")
        result = s.result
        # Nothing reported that should not be: the response and the result, replayed through the
        # task, verify in every repetition (an in-progress response claims no required answer),
        # and the checker finds nothing wrong with the repeating groups' reads or bounds.
        for submission in (response, result):
            verified = task.verify(submission, allow_incomplete=True)
            assert verified["verified"], f"{name}: {verified['divergences'][:3]}"
        findings = task.check()["problems"]
        instance_codes = {"aggregateOverNothing", "indexNeverExists", "aggregateIgnoresInstance", "boundsNeverMet"}
        assert not [f for f in findings if f["severity"] == "error" or f["code"] in instance_codes], f"{name}: {findings}"
    validate(response)
    check_r4_shape(response, questionnaire)
    for group, entries in typed.items():
        reps = [r for r in _all_items(response) if r["linkId"] == group]
        answered = [e for e in entries if e]
        # One response item per answered repetition, in order, each holding its own answers.
        assert len(reps) == len(answered), f"{name}: {group} has {len(reps)} repetitions, {len(answered)} answered"
        for rep, entry in zip(reps, answered):
            for link, value in entry.items():
                got = answers_of(rep, link)
                if isinstance(value, str) and value.startswith("answer "):
                    assert got == [{"valueString": value}]
                elif isinstance(value, list) and value and isinstance(value[0], str) and value[0].startswith("answer "):
                    assert got == [{"valueString": v} for v in value]
                elif isinstance(value, str) and value.startswith("2024-"):
                    assert got == [{"valueDate": value}]
                elif isinstance(value, list):
                    # A choice: one answer per option selected, the option's own value.
                    assert got is not None and len(got) == len(value), f"{name}: {link} {got} for {value}"
                elif isinstance(value, int) and not isinstance(value, bool) and got is not None and "valueInteger" in got[0]:
                    assert got == [{"valueInteger": value}]


def _all_items(response: Dict[str, Any]) -> List[Dict[str, Any]]:
    found: List[Dict[str, Any]] = []

    def walk(items: List[Dict[str, Any]]) -> None:
        for item in items:
            found.append(item)
            walk(item.get("item", []))

    walk(response.get("item", []))
    return found


OCCURS = "http://hl7.org/fhir/StructureDefinition/questionnaire-"


def test_a_nested_repeating_group_nests_its_repetitions_in_each_outer_one() -> None:
    # R4: a repeating group's repetitions are response items, each holding its children's items,
    # at every level; minOccurs/maxOccurs bound the doses in each medication.
    questionnaire = {
        "resourceType": "Questionnaire", "status": "active",
        "item": [{"linkId": "med", "type": "group", "repeats": True, "item": [
            {"linkId": "name", "type": "string"},
            {"linkId": "doses", "type": "group", "repeats": True,
             "extension": [{"url": OCCURS + "minOccurs", "valueInteger": 1}, {"url": OCCURS + "maxOccurs", "valueInteger": 2}],
             "item": [{"linkId": "amount", "type": "decimal", "required": True}]}]}],
    }
    report = stepkit.Task.translate_fhir(questionnaire)["report"]
    assert report == []
    with stepkit.Task.from_fhir(questionnaire) as task, task.open() as s:
        s.add_instance("med")
        s.add_instance("med")
        # In the second medication (the one entered): its one dose (minOccurs), then a second.
        s.add_instance("med.doses")
        with pytest.raises(stepkit.StepKitError) as too_many:
            s.add_instance("med.doses")
        assert too_many.value.errors[0]["code"] == "tooManyInstances"
        with pytest.raises(stepkit.StepKitError) as outside:
            s.enter_instance(0, "med[0].doses")
        assert outside.value.errors[0]["code"] == "outsideOuterInstance"
        state = s.state["instances"]["med.doses"]
        assert (state["count"], state["outerIndex"], state["current"]) == (2, 1, 1)
        s.set_answer({"med": [{"name": "A", "doses": [{"amount": 1.5}]}, {"name": "B", "doses": [{"amount": 2}, {"amount": 3}]}]})
        s.go_forward()
        response = s.result_as("fhir")
    validate(response)
    check_r4_shape(response, questionnaire)
    reps = repetitions(response, "med")
    doses = [[c for c in r["item"] if c["linkId"] == "doses"] for r in reps]
    assert [[answers_of(d, "amount") for d in each] for each in doses] == [
        [[{"valueDecimal": 1.5}]], [[{"valueDecimal": 2}], [{"valueDecimal": 3}]]]
