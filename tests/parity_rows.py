"""Stored rows as the parity tests compare them: every table read with SQLAlchemy Core on an
engine of the test's own, each value with its Python type, and a row's own values (ids, instants,
secrets and what hashes them) reduced to their form."""

from __future__ import annotations

import json
import re
import uuid
from datetime import date, datetime
from typing import Any

import sqlalchemy as sa
from sqlmodel import SQLModel

from tests.parity_support import engine_on

Rows = dict[str, dict[tuple[Any, ...], dict[str, Any]]]  # table -> primary key -> row

# A row's own values: which record it is, when, its secrets and what hashes them. Two paths
# acting on twin records differ there by design; their presence and type are still compared.
OWN_COLUMNS = {
    "key_hash",
    "display_prefix",
    "secret",
    "previous_secret",
    "webhook_signing_secret",
    "pack_hash",
    "rerun_hash",
    "content_sha256",
    "size_bytes",
    "sequence",
    "audit_sequence",
    "request_id",
    "event_cursor",
    "duration_ms",
    "content",
    "webhook_id",
    "last_sequence",
}
# Recorded at most once a minute for the key a test calls with: whichever request came first.
IGNORED_COLUMNS = {"last_used_at"}
# The idempotency store keeps answers by request: what a replay reads, not a resource.
IGNORED_TABLES = {"idempotency_record"}
# Tables one database uses and the other leaves empty, by design: PostgreSQL's per-organisation
# event counter (SQLite needs none), and the artifacts' bytes, one BLOB on SQLite and slices on
# PostgreSQL (models/events.py, models/packs.py; the files' hashes are compared in their rows).
ONE_DATABASE_ONLY = {"event_counter", "artifact_content", "artifact_content_chunk"}
# Per-organisation aggregates (store/list_counts.py): a write moves them alike on either path, but
# an organisation's first row of a kind adds the count's row that a later one changes. Compared
# between the databases like any table; their exactness is tests/test_list_counts.py's.
AGGREGATES = {"list_count"}
TEXT_FORMS = [
    (re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"), "<uuid>"),
    (re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{6})?(Z|[+-]\d\d:\d\d)"), "<instant>"),
    (re.compile(r"\b[0-9a-f]{64}\b"), "<sha256>"),
    (re.compile(r"\b[0-9a-f]{32}\b"), "<hex32>"),
    (re.compile(r"\b(evk|whsec|msg)_[A-Za-z0-9+/=_-]+"), r"<\1>"),
    (re.compile(r"(expires|signature)=[^&\s\"]+"), r"\1=<signed>"),
]


async def stored(url: str) -> Rows:
    """Every row of every table by its primary key, as Core reads it through the models' column types."""
    found: Rows = {}
    async with engine_on(url) as engine, engine.connect() as conn:
        for table in SQLModel.metadata.sorted_tables:
            if table.name in IGNORED_TABLES:
                continue
            key = [c.name for c in table.primary_key.columns]
            rows = (await conn.execute(sa.select(table))).mappings()
            found[table.name] = {tuple(r[k] for k in key): dict(r) for r in rows}
    return found


def form(value: Any) -> Any:
    """What must be alike between two rows written alike: the value, or for an id, an instant or
    a secret its type and form (an instant: aware, its offset, whether it keeps microseconds)."""
    if value is None or isinstance(value, bool | int | float):
        return value
    if isinstance(value, uuid.UUID):
        return "<uuid>"
    if isinstance(value, datetime):
        offset = value.utcoffset()
        return f"<datetime utcoffset={offset} fraction={'yes' if value.microsecond else 'no'}>"
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, bytes | memoryview):
        return "<bytes>"
    if isinstance(value, dict):
        return {k: form(v) for k, v in value.items()}
    if isinstance(value, list):
        return [form(v) for v in value]
    if isinstance(value, str):
        for pattern, token in TEXT_FORMS:
            value = pattern.sub(token, value)
        return value
    return f"<{type(value).__name__} {value!r}>"


def comparable(row: dict[str, Any], unlike: frozenset[str] = frozenset()) -> dict[str, Any]:
    """One row as two paths must both have written it: each value with its Python type, own
    values reduced to their form; ``unlike``: columns the two paths fill differently by design."""
    kept = {}
    for column, value in row.items():
        if column in IGNORED_COLUMNS or column in unlike:
            continue
        shown = f"<{type(value).__name__}>" if column in OWN_COLUMNS and value is not None else form(value)
        kept[column] = [type(value).__name__, shown]
    return kept


def in_order(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(rows, key=lambda r: json.dumps(r, sort_keys=True))


def changed(before: Rows, after: Rows, unlike: frozenset[str]) -> dict[str, list[dict[str, Any]]]:
    """What a write did to each table: the rows it added, changed (from, to) and removed."""
    out: dict[str, list[dict[str, Any]]] = {}
    for table, rows in after.items():
        if table in AGGREGATES:
            continue
        old = before[table]
        found = [{"added": comparable(r, unlike)} for k, r in rows.items() if k not in old]
        found += [
            {"changed": comparable(old[k], unlike), "to": comparable(r, unlike)}
            for k, r in rows.items()
            if k in old and old[k] != r
        ]
        found += [{"removed": comparable(r, unlike)} for k, r in old.items() if k not in rows]
        if found:
            out[table] = in_order(found)
    return out
