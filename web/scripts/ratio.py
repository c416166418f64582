"""The service's page POSTs against a bare endpoint doing the same conditional UPDATE.

    python web/scripts/ratio.py [--db sqlite|postgres] [--seconds 15] [--concurrency 16 64]

For each database it starts, on 127.0.0.1 with one Uvicorn worker each and the service's own
HTTP protocol class (stepkit_web.server):

- the service (``python -m stepkit_web serve``), with daily-checkin registered; each
  participant posts its page (``next`` with an answer on the first step, ``back`` from the
  second: a restore, an engine action, a save and the conditional UPDATE each time),
  ``--posts-per-session`` times (50) to a session, then moves on to a fresh one (sessions
  made through the API before each run, not timed): a session's restoration data grows with
  every action (its audit trail), so posting to the same sessions run after run would measure
  ever larger restores and saves, not a participant's page; and
- a bare FastAPI app on the same database whose POST runs only
  ``UPDATE sessions SET saved=…, version=version+1 … WHERE id=:id AND version=:v`` (the same
  restoration text written back, on the same engine settings: WAL and synchronous=FULL on
  SQLite) and answers 303; each participant posts to one fresh session, writing its first
  restoration data back every time (smaller than the service's, which holds up to 50 actions
  more).

The load client is a small asyncio loop over raw keep-alive HTTP/1.1 connections (one per
participant; no HTTP library), bounded in time (``--seconds`` after a 2 s warm-up) and in
count (``--max-requests``). Each configuration runs the service and the bare app one after the
other, twice, alternating, and keeps the better run of each. Reported per configuration:
requests per second, the ratio service/bare, the ratio of their CPU per request (bare/service),
the server's CPU time per request (utime+stime of
the server process from /proc), the client's own CPU per request, p50/p95/p99 latency.
Not part of the test command: the figures go to web/README.md."""


import argparse
import asyncio
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple
from urllib.parse import urlencode

from page_posts import CHECKIN, after, checkin_fields, database

API_KEY = "ratio-api-key"
KEY = "ratio-integrity-key"


# -- the bare endpoint (run in its own process: ``ratio.py bare --db URL --port P``) -------------

def bare_app(db_url: str):
    import sqlalchemy as sa
    from fastapi import FastAPI, Request
    from fastapi.responses import RedirectResponse, Response
    from starlette.concurrency import run_in_threadpool

    from stepkit_web.db import make_engine, now_iso, sessions

    engine = make_engine(db_url)
    app = FastAPI()
    saved_text: Dict[str, str] = {}

    def update(session_id: str, version: int) -> bool:
        with engine.connect() as conn:
            conn = conn.execution_options(stepkit_write=True)
            with conn.begin():
                if session_id not in saved_text:
                    saved_text[session_id] = conn.execute(sa.select(sessions.c.saved).where(
                        sessions.c.id == session_id)).scalar_one()
                res = conn.execute(
                    sessions.update()
                    .where(sessions.c.id == session_id, sessions.c.version == version)
                    .values(saved=saved_text[session_id], saved_at=int(time.time() * 1000),
                            version=version + 1, updated_at=now_iso()))
                return res.rowcount == 1

    @app.post("/bare/{session_id}")
    async def bare(request: Request, session_id: str) -> Response:
        form = await request.form()
        ok = await run_in_threadpool(update, session_id, int(form.get("_version") or 0))
        return RedirectResponse(f"/bare/{session_id}" + ("" if ok else "?stale"),
                                status_code=303)

    @app.get("/healthz")
    def healthz() -> Dict[str, bool]:
        return {"ok": True}

    return app


def serve_bare(db_url: str, port: int) -> None:
    import uvicorn

    from stepkit_web.server import GuardedH11Protocol

    uvicorn.run(bare_app(db_url), host="127.0.0.1", port=port, log_level="warning",
                http=GuardedH11Protocol, timeout_keep_alive=5)


# -- the load client ------------------------------------------------------------------------------

class Conn:
    """One keep-alive HTTP/1.1 connection; ``post`` returns (status, location)."""

    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port
        self.reader: Optional[asyncio.StreamReader] = None
        self.writer: Optional[asyncio.StreamWriter] = None

    async def open(self) -> None:
        self.reader, self.writer = await asyncio.open_connection(self.host, self.port)

    async def post(self, path: str, body: bytes) -> Tuple[int, str, float]:
        assert self.reader and self.writer
        origin = f"http://{self.host}:{self.port}"
        self.writer.write(
            f"POST {path} HTTP/1.1\r\nHost: {self.host}:{self.port}\r\nOrigin: {origin}\r\n"
            f"Content-Type: application/x-www-form-urlencoded\r\n"
            f"Content-Length: {len(body)}\r\n\r\n".encode() + body)
        head = await self.reader.readuntil(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split(" ", 2)[1])
        length, location, engine = 0, "", 0.0
        for line in lines[1:]:
            name, _, value = line.partition(":")
            name = name.strip().lower()
            if name == "content-length":
                length = int(value.strip())
            elif name == "location":
                location = value.strip()
            elif name == "server-timing":  # the service's engine;dur=… (ms)
                for part in value.split(","):
                    if part.strip().startswith("engine;dur="):
                        engine = float(part.strip()[len("engine;dur="):])
        if length:
            await self.reader.readexactly(length)
        return status, location, engine

    def close(self) -> None:
        if self.writer:
            self.writer.close()


