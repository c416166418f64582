"""Issue 35's games on the participant pages (games.py, templates/_game.html): the page draws
the game the engine holds, and ``POST /r/<token>/input`` hands it one input, timed by the
page (``at``: milliseconds of the step's running time) and mapped onto the session's clock.

Expected sequences come from the documented generator (docs/randomization.md and
docs/active-tasks.md, through the reference PCG32 of bindings/python/tests/pcg32.py), and the
results from the documented rules, worked out by hand; nothing is read back from the engine to
be compared with itself. Every refused input is checked to change nothing."""

from __future__ import annotations

import html
import json
import re
import sys
from urllib.parse import urlencode
from typing import Any, Dict, List, Tuple

import pytest
from fastapi.testclient import TestClient

from conftest import API_KEY, AUTH, BASE, KEY, ROOT
from stepkit_web.app import create_app

sys.path.insert(0, str(ROOT / "bindings" / "python" / "tests"))
from pcg32 import PCG32, fnv1a64  # noqa: E402  (the reference generator, written from the docs)

JSON = {"content-type": "application/json"}
ACCEPT_JSON = {"content-type": "application/x-www-form-urlencoded", "accept": "application/json"}
COLORS = ["red", "green", "blue", "yellow"]

SPAN_STEP = {"type": "spatialSpanMemory", "identifier": "span", "initialSpan": 3, "minimumSpan": 2,
             "maximumSpan": 5, "maximumTests": 4, "maximumConsecutiveFailures": 2}
STROOP_STEP = {"type": "stroop", "identifier": "stroop", "numberOfAttempts": 3}


def span_sequence(seed: int, step: str, number: int, span: int) -> List[int]:
    """docs/active-tasks.md: the board is n x n, the smallest n from 2 to 6 with n*n >= 2*span;
    stream "<step>#game<k>" shuffles all its tiles (Fisher-Yates from the last, j below i + 1);
    the sequence is the first span tiles."""
    side = next(n for n in range(2, 7) if n * n >= 2 * span or n == 6)
    tiles = list(range(side * side))
    g = PCG32(seed, fnv1a64(f"{step}#game{number}"))
    for i in range(len(tiles) - 1, 0, -1):
        j = g.below(i + 1)
        tiles[i], tiles[j] = tiles[j], tiles[i]
    return tiles[:span]


def stroop_words(seed: int, step: str, count: int) -> List[Tuple[str, str]]:
    """Stream "<step>#stroop": per attempt the word, then the print colour, each below 4."""
    g = PCG32(seed, fnv1a64(step + "#stroop"))
    return [(COLORS[g.below(4)], COLORS[g.below(4)]) for _ in range(count)]


def open_game(client: TestClient, step: Dict[str, Any], seed: int = 7) -> Tuple[str, str]:
    task = {"identifier": step["identifier"] + "-task", "steps": [
        step, {"type": "completion", "identifier": "done", "title": "All done"}]}
    r = client.post("/api/tasks", content=json.dumps(task), headers=JSON)
    assert r.status_code == 201, r.text
    created = client.post(f"/api/tasks/{task['identifier']}/sessions",
                          content=json.dumps({"options": {"seed": seed}}), headers=JSON).json()
    return created["session"], created["resumeUrl"].replace(BASE, "")


def game_form(page: str) -> Dict[str, Any]:
    """The game the page draws: its data-game JSON, data-elapsed, hidden fields and buttons."""
    form = re.search(r'<form method="post" action="([^"]+)" class="game[^"]*" novalidate '
                     r'data-game="([^"]*)" data-elapsed="([^"]*)" data-deadline-in="([^"]*)">', page)
    assert form, "no game form on the page"
    hidden = dict(re.findall(r'<input type="hidden" name="(_step|_token|type)" value="([^"]*)">', page))
    return {"action": form.group(1), "game": json.loads(html.unescape(form.group(2))),
            "elapsed": float(form.group(3)), "deadline": form.group(4),
            "step": hidden["_step"], "token": hidden["_token"],
            "targets": [int(v) for v in re.findall(r'name="target" value="(\d+)"', page)]}


