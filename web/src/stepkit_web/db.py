"""Storage: the tables (SQLAlchemy Core), the engine for SQLite (WAL) or PostgreSQL (psycopg 3),
and every query the service makes.

Restoration data is kept as TEXT exactly as the engine wrote it (never jsonb, which reorders
keys and would break the integrity check). Every write to a session is a compare-and-set on its
``version`` column, so two requests that started from the same page cannot both win."""

from __future__ import annotations

import datetime as _dt
import hashlib
import logging
import os
import secrets
import socket
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Dict, Iterator, List, Optional

import sqlalchemy as sa
from sqlalchemy.engine import Engine

log = logging.getLogger("stepkit_web.db")

metadata = sa.MetaData()

tasks = sa.Table(
    "tasks",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("identifier", sa.String(200), nullable=False),
    sa.Column("version", sa.Integer, nullable=False),
    sa.Column("definition", sa.Text, nullable=False),
    sa.Column("fingerprint", sa.String(200), nullable=False),
    # "stepkit", or "fhir" once the FHIR importer has landed (then source_document holds the
    # Questionnaire, for the QuestionnaireResponse).
    sa.Column("source", sa.String(20), nullable=False),
    sa.Column("source_document", sa.Text, nullable=True),
    sa.Column("created_at", sa.String(40), nullable=False),
    sa.UniqueConstraint("identifier", "version", name="uq_tasks_identifier_version"),
)

sessions = sa.Table(
    "sessions",
    metadata,
    sa.Column("id", sa.String(64), primary_key=True),
    sa.Column("task_identifier", sa.String(200), nullable=False),
    sa.Column("task_version", sa.Integer, nullable=False),
    sa.Column("saved", sa.Text, nullable=False),
    # The session clock's time (ms since the epoch) when `saved` was written: a running timer
    # goes on from there when the session is restored (see Service.restore).
    sa.Column("saved_at", sa.BigInteger, nullable=False),
    sa.Column("version", sa.Integer, nullable=False),
    # "open", "finished"
    sa.Column("status", sa.String(20), nullable=False),
    sa.Column("finish_reason", sa.String(40), nullable=True),
    sa.Column("result", sa.Text, nullable=True),
    sa.Column("created_at", sa.String(40), nullable=False),
    sa.Column("updated_at", sa.String(40), nullable=False),
    sa.Index("ix_sessions_task", "task_identifier", "status"),
)

tokens = sa.Table(
    "tokens",
    metadata,
    # SHA-256 of the token: the token itself is only ever in the participant's link.
    sa.Column("hash", sa.String(64), primary_key=True),
    # "resume" (names a session) or "invite" (names a task: opening it creates a session)
    sa.Column("kind", sa.String(10), nullable=False),
    sa.Column("session_id", sa.String(64), nullable=True),
    sa.Column("task_identifier", sa.String(200), nullable=True),
    sa.Column("revoked", sa.Boolean, nullable=False, default=False),
    sa.Column("created_at", sa.String(40), nullable=False),
    sa.Index("ix_tokens_session", "session_id"),
)


session_history = sa.Table(
    "session_history",
    metadata,
    # Append-only: a session's row as it was before something replaced it (a migration onto a
    # new task version), with what the replacement kept and dropped. Never updated or deleted.
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("session_id", sa.String(64), nullable=False),
    sa.Column("task_identifier", sa.String(200), nullable=False),
    sa.Column("task_version", sa.Integer, nullable=False),
    sa.Column("version", sa.Integer, nullable=False),
    sa.Column("saved", sa.Text, nullable=False),
    sa.Column("saved_at", sa.BigInteger, nullable=False),
    sa.Column("status", sa.String(20), nullable=False),
    # "migrated"
    sa.Column("reason", sa.String(20), nullable=False),
    sa.Column("to_task_version", sa.Integer, nullable=True),
    # The engine's restore report as JSON: {"kept": [...], "dropped": [{step, item, reason}]}
    sa.Column("report", sa.Text, nullable=True),
    sa.Column("created_at", sa.String(40), nullable=False),
    sa.Index("ix_session_history_session", "session_id"),
)


def now_iso() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="milliseconds")


def new_token() -> str:
    """A 128-bit random token, URL-safe."""
    return secrets.token_urlsafe(16)


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass(frozen=True)
class Timeouts:
    """How long a request waits for the database before it gets the 503 page (seconds).

    ``connect``: opening a connection (PostgreSQL). ``statement``: one statement or commit;
    PostgreSQL cancels it itself (``statement_timeout``), and a watchdog cuts the connection
    one second later if the server does not answer at all (a frozen server never cancels
    anything). ``pool``: waiting for a free connection of the pool. ``busy``: SQLite waiting
    for another writer's lock."""
    connect: float = 5.0
    statement: float = 10.0
    pool: float = 5.0
    busy: float = 30.0


