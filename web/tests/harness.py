"""Scale-out harness: PostgreSQL (initdb as the postgres user in a temporary directory, on
127.0.0.1 only), app instances (`python -m stepkit_web serve`, several uvicorn workers each)
behind nginx, and a bounded asyncio/httpx load generator on loopback that double-submits every
page, kills workers with SIGKILL in turn, and checks that every acknowledged answer is in the
final result.

Used by tests/test_scaleout.py (a short run) and scripts/load (the long run, figures for the
README): ``python tests/harness.py --db postgres|sqlite --participants N --seconds S``."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Tuple
from urllib.parse import urlencode

import httpx

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE.parent / "src"))
from stepkit_web.walk import page_fields  # noqa: E402

TASK = ROOT / "examples" / "tasks" / "daily-checkin.json"
ANSWERS = json.loads((ROOT / "examples" / "tasks" / "daily-checkin.answers.json").read_text())
PG_BIN = Path("/usr/lib/postgresql/15/bin")
API_KEY = os.urandom(16).hex()
AUTH = {"authorization": f"Bearer {API_KEY}"}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_ready(url: str, timeout: float, proc: Optional[subprocess.Popen] = None) -> None:
    """Polls ``url`` until it answers 200, at most ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            if httpx.get(url, timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"{url}: the process exited with {proc.returncode}")
        if time.monotonic() > deadline:
            raise RuntimeError(f"{url} was not ready within {timeout} s")
        time.sleep(0.1)


def stop_process(proc: subprocess.Popen, sig: int) -> None:
    """Stops a process still running with `sig`, killing it if it has not ended 30 s later."""
    if proc.poll() is None:
        proc.send_signal(sig)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def pg_bin(name: str) -> str:
    for candidate in sorted(Path("/usr/lib/postgresql").glob(f"*/bin/{name}"), reverse=True):
        return str(candidate)
    found = shutil.which(name)
    if not found:
        raise RuntimeError(f"{name} not found: install postgresql")
    return found


class Postgres:
    """A throw-away PostgreSQL cluster owned by the postgres user, listening on 127.0.0.1."""

    def __init__(self) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="stepkit-web-pg-"))
        self.port = free_port()
        self.url = f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/stepkit"

    def _as_postgres(self, *cmd: str, check: bool = True) -> subprocess.CompletedProcess:
        prefix = [] if os.geteuid() != 0 else ["runuser", "-u", "postgres", "--"]
        if os.geteuid() != 0 and os.environ.get("USER") != "postgres":
            prefix = ["sudo", "-u", "postgres", "--"]
        return subprocess.run(prefix + list(cmd), check=check, capture_output=True, text=True,
                              timeout=120)

    def start(self) -> "Postgres":
        shutil.chown(self.dir, "postgres", "postgres") if os.geteuid() == 0 else \
            subprocess.run(["sudo", "chown", "postgres:postgres", str(self.dir)], check=True)
        os.chmod(self.dir, 0o700)
        data = self.dir / "data"
        self._as_postgres(pg_bin("initdb"), "-D", str(data), "-A", "trust", "-U", "postgres",
                          "--no-sync", "-E", "UTF8")
        self._as_postgres(pg_bin("pg_ctl"), "-D", str(data), "-l", str(self.dir / "log"), "-w",
                          "-t", "60", "-o",
                          f"-c listen_addresses=127.0.0.1 -p {self.port} -k {self.dir} "
                          "-c max_connections=200 -c fsync=on -c synchronous_commit=on",
                          "start")
        self._as_postgres(pg_bin("createdb"), "-h", "127.0.0.1", "-p", str(self.port),
                          "-U", "postgres", "stepkit")
        return self

    def stop(self) -> None:
        self._as_postgres(pg_bin("pg_ctl"), "-D", str(self.dir / "data"), "-m", "immediate",
                          "-w", "stop", check=False)

    def cleanup(self) -> None:
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)


def children(pid: int) -> List[int]:
    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            out.append(int(stat.parent.name))
    return out


