"""Typed GraphQL views of values the API also answers as JSON (docs/graphql.md "Typed outputs").

Each view reads the same dict the deprecated ``...Json`` field returns (what the calculation,
the quality rules, the event log and the webhook sender stored), so a typed field and its JSON
twin can never disagree: there is no second rule, only a second shape.
"""

from __future__ import annotations

import enum
import uuid
from datetime import datetime
from typing import Any

import orjson
import strawberry

from evidence_gateway.core.events import EventType
from evidence_gateway.models import LegacyReportStatus
from evidence_gateway.schema.common import deprecated_since
from evidence_gateway.schema.enums import (
    ApprovalActionType,
    DistanceType,
    PackStatus,
    TransportMode,
    WorkspaceStatus,
    graphql_enum,
)

# The day the typed fields shipped and their JSON twins were deprecated.
TYPED_SINCE = "2026-11-26"


def json_deprecation(typed_field: str) -> str:
    return deprecated_since(TYPED_SINCE, f"use {typed_field}, the same values typed.")


graphql_enum(
    EventType,
    "EventType",
    "What happened, as resource.past_tense_verb (Event.type's value, docs/events.md).",
    {member: f"{member.value}." for member in EventType},
)


graphql_enum(
    LegacyReportStatus,
    "LegacyReportStatus",
    "State of a legacy v1 report.",
    {LegacyReportStatus.draft: "Not final when it was imported.", LegacyReportStatus.final: "Final (the default)."},
)


@strawberry.enum(description="The emission boundary a figure is reported on.")
class EmissionBoundary(enum.Enum):
    WTW = strawberry.enum_value("WTW", description="Well-to-wheel: fuel production plus operation.")
    TTW = strawberry.enum_value("TTW", description="Tank-to-wheel: operation of the vehicle only.")


@strawberry.enum(description="How much a triggered quality rule matters.")
class RuleSeverity(enum.Enum):
    INFO = strawberry.enum_value("info", description="Worth knowing; the figures stand.")
    WARNING = strawberry.enum_value("warning", description="Rows are implausible or estimated.")
    ERROR = strawberry.enum_value("error", description="Rows could not be used.")


@strawberry.enum(description="ISO 14083 data category of the rows counted.")
class DataCategory(enum.Enum):
    PRIMARY = strawberry.enum_value("primary", description="Primary data: the shipment's own fuel or energy.")
    SECONDARY_MODELLED = strawberry.enum_value(
        "secondary_modelled", description="Secondary data, modelled: a carrier-specific intensity."
    )
    SECONDARY_DEFAULT = strawberry.enum_value("secondary_default", description="Secondary data: mode defaults.")


@strawberry.enum(description="Why an event happened, where its data says (failures, supersession).")
class EventReason(enum.Enum):
    ERROR = strawberry.enum_value("error", description="The work raised an error.")
    INTERRUPTED = strawberry.enum_value("interrupted", description="The node doing the work stopped.")
    SUPERSEDED = strawberry.enum_value("superseded", description="A newer pack version archived this one.")


@strawberry.type(description="A calculation run's figures for one transport mode.")
class ModeTotals:
    mode: TransportMode = strawberry.field(description="Transport mode.")
    co2e_kg: float = strawberry.field(description="kg CO2e on the headline boundary.")
    co2e_ttw_kg: float | None = strawberry.field(description="Tank-to-wheel kg CO2e.")
    co2e_wtt_kg: float | None = strawberry.field(description="Well-to-tank kg CO2e.")
    co2e_wtw_kg: float | None = strawberry.field(description="Well-to-wheel kg CO2e.")
    tonne_km: float = strawberry.field(description="Tonne-km.")
    shipment_count: int = strawberry.field(description="Shipments counted.")
    intensity_ttw_g_per_tkm: float | None = strawberry.field(description="g CO2e TTW per tonne-km (null: no tkm).")
    intensity_wtw_g_per_tkm: float | None = strawberry.field(description="g CO2e WTW per tonne-km (null: no tkm).")


def mode_totals(raw: Any) -> list[ModeTotals]:
    return [
        ModeTotals(
            mode=TransportMode(mode),
            co2e_kg=v["co2e_kg"],
            co2e_ttw_kg=v.get("co2e_ttw_kg"),
            co2e_wtt_kg=v.get("co2e_wtt_kg"),
            co2e_wtw_kg=v.get("co2e_wtw_kg"),
            tonne_km=v["tonne_km"],
            shipment_count=v["shipment_count"],
            intensity_ttw_g_per_tkm=v.get("intensity_ttw_g_per_tkm"),
            intensity_wtw_g_per_tkm=v.get("intensity_wtw_g_per_tkm"),
        )
        for mode, v in raw.items()
    ]


