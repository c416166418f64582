"""Tasks per version, sessions with their restoration data as TEXT, hashed tokens.

Revision ID: 0001
Revises:
"""
import sqlalchemy as sa
from alembic import op

from stepkit_web import columns as col

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "tasks",
        col.serial(),
        col.identifier("identifier"),
        col.number("version"),
        col.text("definition", nullable=False),
        col.identifier("fingerprint"),
        col.word("source"),
        col.text("source_document"),
        col.date("created_at"),
        sa.UniqueConstraint("identifier", "version", name="uq_tasks_identifier_version"),
    )
    op.create_table(
        "sessions",
        col.key("id", primary_key=True),
        col.identifier("task_identifier"),
        col.number("task_version"),
        col.text("saved", nullable=False),
        col.number("saved_at", sa.BigInteger),
        col.number("version"),
        col.word("status"),
        col.word("finish_reason", 40, nullable=True),
        col.text("result"),
        col.date("created_at"),
        col.date("updated_at"),
    )
    op.create_index("ix_sessions_task", "sessions", ["task_identifier", "status"])
    op.create_table(
        "tokens",
        col.key("hash", primary_key=True),
        col.word("kind", 10),
        col.key("session_id", nullable=True),
        col.identifier("task_identifier", nullable=True),
        col.flag("revoked"),
        col.date("created_at"),
    )
    op.create_index("ix_tokens_session", "tokens", ["session_id"])


def downgrade() -> None:
    op.drop_table("tokens")
    op.drop_table("sessions")
    op.drop_table("tasks")
