"""ileap_shipment_footprints: the run as iLEAP ShipmentFootprints, TCEs and the TOCs they reference.

Follows the data model of the iLEAP Technical Specifications, Version 1.0.0 (sine-fdn/ileap-extension,
``specs/index.bs``: ShipmentFootprint, TCE, TOC, EnergyCarrier): decimals as
strings, mass in kg, transport activity in tonne-km, a GLEC distance with its type, co2eWTW and
co2eTTW in kg per TCE. A TOC is per TEU-km where its rows give a TEU count, else per tkm; its id
names its mode, category, carrier, intensities, unit, source and factor version (a hash), so it is
never reused for other intensities. Rows that share an ``external_id`` are the legs (TCEs) of one shipment,
in import order, each pointing at the one before (``prevTceIds``); a row without one is a
shipment of its own. A hub row's TCE sits between the legs of its shipment where a leg's
destination (or the next leg's origin) is the hub's name (ileap_hubs.HubChain). Excluded rows have
no emissions to exchange and are only counted.
docs/packs.md describes the document.
"""

from __future__ import annotations

import hashlib
import re
import uuid
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, BinaryIO

import orjson

from evidence_gateway.artifacts import ileap_hubs, iso_report
from evidence_gateway.artifacts.data import FactorInfo, PackData, Rows, ShipmentLine
from evidence_gateway.artifacts.text import decimal_string

CONTENT_TYPE = "application/json"
SUFFIX = "ileap-shipment-footprints.json"
NEEDS_ROWS = True
FORMAT = "evidence-gateway.ileap-shipment-footprints"
FORMAT_VERSION = 3  # 3: packagingOrTrEqAmount a decimal string; measured carrier TOCs primary
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
# Where the published intensity is not of one fuel alone, the TOC's comment says what it stands for.
ASSUMED_FUEL_NOTE = {
    "rail": "the DESNZ freight-train average covers diesel and electric traction; Diesel, the dominant "
    "traction of UK rail freight, stands for the mix",
    "sea": "the DESNZ container-ship average is of the fleet's fuel oils; HFO stands for them",
    "inland_waterway": "the DESNZ proxy vessel's fuel is not published; MGO, usual for inland vessels, stands for it",
}
_KG = Decimal(1000)


@dataclass(slots=True)
class _Toc:
    """A TOC being summed: its final id is known only at the end (it names the intensity)."""

    placeholder: str
    mode: str
    category: str
    fuel: str
    description: str
    unit: str
    source: str
    derived: str | None = None  # "ttw" or "wtt": the boundary derived from the mode's published ratio
    wtw_kg: Decimal = Decimal(0)
    ttw_kg: Decimal = Decimal(0)
    activity: Decimal = Decimal(0)  # in ``unit``: tkm, or TEU x activity km
    # Fuel actually used and allocated to the TCEs (primary TOCs only), in the fuel's unit.
    fuel_used: Decimal | None = None

    def per_unit(self, kg: Decimal) -> Decimal:
        return kg / self.activity if self.activity > 0 else Decimal(0)

    def toc_id(self, version: str) -> str:
        """Stable per (mode, category, carrier, intensity, unit, source, version): a run with other
        intensities gets another id, one with the same intensities the same id."""
        wtw, ttw = decimal_string(self.per_unit(self.wtw_kg), 9), decimal_string(self.per_unit(self.ttw_kg), 9)
        key = "|".join((self.mode, self.category, self.fuel, str(wtw), str(ttw), self.unit, self.source, version))
        digest = hashlib.sha256(key.encode()).hexdigest()[:16]
        name = f"-{self.fuel}" if self.category == "primary" else ""
        return f"eg-{self.mode}-{self.category}{name}-{digest}"


@dataclass(slots=True)
class _Shipment:
    """A shipment's legs as their serialised JSON, comma-separated in one buffer: a 50k-row run
    holds about the document's size until it is written, not 50k dicts (nor 50k ``orjson``
    results, each of which keeps a larger allocation than its length)."""

    shipment_id: str
    mass_kg: Decimal
    tces: bytearray = field(default_factory=bytearray)
    last_tce_id: str | None = None

    def add(self, tce: dict[str, Any]) -> None:
        self.tces += b"," + orjson.dumps(tce) if self.tces else orjson.dumps(tce)
        self.last_tce_id = tce["tceId"]


def _d(value: float) -> Decimal:
    return Decimal(repr(value))


