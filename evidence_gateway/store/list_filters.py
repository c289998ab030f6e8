"""A validated list query (resolvers/list_queries.py) as SQL: its conditions and its keyset order.

The conditions are added after the organisation scope the repository always applies, so a
filter narrows the caller's rows and nothing else. An ordering is its key column, then the id
in the same direction (one row-value comparison per cursor, one index range: the
(organisation, key, id) indexes of migration 0017_list_indexes); a whole-number key is unique
in its scope already (the event log's sequence) and needs no id.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import ColumnElement, Table

from evidence_gateway.resolvers.list_queries import KeyKind, ListQuery
from evidence_gateway.resolvers.validation import canonical_uuid
from evidence_gateway.store import sqlite_text_search
from evidence_gateway.store.keyset import Order, aware_key, text_key, whole_key


def conditions(table: Table, query: ListQuery | None) -> list[ColumnElement[bool]]:
    """The query's filters on ``table``'s columns (none for no query)."""
    found: list[ColumnElement[bool]] = []
    for c in query.conditions if query is not None else ():
        column = table.c[c.column]
        if c.op == "in":
            found.append(column.in_(list(c.value)))
        elif c.op == "gte":
            found.append(column >= c.value)
        elif c.op == "lt":
            found.append(column < c.value)
        elif c.op == "eq":
            found.append(column == c.value)
        elif c.op == "contains":
            # PostgreSQL: column ILIKE '%' || :value || '%' (served by pg_trgm's indexes,
            # store/text_search.py); SQLite: lower(column) LIKE lower(...), narrowed by the FTS5
            # trigram index where there is one (store/sqlite_text_search.py); % and _ escaped: the
            # same case-insensitive match on SQLite and PostgreSQL.
            plain = column.icontains(c.value, autoescape=True)
            found.append(sqlite_text_search.contains(table, c.column, c.value, plain))
        else:  # pragma: no cover - the declaration has no other op
            raise ValueError(c.op)
    return found


_PARSERS: dict[KeyKind, Any] = {KeyKind.TIME: aware_key, KeyKind.TEXT: text_key, KeyKind.WHOLE: whole_key}


def order_of(table: Table, query: ListQuery | None, default: Order) -> Order:
    """The keyset order the query asks for; ``default`` (the list's own, whose cursors clients
    hold) when it asks for none or for that one."""
    if query is None or query.ordering is None or query.ordering.is_default:
        return default
    ordering = query.ordering
    key = table.c[ordering.column]
    descending = ordering.direction.value == "desc"
    if ordering.key is KeyKind.WHOLE:
        return Order(query.cursor_kind, (key,), (whole_key,), descending=descending)
    return Order(query.cursor_kind, (key, table.c.id), (_PARSERS[ordering.key], canonical_uuid), descending=descending)
