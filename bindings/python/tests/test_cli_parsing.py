"""The presenter's input parsing and answer rendering (pure Python helpers of the CLI)."""

from __future__ import annotations

import pytest

from conftest import effective_format
from stepkit.answer_input import InputError as _InputError
from stepkit.answer_input import describe_format, parse_input
from stepkit.answers_file import default_answers_path
from stepkit.rendering import render_answer

CHOICE = {
    "type": "textChoice",
    "style": "multipleChoice",
    "textChoices": [
        {"text": "Red", "value": "red"},
        {"text": "Two", "value": 2},
        {"text": "Other", "value": "other", "other": True},
    ],
}


def no_more(prompt):
    raise AssertionError("no further input expected")


@pytest.mark.parametrize(
    "fmt,text,expected",
    [
        ({"type": "boolean"}, "y", True),
        ({"type": "boolean"}, "No", False),
        ({"type": "boolean", "yesString": "Sure"}, "sure", True),
        ({"type": "scale"}, "7", 7),
        ({"type": "continuousScale"}, "6.5", 6.5),
        ({"type": "numeric", "style": "integer"}, "42", 42),
        ({"type": "numeric", "style": "integer"}, "42.0", 42),
        ({"type": "numeric", "style": "decimal"}, "1.25", 1.25),
        ({"type": "height"}, "172", 172),
        ({"type": "age"}, "30", 30),
        ({"type": "timeOfDay"}, "7:05", "07:05"),
        ({"type": "timeOfDay"}, "23:40", "23:40"),
        ({"type": "timeInterval"}, "1:30", 5400),
        ({"type": "timeInterval"}, "20m", 1200),
        ({"type": "date"}, " 2026-11-22 ", "2026-11-22"),
        ({"type": "text"}, "  spaced  ", "  spaced  "),
        ({"type": "location"}, "47.37, 8.54", {"latitude": 47.37, "longitude": 8.54}),
        ({"type": "numeric", "style": "integer", "showDontKnowButton": True}, "?", {"dontKnow": True}),
        (CHOICE, "1, 2", ["red", 2]),
        (CHOICE, "red", ["red"]),
        (
            {"type": "textScale", "textChoices": [{"text": "A", "value": 1}, {"text": "B", "value": 2}]},
            "2",
            [2],
        ),
        (
            {
                "type": "multipleValuePicker",
                "valuePickers": [
                    {"type": "valuePicker", "textChoices": [{"text": "x", "value": "x"}]},
                    {"type": "valuePicker", "textChoices": [{"text": "1", "value": 1}, {"text": "2", "value": 2}]},
                ],
            },
            "1, 2",
            ["x", 2],
        ),
    ],
)
def test_parse_input(fmt, text, expected):
    assert parse_input(fmt, text, no_more) == expected


def test_other_choice_asks_for_text():
    assert parse_input(CHOICE, "3", lambda prompt: "Purple") == [{"value": "other", "text": "Purple"}]
    assert parse_input(CHOICE, "3", lambda prompt: "") == ["other"]


@pytest.mark.parametrize(
    "fmt,text",
    [
        ({"type": "boolean"}, "maybe"),
        ({"type": "scale"}, "x"),
        ({"type": "numeric", "style": "integer"}, "4.5"),
        ({"type": "numeric", "style": "decimal"}, "nan"),
        ({"type": "timeOfDay"}, "noon"),
        ({"type": "location"}, "47.37"),
        (CHOICE, "9"),
        ({"type": "textChoice", "style": "singleChoice", "textChoices": [{"text": "A", "value": "a"}]}, "1,1"),
        ({"type": "numeric", "style": "integer"}, "?"),  # no don't-know button
    ],
)
def test_parse_input_refuses(fmt, text):
    with pytest.raises(_InputError):
        parse_input(fmt, text, no_more)


def test_render_answer():
    assert render_answer(CHOICE, ["red", {"value": "other", "text": "Purple"}]) == "Red, Other (Purple)"
    assert render_answer({"type": "boolean", "noString": "Nope"}, False) == "Nope"
    assert render_answer({"type": "numeric", "unit": "kg"}, 70) == "70 kg"
    assert render_answer(effective_format({"type": "height"}), 172) == "172 cm"
    assert render_answer({"type": "numeric", "customDontKnowButtonText": "No idea"}, {"dontKnow": True}) == "No idea"
    assert render_answer(None, None) == "(no answer)"


def test_describe_format_mentions_ranges_and_units():
    text = "\n".join(describe_format({"type": "numeric", "style": "integer", "minimum": 18, "maximum": 90, "unit": "years"}))
    assert "18" in text and "90" in text and "years" in text
    text = "\n".join(describe_format(CHOICE))
    assert "1) Red" in text and "3) Other" in text


def test_default_answers_path():
    assert default_answers_path("examples/tasks/daily-checkin.json") == "examples/tasks/daily-checkin.answers.json"
    assert default_answers_path("task") == "task.answers.json"
