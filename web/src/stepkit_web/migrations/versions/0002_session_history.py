"""An append-only history of session rows: a migration onto a new task version keeps the row
it replaces, with what it kept and dropped. Adds a table; changes no existing row.

Revision ID: 0002
Revises: 0001
"""
import sqlalchemy as sa
from alembic import op

from stepkit_web import columns as col

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "session_history",
        col.serial(),
        col.key("session_id"),
        col.identifier("task_identifier"),
        col.number("task_version"),
        col.number("version"),
        col.text("saved", nullable=False),
        col.number("saved_at", sa.BigInteger),
        col.word("status"),
        col.word("reason"),
        col.number("to_task_version", nullable=True),
        col.text("report"),
        col.date("created_at"),
    )
    op.create_index("ix_session_history_session", "session_history", ["session_id"])


def downgrade() -> None:
    # Dropping the history would lose the only copy of migrated sessions' old data.
    raise RuntimeError("downgrading below 0002 would delete session history: refused")
