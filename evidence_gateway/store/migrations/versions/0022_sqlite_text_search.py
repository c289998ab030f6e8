"""Trigram indexes for the substring filters on SQLite (FTS5, when the build has it)

``name_contains`` / ``title_contains`` read ``lower(column) LIKE '%text%'`` on SQLite, which
no B-tree serves: one rare name among 100,000 workspaces read every row of the organisation
(bench/list_filters.py). An FTS5 table with the ``trigram`` tokenizer per column, holding the
row's ``id`` (UNINDEXED) and the text, serves ``LIKE '%text%'``; triggers keyed on ``id`` keep
it in step with inserts, updates of the column and deletes; an INSERT ... SELECT fills it from
the rows already there. Nothing is keyed by rowid, which VACUUM may renumber on these tables.
The filter keeps its own condition and only narrows the rows it tests to the index's
candidates (store/sqlite_text_search.py).

PostgreSQL gets nothing (0021_list_filters_more gave it pg_trgm's indexes); neither does an
SQLite built without FTS5, whose filters answer the same rows without the index.
store/sqlite_text_search.py builds the same on a database made from the models.

Revision ID: 0022_sqlite_text_search
Revises: 0021_list_filters_more
Create Date: 2026-11-27 05:50:00.000000
"""

import logging
import sqlite3
from collections.abc import Sequence

from alembic import op

# revision identifiers, used by Alembic.
revision: str = "0022_sqlite_text_search"
down_revision: str | Sequence[str] | None = "0021_list_filters_more"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# (table, column), as store/sqlite_text_search.py names them: the index is <table>_<column>_fts.
COLUMNS = [
    ("workspace", "name"),
    ("report_pack", "title"),
    ("evidence_item", "title"),
    ("legacy_report", "title"),
]


def _fts5() -> bool:
    try:
        with sqlite3.connect(":memory:") as probe:
            probe.execute("CREATE VIRTUAL TABLE probe USING fts5(x, tokenize = 'trigram')")
    except sqlite3.Error:
        return False
    return True


def upgrade() -> None:
    conn = op.get_bind()
    if conn.dialect.name != "sqlite":
        return
    if not _fts5():
        logging.getLogger("alembic").warning("SQLite has no FTS5 trigram tokenizer: no substring indexes")
        return
    for table, column in COLUMNS:
        fts = f"{table}_{column}_fts"
        add = f"INSERT INTO {fts}(id, {column}) VALUES (new.id, new.{column});"
        # The old row's index entry is found through the index (its whole text as a phrase), not by
        # scanning for its unindexed id; a text under 3 characters can't be matched and is scanned for.
        remove = (
            f"DELETE FROM {fts} WHERE rowid IN (SELECT rowid FROM {fts} WHERE {fts} MATCH "
            f"'\"' || replace(old.{column}, '\"', '\"\"') || '\"' AND id = old.id) AND length(old.{column}) >= 3; "
            f"DELETE FROM {fts} WHERE (old.{column} IS NULL OR length(old.{column}) < 3) AND id = old.id;"
        )
        conn.exec_driver_sql(
            f"CREATE VIRTUAL TABLE IF NOT EXISTS {fts} USING fts5(id UNINDEXED, {column}, tokenize = 'trigram')"
        )
        conn.exec_driver_sql(f"CREATE TRIGGER IF NOT EXISTS {fts}_ai AFTER INSERT ON {table} BEGIN {add} END")
        conn.exec_driver_sql(f"CREATE TRIGGER IF NOT EXISTS {fts}_ad AFTER DELETE ON {table} BEGIN {remove} END")
        conn.exec_driver_sql(
            f"CREATE TRIGGER IF NOT EXISTS {fts}_au AFTER UPDATE OF {column} ON {table} BEGIN {remove} {add} END"
        )
        conn.exec_driver_sql(f"INSERT INTO {fts}(id, {column}) SELECT id, {column} FROM {table}")


def downgrade() -> None:
    conn = op.get_bind()
    if conn.dialect.name != "sqlite":
        return
    for table, column in reversed(COLUMNS):
        fts = f"{table}_{column}_fts"
        for trigger in ("au", "ad", "ai"):
            conn.exec_driver_sql(f"DROP TRIGGER IF EXISTS {fts}_{trigger}")
        conn.exec_driver_sql(f"DROP TABLE IF EXISTS {fts}")