@strawberry.type(description="Rows and emissions of one ISO 14083 data category.")
class DataCategoryFigures:
    category: DataCategory = strawberry.field(description="The category.")
    rows: int = strawberry.field(description="Usable rows in it.")
    co2e_ttw_kg: float = strawberry.field(description="Tank-to-wheel kg CO2e.")
    co2e_wtw_kg: float = strawberry.field(description="Well-to-wheel kg CO2e.")
    tonne_km: float = strawberry.field(description="Tonne-km.")


@strawberry.type(description="Rows and tonne-km of one distance type.")
class DistanceTypeFigures:
    distance_type: DistanceType = strawberry.field(description="How the distance was obtained.")
    rows: int = strawberry.field(description="Usable rows.")
    tonne_km: float = strawberry.field(description="Tonne-km.")


@strawberry.type(description="Share of primary data (iLEAP/PACT primaryDataShare).")
class PrimaryDataShare:
    by_emissions_wtw_percent: float = strawberry.field(description="By WTW emissions, 0-100.")
    by_rows_percent: float = strawberry.field(description="By usable rows, 0-100.")


@strawberry.type(description="Rows left out of the totals, estimated with default factors.")
class ExcludedFigures:
    rows: int = strawberry.field(description="Rows excluded.")
    estimated: bool = strawberry.field(description="False: nothing to estimate from (no usable rows).")
    tonne_km: float | None = strawberry.field(description="Estimated tonne-km (null when not estimated).")
    co2e_ttw_kg: float | None = strawberry.field(description="Estimated TTW kg CO2e.")
    co2e_wtw_kg: float | None = strawberry.field(description="Estimated WTW kg CO2e.")


@strawberry.type(description="How often a method note applied.")
class MethodNoteCount:
    note: str = strawberry.field(description="Note id (docs/methodology.md).")
    count: int = strawberry.field(description="Rows it applied to.")


@strawberry.type(description='A run\'s ISO 14083 summary (docs/methodology.md "ISO 14083 summary").')
class Iso14083Summary:
    headline_boundary: EmissionBoundary = strawberry.field(description="Boundary of the headline total.")
    data_categories: list[DataCategoryFigures] = strawberry.field(description="Per data category.")
    distance_types: list[DistanceTypeFigures] = strawberry.field(description="Per distance type.")
    primary_data_share: PrimaryDataShare = strawberry.field(description="Primary data share.")
    coverage_tonne_km_percent: float = strawberry.field(description="Included tonne-km over included plus excluded.")
    excluded: ExcludedFigures = strawberry.field(description="Rows excluded from the totals.")
    method_notes: list[MethodNoteCount] = strawberry.field(description="Method notes and their counts.")


def iso14083_summary(raw: Any) -> Iso14083Summary | None:
    if not raw:
        return None
    share, excluded = raw["primary_data_share"], raw["excluded"]
    return Iso14083Summary(
        headline_boundary=EmissionBoundary(raw["headline_boundary"]),
        data_categories=[
            DataCategoryFigures(
                category=DataCategory(c),
                rows=v["rows"],
                co2e_ttw_kg=v["co2e_ttw_kg"],
                co2e_wtw_kg=v["co2e_wtw_kg"],
                tonne_km=v["tonne_km"],
            )
            for c, v in raw["data_categories"].items()
        ],
        distance_types=[
            DistanceTypeFigures(distance_type=DistanceType(t), rows=v["rows"], tonne_km=v["tonne_km"])
            for t, v in raw["distance_types"].items()
        ],
        primary_data_share=PrimaryDataShare(
            by_emissions_wtw_percent=share["by_emissions_wtw_percent"], by_rows_percent=share["by_rows_percent"]
        ),
        coverage_tonne_km_percent=raw["coverage_tonne_km_percent"],
        excluded=ExcludedFigures(
            rows=excluded["rows"],
            estimated=excluded["estimated"],
            tonne_km=excluded["tonne_km"],
            co2e_ttw_kg=excluded["co2e_ttw_kg"],
            co2e_wtw_kg=excluded["co2e_wtw_kg"],
        ),
        method_notes=[MethodNoteCount(note=n, count=c) for n, c in raw["method_notes"].items()],
    )


@strawberry.type(description="A data quality rule that fired.")
class QualityRule:
    id: str = strawberry.field(description="Rule id, e.g. default_data_used (docs/methodology.md).")
    severity: RuleSeverity = strawberry.field(description="How much it matters.")
    count: int = strawberry.field(description="Rows it fired on.")
    message: str = strawberry.field(description="What it means, in words.")


def quality_rules(raw: Any) -> list[QualityRule]:
    return [
        QualityRule(id=r["id"], severity=RuleSeverity(r["severity"]), count=r["count"], message=r["message"])
        for r in raw
    ]


@strawberry.type(
    description="One key of a free-form object the caller gave (its shape is the caller's): the value as "
    "canonical JSON text, and typed when it is a string, number or boolean."
)
class MetadataEntry:
    key: str = strawberry.field(description="The key.")
    value_json: str = strawberry.field(description="The value as JSON text (objects and lists too).")
    text: str | None = strawberry.field(description="The value when it is a string.")
    number: float | None = strawberry.field(description="The value when it is a number.")
    boolean: bool | None = strawberry.field(description="The value when it is a boolean.")


