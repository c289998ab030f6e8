"""Seal time-stamps: a seal's RFC 3161 TimeStampResp, when a time-stamping authority is set

Revision ID: 0013_seal_timestamps
Revises: 0012_transparency_log
Create Date: 2026-11-26 19:30:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision: str = "0013_seal_timestamps"
down_revision: str | Sequence[str] | None = "0012_transparency_log"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("signed_statement") as batch:
        batch.add_column(sa.Column("timestamp", sa.LargeBinary(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("signed_statement") as batch:
        batch.drop_column("timestamp")