class Watchdog:
    """Cuts a PostgreSQL connection whose statement or commit has run past its deadline.

    A frozen server (SIGSTOP, a hung host whose kernel still acknowledges packets) neither
    answers nor cancels, and TCP keepalives are answered by its kernel, so only the client can
    give up: shutting the socket down makes psycopg's wait return with an error, which
    SQLAlchemy reports as a disconnect (the pool is then refreshed)."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self._armed: Dict[int, Any] = {}
        self._cond = threading.Condition()
        self._thread: Optional[threading.Thread] = None

    def arm(self, dbapi_conn: Any) -> None:
        with self._cond:
            self._armed[id(dbapi_conn)] = (time.monotonic() + self.seconds, dbapi_conn)
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="stepkit-db-watchdog",
                                                daemon=True)
                self._thread.start()
            self._cond.notify()

    def disarm(self, dbapi_conn: Any) -> None:
        with self._cond:
            self._armed.pop(id(dbapi_conn), None)

    def _run(self) -> None:
        while True:
            with self._cond:
                now = time.monotonic()
                expired = [c for d, c in self._armed.values() if d <= now]
                for c in expired:
                    self._armed.pop(id(c), None)
                if not expired:
                    nxt = min((d for d, _ in self._armed.values()), default=None)
                    self._cond.wait(None if nxt is None else max(0.01, nxt - now))
                    continue
            for c in expired:
                _cut(c)


def _cut(dbapi_conn: Any) -> None:
    try:
        fd = dbapi_conn.fileno()
    except Exception:  # already closed
        return
    log.error("the database did not answer in time: cutting the connection")
    try:
        sock = socket.socket(fileno=os.dup(fd))
    except OSError:
        return
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    finally:
        sock.close()


def make_engine(url: str, pool_size: int = 10, timeouts: Timeouts = Timeouts(),
                max_overflow: int = 5) -> Engine:
    """An engine for ``url``: SQLite (WAL, synchronous=FULL, a busy timeout) or PostgreSQL
    (connect, statement and pool timeouts)."""
    if url.startswith("sqlite"):
        engine = sa.create_engine(url, connect_args={"timeout": timeouts.busy,
                                                     "check_same_thread": False})
        busy_ms = int(timeouts.busy * 1000)

        @sa.event.listens_for(engine, "connect")
        def _sqlite_pragmas(dbapi_conn: Any, _record: Any) -> None:
            # Let SQLAlchemy not emit BEGIN itself so that we can issue BEGIN IMMEDIATE.
            dbapi_conn.isolation_level = None
            cur = dbapi_conn.cursor()
            cur.execute("PRAGMA journal_mode=WAL")
            # FULL: the WAL is fsync'ed at every commit, so a 303 ("saved") means on disk
            # even across a power cut (NORMAL syncs only at checkpoints).
            cur.execute("PRAGMA synchronous=FULL")
            cur.execute(f"PRAGMA busy_timeout={busy_ms}")
            cur.execute("PRAGMA foreign_keys=ON")
            cur.close()

        @sa.event.listens_for(engine, "begin")
        def _sqlite_begin(conn: Any) -> None:
            # Writes take the write lock at once (a read that later upgrades could fail with
            # SQLITE_BUSY); reads stay deferred, so they never wait for a writer under WAL.
            if conn.get_execution_options().get("stepkit_write"):
                conn.exec_driver_sql("BEGIN IMMEDIATE")
            else:
                conn.exec_driver_sql("BEGIN")

        return engine
    # No pre-ping (a round trip per checkout): a connection the server dropped fails its
    # request with a 503 once, and SQLAlchemy then discards the whole pool.
    statement_ms = max(1, int(timeouts.statement * 1000))
    engine = sa.create_engine(
        url, pool_size=pool_size, max_overflow=max_overflow, pool_timeout=timeouts.pool,
        connect_args={"connect_timeout": max(1, int(round(timeouts.connect))),
                      "options": f"-c statement_timeout={statement_ms}"})
    watchdog = Watchdog(timeouts.statement + 1.0)

    def dbapi_of(conn: Any) -> Any:
        # An invalidated connection (cut, or the server gone) has nothing left to watch, and
        # asking for its DBAPI connection would try to reconnect.
        if conn.invalidated or conn.closed:
            return None
        return conn.connection.dbapi_connection

    def arm(conn: Any, *_args: Any) -> None:
        dbapi_conn = dbapi_of(conn)
        if dbapi_conn is not None:
            watchdog.arm(dbapi_conn)

    def disarm(conn: Any, *_args: Any) -> None:
        dbapi_conn = dbapi_of(conn)
        if dbapi_conn is not None:
            watchdog.disarm(dbapi_conn)

    sa.event.listen(engine, "before_cursor_execute", arm)
    sa.event.listen(engine, "after_cursor_execute", disarm)
    sa.event.listen(engine, "commit", arm)
    sa.event.listen(engine, "rollback", arm)

    @sa.event.listens_for(engine, "handle_error")
    def _disarm_on_error(ctx: Any) -> None:
        if ctx.connection is not None:
            disarm(ctx.connection)

    @sa.event.listens_for(engine.pool, "reset")
    def _arm_reset(dbapi_conn: Any, _record: Any, _state: Any) -> None:
        watchdog.arm(dbapi_conn)  # the rollback on return to the pool

    @sa.event.listens_for(engine.pool, "checkin")
    def _disarm_checkin(dbapi_conn: Any, _record: Any) -> None:
        if dbapi_conn is not None:
            watchdog.disarm(dbapi_conn)

    return engine


@dataclass
class SessionRow:
    id: str
    task_identifier: str
    task_version: int
    saved: str
    saved_at: int
    version: int
    status: str
    finish_reason: Optional[str]
    result: Optional[str]


@dataclass
class TaskRow:
    identifier: str
    version: int
    definition: str
    fingerprint: str
    source: str
    source_document: Optional[str]


class Store:
    """Every query the service makes, each in its own short transaction."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    @contextmanager
    def _write(self) -> Iterator[Any]:
        """A write transaction (BEGIN IMMEDIATE on SQLite)."""
        with self.engine.connect() as conn:
            conn = conn.execution_options(stepkit_write=True)
            with conn.begin():
                yield conn

    # -- tasks --------------------------------------------------------------------------------

    def add_task(self, identifier: str, definition: str, fingerprint: str, source: str,
                 source_document: Optional[str]) -> TaskRow:
        """Stores a new version of a task (1 for a new identifier). The same definition as the
        latest version is not stored again: its version is returned."""
        for _attempt in range(5):
            try:
                with self._write() as conn:
                    latest = conn.execute(
                        sa.select(tasks).where(tasks.c.identifier == identifier)
                        .order_by(tasks.c.version.desc()).limit(1)
                    ).first()
                    if latest is not None and latest.fingerprint == fingerprint \
                            and latest.definition == definition:
                        return _task_row(latest)
                    version = 1 if latest is None else latest.version + 1
                    conn.execute(tasks.insert().values(
                        identifier=identifier, version=version, definition=definition,
                        fingerprint=fingerprint, source=source,
                        source_document=source_document, created_at=now_iso()))
                    return TaskRow(identifier, version, definition, fingerprint, source,
                                   source_document)
            except sa.exc.IntegrityError:
                continue  # another instance stored a version at the same moment: read again
        raise RuntimeError("could not store the task version")

    def latest_task(self, identifier: str) -> Optional[TaskRow]:
        with self.engine.connect() as conn:
            row = conn.execute(
                sa.select(tasks).where(tasks.c.identifier == identifier)
                .order_by(tasks.c.version.desc()).limit(1)
            ).first()
        return None if row is None else _task_row(row)

    def task(self, identifier: str, version: int) -> Optional[TaskRow]:
        with self.engine.connect() as conn:
            row = conn.execute(
                sa.select(tasks).where(tasks.c.identifier == identifier,
                                       tasks.c.version == version)
            ).first()
        return None if row is None else _task_row(row)

    def task_versions(self, identifier: str) -> List[Dict[str, Any]]:
        with self.engine.connect() as conn:
            rows = conn.execute(
                sa.select(tasks.c.version, tasks.c.fingerprint, tasks.c.source,
                          tasks.c.created_at)
                .where(tasks.c.identifier == identifier).order_by(tasks.c.version)
            ).all()
        return [dict(r._mapping) for r in rows]

    # -- sessions and tokens ------------------------------------------------------------------

    def add_session(self, session_id: str, task: TaskRow, saved: str, saved_at: int,
                    resume_hash: str) -> None:
        now = now_iso()
        with self._write() as conn:
            conn.execute(sessions.insert().values(
                id=session_id, task_identifier=task.identifier, task_version=task.version,
                saved=saved, saved_at=saved_at, version=1, status="open", finish_reason=None, result=None,
                created_at=now, updated_at=now))
            conn.execute(tokens.insert().values(
                hash=resume_hash, kind="resume", session_id=session_id, task_identifier=None,
                revoked=False, created_at=now))

    def add_invite(self, task_identifier: str, invite_hash: str) -> None:
        with self._write() as conn:
            conn.execute(tokens.insert().values(
                hash=invite_hash, kind="invite", session_id=None,
                task_identifier=task_identifier, revoked=False, created_at=now_iso()))

    def add_resume_token(self, session_id: str, resume_hash: str) -> None:
        with self._write() as conn:
            conn.execute(tokens.insert().values(
                hash=resume_hash, kind="resume", session_id=session_id, task_identifier=None,
                revoked=False, created_at=now_iso()))

    def token(self, hash_: str) -> Optional[Dict[str, Any]]:
        with self.engine.connect() as conn:
            row = conn.execute(sa.select(tokens).where(tokens.c.hash == hash_)).first()
        return None if row is None else dict(row._mapping)

    def session_by_resume_token(self, hash_: str) -> Optional[SessionRow]:
        """The session a live resume token names (one query: this runs on every page)."""
        with self.engine.connect() as conn:
            row = conn.execute(
                sa.select(sessions).join(tokens, tokens.c.session_id == sessions.c.id)
                .where(tokens.c.hash == hash_, tokens.c.kind == "resume",
                       tokens.c.revoked == sa.false())
            ).first()
        return None if row is None else _session_row(row)

    def revoke_tokens(self, session_id: str) -> int:
        with self._write() as conn:
            res = conn.execute(tokens.update().where(tokens.c.session_id == session_id)
                               .values(revoked=True))
        return res.rowcount

    def session(self, session_id: str) -> Optional[SessionRow]:
        with self.engine.connect() as conn:
            row = conn.execute(sa.select(sessions).where(sessions.c.id == session_id)).first()
        return None if row is None else _session_row(row)

    def open_sessions(self, task_identifier: str, below_version: int) -> List[str]:
        with self.engine.connect() as conn:
            rows = conn.execute(
                sa.select(sessions.c.id).where(
                    sessions.c.task_identifier == task_identifier,
                    sessions.c.status == "open",
                    sessions.c.task_version < below_version)
            ).all()
        return [r.id for r in rows]

    def update_session(self, row: SessionRow, *, saved: str, saved_at: int, task_version: int,
                       status: str, finish_reason: Optional[str], result: Optional[str],
                       report: Optional[str] = None) -> bool:
        """Writes the session if nobody else has since ``row`` was read: ``UPDATE ... WHERE
        version = :v``. Returns False (and writes nothing) when the version has moved on.

        A write that moves the session onto another task version (a migration) keeps the row
        as it was in ``session_history``, with ``report`` (what was kept and dropped), in the
        same transaction: the migration either keeps its copy or does not happen."""
        with self._write() as conn:
            res = conn.execute(
                sessions.update()
                .where(sessions.c.id == row.id, sessions.c.version == row.version)
                .values(saved=saved, saved_at=saved_at, version=row.version + 1,
                        task_version=task_version, status=status,
                        finish_reason=finish_reason, result=result, updated_at=now_iso()))
            if res.rowcount != 1:
                return False
            if task_version != row.task_version:
                conn.execute(session_history.insert().values(
                    session_id=row.id, task_identifier=row.task_identifier,
                    task_version=row.task_version, version=row.version, saved=row.saved,
                    saved_at=row.saved_at, status=row.status, reason="migrated",
                    to_task_version=task_version, report=report, created_at=now_iso()))
        return True

    def history(self, session_id: str) -> List[Dict[str, Any]]:
        with self.engine.connect() as conn:
            rows = conn.execute(
                sa.select(session_history).where(session_history.c.session_id == session_id)
                .order_by(session_history.c.id)
            ).all()
        return [dict(r._mapping) for r in rows]

    def now_ms(self) -> int:
        """The database server's clock, in ms since the epoch (one clock for every instance)."""
        if self.engine.dialect.name == "postgresql":
            query = "SELECT CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000 AS BIGINT)"
        else:  # SQLite runs in this process: its clock is this machine's
            query = "SELECT CAST((julianday('now') - 2440587.5) * 86400000.0 AS INTEGER)"
        with self.engine.connect() as conn:
            return int(conn.execute(sa.text(query)).scalar_one())

    def ping(self) -> None:
        with self.engine.connect() as conn:
            conn.execute(sa.text("SELECT 1"))


def _task_row(row: Any) -> TaskRow:
    return TaskRow(row.identifier, row.version, row.definition, row.fingerprint, row.source,
                   row.source_document)


def _session_row(row: Any) -> SessionRow:
    return SessionRow(row.id, row.task_identifier, row.task_version, row.saved, row.saved_at,
                      row.version,
                      row.status, row.finish_reason, row.result)
