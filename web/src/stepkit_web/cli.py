"""The command line: ``python -m stepkit_web serve --db sqlite:///runs.db`` and ``migrate``."""

from __future__ import annotations

import argparse
import logging
import os
import secrets
import sys
from pathlib import Path
from typing import List, Optional

ENV_DB = "STEPKIT_WEB_DB"
ENV_KEY = "STEPKIT_WEB_INTEGRITY_KEY"
ENV_API_KEY = "STEPKIT_WEB_API_KEY"


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


def app_from_env():  # the factory uvicorn's workers import
    from .app import create_app

    return create_app(os.environ[ENV_DB], os.environ[ENV_KEY],
                      api_key=os.environ.get(ENV_API_KEY) or None, migrate=False)


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
    serve.add_argument("--task", action="append", default=[],
                       help="register this task file at start and print an invite link")
    mig = sub.add_parser("migrate", help="bring the database to the newest schema")
    mig.add_argument("--db", default="sqlite:///runs.db")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    logging.getLogger("alembic").setLevel(logging.WARNING)

    from .db import make_engine
    from .migrate import upgrade

    engine = make_engine(args.db)
    upgrade(engine)
    if args.command == "migrate":
        print("database is at the newest schema")
        return 0

    key = integrity_key(args.db, args.integrity_key_file)
    os.environ[ENV_DB] = args.db
    os.environ[ENV_KEY] = key
    if args.task:
        from .db import Store
        from .service import Refused, Service

        service = Service(Store(engine), key)
        for path in args.task:
            text = Path(path).read_text(encoding="utf-8")
            try:
                reg = service.register(text, "application/json")
            except Refused as e:
                print(f"{path}: {e.error.get('message')}", file=sys.stderr)
                return 2
            invite = service.create_invite(reg["identifier"])
            print(f"{reg['identifier']} v{reg['version']}: "
                  f"http://{args.host}:{args.port}{invite['invitePath']}", flush=True)
    engine.dispose()

    import uvicorn

    uvicorn.run("stepkit_web.cli:app_from_env", factory=True, host=args.host, port=args.port,
                workers=args.workers, log_level="warning", proxy_headers=True)
    return 0
