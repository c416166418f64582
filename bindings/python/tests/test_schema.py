"""The JSON Schemas in schema/ against the engine: every example task validates, each
counter-example (one broken rule each) is refused by both the schema and the compiler, each
example is accepted by both, results and answers of real walks validate, and so does the
restoration data a session saves."""

from __future__ import annotations

import copy
import hashlib
import io
import json
from typing import Any, Callable, Dict, List, Tuple

import pytest

import stepkit
from conftest import EXAMPLE_TASKS, EXAMPLES, REPO, RUN_UUID, START_MS, load_json
from stepkit.active_presenter import ActiveRunner
from stepkit.answers_file import walk_with_answers

try:
    import jsonschema
except ImportError:  # pragma: no cover - reported by every test below, never skipped silently
    pytest.fail("the schema tests need the Python package jsonschema (pip install jsonschema, or apt-get install "
                "python3-jsonschema)", pytrace=False)

SCHEMA_DIR = REPO / "schema"


def _validator(name: str) -> Any:
    schema = load_json(SCHEMA_DIR / name)
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


TASK = _validator("task.schema.json")
RESULT = _validator("result.schema.json")
ANSWER_SCHEMA = load_json(SCHEMA_DIR / "answer.schema.json")
ANSWER = jsonschema.Draft202012Validator(ANSWER_SCHEMA)


def answer_validator(format_type: str) -> Any:
    """Validates the answer of one answer format type ($defs of answer.schema.json)."""
    return jsonschema.Draft202012Validator(
        {"$defs": ANSWER_SCHEMA["$defs"], "anyOf": [{"type": "null"}, {"$ref": "#/$defs/dontKnow"},
                                                    {"$ref": f"#/$defs/{format_type}"}]}
    )


def schema_errors(validator: Any, instance: Any) -> List[str]:
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message[:160]}" for e in validator.iter_errors(instance)]


def engine_accepts(definition: Dict[str, Any]) -> Tuple[bool, str]:
    try:
        stepkit.Task.from_json(definition).close()
        return True, ""
    except stepkit.DefinitionError as exc:
        return False, "; ".join(f"{p.get('path')}: {p.get('message')}" for p in exc.errors)




# ------------------------------------------------------------------------------------------------
# Every example task validates


def test_there_are_example_tasks():
    assert len(EXAMPLE_TASKS) >= 3


@pytest.mark.parametrize("path", EXAMPLE_TASKS, ids=lambda p: p.stem)
def test_example_task_validates(path):
    definition = load_json(path)
    assert schema_errors(TASK, definition) == []
    assert engine_accepts(definition) == (True, "")


# ------------------------------------------------------------------------------------------------
# Schema and engine agree


def base() -> Dict[str, Any]:
    return {
        "identifier": "t",
        "steps": [
            {"type": "instruction", "identifier": "intro", "title": "Hello"},
            {"type": "question", "identifier": "q", "title": "Symptom",
             "answerFormat": {"type": "textChoice", "style": "singleChoice",
                              "textChoices": [{"text": "Headache", "value": "headache"},
                                              {"text": "Dizziness", "value": "dizziness"}]}},
            {"type": "question", "identifier": "n", "answerFormat": {"type": "numeric", "style": "integer"}},
            {"type": "form", "identifier": "f", "formItems": [
                {"identifier": "a", "text": "Age", "answerFormat": {"type": "age"}},
                {"sectionTitle": "More"},
                {"identifier": "e", "text": "Email", "optional": True, "answerFormat": {"type": "email"}}]},
            {"type": "section", "identifier": "s", "steps": [
                {"type": "question", "identifier": "b", "answerFormat": {"type": "boolean"}}]},
            {"type": "completion", "identifier": "done"},
        ],
        "navigationRules": {"q": {"type": "predicate",
                                  "branches": [{"when": {"result": "q", "contains": "headache"}, "destination": "f"}],
                                  "defaultDestination": "n"}},
    }


Mutation = Callable[[Dict[str, Any]], None]


def step(t: Dict[str, Any], identifier: str) -> Dict[str, Any]:
    for s in t["steps"]:
        if s["identifier"] == identifier:
            return s
    raise KeyError(identifier)


def fmt(t: Dict[str, Any], identifier: str = "n") -> Dict[str, Any]:
    return step(t, identifier)["answerFormat"]


def set_format(value: Dict[str, Any], identifier: str = "n") -> Mutation:
    def apply(t: Dict[str, Any]) -> None:
        step(t, identifier)["answerFormat"] = value
    return apply


def rule(value: Any, key: str = "q") -> Mutation:
    def apply(t: Dict[str, Any]) -> None:
        t["navigationRules"] = {key: value}
    return apply


def when(predicate: Any) -> Mutation:
    return rule({"type": "predicate", "branches": [{"when": predicate, "destination": "done"}]})


def modifier(value: Any) -> Mutation:
    def apply(t: Dict[str, Any]) -> None:
        t["stepModifiers"] = {"done": value}
    return apply


CHOICES = [{"text": "A", "value": "a"}, {"text": "B", "value": "b"}]

