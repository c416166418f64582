"""Tasks per version, sessions with their restoration data as TEXT, hashed tokens.

Revision ID: 0001
Revises:
"""
import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "tasks",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("identifier", sa.String(200), nullable=False),
        sa.Column("version", sa.Integer, nullable=False),
        sa.Column("definition", sa.Text, nullable=False),
        sa.Column("fingerprint", sa.String(200), nullable=False),
        sa.Column("source", sa.String(20), nullable=False),
        sa.Column("source_document", sa.Text, nullable=True),
        sa.Column("created_at", sa.String(40), nullable=False),
        sa.UniqueConstraint("identifier", "version", name="uq_tasks_identifier_version"),
    )
    op.create_table(
        "sessions",
        sa.Column("id", sa.String(64), primary_key=True),
        sa.Column("task_identifier", sa.String(200), nullable=False),
        sa.Column("task_version", sa.Integer, nullable=False),
        sa.Column("saved", sa.Text, nullable=False),
        sa.Column("saved_at", sa.BigInteger, nullable=False),
        sa.Column("version", sa.Integer, nullable=False),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("finish_reason", sa.String(40), nullable=True),
        sa.Column("result", sa.Text, nullable=True),
        sa.Column("created_at", sa.String(40), nullable=False),
        sa.Column("updated_at", sa.String(40), nullable=False),
    )
    op.create_index("ix_sessions_task", "sessions", ["task_identifier", "status"])
    op.create_table(
        "tokens",
        sa.Column("hash", sa.String(64), primary_key=True),
        sa.Column("kind", sa.String(10), nullable=False),
        sa.Column("session_id", sa.String(64), nullable=True),
        sa.Column("task_identifier", sa.String(200), nullable=True),
        sa.Column("revoked", sa.Boolean, nullable=False),
        sa.Column("created_at", sa.String(40), nullable=False),
    )
    op.create_index("ix_tokens_session", "tokens", ["session_id"])


def downgrade() -> None:
    op.drop_table("tokens")
    op.drop_table("sessions")
    op.drop_table("tasks")
