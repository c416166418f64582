"""Storage: the tables (SQLAlchemy Core), the engine for SQLite (WAL) or PostgreSQL (psycopg 3),
and every query the service makes.

Restoration data is kept as TEXT exactly as the engine wrote it (never jsonb, which reorders
keys and would break the integrity check). Every write to a session is a compare-and-set on its
``version`` column, so two requests that started from the same page cannot both win."""

from __future__ import annotations

import datetime as _dt
import hashlib
import logging
import secrets
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


def now_iso() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="milliseconds")


def new_token() -> str:
    """A 128-bit random token, URL-safe."""
    return secrets.token_urlsafe(16)


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def make_engine(url: str, pool_size: int = 10) -> Engine:
    """An engine for ``url``: SQLite with WAL and a busy timeout, or PostgreSQL."""
    if url.startswith("sqlite"):
        engine = sa.create_engine(url, connect_args={"timeout": 30, "check_same_thread": False})

        @sa.event.listens_for(engine, "connect")
        def _sqlite_pragmas(dbapi_conn: Any, _record: Any) -> None:
            # Let SQLAlchemy not emit BEGIN itself so that we can issue BEGIN IMMEDIATE.
            dbapi_conn.isolation_level = None
            cur = dbapi_conn.cursor()
            cur.execute("PRAGMA journal_mode=WAL")
            cur.execute("PRAGMA synchronous=NORMAL")
            cur.execute("PRAGMA busy_timeout=30000")
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
    return sa.create_engine(url, pool_size=pool_size, max_overflow=5)


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
                       status: str,
                       finish_reason: Optional[str], result: Optional[str]) -> bool:
        """Writes the session if nobody else has since ``row`` was read: ``UPDATE ... WHERE
        version = :v``. Returns False (and writes nothing) when the version has moved on."""
        with self._write() as conn:
            res = conn.execute(
                sessions.update()
                .where(sessions.c.id == row.id, sessions.c.version == row.version)
                .values(saved=saved, saved_at=saved_at, version=row.version + 1, task_version=task_version,
                        status=status, finish_reason=finish_reason, result=result,
                        updated_at=now_iso()))
        return res.rowcount == 1

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