class AppInstance:
    def __init__(self, db_url: str, key: str, workers: int, workdir: Path) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.workers = workers
        env = dict(os.environ, STEPKIT_WEB_INTEGRITY_KEY=key, STEPKIT_WEB_API_KEY=API_KEY,
                   PYTHONUNBUFFERED="1")
        self.log = open(workdir / f"app-{self.port}.log", "w")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "stepkit_web", "serve", "--db", db_url, "--host", "127.0.0.1",
             "--port", str(self.port), "--workers", str(workers)],
            env=env, stdout=self.log, stderr=subprocess.STDOUT)

    def ready(self) -> "AppInstance":
        wait_ready(self.url + "/healthz", 120, self.proc)
        self.wait_workers()
        return self

    def worker_pids(self) -> List[int]:
        # uvicorn's supervisor starts workers through multiprocessing (a resource tracker
        # child may sit next to them): the workers are the children that listen.
        pids = []
        for pid in children(self.proc.pid):
            try:
                cmd = Path(f"/proc/{pid}/cmdline").read_bytes()
            except OSError:
                continue
            if b"resource_tracker" not in cmd:
                pids.append(pid)
        return pids

    def wait_workers(self, timeout: float = 120) -> None:
        deadline = time.monotonic() + timeout
        while len(self.worker_pids()) < self.workers:
            if time.monotonic() > deadline:
                raise RuntimeError("workers did not come back")
            time.sleep(0.1)

    def stop(self) -> None:
        stop_process(self.proc, signal.SIGTERM)
        self.log.close()


class Nginx:
    """nginx as the local reverse proxy in front of the instances (no retry of a POST that
    reached a worker: a killed worker's request fails to the client, which did not get an
    acknowledgement and sends it again)."""

    def __init__(self, upstreams: List[str], workdir: Path) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        prefix = workdir / "nginx"
        for d in ("logs", "tmp"):
            (prefix / d).mkdir(parents=True, exist_ok=True)
        servers = "\n".join(f"    server {u.replace('http://', '')} max_fails=0;" for u in upstreams)
        conf = f"""
worker_processes 1;
daemon off;
pid {prefix}/nginx.pid;
error_log {prefix}/logs/error.log warn;
events {{ worker_connections 4096; }}
http {{
  access_log off;
  client_body_temp_path {prefix}/tmp/body;
  proxy_temp_path {prefix}/tmp/proxy;
  fastcgi_temp_path {prefix}/tmp/fastcgi;
  uwsgi_temp_path {prefix}/tmp/uwsgi;
  scgi_temp_path {prefix}/tmp/scgi;
  client_max_body_size 1m;
  upstream stepkit {{
{servers}
    keepalive 64;
  }}
  server {{
    listen 127.0.0.1:{self.port};
    location / {{
      proxy_pass http://stepkit;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host $http_host;
      proxy_set_header X-Forwarded-For $remote_addr;
      proxy_next_upstream error timeout;
      proxy_read_timeout 120s;
    }}
  }}
}}
"""
        self.conf = prefix / "nginx.conf"
        self.conf.write_text(conf)
        nginx = shutil.which("nginx") or "/usr/sbin/nginx"
        self.log = open(prefix / "logs" / "stdout.log", "w")
        self.proc = subprocess.Popen([nginx, "-p", str(prefix), "-c", str(self.conf)],
                                     stdout=self.log, stderr=subprocess.STDOUT)

    def ready(self) -> "Nginx":
        wait_ready(self.url + "/healthz", 60, self.proc)
        return self

    def stop(self) -> None:
        stop_process(self.proc, signal.SIGQUIT)  # nginx's graceful stop
        self.log.close()


# -- the load generator -------------------------------------------------------------------------

@dataclass
class Stats:
    latencies: List[float] = field(default_factory=list)
    engine_ms: List[float] = field(default_factory=list)
    app_ms: List[float] = field(default_factory=list)
    statuses: Dict[int, int] = field(default_factory=dict)
    errors: int = 0  # connection failures (a killed worker)
    sessions_started: int = 0
    sessions_done: int = 0
    acknowledged: List[Tuple[str, str]] = field(default_factory=list)  # (session, step)
    stale: int = 0

    def note(self, r: httpx.Response, seconds: float) -> None:
        self.latencies.append(seconds)
        self.statuses[r.status_code] = self.statuses.get(r.status_code, 0) + 1
        timing = r.headers.get("server-timing", "")
        parts = dict(p.strip().split(";dur=") for p in timing.split(",") if ";dur=" in p)
        if "engine" in parts and "app" in parts:
            self.engine_ms.append(float(parts["engine"]))
            self.app_ms.append(float(parts["app"]))


