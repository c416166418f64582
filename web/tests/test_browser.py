"""Chromium (Debian's, driven by Playwright through executable_path) walks every example task
keyboard-only on a phone and a desktop viewport; axe-core checks every page, error states
included; resume in another browser, Back, reload and two tabs."""

from __future__ import annotations

import json
import os
import shutil

import httpx
import pytest

from conftest import API_KEY, AUTH, KEY, WEB_TASKS, answers, example, reference_result
from keyboard import fill, press_button
from live import LiveServer, free_port
from stepkit_web.app import create_app
from stepkit_web.walk import page_fields, strip_volatile

CHROMIUM = os.environ.get("STEPKIT_WEB_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
# The host's side: the API key, JSON bodies.
api = httpx.Client(headers={**AUTH, "content-type": "application/json"}, timeout=60)

WCAG = {"runOnly": {"type": "tag", "values": ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]},
        "resultTypes": ["violations"]}


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    import stepkit

    clock = stepkit.ManualClock.from_iso("2026-01-01T09:00:00Z")
    db = tmp_path_factory.mktemp("browser") / "runs.db"
    port = free_port()
    app = create_app(f"sqlite:///{db}", KEY, api_key=API_KEY, clock=clock,
                     base_url=f"http://127.0.0.1:{port}")
    with LiveServer(app, port) as live:
        for name in WEB_TASKS:
            r = api.post(live.url + "/api/tasks", content=example(name))
            assert r.status_code == 201, r.text
        yield live


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True)
        yield b
        b.close()


@pytest.fixture(scope="module")
def axe():
    from axe_playwright_python.sync_playwright import Axe

    return Axe()


def new_session(server, name):
    identifier = json.loads(example(name))["identifier"]
    r = api.post(f"{server.url}/api/tasks/{identifier}/sessions")
    assert r.status_code == 201
    return r.json()["session"], r.json()["resumeUrl"]


def api_state(server, sid):
    return api.get(f"{server.url}/api/sessions/{sid}").json()


def check_axe(axe, page, where):
    results = axe.run(page, options=WCAG)
    violations = results.response["violations"]
    assert not violations, (where, [(v["id"], v["help"], [n["html"] for n in v["nodes"]][:3])
                                    for v in violations])


def walk(server, page, sid, url, name, axe=None):
    page.goto(url)
    for _ in range(100):
        info = api_state(server, sid)
        if info["status"] == "finished":
            assert "Thank you" in page.content()
            if axe:
                check_axe(axe, page, f"{name}: finished")
            return api.get(f"{server.url}/api/sessions/{sid}/result").json()
        state = info["state"]
        step = state["step"]
        where = f"{name}: {step['identifier']}"
        if axe:
            check_axe(axe, page, where)
        fields = page_fields(state, answers(name))
        required = step["type"] in ("question", "form") and fields is not None
        if axe and required and state["problems"]:
            # The error state: Next with nothing filled in shows the engine's problems.
            press_button(page, "next")
            assert page.query_selector(".error-summary") is not None, where
            assert page.evaluate("document.activeElement.className") == "error-summary", where
            check_axe(axe, page, where + " (errors)")
        if fields is None:
            press_button(page, "skip")
            continue
        fill(page, fields)
        press_button(page, "next")
        after = api_state(server, sid)
        if after["status"] != "finished" and after["state"]["step"]["identifier"] == step["identifier"]:
            # A form whose items appeared with the answers (visibleWhen): fill the new ones.
            state = after["state"]
            more = page_fields(state, answers(name)) or []
            new = [p for p in more if p not in fields]
            fill(page, new)
            press_button(page, "next")
    raise AssertionError("too many pages")


@pytest.mark.parametrize("viewport", [(375, 667), (1280, 800)], ids=["phone", "desktop"])
@pytest.mark.parametrize("name", WEB_TASKS)
def test_keyboard_walk_equals_cli_and_passes_axe(server, browser, axe, name, viewport, tmp_path):
    context = browser.new_context(viewport={"width": viewport[0], "height": viewport[1]},
                                  locale="en-US", java_script_enabled=True)
    page = context.new_page()
    sid, url = new_session(server, name)
    result = walk(server, page, sid, url, name, axe if viewport[0] == 375 else None)
    assert strip_volatile(result) == strip_volatile(reference_result(name, tmp_path))
    context.close()


