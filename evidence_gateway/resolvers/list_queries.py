"""Filters and orderings of the lists: one declaration per resource, read by both transports.

Each list declares what it can be filtered by and ordered by (``ListSpec``). GraphQL builds its
``filter:`` and ``orderBy:`` input types from the declaration (schema/list_inputs.py) and REST
reads ``filter[...]`` and ``sort`` query parameters against it (rest_compat/list_params.py);
both hand a plain mapping to ``parse_list_query`` here, so a filter means the same on either
transport and an unknown field is refused in one place with the same words.

A filter only narrows: the repository scopes every statement to the caller's organisation
first (store/list_filters.py adds these conditions after that scope). Every ordering ends with
the row id, so rows sharing a key (two workspaces named alike) still have one place in the
list and a cursor or a page boundary never splits or repeats them. Orderings are offered only
on columns that a (organisation, key, id) index serves (migration 0017_list_indexes).
"""

from __future__ import annotations

import enum
import uuid
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from evidence_gateway.core.events import EventType
from evidence_gateway.errors import InvalidInput
from evidence_gateway.models import (
    EvidenceType,
    LegacyReportStatus,
    PackStatus,
    RunStatus,
    VerificationStatus,
    WorkspaceStatus,
)
from evidence_gateway.resolvers.list_types import (
    Condition,
    Direction,
    Filterable,
    FilterKind,
    KeyKind,
    ListQuery,
    ListSpec,
    Orderable,
    Ordering,
)
from evidence_gateway.resolvers.validation import canonical_uuid

# Long enough for any name or title; a bound so a filter cannot carry a megabyte of pattern.
MAX_CONTAINS = 200
MAX_VALUES = 20
RANGE_BOUNDS = ("gte", "lt")


def _values(e: type[enum.Enum]) -> tuple[str, ...]:
    return tuple(str(v.value) for v in e)


def _status(column: str, e: type[enum.Enum], what: str) -> Filterable:
    return Filterable(column, column, FilterKind.ONE_OF, f"Only {what} in one of these states.", _values(e), e)


def _range(name: str, what: str) -> Filterable:
    return Filterable(
        name, name, FilterKind.RANGE, f"Only rows {what} in this range (gte inclusive, lt exclusive, UTC or offset)."
    )


def _time_order(name: str, what: str) -> Orderable:
    return Orderable(name, name, KeyKind.TIME, f"By {what}, then id.")


_WORKSPACE_ID = Filterable(
    "workspace_id", "workspace_id", FilterKind.EQUALS_ID, "Only the rows of this workspace (none if not yours)."
)

WORKSPACES = ListSpec(
    resource="workspace",
    type_name="Workspace",
    filters=(
        _status("status", WorkspaceStatus, "workspaces"),
        _range("created_at", "created"),
        _range("updated_at", "last changed"),
        Filterable(
            "name_contains", "name", FilterKind.CONTAINS, f"Name contains this text, any case (1–{MAX_CONTAINS})."
        ),
    ),
    orderings=(
        _time_order("created_at", "creation time"),
        _time_order("updated_at", "time of the last change"),
        Orderable(
            "name",
            "name",
            KeyKind.TEXT,
            "By name in the database's text order (SQLite: binary; PostgreSQL: its collation), then id.",
        ),
    ),
    default=("created_at", Direction.desc),
)

PACKS = ListSpec(
    resource="pack",
    type_name="ReportPack",
    filters=(
        _status("status", PackStatus, "packs"),
        _WORKSPACE_ID,
        _range("created_at", "generated"),
        Filterable(
            "title_contains", "title", FilterKind.CONTAINS, f"Title contains this text, any case (1–{MAX_CONTAINS})."
        ),
    ),
    orderings=(_time_order("created_at", "generation time"),),
    default=("created_at", Direction.desc),
)

CALCULATION_RUNS = ListSpec(
    resource="run",
    type_name="CalculationRun",
    filters=(_status("status", RunStatus, "runs"), _WORKSPACE_ID, _range("created_at", "started")),
    orderings=(_time_order("created_at", "start time"),),
    default=("created_at", Direction.desc),
)

