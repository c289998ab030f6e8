"""Trigram indexes for the lists' ``*_contains`` filters (PostgreSQL only).

A ``name_contains`` / ``title_contains`` filter is ``column ILIKE '%text%'`` on PostgreSQL
(``lower(column) LIKE`` on SQLite; store/list_filters.py): no B-tree serves a substring, so
without help the database reads the ordered index until a page matches, which for a rare text
is most of the organisation's rows (bench/list_filters.py). pg_trgm's GIN operator class on the
column serves ILIKE: the matching rows come from the index, then the page is sorted. Migration
0021_list_filters_more creates them on a migrated database, ``create_trigram_indexes`` on one
built from the models.

``fastupdate = off``: these tables take a row per request, not bulk loads, so each insert goes
into the index at once rather than into a pending list that every search would read linearly
until autovacuum merges it.

Optional by design: the extension may be missing or not creatable by the application's role.
Then nothing is created, a line is logged, and the filters answer the same rows, only slower.
They are not in the models (SQLite gets FTS5 trigram tables instead,
store/sqlite_text_search.py), so the drift check leaves them out (``include_object``).
"""

from __future__ import annotations

import logging
from typing import Any

from sqlalchemy import Connection
from sqlalchemy.exc import DBAPIError

from evidence_gateway.store import sqlite_text_search

log = logging.getLogger(__name__)

# (index, table, column): the columns a ``*_contains`` filter reads on lists that grow.
TRIGRAM_INDEXES: tuple[tuple[str, str, str], ...] = (
    ("ix_workspace_name_trgm", "workspace", "name"),
    ("ix_report_pack_title_trgm", "report_pack", "title"),
    ("ix_evidence_item_title_trgm", "evidence_item", "title"),
    ("ix_legacy_report_title_trgm", "legacy_report", "title"),
)

TRIGRAM_NAMES = frozenset(name for name, _table, _column in TRIGRAM_INDEXES)


def create_trigram_indexes(conn: Connection) -> bool:
    """pg_trgm and the GIN indexes on PostgreSQL, in the caller's transaction; False (nothing
    created) on SQLite or where the extension cannot be created."""
    if conn.dialect.name != "postgresql":
        return False
    try:
        with conn.begin_nested():  # a refusal rolls back to here, not the whole upgrade
            conn.exec_driver_sql("CREATE EXTENSION IF NOT EXISTS pg_trgm")
    except DBAPIError as exc:
        log.warning("pg_trgm is not available (%s): substring filters work without their index", exc.orig)
        return False
    for name, table, column in TRIGRAM_INDEXES:
        conn.exec_driver_sql(
            f"CREATE INDEX IF NOT EXISTS {name} ON {table} USING gin ({column} gin_trgm_ops) WITH (fastupdate = off)"
        )
    return True


def include_object(obj: Any, name: str | None, type_: str, reflected: bool, compare_to: Any) -> bool:
    """Alembic's filter for the drift check and autogenerate: the optional trigram indexes (and
    SQLite's FTS5 tables, store/sqlite_text_search.py) exist in some databases and never in the
    models."""
    if not sqlite_text_search.include_object(obj, name, type_, reflected, compare_to):
        return False
    return not (type_ == "index" and reflected and compare_to is None and name in TRIGRAM_NAMES)
