"""Typed hub operations of a run (ISO 14083 hubs), read from the same stored ``hubs_json``."""

from __future__ import annotations

from typing import Any

import strawberry

from evidence_gateway.models.hubs import HubType, TemperatureControl
from evidence_gateway.schema import enums as _enums  # noqa: F401  (registers HubType, TemperatureControl)


@strawberry.type(description="Energy a hub used, allocated to this workspace's freight (measured hubs).")
class HubEnergy:
    fuel: str = strawberry.field(description="Fuel or energy carrier (REST fuel_type names; electricity in kWh).")
    amount: float = strawberry.field(description="Amount allocated, in the fuel's unit.")


@strawberry.type(description="One hub row's result: its basis, allocation and emissions.")
class HubOperation:
    hub_id: str = strawberry.field(description="The hub row's id.")
    row_index: int = strawberry.field(description="Position of the hub row in its import.")
    external_id: str | None = strawberry.field(description="Shipment whose chain passes the hub.")
    name: str | None = strawberry.field(description="Hub name.")
    hub_type: HubType = strawberry.field(description="GLEC logistics-site category.")
    temperature_control: TemperatureControl = strawberry.field(description="Temperature control.")
    throughput_tonnes: float = strawberry.field(description="Tonnes of this workspace's freight handled.")
    basis: str = strawberry.field(description="measured, default (GLEC v3 default intensity) or none.")
    included: bool = strawberry.field(description="Counted in the hub totals (false: no energy and no default).")
    flags: list[str] = strawberry.field(description='Method notes (docs/methodology.md "Hubs").')
    allocation_share: float | None = strawberry.field(description="Share of the hub's energy allocated by tonnes.")
    energy: list[HubEnergy] = strawberry.field(description="Measured energy allocated (empty otherwise).")
    default_intensity_wtw_kg_per_t: float | None = strawberry.field(description="The default used, kg WTW/t.")
    co2e_ttw_kg: float | None = strawberry.field(description="Tank-to-wheel kg CO2e.")
    co2e_wtt_kg: float | None = strawberry.field(description="Well-to-tank kg CO2e.")
    co2e_wtw_kg: float | None = strawberry.field(description="Well-to-wheel kg CO2e.")


@strawberry.type(description="A run's hub operations (ISO 14083 HOCs) and their sums.")
class HubOperations:
    rows: int = strawberry.field(description="Hub rows imported.")
    included_rows: int = strawberry.field(description="Hub rows calculated.")
    throughput_tonnes: float = strawberry.field(description="Tonnes handled by the calculated hubs.")
    co2e_ttw_kg: float = strawberry.field(description="Tank-to-wheel kg CO2e of the calculated hubs.")
    co2e_wtt_kg: float = strawberry.field(description="Well-to-tank kg CO2e of the calculated hubs.")
    co2e_wtw_kg: float = strawberry.field(description="Well-to-wheel kg CO2e of the calculated hubs.")
    default_source: str | None = strawberry.field(description="Source of the default intensities, if one was used.")
    items: list[HubOperation] = strawberry.field(description="One result per hub row, in import order.")


def _operation(item: dict[str, Any]) -> HubOperation:
    return HubOperation(
        hub_id=item["hub_id"],
        row_index=item["row_index"],
        external_id=item.get("external_id"),
        name=item.get("name"),
        hub_type=HubType(item["hub_type"]),
        temperature_control=TemperatureControl(item["temperature_control"]),
        throughput_tonnes=item["throughput_tonnes"],
        basis=item["basis"],
        included=item["included"],
        flags=list(item.get("flags") or []),
        allocation_share=item.get("allocation_share"),
        energy=[HubEnergy(fuel=e["fuel"], amount=e["amount"]) for e in item.get("energy") or []],
        default_intensity_wtw_kg_per_t=item.get("default_intensity_wtw_kg_per_t"),
        co2e_ttw_kg=item.get("co2e_ttw_kg"),
        co2e_wtt_kg=item.get("co2e_wtt_kg"),
        co2e_wtw_kg=item.get("co2e_wtw_kg"),
    )


def hub_operations(raw: Any) -> HubOperations | None:
    """The typed twin of ``hubsJson``: null without hub rows, as the stored value is."""
    if raw is None:
        return None
    return HubOperations(
        rows=raw["rows"],
        included_rows=raw["included_rows"],
        throughput_tonnes=raw["throughput_tonnes"],
        co2e_ttw_kg=raw["co2e_ttw_kg"],
        co2e_wtt_kg=raw["co2e_wtt_kg"],
        co2e_wtw_kg=raw["co2e_wtw_kg"],
        default_source=raw.get("default_source"),
        items=[_operation(i) for i in raw["items"]],
    )
