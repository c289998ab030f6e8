"""The hub part of the iLEAP file: a hub TCE per calculated hub row and the HOCs they reference.

A hub TCE has no distance of its own (``{"sfd": "0"}``, transport activity 0 = 0 km x mass) and
names its HOC (``hocId``). It joins the shipment whose ``external_id`` the hub row gives, at the
place its ``name`` names (``HubChain``): after the leg whose destination is that name, else before
the leg whose origin is (the hub then sits between two legs, as ISO 14083 / GLEC chains place hub
operations); without such a leg after the shipment's last leg; without an ``external_id`` it forms a
shipment of its own. HOC intensities are kg CO2e per tonne handled (``hubActivityUnit`` ``tonnes``);
the HOC id is a hash of type, temperature, basis, intensities, carriers, source and factor version,
as TOC ids are.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from decimal import Decimal
from typing import Any

from evidence_gateway.artifacts.data import FactorInfo
from evidence_gateway.artifacts.text import decimal_string

ILEAP_HUB_TYPE = {
    "transshipment": "Transshipment",
    "storage_and_transshipment": "StorageAndTransshipment",
    "warehouse": "Warehouse",
    "liquid_bulk_terminal": "LiquidBulkTerminal",
    "maritime_container_terminal": "MaritimeContainerTerminal",
    "airport_terminal": "Transshipment",
}
_KG = Decimal(1000)


def _d(value: Any) -> Decimal:
    return Decimal(repr(value)) if isinstance(value, float) else Decimal(value or 0)


def _carriers(item: dict[str, Any], factors: dict[str, FactorInfo], energy_carrier: dict[str, str]) -> list[Any]:
    """Measured hubs: each fuel, its share of the hub's WTW emissions and its use per tonne. Default
    hubs: the source publishes no energy mix; one grid-electricity carrier stands for it (the HOC's
    comment says so), without a consumption."""
    tonnes = _d(item["throughput_tonnes"])
    if item["basis"] != "measured":
        f = factors.get("electricity")
        return [
            {
                "energyCarrier": "Electric",
                "relativeShare": "1",
                "emissionFactorWTW": decimal_string(f.wtw_value if f else 0.0),
                "emissionFactorTTW": decimal_string(f.ttw_value if f else 0.0),
            }
        ]
    energy = item.get("energy") or []
    weights = [
        _d(e["amount"]) * _d(factors[e["fuel"]].wtw_value) if e["fuel"] in factors else Decimal(0) for e in energy
    ]
    total = sum(weights, Decimal(0))
    out: list[dict[str, Any]] = []
    left = Decimal(1)
    for n, (e, w) in enumerate(zip(energy, weights, strict=True)):
        share = left if n == len(energy) - 1 else (w / total if total > 0 else Decimal(0)).quantize(Decimal("0.000001"))
        left -= share
        f = factors.get(e["fuel"])
        carrier: dict[str, Any] = {
            "energyCarrier": energy_carrier.get(e["fuel"], "Diesel"),
            "relativeShare": decimal_string(share),
            "emissionFactorWTW": decimal_string(f.wtw_value if f else 0.0),
            "emissionFactorTTW": decimal_string(f.ttw_value if f else 0.0),
        }
        unit = {"litre": "l", "kg": "kg", "kWh": "kWh"}.get(f.unit.removeprefix("kg CO2e/")) if f else None
        if unit is not None and tonnes > 0:
            carrier["energyConsumption"] = decimal_string(_d(e["amount"]) / tonnes, 9)
            carrier["energyConsumptionUnit"] = unit
        out.append(carrier)
    return out


def hoc(
    item: dict[str, Any], version: str, source: str | None, factors: dict[str, FactorInfo], ec: dict[str, str]
) -> dict[str, Any]:
    """The HOC of one calculated hub row (its id names everything its intensities depend on)."""
    wtw = decimal_string(_d(item.get("intensity_wtw_kg_per_t")), 9)
    ttw = decimal_string(_d(item.get("intensity_ttw_kg_per_t")), 9)
    fuels = ",".join(e["fuel"] for e in item.get("energy") or [])
    key = "|".join(
        (item["hub_type"], item["temperature_control"], item["basis"], str(wtw), str(ttw), fuels, source or "", version)
    )
    hoc_id = f"eg-hub-{item['hub_type']}-{hashlib.sha256(key.encode()).hexdigest()[:16]}"
    comment = "Intensity per tonne handled. "
    if item["basis"] == "measured":
        comment += "Measured energy of the hub (ISO 14083 primary data); carrier shares by WTW emissions."
    else:
        comment += (
            f"Default intensity ({source}); the source publishes WTW only, so co2eIntensityTTW is the WTW value "
            "(conservative), and no energy mix: the Electric carrier stands for it, without consumption."
        )
    if item["hub_type"] == "maritime_container_terminal" and item["basis"] == "default":
        comment += (
            " The source's container-terminal default is applied per tonne handled; its unit was not re-checked "
            "against the published table (terminal operators report per TEU), see the methodology statement."
        )
    if item["hub_type"] == "airport_terminal":
        comment += " Airport cargo terminal, stated as Transshipment (iLEAP has no airport hub type)."
    return {
        "hocId": hoc_id,
        "description": f"{item['hub_type']} ({item['temperature_control']}), {item['basis']} basis",
        "hubType": ILEAP_HUB_TYPE.get(item["hub_type"], "Transshipment"),
        "temperatureControl": item["temperature_control"],
        "energyCarriers": _carriers(item, factors, ec),
        "co2eIntensityWTW": wtw,
        "co2eIntensityTTW": ttw,
        "hubActivityUnit": "tonnes",
        "comment": comment,
    }


def tce(item: dict[str, Any], hoc_id: str, shipment_id: str, previous: str | None) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "tceId": item["hub_id"],
        "hocId": hoc_id,
        "shipmentId": shipment_id,
        "mass": decimal_string(_d(item["throughput_tonnes"]) * _KG),
        "distance": {"sfd": "0"},  # no distance of its own; 0 on the ISO activity basis
        "transportActivity": "0",
        "co2eWTW": decimal_string(_d(item["co2e_wtw_kg"])),
        "co2eTTW": decimal_string(_d(item["co2e_ttw_kg"])),
    }
    if previous is not None:
        doc["prevTceIds"] = [previous]
    return doc


def place_key(text: str | None) -> str | None:
    """A place name as compared: whitespace collapsed, case folded; None when empty."""
    key = " ".join((text or "").split()).casefold()
    return key or None


class HubChain:
    """The run's calculated hub rows, each with its HOC, waiting for their place in a chain.

    ``take(shipment, place)`` hands out the first hub row of that shipment (its ``external_id``)
    whose ``name`` is the place (a leg's destination or origin), once; ``rest()`` the ones no leg
    named, in row order.
    """

    def __init__(
        self, items: Iterable[dict[str, Any]], version: str, source: str | None,
        factors: dict[str, FactorInfo], ec: dict[str, str],
    ) -> None:  # fmt: skip
        self.hocs: dict[str, dict[str, Any]] = {}
        self._order: list[tuple[dict[str, Any], str]] = []
        self._named: dict[str, list[tuple[str, int]]] = {}
        self._placed: set[int] = set()
        for item in items:
            if not item.get("included"):
                continue
            doc = hoc(item, version, source if item["basis"] == "default" else None, factors, ec)
            self.hocs.setdefault(doc["hocId"], doc)
            place = place_key(item.get("name"))
            if item.get("external_id") and place is not None:
                self._named.setdefault(item["external_id"], []).append((place, len(self._order)))
            self._order.append((item, doc["hocId"]))

    def take(self, shipment_id: str, place: str | None) -> tuple[dict[str, Any], str] | None:
        candidates = self._named.get(shipment_id)
        key = place_key(place)
        if not candidates or key is None:
            return None
        for name, n in candidates:
            if name == key and n not in self._placed:
                self._placed.add(n)
                return self._order[n]
        return None

    def rest(self) -> list[tuple[dict[str, Any], str]]:
        return [entry for n, entry in enumerate(self._order) if n not in self._placed]
