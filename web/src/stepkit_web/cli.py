"""The command line: ``python -m stepkit_web serve --db sqlite:///runs.db``, ``migrate`` and
``staff add NAME`` (a staff account for the study pages)."""

from __future__ import annotations

import argparse
import json
import logging
import os
import secrets
import sys
from pathlib import Path
from typing import List, Optional

from .server import DEFAULTS, serve as serve_http

ENV_DB = "STEPKIT_WEB_DB"
ENV_KEY = "STEPKIT_WEB_INTEGRITY_KEY"
ENV_API_KEY = "STEPKIT_WEB_API_KEY"
ENV_OPEN_API = "STEPKIT_WEB_OPEN_API"
ENV_BASE_URL = "STEPKIT_WEB_BASE_URL"
ENV_SETTINGS = "STEPKIT_WEB_SETTINGS"  # the rest, as JSON, from `serve` to its workers

LOOPBACK = ("127.0.0.1", "::1", "localhost")


def integrity_key(db_url: str, key_file: Optional[str]) -> str:
    """The server's integrity key: $STEPKIT_WEB_INTEGRITY_KEY, else the file given, else (for
    SQLite) ``DB.key`` next to the database, created once with mode 0600."""
    if os.environ.get(ENV_KEY):
        return os.environ[ENV_KEY]
    path: Optional[Path] = Path(key_file) if key_file else None
    if path is None and db_url.startswith("sqlite:///") and db_url != "sqlite:///:memory:":
        path = Path(db_url[len("sqlite:///"):] + ".key")
    if path is None:
        raise SystemExit(f"stepkit_web: give --integrity-key-file or set {ENV_KEY} (every "
                         "instance must use the same key)")
    if not path.exists():
        fd = os.open(str(path), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(secrets.token_hex(32))
    return path.read_text().strip()


def _secret_file(path: Path) -> str:
    """The secret in ``path``, created once (mode 0600) when missing."""
    if not path.exists():
        fd = os.open(str(path), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(secrets.token_urlsafe(32))
    return path.read_text().strip()


def api_key(db_url: str, key_file: Optional[str], open_api: bool) -> Optional[str]:
    """The host API's key: $STEPKIT_WEB_API_KEY, else the file given, else (for SQLite)
    ``DB.api-key`` next to the database, created once with mode 0600 and named on the
    terminal (the key itself is not printed). None only with --open-api."""
    if os.environ.get(ENV_API_KEY):
        return os.environ[ENV_API_KEY]
    if key_file:
        return _secret_file(Path(key_file))
    if open_api:
        return None
    if db_url.startswith("sqlite:///") and db_url != "sqlite:///:memory:":
        path = Path(db_url[len("sqlite:///"):] + ".api-key")
        created = not path.exists()
        key = _secret_file(path)
        print(f"API key: {'created in' if created else 'read from'} {path.resolve()} "
              f"(send it as Authorization: Bearer KEY)", flush=True)
        return key
    raise SystemExit(f"stepkit_web: give --api-key-file or set {ENV_API_KEY} (the host API "
                     "is closed without a key; --open-api opens it on loopback only)")


def register_file(service, text: str):
    """``serve --task FILE``: registers the file only where that cannot move sessions. A new
    task is registered and published; a file equal to a stored version changes nothing; a
    changed file of a task that is already published is stored as a draft, to be published
    on the staff page (so restarting with an older file never replaces a newer version).
    Returns (the version's registration, what happened)."""
    import stepkit

    from .service import Refused

    try:
        identifier = stepkit.Task.from_json(text).identifier
    except stepkit.StepKitError as error:
        raise Refused(400, error.error)
    store = service.store
    current = store.latest_task(identifier)
    if current is None:
        return service.register(text, "application/json"), "published"
    for v in reversed(store.task_versions(identifier)):
        row = store.task(identifier, v["version"])
        if row is not None and row.definition == text:
            return ({"identifier": identifier, "version": row.version},
                    "unchanged" if row.status == "published" or row.version < current.version
                    else "a draft, unchanged")
    reg = service.register(text, "application/json", status="draft")
    return reg, (f"stored as a draft: version {current.version} stays published until the "
                 "draft is published on the staff page")


MIN_PASSWORD = 12


def staff_add(engine, username: str, from_stdin: bool) -> int:
    """``staff add NAME``: the password from stdin or asked twice; stored hashed (argon2id)."""
    import getpass

    from .db import Store
    from .staff import hash_password

    username = username.strip()
    if not username or len(username) > 100 or any(ord(c) < 33 for c in username):
        print("stepkit_web: a staff name is 1 to 100 characters without spaces",
              file=sys.stderr)
        return 2
    if from_stdin:
        password = sys.stdin.readline().rstrip("\r\n")
    else:
        password = getpass.getpass("Password: ")
        if getpass.getpass("Again: ") != password:
            print("stepkit_web: the two passwords differ; nothing was changed", file=sys.stderr)
            return 2
    if len(password) < MIN_PASSWORD:
        print(f"stepkit_web: the password needs at least {MIN_PASSWORD} characters; nothing "
              "was changed", file=sys.stderr)
        return 2
    created = Store(engine).add_staff(username, hash_password(password))
    print(f"staff account {username!r} {'created' if created else 'updated (new password)'}")
    return 0


def app_from_env():  # the factory uvicorn's workers import
    import json

    from .app import create_app
    from .db import Timeouts
    from .mail import SmtpSettings

    settings = json.loads(os.environ.get(ENV_SETTINGS) or "{}")
    return create_app(os.environ[ENV_DB], os.environ[ENV_KEY],
                      api_key=os.environ.get(ENV_API_KEY) or None,
                      open_api=os.environ.get(ENV_OPEN_API) == "1",
                      base_url=os.environ.get(ENV_BASE_URL) or "http://127.0.0.1:8000",
                      timeouts=Timeouts(**settings.get("timeouts", {})),
                      task_cache_size=settings.get("task_cache_size", 32),
                      live_sessions=settings.get("live_sessions", 256),
                      body_timeout=settings.get("body_timeout", 30.0), migrate=False,
                      smtp=SmtpSettings.from_env(os.environ),
                      messages=settings.get("messages"), files_dir=settings.get("files_dir"))


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m stepkit_web")
    sub = parser.add_subparsers(dest="command", required=True)
    serve = sub.add_parser("serve", help="serve participant pages and the API")
    serve.add_argument("--db", default="sqlite:///runs.db",
                       help="sqlite:///FILE (default runs.db) or postgresql+psycopg://...")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8000)
    serve.add_argument("--workers", type=int, default=1)
    serve.add_argument("--integrity-key-file")
    serve.add_argument("--api-key-file", help="the host API's key (created when missing); "
                       f"default ${ENV_API_KEY}, else DB.api-key next to a SQLite database")
    serve.add_argument("--open-api", action="store_true",
                       default=os.environ.get(ENV_OPEN_API) == "1",
                       help="serve the host API WITHOUT a key (loopback only; logged)")
    serve.add_argument("--base-url", default=os.environ.get(ENV_BASE_URL),
                       help="where participants reach the service (default http://HOST:PORT): "
                            "every link is built from it, never from the Host header")
    serve.add_argument("--db-connect-timeout", type=float, default=5.0)
    serve.add_argument("--db-statement-timeout", type=float, default=10.0)
    serve.add_argument("--db-pool-timeout", type=float, default=5.0)
    serve.add_argument("--db-busy-timeout", type=float, default=30.0,
                       help="SQLite: seconds to wait for another writer")
    serve.add_argument("--task-cache", type=int, default=32,
                       help="compiled task versions kept in memory per worker")
    serve.add_argument("--live-sessions", type=int, default=256,
                       help="open sessions kept per worker between page POSTs (0: none; "
                            "each POST then restores its session from the database)")
    serve.add_argument("--header-timeout", type=float, default=DEFAULTS["header_timeout"],
                       help="seconds a client has to send a request's head")
    serve.add_argument("--body-timeout", type=float, default=DEFAULTS["body_timeout"],
                       help="seconds a client has to send a request's body")
    serve.add_argument("--keep-alive", type=int, default=DEFAULTS["keep_alive"])
    serve.add_argument("--max-head", type=int, default=DEFAULTS["max_head"],
                       help="bytes of request line and headers")
    serve.add_argument("--connections", type=int, default=DEFAULTS["connections"],
                       help="connections served at once (per worker)")
    serve.add_argument("--files-dir", metavar="DIR",
                       help="where the files participants give (a signature) are written "
                            "(default: stepkit-web-files in the temporary directory)")
    serve.add_argument("--messages", metavar="FILE",
                       help='the engine\'s messages to participants in more languages: '
                       '{"fr": {message key: text}}, each complete (stepkit.message_catalogue("en") '
                       'is the reference)')
    serve.add_argument("--task", action="append", default=[],
                       help="register this task file at start (a draft if the task is "
                            "already published and the file differs) and print an open link")
    mig = sub.add_parser("migrate", help="bring the database to the newest schema")
    mig.add_argument("--db", default="sqlite:///runs.db")
    st = sub.add_parser("staff", help="staff accounts for the study pages (/staff)")
    st_sub = st.add_subparsers(dest="staff_command", required=True)
    add = st_sub.add_parser("add", help="create an account, or set its password")
    add.add_argument("username")
    add.add_argument("--db", default="sqlite:///runs.db")
    add.add_argument("--password-stdin", action="store_true",
                     help="read the password from the first line of standard input")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    logging.getLogger("alembic").setLevel(logging.WARNING)

    from .db import Timeouts, make_engine
    from .migrate import upgrade

    engine = make_engine(args.db, timeouts=Timeouts(busy=getattr(args, "db_busy_timeout", 30.0)))
    upgrade(engine)
    if args.command == "migrate":
        print("database is at the newest schema")
        return 0
    if args.command == "staff":
        return staff_add(engine, args.username, args.password_stdin)

    if args.live_sessions < 0:
        raise SystemExit("stepkit_web: --live-sessions cannot be negative")
    if args.open_api and args.host not in LOOPBACK:
        raise SystemExit("stepkit_web: --open-api serves the host API to anyone: it is only "
                         f"allowed on loopback ({', '.join(LOOPBACK)}), not on {args.host}")
    from .mail import SmtpSettings

    SmtpSettings.from_env(os.environ)  # a half-made SMTP setting stops the start, loudly
    messages = None
    if args.messages:
        import stepkit

        try:
            messages = json.loads(Path(args.messages).read_text(encoding="utf-8"))
            probe = stepkit.Task.from_json({"identifier": "messages", "steps": [
                {"type": "instruction", "identifier": "i"}]})
            probe.open({"messages": messages}).close()
        except (OSError, ValueError, stepkit.StepKitError) as e:
            raise SystemExit(f"stepkit_web: --messages {args.messages}: "
                             f"{getattr(e, 'message', None) or e}")
    key = integrity_key(args.db, args.integrity_key_file)
    the_api_key = api_key(args.db, args.api_key_file, args.open_api)
    host_part = f"[{args.host}]" if ":" in args.host else args.host
    base_url = (args.base_url or f"http://{host_part}:{args.port}").rstrip("/")
    os.environ[ENV_DB] = args.db
    os.environ[ENV_KEY] = key
    os.environ[ENV_BASE_URL] = base_url
    if the_api_key:
        os.environ[ENV_API_KEY] = the_api_key
    os.environ[ENV_OPEN_API] = "1" if the_api_key is None else "0"
    os.environ[ENV_SETTINGS] = json.dumps({
        "timeouts": {"connect": args.db_connect_timeout, "statement": args.db_statement_timeout,
                     "pool": args.db_pool_timeout, "busy": args.db_busy_timeout},
        "task_cache_size": args.task_cache, "live_sessions": args.live_sessions,
        "body_timeout": args.body_timeout,
        "messages": messages, "files_dir": args.files_dir})
    if args.task:
        from .db import Store
        from .service import Refused, Service

        service = Service(Store(engine), key)
        for path in args.task:
            text = Path(path).read_text(encoding="utf-8")
            try:
                reg, note = register_file(service, text)
            except Refused as e:
                print(f"{path}: {e.error.get('message')}", file=sys.stderr)
                return 2
            invite = service.create_invite(reg["identifier"])
            print(f"{reg['identifier']} v{reg['version']} ({note}): "
                  f"{base_url}{invite['invitePath']}", flush=True)
    engine.dispose()

    serve_http(args.host, args.port, args.workers, header_timeout=args.header_timeout,
               keep_alive=args.keep_alive, max_head=args.max_head,
               connections=args.connections)
    return 0
