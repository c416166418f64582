"""Issue 35's games in Chromium (Debian's, through Playwright, test_browser's fixtures): spatial span played in the
browser, and the same seed giving the same sequence from C, Python and the browser.

Time is the test's on both sides: the server runs on a ManualClock and the page on
Playwright's clock (page.clock: setTimeout and performance.now move only when the test says),
so the tiles light up, and the taps are dated, exactly when the test says; nothing waits on
real time. What the browser shows is read from the page (the lit tile), as a participant sees
it; every expected sequence is drawn by the reference PCG32 (bindings/python/tests/pcg32.py,
written from docs/randomization.md and docs/active-tasks.md), and the result fields are worked
out by hand from the documented rules."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any, Dict, List, Tuple

import httpx
import pytest
import stepkit

from conftest import AUTH, ROOT
from test_browser import axe, check_axe, no_horizontal_scroll  # noqa: F401 (fixtures)
from test_game_pages import COLORS, reaction_delays, span_sequence, stroop_words, trail_layout

HERE = Path(__file__).resolve().parent
START_MS = 1767258000000  # 2026-01-01T09:00:00Z

SPAN = {"type": "spatialSpanMemory", "identifier": "span", "initialSpan": 3, "minimumSpan": 2,
        "maximumSpan": 5, "maximumTests": 4, "maximumConsecutiveFailures": 2}
TASK = {"identifier": "span-task", "steps": [SPAN, {"type": "completion", "identifier": "done",
                                                    "title": "All done"}]}
STROOP_TASK = {"identifier": "stroop-task", "steps": [
    {"type": "stroop", "identifier": "stroop", "numberOfAttempts": 3},
    {"type": "completion", "identifier": "done", "title": "All done"}]}
RT_TASK = {"identifier": "rt-task", "steps": [
    {"type": "reactionTime", "identifier": "rt", "numberOfAttempts": 2},
    {"type": "completion", "identifier": "done", "title": "All done"}]}
TRAIL_TASK = {"identifier": "trail-task", "steps": [
    {"type": "trailmaking", "identifier": "trail", "trailType": "A"},
    {"type": "completion", "identifier": "done", "title": "All done"}]}
PLAN = "SFSF"  # success, failure, success, failure: spans 3, 4, 3, 4


def spans(plan: str) -> List[int]:
    """Each game's span by the rules: one longer after a success (at most maximumSpan), one
    shorter after a failure (at least minimumSpan), from initialSpan."""
    span, out = SPAN["initialSpan"], []
    for letter in plan:
        out.append(span)
        span = min(span + 1, SPAN["maximumSpan"]) if letter == "S" else max(span - 1, SPAN["minimumSpan"])
    return out


def reference(seed: int, plan: str = PLAN) -> List[List[int]]:
    return [span_sequence(seed, "span", k + 1, n) for k, n in enumerate(spans(plan))]


@pytest.fixture(scope="module")
def live(tmp_path_factory):
    from live import live_service

    with live_service(tmp_path_factory, "games", time_source="instance") as server:
        for task in (TASK, STROOP_TASK, TRAIL_TASK, RT_TASK):
            r = httpx.post(server.url + "/api/tasks", content=json.dumps(task),
                           headers={**AUTH, "content-type": "application/json"})
            assert r.status_code == 201, r.text
        yield server


def paused_page(context: Any, url: str) -> Any:
    """A page on Playwright's clock, paused: its time (timers, performance.now) moves only as
    the test says (page.clock.run_for)."""
    page = context.new_page()
    page.clock.install(time=START_MS - 60_000)
    page.clock.pause_at(START_MS)
    page.goto(url)
    return page


def passes_axe(context: Any, url: str, axe: Any, where: str, ready: str = "form.game") -> None:
    """axe-core and the 375 px width on the page as drawn (once ``ready`` is there), on the
    browser's own clock (axe-core times itself); the page is only read."""
    page = context.new_page()
    page.goto(url)
    page.wait_for_selector(ready)
    check_axe(axe, page, where)
    no_horizontal_scroll(page, where)
    page.close()


def check_game_page(live: Any, context: Any, url: str, axe: Any) -> None:
    """Spatial span's page while the tiles are shown (drawn at the step's time 0) and once they
    take taps (drawn at 3.1 s, past tapsFrom)."""
    passes_axe(context, url, axe, "span: showing", "#span-board[data-phase=showing]")
    live.clock.set(START_MS + 3100)
    passes_axe(context, url, axe, "span: tapping", "#span-board[data-phase=tapping]")
    live.clock.set(START_MS)


