"""The hub part of the iLEAP file: a hub TCE per calculated hub row and the HOCs they reference.

A hub TCE has no distance of its own (``{"actual": "0"}``, transport activity 0) and names its HOC
(``hocId``); it joins the shipment whose ``external_id`` the hub row gives, after its last leg, or
else forms a shipment of its own. HOC intensities are kg CO2e per tonne handled
(``hubActivityUnit`` ``tonnes``); the HOC id is a hash of type, temperature, basis, intensities,
carriers, source and factor version, as TOC ids are.
"""

from __future__ import annotations

import hashlib
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
        "distance": {"actual": "0"},
        "transportActivity": "0",
        "co2eWTW": decimal_string(_d(item["co2e_wtw_kg"])),
        "co2eTTW": decimal_string(_d(item["co2e_ttw_kg"])),
    }
    if previous is not None:
        doc["prevTceIds"] = [previous]
    return doc
