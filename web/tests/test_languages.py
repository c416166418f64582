"""A task in three languages in the browser (HTTP, as a browser without JavaScript posts
pages): the session opens in the language of the browser's Accept-Language, the language switch
(a button of the page's form) changes it keeping every answer, and a refused answer's message
reaches the participant in German or Spanish from the shipped catalogues, and in French from a
catalogue the host configured; bad input changes nothing and answers no 500."""

from __future__ import annotations

import json
import re

import pytest
import stepkit
from fastapi.testclient import TestClient

from conftest import API_KEY, AUTH, BASE, EXAMPLES, KEY
from stepkit_web import languages
from stepkit_web.app import create_app
from stepkit_web.walk import post_form

# The smallest task in three languages, shared with the binding's tests (examples/tasks/README.md).
TASK = json.loads((EXAMPLES / "fruit-languages.json").read_text(encoding="utf-8"))


def start(client, accept_language=None):
    """Registers the task, opens its open link as a browser would; the resume path."""
    r = client.post("/api/tasks", content=json.dumps(TASK), headers={"content-type": "application/json"})
    assert r.status_code in (200, 201), r.text
    invite = client.post("/api/tasks/fruit-survey/invites").json()["inviteUrl"].replace(BASE, "")
    headers = {"accept-language": accept_language} if accept_language else {}
    r = client.post(invite, headers={"content-type": "application/x-www-form-urlencoded", **headers},
                    content=b"", follow_redirects=False)
    assert r.status_code == 303, r.text
    return r.headers["location"]


def page_state(client, path):
    page = client.get(path)
    assert page.status_code == 200
    version = re.search(r'name="_version" value="(\d+)"', page.text).group(1)
    step = re.search(r'name="_step" value="([^"]+)"', page.text).group(1)
    return page.text, version, step


def post(client, path, *fields):
    _, version, step = page_state(client, path)
    return post_form(client, path, [("_version", version), ("_step", step), *fields])


def heading(html):
    return re.search(r"<h1>(.*?)</h1>", html).group(1)


def refusal(html):
    return re.search(r'<div class="error-summary".*?<li>(?:<a[^>]*>)?(.*?)(?:</a>)?</li>', html, re.S).group(1)


@pytest.mark.parametrize("header, title, lang", [
    ("de-AT,de;q=0.9,en;q=0.5", "Obst", "de"),
    ("fr-FR, es;q=0.8", "Fruta", "es"),   # no French texts nor messages: the next
    ("ja", "Fruit", "en"),                # none: the default
    (None, "Fruit", "en"),
])
def test_accept_language_picks_the_language(client, header, title, lang):
    html, _, _ = page_state(client, start(client, header))
    assert heading(html) == title
    assert f'<html lang="{lang}">' in html


def test_the_switch_keeps_every_answer_without_javascript(client):
    path = start(client, "es")
    html, _, _ = page_state(client, path)
    # The switch: one submit button per language, in the step's form, named in itself.
    assert 'value="language:de" lang="de">Deutsch</button>' in html
    assert 'value="language:es" lang="es" aria-pressed="true">Español</button>' in html
    # Choosing a language keeps the choice made on the page too (the draft is saved first).
    r = post(client, path, ("answer", "1"), ("action", "language:de"))
    assert r.status_code == 303
    html, _, _ = page_state(client, path)
    assert heading(html) == "Obst" and "Birne" in html
    assert re.search(r'<input[^>]*value="1"[^>]*checked', html), "the draft was lost"
    post(client, path, ("answer", "1"), ("action", "next"))
    post(client, path, ("answer", "40"), ("action", "language:es"))
    html, _, _ = page_state(client, path)
    assert heading(html) == "Edad" and 'value="40"' in html
    post(client, path, ("action", "back"))
    html, _, _ = page_state(client, path)
    assert heading(html) == "Fruta" and re.search(r'<input[^>]*value="1"[^>]*checked', html)


@pytest.mark.parametrize("header, message", [
    ("de", "Geben Sie eine ganze Zahl zwischen 18 und 90 ein."),
    ("es-MX", "Escriba un número entero entre 18 y 90."),
    ("en", "Enter a whole number between 18 and 90."),
])
def test_a_refusal_in_the_participants_language(client, header, message):
    path = start(client, header)
    post(client, path, ("answer", "0"), ("action", "next"))
    r = post(client, path, ("answer", "12"), ("action", "next"))
    assert r.status_code == 422
    assert refusal(r.text) == message


