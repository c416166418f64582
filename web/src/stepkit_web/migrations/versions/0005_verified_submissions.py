"""Verified submissions (issue 33): a study setting that requires a submitted result to verify,
and the submissions a study accepted, each with the engine's recomputed result and the
verification's report. Adds a column with a default every existing row gets (false: nothing
changes for a study until its staff asks) and a table.

Revision ID: 0005
Revises: 0004
"""
import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("studies") as t:
        t.add_column(sa.Column("require_verified", sa.Boolean, nullable=False,
                               server_default=sa.false()))
    op.create_table(
        "submissions",
        sa.Column("id", sa.String(64), primary_key=True),
        sa.Column("task_identifier", sa.String(200), nullable=False),
        sa.Column("task_version", sa.Integer, nullable=False),
        sa.Column("verified", sa.Boolean, nullable=False),
        sa.Column("divergences", sa.Text, nullable=False),
        sa.Column("result", sa.Text, nullable=True),
        sa.Column("response", sa.Text, nullable=True),
        sa.Column("received_at", sa.String(40), nullable=False),
    )
    op.create_index("ix_submissions_task", "submissions", ["task_identifier"])


def downgrade() -> None:
    op.drop_index("ix_submissions_task", "submissions")
    op.drop_table("submissions")
    with op.batch_alter_table("studies") as t:
        t.drop_column("require_verified")