def drawn(page: Any, last: bool) -> None:
    """Waits until the page has drawn the reply to its last input (or, after the game's last
    input, shows the next step)."""
    if last:
        page.wait_for_selector("h1:text-is('All done')")
    else:
        page.wait_for_selector('form.game[data-busy="0"]')


def play_in_browser(live: Any, browser: Any, seed: int, plan: str, axe: Any = None,
                    viewport: Tuple[int, int] = (375, 667)) -> Tuple[List[List[int]], Dict[str, Any], List[List[int]]]:
    """Plays spatial span in Chromium, one game per letter of ``plan`` (S: the tiles as shown;
    F: a wrong first tap). Returns the sequences the page showed, the result the engine wrote,
    and the tap times (ms of step time) the test chose."""
    live.clock.set(START_MS)
    r = httpx.post(f"{live.url}/api/tasks/span-task/sessions", headers={**AUTH, "content-type": "application/json"},
                   content=json.dumps({"options": {"seed": seed}}))
    assert r.status_code == 201, r.text
    sid, url = r.json()["session"], r.json()["resumeUrl"]
    context = browser.new_context(viewport={"width": viewport[0], "height": viewport[1]}, locale="en-US")
    if axe is not None:
        check_game_page(live, context, url, axe)
    page = paused_page(context, url)  # drawn at the step's time 0 (the server's clock has not moved)
    page.wait_for_selector("#span-board[data-phase=showing]")
    now = [0]  # the page's step time, ms: moved by the test only

    def advance(to: int) -> None:
        page.clock.run_for(to - now[0])
        now[0] = to

    shown: List[List[int]] = []
    times: List[List[int]] = []
    show_from = 0
    for k, letter in enumerate(plan):
        span = spans(plan)[k]
        sequence = []
        for i in range(span):  # tile i lights at showFrom + i x playSpeed (1 s)
            advance(show_from + 1000 * i + (1 if i == 0 else 0))
            lit = page.locator("#span-board .tile.lit")
            assert lit.count() == 1, (k, i)
            sequence.append(int(lit.get_attribute("data-tile")))
        shown.append(sequence)
        advance(show_from + 1000 * span)  # tapsFrom: the tiles go dark and take taps
        page.wait_for_selector("#span-board[data-phase=tapping]")
        assert page.locator("#span-board .tile.lit").count() == 0
        targets = sequence if letter == "S" else [0 if sequence[0] != 0 else 1]
        game_times = []
        for j, tile in enumerate(targets):
            at = show_from + 1000 * span + 300 + 200 * j
            advance(at)
            live.clock.set(START_MS + at + 50)  # the post arrives 50 ms after the tap
            last = k == len(plan) - 1 and j == len(targets) - 1
            with page.expect_response(lambda r: r.url.endswith("/input")) as response:
                # force: no wait for animation frames, which the paused clock holds back
                page.locator(f'#span-board .tile[data-tile="{tile}"]').click(force=True)
            assert response.value.status == 200, response.value.text()
            game_times.append(at)
            drawn(page, last)
        times.append(game_times)
        show_from = game_times[-1]  # the next game starts at the tap that ended this one
    if axe is not None:
        page.clock.resume()  # axe-core times itself with setTimeout
        check_axe(axe, page, "span: finished")
    context.close()
    result = httpx.get(f"{live.url}/api/sessions/{sid}/result", headers=AUTH).json()
    game = next(r for r in result["results"] if r["identifier"] == "span")["results"][0]
    return shown, game, times


def test_spatial_span_played_in_the_browser(live, browser, axe):
    shown, r, times = play_in_browser(live, browser, 7, PLAN, axe)
    expected = reference(7)
    assert shown == expected
    assert r["numberOfGames"] == 4 and r["numberOfFailures"] == 2
    # ResearchKit's score: (round(log2 k) + 1) x 5 for the k-th right tap and for a whole
    # sequence of k: games 1 and 3 (span 3, recalled whole) 5 + 10 + 15 + 15 = 45 each; games 2
    # and 4 end at their first tap, a wrong one.
    assert r["score"] == 45 + 45
    records = r["gameRecords"]
    assert [x["sequence"] for x in records] == expected
    assert [x["gameStatus"] for x in records] == ["success", "failure", "success", "failure"]
    # Each tap dated as the page measured it (performance.now), mapped onto the session's clock.
    assert [[t["timestamp"] for t in x["touchSamples"]] for x in records] == [[at / 1000 for at in g] for g in times]
    assert [[t["correct"] for t in x["touchSamples"]] for x in records] == [[True] * 3, [False], [True] * 3, [False]]