def proc_cpu(pid: int) -> float:
    """utime + stime of a process and its children (seconds)."""
    total = 0.0
    tick = os.sysconf("SC_CLK_TCK")
    from harness import children  # the load harness's process walk (tests/harness.py)

    pids = [pid] + children(pid)
    for p in pids:
        try:
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / tick
    return total


async def drive(port: int, targets: List[Dict[str, Any]], kind: str, seconds: float,
                max_requests: int, posts_per_session: int,
                warmup: float = 2.0) -> Dict[str, Any]:
    """Each target is one participant: {"paths": its fresh sessions' addresses, "v0", "s0":
    their version and step, …}; it posts ``posts_per_session`` times to each in turn. Returns
    the figures."""
    short = [0]  # participants that used up their sessions before the end
    latencies: List[float] = []
    engine_ms: List[float] = []
    counted = [0]
    errors: Dict[str, int] = {}
    start = time.monotonic()
    measure_from = start + warmup
    stop_at = measure_from + seconds

    async def participant(t: Dict[str, Any]) -> None:
        conn = Conn("127.0.0.1", port)
        await conn.open()
        try:
            while time.monotonic() < stop_at and counted[0] < max_requests:
                if t["posts"] >= posts_per_session:  # on to this participant's next session
                    t["posts"] = 0
                    t["next"] += 1
                    if t["next"] >= len(t["paths"]):
                        short[0] += 1
                        break
                    t["path"], t["version"], t["step"] = t["paths"][t["next"]], t["v0"], t["s0"]
                fields = (checkin_fields(t["step"], t["version"]) if kind == "service"
                          else [("_version", str(t["version"]))])
                body = urlencode(fields).encode()
                sent = time.monotonic()
                status, location, engine = await conn.post(t["path"], body)
                done = time.monotonic()
                if status != 303 or "stale" in location or "error" in location:
                    errors[f"{status} {location[-20:]}"] = errors.get(
                        f"{status} {location[-20:]}", 0) + 1
                    raise RuntimeError(f"{kind}: unexpected {status} {location}")
                t["version"] += 1
                t["posts"] += 1
                t["step"] = after(t["step"])
                if sent >= measure_from and done <= stop_at:
                    latencies.append(done - sent)
                    engine_ms.append(engine)
                    counted[0] += 1
        finally:
            conn.close()

    await asyncio.gather(*(participant(t) for t in targets))
    if short[0]:
        raise RuntimeError(f"{kind}: {short[0]} participants ran out of sessions; "
                           "raise --max-rate")
    return {"requests": counted[0], "latencies": latencies, "errors": errors,
            "engine_ms": sum(engine_ms) / max(1, len(engine_ms))}


def run_config(kind: str, port: int, pid: int, targets: List[Dict[str, Any]], seconds: float,
               max_requests: int, posts_per_session: int) -> Dict[str, Any]:
    from harness import percentile

    cpu0, client0 = proc_cpu(pid), time.process_time()
    wall0 = time.monotonic()
    out = asyncio.run(drive(port, targets, kind, seconds, max_requests, posts_per_session))
    wall = time.monotonic() - wall0
    cpu, client = proc_cpu(pid) - cpu0, time.process_time() - client0
    n = max(1, out["requests"])
    lat = out["latencies"]
    # CPU over the whole run (warm-up included) per request made in it.
    made = n * wall / max(seconds, 1e-9)
    return {"kind": kind, "participants": len(targets), "requests": out["requests"],
            "rps": round(out["requests"] / seconds, 1),
            "server_cpu_ms_per_request": round(cpu / made * 1000, 3),
            "client_cpu_ms_per_request": round(client / made * 1000, 3),
            "engine_ms_per_request": round(out["engine_ms"], 3),
            "p50_ms": round(percentile(lat, 50) * 1000, 2),
            "p95_ms": round(percentile(lat, 95) * 1000, 2),
            "p99_ms": round(percentile(lat, 99) * 1000, 2), "errors": out["errors"]}


# -- orchestration ---------------------------------------------------------------------------------

