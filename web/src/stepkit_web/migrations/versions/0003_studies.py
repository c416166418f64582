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

from stepkit_web import columns as col

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("tasks") as t:
        t.add_column(col.word("status", server_default="published"))
    with op.batch_alter_table("sessions") as t:
        t.add_column(col.identifier("participant", nullable=True))
        t.add_column(col.identifier("step", nullable=True))
        t.add_column(col.date("finished_at", nullable=True))
        t.add_column(col.text("response"))
        t.add_column(col.text("closing"))
    op.create_index("ix_sessions_participant", "sessions", ["task_identifier", "participant"])
    with op.batch_alter_table("tokens") as t:
        t.add_column(col.identifier("participant", nullable=True))
        t.add_column(col.date("expires_at", nullable=True))
    op.create_index("ix_tokens_task", "tokens", ["task_identifier", "kind"])
    op.create_table(
        "studies",
        col.identifier("task_identifier", primary_key=True),
        col.text("title"),
        col.text("description"),
        col.text("duration"),
        col.text("contact"),
        col.date("updated_at"),
    )
    op.create_table(
        "staff",
        col.username("username", primary_key=True),
        col.text("password_hash", nullable=False),
        col.date("created_at"),
    )
    op.create_table(
        "staff_sessions",
        col.key("hash", primary_key=True),
        col.username("username"),
        col.key("csrf"),
        col.number("expires_at", sa.BigInteger),
    )


def downgrade() -> None:
    raise RuntimeError("downgrading below 0003 would delete participants, invites and staff: "
                       "refused")
