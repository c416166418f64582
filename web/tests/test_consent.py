"""Consent in the participant pages (issue 34 part B): the onboarding example walked over HTTP
(as a browser without JavaScript posts it) and in Chromium, keyboard-only with a typed name and
with the mouse on the signature pad; axe-core checks the consent pages. The result carries the
consent record, the document's digest (that of the review text shown) and the signature file's
digest (that of the file's bytes)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import httpx
import pytest

from conftest import API_KEY, AUTH, KEY, answers, example, new_session
from stepkit_web.app import create_app
from stepkit_web.walk import walk_http

ONBOARDING = "onboarding"


def consent_checks(result: dict, files: Path, signature_bytes: bytes | None = None) -> dict:
    steps = {r["identifier"]: r for r in result["results"]}
    definition = json.loads(example(ONBOARDING))
    consent = steps["consent_review"]["consent"]
    assert consent["consented"] is True and consent["documentVersion"] == definition["consentDocument"]["version"]
    record = steps["consent_signature"]["results"][0]["answer"]
    written = (files / record["fileName"]).read_bytes()
    assert record["sha256"] == hashlib.sha256(written).hexdigest()
    if signature_bytes is not None:
        assert written == signature_bytes
    return {"consent": consent, "record": record, "written": written}


def test_onboarding_walks_over_http(db_url, clock, tmp_path):
    from fastapi.testclient import TestClient

    app = create_app(db_url, KEY, api_key=API_KEY, base_url="http://testserver", clock=clock,
                     files_dir=str(tmp_path / "files"))
    with TestClient(app, base_url="http://testserver", headers=AUTH) as client:
        session_id, path = new_session(client, ONBOARDING)
        page = client.get(path)
        assert "<h2 id=\"cs-2\">Privacy</h2>" in page.text  # the visual consent's sections
        result = walk_http(client, "", session_id, path, answers(ONBOARDING))
    checked = consent_checks(result, tmp_path / "files", b"Ada Lovelace\n")
    assert (checked["consent"]["givenName"], checked["consent"]["familyName"]) == ("Ada", "Lovelace")


def test_a_blank_signature_is_refused_and_nothing_is_kept(db_url, clock, tmp_path):
    from fastapi.testclient import TestClient
    from stepkit_web.walk import post_form

    app = create_app(db_url, KEY, api_key=API_KEY, base_url="http://testserver", clock=clock,
                     files_dir=str(tmp_path / "files"))
    with TestClient(app, base_url="http://testserver", headers=AUTH) as client:
        session_id, path = new_session(client, ONBOARDING)
        walk_to = {"consent_review": answers(ONBOARDING)["consent_review"]}
        for _ in range(2):
            info = client.get(f"/api/sessions/{session_id}").json()
            from stepkit_web.walk import page_fields
            fields = page_fields(info["state"], walk_to) or []
            r = post_form(client, path, [("_version", str(info["version"])), ("_step", info["state"]["step"]["identifier"])]
                          + fields + [("action", "next")])
            assert r.status_code == 303
        info = client.get(f"/api/sessions/{session_id}").json()
        assert info["state"]["step"]["identifier"] == "consent_signature"
        base = [("_version", str(info["version"])), ("_step", "consent_signature")]
        # Nothing signed: the page says what is missing; a path that is not SVG path data is refused.
        for fields in ([("signature.typed", "   ")], [("signature.path", "M 0 0 <script>")]):
            r = post_form(client, path, base + fields + [("action", "next")])
            assert r.status_code in (303, 422)
            after = client.get(f"/api/sessions/{session_id}").json()
            assert after["state"]["step"]["identifier"] == "consent_signature"
            assert after["state"].get("answer") is None
        assert list((tmp_path / "files").iterdir()) == []


# -- in Chromium ----------------------------------------------------------------------------------

WCAG = {"runOnly": {"type": "tag", "values": ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]},
        "resultTypes": ["violations"]}


@pytest.fixture(scope="module")
def live(tmp_path_factory):
    import stepkit
    from live import LiveServer, free_port

    clock = stepkit.ManualClock.from_iso("2026-01-01T09:00:00Z")
    where = tmp_path_factory.mktemp("consent")
    port = free_port()
    app = create_app(f"sqlite:///{where / 'runs.db'}", KEY, api_key=API_KEY, clock=clock,
                     base_url=f"http://127.0.0.1:{port}", files_dir=str(where / "files"))
    with LiveServer(app, port) as server:
        server.files = where / "files"
        r = httpx.post(server.url + "/api/tasks", content=example(ONBOARDING),
                       headers={**AUTH, "content-type": "application/json"})
        assert r.status_code == 201, r.text
        yield server


@pytest.fixture(scope="module")
def chromium():
    import os
    import shutil
    from playwright.sync_api import sync_playwright

    path = os.environ.get("STEPKIT_WEB_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=path, headless=True)
        yield b
        b.close()


def open_session(server) -> tuple:
    r = httpx.post(f"{server.url}/api/tasks/onboarding/sessions", headers=AUTH)
    assert r.status_code == 201
    return r.json()["session"], r.json()["resumeUrl"]


def check_axe(page, where):
    from axe_playwright_python.sync_playwright import Axe

    violations = Axe().run(page, options=WCAG).response["violations"]
    assert not violations, (where, [(v["id"], v["help"], [n["html"] for n in v["nodes"]][:3]) for v in violations])


def to_signature(page, url, axe=True):
    from keyboard import fill, press_button

    page.goto(url)
    if axe:
        check_axe(page, "visual consent")
    press_button(page, "next")
    if axe:
        check_axe(page, "consent review")
    assert "Version 2.1" in page.inner_text(".consent-document")
    fill(page, [("item:consented", "true"), ("item:givenName", "Ada"), ("item:familyName", "Lovelace")])
    press_button(page, "next")
    assert page.locator("h1").inner_text() == "Signature"


def finish(page, server, sid, axe=True):
    from keyboard import fill, press_button

    fill(page, [("item:age", "36"), ("item:usual_bedtime", "22:30")])
    press_button(page, "next")
    fill(page, [("answer", "4")])
    press_button(page, "next")
    # The review before completion lists the page's answers and the question's, as given.
    assert page.locator("h1").inner_text() == "Check your answers"
    review = page.inner_text("main")
    assert "About you" in review and "36" in review and "22:30" in review
    assert "How well did you sleep last night?" in review
    if axe:
        check_axe(page, "review")
    press_button(page, "next")
    info = httpx.get(f"{server.url}/api/sessions/{sid}", headers=AUTH).json()
    assert info["status"] == "finished", info
    return httpx.get(f"{server.url}/api/sessions/{sid}/result", headers=AUTH).json()


@pytest.mark.parametrize("viewport", [(375, 667), (1280, 800)])
def test_a_typed_signature_from_the_keyboard_passes_axe(live, chromium, viewport):
    from keyboard import fill, press_button

    context = chromium.new_context(viewport={"width": viewport[0], "height": viewport[1]}, locale="en-US")
    page = context.new_page()
    sid, url = open_session(live)
    to_signature(page, url)
    # With the script on, the pad is shown beside the typed name; the page passes axe either way.
    assert page.is_visible("#signature-pad")
    check_axe(page, "signature")
    # Next with nothing signed: refused, and the error passes axe too.
    press_button(page, "next")
    assert page.locator("h1").inner_text() == "Signature"
    check_axe(page, "signature, nothing signed")
    fill(page, [("signature.typed", "Ada Lovelace")])
    press_button(page, "next")
    consent_checks(finish(page, live, sid), live.files, b"Ada Lovelace\n")
    context.close()


def test_a_signature_drawn_on_the_pad(live, chromium):
    from keyboard import press_button

    context = chromium.new_context(viewport={"width": 1280, "height": 800}, locale="en-US")
    page = context.new_page()
    sid, url = open_session(live)
    to_signature(page, url)
    box = page.locator("#signature-pad").bounding_box()
    page.mouse.move(box["x"] + 20, box["y"] + 20)
    page.mouse.down()
    for i in range(1, 6):
        page.mouse.move(box["x"] + 20 + 40 * i, box["y"] + 20 + 10 * i)
    page.mouse.up()
    drawn = page.input_value("#signature-path")
    assert drawn.startswith("M ") and drawn.count("L ") >= 5
    press_button(page, "next")
    checked = consent_checks(finish(page, live, sid), live.files)
    assert checked["record"]["kind"] == "path" and checked["record"]["contentType"] == "image/svg+xml"
    assert f'd="{drawn}"'.encode() in checked["written"]
    context.close()


def test_without_javascript_the_typed_name_signs(live, chromium):
    from keyboard import fill, press_button

    context = chromium.new_context(viewport={"width": 375, "height": 667}, locale="en-US", java_script_enabled=False)
    page = context.new_page()
    sid, url = open_session(live)
    to_signature(page, url, axe=False)  # axe-core runs as a script
    assert not page.is_visible("#signature-pad")  # the pad needs the script; the name does not
    fill(page, [("signature.typed", "A. L.")])
    press_button(page, "next")
    consent_checks(finish(page, live, sid, axe=False), live.files, b"A. L.\n")
    context.close()
