"""Trigram indexes for the lists' ``*_contains`` filters on SQLite (FTS5).

SQLite answers ``name_contains`` with ``lower(name) LIKE '%text%' ESCAPE '/'``
(store/list_filters.py), which no B-tree serves: one rare name among 100,000 workspaces read
every row of the organisation (bench/list_filters.py). FTS5's ``trigram`` tokenizer serves
``LIKE '%text%'`` from an index, so each column below gets an FTS5 table holding the row's
``id`` (UNINDEXED) and a copy of the text, kept in step by triggers keyed on ``id`` (insert,
update of the column, delete). Nothing depends on the base table's rowid, which these tables
(UUID string ids, no INTEGER PRIMARY KEY) do not keep stable: VACUUM may renumber it. Migration 0022_sqlite_text_search
creates them on a migrated database, ``create_fts_indexes`` on one built from the models.

The filter keeps its own condition and adds ``id IN (SELECT id FROM <index> WHERE
<index> MATCH '"run" AND "run"')``, a phrase per run of the text between ``%`` and ``_`` (the
same candidates as the index's ``LIKE '%text%'``, without LIKE's second look at each candidate's
row, which made a common word's candidates cost twice as much). The index only narrows the rows
the condition is tested on, so the answer is the same rows: its candidates are a wider net (the
runs anywhere, in Unicode's case folding, wider than SQLite's ASCII ``lower``) that the exact
condition trims. A text without three characters in a row free of ``%`` and ``_`` has no
trigram to look up: such filters keep the plain scan.

Per request, ``planned`` counts the index's candidates for the text up to ``COMMON`` first: a
common text leaves the index out (the ordered index's walk finds a page's rows sooner than a
look-up of every candidate by id), a rare one keeps it. The rows are the same either way.

Optional by design: an SQLite built without FTS5 (checked once per process) creates nothing
and filters without the index. A migration that rebuilds one of these tables (Alembic's batch
mode copies it) drops the triggers with it and must create them again and refill the index
(``create_fts_indexes`` does both). The virtual tables and their
shadow tables are not in the models, so the drift check leaves them out (``include_object``).
"""

from __future__ import annotations

import re
import sqlite3
from functools import cache
from typing import TYPE_CHECKING, Any

from sqlalchemy import Boolean, ColumnElement, Connection, Integer, Table, literal, text
from sqlalchemy import column as result_column
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql.compiler import SQLCompiler
from sqlalchemy.sql.selectable import TextualSelect
from sqlalchemy.sql.visitors import InternalTraversal

if TYPE_CHECKING:
    from evidence_gateway.store.db import Database

# (table, column): the columns a ``*_contains`` filter reads on lists that grow, as
# store/text_search.py indexes them on PostgreSQL.
FTS_COLUMNS: tuple[tuple[str, str], ...] = (
    ("workspace", "name"),
    ("report_pack", "title"),
    ("evidence_item", "title"),
    ("legacy_report", "title"),
)
_SHADOWS = ("data", "idx", "content", "docsize", "config")  # what FTS5 creates beside a table


def index_name(table: str, column: str) -> str:
    return f"{table}_{column}_fts"


INDEX_NAMES = tuple(index_name(table, column) for table, column in FTS_COLUMNS)
# The virtual tables and the shadow tables FTS5 keeps beside each.
FTS_NAMES = frozenset(name for index in INDEX_NAMES for name in (index, *(f"{index}_{s}" for s in _SHADOWS)))
_INDEXED = {(table, column): index_name(table, column) for table, column in FTS_COLUMNS}


@cache
def fts5_available() -> bool:
    """Whether this process's SQLite has FTS5 and its trigram tokenizer (asked once)."""
    try:
        with sqlite3.connect(":memory:") as probe:
            probe.execute("CREATE VIRTUAL TABLE probe USING fts5(x, tokenize = 'trigram')")
    except sqlite3.Error:
        return False
    return True


def ddl(table: str, column: str) -> list[str]:
    """The index, its triggers and its backfill, as migration 0022_sqlite_text_search writes them."""
    fts = index_name(table, column)
    add = f"INSERT INTO {fts}(id, {column}) VALUES (new.id, new.{column});"
    # The old row's index entry is found through the index (its whole text as a phrase), not by
    # scanning for its unindexed id; a text under 3 characters can't be matched and is scanned for.
    remove = (
        f"DELETE FROM {fts} WHERE rowid IN (SELECT rowid FROM {fts} WHERE {fts} MATCH "
        f"'\"' || replace(old.{column}, '\"', '\"\"') || '\"' AND id = old.id) AND length(old.{column}) >= 3; "
        f"DELETE FROM {fts} WHERE (old.{column} IS NULL OR length(old.{column}) < 3) AND id = old.id;"
    )
    return [
        f"CREATE VIRTUAL TABLE IF NOT EXISTS {fts} USING fts5(id UNINDEXED, {column}, tokenize = 'trigram')",
        f"CREATE TRIGGER IF NOT EXISTS {fts}_ai AFTER INSERT ON {table} BEGIN {add} END",
        f"CREATE TRIGGER IF NOT EXISTS {fts}_ad AFTER DELETE ON {table} BEGIN {remove} END",
        f"CREATE TRIGGER IF NOT EXISTS {fts}_au AFTER UPDATE OF {column} ON {table} BEGIN {remove} {add} END",
        f"DELETE FROM {fts}",
        f"INSERT INTO {fts}(id, {column}) SELECT id, {column} FROM {table}",
    ]


