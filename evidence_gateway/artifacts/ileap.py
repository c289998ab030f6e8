"""ileap_shipment_footprints: the run as iLEAP ShipmentFootprints, TCEs and the TOCs they reference.

Follows the data model of the iLEAP Technical Specifications, Version 1.0.0 (sine-fdn/ileap-extension,
``specs/index.bs``: ShipmentFootprint, TCE, TOC, EnergyCarrier): decimals as
strings, mass in kg, transport activity in tonne-km, a GLEC distance with its type, co2eWTW and
co2eTTW in kg per TCE. Rows that share an ``external_id`` are the legs (TCEs) of one shipment,
in import order, each pointing at the one before (``prevTceIds``); a row without one is a
shipment of its own. Excluded rows have no emissions to exchange and are only counted.
docs/packs.md describes the document.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, BinaryIO

import orjson

from evidence_gateway.artifacts.data import FactorInfo, PackData, Rows, ShipmentLine
from evidence_gateway.artifacts.text import decimal_string

CONTENT_TYPE = "application/json"
SUFFIX = "ileap-shipment-footprints.json"
NEEDS_ROWS = True
FORMAT = "evidence-gateway.ileap-shipment-footprints"
FORMAT_VERSION = 2
SPECIFICATION = "iLEAP Technical Specifications Version 1.0.0 (SFC / SINE Foundation): ShipmentFootprint, TCE, TOC"
# iLEAP energyConsumptionUnit for our fuel units.
CONSUMPTION_UNIT = {"litre": "l", "kg": "kg", "kWh": "kWh"}

ILEAP_MODE = {
    "road": "Road",
    "rail": "Rail",
    "sea": "Sea",
    "air": "Air",
    "inland_waterway": "InlandWaterway",
}
# iLEAP EnergyCarrierType for our fuels, and the carrier a mode's default factor assumes.
ENERGY_CARRIER = {
    "diesel": "Diesel",
    "petrol": "Petrol",
    "hvo": "HVO",
    "cng": "CNG",
    "lng": "LNG",
    "hfo": "HFO",
    "mgo": "MGO",
    "jet_kerosene": "Aviation fuel",
    "electricity": "Electric",
}
MODE_FUEL = {"road": "diesel", "rail": "diesel", "sea": "hfo", "air": "jet_kerosene", "inland_waterway": "mgo"}
_KG = Decimal(1000)


@dataclass(slots=True)
class _Toc:
    toc_id: str
    mode: str
    fuel: str
    description: str
    wtw_kg: Decimal = Decimal(0)
    ttw_kg: Decimal = Decimal(0)
    tkm: Decimal = Decimal(0)
    # Fuel actually used and allocated to the TCEs (primary TOCs only), in the fuel's unit.
    fuel_used: Decimal | None = None


@dataclass(slots=True)
class _Shipment:
    """A shipment's legs as their serialised JSON, comma-separated in one buffer: a 50k-row run
    holds about the document's size until it is written, not 50k dicts (nor 50k ``orjson``
    results, each of which keeps a larger allocation than its length)."""

    shipment_id: str
    mass_kg: Decimal
    tces: bytearray = field(default_factory=bytearray)
    last_tce_id: str | None = None


def _d(value: float) -> Decimal:
    return Decimal(repr(value))


def _toc_for(line: ShipmentLine, version: str) -> tuple[str, str, str]:
    """(tocId, fuel key, description): one TOC per mode and data category (and fuel or carrier intensity)."""
    mode = line.mode or ""
    if line.data_category == "primary" and line.fuel_type:
        return (
            f"eg-{mode}-primary-{line.fuel_type}",
            line.fuel_type,
            f"{mode}: fuel actually used ({line.fuel_type}), allocated to the shipment (ISO 14083 primary data)",
        )
    if line.data_category == "secondary_modelled" and line.carrier_intensity_g_per_tkm is not None:
        basis = line.carrier_intensity_basis or "wtw"
        ci = decimal_string(line.carrier_intensity_g_per_tkm)
        return (
            f"eg-{mode}-carrier-{ci}g-{basis}",
            MODE_FUEL.get(mode, "diesel"),
            f"{mode}: carrier-specific intensity {ci} g CO2e/tkm ({basis.upper()}), other boundary derived "
            "from the mode's published ratio (ISO 14083 secondary data, modelled)",
        )
    return (
        f"eg-{mode}-default-{version}",
        MODE_FUEL.get(mode, "diesel"),
        f"{mode}: published default intensity, {version} (ISO 14083 secondary data, default)",
    )


def _tce(line: ShipmentLine, shipment_id: str, toc_id: str, previous: str | None) -> dict[str, Any]:
    # ISO 14083 activity basis (issue 26): transportActivity = distance x mass, the distance being
    # the SFD (surface) or GCD (air) the run's tonne-km are on.
    if line.activity_distance_km is not None and line.mode is not None:
        distance_type, km = ("gcd" if line.mode == "air" else "sfd"), line.activity_distance_km
        # exact product (the stored tonne_km is rounded to 6 decimals)
        activity = decimal_string(_d(km) * _d(line.mass_tonnes or 0.0), 12)
    else:
        distance_type, km = line.distance_type_used or "actual", line.distance_km or 0.0
        activity = decimal_string(line.tonne_km or 0.0)
    tce: dict[str, Any] = {
        "tceId": str(line.shipment_id),
        "tocId": toc_id,
        "shipmentId": shipment_id,
        "mass": decimal_string(_d(line.mass_tonnes or 0.0) * _KG),
        "distance": {distance_type: decimal_string(km)},
        "transportActivity": activity,
        "co2eWTW": decimal_string(line.co2e_wtw_kg or 0.0),
        "co2eTTW": decimal_string(line.co2e_ttw_kg or 0.0),
    }
    if previous is not None:
        tce["prevTceIds"] = [previous]
    if line.shipment_date is not None:
        tce["departureAt"] = f"{line.shipment_date.isoformat()}T00:00:00Z"
    return tce


def _energy_carrier(toc: _Toc, factors: dict[str, FactorInfo]) -> dict[str, Any]:
    """One carrier (share 1). Its consumption per tkm is stated only where fuel was measured."""
    f = factors.get(toc.fuel)
    carrier: dict[str, Any] = {
        "energyCarrier": ENERGY_CARRIER.get(toc.fuel, "Diesel"),
        "relativeShare": "1",
        "emissionFactorWTW": decimal_string(f.wtw_value if f else 0.0),
        "emissionFactorTTW": decimal_string(f.ttw_value if f else 0.0),
    }
    unit = CONSUMPTION_UNIT.get(f.unit.removeprefix("kg CO2e/")) if f else None
    if toc.fuel_used is not None and toc.tkm > 0 and unit is not None:
        carrier["energyConsumption"] = decimal_string(toc.fuel_used / toc.tkm, 9)
        carrier["energyConsumptionUnit"] = unit
    return carrier


def _toc_json(toc: _Toc, factors: dict[str, FactorInfo]) -> dict[str, Any]:
    """Intensities in kg CO2e per tonne-km over the TCEs that reference the TOC.

    iLEAP names TEUkm for sea and inland waterway; rows carry a mass and no TEU count, so every
    TOC is per tkm (docs/packs.md).
    """
    per_tkm = (lambda kg: kg / toc.tkm) if toc.tkm > 0 else (lambda kg: Decimal(0))
    return {
        "tocId": toc.toc_id,
        "description": toc.description,
        "mode": ILEAP_MODE.get(toc.mode, toc.mode),
        "energyCarriers": [_energy_carrier(toc, factors)],
        "co2eIntensityWTW": decimal_string(per_tkm(toc.wtw_kg), 9),
        "co2eIntensityTTW": decimal_string(per_tkm(toc.ttw_kg), 9),
        "transportActivityUnit": "tkm",
    }


def render(data: PackData, rows: Rows, out: BinaryIO) -> None:
    """The document, written piece by piece: byte for byte what one ``orjson.dumps`` of it gives."""
    m = data.methodology
    version = m.factor_version_code if m else "unknown"
    fuel_factors = {f.key: f for f in m.factors if f.kind == "fuel"} if m else {}
    shipments: dict[str, _Shipment] = {}
    tocs: dict[str, _Toc] = {}
    excluded = 0
    for line in rows:
        if not line.included or line.mode is None:
            excluded += 1
            continue
        key = line.external_id or str(line.shipment_id)
        shipment = shipments.get(key)
        if shipment is None:
            shipment = shipments[key] = _Shipment(key, _d(line.mass_tonnes or 0.0) * _KG)
        toc_id, fuel, description = _toc_for(line, version)
        toc = tocs.get(toc_id)
        if toc is None:
            toc = tocs[toc_id] = _Toc(toc_id, line.mode, fuel, description)
        toc.wtw_kg += _d(line.co2e_wtw_kg or 0.0)
        toc.ttw_kg += _d(line.co2e_ttw_kg or 0.0)
        toc.tkm += _d(line.tonne_km or 0.0)
        if line.data_category == "primary" and line.fuel_amount is not None:
            allocated = _d(line.fuel_amount) * _d(line.allocation_share if line.allocation_share is not None else 1.0)
            toc.fuel_used = (toc.fuel_used or Decimal(0)) + allocated
        tce = _tce(line, key, toc_id, shipment.last_tce_id)
        shipment.tces += b"," + orjson.dumps(tce) if shipment.tces else orjson.dumps(tce)
        shipment.last_tce_id = tce["tceId"]
    quality = data.quality
    head = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "specification": SPECIFICATION,
        "calculation_run_id": str(data.run.id),
        "factor_version": version,
        "primaryDataShare": quality.primary_data_share_percent if quality else None,
        "excluded_shipment_rows": excluded,
    }
    out.write(orjson.dumps(head)[:-1] + b',"shipmentFootprints":[')
    for n, s in enumerate(shipments.values()):
        opening = {"mass": decimal_string(s.mass_kg), "shipmentId": s.shipment_id}
        out.write((b"," if n else b"") + orjson.dumps(opening)[:-1] + b',"tces":[')
        out.write(s.tces + b"]}")
    toc_list = [_toc_json(t, fuel_factors) for t in sorted(tocs.values(), key=lambda t: t.toc_id)]
    out.write(b'],"tocs":' + orjson.dumps(toc_list) + b"}")