@pytest.fixture(scope="module")
def c_host(tmp_path_factory):
    """web/tests/data/span_sequences.c, built against include/stepkit.h and the library."""
    cc = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")  # as scripts/lib/deps.sh
    assert cc, "a C compiler (cc) is needed to build the C host"
    library = Path(stepkit.library_path()).resolve()
    soname = library.parent / "libstepkit.so.0"
    out = tmp_path_factory.mktemp("c-host") / "span_sequences"
    subprocess.run([cc, "-std=c99", "-Wall", "-Werror", "-o", str(out), str(HERE / "data" / "span_sequences.c"),
                    f"-I{ROOT / 'include'}", str(soname if soname.exists() else library),
                    f"-Wl,-rpath,{library.parent}"], check=True, capture_output=True, timeout=120)
    return out


def c_sequences(c_host: Path, seed: int, plan: str, tmp_path: Path) -> List[List[int]]:
    task = tmp_path / "span-task.json"
    task.write_text(json.dumps(TASK))
    done = subprocess.run([str(c_host), str(task), str(seed), plan], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return [[int(t) for t in line.split(":")[1].split()] for line in done.stdout.splitlines()]


def python_sequences(seed: int, plan: str) -> List[List[int]]:
    """The binding's: the state's sequence of each game, played as the C host plays."""
    session = stepkit.Task.from_json(TASK).open({"seed": seed})
    clock = stepkit.ManualClock(START_MS)
    session.set_clock(clock)
    out = []
    with session:
        for letter in plan:
            sequence = session.state["active"]["game"]["sequence"]
            out.append(sequence)
            clock.advance(1000 * (len(sequence) + 1))
            for tile in (sequence if letter == "S" else [0 if sequence[0] != 0 else 1]):
                clock.advance(100)
                session.input({"type": "tap", "target": tile})
    return out


@pytest.mark.parametrize("seed", [7, 2**53 - 1])
def test_the_same_seed_gives_the_same_sequence_from_c_python_and_the_browser(live, browser, c_host, tmp_path, seed):
    expected = reference(seed)
    from_c = c_sequences(c_host, seed, PLAN, tmp_path)
    from_python = python_sequences(seed, PLAN)
    from_browser, _, _ = play_in_browser(live, browser, seed, PLAN, viewport=(1280, 800))
    assert from_c == expected
    assert from_python == expected
    assert from_browser == expected
    if seed == 7:  # the C test's (bindings/c/tests/test_games.c) sequences for seed 7
        assert expected == [[4, 3, 5], [5, 0, 2, 7], [7, 5, 6], [0, 1, 4, 5]]


def open_page(live: Any, browser: Any, task: str, seed: int, viewport: Tuple[int, int] = (375, 667)) -> Tuple[str, Any, Any]:
    live.clock.set(START_MS)
    r = httpx.post(f"{live.url}/api/tasks/{task}/sessions", headers={**AUTH, "content-type": "application/json"},
                   content=json.dumps({"options": {"seed": seed}}))
    assert r.status_code == 201, r.text
    context = browser.new_context(viewport={"width": viewport[0], "height": viewport[1]}, locale="en-US")
    return r.json()["session"], context, r.json()["resumeUrl"]


def game_of(live: Any, sid: str, step: str) -> Dict[str, Any]:
    result = httpx.get(f"{live.url}/api/sessions/{sid}/result", headers=AUTH).json()
    return next(r for r in result["results"] if r["identifier"] == step)["results"][0]


def test_stroop_and_trail_making_in_the_browser(live, browser, axe):
    """Both pages pass axe-core at 375 px without sideways scrolling; Stroop is played with its
    keys and buttons, trail making with taps on the drawn targets (one wrong), on the page's
    clock; the engine's result holds the page's times."""
    sid, context, url = open_page(live, browser, "stroop-task", 7)
    passes_axe(context, url, axe, "stroop")
    page = paused_page(context, url)
    words = stroop_words(7, "stroop", 3)
    assert page.locator("#stroop-word .word").inner_text() == words[0][0].upper()
    assert "ink-" + words[0][1] in page.locator("#stroop-word").get_attribute("class")
    wrong = next(c for c in COLORS if c != words[1][1])
    before = 0
    for at, how in [(700, ("key", words[0][1][0])), (1500, ("key", wrong[0])),
                    (2600, ("button", words[2][1].capitalize()))]:
        page.clock.run_for(at - before)
        before = at
        live.clock.set(START_MS + at + 30)
        with page.expect_response(lambda r: r.url.endswith("/input")):
            if how[0] == "key":
                page.keyboard.press(how[1])
            else:
                page.get_by_role("button", name=how[1]).click(force=True)
        drawn(page, at == 2600)
        if at == 700:  # the next word is drawn from the reply
            assert page.locator("#stroop-word .word").inner_text() == words[1][0].upper()
    r = game_of(live, sid, "stroop")
    assert [a["correct"] for a in r["attempts"]] == [True, False, True]
    assert [(a["startTime"], a["endTime"]) for a in r["attempts"]] == [(0, 0.7), (0.7, 1.5), (1.5, 2.6)]
    context.close()

    sid, context, url = open_page(live, browser, "trail-task", 3)
    passes_axe(context, url, axe, "trail making")
    page = paused_page(context, url)
    cells = trail_layout(3, "trail")
    taps = [0, 1, 2, 7] + list(range(3, 13))  # target 7 out of turn: an error
    for i, target in enumerate(taps):
        at = 2000 + 400 * i
        page.clock.run_for(at - (0 if i == 0 else 2000 + 400 * (i - 1)))
        live.clock.set(START_MS + at + 30)
        button = page.locator(f'#trail-board .target[data-target="{target}"]')
        # Drawn in its seeded cell, labelled with its place in trail A.
        assert button.inner_text() == str(target + 1)
        assert f"col-{cells[target] % 4 + 1} row-{cells[target] // 4 + 1}" in button.get_attribute("class")
        with page.expect_response(lambda r: r.url.endswith("/input")):
            button.click(force=True)
        drawn(page, i == len(taps) - 1)
        if i == 3:
            assert "error" in page.locator('#trail-board .target[data-target="7"]').get_attribute("class")
            assert page.locator("#game-status").inner_text() == "Not that one."
            assert len(page.locator("#trail-line").get_attribute("points").split()) == 3
    r = game_of(live, sid, "trail")
    assert r["numberOfErrors"] == 1
    assert [t["index"] for t in r["taps"]] == taps
    assert [t["timestamp"] for t in r["taps"]] == [(2000 + 400 * i) / 1000 for i in range(len(taps))]
    context.close()


def test_reaction_time_in_the_browser(live, browser, axe):
    """The circle lights up when the engine's stimulus comes (on the page's clock); a press
    before it is too soon (the wait starts again, a new delay drawn from the seed), a press after
    it (the button, or the space bar) is the response, timed by the page."""
    sid, context, url = open_page(live, browser, "rt-task", 5)
    passes_axe(context, url, axe, "reaction time")
    page = paused_page(context, url)
    d = reaction_delays(5, "rt", 3)
    signal = page.locator("#reaction-signal")

    def lit() -> bool:
        return bool(signal.evaluate("e => e.classList.contains('on')"))

    now = 0

    def until(at: int) -> None:  # both clocks to the step's time `at` (ms)
        nonlocal now
        live.clock.set(START_MS + at)
        page.clock.run_for(at - now)
        now = at

    until(1000)
    assert not lit()
    with page.expect_response(lambda r: r.url.endswith("/input")):
        page.get_by_role("button", name="Press").click(force=True)
    drawn(page, False)
    assert page.locator("#game-status").inner_text().startswith("Too soon")
    until(1000 + d[1] - 1)
    assert not lit()
    until(1000 + d[1])
    assert lit()
    first = 1000 + d[1] + 240
    until(first)
    drawn(page, False)  # the page's tick at the stimulus, if it went
    page.keyboard.press("Space")
    drawn(page, False)
    assert not lit()  # the second attempt waits
    until(first + d[2])
    assert lit()
    second = first + d[2] + 410
    until(second)
    drawn(page, False)
    with page.expect_response(lambda r: r.url.endswith("/input")):
        page.get_by_role("button", name="Press").click(force=True)
    drawn(page, True)
    r = game_of(live, sid, "rt")
    assert r["numberOfAttempts"] == 2 and r["numberOfTimeouts"] == 0
    assert [a["responseTime"] for a in r["attempts"]] == [0.24, 0.41]
    assert [a["earlyResponses"] for a in r["attempts"]] == [1, 0]
    assert [a["timestamp"] for a in r["attempts"]] == [(1000 + d[1]) / 1000, (first + d[2]) / 1000]
    context.close()
