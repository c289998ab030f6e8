"""Shipment TEU (iLEAP TOCs per TEU-km), hub rows and the run's hub operations (ISO 14083 hubs)

Revision ID: 0014_hubs_teu
Revises: 0013_seal_timestamps
Create Date: 2026-11-26 22:00:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel.sql.sqltypes
from alembic import op

# revision identifiers, used by Alembic.
revision: str = "0014_hubs_teu"
down_revision: str | Sequence[str] | None = "0013_seal_timestamps"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("shipment") as batch:
        batch.add_column(sa.Column("teu", sa.Float(), nullable=True))
    with op.batch_alter_table("calculation_run") as batch:
        batch.add_column(sa.Column("hubs_json", sa.JSON(), nullable=True))
    text = sqlmodel.sql.sqltypes.AutoString
    op.create_table(
        "hub_row",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("org_id", sa.Uuid(), nullable=False),
        sa.Column("workspace_id", sa.Uuid(), nullable=False),
        sa.Column("import_batch_id", sa.Uuid(), nullable=False),
        sa.Column("row_index", sa.Integer(), nullable=False),
        sa.Column("external_id", text(length=200), nullable=True),
        sa.Column("name", text(length=200), nullable=True),
        sa.Column("hub_type", text(length=32), nullable=False),
        sa.Column("temperature_control", text(length=16), nullable=False),
        sa.Column("throughput_tonnes", sa.Float(), nullable=False),
        sa.Column("fuel_type", text(length=32), nullable=True),
        sa.Column("fuel_amount", sa.Float(), nullable=True),
        sa.Column("electricity_kwh", sa.Float(), nullable=True),
        sa.Column("hub_total_throughput_tonnes", sa.Float(), nullable=True),
        sa.Column("electricity_country", text(length=2), nullable=True),
        sa.ForeignKeyConstraint(["org_id"], ["organization.id"]),
        sa.ForeignKeyConstraint(["workspace_id"], ["workspace.id"]),
        sa.ForeignKeyConstraint(["import_batch_id"], ["import_batch.id"]),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_hub_row_workspace_batch", "hub_row", ["workspace_id", "import_batch_id", "row_index"])


def downgrade() -> None:
    op.drop_index("ix_hub_row_workspace_batch", table_name="hub_row")
    op.drop_table("hub_row")
    with op.batch_alter_table("calculation_run") as batch:
        batch.drop_column("hubs_json")
    with op.batch_alter_table("shipment") as batch:
        batch.drop_column("teu")
