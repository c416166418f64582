"""The database's promises (issue 26, items 3, 4 and 6): an acknowledged answer is on disk on
SQLite (WAL with synchronous=FULL on every connection); a locked SQLite, a frozen PostgreSQL
and an exhausted pool give the 503 page or JSON within the configured timeouts, never a hang
or a bare 500, and the service recovers when the database does; a NUL in a path on
PostgreSQL is a 404, not "database not available"."""

from __future__ import annotations

import os
import signal
import sqlite3
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest
import sqlalchemy as sa

from conftest import API_KEY, AUTH, BASE, KEY, example
from harness import Postgres, children
from live import LiveServer, free_port
from stepkit_web.app import create_app
from stepkit_web.db import Timeouts, make_engine

JSON = {**AUTH, "content-type": "application/json"}
FORM = {"content-type": "application/x-www-form-urlencoded"}
SAVED_PAGE = "answers up to the last page you completed are saved"


def test_the_migrations_build_exactly_the_tables_db_declares(tmp_path):
    # db.py names each kind of column once; the migrations are frozen and spell out what each
    # was. Applied in order to an empty database they must give the declared tables, column for
    # column (type and width, nullability, server defaults), with the same indexes and keys.
    from alembic.autogenerate import compare_metadata
    from alembic.migration import MigrationContext

    from stepkit_web import db, migrate

    engine = make_engine(f"sqlite:///{tmp_path / 'schema.db'}")
    migrate.upgrade(engine)
    with engine.connect() as conn:
        context = MigrationContext.configure(conn, opts={"compare_type": True,
                                                         "compare_server_default": True})
        assert compare_metadata(context, db.metadata) == []
        assert sorted(sa.inspect(conn).get_table_names()) == sorted(
            ["alembic_version", *db.metadata.tables])


def test_each_column_kind_is_what_the_migrations_first_wrote_out():
    # columns.py is frozen: the migrations build their tables with its kinds, so a kind that
    # changed would change what an applied migration did (and the test above would still pass,
    # both sides having moved). These are the columns as 0001 and 0003 spelled them literally.
    from stepkit_web import columns

    def ddl(column):
        return (type(column.type), getattr(column.type, "length", None), column.nullable,
                column.primary_key, column.autoincrement)

    assert ddl(columns.identifier("x")) == (sa.String, 200, False, False, "auto")
    assert ddl(columns.identifier("x", nullable=True)) == (sa.String, 200, True, False, "auto")
    assert ddl(columns.key("x", primary_key=True)) == (sa.String, 64, False, True, "auto")
    assert ddl(columns.key("x", nullable=True)) == (sa.String, 64, True, False, "auto")
    assert ddl(columns.date("x")) == (sa.String, 40, False, False, "auto")
    assert ddl(columns.word("x")) == (sa.String, 20, False, False, "auto")
    assert ddl(columns.word("x", 10)) == (sa.String, 10, False, False, "auto")
    assert ddl(columns.text("x")) == (sa.Text, None, True, False, "auto")
    assert ddl(columns.text("x", nullable=False)) == (sa.Text, None, False, False, "auto")
    assert ddl(columns.number("x")) == (sa.Integer, None, False, False, "auto")
    assert ddl(columns.number("x", sa.BigInteger)) == (sa.BigInteger, None, False, False, "auto")
    assert ddl(columns.flag("x")) == (sa.Boolean, None, False, False, "auto")
    assert ddl(columns.serial()) == (sa.Integer, None, False, True, True)
    assert ddl(columns.username("x", primary_key=True)) == (sa.String, 100, False, True, "auto")
    assert columns.serial().name == "id"


def test_every_sqlite_connection_is_wal_and_synchronous_full(tmp_path):
    engine = make_engine(f"sqlite:///{tmp_path / 'runs.db'}")
    conns = [engine.connect() for _ in range(4)]  # four pooled connections at once
    try:
        for c in conns:
            assert c.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
            assert c.exec_driver_sql("PRAGMA synchronous").scalar() == 2  # FULL
            assert c.exec_driver_sql("PRAGMA busy_timeout").scalar() == 30000
    finally:
        for c in conns:
            c.close()
        engine.dispose()