COUNTER_EXAMPLES: Dict[str, Mutation] = {
    # the task
    "unknown task key": lambda t: t.update(colour="red"),
    "no identifier": lambda t: t.pop("identifier"),
    "empty identifier": lambda t: t.update(identifier=""),
    "no steps": lambda t: t.pop("steps"),
    "empty steps": lambda t: t.update(steps=[]),
    "steps not an array": lambda t: t.update(steps={}),
    # steps
    "step without type": lambda t: step(t, "intro").pop("type"),
    "unknown step type": lambda t: step(t, "intro").update(type="chart"),
    "unknown step key": lambda t: step(t, "intro").update(colour=1),
    "page without steps": lambda t: t["steps"].insert(1, {"type": "page", "identifier": "pg"}),
    "page with a form sub-step": lambda t: t["steps"].insert(1, {"type": "page", "identifier": "pg", "steps": [
        {"type": "form", "identifier": "x", "formItems": [{"identifier": "a", "answerFormat": {"type": "boolean"}}]}]}),
    "page with only an instruction": lambda t: t["steps"].insert(1, {"type": "page", "identifier": "pg", "steps": [
        {"type": "instruction", "identifier": "x", "title": "T"}]}),
    "review with an answer format": lambda t: t["steps"].insert(1, {"type": "review", "identifier": "rv", "answerFormat": {"type": "boolean"}}),
    "empty step identifier": lambda t: step(t, "intro").update(identifier=""),
    "title not a string": lambda t: step(t, "intro").update(title=3),
    "optional not a boolean": lambda t: step(t, "intro").update(optional="yes"),
    "image on a question": lambda t: step(t, "q").update(image="x.png"),
    "question without answerFormat": lambda t: step(t, "n").pop("answerFormat"),
    "placeholder on an instruction": lambda t: step(t, "intro").update(placeholder="x"),
    "confirmText in a question step": set_format({"type": "confirmText", "originalItemIdentifier": "a"}),
    "form without formItems": lambda t: step(t, "f").pop("formItems"),
    "form with only a header": lambda t: step(t, "f").update(formItems=[{"sectionTitle": "x"}]),
    "form item without answerFormat": lambda t: step(t, "f")["formItems"][0].pop("answerFormat"),
    "form item without identifier": lambda t: step(t, "f")["formItems"][0].pop("identifier"),
    "form item with a header title": lambda t: step(t, "f")["formItems"][0].update(sectionTitle="x"),
    "unknown form item key": lambda t: step(t, "f")["formItems"][0].update(colour=1),
    "header with an unknown key": lambda t: step(t, "f")["formItems"][1].update(footnote="x"),
    "section with optional": lambda t: step(t, "s").update(optional=True),
    "section without steps": lambda t: step(t, "s").pop("steps"),
    "section with empty steps": lambda t: step(t, "s").update(steps=[]),
    # answer formats
    "unknown format type": set_format({"type": "slider"}),
    "format without type": set_format({"style": "integer"}),
    "unknown format key": lambda t: fmt(t).update(colour=1),
    "showDontKnowButton not a boolean": lambda t: fmt(t).update(showDontKnowButton="yes"),
    "unknown personalData": lambda t: fmt(t).update(personalData="shoeSize"),
    "numeric without style": set_format({"type": "numeric"}),
    "numeric style float": set_format({"type": "numeric", "style": "float"}),
    "numeric integer with fraction digits": set_format({"type": "numeric", "style": "integer", "maximumFractionDigits": 2}),
    "numeric minimum not a number": set_format({"type": "numeric", "style": "decimal", "minimum": "1"}),
    "scale without maximum": set_format({"type": "scale", "minimum": 0}),
    "scale beyond 10000": set_format({"type": "scale", "minimum": 0, "maximum": 10001}),
    "scale minimum not whole": set_format({"type": "scale", "minimum": 0.5, "maximum": 10}),
    "scale step 0": set_format({"type": "scale", "minimum": 0, "maximum": 10, "step": 0}),
    "continuousScale five fraction digits": set_format({"type": "continuousScale", "minimum": 0, "maximum": 1, "maximumFractionDigits": 5}),
    "continuousScale bad numberStyle": set_format({"type": "continuousScale", "minimum": 0, "maximum": 1, "numberStyle": "currency"}),
    "textChoice without style": set_format({"type": "textChoice", "textChoices": CHOICES}),
    "textChoice bad style": set_format({"type": "textChoice", "style": "single", "textChoices": CHOICES}),
    "textChoice empty choices": set_format({"type": "textChoice", "style": "singleChoice", "textChoices": []}),
    "choice without text": set_format({"type": "textChoice", "style": "singleChoice", "textChoices": [{"value": 1}]}),
    "choice without value": set_format({"type": "textChoice", "style": "singleChoice", "textChoices": [{"text": "A"}]}),
    "choice value an object": set_format({"type": "textChoice", "style": "singleChoice", "textChoices": [{"text": "A", "value": {"x": 1}}]}),
    "choice value a boolean": set_format({"type": "textChoice", "style": "singleChoice", "textChoices": [{"text": "A", "value": True}]}),
    "other text options without other": set_format({"type": "textChoice", "style": "singleChoice",
                                                    "textChoices": [{"text": "A", "value": 1, "textViewPlaceholderText": "x"}]}),
    "textScale with one choice": set_format({"type": "textScale", "textChoices": CHOICES[:1]}),
    "textScale with an exclusive choice": set_format({"type": "textScale", "textChoices": [CHOICES[0], dict(CHOICES[1], exclusive=True)]}),
    "valuePicker with an other choice": set_format({"type": "valuePicker", "textChoices": [dict(CHOICES[0], other=True)]}),
    "valuePicker negative defaultIndex": set_format({"type": "valuePicker", "textChoices": CHOICES, "defaultIndex": -1}),
    "imageChoice without imageChoices": set_format({"type": "imageChoice"}),
    "imageChoice with detailText": set_format({"type": "imageChoice", "imageChoices": [{"value": 1, "detailText": "x"}]}),
    "multipleValuePicker with one picker": set_format({"type": "multipleValuePicker", "valuePickers": [{"textChoices": CHOICES}]}),
    "multipleValuePicker picker of another type": set_format({"type": "multipleValuePicker", "valuePickers": [
        {"type": "textChoice", "textChoices": CHOICES}, {"textChoices": CHOICES}]}),
    "text regex without invalidMessage": set_format({"type": "text", "validationRegularExpression": "^a$"}),
    "text negative maximumLength": set_format({"type": "text", "maximumLength": -1}),
    "text multipleLines not a boolean": set_format({"type": "text", "multipleLines": "no"}),
    "email with maximumLength": set_format({"type": "email", "maximumLength": 10}),
    "date not YYYY-MM-DD": set_format({"type": "date", "minimumDate": "22/11/2026"}),
    "dateTime limit without time": set_format({"type": "date", "style": "dateTime", "minimumDate": "2026-01-01"}),
    "date limit with time on date style": set_format({"type": "date", "maximumDate": "2026-01-01T00:00Z"}),
    "date minuteInterval 7": set_format({"type": "date", "style": "dateTime", "minuteInterval": 7}),
    "date bad style": set_format({"type": "date", "style": "time"}),
    "timeOfDay default 25:00": set_format({"type": "timeOfDay", "defaultComponents": "25:00"}),
    "timeOfDay minuteInterval 45": set_format({"type": "timeOfDay", "minuteInterval": 45}),
    "timeInterval step 31": set_format({"type": "timeInterval", "step": 31}),
    "timeInterval maximum 0": set_format({"type": "timeInterval", "maximumInterval": 0}),
    "height bad measurementSystem": set_format({"type": "height", "measurementSystem": "imperial"}),
    "height with numericPrecision": set_format({"type": "height", "numericPrecision": "low"}),
    "age relativeYear 0": set_format({"type": "age", "relativeYear": 0}),
    "age minimumAge not whole": set_format({"type": "age", "minimumAge": 1.5}),
    "ses with minimum": set_format({"type": "ses", "minimum": 1}),
    "location useCurrentLocation not a boolean": set_format({"type": "location", "useCurrentLocation": 1}),
    "confirmText without original": lambda t: step(t, "f")["formItems"][2].update(
        answerFormat={"type": "confirmText"}),
    # rules
    "navigationRules not an object": lambda t: t.update(navigationRules=[]),
    "rule without type": rule({"destination": "done"}),
    "unknown rule type": rule({"type": "conditional", "destination": "done"}),
    "predicate rule without branches": rule({"type": "predicate", "defaultDestination": "done"}),
    "direct rule without destination": rule({"type": "direct"}),
    "direct rule with branches": rule({"type": "direct", "destination": "done", "branches": []}),
    "direct rule with defaultDestination": rule({"type": "direct", "destination": "done", "defaultDestination": "done"}),
    "branch without when": rule({"type": "predicate", "branches": [{"destination": "done"}]}),
    "branch without destination": rule({"type": "predicate", "branches": [{"when": {"always": True}}]}),
    "branch with an unknown key": rule({"type": "predicate", "branches": [{"when": {"always": True}, "destination": "done", "label": "x"}]}),
    "empty destination": rule({"type": "direct", "destination": ""}),
    "destination not a string": rule({"type": "direct", "destination": 3}),
    "predicate a string": when("q is headache"),
    "all not an array": when({"all": {"always": True}}),
    "not of a string": when({"not": "yes"}),
    "always not a boolean": when({"always": "yes"}),
    "comparison without operator": when({"result": "q"}),
    "operator without result": when({"contains": "headache"}),
    "unknown operator": when({"result": "n", "greaterThan": 3}),
    "answered not a boolean": when({"result": "q", "answered": "yes"}),
    "dontKnow not a boolean": when({"result": "q", "dontKnow": 1}),
    "matches not a string": when({"result": "q", "matches": 1}),
    "contains an object": when({"result": "q", "contains": {"value": "headache"}}),
    "minimum a boolean": when({"result": "n", "minimum": True}),
    "selector with an unknown key": when({"result": {"step": "f", "field": "a"}, "answered": True}),
    "selector without step": when({"result": {"item": "a"}, "answered": True}),
    "selector a number": when({"result": 3, "answered": True}),
    "logical key mixed with a comparison": when({"result": "q", "answered": True, "not": {"always": True}}),
    "skipRules not an object": lambda t: t.update(skipRules=[]),
    "skip rule not a predicate": lambda t: t.update(skipRules={"n": True}),
    "stepModifiers not an object": lambda t: t.update(stepModifiers=[]),
    "modifier without when": modifier({"set": {"text": "x"}}),
    "modifier without set": modifier({"when": {"always": True}}),
    "modifier sets nothing": modifier({"when": {"always": True}, "set": {}}),
    "modifier sets an unknown field": modifier({"when": {"always": True}, "set": {"answerFormat": "x"}}),
    "modifier sets a number": modifier({"when": {"always": True}, "set": {"text": 3}}),
    "modifier with an unknown key": modifier({"when": {"always": True}, "set": {"text": "x"}, "priority": 1}),
    # active steps and recorders
    "wait step with a duration": lambda t: t["steps"].insert(0, {"type": "wait", "identifier": "w", "stepDuration": 5}),
    "countdown under 3 seconds": lambda t: t["steps"].insert(0, {"type": "countdown", "identifier": "c", "stepDuration": 2}),
    "active step longer than a day": lambda t: t["steps"].insert(0, {"type": "active", "identifier": "a1", "stepDuration": 86401}),
    "indicatorType on an active step": lambda t: t["steps"].insert(0, {"type": "active", "identifier": "a1", "indicatorType": "progressBar"}),
    "answerFormat on an active step": lambda t: t["steps"].insert(0, {"type": "active", "identifier": "a1", "answerFormat": {"type": "boolean"}}),
    "unknown recorder type": lambda t: t["steps"].insert(0, {"type": "active", "identifier": "a1", "recorderConfigurations": [
        {"type": "barometer", "identifier": "r"}]}),
    "recorder frequency 0": lambda t: t["steps"].insert(0, {"type": "active", "identifier": "a1", "recorderConfigurations": [
        {"type": "accelerometer", "identifier": "r", "frequency": 0}]}),
    "recorder without identifier": lambda t: t["steps"].insert(0, {"type": "active", "identifier": "a1", "recorderConfigurations": [
        {"type": "accelerometer"}]}),
    "async action without start": lambda t: t.update(asyncActions=[{"type": "location", "identifier": "gps"}]),
    "async action with an unknown key": lambda t: t.update(asyncActions=[{"type": "location", "identifier": "gps",
                                                                          "startStepIdentifier": "intro", "every": 3}]),
    "visibleWhen not a predicate": lambda t: step(t, "f")["formItems"][2].update(visibleWhen=True),
}

