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
import weakref
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Any, Dict, Iterator, List, Optional

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from .columns import date as _date, flag as _flag, identifier as _identifier, key as _key
from .columns import number as _number, serial as _serial, text as _text, username as _username
from .columns import word as _word

log = logging.getLogger("stepkit_web.db")

metadata = sa.MetaData()


# The kinds of column the tables share are decided once, in columns.py, which the migrations
# (migrations/versions) build their tables with too; tests/test_database.py checks that, applied
# in order, they build exactly these tables. Below: which columns a session's history keeps.


def _saved_row() -> List[sa.Column]:
    """What a session row holds of its run, which its history keeps as it was: the task version,
    the row's version, the restoration data and its clock time, the status."""
    return [_identifier("task_identifier"), _number("task_version"), _number("version"),
            _text("saved", nullable=False),
            # The session clock's time (ms since the epoch) when `saved` was written: a running
            # timer goes on from there when the session is restored (see Service.restore).
            _number("saved_at", sa.BigInteger),
            # "open", "finished"
            _word("status")]


tasks = sa.Table(
    "tasks",
    metadata,
    _serial(),
    _identifier("identifier"),
    _number("version"),
    _text("definition", nullable=False),
    _identifier("fingerprint"),
    # "stepkit", or "fhir" once the FHIR importer has landed (then source_document holds the
    # Questionnaire, for the QuestionnaireResponse).
    _word("source"),
    _text("source_document"),
    _date("created_at"),
    # "published" (sessions run on the newest published version) or "draft" (stored, not
    # served until a staff member publishes it).
    _word("status", server_default="published"),
    sa.UniqueConstraint("identifier", "version", name="uq_tasks_identifier_version"),
)

sessions = sa.Table(
    "sessions",
    metadata,
    _key("id", primary_key=True),
    *_saved_row(),
    _word("finish_reason", 40, nullable=True),
    _text("result"),
    _date("created_at"),
    _date("updated_at"),
    # The participant identifier of a personal invite (None for open links and API sessions).
    _identifier("participant", nullable=True),
    # The step the session is on (the study page lists it without restoring every session).
    _identifier("step", nullable=True),
    _date("finished_at", nullable=True),
    # A finished session of a FHIR task: its QuestionnaireResponse (JSON), kept with the result.
    _text("response"),
    # The completion step as the participant saw it when the run finished (JSON: title, text).
    _text("closing"),
    sa.Index("ix_sessions_task", "task_identifier", "status"),
    sa.Index("ix_sessions_participant", "task_identifier", "participant"),
)

tokens = sa.Table(
    "tokens",
    metadata,
    # SHA-256 of the token: the token itself is only ever in the participant's link.
    _key("hash", primary_key=True),
    # "resume" (names a session), "invite" (an open link: names a task, each browser that
    # opens it starts a session) or "personal" (names a task and a participant: the first
    # opening creates the one session, session_id, and every later opening resumes it).
    _word("kind", 10),
    _key("session_id", nullable=True),
    _identifier("task_identifier", nullable=True),
    _flag("revoked", default=False),
    _date("created_at"),
    _identifier("participant", nullable=True),
    _date("expires_at", nullable=True),  # None: never
    sa.Index("ix_tokens_session", "session_id"),
    sa.Index("ix_tokens_task", "task_identifier", "kind"),
)

studies = sa.Table(
    "studies",
    metadata,
    # What the participant pages say about a task's study (the task format has no title).
    _identifier("task_identifier", primary_key=True),
    _text("title"),
    _text("description"),
    _text("duration"),
    _text("contact"),
    _date("updated_at"),
    # A submitted result must verify against the task (docs/verify.md) to be accepted.
    _flag("require_verified", server_default=sa.false()),
)

submissions = sa.Table(
    "submissions",
    metadata,
    # A result a client ran and submitted (issue 33): the verification's divergences (JSON) and
    # the engine's recomputed result (and QuestionnaireResponse) — stored instead of the client's.
    _key("id", primary_key=True),
    _identifier("task_identifier"),
    _number("task_version"),
    _flag("verified"),
    _text("divergences", nullable=False),
    _text("result"),
    _text("response"),
    _date("received_at"),
    sa.Index("ix_submissions_task", "task_identifier"),
)

