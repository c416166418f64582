"""A task in several languages through the Python binding and the CLI: texts in the session's
language, switching mid-way keeping every answer, refusals in German and Spanish from the shipped
catalogues and in French from a catalogue the host supplies, and bad input refused with a clear
error that changes nothing."""

from __future__ import annotations

import json
import re

import pytest
import stepkit
from conftest import EXAMPLES, run_cli, write_json

# The smallest task in three languages, shared with the web service's tests (examples/tasks/README.md).
TASK = json.loads((EXAMPLES / "fruit-languages.json").read_text(encoding="utf-8"))


def refusal(session: stepkit.Session, answer) -> str:
    with pytest.raises(stepkit.AnswerError) as caught:
        session.set_answer(answer)
    return caught.value.message


def test_task_info_names_the_languages():
    info = stepkit.Task.from_json(TASK).info
    assert info["defaultLanguage"] == "en" and info["languages"] == ["en", "de", "es"]
    plain = stepkit.Task.from_json({"identifier": "t", "steps": [{"type": "instruction", "identifier": "i"}]})
    assert "languages" not in plain.info and "defaultLanguage" not in plain.info


def test_texts_in_the_sessions_language():
    task = stepkit.Task.from_json(TASK)
    with task.open({"language": "de-CH"}) as session:
        state = session.state
        assert state["step"]["title"] == "Obst"
        assert [c["text"] for c in state["step"]["answerFormat"]["textChoices"]] == ["Apfel", "Birne"]
        assert state["language"] == {"requested": "de-CH", "text": "de", "messages": "de",
                                     "used": ["de"], "available": ["en", "de", "es"]}
        assert session.set_language("es")["step"]["title"] == "Fruta"


def test_switching_mid_way_keeps_every_answer():
    task = stepkit.Task.from_json(TASK)
    with task.open({"language": "es"}) as session:
        session.set_clock(stepkit.ManualClock(1767225600000))  # the results' dates stay put
        session.set_answer(["pear"])
        session.go_forward()
        session.set_answer(40)
        before = session.result
        state = session.set_language("de")
        assert state["answer"] == 40 and state["step"]["title"] == "Alter"
        assert any(e["type"] == "languageDidChange" and e["language"] == "de" for e in state["events"])
        after = session.result
        assert after["results"] == before["results"]
        assert after["languages"] == ["es", "de"] and after["language"] == "de"
        back = session.go_backward()
        assert back["answer"] == ["pear"] and back["step"]["title"] == "Obst"


def test_refusals_in_german_and_spanish():
    task = stepkit.Task.from_json(TASK)
    with task.open({"language": "de"}) as session:
        assert refusal(session, ["apple", "apple"]) == '"Apfel" ist zweimal gewählt.'
        session.set_language("es")
        assert refusal(session, ["apple", "apple"]) == '"Manzana" está elegida dos veces.'
        session.set_answer(["apple"])
        session.go_forward()
        assert refusal(session, 12) == "Escriba un número entero entre 18 y 90."
        session.set_language("de")
        assert refusal(session, 12) == "Geben Sie eine ganze Zahl zwischen 18 und 90 ein."
        session.set_language("en")
        assert refusal(session, 12) == "Enter a whole number between 18 and 90."


def test_a_host_catalogue_for_another_language():
    catalogue = stepkit.message_catalogue("en")
    catalogue["choice.chosenTwice"] = "« {choice} » est choisi deux fois."
    task = stepkit.Task.from_json(TASK)
    with task.open({"language": "fr", "messages": {"fr": catalogue}}) as session:
        assert refusal(session, ["pear", "pear"]) == "« Pear » est choisi deux fois."
        assert session.state["language"]["messages"] == "fr"


@pytest.mark.parametrize("text, code", [
    ("Choisi deux fois.", "missingArgument"),
    ("{choice} {deux}", "unknownArgument"),
])
def test_a_catalogue_with_a_missing_or_extra_argument_opens_nothing(text, code):
    catalogue = stepkit.message_catalogue("en")
    catalogue["choice.chosenTwice"] = text
    task = stepkit.Task.from_json(TASK)
    with pytest.raises(stepkit.InvalidArgumentError) as caught:
        task.open({"language": "fr", "messages": {"fr": catalogue}})
    assert caught.value.errors[0]["code"] == code
    assert caught.value.path == 'messages.fr["choice.chosenTwice"]'


def test_a_catalogue_lacking_a_key_opens_nothing():
    catalogue = stepkit.message_catalogue("de")
    del catalogue["text.tooLong"]
    with pytest.raises(stepkit.InvalidArgumentError) as caught:
        stepkit.Task.from_json(TASK).open({"messages": {"de": catalogue}})
    assert caught.value.errors[0]["code"] == "missingMessage"