def test_the_apps_writes_run_with_synchronous_full(app, client):
    """The connections a participant's page is read and written on, as the app uses them
    (the page's two statements run on the pool's DBAPI connections: Store._driver)."""
    from conftest import new_session

    seen = []
    engine = app.state.service.store.engine

    @sa.event.listens_for(engine.pool, "checkin")
    def _spy(dbapi_conn, _record):
        if dbapi_conn is not None:
            cur = dbapi_conn.cursor()
            cur.execute("PRAGMA synchronous")
            seen.append(cur.fetchone()[0])
            cur.close()

    session_id, path = new_session(client, "daily-checkin")
    seen.clear()
    r = client.post(path, content=b"_version=1&_step=mood&answer=4&action=next",
                    headers={"content-type": "application/x-www-form-urlencoded"},
                    follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == path
    assert client.get(f"/api/sessions/{session_id}").json()["version"] == 2
    assert len(seen) >= 2 and set(seen) == {2}


def test_a_locked_sqlite_is_a_503_after_the_busy_timeout(tmp_path, clock):
    db = tmp_path / "runs.db"
    app = create_app(f"sqlite:///{db}", KEY, api_key=API_KEY, clock=clock, base_url=BASE,
                     timeouts=Timeouts(busy=0.2))
    from fastapi.testclient import TestClient

    with TestClient(app, headers=AUTH) as c:
        assert c.post("/api/tasks", content=example("daily-checkin"),
                      headers={"content-type": "application/json"}).status_code == 201
        created = c.post("/api/tasks/daily-checkin/sessions").json()
        path = created["resumeUrl"].replace(BASE, "")
        other = sqlite3.connect(str(db), isolation_level=None)
        other.execute("BEGIN IMMEDIATE")  # another writer holds the lock
        try:
            start = time.monotonic()
            r = c.post(path, content=b"_version=1&_step=mood&answer=4&action=next",
                       headers={"content-type": "application/x-www-form-urlencoded"},
                       follow_redirects=False)
            assert r.status_code == 503 and SAVED_PAGE in r.text
            assert time.monotonic() - start < 10
            r = c.post("/api/tasks/daily-checkin/sessions")
            assert r.status_code == 503 and r.json()["code"] == "EUNAVAILABLE"
        finally:
            other.execute("ROLLBACK")
            other.close()
        r = c.post(path, content=b"_version=1&_step=mood&answer=4&action=next",
                   headers={"content-type": "application/x-www-form-urlencoded"},
                   follow_redirects=False)
        assert r.status_code == 303  # nothing was half-written: version 1 still current


def test_a_page_write_waiting_for_this_workers_writer_is_a_503_after_the_busy_timeout(tmp_path,
                                                                                     clock):
    """A worker's page UPDATEs on SQLite queue on one lock (Store._driver): one that waits past
    the busy timeout (another page's write hanging) gets the 503 page and writes nothing."""
    from fastapi.testclient import TestClient

    from stepkit_web.db import _SQLITE_WRITERS

    app = create_app(f"sqlite:///{tmp_path / 'runs.db'}", KEY, api_key=API_KEY, clock=clock,
                     base_url=BASE, timeouts=Timeouts(busy=0.2))
    lock, busy = _SQLITE_WRITERS[app.state.service.store.engine]
    assert busy == 0.2
    with TestClient(app, headers=AUTH) as c:
        assert c.post("/api/tasks", content=example("daily-checkin"),
                      headers={"content-type": "application/json"}).status_code == 201
        created = c.post("/api/tasks/daily-checkin/sessions").json()
        path = created["resumeUrl"].replace(BASE, "")
        page = b"_version=1&_step=mood&answer=4&action=next"
        form = {"content-type": "application/x-www-form-urlencoded"}
        assert lock.acquire()  # another page's write of this worker, hanging
        try:
            start = time.monotonic()
            r = c.post(path, content=page, headers=form, follow_redirects=False)
            assert r.status_code == 503 and SAVED_PAGE in r.text
            assert 0.2 <= time.monotonic() - start < 10
        finally:
            lock.release()
        assert c.get(f"/api/sessions/{created['session']}").json()["version"] == 1
        r = c.post(path, content=page, headers=form, follow_redirects=False)
        assert r.status_code == 303 and r.headers["location"] == path


# -- PostgreSQL ---------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def pg():
    cluster = Postgres().start()
    yield cluster
    cluster.cleanup()


def pg_pids(cluster: Postgres):
    postmaster = int((cluster.dir / "data" / "postmaster.pid").read_text().split()[0])
    return [postmaster] + children(postmaster)


def freeze(cluster: Postgres, sig: int) -> None:
    for pid in pg_pids(cluster):
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            pass


def test_a_frozen_postgres_gives_503_within_the_timeouts_and_recovers(pg):
    port = free_port()
    app = create_app(pg.url, KEY, api_key=API_KEY, base_url=f"http://127.0.0.1:{port}",
                     timeouts=Timeouts(connect=1, statement=1, pool=1), pool_size=1,
                     max_overflow=0)
    with LiveServer(app, port) as live:
        r = httpx.post(live.url + "/api/tasks", content=example("daily-checkin"), headers=JSON)
        assert r.status_code == 201, r.text
        created = httpx.post(live.url + "/api/tasks/daily-checkin/sessions", headers=JSON).json()
        page_url = created["resumeUrl"]
        sid = created["session"]
        freeze(pg, signal.SIGSTOP)
        try:
            def timed_get(url, headers=None):
                start = time.monotonic()
                resp = httpx.get(url, headers=headers, timeout=60)
                return resp, time.monotonic() - start

            # Three at once on a pool of one: one waits on the frozen server (statement
            # timeout, then the watchdog cuts it), the others wait for the pool.
            with ThreadPoolExecutor(3) as ex:
                jobs = [ex.submit(timed_get, page_url),
                        ex.submit(timed_get, f"{live.url}/api/sessions/{sid}", AUTH),
                        ex.submit(timed_get, page_url)]
                results = [j.result() for j in jobs]
            for resp, seconds in results:
                assert resp.status_code == 503, (resp.status_code, resp.text[:300])
                assert seconds < 15, seconds
            assert SAVED_PAGE in results[0][0].text
            assert results[1][0].json()["code"] == "EUNAVAILABLE"
            assert results[1][0].headers["retry-after"]
            # A new connection to the frozen server: the connect timeout.
            resp, seconds = timed_get(page_url)
            assert resp.status_code == 503 and seconds < 15
        finally:
            freeze(pg, signal.SIGCONT)
        deadline = time.monotonic() + 60
        while True:  # recovers: the pool's cut connections are replaced
            r = httpx.get(page_url, timeout=30)
            if r.status_code == 200 or time.monotonic() > deadline:
                break
        assert r.status_code == 200


def test_a_nul_in_a_path_on_postgres_is_a_404(pg):
    from fastapi.testclient import TestClient

    app = create_app(pg.url, KEY, api_key=API_KEY, base_url="http://testserver")
    with TestClient(app, headers=AUTH) as c:
        for url in ("/api/tasks/a%00b", "/api/sessions/a%00b", "/api/sessions/a%00b/result",
                    "/r/a%00b", "/i/a%00b", "/api/sessions/%00/history"):
            r = c.get(url)
            assert r.status_code == 404, (url, r.status_code, r.text[:200])
        for url in ("/api/tasks/a%00b/sessions", "/api/tasks/a%00b/invites",
                    "/api/sessions/a%00b/resume-links"):
            r = c.post(url)
            assert r.status_code == 404, (url, r.status_code, r.text[:200])
        assert c.post("/r/a%00b", content=b"action=next",
                      headers={"content-type": "application/x-www-form-urlencoded"}
                      ).status_code == 404


def test_the_database_clock_is_the_servers(pg):
    """PostgreSQL's clock_timestamp(), in ms (the time source every instance shares)."""
    from stepkit_web.db import Store

    engine = make_engine(pg.url)
    try:
        before = time.time_ns() // 1_000_000
        db_now = Store(engine).now_ms()
        after = time.time_ns() // 1_000_000
        assert before - 1000 <= db_now <= after + 1000  # the same machine's clock
    finally:
        engine.dispose()


def test_strace_shows_the_wal_synced_before_the_303(tmp_path):
    """The system calls of a real `serve`: between reading a participant's POST and writing
    its 303, the process fdatasyncs (or fsyncs) the SQLite WAL."""
    import re
    import shutil
    import subprocess
    import sys

    from harness import wait_ready

    strace = shutil.which("strace")
    assert strace, "strace is missing: web/scripts/test installs it"
    port = free_port()
    env = dict(os.environ, STEPKIT_WEB_INTEGRITY_KEY=KEY, STEPKIT_WEB_API_KEY=API_KEY,
               PYTHONPATH=os.pathsep.join(sys.path))
    trace = tmp_path / "trace.txt"
    proc = subprocess.Popen(
        [strace, "-f", "-y", "-s", "48", "-o", str(trace),
         "-e", "trace=fsync,fdatasync,read,recvfrom,write,sendto",
         sys.executable, "-m", "stepkit_web", "serve", "--db", f"sqlite:///{tmp_path / 'r.db'}",
         "--host", "127.0.0.1", "--port", str(port)],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_ready(url + "/healthz", 120, proc)
        assert httpx.post(url + "/api/tasks", content=example("daily-checkin"),
                          headers=JSON, timeout=60).status_code == 201
        created = httpx.post(url + "/api/tasks/daily-checkin/sessions", headers=JSON,
                             timeout=60).json()
        for version in (1, 2, 3, 4):  # four answers saved, each acknowledged by a 303
            r = httpx.post(created["resumeUrl"], headers=FORM, timeout=60,
                           content=f"_version={version}&_step=mood&answer={version}"
                                   "&action=save".encode())
            assert r.status_code == 303 and r.headers["location"].startswith("/r/")
    finally:
        for pid in children(proc.pid):  # the server: strace ends with it
            os.kill(pid, signal.SIGTERM)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    lines = trace.read_text(errors="replace").splitlines()
    got = [i for i, line in enumerate(lines) if re.search(r'(read|recvfrom)\(.*"POST /r/', line)]
    acked = [i for i, line in enumerate(lines)
             if re.search(r'(write|sendto)\(.*"HTTP/1.1 303 See Other', line)]
    assert len(got) == 4 and len(acked) == 4, (got, acked)
    for start, end in zip(got, acked):
        # (synchronous=NORMAL syncs the WAL only at checkpoints and when it starts over: at
        # most the first of these answers would have one.)
        synced = [line for line in lines[start:end]
                  if re.search(r"f(data)?sync\(\d+<[^>]*-wal>\) = 0", line)]
        assert synced, f"no fsync of the WAL between the POST and its 303 (line {start})"
