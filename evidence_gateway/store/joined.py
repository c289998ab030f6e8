"""One row and the rows it points to, read in one statement and split back into records.

A detail view (a workspace with its latest run, assessment and pack; a pack with its run and
assessment) used to be a read per record: a round trip each on PostgreSQL, a hop each on
SQLite. Here the base row and its targets come back as one row of outer joins, every side
scoped to the caller's organisation, and are split into one record per table, read by attribute
like entities (the read models and GraphQL types take either).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import ColumnElement, Row, Select, Table, and_, select

from evidence_gateway.core.scoping import owned
from evidence_gateway.store.records import record_type


class Joined:
    def __init__(self, base: Table, *targets: tuple[Table, ColumnElement[bool]], where: ColumnElement[bool]) -> None:
        self.tables = (base, *(table for table, _on in targets))
        joins: Any = base
        for table, on in targets:
            joins = joins.outerjoin(table, and_(on, owned(table)))
        self.statement: Select[Any] = (
            select(*(c.label(f"{t.name}__{c.key}") for t in self.tables for c in t.c))
            .select_from(joins)
            .where(where, owned(base))
        )
        self._records: list[Any] = [record_type(t) for t in self.tables]
        self._ids = [list(t.c.keys()).index("id") for t in self.tables]

    def split(self, row: Row[Any]) -> list[Any]:
        """One record per table, in the order given; None for a target the join did not find."""
        out, at = [], 0
        for table, record, id_at in zip(self.tables, self._records, self._ids, strict=True):
            width = len(table.c)
            values = tuple(row[at : at + width])
            out.append(None if values[id_at] is None else record._make(values))
            at += width
        return out