# Examples that both must accept: the base plus one variation each.
EXAMPLES_BOTH_ACCEPT: Dict[str, Mutation] = {
    "base": lambda t: None,
    "no rules": lambda t: t.pop("navigationRules"),
    "every common step key": lambda t: step(t, "n").update(title="T", text="x", detailText="d", footnote="f", optional=True,
                                                          placeholder="p", question="Q?"),
    "instruction image": lambda t: step(t, "intro").update(image="hello.png"),
    "form useCardView": lambda t: step(t, "f").update(useCardView=True),
    "header with detailText": lambda t: step(t, "f")["formItems"][1].update(detailText="x"),
    "item learnMoreText": lambda t: step(t, "f")["formItems"][0].update(learnMoreText="x", placeholder="p", detailText="d"),
    "nested sections": lambda t: step(t, "s")["steps"].append(
        {"type": "section", "identifier": "inner", "title": "Inner", "steps": [{"type": "instruction", "identifier": "i2"}]}),
    "don't know button": lambda t: fmt(t).update(showDontKnowButton=True, customDontKnowButtonText="No idea"),
    "personalData": set_format({"type": "numeric", "style": "decimal", "personalData": "height", "unit": "cm"}),
    "numeric decimal": set_format({"type": "numeric", "style": "decimal", "minimum": 0, "maximum": 9.5, "maximumFractionDigits": 1,
                                   "unit": "h", "displayUnit": "hours", "placeholder": "0", "hideUnitWhenAnswerIsEmpty": True,
                                   "defaultNumericAnswer": 1.5}),
    "scale": set_format({"type": "scale", "minimum": 0, "maximum": 10, "step": 2, "defaultValue": 4, "vertical": True,
                         "minimumValueDescription": "low", "maximumValueDescription": "high", "hideSelectedValue": False}),
    "continuousScale": set_format({"type": "continuousScale", "minimum": 0, "maximum": 1, "maximumFractionDigits": 2,
                                   "numberStyle": "percent", "defaultValue": 0.25}),
    "textScale": set_format({"type": "textScale", "textChoices": CHOICES, "defaultIndex": 1, "vertical": False}),
    "textChoice multiple with exclusive and other": set_format({"type": "textChoice", "style": "multipleChoice", "textChoices": [
        {"text": "A", "value": "a", "detailText": "d"}, {"text": "None", "value": "none", "exclusive": True},
        {"text": "Other", "value": 3, "other": True, "textViewPlaceholderText": "Type", "textViewInputOptional": False}]}),
    "imageChoice": set_format({"type": "imageChoice", "imageChoices": [
        {"value": "sun", "normalImage": "sun.png", "selectedImage": "sun-on.png", "accessibilityText": "Sunny"},
        {"value": "rain", "text": "Rain"}]}),
    "valuePicker": set_format({"type": "valuePicker", "textChoices": CHOICES, "defaultIndex": 0}),
    "multipleValuePicker": set_format({"type": "multipleValuePicker", "separator": "/", "valuePickers": [
        {"textChoices": CHOICES}, {"type": "valuePicker", "textChoices": CHOICES, "defaultIndex": 1}]}),
    "boolean": set_format({"type": "boolean", "yesString": "Yes", "noString": "No"}),
    "text": set_format({"type": "text", "maximumLength": 20, "multipleLines": False, "validationRegularExpression": "^[A-Z]+$",
                        "invalidMessage": "Capitals only.", "defaultTextAnswer": "ABC", "secureTextEntry": False,
                        "autocapitalizationType": "allCharacters", "keyboardType": "asciiCapable"}),
    "email": set_format({"type": "email", "placeholder": "you@example.org"}),
    "confirmText in a form": lambda t: step(t, "f")["formItems"].append(
        {"identifier": "e2", "text": "Email again", "answerFormat": {"type": "confirmText", "originalItemIdentifier": "e",
                                                                     "errorMessage": "Differs.", "maximumLength": 50}}),
    "date": set_format({"type": "date", "minimumDate": "2000-01-01", "maximumDate": "2030-12-31", "defaultDate": "2026-01-01"}),
    "dateTime": set_format({"type": "date", "style": "dateTime", "minimumDate": "2026-01-01T08:00:00Z",
                            "maximumDate": "2026-12-31T18:00:00+02:00", "minuteInterval": 30}),
    "timeOfDay": set_format({"type": "timeOfDay", "defaultComponents": "08:30", "minuteInterval": 15}),
    "timeInterval": set_format({"type": "timeInterval", "step": 5, "maximumInterval": 7200, "defaultInterval": 600}),
    "location": set_format({"type": "location", "useCurrentLocation": False, "placeholder": "Where?"}),
    "height": set_format({"type": "height", "measurementSystem": "metric", "minimumValue": 50, "maximumValue": 250, "defaultValue": 170}),
    "weight": set_format({"type": "weight", "measurementSystem": "USC", "numericPrecision": "high", "defaultValue": 70}),
    "age": set_format({"type": "age", "minimumAge": 18, "maximumAge": 99, "defaultValue": 40, "relativeYear": 2026, "showYear": True,
                       "minimumAgeCustomText": "Under 18", "treatMinAgeAsRange": True}),
    "ses": set_format({"type": "ses", "topRungText": "Best off", "bottomRungText": "Worst off"}),
    "direct rule to a section": rule({"type": "direct", "destination": "s"}),
    "rule on a section": rule({"type": "direct", "destination": "$end"}, key="s"),
    "predicate rule with no branches": rule({"type": "predicate", "branches": []}),
    "all any not always": when({"all": [{"any": [{"result": "q", "contains": "headache"}, {"always": False}]},
                                        {"not": {"result": "q", "answered": False}}, {"all": []}, {"any": []}]}),
    "every operator": when({"all": [
        {"result": "q", "answered": True, "dontKnow": False},
        {"result": "q", "equals": "headache"}, {"result": "q", "notEquals": ["dizziness"]},
        {"result": "q", "contains": ["headache"], "containsAny": ["headache", "dizziness"], "matches": "^head"},
        {"result": "n", "minimum": 1, "maximum": 9, "exclusiveMinimum": 0, "exclusiveMaximum": 10},
        {"result": {"step": "f", "item": "a"}, "minimum": 18},
        {"result": {"task": "earlier", "step": "n"}, "equals": 3}]}),
    "skip rule and modifier": lambda t: t.update(
        skipRules={"s": {"result": "n", "minimum": 3}},
        stepModifiers={"done": {"when": {"always": True}, "set": {"title": "T", "text": "x", "detailText": "d", "footnote": "f",
                                                                 "image": "i", "placeholder": "p", "question": "q"}}}),
    "active steps": lambda t: t["steps"][1:1].extend([
        {"type": "countdown", "identifier": "c"},
        {"type": "active", "identifier": "walk", "title": "Walk", "stepDuration": 30, "shouldStartTimerAutomatically": True,
         "shouldContinueOnFinish": True, "shouldSpeakCountDown": True, "shouldSpeakRemainingTimeAtHalfway": True,
         "spokenInstruction": "Walk", "finishedSpokenInstruction": "Stop", "shouldPlaySoundOnStart": True, "shouldVibrateOnFinish": True,
         "shouldShowDefaultTimer": False, "shouldUseNextAsSkipButton": False, "image": "walk.png",
         "recorderConfigurations": [{"type": "accelerometer", "identifier": "acc", "frequency": 100},
                                    {"type": "healthQuantity", "identifier": "hr", "quantityType": "heartRate", "unit": "count/min"}]},
        {"type": "wait", "identifier": "w", "indicatorType": "activityIndicator"}]),
    "async action": lambda t: t.update(asyncActions=[{"type": "location", "identifier": "gps", "startStepIdentifier": "intro",
                                                      "stopStepIdentifier": "f"}]),
    "visibleWhen": lambda t: step(t, "f")["formItems"][2].update(visibleWhen={"result": {"step": "f", "item": "a"}, "maximum": 30}),
    "page and review steps": lambda t: t["steps"][-1:-1].extend([
        {"type": "page", "identifier": "pg", "title": "About you", "validations": [], "steps": [
            {"type": "instruction", "identifier": "pi", "title": "On one page", "text": "All of these."},
            {"type": "question", "identifier": "pa", "question": "Age", "answerFormat": {"type": "numeric", "style": "integer"}},
            {"type": "question", "identifier": "pb", "title": "Smoker?", "optional": True, "answerFormat": {"type": "boolean"},
             "visibleWhen": {"result": {"step": "pg", "item": "pa"}, "minimum": 18}}]},
        {"type": "review", "identifier": "rv", "title": "Your answers"}]),
}


