"""Shipment TEU (iLEAP TOCs per TEU-km) and hub rows (ISO 14083 hub operations)

Revision ID: 0014_hubs_teu
Revises: 0013_seal_timestamps
Create Date: 2026-11-26 22:00:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision: str = "0014_hubs_teu"
down_revision: str | Sequence[str] | None = "0013_seal_timestamps"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("shipment") as batch:
        batch.add_column(sa.Column("teu", sa.Float(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("shipment") as batch:
        batch.drop_column("teu")