def _toc_key(line: ShipmentLine, version: str) -> tuple[tuple[Any, ...], str, str, str, str, str | None]:
    """(grouping key, category, fuel key, description, source, derived boundary) of a row's TOC."""
    mode = line.mode or ""
    unit = "TEUkm" if line.teu is not None else "tkm"
    if line.data_category == "primary" and line.fuel_type:
        return (
            ("primary", mode, line.fuel_type, unit), "primary", line.fuel_type,
            f"{mode}: fuel actually used ({line.fuel_type}), allocated to the shipment (ISO 14083 primary data)",
            "fuel used", None,
        )  # fmt: skip
    if line.carrier_intensity_g_per_tkm is not None and line.data_category in ("primary", "secondary_modelled"):
        # A carrier intensity declared measured is primary data (ISO 14083), its TOC a primary one.
        measured = line.data_category == "primary"
        category, kind = ("primary", "primary data, measured") if measured else ("carrier", "secondary data, modelled")
        basis = line.carrier_intensity_basis or "wtw"
        ci = decimal_string(line.carrier_intensity_g_per_tkm)
        derived = "ttw" if basis == "wtw" else "wtt"
        return (
            (category, mode, ci, basis, unit), category, MODE_FUEL.get(mode, "diesel"),
            f"{mode}: carrier-specific intensity {ci} g CO2e/tkm ({basis.upper()}); the "
            f"{'TTW' if derived == 'ttw' else 'WTT'} part is DERIVED from the mode's published ratio "
            f"(ISO 14083 {kind})",
            f"carrier {ci} g/tkm {basis}", derived,
        )  # fmt: skip
    return (
        ("default", mode, unit), "default", MODE_FUEL.get(mode, "diesel"),
        f"{mode}: published default intensity, {version} (ISO 14083 secondary data, default)", "published default",
        None,
    )  # fmt: skip


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
    if line.teu is not None and float(line.teu).is_integer():
        tce["packagingOrTrEqType"] = "Container-TEU"
        tce["packagingOrTrEqAmount"] = decimal_string(line.teu)  # iLEAP 1.0.0: a Decimal, as a string
    if previous is not None:
        tce["prevTceIds"] = [previous]
    if line.shipment_date is not None:
        tce["departureAt"] = f"{line.shipment_date.isoformat()}T00:00:00Z"
    return tce


def _energy_carrier(toc: _Toc, factors: dict[str, FactorInfo]) -> dict[str, Any]:
    """One carrier (share 1), its factors per the unit its consumption is stated in.

    Primary TOCs state the fuel measured per unit of activity. The other TOCs state the fuel the
    published intensity assumes, its consumption derived as the TOC's TTW intensity over the fuel's
    TTW factor (the comment says so); a carrier without a TTW factor states none (and no unit).
    """
    f = factors.get(toc.fuel)
    carrier: dict[str, Any] = {
        "energyCarrier": ENERGY_CARRIER.get(toc.fuel, "Diesel"),
        "relativeShare": "1",
        "emissionFactorWTW": decimal_string(f.wtw_value if f else 0.0),
        "emissionFactorTTW": decimal_string(f.ttw_value if f else 0.0),
    }
    unit = CONSUMPTION_UNIT.get(f.unit.removeprefix("kg CO2e/")) if f else None
    if unit is None or toc.activity <= 0:
        return carrier
    if toc.fuel_used is not None:
        carrier["energyConsumption"] = decimal_string(toc.fuel_used / toc.activity, 9)
        carrier["energyConsumptionUnit"] = unit
    elif f is not None and f.ttw_value > 0:
        carrier["energyConsumption"] = decimal_string(toc.per_unit(toc.ttw_kg) / _d(f.ttw_value), 9)
        carrier["energyConsumptionUnit"] = unit
    return carrier


def _comment(toc: _Toc) -> str:
    parts = []
    if toc.derived == "ttw":
        parts.append("co2eIntensityTTW is derived (the carrier gave WTW; TTW by the mode's published TTW/WTW ratio)")
    elif toc.derived == "wtt":
        parts.append("the WTT part of co2eIntensityWTW is derived (the carrier gave TTW; WTT by the mode's ratio)")
    if toc.fuel_used is None:
        parts.append(
            "energy carrier: the fuel the published intensity assumes; energyConsumption derived as "
            "co2eIntensityTTW / emissionFactorTTW, not measured"
        )
        if toc.mode in ASSUMED_FUEL_NOTE:
            parts.append(ASSUMED_FUEL_NOTE[toc.mode])
    if toc.unit == "tkm":
        parts.append("per tkm: the rows give a mass and no TEU count")
    return "; ".join(parts) + "." if parts else ""


def _toc_json(toc: _Toc, toc_id: str, factors: dict[str, FactorInfo], m: Any) -> dict[str, Any]:
    """Intensities in kg CO2e per ``transportActivityUnit`` over the TCEs that reference the TOC."""
    doc: dict[str, Any] = {
        "tocId": toc_id,
        "description": toc.description,
        "mode": ILEAP_MODE.get(toc.mode, toc.mode),
        "energyCarriers": [_energy_carrier(toc, factors)],
        "co2eIntensityWTW": decimal_string(toc.per_unit(toc.wtw_kg), 9),
        "co2eIntensityTTW": decimal_string(toc.per_unit(toc.ttw_kg), 9),
        "transportActivityUnit": toc.unit,
    }
    comment = _comment(toc)
    if comment:
        doc["comment"] = comment
    if toc.category != "primary" and m is not None:
        source = next((f for f in m.factors if f.kind == "mode" and f.key == toc.mode), None)
        if source is not None:
            doc["secondaryEmissionFactorSources"] = [
                {"name": source.dataset or source.source, "version": source.dataset_version or m.factor_version_code}
            ]
    return doc


