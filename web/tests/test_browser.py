"""Chromium (Debian's, driven by Playwright through executable_path) walks every example task
keyboard-only on a phone and a desktop viewport; axe-core checks every page, error states
included; resume in another browser, Back, reload and two tabs."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import httpx
import pytest

from conftest import (AUTH, WEB_TASKS, answers, closing_title, example,
                      reference_result)
from keyboard import fill, press_button, tab_to
from live import live_service
from stepkit_web.walk import page_fields, strip_volatile

ROOT_DIR = Path(__file__).resolve().parents[2]
# The host's side: the API key, JSON bodies.
api = httpx.Client(headers={**AUTH, "content-type": "application/json"}, timeout=60)

WCAG = {"runOnly": {"type": "tag", "values": ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]},
        "resultTypes": ["violations"]}


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with live_service(tmp_path_factory, "browser") as live:
        for name in WEB_TASKS:
            r = api.post(live.url + "/api/tasks", content=example(name))
            assert r.status_code == 201, r.text
        r = api.post(live.url + "/api/tasks",
                     content=(ROOT_DIR / "examples" / "fhir" / "vitals.json").read_text(),
                     headers={"content-type": "application/fhir+json"})
        assert r.status_code == 201, r.text
        yield live


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


def no_horizontal_scroll(page, where):
    """The page fits its viewport's width (a 375 px phone): nothing to scroll sideways."""
    widths = page.evaluate("[document.documentElement.scrollWidth, "
                           "document.documentElement.clientWidth]")
    assert widths[0] <= widths[1], (where, widths)


def walk(server, page, sid, url, name, axe=None, given=None, seen=None, closing=None):
    """Walks the session in the browser with the answers file (``given``: other answers);
    ``seen`` collects the calculations each page shows ({name: text})."""
    example_task = given is None
    given = answers(name) if given is None else given
    phone = page.viewport_size and page.viewport_size["width"] <= 375
    page.goto(url)
    for _ in range(100):
        if phone:
            no_horizontal_scroll(page, f"{name}: {page.url}")
        if seen is not None:
            for calc in page.query_selector_all(".calculation"):
                seen[calc.get_attribute("data-calculation")] = calc.query_selector(
                    "dd").inner_text()
        info = api_state(server, sid)
        if info["status"] == "finished":
            expected = closing or (closing_title(name) if example_task else "Thank you")
            assert page.locator("h1").inner_text() == expected
            if axe:
                check_axe(axe, page, f"{name}: finished")
            return api.get(f"{server.url}/api/sessions/{sid}/result").json()
        state = info["state"]
        step = state["step"]
        where = f"{name}: {step['identifier']}"
        if axe:
            check_axe(axe, page, where)
        fields = page_fields(state, given)
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
            more = page_fields(state, given) or []
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


# The screeners' totals and bands by their published scoring rules, for the example answers:
# mood (PHQ-9: 0-3 per item; 0-4 minimal, 5-9 mild, 10-14 moderate): 1+2+3+2+0+1+2+0+0 = 11;
# drinking (AUDIT: Q1 "two or three times a week" 3, Q2 "three or four" 1, Q3 "monthly" 2,
# Q4 and Q7 "less than monthly" 1 each, Q10 "yes, not in the past year" 2, the rest 0; zone II
# is 8-15): 10; worry (GAD-7: 0-3 per item; 10-14 moderate): 2+1+2+3+0+1+1 = 10.
SCORES = {"mood-screener": {"moodTotal": "11", "moodBand": "moderate"},
          "drinking-screener": {"drinkTotal": "10", "drinkZone": "zone2"},
          "worry-screener": {"worryTotal": "10", "worryBand": "moderate"}}


@pytest.mark.parametrize("name", sorted(SCORES))
def test_screeners_show_their_scores(server, browser, name):
    context = browser.new_context(viewport={"width": 375, "height": 667}, locale="en-US")
    page = context.new_page()
    sid, url = new_session(server, name)
    seen = {}
    walk(server, page, sid, url, name, seen=seen)
    assert seen == SCORES[name]
    context.close()


