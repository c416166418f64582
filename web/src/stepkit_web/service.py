"""The session service: tasks per version, sessions restored and saved around every request.

A request restores the session from its stored restoration data (HMAC-signed with the
server's integrity key), applies one participant action through the engine, saves, and writes
the new data with a compare-and-set on the session's version. Nothing about a task's logic is
decided here: the engine's state says what to show, and its errors what went wrong."""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import os
import re
import tempfile
import threading
import time
import unicodedata
import uuid
from collections import OrderedDict
from urllib.parse import unquote
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple

import stepkit
from stepkit.clock import system_time_ms

from .livesessions import LiveEntry, LiveSessions, time_free
from .timing import TimedSession, timed
from . import fhir
from .db import SessionRow, Store, TaskRow, new_token, token_hash

log = logging.getLogger("stepkit_web")

# Session options a host may pass when creating a session; the others (integrityKey, autosave,
# outputDirectory, limits...) are the service's own business.
HOST_OPTIONS = ("defaultResult", "alwaysCheckForDefaultResult", "personalData",
                "additionalTaskResults", "language", "seed")


class NotFound(Exception):
    """An unknown task, session or token (or a revoked token)."""


class Refused(Exception):
    """A request the service refuses, with the error JSON to show (``{"code", "message"}``)."""

    def __init__(self, status: int, error: Dict[str, Any],
                 retry_after: Optional[int] = None) -> None:
        super().__init__(error.get("message", ""))
        self.status = status
        self.error = error
        self.retry_after = retry_after


class Stale(Exception):
    """The page was not the session's current one (another tab, a double click, Back)."""


class Damaged(Exception):
    """Stored restoration data failed its check: the row is kept, the error logged."""

    def __init__(self, session_id: str, error: stepkit.RestorationError) -> None:
        super().__init__(f"session {session_id}: {error.message}")
        self.session_id = session_id
        self.error = error


class ResumeClock:
    """The clock a restored session runs on: it reads the time of the save while the clock is
    being set, then the request's clock. The engine re-bases a running timer when its clock
    changes ("keeps the time it has run and goes on on the new clock"), so a timed step counts
    the time between two requests, as it would in one long-lived session. It never reads
    earlier than the save: a session's time does not move backwards."""

    def __init__(self, base: Callable[[], int], saved_at: int) -> None:
        self.base = base
        self.saved_at = saved_at
        self.live = False

    def __call__(self) -> int:
        return max(self.base(), self.saved_at) if self.live else self.saved_at

    def freeze(self, at: int) -> None:
        """Reads ``at`` from now on (the save's time): a session kept live between requests
        (livesessions.py) then last read its clock where a restore of its row would start."""
        self.saved_at = at
        self.live = False

    def resume(self, base: Callable[[], int]) -> None:
        """The next request's clock: as a restore of the row would read it."""
        self.base = base
        self.live = True


class RequestClock:
    """The database's clock, read once when a request starts and carried on by this machine's
    monotonic clock: every instance then dates sessions on one clock (the database server's),
    whatever its own wall clock says, at the cost of one query per request."""

    def __init__(self, read: Callable[[], int]) -> None:
        self._base = read()
        self._start = time.monotonic_ns()

    def __call__(self) -> int:
        return self._base + (time.monotonic_ns() - self._start) // 1_000_000


_TOKEN = re.compile(r"[A-Za-z0-9_-]{1,64}")


def token_ok(token: Any) -> bool:
    """Tokens are ``secrets.token_urlsafe`` text: anything else names nothing."""
    return isinstance(token, str) and _TOKEN.fullmatch(token) is not None


def identifier_problem(identifier: str) -> Optional[str]:
    """Why a task identifier cannot be served (it is a path segment of the API), or None."""
    if len(identifier) > 200:
        return "The task identifier is longer than 200 characters."
    if "/" in identifier or identifier in (".", ".."):
        return ("The task identifier cannot contain '/' or be '.' or '..': it is a segment of "
                "the API's paths (/api/tasks/{identifier}).")
    if any(unicodedata.category(c) in ("Cc", "Cs") for c in identifier):
        return "The task identifier cannot contain control characters."
    return None


@dataclass
class Outcome:
    """What a participant action did: the state to render or a redirect target."""
    state: Dict[str, Any]
    errors: List[Dict[str, Any]] = field(default_factory=list)
    refused: bool = False  # an answer the engine refused: nothing was stored


