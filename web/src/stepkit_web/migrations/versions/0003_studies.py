"""Running a study: participants, personal invites (expiring, one session each), task versions
drafted and published, the FHIR QuestionnaireResponse kept with the result, what the study
page lists (the step reached, when finished), study settings, staff accounts and their
sign-ins. Adds columns (nullable, or with a default every existing row gets) and tables;
existing task versions count as published.

Revision ID: 0003
Revises: 0002
"""
import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("tasks") as t:
        t.add_column(sa.Column("status", sa.String(20), nullable=False,
                               server_default="published"))
    with op.batch_alter_table("sessions") as t:
        t.add_column(sa.Column("participant", sa.String(200), nullable=True))
        t.add_column(sa.Column("step", sa.String(200), nullable=True))
        t.add_column(sa.Column("finished_at", sa.String(40), nullable=True))
        t.add_column(sa.Column("response", sa.Text, nullable=True))
        t.add_column(sa.Column("closing", sa.Text, nullable=True))
    op.create_index("ix_sessions_participant", "sessions", ["task_identifier", "participant"])
    with op.batch_alter_table("tokens") as t:
        t.add_column(sa.Column("participant", sa.String(200), nullable=True))
        t.add_column(sa.Column("expires_at", sa.String(40), nullable=True))
    op.create_index("ix_tokens_task", "tokens", ["task_identifier", "kind"])
    op.create_table(
        "studies",
        sa.Column("task_identifier", sa.String(200), primary_key=True),
        sa.Column("title", sa.Text, nullable=True),
        sa.Column("description", sa.Text, nullable=True),
        sa.Column("duration", sa.Text, nullable=True),
        sa.Column("contact", sa.Text, nullable=True),
        sa.Column("updated_at", sa.String(40), nullable=False),
    )
    op.create_table(
        "staff",
        sa.Column("username", sa.String(100), primary_key=True),
        sa.Column("password_hash", sa.Text, nullable=False),
        sa.Column("created_at", sa.String(40), nullable=False),
    )
    op.create_table(
        "staff_sessions",
        sa.Column("hash", sa.String(64), primary_key=True),
        sa.Column("username", sa.String(100), nullable=False),
        sa.Column("csrf", sa.String(64), nullable=False),
        sa.Column("expires_at", sa.BigInteger, nullable=False),
    )


def downgrade() -> None:
    raise RuntimeError("downgrading below 0003 would delete participants, invites and staff: "
                       "refused")
