"""Where a page POST's CPU goes: the service's ASGI app called in this process, in one thread at
a time, without a network or a load client.

    python web/scripts/profile_post.py [--db sqlite|postgres] [--posts 600] [--profile]

Registers daily-checkin, makes fresh sessions, and posts the same page as web/scripts/ratio.py
(``next`` with an answer on the first step, ``back`` from the second), ``--posts-per-session``
times per session, through the whole stack (the middlewares, the router, the form, the page
thread, the engine, the database). Prints the CPU (``time.process_time``) per POST, and with
``--profile`` the cProfile of the POSTs (cumulative, the top entries). Not part of the test
command."""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import io
import pstats
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Dict, Tuple
from urllib.parse import urlencode

from page_posts import CHECKIN, after, checkin_fields, database


async def post(app: Any, path: str, body: bytes) -> Tuple[int, Dict[bytes, bytes]]:
    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1",
             "method": "POST", "scheme": "http", "path": path, "raw_path": path.encode(),
             "query_string": b"", "root_path": "", "client": ("127.0.0.1", 5000),
             "server": ("127.0.0.1", 8000),
             "headers": [(b"host", b"127.0.0.1:8000"), (b"origin", b"http://127.0.0.1:8000"),
                         (b"content-type", b"application/x-www-form-urlencoded"),
                         (b"content-length", str(len(body)).encode())]}
    sent = [False]
    out: Dict[str, Any] = {}

    async def receive() -> Dict[str, Any]:
        if not sent[0]:
            sent[0] = True
            return {"type": "http.request", "body": body, "more_body": False}
        await asyncio.sleep(3600)
        return {"type": "http.disconnect"}

    async def send(message: Dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            out["status"] = message["status"]
            out["headers"] = dict(message.get("headers") or [])

    await app(scope, receive, send)
    return out["status"], out["headers"]


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--db", choices=["sqlite", "postgres"], default="sqlite")
    p.add_argument("--posts", type=int, default=600)
    p.add_argument("--posts-per-session", type=int, default=50)
    p.add_argument("--profile", action="store_true")
    p.add_argument("--top", type=int, default=45)
    p.add_argument("--bare", action="store_true",
                   help="post to ratio.py's bare endpoint instead (same database, in process)")
    a = p.parse_args()

    from stepkit_web.app import create_app

    if a.profile:  # cProfile sees one thread: the page's work runs in the event loop's
        import types

        from stepkit_web import pages

        async def inline(fn: Any, *args: Any, **_kw: Any) -> Any:
            return fn(*args)

        pages.to_thread = types.SimpleNamespace(run_sync=inline)  # type: ignore[attr-defined]

    with database(a.db, Path(tempfile.mkdtemp(prefix="stepkit-profile-"))) as url:
        app = create_app(url, "profile-integrity-key", api_key="k",
                         base_url="http://127.0.0.1:8000")
        service = app.state.service
        service.register(CHECKIN.read_text(), "application/json")
        n_sessions = a.posts // a.posts_per_session + 2
        made = [service.create_session("daily-checkin") for _ in range(n_sessions)]
        paths = [m["resumePath"] for m in made]
        first = service.session_row(made[0]["session"])
        if a.bare:
            from ratio import bare_app

            app = bare_app(url)
            paths = [f"/bare/{m['session']}" for m in made]

        async def run(count: int, offset: int) -> None:
            version, step, k, posts = first.version, "mood", offset, 0
            path = paths[k]
            for _ in range(count):
                if posts >= a.posts_per_session:
                    k, posts, version, step = k + 1, 0, first.version, "mood"
                    path = paths[k]
                fields = [("_version", str(version))] if a.bare else checkin_fields(step, version)
                status, headers = await post(app, path, urlencode(fields).encode())
                location = headers.get(b"location", b"").decode()
                if status != 303 or "?" in location:
                    raise RuntimeError(f"unexpected {status} {location}")
                version += 1
                posts += 1
                step = after(step)

        async def measured() -> None:
            await run(a.posts_per_session, 0)  # warm-up: the task compiled, caches filled
            profiler = cProfile.Profile(time.thread_time) if a.profile else None  # CPU, not waits
            cpu0, wall0 = time.process_time(), time.perf_counter()
            if profiler:
                profiler.enable()
            await run(a.posts, 1)
            if profiler:
                profiler.disable()
            cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
            print(f"{a.db}{' bare' if a.bare else ''}: {a.posts} page POSTs, CPU {cpu / a.posts * 1000:.3f} ms/POST, "
                  f"wall {wall / a.posts * 1000:.3f} ms/POST"
                  + (" (under cProfile)" if profiler else ""))
            if profiler:
                s = io.StringIO()
                pstats.Stats(profiler, stream=s).sort_stats("cumulative").print_stats(a.top)
                print(s.getvalue())
                s = io.StringIO()
                pstats.Stats(profiler, stream=s).sort_stats("tottime").print_stats(a.top)
                print(s.getvalue())

        asyncio.run(measured())
    return 0


if __name__ == "__main__":
    sys.exit(main())