def test_resume_back_reload_and_two_tabs(server, browser, axe):
    sid, url = new_session(server, "daily-checkin")
    ctx = browser.new_context(locale="en-US")
    page = ctx.new_page()
    page.goto(url)
    fill(page, [("answer", "4")])
    press_button(page, "next")
    assert page.locator("h1").inner_text() == api_state(server, sid)["state"]["step"]["title"]
    version = api_state(server, sid)["version"]
    # Reload: a GET, nothing is posted again.
    page.reload()
    assert api_state(server, sid)["version"] == version
    # Browser Back: the pages are not cached, so it shows the current step again (never an
    # old page that could be sent); nothing changes.
    page.go_back()
    page.wait_for_load_state()
    if page.query_selector('input[name="answer"]') is not None:  # a browser that kept it anyway
        press_button(page, "next")
        assert "This page had changed" in page.content()
    assert api_state(server, sid)["version"] == version
    # Resume in a new browser (no cookies, nothing shared but the link): the exact step.
    other = browser.new_context(locale="en-US")
    p2 = other.new_page()
    p2.goto(url)
    assert f'value="{version}"' in p2.content()
    step = api_state(server, sid)["state"]["step"]
    assert p2.locator("h1").inner_text() == step["title"]
    # Two tabs on the same step: the first to send wins, the second is told.
    tab_a, tab_b = ctx.new_page(), ctx.new_page()
    tab_a.goto(url)
    tab_b.goto(url)
    pairs = page_fields(api_state(server, sid)["state"], answers("daily-checkin"))
    fill(tab_a, pairs)
    press_button(tab_a, "next")
    fill(tab_b, pairs)
    press_button(tab_b, "next")
    assert "This page had changed" in tab_b.content()
    check_axe(axe, tab_b, "stale notice")
    assert api_state(server, sid)["version"] == version + 1
    for c in (ctx, other):
        c.close()


def test_javascript_off_still_works(server, browser):
    ctx = browser.new_context(java_script_enabled=False, locale="en-US")
    page = ctx.new_page()
    sid, url = new_session(server, "headache")
    result = walk(server, page, sid, url, "headache")
    assert result["results"]
    ctx.close()


def test_axe_is_live(browser, axe):
    """The accessibility check finds a violation where there is one (so a pass means something)."""
    page = browser.new_page()
    page.set_content('<!doctype html><html lang="en"><head><title>x</title></head><body><main>'
                     '<input type="text" name="unlabelled"></main></body></html>')
    results = axe.run(page, options=WCAG)
    assert any(v["id"] == "label" for v in results.response["violations"])
    page.close()


def test_timed_and_wait_steps_pass_axe(server, browser, axe):
    task = {"identifier": "timed-browser", "steps": [
        {"type": "countdown", "identifier": "countdown", "title": "Get ready", "stepDuration": 5},
        {"type": "active", "identifier": "hold", "title": "Hold still", "stepDuration": 10},
        {"type": "wait", "identifier": "wait", "title": "Please wait"},
        {"type": "completion", "identifier": "done", "title": "Thank you"}]}
    assert api.post(server.url + "/api/tasks", content=json.dumps(task)).status_code == 201
    r = api.post(server.url + "/api/tasks/timed-browser/sessions").json()
    page = browser.new_page()
    page.goto(r["resumeUrl"])
    assert page.query_selector('button[value="tick"]') is not None  # the countdown runs
    assert page.query_selector("form[data-deadline-ms]") is not None
    check_axe(axe, page, "countdown")
    page.close()


ATTACK = """<!doctype html><html lang="en"><head><title>attack</title></head><body>
<form id="f" method="post" action="{target}{path}">
<input name="_version" value="{version}"><input name="_step" value="mood">
<input name="answer" value="1"><input name="action" value="next"></form>
<script>
fetch("{target}/api/tasks", {{method: "POST", mode: "no-cors",
  headers: {{"content-type": "text/plain"}}, body: {task}}})
  .catch(function () {{}})
  .finally(function () {{ document.title = "sent"; document.getElementById("f").submit(); }});
</script></body></html>"""


def test_another_origin_cannot_change_tasks_or_answers(server, browser):
    """CSRF from a real browser: a page on another origin (localhost, another port) posts a
    new task version as text/plain (no preflight) and a participant's page as a form. Both
    are refused; the task keeps its version and the session its answers."""
    import http.server
    import threading

    from live import free_port

    sid, url = new_session(server, "daily-checkin")
    info = api_state(server, sid)
    before_versions = api.get(f"{server.url}/api/tasks/daily-checkin").json()["versions"]
    changed = json.loads(example("daily-checkin"))
    changed["steps"] = changed["steps"][:1]
    page_html = ATTACK.format(target=server.url, path=url.replace(server.url, ""),
                              version=info["version"], task=json.dumps(json.dumps(changed)))

    class Attacker(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            body = page_html.encode()
            self.send_response(200)
            self.send_header("content-type", "text/html; charset=utf-8")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    port = free_port()
    evil = http.server.ThreadingHTTPServer(("127.0.0.1", port), Attacker)
    thread = threading.Thread(target=evil.serve_forever, daemon=True)
    thread.start()
    try:
        for origin in (f"http://localhost:{port}", f"http://127.0.0.1:{port}"):
            ctx = browser.new_context()
            page = ctx.new_page()
            with page.expect_navigation(url=url, timeout=30_000):
                page.goto(origin + "/")
            assert "another web site" in page.content()  # the 403 page
            ctx.close()
    finally:
        evil.shutdown()
    after = api_state(server, sid)
    assert after["version"] == info["version"]
    assert after["state"]["step"]["identifier"] == "mood" and after["state"].get("answer") is None
    assert api.get(f"{server.url}/api/tasks/daily-checkin").json()["versions"] == before_versions