class Service:
    def __init__(self, store: Store, integrity_key: str,
                 clock: Optional[Callable[[], int]] = None, *,
                 time_source: Optional[str] = None, task_cache_size: int = 32,
                 messages: Optional[Mapping[str, Any]] = None,
                 files_directory: Optional[str] = None, live_sessions: int = 256) -> None:
        """``files_directory``: where the files participants give (a signature) are written,
        the sessions' ``outputDirectory`` (by default a ``stepkit-web-files`` directory under
        the system's temporary directory: set it to keep them). ``clock``: this instance's clock (ms; the system clock by default). ``time_source``:
        "database" (the default without an injected clock: sessions are dated on the
        database server's clock) or "instance" (on ``clock``; the default when one is
        injected, as the tests do). ``task_cache_size``: compiled task versions kept (LRU). ``live_sessions``: open
        sessions kept between page POSTs (livesessions.py; 0: every POST restores).
        ``messages``: the host's message catalogues by language tag (the session option
        "messages": the engine's messages to participants in languages it does not ship),
        checked here, so a catalogue missing a message or an argument stops the service at
        start (stepkit.InvalidArgumentError) instead of refusing every session."""
        if not integrity_key:
            raise ValueError("an integrity key is required")
        if time_source is None:
            time_source = "instance" if clock is not None else "database"
        if time_source not in ("instance", "database"):
            raise ValueError(f"time_source must be 'instance' or 'database', not {time_source!r}")
        if task_cache_size < 1:
            raise ValueError("task_cache_size must be at least 1")
        self.store = store
        self._key = integrity_key
        if files_directory is None:
            files_directory = os.path.join(tempfile.gettempdir(), "stepkit-web-files")
        os.makedirs(files_directory, exist_ok=True)
        self.files_directory = os.path.abspath(files_directory)
        self._messages = dict(messages) if messages else None
        if self._messages:
            probe = stepkit.Task.from_json({"identifier": "messages", "steps": [
                {"type": "instruction", "identifier": "i"}]})
            probe.open({"messages": self._messages}).close()
        self.clock = clock
        self.time_source = time_source
        self._instance_now: Callable[[], int] = clock or system_time_ms
        self._tasks: "OrderedDict[Tuple[str, int], Tuple[str, stepkit.Task]]" = OrderedDict()
        self._tasks_lock = threading.Lock()
        self.task_cache_size = task_cache_size
        self._studies: Dict[str, Tuple[float, Dict[str, Optional[str]]]] = {}
        self._rows: Dict[Tuple[str, int], TaskRow] = {}
        self.live = LiveSessions(live_sessions)

    def request_clock(self) -> Callable[[], int]:
        """The clock for one request's work on a session (see ``time_source``)."""
        if self.time_source == "database":
            return RequestClock(self.store.now_ms)
        return self._instance_now

    def now(self) -> int:
        return self.request_clock()()

    # -- tasks --------------------------------------------------------------------------------

    def register(self, body: str, content_type: str, status: str = "published", *,
                 only: Optional[str] = None) -> Dict[str, Any]:
        """Stores a task version: a StepKit definition, or a FHIR Questionnaire
        (``application/fhir+json``: imported by the engine, kept with its translation).
        Published, sessions move onto it; a draft waits for :meth:`publish`."""
        source, source_document = "stepkit", None
        try:
            if "fhir" in content_type:
                task = timed(stepkit.Task.from_fhir, body)
                source, source_document = "fhir", body
                body = json.dumps(stepkit.Task.translate_fhir(body)["task"], ensure_ascii=False)
            else:
                task = timed(stepkit.Task.from_json, body)
        except stepkit.StepKitError as error:
            raise Refused(400, error.error)
        except (ValueError, RecursionError):
            raise Refused(400, {"code": "EPARSE", "message": "The body is not JSON."})
        # The task info: the fingerprint restoration data names this version by, and the
        # recorders (a browser has none of their sensors). Not the body's fault if it fails
        # (libcrypto unavailable): the engine error handler logs it.
        info = task.info
        problem = identifier_problem(task.identifier)
        if problem:
            raise Refused(400, {"code": "EINVAL", "path": "identifier", "message": problem})
        if only is not None and task.identifier != only:  # a per-study key
            raise Refused(403, {"code": "EAUTH", "path": "identifier", "message": "This key "
                                f"reaches the task {only!r} only: nothing was stored."})
        recorders = info["recorders"]
        if recorders:
            raise Refused(422, {
                "code": "EUNSUPPORTED",
                "message": "A browser has no sensors: the task has recorders in "
                           + ", ".join(_recorder_place(r) for r in recorders) + ".",
                "path": recorders[0].get("step") or "asyncActions"})
        row = self.store.add_task(info["identifier"], body, info["fingerprint"], source,
                                  source_document, status)
        migrated = self.migrate_open_sessions(row) if row.status == "published" else 0
        return {"identifier": row.identifier, "version": row.version,
                "fingerprint": row.fingerprint, "source": row.source, "status": row.status,
                "migratedSessions": migrated}

    def publish(self, identifier: str, version: int) -> Dict[str, Any]:
        """Publishes a drafted version: new sessions start on it and open ones move onto it
        (each keeps its old row in the history). An older version than the newest published
        one cannot be published: that would move sessions backwards."""
        current = self.store.latest_task(identifier)
        if current is not None and current.version > version:
            raise Refused(409, {"code": "ESTATE", "message": f"Version {current.version} is "
                                f"published, newer than {version}: nothing was changed."})
        row = self.store.publish(identifier, version)
        if row is None:
            raise NotFound(f"no version {version} of {identifier!r}")
        return {"identifier": identifier, "version": version,
                "migratedSessions": self.migrate_open_sessions(row)}

    def task(self, row: TaskRow) -> stepkit.Task:
        key = (row.identifier, row.version)
        with self._tasks_lock:
            cached = self._tasks.get(key)
            if cached is not None and cached[0] == row.fingerprint:
                self._tasks.move_to_end(key)
                return cached[1]
        if row.source == "fhir":  # compiled from the Questionnaire: its results export as FHIR
            task = timed(stepkit.Task.from_fhir, row.source_document or "")
        else:
            task = timed(stepkit.Task.from_json, row.definition)
        with self._tasks_lock:
            self._tasks[key] = (row.fingerprint, task)
            self._tasks.move_to_end(key)
            while len(self._tasks) > self.task_cache_size:
                # Sessions hold their own reference: an evicted task stays alive while used.
                self._tasks.popitem(last=False)
        return task

    def study(self, identifier: str) -> Dict[str, Optional[str]]:
        """What participant pages say about a task's study: the study settings a staff member
        entered (title, description, duration, contact), the title falling back to the first
        step's title of the published version, never to the identifier. Kept for a few
        seconds per instance (read on every page)."""
        now = time.monotonic()
        with self._tasks_lock:
            cached = self._studies.get(identifier)
        if cached is not None and cached[0] > now:
            return cached[1]
        settings = self.store.study(identifier)
        info: Dict[str, Optional[str]] = {k: settings.get(k) or None for k in
                                          ("title", "description", "duration", "contact")}
        if not info["title"]:
            row = self.store.latest_task(identifier)
            info["title"] = (_first_title(row.definition) if row else None) or "Study"
        with self._tasks_lock:
            self._studies[identifier] = (now + STUDY_TTL, info)
            while len(self._studies) > 256:
                self._studies.pop(next(iter(self._studies)))
        return info

    def set_study(self, identifier: str, **fields: Optional[str]) -> None:
        self.store.set_study(identifier, **fields)
        with self._tasks_lock:
            self._studies.pop(identifier, None)

    def cached_tasks(self) -> List[Tuple[str, int]]:
        with self._tasks_lock:
            return list(self._tasks)

    def _task_row(self, identifier: str, version: Optional[int] = None) -> TaskRow:
        row = (self.store.latest_task(identifier) if version is None
               else self.store.task(identifier, version))
        if row is None:
            raise NotFound(f"no task {identifier!r}")
        return row

    # -- sessions -----------------------------------------------------------------------------

    def _options(self, extra: Optional[Mapping[str, Any]] = None) -> Dict[str, Any]:
        options: Dict[str, Any] = dict(extra or {})
        options["integrityKey"] = self._key
        options["outputDirectory"] = self.files_directory
        if self._messages:
            options["messages"] = self._messages
        return options

    def create_session(self, identifier: str,
                       host_options: Optional[Mapping[str, Any]] = None, *,
                       personal_hash: Optional[str] = None,
                       participant: Optional[str] = None) -> Dict[str, Any]:
        """A new session on the task's published version, with its own resume link; or, with
        ``personal_hash``, bound to that personal invite (whose link then resumes it)."""
        row = self._task_row(identifier)
        extra = {}
        for key, value in (host_options or {}).items():
            if key not in HOST_OPTIONS:
                raise Refused(400, {"code": "EINVAL", "path": key,
                                    "message": f"Unknown or reserved session option {key!r}."})
            extra[key] = value
        task = self.task(row)
        try:
            session = TimedSession(timed(task.open, self._options(extra)))
        except stepkit.StepKitError as error:
            raise Refused(400, error.error)
        now = self.request_clock()
        with session:
            session.set_clock(now)
            saved = session.save()
            saved_at = now()
            step = (session.state.get("step") or {}).get("identifier")
        session_id = uuid.uuid4().hex
        token = None if personal_hash else new_token()
        stored = self.store.add_session(session_id, row, saved, saved_at,
                                        token and token_hash(token), step=step,
                                        personal_hash=personal_hash, participant=participant)
        return {"session": stored, "token": token,
                "resumePath": f"/r/{token}" if token else None}

    def create_invite(self, identifier: str) -> Dict[str, Any]:
        self._task_row(identifier)
        token = new_token()
        self.store.add_invite(identifier, token_hash(token))
        return {"token": token, "invitePath": f"/i/{token}"}

    def create_personal_invites(self, identifier: str, participants: List[str],
                                expires_at: Optional[str]) -> List[Tuple[str, str]]:
        """One personal link per participant id: (participant, token), in one transaction.
        A link starts the participant's one session and resumes it until it is finished or
        the link is revoked or expires (``expires_at``, ISO 8601 UTC)."""
        self._task_row(identifier)
        made = [(p, new_token()) for p in participants]
        self.store.add_personal_invites(identifier, [(token_hash(t), p) for p, t in made],
                                        expires_at)
        return made

    def link(self, token: str) -> Dict[str, Any]:
        """The live invite (open or personal) a token names: NotFound when unknown, revoked
        or expired."""
        if not token_ok(token):
            raise NotFound("unknown invite")
        tok = self.store.token(token_hash(token))
        if tok is None or tok["revoked"] or tok["kind"] not in ("invite", "personal") \
                or self._expired(tok.get("expires_at")):
            raise NotFound("unknown invite")
        return tok

    def _expired(self, expires_at: Optional[str]) -> bool:
        return bool(expires_at) and stepkit.parse_iso8601_ms(expires_at) <= self.now()

    def accept_invite(self, token: str, language: Optional[str] = None) -> Dict[str, Any]:
        """Opens an invite: an open link starts a new session; a personal one starts its
        participant's session, or names the one it started before. ``language``: the
        participant's (a BCP-47 tag, from the browser's Accept-Language)."""
        tok = self.link(token)
        options = {"language": language} if language else None
        if tok["kind"] == "personal":
            if tok["session_id"] is None:
                self.create_session(tok["task_identifier"], options, personal_hash=tok["hash"],
                                    participant=tok["participant"])
            return {"resumePath": f"/r/{token}"}
        return self.create_session(tok["task_identifier"], options)

    def message_languages(self) -> List[str]:
        """The languages the engine's messages to participants are written in here: the
        shipped catalogues' and the host's."""
        return ["en", "de", "es"] + list(self._messages or {})

    def task_languages(self, identifier: str) -> List[str]:
        """The languages the published version of a task declares, the default first ([]
        for a task that declares none)."""
        languages = self.task(self._task_row(identifier)).info.get("languages")
        return [str(tag) for tag in languages] if isinstance(languages, list) else []

    def invite_task(self, token: str) -> TaskRow:
        return self._task_row(self.link(token)["task_identifier"])

    def new_resume_link(self, session_id: str) -> Dict[str, Any]:
        if self.store.session(session_id) is None:
            raise NotFound("no such session")
        token = new_token()
        self.store.add_resume_token(session_id, token_hash(token))
        return {"token": token, "resumePath": f"/r/{token}"}

    def revoke(self, session_id: str) -> int:
        if self.store.session(session_id) is None:
            raise NotFound("no such session")
        return self.store.revoke_tokens(session_id)

    def session_for_token(self, token: str) -> SessionRow:
        if not token_ok(token):
            raise NotFound("unknown token")
        row = self.store.session_by_resume_token(token_hash(token))
        if row is None or (row.status == "open" and self._expired(row.token_expires_at)):
            raise NotFound("unknown token")
        return row

    def session_row(self, session_id: str) -> SessionRow:
        row = self.store.session(session_id)
        if row is None:
            raise NotFound("no such session")
        return row

    def _version_row(self, identifier: str, version: int) -> TaskRow:
        """A task version's row, kept per instance (a version's definition never changes)."""
        key = (identifier, version)
        with self._tasks_lock:
            row = self._rows.get(key)
        if row is None:
            row = self._task_row(identifier, version)
            with self._tasks_lock:
                self._rows[key] = row
                while len(self._rows) > 4 * self.task_cache_size:
                    self._rows.pop(next(iter(self._rows)))
        return row

    def restore(self, row: SessionRow) -> Tuple[Any, TaskRow]:
        """The live session for a stored row, on the task's newest version (migrating data
        saved on an older one)."""
        if row.latest_version is not None:  # read with the row: no query for it
            latest = self._version_row(row.task_identifier, row.latest_version)
        else:
            latest = self._task_row(row.task_identifier)
        migrate = latest.version != row.task_version
        task = self.task(latest)
        try:
            # Restoring is how every request works here, not something that happened to the
            # run: the audit trail records the changes only (docs/audit.md).
            restore_options: Dict[str, Any] = {"audit": {"recordRestore": False}}
            if migrate:
                restore_options["migrate"] = True
            session = TimedSession(timed(task.restore, row.saved, self._options(restore_options)))
        except stepkit.RestorationError as error:
            log.error("restoration data of session %s failed its check: %s", row.id, error.error)
            raise Damaged(row.id, error)
        clock = ResumeClock(self._row_clock(row), row.saved_at)
        session.set_clock(clock)
        clock.live = True
        session.clock = clock
        # What the migration kept and dropped, read now: the next action clears it.
        session.migration_report = session.restore_report if migrate else None
        return session, latest

    def _row_clock(self, row: SessionRow) -> Callable[[], int]:
        """The clock of a request on ``row``: the database's, read with the row, when sessions
        run on it."""
        if row.db_now is not None and self.time_source == "database":
            db_now = row.db_now
            return RequestClock(lambda: db_now)
        return self.request_clock()

    def _page_session(self, row: SessionRow) -> Tuple[Any, TaskRow, Optional[Dict[str, Any]]]:
        """The live session for a page POST on ``row``: the one this worker kept after writing
        exactly this row (livesessions.py), else restored from it; with the state it kept,
        when that state does not change with the time (else None: ask the engine)."""
        if row.latest_version is not None and row.latest_version == row.task_version:
            entry = self.live.take(row.id, row.version, row.saved, row.task_version)
            if entry is not None:
                entry.clock.resume(self._row_clock(row))
                return entry.session, self._version_row(row.task_identifier,
                                                        row.task_version), entry.state
        session, task_row = self.restore(row)
        return session, task_row, None

    def _keep(self, row: SessionRow, session: Any, task_row: TaskRow,
              state: Dict[str, Any]) -> bool:
        """Keeps a session this worker just wrote over ``row`` for its next POST (not a
        finished one). Returns whether it was kept (else the caller closes it)."""
        if not self.live.capacity or state.get("status") == "finished" \
                or not isinstance(getattr(session, "clock", None), ResumeClock):
            return False
        kept_state = None
        if time_free(state):
            # Read again, the state lists no events: the move's were delivered with it.
            kept_state = dict(state, events=[]) if state.get("events") else state
        self.live.put(row.id, LiveEntry(session, session.clock, row.version + 1,
                                        session.saved_text, session.saved_at, task_row.version,
                                        kept_state))
        return True

    def audit_trail(self, row: SessionRow) -> Dict[str, Any]:
        """The session's audit trail as its restoration data holds it (``Session.audit``), read
        on the version it was saved on, so nothing is migrated or recorded by reading it; the
        engine checks the data's integrity and the trail's chain first (``Damaged`` if not)."""
        task = self.task(self._version_row(row.task_identifier, row.task_version))
        try:
            with task.restore(row.saved, self._options({"audit": {"recordRestore": False}})) as session:
                return session.audit()
        except stepkit.RestorationError as error:
            log.error("restoration data of session %s failed its check: %s", row.id, error.error)
            raise Damaged(row.id, error)

    def write(self, row: SessionRow, session: stepkit.Session, task_row: TaskRow,
              state: Optional[Dict[str, Any]] = None) -> bool:
        """Saves the session over ``row`` if nobody wrote it since; False if somebody did.
        ``state``: the session's current state when the caller has it."""
        if state is None:
            state = session.state
        finished = state["status"] == "finished"
        result = json.dumps(session.result) if finished else None
        response = None
        if finished and task_row.source == "fhir":
            response = json.dumps(session.result_as("fhir"))
        saved_at = session.clock()
        if isinstance(session.clock, ResumeClock):
            session.clock.freeze(saved_at)  # the save reads the time it is dated
        report = session.migration_report if task_row.version != row.task_version else None
        step = None if finished else (state.get("step") or {}).get("identifier")
        closing = getattr(session, "closing", None)
        saved = session.saved_text = session.save()
        session.saved_at = saved_at
        return self.store.update_session(
            row, saved=saved, saved_at=saved_at, task_version=task_row.version,
            status="finished" if finished else "open",
            finish_reason=state.get("finishReason"), result=result,
            report=json.dumps(report) if report else None, step=step, response=response,
            closing=json.dumps(closing) if closing else None)

    def migrate_open_sessions(self, task_row: TaskRow) -> int:
        """Brings every open session of older versions onto ``task_row`` (restore with
        migration, save). A session written meanwhile is migrated by its next request."""
        count = 0
        for session_id in self.store.open_sessions(task_row.identifier, task_row.version):
            row = self.store.session(session_id)
            if row is None or row.status != "open":
                continue
            try:
                session, latest = self.restore(row)
            except Damaged:
                continue
            with session:
                if self.write(row, session, latest):
                    count += 1
        return count

    def history(self, session_id: str) -> List[Dict[str, Any]]:
        """The session's earlier rows, oldest first, each with its result as it was (dates and
        answers on its own task version) and what the change kept and dropped."""
        self.session_row(session_id)
        out = []
        for h in self.store.history(session_id):
            entry: Dict[str, Any] = {
                "taskVersion": h["task_version"], "version": h["version"],
                "reason": h["reason"], "toTaskVersion": h["to_task_version"],
                "recordedAt": h["created_at"],
                "report": json.loads(h["report"]) if h["report"] else None}
            task_row = self.store.task(h["task_identifier"], h["task_version"])
            try:
                if task_row is None:
                    raise NotFound("task version gone")
                with TimedSession(self.task(task_row).restore(
                        h["saved"], self._options())) as old:
                    saved_at = h["saved_at"]
                    old.set_clock(lambda: saved_at)  # the result as of the save, exactly
                    entry["result"] = old.result
            except (stepkit.StepKitError, NotFound) as error:
                entry["result"] = None
                entry["error"] = str(error)
            entry["saved"] = h["saved"]
            out.append(entry)
        return out

    def state_of(self, row: SessionRow) -> Dict[str, Any]:
        session, _ = self.restore(row)
        with session:
            return session.state

    def result_of(self, row: SessionRow) -> Dict[str, Any]:
        if row.result is not None:
            return json.loads(row.result)
        session, _ = self.restore(row)
        with session:
            return session.result

    def questionnaire_response(self, row: SessionRow) -> Dict[str, Any]:
        """The session's FHIR QuestionnaireResponse: stored with the result when the session
        finished, else built now (status in-progress)."""
        if row.response is not None:
            return json.loads(row.response)
        task_row = self._task_row(row.task_identifier, row.task_version)
        if task_row.source != "fhir":
            raise NotFound("not an imported FHIR Questionnaire")
        session, _ = self.restore(row)
        with session:
            return session.result_as("fhir")

    def export_rows(self, identifier: str) -> List[Dict[str, Any]]:
        """Every session of a task with its result (``result_json``): a finished one's as
        stored, an open one's as it is now (None if its data is damaged)."""
        out = []
        for data in self.store.list_sessions(identifier, with_data=True):
            try:
                data["result_json"] = self.result_of(session_row_of(data))
            except Damaged:
                data["result_json"] = None
            out.append(data)
        return out

    def response_bundle(self, identifier: str) -> Dict[str, Any]:
        """Every session's QuestionnaireResponse (finished ones as stored) in a Bundle."""
        row = self._task_row(identifier)
        if row.source != "fhir":
            raise NotFound("not an imported FHIR Questionnaire")
        responses = []
        for data in self.store.list_sessions(identifier, with_data=True):
            responses.append(self.questionnaire_response(session_row_of(data)))
        return fhir.bundle(responses, iso_ms(self.now()))

    # -- the participant's actions ------------------------------------------------------------

    def act(self, row: SessionRow, page_version: str, page_step: str, action: str,
            answer_of: Optional[Callable[[Dict[str, Any]], Tuple[Any, bool]]]) -> Outcome:
        """Applies one posted page to the session.

        ``answer_of(state)`` gives the answer JSON the page carries (and whether it carries
        one). Raises Stale when the page is not the current one or another request wrote the
        session first; returns an Outcome whose ``refused`` says nothing was stored."""
        if row.status != "open" or page_version != str(row.version):
            raise Stale()
        session, task_row, state = self._page_session(row)
        kept = False
        try:
            if state is None:
                state = session.state
            step = state.get("step") or {}
            if page_step != str(step.get("identifier")):
                raise Stale()
            errors: List[Dict[str, Any]] = []
            switching = action.startswith("language:")
            # A time limit that ran out before the page was posted acts first: the engine acts on
            # a limit only at a tick (docs/task-format.md, "Time limits"), and a page posted late
            # (the browser's own tick never came: no JavaScript, a closed laptop) is taken as
            # that tick: what the page holds is kept and the step moves on (or the task ends) as
            # the task says, whichever button was pressed.
            if action in ("next", "back", "skip") and time_ran_out(state):
                action = "tick"
            # A repeating group's Add and Remove buttons, and a repeating question's in one of
            # its instances (the page's answers kept first).
            instances = action.startswith(("add:", "remove:", "add-answer:", "remove-answer:"))
            # A time limit's tick keeps what the page holds, as far as it is valid: the step
            # then moves on (or the task ends) with the answer as it stands.
            if answer_of is not None and (action in ("next", "back", "save", "skip", "tick") or switching or instances):
                answer, has_answer = answer_of(state)
                if has_answer:
                    try:
                        # The move below returns the state this request reads; "save" reads it
                        # after (write), so the library builds none here. A step the host
                        # reports (a signature) takes the page's report instead of an answer.
                        if step.get("reportedByHost") is True:
                            session.report(str(step.get("identifier")), **answer)
                        else:
                            session.set_answer(answer, state=False)
                        state = None
                    except stepkit.StepKitError as error:
                        if action in ("next", "save") or instances:
                            # One call reports every item's problem.
                            return Outcome(state, list(error.errors or [error.error]),
                                           refused=True)
                        # Back and Skip still leave: a refused draft is not kept.
            try:
                # Every call returns the new state: it is read once per step of the request.
                if action == "next":
                    state = session.go_forward()
                elif action == "back":
                    state = session.go_backward()
                elif action == "skip":
                    state = session.skip()
                elif action == "start":
                    state = session.start()
                elif action == "tick":
                    state = session.tick()
                elif action == "save":
                    pass
                elif action.startswith("edit:"):
                    # "Change" on a review step (stepkit_session_review_edit): refused with
                    # a StateError, changing nothing, for a step the review does not list.
                    state = session.review_edit(action[len("edit:"):])
                elif action.startswith("edit-instance:"):
                    # "Change" on one instance a review lists (stepkit_session_review_edit_instance):
                    # refused, changing nothing, for one it does not list.
                    state = self._review_instance_edit(session, action)
                elif action.startswith(("add-answer:", "remove-answer:")):
                    state = self._answer_action(session, action)
                elif instances:
                    state = self._instance_action(session, action)
                elif switching:
                    # The draft on the page is kept (above); every answer stays.
                    try:
                        state = session.set_language(action[len("language:"):])
                    except stepkit.InvalidArgumentError as error:
                        raise Refused(400, error.error)
                else:
                    raise Refused(400, {"code": "EINVAL", "message": "Unknown action."})
            except stepkit.StepKitError as error:
                errors = list(error.errors or [error.error])
            if state is None:  # an answer was set, and no move returned the state since
                state = session.state
            if not errors:
                state = self._finish_on_completion(session, state)
            if not self.write(row, session, task_row, state):
                raise Stale()  # another request wrote it first: this session is dropped
            kept = self._keep(row, session, task_row, state)
            return Outcome(state, errors)
        finally:
            if not kept:
                session.close()

    def input_token(self, row: SessionRow) -> str:
        """The token a game page's inputs carry (HMAC-SHA256 of the session's id with the
        integrity key): an input must come from a page this service drew for the session."""
        return hmac.new(self._key.encode("utf-8"), b"game-input\0" + row.id.encode("utf-8"),
                        hashlib.sha256).hexdigest()

    def game_input(self, row: SessionRow, page_step: str, event: Optional[Dict[str, Any]],
                   step_ms: Optional[int]) -> Outcome:
        """Hands the game of the current step one input (``stepkit_session_input``;
        docs/active-tasks.md) and saves; ``event`` None: a tick instead (``stepkit_session_tick``:
        what came due by now, a game's timeout or window, is processed). ``step_ms``: when it happened, in milliseconds of the
        step's running time as the page measured it, mapped onto the session's clock (the
        step's start is now minus the state's ``active.elapsed``), never later than now; None:
        now. A restored session's running step goes on from the moment it was saved, and the
        engine takes no input dated before that (a tap made while the page's previous input was
        on its way): such an input is dated at the save. Raises Stale when the page's step is
        not the current one or another request wrote the session first; an input the engine
        refuses is an Outcome with ``refused`` (nothing stored)."""
        if row.status != "open":
            raise Stale()
        session, task_row = self.restore(row)
        with session:
            state = session.state
            if page_step != str((state.get("step") or {}).get("identifier")):
                raise Stale()
            active = state.get("active") or {}
            if event is not None and step_ms is not None and active.get("status") == "running":
                now = session.clock()
                start = now - round(float(active.get("elapsed") or 0) * 1000)
                event = dict(event, time=min(now, max(row.saved_at, start + step_ms)))
            try:
                state = session.input(event) if event is not None else session.tick()
            except stepkit.StepKitError as error:
                return Outcome(state, list(error.errors or [error.error]), refused=True)
            state = self._finish_on_completion(session, state)
            if not self.write(row, session, task_row, state):
                raise Stale()
            return Outcome(state)

    @staticmethod
    def _answer_action(session: Any, action: str) -> Dict[str, Any]:
        """A repeating question inside instance ``k`` of a repeating group (FHIR ``repeats`` on a
        question in a repeating group): ``add-answer:<group>:<k>:<item>`` adds an empty answer
        (an input to fill), ``remove-answer:<group>:<k>:<item>:<j>`` removes answer ``j``, the
        later ones moving up (the names percent-encoded). An answer's list is applied entry by
        entry over what the instance holds (docs/task-format.md, "Answers"), so a removal first
        clears the item in that instance, then sets the shorter list: both in this request,
        whose write is all or nothing. A malformed action, a block the step does not have or an
        instance or answer out of range is refused (400) before anything changes."""
        parts = action.split(":")
        adding = parts[0] == "add-answer" and len(parts) == 4
        removing = parts[0] == "remove-answer" and len(parts) == 5 and parts[4].isdigit() and len(parts[4]) < 10
        if not (adding or removing) or not parts[2].isdigit() or len(parts[2]) > 9:
            raise Refused(400, {"code": "EINVAL", "message": "Unknown action."})
        group, k, name = unquote(parts[1]), int(parts[2]), unquote(parts[3])
        state = session.state
        item = next((i for i in (state.get("step") or {}).get("formItems") or []
                     if isinstance(i, dict) and i.get("identifier") == group and isinstance(i.get("items"), list)), None)
        inner = next((i for i in (item or {}).get("items") or [] if isinstance(i, dict) and i.get("identifier") == name), None)
        count = int(((state.get("instances") or {}).get(group) or {}).get("count") or 0)
        if inner is None or not isinstance(inner.get("repeat"), dict) or "items" in inner or k >= count:
            raise Refused(400, {"code": "EINVAL", "message": "The page named an answer list this step "
                                "does not have: nothing was changed."})
        answer = state.get("answer") if isinstance(state.get("answer"), dict) else {}
        stored = answer.get(group) if isinstance(answer.get(group), list) else []
        held = stored[k] if k < len(stored) and isinstance(stored[k], dict) else {}
        current = list(held.get(name)) if isinstance(held.get(name), list) else []
        before: List[Any] = [{} for _ in range(k)]
        if adding:
            # The page shows one input when the list is empty: adding makes it two.
            return session.set_answer({group: before + [{name: (current or [None]) + [None]}]})
        j = int(parts[4])
        if j >= len(current):
            raise Refused(400, {"code": "EINVAL", "message": "The page named an answer that is not "
                                "there: nothing was changed."})
        kept = current[:j] + current[j + 1:]
        state = session.set_answer({group: before + [{name: None}]})
        return session.set_answer({group: before + [{name: kept}]}) if kept else state

    @staticmethod
    def _review_instance_edit(session: Any, action: str) -> Dict[str, Any]:
        """``edit-instance:<step>:<block>:<index>`` (the names percent-encoded): the review's
        Change on one instance. A malformed action is refused (400) before anything changes."""
        parts = action.split(":")
        if len(parts) == 4 and parts[3].isdigit() and len(parts[3]) < 10:
            try:
                return session.review_edit_instance(unquote(parts[1]), int(parts[3]), unquote(parts[2]))
            except stepkit.InvalidArgumentError as error:
                raise Refused(400, error.error)
        raise Refused(400, {"code": "EINVAL", "message": "Unknown action."})

    @staticmethod
    def _instance_action(session: Any, action: str) -> Dict[str, Any]:
        """``add:<block>`` adds an instance; ``remove:<block>:<index>`` removes one. A malformed
        action is refused (400) before anything changes."""
        parts = action.split(":")
        try:
            if parts[0] == "add" and len(parts) == 2:
                state = session.add_instance(parts[1])
                # A repeating section's instance is reached going forward (its "Add another"
                # is on the last instance's last step): the page goes on into it.
                block = (state.get("instances") or {}).get(parts[1]) or {}
                if isinstance(block.get("steps"), list):
                    return session.go_forward()
                return state
            if parts[0] == "remove" and len(parts) == 3 and parts[2].isdigit() and len(parts[2]) < 10:
                return session.remove_instance(int(parts[2]), parts[1])
        except stepkit.InvalidArgumentError as error:
            raise Refused(400, error.error)
        raise Refused(400, {"code": "EINVAL", "message": "Unknown action."})

    @staticmethod
    def _finish_on_completion(session: Any, state: Dict[str, Any]) -> Dict[str, Any]:
        """Reaching the task's last step when it is a completion step finishes the run at
        once: the participant sees that page once, as the finished page, and closing it
        leaves nothing unfinished. Its texts are kept to show it again. Returns the state."""
        step = state.get("step") or {}
        nav = state.get("navigation") or {}
        if state.get("status") == "finished" or step.get("type") != "completion" \
                or nav.get("hasNextStep") or not nav.get("canGoForward"):
            return state
        session.closing = {k: step[k] for k in ("title", "text", "detailText")
                           if isinstance(step.get(k), str)}
        return session.go_forward()