def create_fts_indexes(conn: Connection) -> bool:
    """The indexes, triggers and their contents on SQLite, in the caller's transaction; False
    (nothing created) on PostgreSQL or an SQLite without FTS5."""
    if conn.dialect.name != "sqlite" or not fts5_available():
        return False
    for table, column in FTS_COLUMNS:
        for statement in ddl(table, column):
            conn.exec_driver_sql(statement)
    return True


def include_object(obj: Any, name: str | None, type_: str, reflected: bool, compare_to: Any) -> bool:
    """For the drift check: the FTS5 tables exist in SQLite databases and never in the models."""
    return not (type_ == "table" and reflected and compare_to is None and name in FTS_NAMES)


def match_query(text: str) -> str:
    """The FTS5 query whose rows include every row containing ``text``: each run of three or more
    characters between ``%`` and ``_`` as a quoted phrase (a trigram phrase is a substring),
    all of them required; empty when no run is long enough."""
    runs = re.split("[%_]", text)
    return " AND ".join('"' + run.replace('"', '""') + '"' for run in runs if len(run) >= 3)


class IndexedContains(ColumnElement[bool]):
    """``plain`` (the filter's own condition) on every database; on SQLite with FTS5, also the
    row's presence among the index's candidates for the text."""

    inherit_cache = True
    type = Boolean()
    _is_implicitly_boolean = True  # a condition as it stands: no "= 1" after it on SQLite
    _traverse_internals = [
        ("plain", InternalTraversal.dp_clauseelement),
        ("pattern", InternalTraversal.dp_clauseelement),
        ("table", InternalTraversal.dp_clauseelement),
        ("index", InternalTraversal.dp_string),
        ("column", InternalTraversal.dp_string),
    ]

    def __init__(self, plain: ColumnElement[bool], table: Table, column: str, text: str) -> None:
        self.plain = plain
        self.table = table
        self.column = column
        self.index = _INDEXED[(table.name, column)]
        self.pattern = literal(match_query(text))

    @property
    def _from_objects(self) -> list[Any]:
        return list(self.plain._from_objects)


def contains(table: Table, column: str, text: str, plain: ColumnElement[bool]) -> ColumnElement[bool]:
    """``plain``, served by the trigram index where there is one for the column and the text has
    a trigram to look up."""
    if (table.name, column) not in _INDEXED or not match_query(text):
        return plain
    return IndexedContains(plain, table, column, text)


# A text with at least this many candidates in the index is common enough that the ordered
# index's walk finds a page's rows sooner than a look-up of every candidate by id.
COMMON = 300


@cache
def _probe(index: str) -> TextualSelect:
    """How many candidates the index holds for ``:q``, counted up to ``:cap`` (built once; its one
    column declared, as the hot-read path builds each row from the statement's columns)."""
    sql = f"SELECT count(*) AS n FROM (SELECT 1 FROM {index} WHERE {index} MATCH :q LIMIT :cap)"
    return text(sql).columns(result_column("n", Integer))


async def planned(db: Database, found: list[ColumnElement[bool]]) -> list[ColumnElement[bool]]:
    """``found`` with each indexed condition whose text is common (``COMMON`` candidates or more)
    replaced by its plain condition, on SQLite with FTS5 (elsewhere as it is): one capped count
    per such condition. The rows are the same either way; the plan is the one that finds them."""
    if not db.is_sqlite or not fts5_available() or not any(isinstance(c, IndexedContains) for c in found):
        return found
    probes = [(_probe(c.index), {"q": c.pattern.value, "cap": COMMON}) for c in found if isinstance(c, IndexedContains)]
    counts = iter(await db.fetch_many(probes))
    return [c.plain if isinstance(c, IndexedContains) and next(counts)[0][0] >= COMMON else c for c in found]


@compiles(IndexedContains)
def _everywhere(element: IndexedContains, compiler: SQLCompiler, **kw: Any) -> str:
    return compiler.process(element.plain, **kw)


@compiles(IndexedContains, "sqlite")
def _on_sqlite(element: IndexedContains, compiler: SQLCompiler, **kw: Any) -> str:
    plain = compiler.process(element.plain, **kw)
    if not fts5_available():
        return plain
    table = compiler.preparer.format_table(element.table)
    pattern = compiler.process(element.pattern, **kw)
    candidates = f"SELECT id FROM {element.index} WHERE {element.index} MATCH {pattern}"
    return f"({plain} AND {table}.id IN ({candidates}))"
