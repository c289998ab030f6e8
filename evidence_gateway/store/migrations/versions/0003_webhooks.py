"""webhook endpoints, messages, attempts per endpoint

Revision ID: 0003_webhooks
Revises: 0002_write_path
Create Date: 2026-11-23 15:30:19.282072
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel.sql.sqltypes  # noqa: F401  (autogenerate writes sqlmodel.sql.sqltypes.AutoString)
from alembic import op

# revision identifiers, used by Alembic.
revision: str = "0003_webhooks"
down_revision: str | Sequence[str] | None = "0002_write_path"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "webhook_endpoint",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("org_id", sa.Uuid(), nullable=False),
        sa.Column("url", sqlmodel.sql.sqltypes.AutoString(length=2000), nullable=False),
        sa.Column("description", sqlmodel.sql.sqltypes.AutoString(length=500), nullable=False),
        sa.Column("event_types", sa.JSON(), nullable=False),
        sa.Column("enabled", sa.Boolean(), nullable=False),
        sa.Column("secret", sqlmodel.sql.sqltypes.AutoString(length=100), nullable=False),
        sa.Column("previous_secret", sqlmodel.sql.sqltypes.AutoString(length=100), nullable=True),
        sa.Column("previous_secret_expires_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=True),
        sa.Column("event_cursor", sa.BigInteger(), server_default="0", nullable=False),
        sa.Column("failing_since", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=True),
        sa.Column("disabled_reason", sqlmodel.sql.sqltypes.AutoString(length=200), nullable=True),
        sa.Column("api_key_id", sa.Uuid(), nullable=True),
        sa.Column("created_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
        sa.Column("updated_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["api_key_id"],
            ["api_key.id"],
        ),
        sa.ForeignKeyConstraint(
            ["org_id"],
            ["organization.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("webhook_endpoint", schema=None) as batch_op:
        batch_op.create_index("ix_webhook_endpoint_org_created", ["org_id", "created_at", "id"], unique=False)

    op.create_table(
        "webhook_message",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("org_id", sa.Uuid(), nullable=False),
        sa.Column("endpoint_id", sa.Uuid(), nullable=False),
        sa.Column("event_id", sa.Uuid(), nullable=False),
        sa.Column("event_type", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
        sa.Column("status", sqlmodel.sql.sqltypes.AutoString(length=16), nullable=False),
        sa.Column("attempts", sa.Integer(), server_default="0", nullable=False),
        sa.Column("next_attempt_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=True),
        sa.Column("claimed_by", sqlmodel.sql.sqltypes.AutoString(length=120), nullable=True),
        sa.Column("claimed_until", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=True),
        sa.Column("created_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
        sa.Column("delivered_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=True),
        sa.ForeignKeyConstraint(["endpoint_id"], ["webhook_endpoint.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(
            ["event_id"],
            ["event.id"],
        ),
        sa.ForeignKeyConstraint(
            ["org_id"],
            ["organization.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("endpoint_id", "event_id", name="uq_webhook_message_endpoint_event"),
    )
    with op.batch_alter_table("webhook_message", schema=None) as batch_op:
        batch_op.create_index("ix_webhook_message_due", ["status", "next_attempt_at"], unique=False)

    with op.batch_alter_table("webhook_delivery", schema=None) as batch_op:
        batch_op.add_column(sa.Column("endpoint_id", sa.Uuid(), nullable=True))
        batch_op.add_column(sa.Column("message_id", sa.Uuid(), nullable=True))
        batch_op.add_column(sa.Column("event_id", sa.Uuid(), nullable=True))
        batch_op.add_column(sa.Column("attempt", sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column("duration_ms", sa.Integer(), nullable=True))
        batch_op.create_index("ix_webhook_delivery_endpoint_created", ["endpoint_id", "created_at", "id"], unique=False)
        batch_op.create_foreign_key(
            "fk_webhook_delivery_message", "webhook_message", ["message_id"], ["id"], ondelete="SET NULL"
        )
        batch_op.create_foreign_key(
            "fk_webhook_delivery_endpoint", "webhook_endpoint", ["endpoint_id"], ["id"], ondelete="SET NULL"
        )


def downgrade() -> None:
    with op.batch_alter_table("webhook_delivery", schema=None) as batch_op:
        batch_op.drop_constraint("fk_webhook_delivery_endpoint", type_="foreignkey")
        batch_op.drop_constraint("fk_webhook_delivery_message", type_="foreignkey")
        batch_op.drop_index("ix_webhook_delivery_endpoint_created")
        batch_op.drop_column("duration_ms")
        batch_op.drop_column("attempt")
        batch_op.drop_column("event_id")
        batch_op.drop_column("message_id")
        batch_op.drop_column("endpoint_id")

    with op.batch_alter_table("webhook_message", schema=None) as batch_op:
        batch_op.drop_index("ix_webhook_message_due")

    op.drop_table("webhook_message")
    with op.batch_alter_table("webhook_endpoint", schema=None) as batch_op:
        batch_op.drop_index("ix_webhook_endpoint_org_created")

    op.drop_table("webhook_endpoint")
