"""Issue 13 from Python: messages an author meets, visibleWhen on form section headers and on
sections, and invalidMessage with %@ — all through the C ABI."""

from __future__ import annotations

import pytest

import stepkit
from stepkit import checker

FREQUENCY = {"type": "textChoice", "style": "singleChoice", "textChoices": [
    {"text": "Not at all", "value": 0}, {"text": "Several days", "value": 1}, {"text": "Most days", "value": 2}]}


def test_choice_errors_name_values_with_their_types():
    definition = {"identifier": "t", "steps": [
        {"type": "question", "identifier": "q", "answerFormat": FREQUENCY},
        {"type": "instruction", "identifier": "end"}],
        "skipRules": {"end": {"result": "q", "equals": "Several days"}}}
    with pytest.raises(stepkit.DefinitionError) as caught:
        stepkit.Task.from_json(definition)
    assert caught.value.errors[0]["message"] == \
        'The string "Several days" is not the value of any choice; the values are the numbers 0, 1, 2.'
    with stepkit.Task.from_json({"identifier": "t", "steps": [definition["steps"][0]]}) as task, task.open() as s:
        with pytest.raises(stepkit.AnswerError) as answer:
            s.set_answer(["2"])
        assert answer.value.message == 'The string "2" is not the value of any choice; the values are the numbers 0, 1, 2.'


def test_a_bare_item_identifier_says_how_to_write_the_selector():
    definition = {"identifier": "t", "steps": [
        {"type": "form", "identifier": "s1", "formItems": [{"identifier": "q1check", "answerFormat": {"type": "boolean"}}]},
        {"type": "instruction", "identifier": "end"}],
        "skipRules": {"end": {"result": "q1check", "equals": True}}}
    with pytest.raises(stepkit.DefinitionError) as caught:
        stepkit.Task.from_json(definition)
    assert caught.value.path == "skipRules.end.result"
    assert caught.value.message == \
        'No step is called "q1check"; it is an item of the form "s1": write {"step": "s1", "item": "q1check"}.'


def test_errors_about_form_items_carry_the_identifier():
    definition = {"identifier": "t", "steps": [
        {"type": "form", "identifier": "f", "formItems": [
            {"identifier": "/44250-9", "answerFormat": {"type": "numeric", "style": "integer", "minimum": 0, "maximum": 3}},
            {"identifier": "formItem03", "answerFormat": {"type": "boolean"}}]},
        {"type": "completion", "identifier": "done"}]}
    with stepkit.Task.from_json(definition) as task, task.open() as s:
        with pytest.raises(stepkit.AnswerError) as caught:
            s.set_answer({"/44250-9": 9, "formItem03": 1})
        assert [e["item"] for e in caught.value.errors] == ["/44250-9", "formItem03"]
        assert [e["path"] for e in caught.value.errors] == ['["/44250-9"]', "formItem03"]
        assert caught.value.error["item"] == "/44250-9"
        assert [p["item"] for p in s.state["problems"]] == ["/44250-9", "formItem03"]
        with pytest.raises(stepkit.StateError) as refused:
            s.forward()
        assert refused.value.error["item"] == "/44250-9"


def test_scale_limit_points_to_other_formats():
    with pytest.raises(stepkit.DefinitionError) as caught:
        stepkit.Task.from_json({"identifier": "t", "steps": [
            {"type": "question", "identifier": "q", "answerFormat": {"type": "scale", "minimum": 0, "maximum": 100}}]})
    assert '"continuousScale"' in caught.value.message and '"numeric"' in caught.value.message


def test_checker_accepts_terminal_steps_and_pages_with_different_items():
    def page(identifier, items):
        return {"type": "form", "identifier": identifier, "title": "Over the last two weeks", "formItems": [
            {"identifier": i, "text": i + "?", "answerFormat": {"type": "boolean"}} for i in items]}
    definition = {"identifier": "t", "steps": [
        {"type": "question", "identifier": "age", "answerFormat": {"type": "numeric", "style": "integer"}},
        {"type": "instruction", "identifier": "ineligible", "title": "Not for you", "terminal": True},
        page("p1", ["a", "b"]), page("p2", ["c", "d"]),
        {"type": "completion", "identifier": "done"}],
        "navigationRules": {
            "age": {"type": "predicate", "branches": [{"when": {"result": "age", "maximum": 17}, "destination": "ineligible"}],
                    "defaultDestination": "p1"},
            "ineligible": {"type": "direct", "destination": "$end"}}}
    with stepkit.Task.from_json(definition) as task:
        assert checker.check_task(task)["problems"] == []
    definition["steps"][1].pop("terminal")
    definition["steps"][3] = page("p2", ["a", "b"])
    with stepkit.Task.from_json(definition) as task:
        found = [(p["code"], p["path"]) for p in checker.check_task(task)["problems"]]
    assert found == [("endsBeforeCompletion", "navigationRules.ineligible.destination"), ("duplicateStepText", "steps[3]")]


def test_invalid_message_shows_the_typed_text():
    definition = {"identifier": "t", "steps": [{"type": "question", "identifier": "q", "answerFormat": {
        "type": "text", "validationRegularExpression": "^[A-Z]{2}[0-9]{4}$", "invalidMessage": '"%@" is not a code like AB1234.'}}]}
    with stepkit.Task.from_json(definition) as task, task.open() as s:
        with pytest.raises(stepkit.AnswerError) as caught:
            s.set_answer("ab12")
    assert caught.value.message == '"ab12" is not a code like AB1234.'