def mutated(mutation: Mutation) -> Dict[str, Any]:
    definition = base()
    mutation(definition)
    return definition


@pytest.mark.parametrize("name", list(COUNTER_EXAMPLES))
def test_counter_example_refused_by_schema_and_engine(name):
    definition = mutated(COUNTER_EXAMPLES[name])
    assert schema_errors(TASK, definition), f"the schema accepts the counter-example {name!r}"
    accepted, _ = engine_accepts(definition)
    assert not accepted, f"the engine accepts the counter-example {name!r}"


@pytest.mark.parametrize("name", list(EXAMPLES_BOTH_ACCEPT))
def test_example_accepted_by_schema_and_engine(name):
    definition = mutated(EXAMPLES_BOTH_ACCEPT[name])
    assert schema_errors(TASK, definition) == []
    assert engine_accepts(definition) == (True, "")


def test_counter_examples_are_one_mutation_from_a_valid_task():
    assert engine_accepts(base()) == (True, "")
    assert schema_errors(TASK, base()) == []


# ------------------------------------------------------------------------------------------------
# The schemas' own examples


TASK_SCHEMA = load_json(SCHEMA_DIR / "task.schema.json")


def def_validator(schema: Dict[str, Any], name: str) -> Any:
    return jsonschema.Draft202012Validator({"$defs": schema["$defs"], "$ref": f"#/$defs/{name}"})


