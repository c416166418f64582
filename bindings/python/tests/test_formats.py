"""Every answer format through the binding: answer JSON in, question result type out."""

from __future__ import annotations

import pytest

import stepkit

FORMATS = {
    "boolean": ({"type": "boolean"}, True, "boolean", None),
    "scale": ({"type": "scale", "minimum": 0, "maximum": 10, "step": 2}, 4, "scale", None),
    "continuous": (
        {"type": "continuousScale", "minimum": 0, "maximum": 1, "maximumFractionDigits": 2},
        0.25,
        "scale",
        None,
    ),
    "textScale": (
        {"type": "textScale", "textChoices": [{"text": "A", "value": "a"}, {"text": "B", "value": "b"}]},
        ["b"],
        "choice",
        None,
    ),
    "textChoice": (
        {
            "type": "textChoice",
            "style": "multipleChoice",
            "textChoices": [{"text": "A", "value": "a"}, {"text": "Two", "value": 2}],
        },
        ["a", 2],
        "choice",
        None,
    ),
    "imageChoice": ({"type": "imageChoice", "imageChoices": [{"text": "X", "value": "x"}]}, ["x"], "choice", None),
    "valuePicker": ({"type": "valuePicker", "textChoices": [{"text": "X", "value": "x"}]}, ["x"], "choice", None),
    "multipleValuePicker": (
        {
            "type": "multipleValuePicker",
            "valuePickers": [
                {"type": "valuePicker", "textChoices": [{"text": "X", "value": "x"}]},
                {"type": "valuePicker", "textChoices": [{"text": "1", "value": 1}]},
            ],
        },
        ["x", 1],
        "multipleComponent",
        None,
    ),
    "numeric": ({"type": "numeric", "style": "decimal", "unit": "kg"}, 1.5, "numeric", "kg"),
    "timeOfDay": ({"type": "timeOfDay"}, "08:30", "timeOfDay", None),
    "date": ({"type": "date"}, "2026-11-22", "date", None),
    "dateTime": ({"type": "date", "style": "dateTime"}, "2026-11-22T10:00:00+02:00", "date", None),
    "timeInterval": ({"type": "timeInterval"}, 3600, "timeInterval", None),
    "text": ({"type": "text"}, "hello ✓", "text", None),
    "email": ({"type": "email"}, "a@b.co", "text", None),
    "location": ({"type": "location"}, {"latitude": 1.5, "longitude": 2.5}, "location", None),
    "height": ({"type": "height"}, 180, "numeric", "cm"),
    "weight": ({"type": "weight"}, 70, "numeric", "kg"),
    "age": ({"type": "age"}, 30, "numeric", "years"),
    "ses": ({"type": "ses"}, 5, "ses", None),
    "dontKnow": (
        {"type": "numeric", "style": "integer", "showDontKnowButton": True},
        {"dontKnow": True},
        "numeric",
        None,
    ),
}


@pytest.mark.parametrize("name", list(FORMATS))
def test_answer_format_result(name):
    fmt, answer, result_type, unit = FORMATS[name]
    definition = {"identifier": "f", "steps": [{"type": "question", "identifier": "q", "answerFormat": fmt}]}
    with stepkit.Task.from_json(definition) as task, task.open() as session:
        session.set_clock(stepkit.ManualClock(1767225600000))
        state = session.set_answer(answer)
        assert state["answer"] == answer
        assert state["step"]["answerFormat"]["type"] == fmt["type"]
        state = session.forward()
        assert state["finishReason"] == "completed"
        question = session.result["results"][0]["results"][0]
        assert question["identifier"] == "q"
        assert question["type"] == result_type
        assert question["answer"] == answer
        assert question["startDate"] == "2026-01-01T00:00:00.000Z"
        if unit is not None:
            assert question["unit"] == unit


CHOICES = {
    "identifier": "c",
    "steps": [
        {
            "type": "question",
            "identifier": "q",
            "answerFormat": {
                "type": "textChoice",
                "style": "multipleChoice",
                "textChoices": [
                    {"text": "A", "value": "a"},
                    {"text": "B", "value": "b"},
                    {"text": "Other", "value": "other", "other": True},
                    {"text": "None", "value": "none", "exclusive": True},
                ],
            },
        }
    ],
}