EVIDENCE_ITEMS = ListSpec(
    resource="evidence_item",
    type_name="EvidenceItem",
    filters=(
        _status("verification_status", VerificationStatus, "items"),
        Filterable(
            "evidence_type",
            "evidence_type",
            FilterKind.ONE_OF,
            "Only items of one of these types.",
            _values(EvidenceType),
            EvidenceType,
        ),
        _range("uploaded_at", "uploaded"),
        Filterable(
            "title_contains", "title", FilterKind.CONTAINS, f"Title contains this text, any case (1–{MAX_CONTAINS})."
        ),
    ),
    orderings=(
        _time_order("uploaded_at", "upload time"),
        Orderable(
            "title",
            "title",
            KeyKind.TEXT,
            "By title in the database's text order (SQLite: binary; PostgreSQL: its collation), then id.",
        ),
    ),
    default=("uploaded_at", Direction.desc),
)

EVENTS = ListSpec(
    resource="event",
    type_name="Event",
    filters=(
        Filterable(
            "type", "type", FilterKind.ONE_OF, "Only events of one of these types (docs/events.md).", _values(EventType)
        ),
        _WORKSPACE_ID,
        _range("occurred_at", "that occurred"),
    ),
    orderings=(Orderable("sequence", "sequence", KeyKind.WHOLE, "By log position (commit order)."),),
    default=("sequence", Direction.asc),
)


_CREATED_ORDER = (_time_order("created_at", "creation time"),)

WEBHOOK_ENDPOINTS = ListSpec(
    resource="webhook_endpoint",
    type_name="WebhookEndpoint",
    filters=(
        Filterable("enabled", "enabled", FilterKind.FLAG, "Only endpoints that are (true) or are not (false) enabled."),
        Filterable("url_contains", "url", FilterKind.CONTAINS, f"URL contains this text, any case (1–{MAX_CONTAINS})."),
        _range("created_at", "registered"),
    ),
    orderings=_CREATED_ORDER,
    default=("created_at", Direction.desc),
)

WEBHOOK_DELIVERIES = ListSpec(
    resource="webhook_delivery",
    type_name="WebhookDelivery",
    filters=(
        Filterable(
            "delivered", "delivered", FilterKind.FLAG, "Only attempts the receiver accepted (true) or not (false)."
        ),
        Filterable(
            "event_type",
            "event_type",
            FilterKind.ONE_OF,
            "Only attempts carrying one of these event types (docs/events.md; pack.published: the webhook "
            "test's default).",
            (*_values(EventType), "pack.published"),
        ),
        Filterable(
            "endpoint_id",
            "endpoint_id",
            FilterKind.EQUALS_ID,
            "Only the attempts to this endpoint (none if not yours, or without an admin key).",
        ),
        _range("created_at", "attempted"),
    ),
    orderings=(_time_order("created_at", "attempt time"),),
    default=("created_at", Direction.desc),
)

LEGACY_REPORTS = ListSpec(
    resource="legacy_report",
    type_name="LegacyReport",
    filters=(
        _status("status", LegacyReportStatus, "reports"),
        Filterable(
            "title_contains", "title", FilterKind.CONTAINS, f"Title contains this text, any case (1–{MAX_CONTAINS})."
        ),
        _range("created_at", "created"),
    ),
    orderings=_CREATED_ORDER,
    default=("created_at", Direction.desc),
)

IMPORT_BATCHES = ListSpec(
    resource="import_batch",
    type_name="ImportBatch",
    filters=(
        Filterable(
            "source_filename_contains",
            "source_filename",
            FilterKind.CONTAINS,
            f"Source file name contains this text, any case (1–{MAX_CONTAINS}).",
        ),
        _range("created_at", "registered"),
    ),
    orderings=(_time_order("created_at", "registration time"),),
    default=("created_at", Direction.desc),
)


def _flag(raw: Any) -> bool | str:
    if isinstance(raw, bool):
        return raw
    if isinstance(raw, str) and raw.lower() in ("true", "false"):
        return raw.lower() == "true"
    return "must be true or false"


def _one_of(spec: Filterable, raw: Any) -> tuple[str, ...] | str:
    given = [v for v in raw.split(",") if v] if isinstance(raw, str) else raw
    if not isinstance(given, Sequence) or isinstance(given, str | bytes) or not given:
        return "give one or more values"
    if len(given) > MAX_VALUES:
        return f"at most {MAX_VALUES} values"
    values = [str(v.value) if isinstance(v, enum.Enum) else v for v in given]
    unknown = sorted({str(v) for v in values if v not in spec.values})
    if unknown:
        return f"unknown value(s) {', '.join(unknown)}; one of: {', '.join(spec.values)}"
    return tuple(dict.fromkeys(str(v) for v in values))


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _instant(raw: Any) -> datetime | str:
    if isinstance(raw, datetime):
        value = raw
    elif isinstance(raw, str):
        try:
            value = datetime.fromisoformat(raw)
        except ValueError:
            return "must be an ISO 8601 date-time with an offset (2025-01-31T00:00:00Z)"
    else:
        return "must be an ISO 8601 date-time with an offset (2025-01-31T00:00:00Z)"
    if value.tzinfo is None:
        return "must carry an offset (Z or +01:00)"
    try:
        return value.astimezone(UTC)
    except OverflowError:  # 0001-01-01T00:00:00+01:00 is before the first instant there is
        return "out of range"