def test_schema_root_example_compiles():
    assert TASK_SCHEMA["examples"]
    for example in TASK_SCHEMA["examples"]:
        assert schema_errors(TASK, example) == []
        assert engine_accepts(example) == (True, "")


FORMAT_DEFS = sorted(name for name in TASK_SCHEMA["$defs"] if name.startswith("format."))


@pytest.mark.parametrize("name", FORMAT_DEFS)
def test_schema_format_examples_compile_and_take_the_answer_examples(name):
    kind = name.split(".", 1)[1]
    formats = TASK_SCHEMA["$defs"][name]["examples"]
    answers = ANSWER_SCHEMA["$defs"][kind]["examples"]
    assert formats and answers
    for fmt in formats:
        assert schema_errors(def_validator(TASK_SCHEMA, "answerFormat"), fmt) == []
        if kind == "confirmText":
            step = {"type": "form", "identifier": "q", "formItems": [
                {"identifier": "email", "text": "Email", "answerFormat": {"type": "email"}},
                {"identifier": "again", "text": "Again", "answerFormat": fmt}]}
        else:
            step = {"type": "question", "identifier": "q", "answerFormat": fmt}
        definition = {"identifier": "example", "steps": [step]}
        assert schema_errors(TASK, definition) == []
        assert engine_accepts(definition) == (True, "")
        with stepkit.Task.from_json(definition) as task, task.open() as session:
            for answer in answers:
                assert schema_errors(answer_validator(kind), answer) == []
                if kind == "confirmText":
                    session.set_answer({"email": answer, "again": answer})
                else:
                    session.set_answer(answer)