SCREENER = {"identifier": "v", "steps": [
    {"type": "form", "identifier": "f", "formItems": [
        {"identifier": "smokes", "answerFormat": {"type": "boolean"}},
        {"sectionTitle": "Smoking", "visibleWhen": {"result": {"step": "f", "item": "smokes"}, "equals": True}},
        {"identifier": "perDay", "answerFormat": {"type": "numeric", "style": "integer", "minimum": 1, "maximum": 100}},
        {"sectionTitle": "Everyone"},
        {"identifier": "sleep", "answerFormat": {"type": "numeric", "style": "integer"}}]},
    {"type": "section", "identifier": "smoking", "visibleWhen": {"result": {"step": "f", "item": "smokes"}, "equals": True},
     "steps": [{"type": "question", "identifier": "quit", "answerFormat": {"type": "boolean"}}]},
    {"type": "completion", "identifier": "done"}]}


def test_visible_when_on_headers_and_sections():
    with stepkit.Task.from_json(SCREENER) as task:
        with task.open() as s:
            assert s.state["visibleItems"] == ["smokes", "sleep"]
            state = s.set_answer({"smokes": True, "sleep": 7})
            assert state["visibleItems"] == ["smokes", "perDay", "sleep"]
            assert [p["item"] for p in state["problems"]] == ["perDay"]
            s.set_answer({"perDay": 10})
            assert s.forward()["step"]["identifier"] == "quit"
            saved = s.save()
        with task.restore(saved) as back:
            assert back.state["step"]["identifier"] == "quit"
        with task.open() as s:
            s.set_answer({"smokes": False, "perDay": 10, "sleep": 7})
            state = s.forward()
            assert state["step"]["identifier"] == "done"
            assert state["navigation"]["arrival"] == [{"skipped": "smoking", "by": "visibleWhen"}]
            s.forward()
            items = [r["identifier"] for r in s.result["results"][0]["results"]]
            assert "perDay" not in items and "sleep" in items
            saved = s.save()
        with task.restore(saved) as back:
            assert back.save() == saved


def test_validations_refuse_forward_and_completion():
    definition = {"identifier": "diary", "steps": [
        {"type": "form", "identifier": "night", "formItems": [
            {"identifier": "inBed", "answerFormat": {"type": "numeric", "style": "integer"}},
            {"identifier": "asleep", "answerFormat": {"type": "numeric", "style": "integer"}}],
         "validations": [{"when": {"all": [{"result": {"step": "night", "item": "asleep"}, "minimum": 9},
                                           {"result": {"step": "night", "item": "inBed"}, "maximum": 8}]},
                          "message": "You cannot sleep longer than you were in bed."}]},
        {"type": "question", "identifier": "nap", "optional": True, "answerFormat": {"type": "boolean"}}],
        "validations": [{"when": {"not": {"result": "nap", "answered": True}}, "message": "Tell us about naps."}]}
    with stepkit.Task.from_json(definition) as task, task.open() as s:
        state = s.set_answer({"inBed": 7, "asleep": 10})
        assert state["problems"] == [{"code": "validationFailed", "message": "You cannot sleep longer than you were in bed.", "path": ""}]
        assert state["navigation"]["canGoForward"] is False
        with pytest.raises(stepkit.StateError) as caught:
            s.forward()
        assert caught.value.errors[0]["code"] == "validationFailed"
        s.set_answer({"asleep": 6})
        assert s.forward()["problems"] == [{"code": "validationFailed", "message": "Tell us about naps.", "path": ""}]
        with pytest.raises(stepkit.StateError):
            s.finish("completed")
        s.set_answer(True)
        assert s.forward()["status"] == "finished"


def test_piping_resolves_in_the_state_and_refuses_unknown_names():
    definition = {"identifier": "p", "steps": [
        {"type": "question", "identifier": "name", "optional": True, "answerFormat": {"type": "text"}},
        {"type": "question", "identifier": "score", "answerFormat": {"type": "numeric", "style": "decimal"}},
        {"type": "instruction", "identifier": "summary", "title": "Thanks, {{who|friend}}", "text": "Half is {{half}}; \\{{x}}"}],
        "calculations": {"who": {"answer": "name"}, "half": {"/": [{"answer": "score"}, 2]}}}
    with stepkit.Task.from_json(definition) as task, task.open() as s:
        s.skip()
        s.set_answer(5)
        step = s.forward()["step"]
        assert step["title"] == "Thanks, friend"
        assert step["text"] == "Half is 2.5; {{x}}"
    definition["steps"][2]["title"] = "{{nobody}}"
    with pytest.raises(stepkit.DefinitionError) as caught:
        stepkit.Task.from_json(definition)
    assert caught.value.errors[0]["code"] == "unknownPlaceholder"
    assert caught.value.path == "steps[2].title"


def test_piping_shows_a_choice_answer_by_its_choices_texts():
    definition = {"identifier": "c", "steps": [
        {"type": "question", "identifier": "often", "answerFormat": {"type": "textScale", "textChoices": [
            {"text": "Not at all", "value": 0}, {"text": "Several days", "value": 1}, {"text": "Daily", "value": 2}]}},
        {"type": "instruction", "identifier": "echo", "title": "You said: {{often}}"}],
        "calculations": {"often": {"answer": "often"}}}
    with stepkit.Task.from_json(definition) as task, task.open() as s:
        s.set_answer([1])
        assert s.forward()["step"]["title"] == "You said: Several days"
        s.forward()
        assert s.result["calculations"] == {"often": [1]}
