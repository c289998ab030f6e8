"""Sharing with data recipients (iLEAP / PACT host): recipients with OAuth2 client credentials
(the secret hashed), publications of packs to them, and the installation's token-signing key.

Revision ID: 0018_pact_sharing
Revises: 0017_list_indexes
Create Date: 2026-11-27 02:12:26.711898
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel.sql.sqltypes  # noqa: F401  (autogenerate writes sqlmodel.sql.sqltypes.AutoString)
from alembic import op

# revision identifiers, used by Alembic.
revision: str = "0018_pact_sharing"
down_revision: str | Sequence[str] | None = "0017_list_indexes"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "exchange_signing_key",
        sa.Column("name", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
        sa.Column("kid", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
        sa.Column("private_key_pem", sa.Text(), nullable=False),
        sa.Column("created_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("name", name=op.f("pk_exchange_signing_key")),
    )
    op.create_table(
        "data_recipient",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("org_id", sa.Uuid(), nullable=False),
        sa.Column("name", sqlmodel.sql.sqltypes.AutoString(length=200), nullable=False),
        sa.Column("client_id", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
        sa.Column("secret_hash", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
        sa.Column("created_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
        sa.Column("revoked_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=True),
        sa.ForeignKeyConstraint(["org_id"], ["organization.id"], name=op.f("fk_data_recipient_org_id")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_data_recipient")),
        sa.UniqueConstraint("client_id", name=op.f("uq_data_recipient_client_id")),
    )
    with op.batch_alter_table("data_recipient", schema=None) as batch_op:
        batch_op.create_index("ix_data_recipient_org_created", ["org_id", "created_at"], unique=False)

    op.create_table(
        "publication",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("org_id", sa.Uuid(), nullable=False),
        sa.Column("recipient_id", sa.Uuid(), nullable=False),
        sa.Column("report_pack_id", sa.Uuid(), nullable=False),
        sa.Column("created_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
        sa.Column("withdrawn_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=True),
        sa.ForeignKeyConstraint(["org_id"], ["organization.id"], name=op.f("fk_publication_org_id")),
        sa.ForeignKeyConstraint(["recipient_id"], ["data_recipient.id"], name=op.f("fk_publication_recipient_id")),
        sa.ForeignKeyConstraint(["report_pack_id"], ["report_pack.id"], name=op.f("fk_publication_report_pack_id")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_publication")),
        sa.UniqueConstraint("recipient_id", "report_pack_id", name=op.f("uq_publication_recipient_id_report_pack_id")),
    )
    with op.batch_alter_table("publication", schema=None) as batch_op:
        batch_op.create_index("ix_publication_org_created", ["org_id", "created_at"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("publication", schema=None) as batch_op:
        batch_op.drop_index("ix_publication_org_created")

    op.drop_table("publication")
    with op.batch_alter_table("data_recipient", schema=None) as batch_op:
        batch_op.drop_index("ix_data_recipient_org_created")

    op.drop_table("data_recipient")
    op.drop_table("exchange_signing_key")