async def request(client: httpx.AsyncClient, stats: Stats, method: str, url: str,
                  **kw) -> Optional[httpx.Response]:
    start = time.perf_counter()
    try:
        r = await client.request(method, url, **kw)
    except httpx.HTTPError:
        stats.errors += 1
        return None
    stats.note(r, time.perf_counter() - start)
    return r


async def participant(client: httpx.AsyncClient, base: str, stats: Stats, deadline: float,
                      sessions: Dict[str, str], double: bool) -> None:
    while time.monotonic() < deadline:
        r = await request(client, stats, "POST", f"{base}/api/tasks/daily-checkin/sessions")
        if r is None or r.status_code != 201:
            await asyncio.sleep(0.05)  # the instance is restarting a worker: try again
            continue
        sid = r.json()["session"]
        path = r.json()["resumeUrl"].split("://", 1)[1].split("/", 1)[1]
        sessions[sid] = "/" + path
        stats.sessions_started += 1
        for _ in range(60):
            if time.monotonic() >= deadline:
                return
            r = await request(client, stats, "GET", f"{base}/api/sessions/{sid}")
            if r is None or r.status_code != 200:
                continue
            info = r.json()
            if info["status"] == "finished":
                stats.sessions_done += 1
                break
            state = info["state"]
            step = state["step"]["identifier"]
            fields = page_fields(state, ANSWERS)
            action = "skip" if fields is None else "next"
            body = urlencode([("_version", str(info["version"])), ("_step", step),
                              ("action", action)] + (fields or [])).encode()
            post = dict(content=body, headers={"content-type": "application/x-www-form-urlencoded"})
            url = f"{base}/{path}"
            tries = [request(client, stats, "POST", url, **post)]
            if double:
                tries.append(request(client, stats, "POST", url, **post))
            for resp in await asyncio.gather(*tries):
                if resp is None:
                    continue
                if resp.status_code == 303:
                    if resp.headers["location"].endswith("?notice=stale"):
                        stats.stale += 1
                    elif action == "next":
                        stats.acknowledged.append((sid, step))


async def killer(instances: List[AppInstance], stop_at: float, log: List[str]) -> None:
    """SIGKILL every worker of every instance in turn, each after the previous came back."""
    await asyncio.sleep(1.0)
    for inst in instances:
        for _ in range(inst.workers):
            if time.monotonic() >= stop_at:
                return
            pids = inst.worker_pids()
            if not pids:
                continue
            pid = pids[0]
            os.kill(pid, signal.SIGKILL)
            log.append(f"killed worker {pid} of :{inst.port}")
            # wait (bounded) until the supervisor has replaced it
            limit = time.monotonic() + 60
            while time.monotonic() < limit:
                now = inst.worker_pids()
                if len(now) >= inst.workers and pid not in now:
                    break
                await asyncio.sleep(0.1)
            await asyncio.sleep(0.5)


def check_results(base: str, sessions: Dict[str, str], stats: Stats) -> int:
    """Answers lost: acknowledged answers missing from (or different in) the final result."""
    lost = 0
    with httpx.Client(timeout=60, headers=AUTH) as client:
        results = {sid: client.get(f"{base}/api/sessions/{sid}/result").json() for sid in sessions}
    for sid, step in stats.acknowledged:
        expected = ANSWERS.get(step)
        found = [s for s in results[sid]["results"] if s["identifier"] == step]
        if not found:
            lost += 1
            continue
        got = {q["identifier"]: q.get("answer") for q in found[-1].get("results", [])}
        if expected is None:
            continue  # a step that takes no answer
        if isinstance(expected, dict):
            if any(got.get(k) != v for k, v in expected.items()):
                lost += 1
        elif got.get(step) != expected:
            lost += 1
    return lost


def percentile(values: List[float], p: float) -> float:
    if not values:
        return float("nan")
    s = sorted(values)
    return s[min(len(s) - 1, int(round(p / 100 * (len(s) - 1))))]