def test_fhir_questionnaire_in_the_browser(server, browser, axe):
    """A Questionnaire registered as FHIR runs in Chromium; its QuestionnaireResponse is
    exported alone and in the task's Bundle."""
    from conftest import ROOT

    fhir_dir = ROOT / "examples" / "fhir"
    q = (fhir_dir / "vitals.json").read_text()
    r = api.post(server.url + "/api/tasks", content=q,
                 headers={"content-type": "application/fhir+json"})
    assert r.status_code == 201 and r.json()["source"] == "fhir", r.text
    context = browser.new_context(viewport={"width": 375, "height": 667}, locale="en-US")
    page = context.new_page()
    r = api.post(f"{server.url}/api/tasks/vitals/sessions").json()
    given = json.loads((fhir_dir / "vitals.answers.json").read_text())
    walk(server, page, r["session"], r["resumeUrl"], "vitals", axe, given=given)
    qr = api.get(f"{server.url}/api/sessions/{r['session']}/questionnaire-response").json()
    assert qr["resourceType"] == "QuestionnaireResponse" and qr["status"] == "completed"
    found = {}

    def collect(items):
        for item in items:
            found[item["linkId"]] = item.get("answer")
            collect(item.get("item") or [])
    collect(qr["item"])
    assert found["pain"] == [{"valueInteger": 3}]
    assert found["clinic-id"] == [{"valueString": "AB-123"}]
    assert [a["valueCoding"]["code"] for a in found["sport"]] == ["run", "swim"]
    bundle = api.get(f"{server.url}/api/tasks/vitals/questionnaire-responses").json()
    assert bundle["resourceType"] == "Bundle"
    assert qr in [e["resource"] for e in bundle["entry"]]
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


def press_named(page, name):
    """Tabs to the button with this exact text and presses Enter; waits for the next page."""
    button = page.get_by_role("button", name=name, exact=True).element_handle()
    tab_to(page, button)
    with page.expect_navigation():
        page.keyboard.press("Enter")


def test_personal_invite_and_open_link_resume_in_chromium(server, browser, axe):
    """A personal invite resumes from its own link in any browser; an open link resumes in
    the browser that started it (its cookie) and starts over only when asked."""
    r = api.post(f"{server.url}/api/tasks/daily-checkin/invites",
                 content=json.dumps({"participants": ["P-browser"]}))
    link = r.json()["invites"][0]["inviteUrl"]
    first = browser.new_context(locale="en-US")
    page = first.new_page()
    page.goto(link)
    check_axe(axe, page, "personal invite: start page")
    press_named(page, "Start")
    fill(page, [("answer", "4")])
    press_button(page, "next")
    second_step = page.locator("h1").inner_text()
    assert page.locator("#resume-url").input_value().startswith(server.url + "/r/")
    check_axe(axe, page, "step with the address to keep")
    first.close()
    other = browser.new_context(locale="en-US")  # another device: nothing but the link
    page = other.new_page()
    page.goto(link)
    assert page.locator("h1").inner_text() == second_step
    other.close()

    r = api.post(f"{server.url}/api/tasks/daily-checkin/invites")
    open_link = r.json()["inviteUrl"]
    ctx = browser.new_context(locale="en-US")
    page = ctx.new_page()
    page.goto(open_link)
    press_named(page, "Start")
    fill(page, [("answer", "3")])
    press_button(page, "next")
    assert page.locator("h1").inner_text() == second_step
    page.goto(open_link)  # the same browser, later: offered to continue
    check_axe(axe, page, "open link: welcome back")
    page.get_by_role("link", name="Continue where you left off").click()
    page.wait_for_load_state()
    assert page.locator("h1").inner_text() == second_step
    page.goto(open_link)
    press_named(page, "Start over")
    assert page.locator("h1").inner_text() != second_step  # a new session, on its first step
    ctx.close()