@pytest.mark.parametrize("name, where", [("predicate", "branch"), ("predicate", "skipRule"), ("predicate", "visibleWhen"),
                                         ("navigationRule", "rule")])
def test_schema_rule_examples_compile(name, where):
    examples = TASK_SCHEMA["$defs"][name]["examples"]
    assert examples
    for example in examples:
        assert schema_errors(def_validator(TASK_SCHEMA, name), example) == []
        definition = copy.deepcopy(TASK_SCHEMA["examples"][0])
        if where == "branch":
            definition["navigationRules"]["severity"] = {"type": "predicate", "branches": [{"when": example, "destination": "done"}]}
        elif where == "skipRule":
            definition["skipRules"]["done"] = example
        elif where == "visibleWhen":
            definition["steps"][4]["formItems"][2]["visibleWhen"] = example
        else:
            definition["navigationRules"]["severity"] = example
        assert schema_errors(TASK, definition) == [], example
        assert engine_accepts(definition) == (True, ""), example


# ------------------------------------------------------------------------------------------------
# Results and answers of real walks


def walk(path, tmp_path) -> Tuple[stepkit.Session, List[Dict[str, Any]]]:
    """Walks an example with its answers file, through the CLI's walk (active steps run to
    their end on a manual clock, with simulated recorder samples); returns the session and the
    result after every move."""
    answers = load_json(path.with_name(path.stem + ".answers.json"))
    task = stepkit.Task.from_file(path)
    session = task.open({"taskRunUUID": RUN_UUID, "outputDirectory": str(tmp_path)})
    results = [session.result]
    runner = ActiveRunner(quiet=True, out=io.StringIO(), clock=stepkit.ManualClock(START_MS))
    with runner.attach(session):
        walk_with_answers(session, answers, io.StringIO(), quiet=True, runner=runner,
                          on_move=lambda state: results.append(session.result))
    assert session.state["finishReason"] == "completed"
    return session, results