def run(db: str, participants: int, seconds: float, instances_n: int, workers: int,
        kill: bool, double: bool = True, after=None) -> Dict[str, object]:
    """One load run; ``after(base, pg, sessions)`` runs before everything is stopped."""
    workdir = Path(tempfile.mkdtemp(prefix="stepkit-web-load-"))
    key = os.urandom(16).hex()
    pg = None
    apps: List[AppInstance] = []
    proxy = None
    try:
        if db == "postgres":
            pg = Postgres().start()
            db_url = pg.url
        else:
            db_url = f"sqlite:///{workdir / 'runs.db'}"
        subprocess.run([sys.executable, "-m", "stepkit_web", "migrate", "--db", db_url],
                       check=True, capture_output=True, timeout=120)
        apps = [AppInstance(db_url, key, workers, workdir) for _ in range(instances_n)]
        for a in apps:
            a.ready()
        if instances_n > 1:
            proxy = Nginx([a.url for a in apps], workdir).ready()
            base = proxy.url
        else:
            base = apps[0].url
        r = httpx.post(base + "/api/tasks", content=TASK.read_bytes(), timeout=60,
                       headers={**AUTH, "content-type": "application/json"})
        assert r.status_code == 201, r.text
        stats = Stats()
        sessions: Dict[str, str] = {}
        kills: List[str] = []

        async def main() -> float:
            limits = httpx.Limits(max_connections=participants * 2 + 10,
                                  max_keepalive_connections=participants * 2)
            async with httpx.AsyncClient(limits=limits, timeout=120, headers=AUTH) as client:
                start = time.monotonic()
                deadline = start + seconds
                jobs = [participant(client, base, stats, deadline, sessions, double)
                        for _ in range(participants)]
                if kill:
                    jobs.append(killer(apps, deadline - 1, kills))
                await asyncio.gather(*jobs)
                return time.monotonic() - start

        elapsed = asyncio.run(main())
        lost = check_results(base, sessions, stats)
        if after is not None:
            after(base, pg, sessions)
        engine = sum(stats.engine_ms)
        app_total = sum(stats.app_ms)
        return {
            "db": db, "instances": instances_n, "workers": workers, "participants": participants,
            "seconds": round(elapsed, 1), "sessions_started": stats.sessions_started,
            "sessions_completed": stats.sessions_done,
            "sessions_per_s": round(stats.sessions_done / elapsed, 2),
            "requests": len(stats.latencies),
            "requests_per_s": round(len(stats.latencies) / elapsed, 1),
            "p50_ms": round(percentile(stats.latencies, 50) * 1000, 1),
            "p95_ms": round(percentile(stats.latencies, 95) * 1000, 1),
            "p99_ms": round(percentile(stats.latencies, 99) * 1000, 1),
            "engine_share": round(engine / app_total, 3) if app_total else None,
            "engine_ms_per_request": round(engine / max(1, len(stats.engine_ms)), 3),
            "app_ms_per_request": round(app_total / max(1, len(stats.app_ms)), 3),
            "load_average": os.getloadavg()[0],
            "statuses": stats.statuses, "connection_errors": stats.errors,
            "acknowledged_answers": len(stats.acknowledged), "stale_redirects": stats.stale,
            "answers_lost": lost, "kills": kills,
        }
    finally:
        if proxy:
            proxy.stop()
        for a in apps:
            a.stop()
        if pg:
            pg.cleanup()
        shutil.rmtree(workdir, ignore_errors=True)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--db", choices=["postgres", "sqlite"], default="postgres")
    ap.add_argument("--participants", type=int, default=50)
    ap.add_argument("--seconds", type=float, default=30)
    ap.add_argument("--instances", type=int, default=None)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--kill", action="store_true")
    ap.add_argument("--single", action="store_true", help="no double submits")
    args = ap.parse_args()
    instances = args.instances or (2 if args.db == "postgres" else 1)
    report = run(args.db, args.participants, args.seconds, instances, args.workers, args.kill,
                 double=not args.single)
    print(json.dumps(report, indent=2))
    return 0 if report["answers_lost"] == 0 and not any(
        s >= 500 and s not in (502, 503) for s in report["statuses"]) else 1


if __name__ == "__main__":
    sys.exit(main())