def test_a_refusal_from_the_hosts_catalogue(db_url, clock):
    catalogue = stepkit.message_catalogue("en")
    catalogue["number.wholeBetween"] = "Entrez un nombre entier entre {minimum} et {maximum}{unit}."
    app = create_app(db_url, KEY, api_key=API_KEY, base_url=BASE, clock=clock,
                     messages={"fr": catalogue})
    with TestClient(app, base_url=BASE, headers=AUTH) as client:
        path = start(client, "fr-CA, en;q=0.1")
        html, _, _ = page_state(client, path)
        assert heading(html) == "Fruit"  # the task has no French: its texts are English
        post(client, path, ("answer", "0"), ("action", "next"))
        r = post(client, path, ("answer", "12"), ("action", "next"))
        assert r.status_code == 422
        assert refusal(r.text) == "Entrez un nombre entier entre 18 et 90."


def test_a_host_catalogue_missing_an_argument_stops_the_service(db_url, clock):
    catalogue = stepkit.message_catalogue("en")
    catalogue["number.wholeBetween"] = "Entrez un nombre entier."
    with pytest.raises(stepkit.InvalidArgumentError):
        create_app(db_url, KEY, api_key=API_KEY, base_url=BASE, clock=clock, messages={"fr": catalogue})


@pytest.mark.parametrize("action", ["language:fr_FR", "language:", "language:" + "x" * 300])
def test_a_bad_language_changes_nothing(client, action):
    path = start(client, "de")
    before, version, _ = page_state(client, path)
    r = post(client, path, ("answer", "1"), ("action", action))
    assert r.status_code == 400
    after, version_after, _ = page_state(client, path)
    assert version_after == version and heading(after) == "Obst"
    assert not re.search(r'<input[^>]*value="1"[^>]*checked', after)


def test_api_sessions_take_a_language(client):
    client.post("/api/tasks", content=json.dumps(TASK), headers={"content-type": "application/json"})
    r = client.post("/api/tasks/fruit-survey/sessions", json={"options": {"language": "es"}})
    assert r.status_code == 201
    info = client.get(f"/api/sessions/{r.json()['session']}").json()
    assert info["state"]["step"]["title"] == "Fruta"
    r = client.post("/api/tasks/fruit-survey/sessions", json={"options": {"language": "e s"}})
    assert r.status_code == 400


def test_accept_language_parsing():
    assert languages.accepted("fr-CH, fr;q=0.9, en;q=0.8, de;q=0.7, *;q=0.5") == ["fr-CH", "fr", "en", "de"]
    assert languages.accepted("en;q=0, de;q=x, es;q=2, it") == ["it"]
    assert languages.choose("de-AT", ["en", "de"]) == "de-AT"
    assert languages.choose("pt-BR, ja", ["en", "de"]) is None
    assert languages.choose("pt-BR, de", ["en"], ["en", "de", "es"]) == "de"
    assert languages.choose("pt-BR, de", ["en"], ["en", "de", "pt"]) == "pt-BR"
    assert languages.choose(None, ["en"]) is None


# The example in three languages walked through the participant pages: the same result as the
# terminal presenter's (but for the languages it names), the pages in the session's language.

@pytest.mark.parametrize("language, title", [("en", "Evening check-in"), ("de", "Abendlicher Check-in"),
                                             ("es", "Registro de la tarde")])
def test_the_example_walks_in_the_browser_as_from_the_cli(client, tmp_path, language, title):
    import subprocess
    import sys

    from conftest import EXAMPLES, answers, example
    from stepkit_web.walk import strip_volatile, walk_http
    name = "multilingual-checkin"
    r = client.post("/api/tasks", content=example(name), headers={"content-type": "application/json"})
    assert r.status_code == 201, r.text
    options = {"language": language}
    if '"shuffle"' in example(name):
        options["seed"] = 20261127  # the CLI's reference walk below uses the same seed
    r = client.post(f"/api/tasks/{name}/sessions", json={"options": options})
    assert r.status_code == 201, r.text
    session_id, path = r.json()["session"], r.json()["resumeUrl"].replace(BASE, "")
    assert heading(page_state(client, path)[0]) == title
    result = walk_http(client, "", session_id, path, answers(name))
    assert result["languages"] == [language]

    def plain(value):
        value = strip_volatile(value)
        return {k: v for k, v in value.items() if k not in ("language", "languages")}
    out = tmp_path / "reference.json"
    seed = ["--seed", "20261127"] if "seed" in options else []
    subprocess.run([sys.executable, "-m", "stepkit", "run", str(EXAMPLES / f"{name}.json"), "--answers",
                    str(EXAMPLES / f"{name}.answers.json"), "--quiet", "--output", str(out), *seed],
                   check=True, capture_output=True, timeout=60)
    assert plain(result) == plain(json.loads(out.read_text()))