STUDY_TTL = 5.0  # seconds a study's settings are kept per instance


def time_ran_out(state: Mapping[str, Any]) -> bool:
    """Whether the task's or the current step's time limit has run out on the session's clock
    (the state's ``timeLimits``), not yet acted on by a tick."""
    limits = state.get("timeLimits") or {}
    return any(isinstance(limit, Mapping) and limit.get("remaining", 1) <= 0
               for limit in (limits.get("task"), limits.get("step")))


def _first_title(definition: str) -> Optional[str]:
    """The first step's title in a task definition (inside sections too)."""
    try:
        steps = json.loads(definition).get("steps")
    except (ValueError, AttributeError, RecursionError):
        return None
    for _ in range(64):
        if not isinstance(steps, list) or not steps or not isinstance(steps[0], dict):
            return None
        if isinstance(steps[0].get("title"), str) and steps[0]["title"]:
            return steps[0]["title"]
        steps = steps[0].get("steps")
    return None


def iso_ms(ms: int) -> str:
    """ms since the epoch as ISO 8601 UTC with milliseconds."""
    import datetime as _dt
    return (_dt.datetime.fromtimestamp(ms / 1000, _dt.timezone.utc)
            .isoformat(timespec="milliseconds").replace("+00:00", "Z"))


def session_row_of(data: Mapping[str, Any]) -> SessionRow:
    """A SessionRow from a ``Store.list_sessions(..., with_data=True)`` entry."""
    return SessionRow(data["id"], data["task_identifier"], data["task_version"], data["saved"],
                      data["saved_at"], data["version"], data["status"], data["finish_reason"],
                      data["result"], data["participant"], data["step"], data["response"],
                      data["closing"])


def _recorder_place(recorder: Mapping[str, Any]) -> str:
    """Where a recorder of the task info runs, for the refusal's message."""
    if recorder.get("step") is not None:
        return f"{recorder['step']!r} ({recorder.get('identifier')!r})"
    return f"the async action {recorder.get('identifier')!r}"