api_keys = sa.Table(
    "api_keys",
    metadata,
    # A per-study key of the host API: SHA-256 of the key, which is shown once when made.
    _key("hash", primary_key=True),
    _identifier("task_identifier"),
    _flag("revoked", default=False),
    _date("created_at"),
    sa.Index("ix_api_keys_task", "task_identifier"),
)

staff = sa.Table(
    "staff",
    metadata,
    _username("username", primary_key=True),
    _text("password_hash", nullable=False),  # argon2id (argon2-cffi)
    _date("created_at"),
)

staff_sessions = sa.Table(
    "staff_sessions",
    metadata,
    _key("hash", primary_key=True),  # SHA-256 of the cookie's token
    _username("username"),
    _key("csrf"),  # the token every staff form carries
    _number("expires_at", sa.BigInteger),  # ms since the epoch
)


session_history = sa.Table(
    "session_history",
    metadata,
    # Append-only: a session's row as it was before something replaced it (a migration onto a
    # new task version), with what the replacement kept and dropped. Never updated or deleted.
    _serial(),
    _key("session_id"),
    *_saved_row(),
    # "migrated"
    _word("reason"),
    _number("to_task_version", nullable=True),
    # The engine's restore report as JSON: {"kept": [...], "dropped": [{step, item, reason}]}
    _text("report"),
    _date("created_at"),
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


# Each PostgreSQL engine's watchdog, for the statements run on the DBAPI connection directly
# (Store.page_row, Store.update_session), which SQLAlchemy's events do not see.
_WATCHDOGS: "weakref.WeakKeyDictionary[Engine, Watchdog]" = weakref.WeakKeyDictionary()
# Each SQLite engine's page writer lock and busy timeout (Store._driver): SQLite has one writer
# at a time, and a writer that finds the database locked sleeps in its busy handler (1, 2, 5,
# 10... ms) whether or not the lock is free again meanwhile; a worker's page UPDATEs queue on
# this lock instead and each starts the moment the previous one committed. Other processes
# are still waited for by the busy handler.
_SQLITE_WRITERS: "weakref.WeakKeyDictionary[Engine, Any]" = weakref.WeakKeyDictionary()


def make_engine(url: str, pool_size: int = 10, timeouts: Timeouts = Timeouts(),
                max_overflow: int = 5) -> Engine:
    """An engine for ``url``: SQLite (WAL, synchronous=FULL, a busy timeout) or PostgreSQL
    (connect, statement and pool timeouts)."""
    if url.startswith("sqlite"):
        engine = sa.create_engine(url, connect_args={"timeout": timeouts.busy,
                                                     "check_same_thread": False})
        busy_ms = int(timeouts.busy * 1000)
        _SQLITE_WRITERS[engine] = (threading.Lock(), timeouts.busy)

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
            options = conn.get_execution_options()
            if options.get("stepkit_write"):
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
    watchdog = _WATCHDOGS[engine] = Watchdog(timeouts.statement + 1.0)

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
    participant: Optional[str] = None
    step: Optional[str] = None
    response: Optional[str] = None
    closing: Optional[str] = None
    token_expires_at: Optional[str] = None  # of the link the row was found by
    # Read with the row by a resume token (one query per page): the task's newest published
    # version and the database's clock (ms).
    latest_version: Optional[int] = None
    db_now: Optional[int] = None


# What a SessionRow holds of a session's row, in its order.
_ROW_COLUMNS = ("id", "task_identifier", "task_version", "saved", "saved_at", "version", "status",
                "finish_reason", "result", "participant", "step", "response", "closing")


@dataclass
class TaskRow:
    identifier: str
    version: int
    definition: str
    fingerprint: str
    source: str
    source_document: Optional[str]
    status: str = "published"


class Store:
    """Every query the service makes, each in its own short transaction."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self._by_resume_token: Any = None  # session_by_resume_token's statement, once built
        self._updates: Dict[bool, Any] = {}  # update_session's statements (with finished_at or not)
        self._raw_sql: Dict[Any, Any] = {}  # the same statements as the driver's SQL text
        self._watchdog = _WATCHDOGS.get(engine)
        self._writer = _SQLITE_WRITERS.get(engine)  # (lock, busy timeout) on SQLite
        self._postgres = engine.dialect.name == "postgresql"

    # -- the page's two statements on the driver's connection ----------------------------------
    #
    # A page POST runs two statements: the session lookup and the conditional UPDATE. Through
    # SQLAlchemy's Connection each cost more CPU than the statement itself (the connection and
    # transaction objects, the events, the compiled-cache lookup, the result object), so they
    # run as the very SQL SQLAlchemy compiles for the dialect (compiled once, below) on the
    # pool's DBAPI connection, each in autocommit: one statement is one transaction (SQLite
    # takes the write lock when the UPDATE starts, waiting up to its busy timeout, and fsyncs
    # the WAL at its commit; PostgreSQL commits it with the WAL flushed). What SQLAlchemy's
    # Connection did around them is done here: the watchdog (PostgreSQL), a driver error
    # raised as SQLAlchemy's DBAPIError (so the 503 handler answers), a dropped connection
    # invalidated.

    def _compiled(self, key: Any, statement: Any) -> Any:
        """``statement`` as the driver's SQL and a function of its parameters to the driver's
        (positional or named, as the driver takes them)."""
        found = self._raw_sql.get(key)
        if found is None:
            compiled = statement.compile(dialect=self.engine.dialect)
            constants = compiled.construct_params(
                {name: None for name, bind in compiled.binds.items() if bind.required})
            order = compiled.positiontup
            if order is not None:  # qmark (sqlite3)
                def params(given: Dict[str, Any]) -> Any:
                    return tuple(given[n] if n in given else constants[n] for n in order)
            else:  # named (psycopg's %(name)s)
                def params(given: Dict[str, Any]) -> Any:
                    return {**constants, **given}
            found = self._raw_sql[key] = (compiled.string, params)
        return found

    def _driver(self, sql: str, params: Any, fetch: bool) -> Any:
        """Runs one statement in autocommit on a pooled connection: the first row (``fetch``)
        or the row count (a write: on SQLite, one at a time per worker)."""
        if fetch or self._writer is None:
            return self._run(sql, params, fetch)
        lock, busy = self._writer
        if not lock.acquire(timeout=busy):  # as long as SQLite's busy timeout: then a 503
            import sqlite3

            raise sa.exc.OperationalError(sql, params, sqlite3.OperationalError(
                "database is locked (another page's write in this worker)"))
        try:
            return self._run(sql, params, fetch)
        finally:
            lock.release()

    def _run(self, sql: str, params: Any, fetch: bool) -> Any:
        dialect = self.engine.dialect
        try:
            fairy = self.engine.raw_connection()
        except dialect.loaded_dbapi.Error as error:  # could not connect
            raise sa.exc.DBAPIError.instance(None, None, error, dialect.loaded_dbapi.Error,
                                             dialect=dialect) from error
        dbapi_conn = fairy.dbapi_connection
        cursor = None
        try:
            if self._postgres:
                dbapi_conn.autocommit = True
            cursor = fairy.cursor()
            if self._watchdog is not None:
                self._watchdog.arm(dbapi_conn)
            try:
                cursor.execute(sql, params)
                return cursor.fetchone() if fetch else cursor.rowcount
            finally:
                if self._watchdog is not None:
                    self._watchdog.disarm(dbapi_conn)
        except dialect.loaded_dbapi.Error as error:
            gone = dialect.is_disconnect(error, dbapi_conn, cursor)
            if gone:
                fairy.invalidate(error)
            raise sa.exc.DBAPIError.instance(sql, params, error, dialect.loaded_dbapi.Error,
                                             connection_invalidated=gone,
                                             dialect=dialect) from error
        finally:
            if cursor is not None:
                try:
                    cursor.close()
                except dialect.loaded_dbapi.Error:
                    pass
            if self._postgres and fairy.is_valid:
                try:
                    dbapi_conn.autocommit = False  # as the pool hands it out
                except dialect.loaded_dbapi.Error:
                    fairy.invalidate()
            fairy.close()

    @contextmanager
    def _write(self) -> Iterator[Any]:
        """A write transaction (BEGIN IMMEDIATE on SQLite)."""
        with self.engine.connect() as conn:
            conn = conn.execution_options(stepkit_write=True)
            with conn.begin():
                yield conn

    # -- tasks --------------------------------------------------------------------------------

    def add_task(self, identifier: str, definition: str, fingerprint: str, source: str,
                 source_document: Optional[str], status: str = "published") -> TaskRow:
        """Stores a new version of a task (1 for a new identifier), published or as a draft.
        The same definition as the latest version is not stored again: its version is
        returned (a draft of it published when ``status`` is "published")."""
        for _attempt in range(5):
            try:
                with self._write() as conn:
                    latest = conn.execute(
                        sa.select(tasks).where(tasks.c.identifier == identifier)
                        .order_by(tasks.c.version.desc()).limit(1)
                    ).first()
                    if latest is not None and latest.fingerprint == fingerprint \
                            and latest.definition == definition \
                            and latest.source_document == source_document:
                        if status == "published" and latest.status != "published":
                            conn.execute(tasks.update().where(tasks.c.id == latest.id)
                                         .values(status="published"))
                            return replace(_task_row(latest), status="published")
                        return _task_row(latest)
                    version = 1 if latest is None else latest.version + 1
                    conn.execute(tasks.insert().values(
                        identifier=identifier, version=version, definition=definition,
                        fingerprint=fingerprint, source=source,
                        source_document=source_document, created_at=now_iso(),
                        status=status))
                    return TaskRow(identifier, version, definition, fingerprint, source,
                                   source_document, status)
            except sa.exc.IntegrityError:
                continue  # another instance stored a version at the same moment: read again
        raise RuntimeError("could not store the task version")

    def latest_task(self, identifier: str) -> Optional[TaskRow]:
        """The newest published version: the one sessions run on."""
        with self.engine.connect() as conn:
            row = conn.execute(
                sa.select(tasks).where(tasks.c.identifier == identifier,
                                       tasks.c.status == "published")
                .order_by(tasks.c.version.desc()).limit(1)
            ).first()
        return None if row is None else _task_row(row)

    def publish(self, identifier: str, version: int) -> Optional[TaskRow]:
        """Marks a draft published; None if there is no such version."""
        with self._write() as conn:
            conn.execute(tasks.update().where(tasks.c.identifier == identifier,
                                              tasks.c.version == version)
                         .values(status="published"))
            row = conn.execute(sa.select(tasks).where(
                tasks.c.identifier == identifier, tasks.c.version == version)).first()
        return None if row is None else _task_row(row)

    def task_identifiers(self) -> List[str]:
        with self.engine.connect() as conn:
            rows = conn.execute(sa.select(tasks.c.identifier).distinct()
                                .order_by(tasks.c.identifier)).all()
        return [r.identifier for r in rows]

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
                          tasks.c.created_at, tasks.c.status)
                .where(tasks.c.identifier == identifier).order_by(tasks.c.version)
            ).all()
        return [dict(r._mapping) for r in rows]

    # -- sessions and tokens ------------------------------------------------------------------

    def add_session(self, session_id: str, task: TaskRow, saved: str, saved_at: int,
                    resume_hash: Optional[str], step: Optional[str] = None,
                    personal_hash: Optional[str] = None,
                    participant: Optional[str] = None) -> Optional[str]:
        """Stores a new session with its resume token; with ``personal_hash``, binds the
        personal invite to it instead (its own link then resumes it). Returns the session id,
        or for a personal invite already bound (two clicks at once) the one bound first."""
        now = now_iso()
        with self._write() as conn:
            if personal_hash is not None:
                res = conn.execute(tokens.update().where(
                    tokens.c.hash == personal_hash, tokens.c.session_id.is_(None))
                    .values(session_id=session_id))
                if res.rowcount != 1:
                    bound = conn.execute(sa.select(tokens.c.session_id).where(
                        tokens.c.hash == personal_hash)).scalar()
                    return bound
            conn.execute(sessions.insert().values(
                id=session_id, task_identifier=task.identifier, task_version=task.version,
                saved=saved, saved_at=saved_at, version=1, status="open", finish_reason=None,
                result=None, created_at=now, updated_at=now, participant=participant,
                step=step))
            if resume_hash is not None:
                conn.execute(tokens.insert().values(
                    hash=resume_hash, kind="resume", session_id=session_id,
                    task_identifier=None, revoked=False, created_at=now))
        return session_id

    def add_invite(self, task_identifier: str, invite_hash: str) -> None:
        with self._write() as conn:
            conn.execute(tokens.insert().values(
                hash=invite_hash, kind="invite", session_id=None,
                task_identifier=task_identifier, revoked=False, created_at=now_iso()))

    def add_personal_invites(self, task_identifier: str, invites: List[tuple],
                             expires_at: Optional[str]) -> None:
        """``invites``: (token hash, participant id) pairs, stored in one transaction."""
        now = now_iso()
        with self._write() as conn:
            for hash_, participant in invites:
                conn.execute(tokens.insert().values(
                    hash=hash_, kind="personal", session_id=None,
                    task_identifier=task_identifier, revoked=False, created_at=now,
                    participant=participant, expires_at=expires_at))

    def invites(self, task_identifier: str) -> List[Dict[str, Any]]:
        """Personal invites and open links of a task, newest first, with their session's
        status."""
        with self.engine.connect() as conn:
            rows = conn.execute(
                sa.select(tokens.c.hash, tokens.c.kind, tokens.c.participant,
                          tokens.c.revoked, tokens.c.created_at, tokens.c.expires_at,
                          tokens.c.session_id, sessions.c.status)
                .select_from(tokens.outerjoin(sessions, sessions.c.id == tokens.c.session_id))
                .where(tokens.c.task_identifier == task_identifier,
                       tokens.c.kind.in_(("invite", "personal")))
                .order_by(tokens.c.created_at.desc(), tokens.c.participant)
            ).all()
        return [dict(r._mapping) for r in rows]

    def revoke_token(self, task_identifier: str, hash_: str) -> int:
        with self._write() as conn:
            res = conn.execute(tokens.update().where(
                tokens.c.hash == hash_, tokens.c.task_identifier == task_identifier)
                .values(revoked=True))
        return res.rowcount

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
        query = self._by_resume_token
        if query is None:
            # Built once per store (its text is cached by SQLAlchemy too): building it was a
            # good part of a page POST's own CPU time.
            latest = (sa.select(sa.func.max(tasks.c.version))
                      .where(tasks.c.identifier == sessions.c.task_identifier,
                             tasks.c.status == "published")
                      .scalar_subquery().label("latest_version"))
            query = self._by_resume_token = (
                sa.select(*(sessions.c[f] for f in _ROW_COLUMNS),
                          tokens.c.expires_at.label("token_expires_at"), latest,
                          self._now_column().label("db_now"))
                .join(tokens, tokens.c.session_id == sessions.c.id)
                .where(tokens.c.hash == sa.bindparam("token_hash"),
                       sa.or_(tokens.c.kind == "resume", tokens.c.kind == "personal"),
                       tokens.c.revoked == sa.false()))
        sql, params = self._compiled("by_resume_token", query)
        row = self._driver(sql, params({"token_hash": hash_}), fetch=True)
        if row is None:
            return None
        # The columns in SessionRow's order (_ROW_COLUMNS, then the three labelled ones).
        found = SessionRow(*row[:13], token_expires_at=row[13])
        found.latest_version = row[14]
        found.db_now = int(row[15])
        return found

    def _now_column(self) -> Any:
        """The database server's clock in ms, as a column (see :meth:`now_ms`)."""
        if self.engine.dialect.name == "postgresql":
            return sa.cast(sa.func.extract("epoch", sa.func.clock_timestamp()) * 1000,
                           sa.BigInteger)
        return sa.cast((sa.func.julianday("now") - 2440587.5) * 86400000.0, sa.Integer)

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
                       report: Optional[str] = None, step: Optional[str] = None,
                       response: Optional[str] = None, closing: Optional[str] = None) -> bool:
        """Writes the session if nobody else has since ``row`` was read: ``UPDATE ... WHERE
        version = :v``. Returns False (and writes nothing) when the version has moved on.

        A write that moves the session onto another task version (a migration) keeps the row
        as it was in ``session_history``, with ``report`` (what was kept and dropped), in the
        same transaction: the migration either keeps its copy or does not happen."""
        now = now_iso()
        finished_at = now if status == "finished" and row.status != "finished" else None
        values: Dict[str, Any] = dict(
            saved=saved, saved_at=saved_at, version=row.version + 1, task_version=task_version,
            status=status, finish_reason=finish_reason, result=result, updated_at=now,
            step=step, response=response, closing=closing)
        if finished_at:
            values["finished_at"] = finished_at
        statement = self._updates.get(bool(finished_at))
        if statement is None:
            # Built once per store, its values bound at execution: building it was a good part
            # of a page POST's own CPU time.
            statement = self._updates[bool(finished_at)] = (
                sessions.update()
                .where(sessions.c.id == sa.bindparam("row_id"),
                       sessions.c.version == sa.bindparam("row_version"))
                .values(**{name: sa.bindparam("v_" + name) for name in values}))
        params = {"v_" + name: value for name, value in values.items()}
        params["row_id"], params["row_version"] = row.id, row.version
        if task_version == row.task_version:  # one statement: a transaction of its own
            sql, driver_params = self._compiled(("update", bool(finished_at)), statement)
            return self._driver(sql, driver_params(params), fetch=False) == 1
        with self._write() as conn:
            res = conn.execute(statement, params)
            if res.rowcount != 1:
                return False
            if task_version != row.task_version:
                conn.execute(session_history.insert().values(
                    session_id=row.id, task_identifier=row.task_identifier,
                    task_version=row.task_version, version=row.version, saved=row.saved,
                    saved_at=row.saved_at, status=row.status, reason="migrated",
                    to_task_version=task_version, report=report, created_at=now_iso()))
        return True

    def list_sessions(self, task_identifier: str, status: Optional[str] = None,
                      participant: Optional[str] = None,
                      with_data: bool = False) -> List[Dict[str, Any]]:
        """A task's sessions, oldest first, for the study page and the exports (``with_data``:
        with the restoration data, result and QuestionnaireResponse)."""
        cols = [sessions.c.id, sessions.c.participant, sessions.c.status,
                sessions.c.finish_reason, sessions.c.step, sessions.c.task_version,
                sessions.c.created_at, sessions.c.updated_at, sessions.c.finished_at]
        if with_data:
            cols += [sessions.c.saved, sessions.c.saved_at, sessions.c.version,
                     sessions.c.result, sessions.c.response, sessions.c.task_identifier,
                     sessions.c.closing]
        query = sa.select(*cols).where(sessions.c.task_identifier == task_identifier)
        if status:
            query = query.where(sessions.c.status == status)
        if participant:
            query = query.where(sessions.c.participant == participant)
        with self.engine.connect() as conn:
            rows = conn.execute(query.order_by(sessions.c.created_at, sessions.c.id)).all()
        return [dict(r._mapping) for r in rows]

    def delete_participant(self, task_identifier: str, participant: str) -> int:
        """Deletes a participant's sessions of a task, their history and links (the invite
        too). Returns the number of sessions deleted."""
        with self._write() as conn:
            ids = [r.id for r in conn.execute(sa.select(sessions.c.id).where(
                sessions.c.task_identifier == task_identifier,
                sessions.c.participant == participant)).all()]
            if ids:
                conn.execute(session_history.delete().where(
                    session_history.c.session_id.in_(ids)))
                conn.execute(tokens.delete().where(tokens.c.session_id.in_(ids)))
                conn.execute(sessions.delete().where(sessions.c.id.in_(ids)))
            conn.execute(tokens.delete().where(tokens.c.task_identifier == task_identifier,
                                               tokens.c.participant == participant))
        return len(ids)

    def study(self, task_identifier: str) -> Dict[str, Any]:
        with self.engine.connect() as conn:
            row = conn.execute(sa.select(studies).where(
                studies.c.task_identifier == task_identifier)).first()
        return {} if row is None else dict(row._mapping)

    def set_study(self, task_identifier: str, **fields: Optional[str]) -> None:
        with self._write() as conn:
            done = conn.execute(studies.update().where(
                studies.c.task_identifier == task_identifier)
                .values(updated_at=now_iso(), **fields)).rowcount
            if not done:
                conn.execute(studies.insert().values(task_identifier=task_identifier,
                                                     updated_at=now_iso(), **fields))

    def require_verified(self, task_identifier: str) -> bool:
        with self.engine.connect() as conn:
            return bool(conn.execute(sa.select(studies.c.require_verified).where(
                studies.c.task_identifier == task_identifier)).scalar())

    def set_require_verified(self, task_identifier: str, value: bool) -> None:
        with self._write() as conn:
            done = conn.execute(studies.update().where(
                studies.c.task_identifier == task_identifier)
                .values(updated_at=now_iso(), require_verified=value)).rowcount
            if not done:
                conn.execute(studies.insert().values(task_identifier=task_identifier,
                                                     updated_at=now_iso(), require_verified=value))

    # -- submissions (verified results, docs/verify.md) ----------------------------------------

    def add_submission(self, submission_id: str, task_identifier: str, task_version: int,
                       verified: bool, divergences: str, result: Optional[str],
                       response: Optional[str]) -> None:
        with self._write() as conn:
            conn.execute(submissions.insert().values(
                id=submission_id, task_identifier=task_identifier, task_version=task_version,
                verified=verified, divergences=divergences, result=result, response=response,
                received_at=now_iso()))

    def submission(self, submission_id: str) -> Optional[Dict[str, Any]]:
        with self.engine.connect() as conn:
            row = conn.execute(sa.select(submissions).where(
                submissions.c.id == submission_id)).first()
        return None if row is None else dict(row._mapping)

    # -- per-study API keys -----------------------------------------------------------------

    def add_api_key(self, task_identifier: str, hash_: str) -> None:
        with self._write() as conn:
            conn.execute(api_keys.insert().values(hash=hash_, task_identifier=task_identifier,
                                                  revoked=False, created_at=now_iso()))

    def api_key_scope(self, hash_: str) -> Optional[str]:
        """The task identifier a live per-study key reaches, or None."""
        with self.engine.connect() as conn:
            return conn.execute(sa.select(api_keys.c.task_identifier).where(
                api_keys.c.hash == hash_, api_keys.c.revoked == sa.false())).scalar()

    def study_api_keys(self, task_identifier: str) -> List[Dict[str, Any]]:
        with self.engine.connect() as conn:
            rows = conn.execute(sa.select(api_keys).where(
                api_keys.c.task_identifier == task_identifier)
                .order_by(api_keys.c.created_at)).all()
        return [dict(r._mapping) for r in rows]

    def revoke_api_key(self, task_identifier: str, hash_: str) -> int:
        with self._write() as conn:
            return conn.execute(api_keys.update().where(
                api_keys.c.hash == hash_, api_keys.c.task_identifier == task_identifier)
                .values(revoked=True)).rowcount

    # -- staff ------------------------------------------------------------------------------

    def add_staff(self, username: str, password_hash: str) -> bool:
        """False when the name is taken (its password is then replaced)."""
        with self._write() as conn:
            done = conn.execute(staff.update().where(staff.c.username == username)
                                .values(password_hash=password_hash)).rowcount
            if not done:
                conn.execute(staff.insert().values(username=username,
                                                   password_hash=password_hash,
                                                   created_at=now_iso()))
        return not done

    def staff_hash(self, username: str) -> Optional[str]:
        with self.engine.connect() as conn:
            return conn.execute(sa.select(staff.c.password_hash).where(
                staff.c.username == username)).scalar()

    def add_staff_session(self, hash_: str, username: str, csrf: str, expires_at: int) -> None:
        with self._write() as conn:
            conn.execute(staff_sessions.insert().values(hash=hash_, username=username,
                                                        csrf=csrf, expires_at=expires_at))

    def staff_session(self, hash_: str) -> Optional[Dict[str, Any]]:
        with self.engine.connect() as conn:
            row = conn.execute(sa.select(staff_sessions).where(
                staff_sessions.c.hash == hash_)).first()
        return None if row is None else dict(row._mapping)

    def end_staff_session(self, hash_: str) -> None:
        with self._write() as conn:
            conn.execute(staff_sessions.delete().where(staff_sessions.c.hash == hash_))

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
                   row.source_document, row.status)


def _session_row(row: Any, expires_at: Optional[str] = None) -> SessionRow:
    return SessionRow(row.id, row.task_identifier, row.task_version, row.saved, row.saved_at,
                      row.version, row.status, row.finish_reason, row.result,
                      row.participant, row.step, row.response, row.closing, expires_at)