def test_staff_side_in_chromium(server, browser, axe, tmp_path):
    """A staff member signs in, lists sessions, exports CSV, JSON and a FHIR Bundle, revokes an
    invite, publishes a drafted version and deletes a participant's data, each through the
    browser, and axe finds nothing on any of those pages."""
    import csv
    import io
    import subprocess
    import sys

    db_url = server.db_url
    r = subprocess.run([sys.executable, "-m", "stepkit_web", "staff", "add", "carol",
                        "--db", db_url, "--password-stdin"], input="a long enough password\n",
                       capture_output=True, text=True, timeout=120, env=os.environ)
    assert r.returncode == 0, r.stderr
    ctx = browser.new_context(viewport={"width": 1280, "height": 900}, locale="en-US",
                              accept_downloads=True)
    page = ctx.new_page()
    page.goto(server.url + "/staff")
    assert page.url.endswith("/staff/login")
    check_axe(axe, page, "staff: sign in")
    page.fill("#username", "carol")
    page.fill("#password", "not the password")
    with page.expect_navigation():
        page.click("button[type=submit]")
    assert "not right" in page.content()
    check_axe(axe, page, "staff: sign in failed")
    page.fill("#username", "carol")
    page.fill("#password", "a long enough password")
    with page.expect_navigation():
        page.click("button[type=submit]")
    assert page.locator("h1").inner_text() == "Studies"
    check_axe(axe, page, "staff: studies")

    # Two participants of the FHIR study through personal invites created from a CSV file.
    with page.expect_navigation():
        page.click("a[href='/staff/studies/vitals']")
    check_axe(axe, page, "staff: study page")
    ids = tmp_path / "ids.csv"
    ids.write_text("participant\nV-1\nV-2\n")
    page.set_input_files("#i-file", str(ids))
    page.fill("#i-days", "30")
    with page.expect_navigation():
        page.click("text=Create invites")
    check_axe(axe, page, "staff: new invites")
    links = dict(list(csv.reader(io.StringIO(page.locator("#invite-csv").input_value())))[1:])
    given = json.loads((ROOT_DIR / "examples" / "fhir" / "vitals.answers.json").read_text())
    pctx = browser.new_context(viewport={"width": 375, "height": 667}, locale="en-US")
    ppage = pctx.new_page()
    ppage.goto(links["V-1"])
    press_named(ppage, "Start")
    from sqlalchemy import create_engine, text
    eng = create_engine(db_url)
    with eng.connect() as conn:
        sid = conn.execute(text("SELECT id FROM sessions WHERE participant = 'V-1'")).scalar_one()
    walk(server, ppage, sid, ppage.url, "vitals", given=given)
    ppage.goto(links["V-2"])
    press_named(ppage, "Start")
    pctx.close()

    # The session list, filtered.
    page.goto(f"{server.url}/staff/studies/vitals")
    listed = page.locator("#sessions tbody").inner_text()
    assert "V-1" in listed and "V-2" in listed
    page.select_option("#f-status", "finished")
    page.fill("#f-participant", "V-1")
    with page.expect_navigation():
        page.click("text=Filter")
    assert page.locator("#sessions tbody tr").count() == 1
    assert "V-1" in page.locator("#sessions tbody").inner_text()
    page.select_option("#f-status", "finished")
    page.fill("#f-participant", "V-2")  # V-2 has only started
    with page.expect_navigation():
        page.click("text=Filter")
    assert page.locator("#sessions tbody tr").count() == 0
    check_axe(axe, page, "staff: study page, filtered")

    # V-1's audit trail: each answer the walk gave, with its time, and axe finds nothing.
    page.goto(f"{server.url}/staff/studies/vitals?status=finished&participant=V-1")
    with page.expect_navigation():
        page.click("#sessions tbody a:has-text('Changes')")
    assert page.locator("h1").inner_text() == "Audit trail – V-1"
    check_axe(axe, page, "staff: audit trail")
    rows = page.locator("#audit tbody tr")
    cells = [[rows.nth(i).locator("td").nth(j).inner_text() for j in range(8)] for i in range(rows.count())]
    answered = {c[3] for c in cells if c[2] == "answerSet"}
    assert {step for step, value in given.items() if value is not None} <= answered, cells
    for c in cells:
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", c[1]), c
    assert cells[-1][2] == "forward" and cells[-1][3].endswith("→ end")
    page.goto(f"{server.url}/staff/studies/vitals?status=finished&participant=V-2")  # as before

    def download(name):
        with page.expect_download() as info:
            page.click(f"a[href$='/export/{name}']")
        return info.value.path().read_text(encoding="utf-8")

    wide = list(csv.DictReader(io.StringIO(download("sessions.csv"))))
    done = next(r for r in wide if r["participant"] == "V-1")
    assert done["body.pain"] == "3" and done["habits.clinic-id"] == "AB-123"
    assert done["habits.sport"] == "run;swim"
    assert "body.pain" in download("codebook.csv")
    assert "body" in download("visits.csv")
    as_json = json.loads(download("sessions.json"))
    assert {"V-1", "V-2"} <= {d["participant"] for d in as_json}
    bundle = json.loads(download("responses.json"))
    assert bundle["resourceType"] == "Bundle"
    assert {"completed", "in-progress"} <= {e["resource"]["status"] for e in bundle["entry"]}
    assert len(bundle["entry"]) == len(as_json)  # one response per session

    # Revoke V-2's invite.
    page.get_by_role("button", name="Revoke the invite of V-2").click()
    page.wait_for_load_state()
    assert "revoked" in page.locator("[role=status]").inner_text()
    check_axe(axe, page, "staff: invite revoked")
    pctx = browser.new_context(locale="en-US")
    gone = pctx.new_page().goto(links["V-2"])
    assert gone.status == 404
    pctx.close()

    # Draft a new version of daily-checkin and publish it.
    page.goto(f"{server.url}/staff/studies/daily-checkin")
    changed = json.loads(example("daily-checkin"))
    changed["steps"][0]["question"] = "All in all, how is your mood today?"
    page.fill("#v-definition", json.dumps(changed))
    with page.expect_navigation():
        page.click("text=Save as a draft")
    assert "draft" in page.locator("[role=status]").inner_text()
    check_axe(axe, page, "staff: draft saved")
    version = max(v["version"] for v in api.get(
        f"{server.url}/api/tasks/daily-checkin").json()["versions"])
    with page.expect_navigation():
        page.get_by_role("button", name=f"Publish version {version}").click()
    assert "published" in page.locator("[role=status]").inner_text()
    check_axe(axe, page, "staff: published")
    versions = api.get(f"{server.url}/api/tasks/daily-checkin").json()["versions"]
    assert versions[-1]["status"] == "published"

    # A per-study API key: made and shown once, then revoked.
    page.goto(f"{server.url}/staff/studies/vitals")
    with page.expect_navigation():
        page.click("text=Make an API key")
    check_axe(axe, page, "staff: new API key")
    key = page.locator("#api-key").input_value()
    assert httpx.get(f"{server.url}/api/tasks/vitals",
                     headers={"authorization": f"Bearer {key}"}).status_code == 200
    assert httpx.get(f"{server.url}/api/tasks/daily-checkin",
                     headers={"authorization": f"Bearer {key}"}).status_code == 404
    page.goto(f"{server.url}/staff/studies/vitals")
    with page.expect_navigation():
        page.locator("#keys button").first.click()
    assert httpx.get(f"{server.url}/api/tasks/vitals",
                     headers={"authorization": f"Bearer {key}"}).status_code == 401

    # Delete V-1's data.
    page.goto(f"{server.url}/staff/studies/vitals")
    page.fill("#d-participant", "V-1")
    page.check("#d-confirm")
    with page.expect_navigation():
        page.click("text=Delete the data")
    assert "deleted" in page.locator("[role=status]").inner_text()
    assert "V-1" not in page.locator("#sessions").inner_text()
    check_axe(axe, page, "staff: participant deleted")
    with eng.connect() as conn:
        assert conn.execute(text("SELECT count(*) FROM sessions WHERE participant = 'V-1'")
                            ).scalar_one() == 0
    eng.dispose()
    ctx.close()


