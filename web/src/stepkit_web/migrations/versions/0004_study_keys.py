"""Per-study API keys: a key that reaches the host API for one task identifier only. Adds a
table; changes no existing row.

Revision ID: 0004
Revises: 0003
"""
import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "api_keys",
        sa.Column("hash", sa.String(64), primary_key=True),
        sa.Column("task_identifier", sa.String(200), nullable=False),
        sa.Column("revoked", sa.Boolean, nullable=False),
        sa.Column("created_at", sa.String(40), nullable=False),
    )
    op.create_index("ix_api_keys_task", "api_keys", ["task_identifier"])


def downgrade() -> None:
    op.drop_index("ix_api_keys_task", "api_keys")
    op.drop_table("api_keys")
