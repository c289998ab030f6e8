"""List counts: each organisation's number of rows in the lists whose total the write path keeps

The unfiltered REST lists read ``pagination.total`` from ``list_count`` instead of counting the
organisation's rows (store/list_counts.py): one index probe at 100,000 rows as at 1,000. The
counts of the rows already there are taken here, in the migration's transaction.

Revision ID: 0020_list_counts
Revises: 0019_recipient_hosts
Create Date: 2026-11-27 05:00:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel.sql.sqltypes  # noqa: F401  (autogenerate writes sqlmodel.sql.sqltypes.AutoString)
from alembic import op

# revision identifiers, used by Alembic.
revision: str = "0020_list_counts"
down_revision: str | Sequence[str] | None = "0019_recipient_hosts"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# The counted tables as of this revision (store/list_counts.py COUNTED).
COUNTED = ("calculation_run", "evidence_item", "report_pack", "webhook_endpoint", "workspace")


def upgrade() -> None:
    op.create_table(
        "list_count",
        sa.Column("org_id", sa.Uuid(), nullable=False),
        sa.Column("list_name", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
        sa.Column("row_count", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(["org_id"], ["organization.id"], name=op.f("fk_list_count_org_id")),
        sa.PrimaryKeyConstraint("org_id", "list_name", name=op.f("pk_list_count")),
    )
    for table in COUNTED:
        op.execute(
            f"INSERT INTO list_count (org_id, list_name, row_count) "
            f"SELECT org_id, '{table}', COUNT(*) FROM {table} GROUP BY org_id"
        )


def downgrade() -> None:
    op.drop_table("list_count")