@pytest.fixture
def game_app(db_url, clock):
    return create_app(db_url, KEY, api_key=API_KEY, base_url=BASE, clock=clock, time_source="instance")


def state_of(client: TestClient, sid: str) -> Dict[str, Any]:
    return client.get(f"/api/sessions/{sid}").json()


def send(client: TestClient, form: Dict[str, Any], pairs: List[Tuple[str, str]], *, as_json: bool = True,
         token: str = "") -> Any:
    fields = [("_step", form["step"]), ("_token", token or form["token"])] + pairs
    return client.post(form["action"], content=urlencode(fields).encode(), follow_redirects=False,
                       headers=ACCEPT_JSON if as_json else {"content-type": "application/x-www-form-urlencoded"})


def game_result(client: TestClient, sid: str, step: str) -> Dict[str, Any]:
    result = client.get(f"/api/sessions/{sid}/result").json()
    return next(r for r in result["results"] if r["identifier"] == step)["results"][0]


def test_spatial_span_page_draws_the_seeded_board_and_takes_timed_taps(game_app, clock):
    with TestClient(game_app, base_url=BASE, headers=AUTH) as client:
        sid, path = open_game(client, SPAN_STEP)
        start = clock()
        page = client.get(path).text
        form = game_form(page)
        g = [span_sequence(7, "span", k, n) for k, n in [(1, 3), (2, 4), (3, 3), (4, 4)]]
        assert form["game"]["sequence"] == g[0] and form["elapsed"] == 0
        # The script ticks 20 s after tapsFrom (3 s): ResearchKit's timeout without a right tap.
        assert form["deadline"] == "23000"
        assert form["targets"] == list(range(9))  # a 3 x 3 board: room for 2 x 3 tiles
        assert 'src="/static/games.js"' in page and "<script>" not in page  # no inline script
        # The page measured each tap's step time (at); the server's clock is later still (the
        # post arrives after the tap): the engine records the page's times. Games as in the
        # binding's test: success, failure on the second tap, success, failure.
        wrong2 = next(t for t in range(9) if t != g[1][1])
        wrong4 = next(t for t in range(9) if t != g[3][0])
        taps = [(3500, g[0][0]), (4000, g[0][1]), (4500, g[0][2]), (9000, g[1][0]), (9500, wrong2),
                (13000, g[2][0]), (13500, g[2][1]), (14000, g[2][2]), (18500, wrong4)]
        for at, target in taps:
            clock.set(start + at + 250)
            r = send(client, form, [("type", "tap"), ("target", str(target)), ("at", str(at))])
            assert r.status_code == 200, r.text
        reply = r.json()
        assert reply["status"] == "finished"  # the completion step finishes the run at once
        r = game_result(client, sid, "span")
        # ResearchKit's score: (round(log2 k) + 1) x 5 for the k-th right tap and for a whole
        # sequence of k: games 1 and 3 (span 3) 5 + 10 + 15 + 15 = 45 each, game 2's one right tap 5.
        assert r["score"] == 45 + 5 + 45 and r["numberOfGames"] == 4 and r["numberOfFailures"] == 2
        assert [x["sequence"] for x in r["gameRecords"]] == g
        assert [x["gameStatus"] for x in r["gameRecords"]] == ["success", "failure", "success", "failure"]
        assert [[t["timestamp"] for t in x["touchSamples"]] for x in r["gameRecords"]] == [
            [3.5, 4.0, 4.5], [9.0, 9.5], [13.0, 13.5, 14.0], [18.5]]
        # The finished session's page is the completion page.
        assert "All done" in client.get(path).text


