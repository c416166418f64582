"""The games of the predefined active tasks in the browser (docs/active-tasks.md): what a game
step's page draws, and ``POST /r/<token>/input``, which hands the engine one input.

The engine decides everything: which tiles, words and targets to show and when (the state's
``active.game``, its times in seconds of the step's running time), whether an input counts,
and the result. The page draws the game from that state; ``static/games.js`` plays its timing
(a tile lit at ``showFrom`` + i × ``playSpeed``...) on the page's own clock, measured from the
step's running time when the page was drawn (``active.elapsed``), and posts each input with
the moment it happened (``at``: milliseconds of the step's running time, from
``performance.now()``). The service maps that onto the session's clock (Service.game_input).

Without JavaScript the game's buttons are plain submit buttons: each posts its input, dated
when it arrives, and the page is drawn again (spatial span's sequence needs the script to be
shown, and says so).

The input route takes a form (as every participant page does: same origin, form body) with
the page's ``_step`` and ``_token`` (an HMAC of the session's id: Service.input_token), and
answers JSON when asked for it (``Accept: application/json``: the script) — the new game state
or the engine's refusal — else redirects to the session's page."""

from __future__ import annotations

import hmac
import json
import math
from typing import Any, Dict, List, Optional

import stepkit
from anyio import to_thread
from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse, RedirectResponse, Response

from .common import service_of
from .pages import form_post, page_limiter
from .service import Refused, Stale
from .widgets import Fields

router = APIRouter(include_in_schema=False)

#: The games a page draws (the state's ``active.game.type``).
GAMES = ("spatialSpanMemory", "stroop", "trailmaking", "reactionTime")

#: Stroop's print colours: the buttons' labels and the word's ink (static/games.css).
COLOR_NAMES = {"red": "Red", "green": "Green", "blue": "Blue", "yellow": "Yellow"}

# What an input's fields may be: the event members stepkit_session_input takes.
_INT_FIELDS = ("target", "from", "to")
_NUMBER_FIELDS = ("x", "y", "z")
_TYPES = ("tap", "key", "drag", "sample")
# The step time an input may claim: up to a day (the engine checks the rest).
_MAX_STEP_MS = 86_400_000


def game_view(state: Dict[str, Any], token: str, csrf: str, now: int) -> Optional[Dict[str, Any]]:
    """What the page draws for a game step (None for any other step): the game's state as the
    engine gives it (also as JSON for the script), the step's running time now, and the tiles,
    word or buttons to draw before the script runs."""
    active = state.get("active") or {}
    game = active.get("game")
    if not isinstance(game, dict) or game.get("type") not in GAMES or active.get("status") != "running":
        return None
    view: Dict[str, Any] = {
        "type": game["type"], "game": game, "json": json.dumps(game, separators=(",", ":")),
        "elapsed": active.get("elapsed") or 0, "action": f"/r/{token}/input", "token": csrf,
        "step": str((state.get("step") or {}).get("identifier")),
        "deadline": "" if deadline_ms(state, now) is None else deadline_ms(state, now),
    }
    if game["type"] == "spatialSpanMemory":
        view["rows"] = tile_rows(game)
    elif game["type"] == "trailmaking":
        view["targets"] = trail_targets(game)
        view["line"] = trail_line(game)
    else:
        view["colors"] = [{"index": i, "name": c, "label": COLOR_NAMES.get(str(c), str(c))}
                          for i, c in enumerate(game.get("colors") or [])]
    return view


def _event(fields: Fields) -> Optional[Dict[str, Any]]:
    """The input a form carries, as stepkit_session_input takes it (None: ``type=tick``, the
    page's timer saying a moment of the game came due); 400 when a field is not what its kind
    says (the engine checks the rest: shape, targets, times)."""
    kind = fields.get("type")
    if kind == "tick":
        return None
    if kind not in _TYPES:
        raise Refused(400, {"code": "EINVAL", "message": "The input's type must be tap, key, "
                            "drag, sample or tick: nothing was recorded."})
    event: Dict[str, Any] = {"type": kind}
    for name in _INT_FIELDS:
        if fields.has(name):
            text = fields.get(name) or ""
            if not (text.isascii() and text.isdigit() and len(text) <= 9):
                raise Refused(400, {"code": "EINVAL", "message": f"The input's {name} must be "
                                    "a whole number: nothing was recorded."})
            event[name] = int(text)
    for name in _NUMBER_FIELDS:
        if fields.has(name):
            try:
                value = float(fields.get(name) or "")
            except ValueError:
                value = math.nan
            if not math.isfinite(value):
                raise Refused(400, {"code": "EINVAL", "message": f"The input's {name} must be "
                                    "a number: nothing was recorded."})
            event[name] = value
    if fields.has("key"):
        event["key"] = fields.get("key") or ""
    return event