def _filter(spec: Filterable, raw: Any, where: str, fields: dict[str, str]) -> list[Condition]:
    if spec.kind is FilterKind.ONE_OF:
        values = _one_of(spec, raw)
        if isinstance(values, str):
            fields[where] = values
            return []
        return [Condition(spec.column, "in", values)]
    if spec.kind is FilterKind.CONTAINS:
        if not isinstance(raw, str) or not 1 <= len(raw) <= MAX_CONTAINS:
            fields[where] = f"must be text of 1 to {MAX_CONTAINS} characters"
            return []
        if "\x00" in raw or not _encodable(raw):
            # Neither database stores NUL or a lone surrogate, so no row can match; refused as
            # every other input refuses them, rather than failing in the driver.
            fields[where] = "must not contain NUL or unpaired surrogates"
            return []
        return [Condition(spec.column, "contains", raw)]
    if spec.kind is FilterKind.FLAG:
        flag = _flag(raw)
        if isinstance(flag, str):
            fields[where] = flag
            return []
        return [Condition(spec.column, "eq", flag)]
    if spec.kind is FilterKind.EQUALS_ID:
        try:
            wid = raw if isinstance(raw, uuid.UUID) else canonical_uuid(raw)
        except (ValueError, TypeError):
            fields[where] = "must be a uuid"
            return []
        return [Condition(spec.column, "eq", wid)]
    # RANGE: {"gte": ..., "lt": ...}, either or both.
    if not isinstance(raw, Mapping):
        fields[where] = "give gte and/or lt"
        return []
    found: list[Condition] = []
    for bound, value in raw.items():
        if bound not in RANGE_BOUNDS:
            fields[f"{where}[{bound}]"] = "unknown bound; gte or lt"
            continue
        if value is None:
            continue
        instant = _instant(value)
        if isinstance(instant, str):
            fields[f"{where}[{bound}]"] = instant
        else:
            found.append(Condition(spec.column, bound, instant))
    return found


def parse_list_query(spec: ListSpec, filters: Mapping[str, Any] | None, order: Any = None) -> ListQuery:
    """Validate a list's filters (``{name: value}``; None values are absent) and ordering
    (``(field, direction)`` or None) against its declaration; every problem at once, as
    InvalidInput naming ``filter[field]`` or ``sort`` (REST 422, GraphQL BAD_USER_INPUT)."""
    fields: dict[str, str] = {}
    conditions: list[Condition] = []
    for name, raw in (filters or {}).items():
        if raw is None:
            continue
        where = f"filter[{name}]"
        declared = spec.filter_named(name)
        if declared is None:
            known = ", ".join(f.name for f in spec.filters)
            fields[where] = f"unknown filter field; one of: {known}"
            continue
        conditions.extend(_filter(declared, raw, where, fields))
    ordering = None
    if order is not None:
        name, direction = order
        declared_order = spec.ordering_named(str(name))
        if declared_order is None:
            fields["sort"] = f"unknown order field {name}; one of: {', '.join(o.name for o in spec.orderings)}"
        else:
            chosen = Direction(str(getattr(direction, "value", direction)).lower())
            ordering = Ordering(
                declared_order.column,
                declared_order.key,
                chosen,
                (declared_order.name, chosen) == spec.default,
                declared_order.name,
            )
    if fields:
        raise InvalidInput(fields=fields)
    return ListQuery(spec, tuple(conditions), ordering)


__all__ = [
    "CALCULATION_RUNS",
    "EVENTS",
    "EVIDENCE_ITEMS",
    "IMPORT_BATCHES",
    "LEGACY_REPORTS",
    "PACKS",
    "WEBHOOK_DELIVERIES",
    "WEBHOOK_ENDPOINTS",
    "WORKSPACES",
    "Condition",
    "Direction",
    "FilterKind",
    "Filterable",
    "KeyKind",
    "ListQuery",
    "ListSpec",
    "Orderable",
    "Ordering",
    "parse_list_query",
]