def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "bare":
        p = argparse.ArgumentParser()
        p.add_argument("bare")
        p.add_argument("--db", required=True)
        p.add_argument("--port", type=int, required=True)
        a = p.parse_args()
        serve_bare(a.db, a.port)
        return 0
    p = argparse.ArgumentParser()
    p.add_argument("--db", choices=["sqlite", "postgres"], default="sqlite")
    p.add_argument("--seconds", type=float, default=15.0)
    p.add_argument("--concurrency", type=int, nargs="+", default=[16, 64])
    p.add_argument("--max-requests", type=int, default=200_000)
    p.add_argument("--rounds", type=int, default=2)
    # A session's restoration data grows with every action (its audit trail): posting to the
    # same sessions for minutes would measure ever larger restores and saves. Each participant
    # posts this many times to a session, then moves to a fresh one.
    p.add_argument("--posts-per-session", type=int, default=50)
    # The most requests per second a run can reach (sizes the fresh sessions made per run).
    p.add_argument("--max-rate", type=float, default=1000.0)
    a = p.parse_args()

    work = Path(tempfile.mkdtemp(prefix="stepkit-ratio-"))
    with database(a.db, work) as db_url:
        return measure(a, work, db_url)


def measure(a: argparse.Namespace, work: Path, db_url: str) -> int:
    """Starts the service and the bare app on ``db_url`` and runs every configuration."""
    import httpx

    from harness import free_port, wait_ready

    env = dict(os.environ, STEPKIT_WEB_INTEGRITY_KEY=KEY, STEPKIT_WEB_API_KEY=API_KEY,
               PYTHONUNBUFFERED="1")
    sport, bport = free_port(), free_port()
    procs: List[subprocess.Popen] = []
    log = open(work / "servers.log", "w")
    try:
        service = subprocess.Popen([sys.executable, "-m", "stepkit_web", "serve", "--db", db_url,
                                    "--host", "127.0.0.1", "--port", str(sport)],
                                   env=env, stdout=log, stderr=subprocess.STDOUT)
        procs.append(service)
        wait_ready(f"http://127.0.0.1:{sport}/healthz", 120, service)
        bare = subprocess.Popen([sys.executable, __file__, "bare", "--db", db_url, "--port",
                                 str(bport)], env=env, stdout=log, stderr=subprocess.STDOUT)
        procs.append(bare)
        wait_ready(f"http://127.0.0.1:{bport}/healthz", 120, bare)
        api = httpx.Client(base_url=f"http://127.0.0.1:{sport}", timeout=60, headers={
            "authorization": f"Bearer {API_KEY}", "content-type": "application/json"})
        r = api.post("/api/tasks", content=CHECKIN.read_bytes())
        assert r.status_code == 201, r.text
        def fresh(n: int, kind: str) -> List[Dict[str, Any]]:
            """n participants, each with enough fresh sessions for one run (the bare endpoint
            writes the same text at every post: one each)."""
            each = 1 if kind == "bare" else \
                max(1, int(a.max_rate * (a.seconds + 2) / n / a.posts_per_session) + 1)
            made = [api.post("/api/tasks/daily-checkin/sessions").json()
                    for _ in range(n * each)]
            info = api.get(f"/api/sessions/{made[0]['session']}").json()
            return [{"sessions": made[i * each:(i + 1) * each], "v0": info["version"],
                     "s0": info["state"]["step"]["identifier"]} for i in range(n)]

        results = []
        for n in a.concurrency:
            best: Dict[str, Dict[str, Any]] = {}
            for _ in range(a.rounds):
                for kind, port, pid in (("service", sport, service.pid),
                                        ("bare", bport, bare.pid)):
                    targets = []
                    for f in fresh(n, kind):
                        paths = [f"/r/{m['resumeUrl'].rsplit('/', 1)[1]}" if kind == "service"
                                 else f"/bare/{m['session']}" for m in f["sessions"]]
                        targets.append({"paths": paths, "next": 0, "posts": 0,
                                        "path": paths[0], "v0": f["v0"], "s0": f["s0"],
                                        "version": f["v0"], "step": f["s0"]})
                    res = run_config(kind, port, pid, targets, a.seconds, a.max_requests,
                                     a.posts_per_session if kind == "service" else 1 << 62)
                    res["load_average"] = os.getloadavg()[0]
                    print(json.dumps(res), file=sys.stderr, flush=True)
                    if kind not in best or res["rps"] > best[kind]["rps"]:
                        best[kind] = res
            ratio = best["service"]["rps"] / best["bare"]["rps"] if best["bare"]["rps"] else 0
            # What the requests ratio tends to when both are CPU-bound on an otherwise idle
            # machine; on a loaded one, the steadier of the two.
            cpu_ratio = best["bare"]["server_cpu_ms_per_request"] / \
                best["service"]["server_cpu_ms_per_request"]
            results.append({"db": a.db, "participants": n, "ratio": round(ratio, 3),
                            "cpu_ratio": round(cpu_ratio, 3),
                            "service": best["service"], "bare": best["bare"]})
        print(json.dumps(results, indent=1))
        return 0
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    proc.kill()
        log.close()


if __name__ == "__main__":
    sys.exit(main())
