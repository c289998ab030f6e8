"""Transparency log subtree cache: hashes of complete, aligned subtrees of each organisation's
log, so inclusion and consistency proofs read O(log n) rows instead of every leaf. A cache only:
empty after the upgrade, it fills as checkpoints are signed and proofs are asked for.

Revision ID: 0016_tlog_subtrees
Revises: 0015_iso_activity
Create Date: 2026-11-26 23:00:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision: str = "0016_tlog_subtrees"
down_revision: str | Sequence[str] | None = "0015_iso_activity"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "tlog_subtree",
        sa.Column("org_id", sa.Uuid(), nullable=False),
        sa.Column("level", sa.SmallInteger(), autoincrement=False, nullable=False),
        sa.Column("first_leaf", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("hash", sa.LargeBinary(), nullable=False),
        sa.ForeignKeyConstraint(["org_id"], ["organization.id"]),
        sa.PrimaryKeyConstraint("org_id", "level", "first_leaf"),
    )


def downgrade() -> None:
    op.drop_table("tlog_subtree")