def test_each_reply_is_the_game_to_draw_next(game_app, clock):
    with TestClient(game_app, base_url=BASE, headers=AUTH) as client:
        sid, path = open_game(client, SPAN_STEP)
        start = clock()
        form = game_form(client.get(path).text)
        g1 = span_sequence(7, "span", 1, 3)
        replies = []
        for i, t in enumerate(g1):  # each post arrives 50 ms after its tap
            clock.set(start + 3050 + 100 * i)
            replies.append(send(client, form, [("type", "tap"), ("target", str(t)), ("at", str(3000 + 100 * i))]).json())
        assert [r["game"]["tapped"] for r in replies[:2]] == [1, 2]
        last = replies[2]["game"]
        # Game 2 starts at the tap that ended game 1 (3.2 s): span 4, shown from there, one
        # tile a second, taps from 3.2 + 4 = 7.2 s.
        assert last["gameNumber"] == 2 and last["sequence"] == span_sequence(7, "span", 2, 4)
        assert last["showFrom"] == pytest.approx(3.2) and last["tapsFrom"] == pytest.approx(7.2)
        assert replies[2]["step"] == "span" and replies[2]["active"] == "running"
        # A page drawn now starts the script at the step's running time now.
        clock.set(start + 5000)
        again = game_form(client.get(path).text)
        assert again["elapsed"] == pytest.approx(5.0) and again["game"]["gameNumber"] == 2


# (step time the page measured, when the post arrives, on the server's clock) for game 1's three
# taps, and the times the engine records: a tap made while the one before was on its way (its
# post arriving 300 ms late, so the session was saved at 3.3 s) is dated at that save; a time
# after the post's arrival (a page clock running fast) is taken as the arrival.
@pytest.mark.parametrize("times, recorded", [
    ([(3000, 3300), (3100, 3400), (3500, 3550)], [3.0, 3.3, 3.5]),
    ([(9000, 3600), (4000, 4100), (4200, 4300)], [3.6, 4.0, 4.2]),
], ids=["before-the-last-save", "after-now"])
def test_the_page_times_are_kept_within_what_the_engine_takes(game_app, clock, times, recorded):
    with TestClient(game_app, base_url=BASE, headers=AUTH) as client:
        sid, path = open_game(client, dict(SPAN_STEP, maximumTests=1, maximumConsecutiveFailures=1))
        start = clock()
        form = game_form(client.get(path).text)
        for (at, arrives), target in zip(times, span_sequence(7, "span", 1, 3)):
            clock.set(start + arrives)
            assert send(client, form, [("type", "tap"), ("target", str(target)), ("at", str(at))]).status_code == 200
        samples = game_result(client, sid, "span")["gameRecords"][0]["touchSamples"]
        assert [t["timestamp"] for t in samples] == recorded


def test_refused_inputs_change_nothing(game_app, clock):
    with TestClient(game_app, base_url=BASE, headers=AUTH) as client:
        sid, path = open_game(client, SPAN_STEP)
        start = clock()
        form = game_form(client.get(path).text)
        clock.set(start + 1000)
        before = state_of(client, sid)
        g1 = span_sequence(7, "span", 1, 3)
        cases = [
            ([("type", "tap"), ("target", str(g1[0])), ("at", "900")], {}, 422, "sequencePlaying"),
            ([("type", "tap"), ("target", "99"), ("at", "900")], {}, 422, None),
            ([("type", "tap"), ("target", "-1")], {}, 400, None),
            ([("type", "tap"), ("target", "1e3")], {}, 400, None),
            ([("type", "tap"), ("target", "1"), ("at", "-5")], {}, 400, None),
            ([("type", "tap"), ("target", "1"), ("at", "99999999999999999999")], {}, 400, None),
            ([("type", "wave"), ("target", "1")], {}, 400, None),
            ([("type", "sample"), ("x", "nan"), ("y", "0"), ("z", "0")], {}, 400, None),
            ([("type", "tap"), ("target", str(g1[0]))], {"token": "0" * 64}, 403, None),
            ([("type", "tap"), ("target", str(g1[0]))], {"step": "done"}, 409, None),
        ]
        for pairs, changed, status, code in cases:
            r = send(client, {**form, **changed}, pairs, token=changed.get("token", ""))
            assert r.status_code == status, (pairs, r.status_code, r.text[:200])
            if code is not None:
                assert r.json()["code"] == code
            assert state_of(client, sid) == before, pairs
        # Not a form (the script never sends JSON), and not from this site: refused too.
        r = client.post(form["action"], content=json.dumps({"type": "tap", "target": 1}), headers=JSON)
        assert r.status_code == 415
        r = client.post(form["action"], content=b"type=tap&target=1", headers={
            "content-type": "application/x-www-form-urlencoded", "origin": "https://evil.example"})
        assert r.status_code == 403
        assert client.post("/r/not-a-token/input", content=b"type=tap", headers={
            "content-type": "application/x-www-form-urlencoded"}).status_code == 404
        assert state_of(client, sid) == before