def test_exclusive_choice_rules():
    with stepkit.Task.from_json(CHOICES) as task, task.open() as session:
        assert session.set_answer(["a", "b"])["answer"] == ["a", "b"]
        assert session.set_answer(["a", "b", "none"])["answer"] == ["none"]  # newly exclusive
        assert session.set_answer(["none", "a"])["answer"] == ["a"]  # newly next to exclusive
        session.set_answer(None)
        with pytest.raises(stepkit.AnswerError):
            session.set_answer(["a", "none"])  # newly selects both
        with pytest.raises(stepkit.AnswerError):
            session.set_answer(["a", "a"])  # not distinct


def test_other_choice_with_text():
    with stepkit.Task.from_json(CHOICES) as task, task.open() as session:
        answer = ["a", {"value": "other", "text": "Typed ✓"}]
        assert session.set_answer(answer)["answer"] == answer
        session.forward()
        assert session.result["results"][0]["results"][0]["answer"] == answer


def test_dont_know_refused_without_button():
    definition = {
        "identifier": "f",
        "steps": [{"type": "question", "identifier": "q", "answerFormat": {"type": "numeric", "style": "integer"}}],
    }
    with stepkit.Task.from_json(definition) as task, task.open() as session:
        with pytest.raises(stepkit.AnswerError):
            session.set_answer({"dontKnow": True})


def test_health_survey_result_types():
    from conftest import EXAMPLES, load_json

    path = EXAMPLES / "health-survey.json"
    answers_path = EXAMPLES / "health-survey.answers.json"
    if not path.exists() or not answers_path.exists():
        pytest.skip("examples/tasks/health-survey.json is not there yet")
    answers = load_json(answers_path)
    with stepkit.Task.from_file(path) as task, task.open() as session:
        while session.state["status"] == "inProgress":
            state = session.state
            step = state["step"]
            if step["identifier"] in answers:
                session.set_answer(answers[step["identifier"]])
                session.forward()
            elif step.get("optional"):
                session.skip()
            else:
                session.forward()
        types = {
            q["identifier"]: q["type"]
            for s in session.result["results"]
            for q in s["results"]
        }
    assert types["general_health"] == "choice"
    assert types["activity_limited"] == "boolean"
    assert types["pain_today"] == "scale"
    assert types["energy_level"] == "scale"
    assert types["exercise_routine"] == "multipleComponent"
    assert types["resting_heart_rate"] == "numeric"
    assert types["social_ladder"] == "ses"
    assert types["home_location"] == "location"
    assert types["comments"] == "text"


def test_confirm_text_form_is_checked_when_leaving():
    definition = {
        "identifier": "c",
        "steps": [
            {
                "type": "form",
                "identifier": "contact",
                "formItems": [
                    {"identifier": "email", "text": "Email", "answerFormat": {"type": "email"}},
                    {
                        "identifier": "again",
                        "text": "Again",
                        "answerFormat": {"type": "confirmText", "originalItemIdentifier": "email"},
                    },
                ],
            }
        ],
    }
    with stepkit.Task.from_json(definition) as task, task.open() as session:
        session.set_answer({"email": "a@b.co", "again": "a@b.co"})
        state = session.set_answer({"email": "x@y.co"})  # the original changes afterwards
        assert any(p["path"] == "again" for p in state["problems"])
        before = session.state
        with pytest.raises(stepkit.StateError) as info:
            session.forward()
        assert info.value.path == "again"
        with pytest.raises(stepkit.StateError):
            session.finish("completed")
        assert session.state == before
        session.set_answer({"again": "x@y.co"})
        assert session.forward()["finishReason"] == "completed"


# ------------------------------------------------------------------------------------------------
# The effective answer format: the state's step carries every default the engine applies

CHOICES_AB = [{"text": "A", "value": "a"}, {"text": "B", "value": "b"}]