def _arguments(entry) -> set:
    forms = entry.values() if isinstance(entry, dict) else [entry]
    return {name for form in forms for name in re.findall(r"\{([A-Za-z0-9_]+)\}", form)}


@pytest.mark.parametrize("language", ["de", "es"])
def test_shipped_catalogues_have_every_key_and_argument(language):
    # Read independently of the engine's own check: the same keys as English, and in each
    # message the same named arguments.
    english = stepkit.message_catalogue("en")
    other = stepkit.message_catalogue(language)
    assert set(other) == set(english)
    for key, entry in english.items():
        assert _arguments(other[key]) == _arguments(entry), key
        assert isinstance(other[key], dict) == isinstance(entry, dict), key


@pytest.mark.parametrize("bad", ["", "f", "fr_CA", "en US", "français", "toolongtag"])
def test_a_tag_that_is_not_bcp47_changes_nothing(bad):
    task = stepkit.Task.from_json(TASK)
    with task.open({"language": "es"}) as session:
        session.set_clock(stepkit.ManualClock(1767225600000))  # the results' dates stay put
        session.set_answer(["pear"])
        before, saved = session.state, session.save()
        with pytest.raises(stepkit.InvalidArgumentError) as caught:
            session.set_language(bad)
        assert caught.value.code == "EINVAL" and caught.value.errors[0]["code"] == "invalidLanguage"
        assert session.state == before and session.save() == saved
    with pytest.raises(stepkit.InvalidArgumentError):
        task.open({"language": bad})


def test_message_catalogue_of_an_unknown_language():
    with pytest.raises(stepkit.InvalidArgumentError):
        stepkit.message_catalogue("fr")
    with pytest.raises(TypeError):
        stepkit.message_catalogue(None)  # type: ignore[arg-type]


def test_cli_lang(tmp_path):
    task = write_json(tmp_path / "lang.json", TASK)
    answers = write_json(tmp_path / "answers.json", {"fruit": ["pear"], "age": 40})
    results = {}
    for lang, title in [("de", "Obst"), ("es-MX", "Fruta"), ("en", "Fruit")]:
        proc = run_cli("run", str(task), "--answers", str(answers), "--lang", lang)
        assert proc.returncode == 0, proc.stderr
        assert title in proc.stdout
        proc = run_cli("run", str(task), "--answers", str(answers), "--lang", lang, "--quiet")
        results[lang] = json.loads(proc.stdout)
    answers_of = [[(r["identifier"], [x.get("answer") for x in r["results"]]) for r in res["results"]]
                  for res in results.values()]
    assert all(a == answers_of[0] for a in answers_of)
    assert [r["language"] for r in results.values()] == ["de", "es", "en"]
    proc = run_cli("run", str(task), "--answers", str(answers), "--lang", "fr_FR")
    assert proc.returncode != 0 and "BCP-47" in proc.stderr


def _translation(lang, text):
    return {"url": "http://hl7.org/fhir/StructureDefinition/translation",
            "extension": [{"url": "lang", "valueCode": lang}, {"url": "content", "valueString": text}]}


def test_fhir_translation_extension():
    questionnaire = {
        "resourceType": "Questionnaire", "id": "q", "language": "de",
        "item": [{"linkId": "ok", "type": "choice", "text": "Geht es Ihnen gut?",
                  "_text": {"extension": [_translation("es", "¿Está bien?")]},
                  "answerOption": [
                      {"valueCoding": {"code": "y", "display": "Ja",
                                       "_display": {"extension": [_translation("es", "Sí")]}}},
                      {"valueCoding": {"code": "n", "display": "Nein",
                                       "_display": {"extension": [_translation("es", "No")]}}}]}]}
    task = stepkit.Task.from_fhir(questionnaire)
    assert task.info["defaultLanguage"] == "de" and task.info["languages"] == ["de", "es"]
    with task.open({"language": "es"}) as session:
        step = session.state["step"]
        assert step["title"] == "¿Está bien?"
        assert [c["text"] for c in step["answerFormat"]["textChoices"]] == ["Sí", "No"]
        session.set_answer(["y"])
        # The response names the coding as the Questionnaire does, whatever the language.
        response = session.result_as("fhir")
        assert response["item"][0]["answer"][0]["valueCoding"]["code"] == "y"


