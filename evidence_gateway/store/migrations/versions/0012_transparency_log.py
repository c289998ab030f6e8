"""Transparency log: leaf hashes per organisation, signed checkpoints, signing keys, statements

Each organisation's events become the leaves of an RFC 6962 Merkle tree (event.leaf_hash, written
by each append); checkpoints of the tree are signed and kept (tlog_checkpoint); the instance's
Ed25519 keys keep their public halves after rotation (evidence_key); packs' seals and approval
statements are DSSE envelopes (signed_statement). Events already stored get their leaf hash here, so
every organisation's tree covers its whole log.

Revision ID: 0012_transparency_log
Revises: 0011_org_secret_rotation
Create Date: 2026-11-26 18:00:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel.sql.sqltypes
from alembic import op

from evidence_gateway.store import tlog

# revision identifiers, used by Alembic.
revision: str = "0012_transparency_log"
down_revision: str | Sequence[str] | None = "0011_org_secret_rotation"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("event") as batch:
        batch.add_column(sa.Column("leaf_hash", sa.LargeBinary(), nullable=True))
    op.create_table(
        "tlog_checkpoint",
        sa.Column("org_id", sa.Uuid(), nullable=False),
        sa.Column("size", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("root", sa.LargeBinary(), nullable=False),
        sa.Column("frontier", sa.LargeBinary(), nullable=False),
        sa.Column("key_id", sqlmodel.sql.sqltypes.AutoString(length=16), nullable=False),
        sa.Column("note", sa.Text(), nullable=False),
        sa.Column("issued_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(["org_id"], ["organization.id"]),
        sa.PrimaryKeyConstraint("org_id", "size"),
    )
    op.create_table(
        "evidence_key",
        sa.Column("key_id", sqlmodel.sql.sqltypes.AutoString(length=16), nullable=False),
        sa.Column("name", sqlmodel.sql.sqltypes.AutoString(length=200), nullable=False),
        sa.Column("public_key", sa.LargeBinary(), nullable=False),
        sa.Column("private_seed", sqlmodel.sql.sqltypes.AutoString(length=100), nullable=True),
        sa.Column("created_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
        sa.Column("retired_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=True),
        sa.PrimaryKeyConstraint("key_id"),
    )
    op.create_table(
        "signed_statement",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("org_id", sa.Uuid(), nullable=False),
        sa.Column("pack_id", sa.Uuid(), nullable=False),
        sa.Column("kind", sqlmodel.sql.sqltypes.AutoString(length=16), nullable=False),
        sa.Column("event_sequence", sa.BigInteger(), nullable=False),
        sa.Column("key_id", sqlmodel.sql.sqltypes.AutoString(length=16), nullable=False),
        sa.Column("envelope", sa.Text(), nullable=False),
        sa.Column("created_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(["org_id"], ["organization.id"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("org_id", "event_sequence", name="uq_signed_statement_org_event_sequence"),
    )
    op.create_index("ix_signed_statement_org_pack", "signed_statement", ["org_id", "pack_id"], unique=False)
    tlog.backfill_leaves(op.get_bind())


def downgrade() -> None:
    op.drop_index("ix_signed_statement_org_pack", table_name="signed_statement")
    op.drop_table("signed_statement")
    op.drop_table("evidence_key")
    op.drop_table("tlog_checkpoint")
    with op.batch_alter_table("event") as batch:
        batch.drop_column("leaf_hash")