def test_staff_pages_fit_a_phone(server, browser, axe):
    """Every staff page at 375 px: nothing to scroll sideways (wide tables scroll inside their
    own box) and axe finds nothing: sign in (and its error), the studies, each study's page,
    a session's audit trail, the new invites and the new API key, and the notices after an
    action."""
    import subprocess
    import sys

    r = subprocess.run([sys.executable, "-m", "stepkit_web", "staff", "add", "phoebe",
                        "--db", server.db_url, "--password-stdin"], input="a phone-sized password\n",
                       capture_output=True, text=True, timeout=120, env=os.environ)
    assert r.returncode == 0, r.stderr
    sid, url = new_session(server, "daily-checkin")  # a session for the audit trail
    ctx = browser.new_context(viewport={"width": 375, "height": 667}, locale="en-US")
    page = ctx.new_page()
    page.goto(url)
    page.locator("input[name=answer]").first.check()  # an answer, for the audit trail to list
    press_named(page, "Next")
    checked = []

    def fits(where):
        assert page.viewport_size == {"width": 375, "height": 667}
        no_horizontal_scroll(page, "staff at 375 px: " + where)
        check_axe(axe, page, "staff at 375 px: " + where)
        checked.append(where)

    page.goto(server.url + "/staff/login")
    fits("sign in")
    page.fill("#username", "phoebe")
    page.fill("#password", "wrong")
    with page.expect_navigation():
        page.click("button[type=submit]")
    assert "not right" in page.content()
    fits("sign in failed")
    page.fill("#username", "phoebe")
    page.fill("#password", "a phone-sized password")
    with page.expect_navigation():
        page.click("button[type=submit]")
    assert page.locator("h1").inner_text() == "Studies"
    fits("studies")
    studies = [a.get_attribute("href") for a in page.query_selector_all("main a[href^='/staff/studies/']")]
    assert "/staff/studies/daily-checkin" in studies and "/staff/studies/vitals" in studies
    for href in studies:
        page.goto(server.url + href)
        fits(href)
    page.goto(f"{server.url}/staff/studies/daily-checkin/sessions/{sid}/audit")
    assert page.locator("h1").inner_text().startswith("Audit trail")
    assert page.locator("#audit tbody tr").count() >= 1
    fits("audit trail")
    page.goto(f"{server.url}/staff/studies/daily-checkin")
    page.fill("#i-ids", "PHONE-1\nPHONE-2-with-a-long-participant-identifier")
    with page.expect_navigation():
        page.click("text=Create invites")
    assert page.locator("h1").inner_text() == "New invites"
    fits("new invites")
    page.goto(f"{server.url}/staff/studies/daily-checkin")
    with page.expect_navigation():
        page.get_by_role("button", name="Revoke the invite of PHONE-1").click()
    assert "revoked" in page.locator("[role=status]").inner_text()
    fits("invite revoked")
    with page.expect_navigation():
        page.click("text=Make an API key")
    assert page.locator("h1").inner_text() == "New API key"
    fits("new API key")
    assert len(checked) == 7 + len(studies)
    ctx.close()


