"""ISO 14083 activity basis: carrier intensity distance basis and category, empty running, grid
country on the rows; actual / emission distances and the distance adjustment on the results

Only additions, all nullable: rows and results stored before keep reading.

Revision ID: 0015_iso_activity
Revises: 0014_hubs_teu
Create Date: 2026-11-26 22:00:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel.sql.sqltypes  # noqa: F401
from alembic import op

# revision identifiers, used by Alembic.
revision: str = "0015_iso_activity"
down_revision: str | Sequence[str] | None = "0014_hubs_teu"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_TEXT = sqlmodel.sql.sqltypes.AutoString
SHIPMENT_COLUMNS = (
    ("carrier_intensity_distance_basis", _TEXT(length=8)),
    ("carrier_intensity_category", _TEXT(length=8)),
    ("loaded_distance_km", sa.Float()),
    ("empty_distance_km", sa.Float()),
    ("empty_running_share", sa.Float()),
    ("electricity_country", _TEXT(length=2)),
)
RESULT_COLUMNS = (
    ("actual_distance_km", sa.Float()),
    ("emission_distance_km", sa.Float()),
    ("emission_tonne_km", sa.Float()),
    ("distance_adjustment_factor", sa.Float()),
    ("trip_fuel_amount", sa.Float()),
)


def upgrade() -> None:
    with op.batch_alter_table("shipment", schema=None) as batch_op:
        for name, kind in SHIPMENT_COLUMNS:
            batch_op.add_column(sa.Column(name, kind, nullable=True))
    with op.batch_alter_table("shipment_emission", schema=None) as batch_op:
        for name, kind in RESULT_COLUMNS:
            batch_op.add_column(sa.Column(name, kind, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("shipment_emission", schema=None) as batch_op:
        for name, _ in reversed(RESULT_COLUMNS):
            batch_op.drop_column(name)
    with op.batch_alter_table("shipment", schema=None) as batch_op:
        for name, _ in reversed(SHIPMENT_COLUMNS):
            batch_op.drop_column(name)