def _step_ms(fields: Fields) -> Optional[int]:
    if not fields.has("at"):
        return None
    text = fields.get("at") or ""
    if not (text.isascii() and text.isdigit() and int(text) <= _MAX_STEP_MS):
        raise Refused(400, {"code": "EINVAL", "message": "The input's time (at) must be a whole "
                            "number of milliseconds of the step's time: nothing was recorded."})
    return int(text)


def _wants_json(request: Request) -> bool:
    return "application/json" in request.headers.get("accept", "")


@router.post("/r/{token}/input", dependencies=[Depends(form_post)])
async def game_input(request: Request, token: str) -> Response:
    form = await request.form()
    fields = Fields(list(form.multi_items()))
    return await to_thread.run_sync(_input, request, token, fields, limiter=page_limiter(request))


def _input(request: Request, token: str, fields: Fields) -> Response:
    service = service_of(request)
    row = service.session_for_token(token)  # an unknown link: 404
    sent = fields.get("_token") or ""
    if not hmac.compare_digest(sent.encode("utf-8"), service.input_token(row).encode("utf-8")):
        raise Refused(403, {"code": "ECSRF", "message": "This page has expired or did not come "
                            "from this site: nothing was recorded. Reload the page."})
    event, step_ms = _event(fields), _step_ms(fields)
    json_reply = _wants_json(request)
    try:
        outcome = service.game_input(row, fields.get("_step") or "", event, step_ms)
    except Stale:
        if json_reply:
            return JSONResponse({"code": "ESTALE", "message": "The page is not the current one: "
                                 "reload it."}, status_code=409)
        return RedirectResponse(f"/r/{token}?notice=stale", status_code=303)
    if not json_reply:
        return RedirectResponse(f"/r/{token}", status_code=303)
    if outcome.refused:
        error = outcome.errors[0] if outcome.errors else {}
        return JSONResponse({"code": error.get("code"), "message": error.get("message"),
                             "errors": outcome.errors}, status_code=422)
    return JSONResponse(reply(outcome.state, service.now()))


def deadline_ms(state: Dict[str, Any], now: int) -> Optional[int]:
    """Milliseconds from ``now`` to the state's ``nextDeadline`` (a game's timeout or window),
    or None: when the page's script ticks."""
    deadline = state.get("nextDeadline")
    return max(0, stepkit.parse_iso8601_ms(deadline) - now) if isinstance(deadline, str) else None


def reply(state: Dict[str, Any], now: int) -> Dict[str, Any]:
    """What the script needs after an input: whether the page still shows the current step,
    the game to draw now, and when to tick."""
    active = state.get("active") or {}
    step = state.get("step") or {}
    return {"status": state.get("status"), "step": step.get("identifier"),
            "active": active.get("status"), "elapsed": active.get("elapsed"),
            "game": active.get("game"), "deadlineMs": deadline_ms(state, now)}


def tile_rows(game: Dict[str, Any]) -> List[List[int]]:
    """Spatial span's board: its tiles' numbers, row by row (as the engine numbers them)."""
    rows, columns = int(game.get("rows") or 0), int(game.get("columns") or 0)
    return [[r * columns + c for c in range(columns)] for r in range(rows)]


def trail_targets(game: Dict[str, Any]) -> List[Dict[str, Any]]:
    """Trail making's targets as the board draws them: each in its grid cell (the state's ``x``
    and ``y`` are the cell's centre as fractions of the board), 1-based column and row for the
    CSS grid, in the board's order (row by row), not the trail's, so that moving from button to
    button with the keyboard does not give the trail away."""
    columns, rows = int(game.get("columns") or 1), int(game.get("rows") or 1)
    reached = int(game.get("next") or 0)
    targets = []
    for k, t in enumerate(game.get("targets") or []):
        column = min(columns - 1, max(0, int(float(t.get("x") or 0) * columns)))
        row = min(rows - 1, max(0, int(float(t.get("y") or 0) * rows)))
        targets.append({"index": k, "label": str(t.get("label")), "column": column + 1, "row": row + 1,
                        "done": k < reached})
    return sorted(targets, key=lambda t: (t["row"], t["column"]))


def trail_line(game: Dict[str, Any]) -> str:
    """The line through the connected targets (0 … next − 1), as SVG points on a board of
    ``columns`` × ``rows`` units."""
    columns, rows = int(game.get("columns") or 1), int(game.get("rows") or 1)
    reached = int(game.get("next") or 0)
    points = [(float(t.get("x") or 0) * columns, float(t.get("y") or 0) * rows)
              for t in (game.get("targets") or [])[:reached]]
    return " ".join(f"{x:g},{y:g}" for x, y in points)
