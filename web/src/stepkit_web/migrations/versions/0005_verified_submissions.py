"""Verified submissions (issue 33): a study setting that requires a submitted result to verify,
and the submissions a study accepted, each with the engine's recomputed result and the
verification's report. Adds a column with a default every existing row gets (false: nothing
changes for a study until its staff asks) and a table.

Revision ID: 0005
Revises: 0004
"""
import sqlalchemy as sa
from alembic import op

from stepkit_web import columns as col

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("studies") as t:
        t.add_column(col.flag("require_verified", server_default=sa.false()))
    op.create_table(
        "submissions",
        col.key("id", primary_key=True),
        col.identifier("task_identifier"),
        col.number("task_version"),
        col.flag("verified"),
        col.text("divergences", nullable=False),
        col.text("result"),
        col.text("response"),
        col.date("received_at"),
    )
    op.create_index("ix_submissions_task", "submissions", ["task_identifier"])


def downgrade() -> None:
    op.drop_index("ix_submissions_task", "submissions")
    op.drop_table("submissions")
    with op.batch_alter_table("studies") as t:
        t.drop_column("require_verified")