def render(data: PackData, rows: Rows, out: BinaryIO) -> None:
    """The document, written piece by piece: byte for byte what one ``orjson.dumps`` of it gives."""
    m = data.methodology
    version = m.factor_version_code if m else "unknown"
    fuel_factors = {f.key: f for f in m.factors if f.kind == "fuel"} if m else {}
    shipments: dict[str, _Shipment] = {}
    tocs: dict[tuple[Any, ...], _Toc] = {}
    nonce = uuid.uuid4().hex  # TCEs name their TOC by a placeholder until its intensity is known
    hubs = ileap_hubs.HubChain(
        data.run.hubs.get("items") or [], version, data.run.hubs.get("default_source"), fuel_factors, ENERGY_CARRIER
    )
    excluded = 0
    for line in rows:
        if not line.included or line.mode is None:
            excluded += 1
            continue
        key = line.external_id or str(line.shipment_id)
        shipment = shipments.get(key)
        if shipment is None:
            shipment = shipments[key] = _Shipment(key, _d(line.mass_tonnes or 0.0) * _KG)
        toc_key, category, fuel, description, source, derived = _toc_key(line, version)
        toc = tocs.get(toc_key)
        if toc is None:
            unit = toc_key[-1]
            toc = tocs[toc_key] = _Toc(
                f"{nonce}-{len(tocs)}", line.mode, category, fuel, description, unit, source, derived
            )
        toc.wtw_kg += _d(line.co2e_wtw_kg or 0.0)
        toc.ttw_kg += _d(line.co2e_ttw_kg or 0.0)
        if toc.unit == "TEUkm":
            toc.activity += _d(line.teu or 0.0) * _d(line.activity_distance_km or 0.0)
        else:
            toc.activity += _d(line.tonne_km or 0.0)
        if line.data_category == "primary" and line.fuel_amount is not None:
            allocated = _d(line.fuel_amount) * _d(line.allocation_share if line.allocation_share is not None else 1.0)
            toc.fuel_used = (toc.fuel_used or Decimal(0)) + allocated
        _hub_at(hubs, shipment, line.origin)  # a hub the leg starts from, not yet after the leg before
        shipment.add(_tce(line, key, toc.placeholder, shipment.last_tce_id))
        _hub_at(hubs, shipment, line.destination)
    ids = {t.placeholder.encode(): t.toc_id(version).encode() for t in tocs.values()}
    placeholder = re.compile(re.escape(nonce).encode() + rb"-\d+")
    hocs = _hubs(hubs, shipments)
    quality = data.quality
    head = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "specification": SPECIFICATION,
        "calculation_run_id": str(data.run.id),
        "factor_version": version,
        "primaryDataShare": quality.primary_data_share_percent if quality else None,
        "excluded_shipment_rows": excluded,
        "hub_operations": iso_report.hub_scope(data),
        "excluded_hub_rows": int(data.run.hubs.get("rows") or 0) - int(data.run.hubs.get("included_rows") or 0),
    }
    out.write(orjson.dumps(head)[:-1] + b',"shipmentFootprints":[')
    for n, s in enumerate(shipments.values()):
        opening = {"mass": decimal_string(s.mass_kg), "shipmentId": s.shipment_id}
        out.write((b"," if n else b"") + orjson.dumps(opening)[:-1] + b',"tces":[')
        out.write(placeholder.sub(lambda hit: ids[hit.group(0)], s.tces) + b"]}")
    named = sorted((ids[t.placeholder.encode()].decode(), t) for t in tocs.values())
    toc_list = [_toc_json(t, toc_id, fuel_factors, m) for toc_id, t in named]
    out.write(b'],"tocs":' + orjson.dumps(toc_list) + b',"hocs":' + orjson.dumps(hocs) + b"}")


def _hub_at(hubs: ileap_hubs.HubChain, shipment: _Shipment, place: str | None) -> None:
    """The hub of this shipment that ``place`` names, as the chain's next TCE (if there is one)."""
    found = hubs.take(shipment.shipment_id, place)
    if found is not None:
        item, hoc_id = found
        shipment.add(ileap_hubs.tce(item, hoc_id, shipment.shipment_id, shipment.last_tce_id))


def _hubs(hubs: ileap_hubs.HubChain, shipments: dict[str, _Shipment]) -> list[dict[str, Any]]:
    """Hub TCEs no leg placed: after the last leg of their shipment (or a shipment of their own); the HOCs, by id."""
    for item, hoc_id in hubs.rest():
        key = item.get("external_id") or f"hub-{item['hub_id']}"
        shipment = shipments.get(key)
        if shipment is None:
            shipment = shipments[key] = _Shipment(key, _d(item["throughput_tonnes"]) * _KG)
        shipment.add(ileap_hubs.tce(item, hoc_id, key, shipment.last_tce_id))
    return [hubs.hocs[k] for k in sorted(hubs.hocs)]