def test_the_375px_check_is_live(browser):
    """The horizontal-scroll check fails where a page is wider than a phone (so a pass means
    something)."""
    ctx = browser.new_context(viewport={"width": 375, "height": 667})
    page = ctx.new_page()
    page.set_content('<!doctype html><html lang="en"><body><div style="width:600px">wide'
                     '</div></body></html>')
    with pytest.raises(AssertionError):
        no_horizontal_scroll(page, "wide")
    ctx.close()


def test_date_time_answers_take_the_browsers_zone(server, browser):
    """A date-time answer is given in the participant's zone: the browser fills in its own
    UTC offset (Europe/Berlin: +01:00 in January, +02:00 in July), nobody types one."""
    task = {"identifier": "when", "steps": [
        {"type": "question", "identifier": "at", "question": "When did it start?",
         "answerFormat": {"type": "date", "style": "dateTime"}}]}
    assert api.post(server.url + "/api/tasks", content=json.dumps(task)).status_code == 201
    r = api.post(server.url + "/api/tasks/when/sessions").json()
    ctx = browser.new_context(locale="en-US", timezone_id="Europe/Berlin")
    page = ctx.new_page()
    page.goto(r["resumeUrl"])
    page.fill("#q-value", "2026-01-15T08:30")
    page.dispatch_event("#q-value", "change")
    assert page.input_value("#q-offset") == "+01:00"
    page.fill("#q-value", "2026-07-15T08:30")
    page.dispatch_event("#q-value", "change")
    assert page.input_value("#q-offset") == "+02:00"
    with page.expect_navigation():
        page.click("button[value=next]")
    answer = api.get(f"{server.url}/api/sessions/{r['session']}/result").json()
    given = answer["results"][0]["results"][0]["answer"]
    assert given.startswith("2026-07-15T08:30") and given.endswith("+02:00"), given
    ctx.close()


