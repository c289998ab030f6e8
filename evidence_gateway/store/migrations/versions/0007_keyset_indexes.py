"""Keyset indexes: a workspace's packs, runs and evidence items by (time, id)

Cursor connections read a page as "rows of this scope beyond this (time, id)", newest first.
With the scope, the time and the id in one index that is a range scan from the cursor, so a
deep page costs what the first does. The workspace and organisation evidence lists already
had theirs (ix_workspace_org_created, ix_evidence_item_org_uploaded); the event log is read by
(org_id, sequence) through uq_event_org_sequence. The two indexes replaced here were prefixes
of the new ones.

Revision ID: 0007_keyset_indexes
Revises: 0006_persisted_queries
Create Date: 2026-11-25 16:50:00.000000
"""

from collections.abc import Sequence

from alembic import op

# revision identifiers, used by Alembic.
revision: str = "0007_keyset_indexes"
down_revision: str | Sequence[str] | None = "0006_persisted_queries"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_index(
        "ix_report_pack_workspace_created_id", "report_pack", ["workspace_id", "created_at", "id"], unique=False
    )
    op.create_index(
        "ix_calculation_run_workspace_created_id",
        "calculation_run",
        ["workspace_id", "created_at", "id"],
        unique=False,
    )
    op.drop_index("ix_calculation_run_workspace_created", table_name="calculation_run")
    op.create_index(
        "ix_evidence_item_workspace_uploaded", "evidence_item", ["workspace_id", "uploaded_at", "id"], unique=False
    )
    op.drop_index("ix_evidence_item_workspace", table_name="evidence_item")


def downgrade() -> None:
    op.create_index("ix_evidence_item_workspace", "evidence_item", ["workspace_id"], unique=False)
    op.drop_index("ix_evidence_item_workspace_uploaded", table_name="evidence_item")
    op.create_index(
        "ix_calculation_run_workspace_created", "calculation_run", ["workspace_id", "created_at"], unique=False
    )
    op.drop_index("ix_calculation_run_workspace_created_id", table_name="calculation_run")
    op.drop_index("ix_report_pack_workspace_created_id", table_name="report_pack")