#: A format that leaves its settings out -> what the state must give for them.
DEFAULTS = [
    ({"type": "boolean"}, {"showDontKnowButton": False}),
    ({"type": "scale", "minimum": 0, "maximum": 10}, {"step": 1}),
    ({"type": "continuousScale", "minimum": 0, "maximum": 1}, {"maximumFractionDigits": 0}),
    ({"type": "textChoice", "style": "multipleChoice", "textChoices": CHOICES_AB}, {"style": "multipleChoice"}),
    ({"type": "imageChoice", "imageChoices": [{"value": "sun", "normalImage": "sun.png"}]}, {"style": "singleChoice"}),
    ({"type": "textScale", "textChoices": CHOICES_AB}, {"style": "singleChoice"}),
    ({"type": "valuePicker", "textChoices": CHOICES_AB}, {"style": "singleChoice"}),
    ({"type": "height"}, {"minimumValue": 0, "maximumValue": 300, "unit": "cm"}),
    ({"type": "weight"}, {"minimumValue": 0, "maximumValue": 657, "unit": "kg"}),
    ({"type": "age"}, {"minimumAge": 0, "maximumAge": 125, "unit": "years"}),
    ({"type": "ses"}, {"minimum": 0, "maximum": 9}),
    ({"type": "timeInterval"}, {"maximumInterval": 86340, "step": 1, "unit": "s"}),
    ({"type": "text"}, {"maximumLength": 0, "multipleLines": True}),
    ({"type": "date"}, {"style": "date", "minuteInterval": 1}),
    ({"type": "timeOfDay"}, {"minuteInterval": 1}),
]


@pytest.mark.parametrize("fmt, filled", DEFAULTS, ids=[f["type"] for f, _ in DEFAULTS])
def test_the_state_gives_the_effective_answer_format(fmt, filled):
    definition = {"identifier": "d", "steps": [{"type": "question", "identifier": "q", "answerFormat": fmt}]}
    with stepkit.Task.from_json(definition) as task, task.open() as session:
        shown = session.state["step"]["answerFormat"]
    assert {key: shown.get(key) for key in filled} == filled
    assert {key: shown[key] for key in fmt} == fmt  # what the definition says is kept as it is


def test_defaults_the_definition_gives_are_kept_and_the_bounds_are_the_engines():
    fmt = {"type": "age", "minimumAge": 18, "showDontKnowButton": True}
    definition = {"identifier": "d", "steps": [{"type": "question", "identifier": "q", "answerFormat": fmt}]}
    with stepkit.Task.from_json(definition) as task, task.open() as session:
        shown = session.state["step"]["answerFormat"]
        assert (shown["minimumAge"], shown["maximumAge"], shown["showDontKnowButton"]) == (18, 125, True)
        session.set_answer(shown["maximumAge"])  # the bound the state gives is the engine's
        with pytest.raises(stepkit.AnswerError):
            session.set_answer(shown["maximumAge"] + 1)


def test_form_items_carry_their_effective_formats():
    definition = {"identifier": "d", "steps": [{"type": "form", "identifier": "f", "formItems": [
        {"sectionTitle": "Body"},
        {"identifier": "h", "text": "Height", "answerFormat": {"type": "height"}},
        {"identifier": "again", "answerFormat": {"type": "confirmText", "originalItemIdentifier": "n"}},
        {"identifier": "n", "answerFormat": {"type": "text"}},
    ]}]}
    with stepkit.Task.from_json(definition) as task, task.open() as session:
        items = session.state["step"]["formItems"]
    assert items[0] == {"sectionTitle": "Body"}
    assert items[1]["answerFormat"]["unit"] == "cm" and items[1]["answerFormat"]["maximumValue"] == 300
    assert items[2]["answerFormat"]["errorMessage"] == "The entries do not match."
    assert items[3]["answerFormat"]["maximumLength"] == 0


def test_task_info_gives_active_steps_their_effective_duration():
    definition = {"identifier": "d", "steps": [
        {"type": "countdown", "identifier": "c"},
        {"type": "active", "identifier": "a", "stepDuration": 12},
        {"type": "wait", "identifier": "w"},
        {"type": "instruction", "identifier": "i"},
    ]}
    with stepkit.Task.from_json(definition) as task:
        steps = task.info["steps"]
        with task.open() as session:
            assert session.state["step"]["stepDuration"] == 5
    assert [s.get("stepDuration") for s in steps] == [5, 12, 0, None]


def test_presenter_shows_what_the_engine_applies():
    from conftest import effective_format
    from stepkit.answer_input import describe_format
    from stepkit.rendering import render_answer

    height = effective_format({"type": "height"})
    assert "cm" in describe_format(height)[0] and "0 to 300" in describe_format(height)[0]
    assert render_answer(height, 172) == "172 cm"
    ses = effective_format({"type": "ses", "topRungText": "Best off"})
    assert "0 to 9" in describe_format(ses)[0] and "9 = Best off" in describe_format(ses)[0]
    interval = effective_format({"type": "timeInterval"})
    assert render_answer(interval, 5400) == "5400 s"
    # The presenter repeats no default: a format without them is shown without them.
    assert render_answer({"type": "height"}, 172) == "172"
