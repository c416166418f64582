"""The audit trail in the web service: a participant's every answer change is kept with the
session (its restoration data) and the staff page of the session shows each one with its time
and the value before and after, read through the engine, which checks the trail's chain."""

from __future__ import annotations

import re

import sqlalchemy as sa
from fastapi.testclient import TestClient

from conftest import BASE, answers, register
from stepkit_web.db import sessions
from stepkit_web.walk import page_fields, post_form, walk_http
from test_staff import staff_client  # noqa: F401  (the fixture)


def _cells(html: str):
    """The audit table's rows as lists of cell texts."""
    table = html.split('<table id="audit">')[1].split("</table>")[0]
    body = table.split("<tbody>")[1]
    return [[re.sub(r"<[^>]+>", "", c).strip() for c in re.findall(r"<td>(.*?)</td>", row, re.S)]
            for row in re.findall(r"<tr>(.*?)</tr>", body, re.S)]


def test_staff_see_each_answer_change_with_its_time(app, client, staff_client, clock):  # noqa: F811
    register(client, "daily-checkin")
    created = client.post("/api/tasks/daily-checkin/sessions").json()
    sid = created["session"]
    resume = created["resumeUrl"].replace(BASE, "")
    given = answers("daily-checkin")
    participant = TestClient(app, base_url=BASE)
    # mood answered 2, then (a minute later) changed to the answers file's value on the way back.
    info = client.get(f"/api/sessions/{sid}").json()
    assert info["state"]["step"]["identifier"] == "mood"
    clock.advance(60_000)
    fields = page_fields(info["state"], {"mood": 2})
    r = post_form(participant, resume, [("_version", str(info["version"])), ("_step", "mood")]
                  + fields + [("action", "next")])
    assert r.status_code == 303, r.text
    info = client.get(f"/api/sessions/{sid}").json()
    r = post_form(participant, resume, [("_version", str(info["version"])),
                                        ("_step", info["state"]["step"]["identifier"]),
                                        ("action", "back")])
    assert r.status_code == 303, r.text
    clock.advance(60_000)
    walk_http(client, "", sid, resume, given)

    page = staff_client.get("/staff/studies/daily-checkin")
    assert f"/staff/studies/daily-checkin/sessions/{sid}/audit" in page.text
    audit = staff_client.get(f"/staff/studies/daily-checkin/sessions/{sid}/audit")
    assert audit.status_code == 200, audit.text
    rows = _cells(audit.text)
    changes = [r for r in rows if r[2] == "answerSet" and r[3] == "mood"]
    # The first answer (none → 2) at 09:01, the change (2 → the file's value) at 09:02.
    assert changes[0][4:6] == ["–", "2"]
    assert changes[0][1] == "2026-01-01T09:01:00.000Z"
    assert changes[1][4:6] == ["2", str(given["mood"])]
    assert changes[1][1] == "2026-01-01T09:02:00.000Z"
    # Every answer of the walk is there, and the moves; a restore per request is not.
    assert {r[3] for r in rows if r[2] == "answerSet"} >= {k for k, v in given.items() if v is not None}
    kinds = [r[2] for r in rows]
    assert "backward" in kinds and "restored" not in kinds
    assert kinds[-1] == "forward" and rows[-1][3].endswith("→ end")
    # The trail is kept with the session row: its restoration data carries it.
    with app.state.service.store.engine.connect() as conn:
        saved = conn.execute(sa.select(sessions.c.saved).where(sessions.c.id == sid)).scalar_one()
    assert '"audit":{"count":' in saved

    # Someone else's session, or none: not found, never a 500.
    assert staff_client.get("/staff/studies/daily-checkin/sessions/nope/audit").status_code == 404
    register(client, "intake")
    assert staff_client.get(f"/staff/studies/intake/sessions/{sid}/audit").status_code == 404
    # Not signed in: no trail.
    anonymous = TestClient(app, base_url=BASE)
    r = anonymous.get(f"/staff/studies/daily-checkin/sessions/{sid}/audit", follow_redirects=False)
    assert r.status_code in (303, 401, 403)
