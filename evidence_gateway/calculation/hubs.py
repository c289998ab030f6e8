"""Hub operations (ISO 14083 hub operation categories): emissions of the freight a hub handled.

A hub row gives the hub type, the tonnes of this workspace's freight it handled and either the
energy the hub used (fuel and/or electricity; when the figures are for the whole hub, its total
throughput allocates them by tonnes) or nothing, in which case the GLEC Framework v3 default
intensity of the hub type applies. Decimal arithmetic, 6 places, as the transport engine.

Default intensities (``DEFAULT_INTENSITIES``) are well-to-wheel kg CO2e per tonne handled; the
source publishes no tank-to-wheel split, so TTW is reported at the WTW value (a conservative upper
bound, flagged ``ttw_not_published``). A hub type without a default and without measured energy
is not calculated and is flagged (``no_default_intensity``).
"""

from __future__ import annotations

from collections.abc import Iterable
from decimal import Decimal
from typing import Any, NamedTuple

from evidence_gateway.calculation.records import ZERO, FactorSet, dec, num, q6

DEFAULT_SOURCE = (
    "GLEC Framework v3 (Smart Freight Centre, 2023), default emission intensities of logistics sites, "
    "kg CO2e WTW per tonne handled"
)
D = Decimal
# (hub type, temperature control) -> kg CO2e WTW per tonne. "refrigerated" takes the source's
# temperature-controlled value where it has one, else its mixed value.
DEFAULT_INTENSITIES: dict[tuple[str, str], Decimal] = {
    ("transshipment", "ambient"): D("0.6"),
    ("transshipment", "mixed"): D("2.2"),
    ("storage_and_transshipment", "ambient"): D("2.1"),
    ("storage_and_transshipment", "mixed"): D("4.0"),
    ("warehouse", "ambient"): D("17.5"),
    ("warehouse", "mixed"): D("33.0"),
    ("liquid_bulk_terminal", "ambient"): D("3.1"),
    ("liquid_bulk_terminal", "mixed"): D("8.1"),
    ("maritime_container_terminal", "ambient"): D("10.7"),
    ("maritime_container_terminal", "refrigerated"): D("12.6"),
}


class HubInput(NamedTuple):
    id: Any
    row_index: int
    external_id: str | None
    name: str | None
    hub_type: str
    temperature_control: str
    throughput_tonnes: float
    fuel_type: str | None
    fuel_amount: float | None
    electricity_kwh: float | None
    hub_total_throughput_tonnes: float | None
    electricity_country: str | None


def default_intensity(hub_type: str, temperature: str) -> Decimal | None:
    found = DEFAULT_INTENSITIES.get((hub_type, temperature))
    if found is None and temperature == "refrigerated":
        found = DEFAULT_INTENSITIES.get((hub_type, "mixed"))
    if found is None and temperature == "mixed":
        found = DEFAULT_INTENSITIES.get((hub_type, "refrigerated"))
    return found


def _hub(h: HubInput, factors: FactorSet) -> dict[str, Any]:
    tonnes = dec(h.throughput_tonnes)
    item: dict[str, Any] = {
        "hub_id": str(h.id), "row_index": h.row_index, "external_id": h.external_id, "name": h.name,
        "hub_type": h.hub_type, "temperature_control": h.temperature_control, "throughput_tonnes": num(tonnes),
    }  # fmt: skip
    energy: list[tuple[str, Decimal]] = []
    if h.fuel_type is not None and h.fuel_amount is not None:
        energy.append((h.fuel_type, dec(h.fuel_amount)))
    if h.electricity_kwh is not None:
        energy.append(("electricity", dec(h.electricity_kwh)))
    if energy:
        total = h.hub_total_throughput_tonnes
        share = q6(tonnes / dec(total)) if total else D(1)
        ttw = wtt = ZERO
        carriers = []
        for fuel, amount in energy:
            # Electricity: the location-based grid of the hub's country (validated on import).
            factor = factors.grids[h.electricity_country or ""] if fuel == "electricity" else factors.fuels[fuel]
            allocated = q6(amount * share)
            ttw += q6(allocated * factor.ttw)
            wtt += q6(allocated * factor.wtt)
            carriers.append({"fuel": fuel, "amount": num(allocated)})
        item.update(basis="measured", allocation_share=num(share), energy=carriers, flags=[])
    else:
        intensity = default_intensity(h.hub_type, h.temperature_control)
        if intensity is None or tonnes <= 0:
            item.update(basis="none", included=False, flags=["no_default_intensity"])
            return item
        # Conservative: TTW at the WTW value, no WTT split (the source publishes none).
        ttw, wtt = q6(tonnes * intensity), ZERO
        item.update(basis="default", default_intensity_wtw_kg_per_t=num(intensity), flags=["ttw_not_published"])
    wtw = ttw + wtt
    item.update(
        included=True, co2e_ttw_kg=num(ttw), co2e_wtt_kg=num(wtt), co2e_wtw_kg=num(wtw),
        intensity_wtw_kg_per_t=num(q6(wtw / tonnes)) if tonnes > 0 else None,
        intensity_ttw_kg_per_t=num(q6(ttw / tonnes)) if tonnes > 0 else None,
    )  # fmt: skip
    return item


def calculate_hubs(hubs: Iterable[HubInput], factors: FactorSet) -> dict[str, Any] | None:
    """The run's hub summary, or None without hub rows (the reports then declare the omission)."""
    items = [_hub(h, factors) for h in hubs]
    if not items:
        return None
    included = [i for i in items if i["included"]]
    return {
        "rows": len(items),
        "included_rows": len(included),
        "throughput_tonnes": num(sum((dec(i["throughput_tonnes"]) for i in included), ZERO)),
        "co2e_ttw_kg": num(sum((dec(i["co2e_ttw_kg"]) for i in included), ZERO)),
        "co2e_wtt_kg": num(sum((dec(i["co2e_wtt_kg"]) for i in included), ZERO)),
        "co2e_wtw_kg": num(sum((dec(i["co2e_wtw_kg"]) for i in included), ZERO)),
        "default_source": DEFAULT_SOURCE if any(i["basis"] == "default" for i in items) else None,
        "items": items,
    }
