"""Trigram indexes for the substring filters (PostgreSQL, when pg_trgm can be created)

``name_contains`` / ``title_contains`` read ``column ILIKE '%text%'`` on PostgreSQL; no B-tree
serves a substring, so a rare text read most of an organisation's rows (bench/list_filters.py:
about 60 ms for one name among 100,000 workspaces). pg_trgm's GIN operator class on the column
serves ILIKE. ``fastupdate = off``: these tables take a row per request, so each insert goes
into the index at once instead of a pending list every search would read until autovacuum.

Where the extension cannot be created (not installed on the server, a role without the right),
nothing is created and the filters answer the same rows without the index. SQLite gets nothing.
store/text_search.py builds the same on a database made from the models.

The other lists' filters and orderings (webhook endpoints and deliveries, legacy reports, a
workspace's imports) are served by their existing (organisation or parent, created_at, id)
indexes: nothing else is needed.

Revision ID: 0021_list_filters_more
Revises: 0020_list_counts
Create Date: 2026-11-27 05:05:00.000000
"""

import logging
from collections.abc import Sequence

from alembic import op
from sqlalchemy.exc import DBAPIError

# revision identifiers, used by Alembic.
revision: str = "0021_list_filters_more"
down_revision: str | Sequence[str] | None = "0020_list_counts"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# (index, table, column), as store/text_search.py names them.
INDEXES = [
    ("ix_workspace_name_trgm", "workspace", "name"),
    ("ix_report_pack_title_trgm", "report_pack", "title"),
    ("ix_evidence_item_title_trgm", "evidence_item", "title"),
    ("ix_legacy_report_title_trgm", "legacy_report", "title"),
]


def upgrade() -> None:
    conn = op.get_bind()
    if conn.dialect.name != "postgresql":
        return
    try:
        with conn.begin_nested():  # a refusal rolls back to here, not the whole upgrade
            conn.exec_driver_sql("CREATE EXTENSION IF NOT EXISTS pg_trgm")
    except DBAPIError as exc:
        logging.getLogger("alembic").warning("pg_trgm unavailable (%s): no trigram indexes", exc.orig)
        return
    for name, table, column in INDEXES:
        conn.exec_driver_sql(
            f"CREATE INDEX IF NOT EXISTS {name} ON {table} USING gin ({column} gin_trgm_ops) WITH (fastupdate = off)"
        )


def downgrade() -> None:
    conn = op.get_bind()
    if conn.dialect.name != "postgresql":
        return
    for name, _table, _column in reversed(INDEXES):
        conn.exec_driver_sql(f"DROP INDEX IF EXISTS {name}")