def test_fhir_forms_with_translations_import_every_language():
    """The published forms that carry translation extensions, imported: each language they
    translate into is declared, and a session in it shows translated texts."""
    import os
    from pathlib import Path

    from conftest import REPO
    forms = Path(os.environ.get("STEPKIT_FHIR_FORMS") or (REPO.parent / "shared" / "fhir" / "q"))
    if not forms.is_dir():
        pytest.skip(f"the published FHIR forms are not here: {forms} is absent (set STEPKIT_FHIR_FORMS)")
    translated = [p for p in sorted(forms.glob("*.json"))
                  if "StructureDefinition/translation" in p.read_text(encoding="utf-8")]
    if not translated:
        pytest.skip(f"none of the published forms in {forms} carries a translation extension")
    for path in translated:
        text = path.read_text(encoding="utf-8")
        langs = set(re.findall(r'"url"\s*:\s*"lang"\s*,\s*"valueCode"\s*:\s*"([^"]+)"', text))
        task = stepkit.Task.from_fhir(json.loads(text))
        declared = set(task.info.get("languages", []))
        assert {t.lower() for t in langs} <= {d.lower() for d in declared}, path.name


# The example in three languages (examples/tasks/multilingual-checkin.json): the same walk, the
# same order of choices and the same result but for the texts in each language, from Python and
# from the CLI; switching language mid-way keeps every answer.

EXAMPLE = "multilingual-checkin"


def _walk(language, switch_to=None, seed=None):
    from conftest import example
    definition = json.loads(example(EXAMPLE).read_text(encoding="utf-8"))
    answers = json.loads(example(EXAMPLE).with_suffix("").with_suffix(".answers.json").read_text(encoding="utf-8"))
    task = stepkit.Task.from_json(definition)
    options = {"language": language, "taskRunUUID": "9f1c7a52-3b8e-4d2a-a1f0-6c2d4e8b9a10"}
    if seed is not None and '"shuffle"' in json.dumps(definition):
        options["seed"] = seed  # the same seed in every language: the same order
    orders, titles = [], []
    with task.open(options) as session:
        session.set_clock(stepkit.ManualClock(1767225600000))
        state = session.state
        while state["status"] != "finished":
            step = state["step"]
            titles.append(step["displayTitle"])
            choices = (step.get("answerFormat") or {}).get("textChoices")
            if choices:
                orders.append([c["value"] for c in choices])
            if step["identifier"] in answers:
                session.set_answer(answers[step["identifier"]])
            if switch_to and step["identifier"] == "sleep_hours":
                state = session.set_language(switch_to)
                assert state["answer"] == answers["sleep_hours"]
            state = session.go_forward()
        return session.result, orders, titles


def _without_languages(result):
    return {k: v for k, v in result.items() if k not in ("language", "languages")}


def test_the_example_walks_identically_in_each_language():
    walks = {lang: _walk(lang, seed=20261127) for lang in ("en", "de", "es")}
    results = {lang: w[0] for lang, w in walks.items()}
    assert _without_languages(results["de"]) == _without_languages(results["en"]) == _without_languages(results["es"])
    assert walks["de"][1] == walks["en"][1] == walks["es"][1]  # the same choices in the same order
    assert [w[2][0] for w in walks.values()] == ["Evening check-in", "Abendlicher Check-in", "Registro de la tarde"]
    assert [r["languages"] for r in results.values()] == [["en"], ["de"], ["es"]]
    # Switching in the middle keeps every answer: the same result as a walk in one language.
    switched, orders, _ = _walk("de", switch_to="es", seed=20261127)
    assert _without_languages(switched) == _without_languages(results["en"])
    assert orders == walks["en"][1] and switched["languages"] == ["de", "es"]


def test_the_example_walks_identically_from_the_cli(tmp_path):
    from conftest import example
    task = example(EXAMPLE)
    answers = task.with_suffix("").with_suffix(".answers.json")

    def stripped(value):
        if isinstance(value, dict):
            return {k: stripped(v) for k, v in value.items()
                    if k not in ("startDate", "endDate", "language", "languages", "timeSpent")}
        if isinstance(value, list):
            return [stripped(v) for v in value]
        return value

    seed = ["--seed", "20261127"] if '"shuffle"' in task.read_text(encoding="utf-8") else []
    results = {}
    for lang, title in [("en", "Evening check-in"), ("de", "Abendlicher Check-in"), ("es", "Registro de la tarde")]:
        proc = run_cli("run", str(task), "--answers", str(answers), "--lang", lang,
                       "--task-run-uuid", "9f1c7a52-3b8e-4d2a-a1f0-6c2d4e8b9a10", *seed)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.startswith(title)
        results[lang] = json.loads(proc.stdout[proc.stdout.index("\n{") + 1:])
        assert results[lang]["languages"] == [lang]
    assert stripped(results["de"]) == stripped(results["en"]) == stripped(results["es"])