def test_stroop_page_and_the_way_without_javascript(game_app, clock):
    with TestClient(game_app, base_url=BASE, headers=AUTH) as client:
        sid, path = open_game(client, STROOP_STEP)
        start = clock()
        words = stroop_words(7, "stroop", 3)
        page = client.get(path).text
        form = game_form(page)
        # The word, in its ink; the four buttons in the engine's order; the ink named for a
        # screen reader.
        assert f'class="stroop-word ink-{words[0][1]}"' in page
        assert f'<span class="word">{words[0][0].upper()}</span>' in page
        assert f"printed in {words[0][1]}" in page
        assert re.findall(r'class="color-button" data-key="(\w)">(\w+)<', page) == [
            ("r", "Red"), ("g", "Green"), ("b", "Blue"), ("y", "Yellow")]
        # With the script: a tap at 0.8 s (right), a key at 1.5 s (wrong), each posted 0.1 s later.
        clock.set(start + 900)
        wrong = next(c for c in COLORS if c != words[1][1])
        assert send(client, form, [("type", "tap"), ("target", str(COLORS.index(words[0][1]))), ("at", "800")]).status_code == 200
        clock.set(start + 1600)
        reply = send(client, form, [("type", "key"), ("key", wrong[0]), ("at", "1500")]).json()
        assert (reply["game"]["text"], reply["game"]["color"]) == words[2]
        # Without it: the button posts its tap with no time (dated when it arrives: 3 s), and the
        # page is drawn again.
        clock.set(start + 3000)
        r = send(client, form, [("type", "tap"), ("target", str(COLORS.index(words[2][1])))], as_json=False)
        assert r.status_code == 303 and r.headers["location"] == path
        r = game_result(client, sid, "stroop")
        assert [a["correct"] for a in r["attempts"]] == [True, False, True]
        assert [(a["startTime"], a["endTime"]) for a in r["attempts"]] == [(0, 0.8), (0.8, 1.5), (1.5, 3)]
        assert [a["colorSelected"] for a in r["attempts"]] == [words[0][1], wrong, words[2][1]]


def test_hostile_forms_get_a_clear_refusal_never_a_500(game_app, clock):
    with TestClient(game_app, base_url=BASE, headers=AUTH) as client:
        sid, path = open_game(client, STROOP_STEP)
        form = game_form(client.get(path).text)
        clock.set(clock() + 1000)
        before = state_of(client, sid)
        hostile = [
            [], [("type", "")], [("type", "key")], [("type", "key"), ("key", "r" * 65)],
            [("type", "key"), ("key", "\x00")], [("type", "key"), ("key", "красный")],
            [("type", "tap"), ("target", "٣")], [("type", "tap"), ("target", "9" * 30)],
            [("type", "tap"), ("target", "4")], [("type", "drag"), ("from", "0"), ("to", "2")],
            [("type", "sample"), ("x", "1e400"), ("y", "0"), ("z", "0")],
            [("type", "tap"), ("target", "0"), ("at", "1.5")], [("type", "tap"), ("target", "0"), ("at", "")],
            [("type", "tap"), ("type", "key"), ("target", "0"), ("key", "r"), ("at", "0")],
        ]
        for pairs in hostile:
            r = send(client, form, pairs)
            assert r.status_code in (400, 422), (pairs, r.status_code)
            assert state_of(client, sid) == before, pairs
        # The engine says why in its own words: a key it does not know is its wrongInput.
        r = send(client, form, [("type", "key"), ("key", "purple")])
        assert r.status_code == 422 and r.json()["code"] == "wrongInput"