def test_the_email_form_passes_axe(server, browser, axe):
    """With SMTP configured the step page has the e-mail form: axe checks that page too."""
    from stepkit_web.mail import SmtpSettings

    server.app.state.smtp = SmtpSettings(host="127.0.0.1", sender="s@example.org", port=9,
                                         security="none")
    try:
        sid, url = new_session(server, "daily-checkin")
        page = browser.new_page()
        page.goto(url)
        assert page.locator("#email").count() == 1
        check_axe(axe, page, "step page with the e-mail form")
        page.close()
    finally:
        server.app.state.smtp = None


# The example in three languages (issue 32) in Chromium: walked in each language as the terminal
# presenter walks it (the same result but for the languages; axe on every page); the browser's
# language picks the session's; the language switch works without JavaScript and keeps answers.

MULTILINGUAL = "multilingual-checkin"
TITLES = {"en": "Evening check-in", "de": "Abendlicher Check-in", "es": "Registro de la tarde"}


def _multilingual_session(server, language):
    api.post(server.url + "/api/tasks", content=example(MULTILINGUAL))  # 201, or 200 once there
    options = {"language": language}
    if '"shuffle"' in example(MULTILINGUAL):
        options["seed"] = 20261127  # the same order in every language, and in the CLI's walk
    r = api.post(f"{server.url}/api/tasks/{MULTILINGUAL}/sessions", content=json.dumps({"options": options}))
    assert r.status_code == 201, r.text
    return r.json()["session"], r.json()["resumeUrl"]


@pytest.mark.parametrize("language", ["en", "de", "es"])
def test_the_multilingual_example_walks_alike_in_each_language(server, browser, axe, language, tmp_path):
    import subprocess
    import sys

    from conftest import EXAMPLES

    context = browser.new_context(viewport={"width": 375, "height": 667}, locale=language)
    page = context.new_page()
    sid, url = _multilingual_session(server, language)
    page.goto(url)
    assert page.locator("h1").inner_text() == TITLES[language]
    assert page.evaluate("document.documentElement.lang") == language
    # The walk's closing page is the completion step's title in the session's language.
    closing = {"en": "Thank you", "de": "Danke", "es": "Gracias"}[language]
    result = walk(server, page, sid, url, MULTILINGUAL, axe, given=answers(MULTILINGUAL),
                  closing=closing)
    context.close()
    out = tmp_path / "reference.json"
    seed = ["--seed", "20261127"] if '"shuffle"' in example(MULTILINGUAL) else []
    subprocess.run([sys.executable, "-m", "stepkit", "run", str(EXAMPLES / f"{MULTILINGUAL}.json"),
                    "--answers", str(EXAMPLES / f"{MULTILINGUAL}.answers.json"), "--quiet",
                    "--output", str(out), *seed], check=True, capture_output=True, timeout=60)

    def plain(value):
        return {k: v for k, v in strip_volatile(value).items() if k not in ("language", "languages")}
    assert result["languages"] == [language]
    assert plain(result) == plain(json.loads(out.read_text()))

