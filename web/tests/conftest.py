"""Test fixtures: the library (STEPKIT_LIBRARY, or build/ at the repository root), a fresh
SQLite database per test, and an app with a manual clock."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "tasks"

if not os.environ.get("STEPKIT_LIBRARY"):
    for candidate in (ROOT / "build" / "libstepkit.so.0", ROOT / "build" / "libstepkit.so"):
        if candidate.exists():
            os.environ["STEPKIT_LIBRARY"] = str(candidate)
            break

import stepkit  # noqa: E402
from fastapi.testclient import TestClient  # noqa: E402

from stepkit_web.app import create_app  # noqa: E402
from stepkit_web.walk import post_form  # noqa: E402

KEY = "test-integrity-key"
API_KEY = "test-api-key"
AUTH = {"authorization": f"Bearer {API_KEY}"}
BASE = "http://testserver"
START = "2026-01-01T09:00:00Z"

# Debian's Chromium, which the browser tests drive through Playwright's executable_path.
CHROMIUM = os.environ.get("STEPKIT_WEB_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"

# Every example task a browser can run (short-walk has recorders: refused, tested apart).
WEB_TASKS = ["daily-checkin", "headache", "health-survey", "intake", "medications",
             "mood-screener", "drinking-screener", "worry-screener"]


def example(name: str) -> str:
    return (EXAMPLES / f"{name}.json").read_text(encoding="utf-8")


def answers(name: str) -> dict:
    return json.loads((EXAMPLES / f"{name}.answers.json").read_text(encoding="utf-8"))


def closing_title(name: str) -> str:
    """The title of the task's last step when it is a completion step (the page a finished
    run shows), else the service's own "Thank you"."""
    last = json.loads(example(name))["steps"][-1]
    return last.get("title") or "Thank you" if last.get("type") == "completion" else "Thank you"


_reference_cache: dict = {}


def reference_result(name: str, tmp_path: Path) -> dict:
    """`python -m stepkit run TASK --answers FILE`: the terminal presenter's result."""
    if name not in _reference_cache:
        out = tmp_path / f"{name}.result.json"
        subprocess.run([sys.executable, "-m", "stepkit", "run", str(EXAMPLES / f"{name}.json"),
                        "--answers", str(EXAMPLES / f"{name}.answers.json"), "--quiet",
                        "--output", str(out)], check=True, capture_output=True, timeout=60)
        _reference_cache[name] = json.loads(out.read_text())
    return _reference_cache[name]



@pytest.fixture(scope="module")
def browser():
    """One headless Chromium for a module's browser tests."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True)
        yield b
        b.close()


@pytest.fixture
def clock():
    return stepkit.ManualClock.from_iso(START)


@pytest.fixture
def db_url(tmp_path):
    return f"sqlite:///{tmp_path / 'runs.db'}"


@pytest.fixture
def app(db_url, clock):
    return create_app(db_url, KEY, api_key=API_KEY, base_url=BASE, clock=clock)


@pytest.fixture
def client(app):
    """A client of the host API (it sends the key) that also posts participant pages."""
    with TestClient(app, base_url=BASE, headers=AUTH) as c:
        yield c


def register(client, name: str) -> dict:
    r = client.post("/api/tasks", content=example(name),
                    headers={"content-type": "application/json"})
    assert r.status_code == 201, r.text
    return r.json()


def new_session(client, name: str) -> tuple:
    """A session of the example task `name`: (its id, the path of its participant page)."""
    register(client, name)
    return _opened(client, json.loads(example(name))["identifier"])


def session_of(client, definition: dict) -> tuple:
    """Registers the task `definition` and opens a session of it: (its id, the path of its
    participant page)."""
    r = client.post("/api/tasks", content=json.dumps(definition), headers={"content-type": "application/json"})
    assert r.status_code == 201, r.text
    return _opened(client, definition["identifier"])


def _opened(client, identifier: str) -> tuple:
    r = client.post(f"/api/tasks/{identifier}/sessions")
    assert r.status_code == 201, r.text
    body = r.json()
    path = body["resumeUrl"].replace("http://testserver", "")
    return body["session"], path


def page_of(client, path: str) -> str:
    """The participant page at `path`, which must answer 200."""
    page = client.get(path)
    assert page.status_code == 200
    return page.text


def version_of(client, session_id: str) -> str:
    """The session's version, as a page's hidden "_version" field carries it."""
    return str(client.get(f"/api/sessions/{session_id}").json()["version"])


def post_step(client, session_id: str, path: str, step: str, pairs: list, action: str):
    """Posts the page of `step` as a browser without JavaScript does: the version, the step, the
    fields `pairs` and the button `action`; the page must be taken (303) or sent back (422)."""
    r = post_form(client, path, [("_version", version_of(client, session_id)), ("_step", step)]
                  + pairs + [("action", action)])
    assert r.status_code in (303, 422), r.text[:500]
    return r