def trail_layout(seed: int, step: str) -> List[int]:
    """docs/active-tasks.md: stream "<step>#trailmaking" shuffles the 24 cells of a 4 x 6 grid
    (Fisher-Yates as spatial span's); target k sits in the k-th cell of that order."""
    cells = list(range(24))
    g = PCG32(seed, fnv1a64(step + "#trailmaking"))
    for i in range(len(cells) - 1, 0, -1):
        j = g.below(i + 1)
        cells[i], cells[j] = cells[j], cells[i]
    return cells[:13]


TRAIL_B = ["1", "A", "2", "B", "3", "C", "4", "D", "5", "E", "6", "F", "7"]


def drawn_targets(page: str) -> List[Tuple[int, str, int, int]]:
    """The trail's buttons in the page's order: (target, label, column, row)."""
    return [(int(k), label, int(c), int(r)) for c, r, k, label in re.findall(
        r'class="target col-(\d) row-(\d)[^"]*" data-target="(\d+)"[^>]*>([^<]+)</button>', page)]


def test_trail_making_page_draws_the_seeded_layout_and_counts_errors(game_app, clock):
    with TestClient(game_app, base_url=BASE, headers=AUTH) as client:
        sid, path = open_game(client, {"type": "trailmaking", "identifier": "trail", "trailType": "B"}, seed=11)
        start = clock()
        page = client.get(path).text
        form = game_form(page)
        cells = trail_layout(11, "trail")
        # Each target in its cell (column and row from 1), labelled as trail B labels it, the
        # buttons in the board's order (row by row), not the trail's.
        expected = sorted(((k, TRAIL_B[k], cells[k] % 4 + 1, cells[k] // 4 + 1) for k in range(13)),
                          key=lambda t: (t[3], t[2]))
        assert drawn_targets(page) == expected
        assert 'points=""' in page  # nothing connected yet
        # Targets 0, 1, then a wrong tap (target 5), then 2 ... 12, one every 0.5 s.
        taps = [0, 1, 5] + list(range(2, 13))
        for i, target in enumerate(taps):
            at = 1000 + 500 * i
            clock.set(start + at + 20)
            r = send(client, form, [("type", "tap"), ("target", str(target)), ("at", str(at))])
            assert r.status_code == 200, r.text
            if i == 3:  # after 0, 1, (5), 2: three connected, the line through them
                reply = r.json()["game"]
                assert reply["next"] == 3 and reply["numberOfErrors"] == 1
                mid = client.get(path).text
                assert f'points="{" ".join(f"{cells[k] % 4 + 0.5:g},{cells[k] // 4 + 0.5:g}" for k in range(3))}"' in mid
        r = game_result(client, sid, "trail")
        assert r["trailType"] == "B" and r["numberOfErrors"] == 1
        assert [t["index"] for t in r["taps"]] == taps
        assert [t["incorrect"] for t in r["taps"]] == [False, False, True] + [False] * 11
        assert [t["timestamp"] for t in r["taps"]] == [(1000 + 500 * i) / 1000 for i in range(14)]


def test_the_page_ticks_a_game_that_timed_out(game_app, clock):
    """20 s without a right tap end a spatial span game (docs/active-tasks.md): the page's
    script posts a tick when the reply's deadline comes; one too early changes nothing."""
    with TestClient(game_app, base_url=BASE, headers=AUTH) as client:
        sid, path = open_game(client, SPAN_STEP)
        start = clock()
        form = game_form(client.get(path).text)
        g1 = span_sequence(7, "span", 1, 3)
        clock.set(start + 4000)
        reply = send(client, form, [("type", "tap"), ("target", str(g1[0])), ("at", "4000")]).json()
        assert reply["deadlineMs"] == 20_000  # 20 s from that right tap
        clock.set(start + 10_000)
        early = send(client, form, [("type", "tick")]).json()
        assert early["game"]["gameNumber"] == 1 and early["deadlineMs"] == 14_000
        clock.set(start + 24_000)
        late = send(client, form, [("type", "tick")]).json()
        # Game 2 (span 2, one shorter after the failure) starts when game 1 timed out, at 24 s.
        assert late["game"]["gameNumber"] == 2 and late["game"]["span"] == 2
        assert late["game"]["showFrom"] == 24 and late["game"]["sequence"] == span_sequence(7, "span", 2, 2)
        assert late["deadlineMs"] == 22_000  # tapsFrom 26 s + 20 s, from 24 s


def reaction_delays(seed: int, step: str, count: int, low: int = 4000, high: int = 10000) -> List[int]:
    """docs/active-tasks.md: stream "<step>#reactionTime" draws each wait's delay, the minimum
    interval plus a number below (maximum - minimum + 1), in milliseconds."""
    g = PCG32(seed, fnv1a64(step + "#reactionTime"))
    return [low + g.below(high - low + 1) for _ in range(count)]


def test_reaction_time_page_reports_presses_as_threshold_samples(game_app, clock):
    """The page's press is a motion sample of the threshold's size: one before the stimulus
    starts the wait again (a new delay), one after it is the response; no press by the timeout
    (3 s) is a timeout, which the page's tick processes."""
    with TestClient(game_app, base_url=BASE, headers=AUTH) as client:
        sid, path = open_game(client, {"type": "reactionTime", "identifier": "rt", "numberOfAttempts": 2,
                                       "thresholdAcceleration": 0.8})
        start = clock()
        page = client.get(path).text
        form = game_form(page)
        d = reaction_delays(7, "rt", 3)
        assert form["game"]["stimulusAt"] * 1000 == d[0] and form["deadline"] == str(d[0])
        assert 'id="reaction-press"' in page and 'data-threshold="0.8"' in page
        press = [("type", "sample"), ("x", "0.8"), ("y", "0"), ("z", "0")]
        clock.set(start + 1500)
        early = send(client, form, press + [("at", "1500")]).json()["game"]
        assert early["lastOutcome"]["outcome"] == "early"
        assert early["stimulusAt"] * 1000 == 1500 + d[1]  # the wait starts again, a new delay
        hit = 1500 + d[1] + 350
        clock.set(start + hit + 40)
        second = send(client, form, press + [("at", str(hit))]).json()["game"]
        assert second["attempt"] == 2 and second["stimulusAt"] * 1000 == hit + d[2]
        clock.set(start + hit + d[2] + 3000)  # the second attempt's timeout: the page ticks
        done = send(client, form, [("type", "tick")]).json()
        assert done["status"] == "finished"
        r = game_result(client, sid, "rt")
        assert r["numberOfAttempts"] == 2 and r["numberOfTimeouts"] == 1
        assert [a["earlyResponses"] for a in r["attempts"]] == [1, 0]
        assert [a["responseTime"] for a in r["attempts"]] == [0.35, None]
        assert [a["timestamp"] for a in r["attempts"]] == [(1500 + d[1]) / 1000, (hit + d[2]) / 1000]
        assert [a["stimulusDelay"] for a in r["attempts"]] == [d[1] / 1000, d[2] / 1000]