def metadata_entries(raw: Any) -> list[MetadataEntry]:
    return [
        MetadataEntry(
            key=k,
            value_json=orjson.dumps(v).decode(),
            text=v if isinstance(v, str) else None,
            number=float(v) if isinstance(v, int | float) and not isinstance(v, bool) else None,
            boolean=v if isinstance(v, bool) else None,
        )
        for k, v in (raw or {}).items()
    ]


@strawberry.type(description="A workspace's status move.")
class WorkspaceStatusChange:
    before: WorkspaceStatus = strawberry.field(description="Status before.")
    after: WorkspaceStatus = strawberry.field(description="Status after.")


@strawberry.type(description="A pack's status move, by an approval action or by a newer version.")
class PackStatusChange:
    before: PackStatus = strawberry.field(description="Status before.")
    after: PackStatus = strawberry.field(description="Status after.")
    action_type: ApprovalActionType | None = strawberry.field(description="The approval action, when one moved it.")
    comment: str | None = strawberry.field(description="The approval action's comment.")


@strawberry.type(
    description='The typed part of an event\'s data that every type shares (docs/graphql.md "Typed outputs"): '
    "which resource it is about, its status move and the reason. The full resource as REST renders it stays "
    "in the deprecated data."
)
class EventData:
    resource_id: uuid.UUID | None = strawberry.field(description="Id of the resource rendered in data.")
    workspace_status_change: WorkspaceStatusChange | None = strawberry.field(
        description="Set on workspace.status_changed."
    )
    pack_status_change: PackStatusChange | None = strawberry.field(
        description="Set on pack.status_changed and pack.failed."
    )
    reason: EventReason | None = strawberry.field(description="Why, on calculation.failed, pack.failed, superseding.")
    error: str | None = strawberry.field(description="The error message of a failure, where data has it.")
    test: bool = strawberry.field(description="True for a test webhook's data (testWebhook).")


def _uuid(value: Any) -> uuid.UUID | None:
    try:
        return uuid.UUID(str(value)) if value is not None else None
    except ValueError:
        return None


def event_data(event_type: str, raw: Any) -> EventData:
    before, after = raw.get("status_before"), raw.get("status_after")
    moved = before is not None and after is not None
    reason = raw.get("reason")
    return EventData(
        resource_id=_uuid(raw.get("id")),
        workspace_status_change=WorkspaceStatusChange(before=WorkspaceStatus(before), after=WorkspaceStatus(after))
        if moved and event_type.startswith("workspace.")
        else None,
        pack_status_change=PackStatusChange(
            before=PackStatus(before),
            after=PackStatus(after),
            action_type=ApprovalActionType(raw["action_type"]) if raw.get("action_type") else None,
            comment=raw.get("comment"),
        )
        if moved and event_type.startswith("pack.")
        else None,
        reason=EventReason(reason) if reason in {r.value for r in EventReason} else None,
        error=raw.get("error") or raw.get("error_message"),
        test=raw.get("test") is True,
    )


@strawberry.type(description="A webhook's body as sent, typed: {type, timestamp, data} and the event's envelope.")
class WebhookPayload:
    type: str = strawberry.field(description="The event type as sent (a test may send any).")
    kind: EventType | None = strawberry.field(description="The event type, when it is one of the catalogue's.")
    timestamp: datetime = strawberry.field(description="When the event happened (a test: when it was sent).")
    event_id: uuid.UUID | None = strawberry.field(description="The event's id (null for a test).")
    sequence: int | None = strawberry.field(description="The event's position in the log (null for a test).")
    subject_type: str | None = strawberry.field(description="Kind of resource (null for a test).")
    subject_id: uuid.UUID | None = strawberry.field(description="Id of that resource (null for a test).")
    workspace_id: uuid.UUID | None = strawberry.field(description="Workspace the payload concerns, if any.")
    data: EventData = strawberry.field(description="The typed part of the payload's data.")


EVENT_TYPES = frozenset(t.value for t in EventType)


def webhook_payload(raw: Any) -> WebhookPayload:
    data = raw.get("data") or {}
    sequence = raw.get("sequence")
    return WebhookPayload(
        type=str(raw["type"]),
        kind=EventType(raw["type"]) if raw["type"] in EVENT_TYPES else None,
        timestamp=datetime.fromisoformat(str(raw.get("timestamp") or raw["occurred_at"]).replace("Z", "+00:00")),
        event_id=_uuid(raw.get("id")),
        sequence=sequence if isinstance(sequence, int) else None,
        subject_type=raw.get("subject_type"),
        subject_id=_uuid(raw.get("subject_id")),
        workspace_id=_uuid(raw.get("workspace_id") or data.get("workspace_id")),
        data=event_data(str(raw["type"]), data),
    )
