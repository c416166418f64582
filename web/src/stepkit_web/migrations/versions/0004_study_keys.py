"""Per-study API keys: a key that reaches the host API for one task identifier only. Adds a
table; changes no existing row.

Revision ID: 0004
Revises: 0003
"""
from alembic import op

from stepkit_web import columns as col

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "api_keys",
        col.key("hash", primary_key=True),
        col.identifier("task_identifier"),
        col.flag("revoked"),
        col.date("created_at"),
    )
    op.create_index("ix_api_keys_task", "api_keys", ["task_identifier"])


def downgrade() -> None:
    op.drop_index("ix_api_keys_task", "api_keys")
    op.drop_table("api_keys")
