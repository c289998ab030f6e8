"""GraphQL ``filter:`` and ``orderBy:`` input types, built from the list declarations.

Each list's ``<Type>Filter`` input has one field per declared filter (resolvers/list_queries.py)
and its ``<Type>Order`` input names one of the declared orderings and a direction, so GraphQL
offers exactly what REST's ``filter[...]``/``sort`` offer and both are checked by the same
``parse_list_query``. A field the input does not declare is refused by GraphQL validation
itself; a value the type cannot check (an unknown event type) by the resolver, BAD_USER_INPUT
naming ``filter[field]``.
"""

from __future__ import annotations

import enum
import uuid
from datetime import datetime
from typing import TYPE_CHECKING, Any, TypeAlias

import strawberry

from evidence_gateway.resolvers.list_queries import (
    CALCULATION_RUNS,
    EVENTS,
    EVIDENCE_ITEMS,
    IMPORT_BATCHES,
    LEGACY_REPORTS,
    PACKS,
    WEBHOOK_DELIVERIES,
    WEBHOOK_ENDPOINTS,
    WORKSPACES,
    FilterKind,
    ListSpec,
)
from evidence_gateway.schema import enums as _enums  # noqa: F401  (describes the model enums first)
from evidence_gateway.schema import outputs as _outputs  # noqa: F401  (and LegacyReportStatus)
from evidence_gateway.schema.convert import input_to_dict


@strawberry.enum(description="Which way an ordering runs; the id breaks ties in the same direction.")
class OrderDirection(enum.Enum):
    asc = strawberry.enum_value("asc", description="Smallest first: oldest, A to Z, lowest position.")
    desc = strawberry.enum_value("desc", description="Largest first: newest, Z to A, highest position.")


@strawberry.input(description="A date-time range (REST: filter[field][gte] and filter[field][lt]); either or both.")
class DateTimeRange:
    gte: datetime | None = strawberry.field(default=None, description="At or after this instant (inclusive).")
    lt: datetime | None = strawberry.field(default=None, description="Before this instant (exclusive).")


def _filter_type(spec: ListSpec) -> Any:
    if not spec.filters:
        raise ValueError(spec.type_name)
    annotations: dict[str, Any] = {}
    namespace: dict[str, Any] = {}
    for declared in spec.filters:
        kind: Any
        if declared.kind is FilterKind.ONE_OF:
            kind = list[declared.enum] if declared.enum is not None else list[str]  # type: ignore[name-defined]
        elif declared.kind is FilterKind.RANGE:
            kind = DateTimeRange
        elif declared.kind is FilterKind.CONTAINS:
            kind = str
        elif declared.kind is FilterKind.FLAG:
            kind = bool
        else:
            kind = uuid.UUID
        annotations[declared.name] = kind | None
        namespace[declared.name] = strawberry.field(default=None, description=declared.description)
    name = f"{spec.type_name}Filter"
    cls = type(name, (), {"__annotations__": annotations, "__module__": __name__, **namespace})
    return strawberry.input(
        cls,
        name=name,
        description="Only the rows matching every given field (REST: filter[field] query parameters); "
        "never rows of another organisation.",
    )


def _order_type(spec: ListSpec) -> Any:
    make_enum: Any = enum.Enum  # the functional API, with a name known only here
    members = make_enum(
        f"{spec.type_name}OrderField",
        {o.name: strawberry.enum_value(o.name, description=o.description) for o in spec.orderings},
        module=__name__,
    )
    field_enum = strawberry.enum(members, description=f"The keys {spec.type_name} lists can be ordered by.")
    default, direction = spec.default
    name = f"{spec.type_name}Order"
    cls = type(
        name,
        (),
        {
            "__annotations__": {"field": field_enum, "direction": OrderDirection},
            "__module__": __name__,
            "field": strawberry.field(description="The key (REST: sort=field, or sort=-field for DESC)."),
            "direction": strawberry.field(description="ASC or DESC."),
        },
    )
    return strawberry.input(
        cls,
        name=name,
        description=f"A list order; without one: {default} {direction.value.upper()}. Cursors are "
        "valid in the order that made them only.",
    )


if TYPE_CHECKING:  # built at import from the declarations; type checkers see inputs of any shape
    WorkspaceFilter: TypeAlias = Any
    WorkspaceOrder: TypeAlias = Any
    ReportPackFilter: TypeAlias = Any
    ReportPackOrder: TypeAlias = Any
    CalculationRunFilter: TypeAlias = Any
    CalculationRunOrder: TypeAlias = Any
    EvidenceItemFilter: TypeAlias = Any
    EvidenceItemOrder: TypeAlias = Any
    EventFilter: TypeAlias = Any
    EventOrder: TypeAlias = Any
    WebhookEndpointFilter: TypeAlias = Any
    WebhookEndpointOrder: TypeAlias = Any
    WebhookDeliveryFilter: TypeAlias = Any
    WebhookDeliveryOrder: TypeAlias = Any
    LegacyReportFilter: TypeAlias = Any
    LegacyReportOrder: TypeAlias = Any
    ImportBatchFilter: TypeAlias = Any
    ImportBatchOrder: TypeAlias = Any
else:
    WorkspaceFilter = _filter_type(WORKSPACES)
    WorkspaceOrder = _order_type(WORKSPACES)
    ReportPackFilter = _filter_type(PACKS)
    ReportPackOrder = _order_type(PACKS)
    CalculationRunFilter = _filter_type(CALCULATION_RUNS)
    CalculationRunOrder = _order_type(CALCULATION_RUNS)
    EvidenceItemFilter = _filter_type(EVIDENCE_ITEMS)
    EvidenceItemOrder = _order_type(EVIDENCE_ITEMS)
    EventFilter = _filter_type(EVENTS)
    EventOrder = _order_type(EVENTS)
    WebhookEndpointFilter = _filter_type(WEBHOOK_ENDPOINTS)
    WebhookEndpointOrder = _order_type(WEBHOOK_ENDPOINTS)
    WebhookDeliveryFilter = _filter_type(WEBHOOK_DELIVERIES)
    WebhookDeliveryOrder = _order_type(WEBHOOK_DELIVERIES)
    LegacyReportFilter = _filter_type(LEGACY_REPORTS)
    LegacyReportOrder = _order_type(LEGACY_REPORTS)
    ImportBatchFilter = _filter_type(IMPORT_BATCHES)
    ImportBatchOrder = _order_type(IMPORT_BATCHES)

FILTER_HELP = "Only rows matching every given field; null: all of the caller's."
ORDER_HELP = "The order of the list (and of its cursors); null: the list's own."


def filters_of(value: Any) -> dict[str, Any] | None:
    """A ``filter:`` argument as the mapping the declarations validate (None: not given)."""
    if value is None:
        return None
    found: dict[str, Any] = input_to_dict(value)
    return found


def order_of(value: Any) -> tuple[str, str] | None:
    """An ``orderBy:`` argument as ``(field, direction)`` (None: the list's own order)."""
    if value is None:
        return None
    return str(value.field.value), str(value.direction.value)