@pytest.mark.parametrize("path", EXAMPLE_TASKS, ids=lambda p: p.stem)
def test_results_of_walks_validate(path, tmp_path):
    session, results = walk(path, tmp_path)
    with session:
        for result in results:
            assert schema_errors(RESULT, result) == []
        assert results[-1]["results"], "a completed walk has step results"


def test_result_schema_nests_sections(tmp_path):
    session, results = walk(EXAMPLES / "headache.json", tmp_path)
    session.close()
    final = results[-1]
    section = next(r for r in final["results"] if r["identifier"] == "headacheDetails")
    assert [r["identifier"] for r in section["results"]] == ["pain", "onset", "aura"]
    assert schema_errors(RESULT, final) == []
    broken = copy.deepcopy(final)
    broken["results"][1]["results"][0]["answer"] = "headache"  # a choice answer is an array
    assert schema_errors(RESULT, broken)
    broken = copy.deepcopy(final)
    broken["results"][0]["colour"] = 1
    assert schema_errors(RESULT, broken)


def _formats(definition: Dict[str, Any]) -> Dict[str, Any]:
    """step identifier -> answer format type, or {item: type} for a form."""
    found: Dict[str, Any] = {}

    def visit(steps: List[Dict[str, Any]]) -> None:
        for s in steps:
            if s["type"] == "section" and "repeat" in s:
                # A repeating section: answered per instance ([{step: answer}, ...], the
                # answers-file format of examples/tasks/README.md), each step by its format.
                inner = _formats({"steps": s["steps"]})
                found[s["identifier"]] = ("section", inner)
                found.update(inner)
            elif s["type"] == "section":
                visit(s["steps"])
            elif s["type"] == "question":
                found[s["identifier"]] = s["answerFormat"]["type"]
            elif s["type"] == "form":
                # A repeating group: {item: type} of its items, each instance checked by them.
                found[s["identifier"]] = {
                    i["identifier"]: ({g["identifier"]: g["answerFormat"]["type"] for g in i["items"]} if "items" in i
                                      else i["answerFormat"]["type"])
                    for i in s["formItems"] if "identifier" in i}
            elif s["type"] == "page":
                # A page's answer is {sub-step: answer}, one per question sub-step.
                found[s["identifier"]] = {q["identifier"]: q["answerFormat"]["type"]
                                          for q in s["steps"] if q["type"] == "question"}
            elif s["type"] == "consentReview":
                found[s["identifier"]] = {"consented": "boolean", "givenName": "text", "familyName": "text"}
            elif s["type"] in ("signature", "imageCapture", "table", "webView", "videoInstruction", "pdfViewer", "requestPermissions"):
                found[s["identifier"]] = s["type"]  # the host's report (answer.schema.json)

    visit(definition["steps"])
    return found


@pytest.mark.parametrize("path", EXAMPLE_TASKS, ids=lambda p: p.stem)
def test_answers_files_validate_per_format(path):
    answers = load_json(path.with_name(path.stem + ".answers.json"))
    formats = _formats(load_json(path))
    checked = 0
    for identifier, answer in answers.items():
        kind = formats[identifier]
        if isinstance(kind, tuple):  # a repeating section: one object of step answers per instance
            assert isinstance(answer, list) and answer, identifier
            for instance in answer:
                for step, v in instance.items():
                    assert schema_errors(ANSWER, v) == [] and schema_errors(answer_validator(kind[1][step]), v) == [], (identifier, step)
                    checked += 1
            continue
        assert schema_errors(ANSWER, answer) == []
        if isinstance(kind, dict):
            for item, value in answer.items():
                if isinstance(kind[item], dict):
                    for instance in value:
                        for inner, v in instance.items():
                            assert schema_errors(answer_validator(kind[item][inner]), v) == [], (identifier, item, inner)
                            checked += 1
                    continue
                assert schema_errors(answer_validator(kind[item]), value) == [], (identifier, item)
                checked += 1
        else:
            assert schema_errors(answer_validator(kind), answer) == [], identifier
            checked += 1
    assert checked > 0 or not formats


def test_result_with_recorder_files_validates(tmp_path):
    session, results = walk(EXAMPLES / "short-walk.json", tmp_path)
    with session:
        final = results[-1]
        files = [r for step in final["results"] for r in step["results"] if r.get("type") == "file"]
        assert files, "the walk recorded files"
        assert "asyncResults" in final  # the task has asyncActions
        assert schema_errors(RESULT, final) == []
        if hasattr(session, "save"):
            assert schema_errors(_validator("restoration.schema.json"), json.loads(session.save())) == []


def test_restoration_data_of_an_active_step_validates(tmp_path):
    if not hasattr(stepkit.Session, "save"):
        pytest.skip("the Python binding has no Session.save() yet (restoration data cannot be produced from Python)")
    restoration = _validator("restoration.schema.json")
    task = stepkit.Task.from_file(EXAMPLES / "short-walk.json")
    with task.open({"taskRunUUID": RUN_UUID, "outputDirectory": str(tmp_path)}) as session:
        session.set_clock(stepkit.ManualClock(START_MS))
        state = session.forward()  # from the intro to the countdown, which starts by itself
        assert state["step"]["identifier"] == "countdown" and state["active"] is not None
        saved = json.loads(session.save())
        assert any("active" in visit for visit in saved["path"])
        assert schema_errors(restoration, saved) == []


