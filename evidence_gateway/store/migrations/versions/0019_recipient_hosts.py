"""Recipient hosts: where the answers to a data recipient's PACT requests go

A recipient that sends a RequestCreated event is answered with a RequestFulfilled or
RequestRejected event at its own host's /2/events or /3/events (docs/ileap.md). The recipient
gains that host's base URL and the client credentials the data owner holds for it; the answers
owed wait in ``exchange_message``, claimed, sent and retried as webhook messages are.

Revision ID: 0019_recipient_hosts
Revises: 0018_pact_sharing
Create Date: 2026-11-27 05:00:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel.sql.sqltypes  # noqa: F401  (autogenerate writes sqlmodel.sql.sqltypes.AutoString)
from alembic import op

# revision identifiers, used by Alembic.
revision: str = "0019_recipient_hosts"
down_revision: str | Sequence[str] | None = "0018_pact_sharing"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("data_recipient", schema=None) as batch_op:
        batch_op.add_column(sa.Column("host_url", sqlmodel.sql.sqltypes.AutoString(length=2000), nullable=True))
        batch_op.add_column(sa.Column("host_client_id", sqlmodel.sql.sqltypes.AutoString(length=200), nullable=True))
        batch_op.add_column(
            sa.Column("host_client_secret", sqlmodel.sql.sqltypes.AutoString(length=500), nullable=True)
        )
        batch_op.add_column(sa.Column("host_pact_version", sqlmodel.sql.sqltypes.AutoString(length=1), nullable=True))

    op.create_table(
        "exchange_message",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("org_id", sa.Uuid(), nullable=False),
        sa.Column("recipient_id", sa.Uuid(), nullable=False),
        sa.Column("kind", sqlmodel.sql.sqltypes.AutoString(length=16), nullable=False),
        sa.Column("major", sqlmodel.sql.sqltypes.AutoString(length=1), nullable=False),
        sa.Column("request_event_id", sqlmodel.sql.sqltypes.AutoString(length=500), nullable=False),
        sa.Column("request", sa.JSON(), nullable=False),
        sa.Column("reply_source", sqlmodel.sql.sqltypes.AutoString(length=2000), nullable=False),
        sa.Column("status", sqlmodel.sql.sqltypes.AutoString(length=16), nullable=False),
        sa.Column("attempts", sa.Integer(), server_default="0", nullable=False),
        sa.Column("next_attempt_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=True),
        sa.Column("claimed_by", sqlmodel.sql.sqltypes.AutoString(length=120), nullable=True),
        sa.Column("claimed_until", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=True),
        sa.Column("answer", sqlmodel.sql.sqltypes.AutoString(length=16), nullable=True),
        sa.Column("last_status", sa.Integer(), nullable=True),
        sa.Column("last_error", sqlmodel.sql.sqltypes.AutoString(length=2000), nullable=True),
        sa.Column("created_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
        sa.Column("delivered_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=True),
        sa.ForeignKeyConstraint(["org_id"], ["organization.id"], name=op.f("fk_exchange_message_org_id")),
        sa.ForeignKeyConstraint(["recipient_id"], ["data_recipient.id"], name=op.f("fk_exchange_message_recipient_id")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_exchange_message")),
        sa.UniqueConstraint(
            "recipient_id",
            "kind",
            "request_event_id",
            name=op.f("uq_exchange_message_recipient_id_kind_request_event_id"),
        ),
    )
    with op.batch_alter_table("exchange_message", schema=None) as batch_op:
        batch_op.create_index("ix_exchange_message_due", ["status", "next_attempt_at"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("exchange_message", schema=None) as batch_op:
        batch_op.drop_index("ix_exchange_message_due")

    op.drop_table("exchange_message")
    with op.batch_alter_table("data_recipient", schema=None) as batch_op:
        batch_op.drop_column("host_pact_version")
        batch_op.drop_column("host_client_secret")
        batch_op.drop_column("host_client_id")
        batch_op.drop_column("host_url")
