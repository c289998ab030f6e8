"""List indexes: every filter and ordering the lists offer served by one index range

The lists can be filtered by status and ordered by more than their creation time
(resolvers/list_queries.py). A keyset page reads "rows of this organisation beyond this
(key, id)" in key order; with the organisation, the key and the id in one index that is a range
scan from the cursor, and with the status between them a status filter ("packs awaiting
approval") is a range as well, so a page costs the same at 1,000 rows or 100,000
(bench/list_filters.py). The organisation-wide pack list had (org_id, created_at) without the
id: replaced by the index that has it.

Revision ID: 0017_list_indexes
Revises: 0016_tlog_subtrees
Create Date: 2026-11-27 02:40:00.000000
"""

from collections.abc import Sequence

from alembic import op

# revision identifiers, used by Alembic.
revision: str = "0017_list_indexes"
down_revision: str | Sequence[str] | None = "0016_tlog_subtrees"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# (index, table, columns), in the models' order (models/*.py name the same ones).
INDEXES: list[tuple[str, str, list[str]]] = [
    ("ix_workspace_org_updated", "workspace", ["org_id", "updated_at", "id"]),
    ("ix_workspace_org_name", "workspace", ["org_id", "name", "id"]),
    ("ix_workspace_org_status_created", "workspace", ["org_id", "status", "created_at", "id"]),
    ("ix_report_pack_org_created_id", "report_pack", ["org_id", "created_at", "id"]),
    ("ix_report_pack_org_status_created", "report_pack", ["org_id", "status", "created_at", "id"]),
    ("ix_calculation_run_org_created", "calculation_run", ["org_id", "created_at", "id"]),
    ("ix_calculation_run_org_status_created", "calculation_run", ["org_id", "status", "created_at", "id"]),
    ("ix_evidence_item_org_title", "evidence_item", ["org_id", "title", "id"]),
    (
        "ix_evidence_item_org_verification_uploaded",
        "evidence_item",
        ["org_id", "verification_status", "uploaded_at", "id"],
    ),
    ("ix_event_org_type_sequence", "event", ["org_id", "type", "sequence"]),
]


def upgrade() -> None:
    for name, table, columns in INDEXES:
        op.create_index(name, table, columns, unique=False)
    op.drop_index("ix_report_pack_org_created", table_name="report_pack")


def downgrade() -> None:
    op.create_index("ix_report_pack_org_created", "report_pack", ["org_id", "created_at"], unique=False)
    for name, table, _columns in reversed(INDEXES):
        op.drop_index(name, table_name=table)