@pytest.mark.parametrize(
    "format_type, answer",
    [("boolean", "yes"), ("scale", 2.5), ("textChoice", "headache"), ("timeOfDay", "8:30"), ("date", "22.11.2026"),
     ("location", {"latitude": 91, "longitude": 0}), ("ses", 10), ("multipleValuePicker", ["a"]), ("text", 3)],
)
def test_answer_schema_refuses_wrong_shapes(format_type, answer):
    assert schema_errors(answer_validator(format_type), answer)


# ------------------------------------------------------------------------------------------------
# Restoration data


def test_restoration_data_validates(tmp_path):
    if not hasattr(stepkit.Session, "save"):
        pytest.skip("the Python binding has no Session.save() yet (restoration data cannot be produced from Python)")
    restoration = _validator("restoration.schema.json")
    session, _ = walk(EXAMPLES / "headache.json", tmp_path)
    with session:
        saved = json.loads(session.save())
        assert schema_errors(restoration, saved) == []
    task = stepkit.Task.from_file(EXAMPLES / "medications.json")
    with task.open({"taskRunUUID": RUN_UUID}) as fresh:
        assert schema_errors(restoration, json.loads(fresh.save())) == []


# ------------------------------------------------------------------------------------------------
# docs/reference.md: every example there compiles, validates and is accepted


REFERENCE = REPO / "docs" / "reference.md"


def reference_blocks() -> List[Tuple[str, Any]]:
    import re

    text = REFERENCE.read_text(encoding="utf-8")
    return [(kind, json.loads(body)) for kind, body in re.findall(r"```json (\w+)\n(.*?)```", text, re.S)]


def test_reference_examples():
    blocks = reference_blocks()
    kinds = [kind for kind, _ in blocks]
    for kind in ("task", "step", "format", "answer", "predicate", "result"):
        assert kind in kinds, f"docs/reference.md has no {kind} example"
    operators_task = next(value for kind, value in blocks if kind == "task" and value["identifier"] == "operators")
    last_format: Any = None
    last_task: Any = None
    formats_seen = set()
    operators_seen = set()
    for kind, value in blocks:
        if kind == "task":
            definition = value
            last_task = value
        elif kind == "info":
            # The task info of the task above it: the engine's, and its fingerprint the SHA-256
            # of that definition's canonical form (keys sorted, compact, whole numbers as
            # integers: the example has no other numbers), worked out here without the engine.
            assert last_task is not None, "an info example needs a task example before it"
            canonical = json.dumps(last_task, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
            assert value["fingerprint"] == hashlib.sha256(canonical.encode("utf-8")).hexdigest()
            assert stepkit.Task.from_json(last_task).info == value
            continue
        elif kind == "step":
            definition = {"identifier": "ref", "steps": [value]}
        elif kind == "format":
            last_format = value
            formats_seen.add(value["type"])
            definition = {"identifier": "ref", "steps": [{"type": "question", "identifier": "q", "answerFormat": value}]}
        elif kind == "predicate":
            definition = copy.deepcopy(operators_task)
            definition["navigationRules"]["about"]["branches"] = [{"when": value, "destination": "done"}]
            operators_seen.update(_operators(value))
        elif kind == "answer":
            assert last_format is not None, "an answer example needs a format example before it"
            assert schema_errors(answer_validator(last_format["type"]), value) == [], (last_format, value)
            task = stepkit.Task.from_json({"identifier": "ref", "steps": [
                {"type": "question", "identifier": "q", "answerFormat": last_format}]})
            with task.open() as session:
                session.set_answer(value)  # raises AnswerError if the engine refuses it
            continue
        elif kind == "result":
            assert schema_errors(RESULT, value) == []
            continue
        else:
            raise AssertionError(f"unknown example kind {kind!r} in docs/reference.md")
        assert schema_errors(TASK, definition) == [], (kind, value)
        assert engine_accepts(definition) == (True, ""), (kind, value)
    # One example per answer format (confirmText is in the form example) and per operator.
    # The reports of the steps the host reports and the consent review's answer are not formats.
    reports = {"signature", "imageCapture", "table", "webView", "videoInstruction", "pdfViewer", "requestPermissions", "consentReview"}
    every_format = set(ANSWER_SCHEMA["$defs"]) - {"dontKnow", "formAnswer", "repeatingAnswer"} - reports
    assert every_format - formats_seen == {"confirmText"}
    assert operators_seen >= {"answered", "dontKnow", "equals", "notEquals", "contains", "containsAny", "matches",
                              "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "all", "any", "not", "always"}


def _operators(p: Any) -> List[str]:
    if not isinstance(p, dict):
        return []
    found = [k for k in p if k != "result"]
    for key in ("all", "any"):
        for inner in p.get(key, []) if isinstance(p.get(key), list) else []:
            found += _operators(inner)
    if isinstance(p.get("not"), dict):
        found += _operators(p["not"])
    return found
