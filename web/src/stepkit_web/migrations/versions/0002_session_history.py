"""An append-only history of session rows: a migration onto a new task version keeps the row
it replaces, with what it kept and dropped. Adds a table; changes no existing row.

Revision ID: 0002
Revises: 0001
"""
import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "session_history",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("session_id", sa.String(64), nullable=False),
        sa.Column("task_identifier", sa.String(200), nullable=False),
        sa.Column("task_version", sa.Integer, nullable=False),
        sa.Column("version", sa.Integer, nullable=False),
        sa.Column("saved", sa.Text, nullable=False),
        sa.Column("saved_at", sa.BigInteger, nullable=False),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("reason", sa.String(20), nullable=False),
        sa.Column("to_task_version", sa.Integer, nullable=True),
        sa.Column("report", sa.Text, nullable=True),
        sa.Column("created_at", sa.String(40), nullable=False),
    )
    op.create_index("ix_session_history_session", "session_history", ["session_id"])


def downgrade() -> None:
    # Dropping the history would lose the only copy of migrated sessions' old data.
    raise RuntimeError("downgrading below 0002 would delete session history: refused")
