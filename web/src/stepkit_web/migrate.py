"""Brings a database to the newest schema with Alembic (run at start and by `migrate`)."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from sqlalchemy.engine import Engine

import sqlalchemy as sa

_HERE = Path(__file__).resolve().parent


def upgrade(engine: Engine, revision: str = "head") -> None:
    config = Config()
    config.set_main_option("script_location", str(_HERE / "migrations"))
    with engine.begin() as conn:
        if engine.dialect.name == "postgresql":
            # Several instances may start at once: one migrates, the others wait for it.
            conn.execute(sa.text("SELECT pg_advisory_xact_lock(727274)"))
        config.attributes["connection"] = conn
        command.upgrade(config, revision)
