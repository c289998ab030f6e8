"""A pack's iLEAP file as PACT ProductFootprints: one per ShipmentFootprint, TOC and HOC.

The mapping is iLEAP Technical Specifications 1.0.0 (sine-fdn/ileap-extension, ``specs/index.bs``,
"PACT Integration"): CPC ``83117``, a ``urn:pathfinder:product:customcode:vendor-assigned:…`` product
id, the iLEAP object as the one extension. Each record is written twice, as PACT 2.x (``v2``) and
PACT 3.0 (``v3``), so a recipient on either major gets the same numbers.

``pCfExcludingBiogenic`` follows iLEAP, which MUSTs the shipment's *total* (Σ co2eWTW over its TCEs)
with ``unitaryProductAmount`` = Σ t·km. PACT 2.x words the value "per declared unit" with the
declared unit a bare unit of measure, which would make it Σ co2eWTW / Σ t·km; iLEAP's TOC and HOC
rows (amount 1 t·km, amount 1000 kg with the per-tonne intensity) read the declared unit as the
whole ``unitaryProductAmount``, as PACT 3.0 then defined it (ADR 0036: the declared unit is
``declaredUnitAmount`` × ``declaredUnitOfMeasurement``). We follow iLEAP in both majors, which is
exactly PACT 3.0 and what iLEAP's test cases check, and every footprint's ``comment`` states the
total, the amount and the resulting kg CO2e per t·km so a reader of either wording cannot misread
it. docs/ileap-mapping.md has the field-by-field table and the other decisions (TEU-km TOCs,
shipments without t·km, the exempted share).

Pure: no database, no clock; Decimal arithmetic on the file's decimal strings, decimals out as
strings (PACT 2.x's two percentages are JSON numbers, as its schema says). The returned dicts
share the iLEAP objects between ``v2`` and ``v3``: treat them as read-only.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import date, datetime
from decimal import ROUND_CEILING, ROUND_HALF_EVEN, Decimal
from typing import Any

from evidence_gateway.exchange.pact import (
    V2_EXEMPTED_LIMIT,
    Kind,
    Owner,
    Record,
    decimal_text,
    iso_utc,
    product_urn,
    v2,
    v3,
)

__all__ = [
    "V2_EXEMPTED_LIMIT",
    "Footprint",
    "PackSource",
    "RowFacts",
    "decimal_text",
    "iso_utc",
    "product_footprints",
    "product_urn",
    "stable_id",
]


# Never change it: footprint ids (and TAD activity ids) are uuid5 in it, and recipients keep them.
ID_NAMESPACE = uuid.UUID("65cfe15f-0a30-4b45-82d8-e90028c5bca7")
# Intensities we derive (TEU-km TOCs per t·km, the comment's kg CO2e per t·km): 9 places, as the
# iLEAP file's intensities.
_PLACES = Decimal("0.000000001")
_PERCENT = Decimal("0.000001")
_ZERO = Decimal(0)


@dataclass(frozen=True)
class RowFacts:
    """What the iLEAP file does not carry about a shipment row and iLEAP TAD needs: its places and
    date as imported (the pack's ``shipment_csv`` has them: ``tad.row_facts_from_shipment_csv``)."""

    origin: str | None
    destination: str | None
    shipment_date: date | None


@dataclass(frozen=True)
class PackSource:
    pack_id: uuid.UUID
    pack_version: int
    pack_hash: str  # the pack's sealed hash
    organization_id: uuid.UUID  # data owner -> companyIds ["urn:uuid:<id>"]
    organization_name: str  # companyName
    created: datetime  # aware UTC; the pack's creation time -> "created"
    period_start: datetime  # aware UTC; referencePeriodStart
    period_end: datetime  # aware UTC; referencePeriodEnd (exclusive end as PACT says)
    ileap: dict[str, Any]  # the parsed ileap-shipment-footprints.json of that pack
    # Optional, for TAD only: shipment row id (the TCE's tceId) -> its places and date.
    rows: Mapping[str, RowFacts] = field(default_factory=dict, compare=False)


@dataclass(frozen=True)
class Footprint:
    id: uuid.UUID  # stable: uuid5 of (pack_id, kind, local id) — same on every call
    kind: Kind
    created: datetime
    v2: dict[str, Any]  # PACT 2.x ProductFootprint (JSON-ready: strings for decimals)
    v3: dict[str, Any]  # PACT 3.0 ProductFootprint, same record


def stable_id(pack_id: uuid.UUID, kind: str, local_id: str) -> uuid.UUID:
    """The same pack, kind and local id give the same id on every call and every node."""
    return uuid.uuid5(ID_NAMESPACE, f"{pack_id}/{kind}/{local_id}")


def dec(value: Any) -> Decimal:
    """A decimal of the iLEAP file (a string there; exact)."""
    return Decimal(str(value)) if value is not None else _ZERO


def product_footprints(source: PackSource) -> list[Footprint]:
    """Every ShipmentFootprint (with t·km), TOC and HOC of the pack, in the file's order."""
    owner = Owner(
        source.organization_name, source.organization_id, source.created, source.period_start, source.period_end
    )
    out = []
    for r in _records(source.ileap, source):
        fid = stable_id(source.pack_id, r.kind, r.local_id)
        out.append(Footprint(fid, r.kind, source.created, v2(fid, r, owner), v3(fid, r, owner)))
    return out


def _toc_is_primary(toc: Mapping[str, Any]) -> bool:
    # tocId is eg-<mode>-<category>[-<fuel>]-<hash> (docs/packs.md); modes hold no hyphen.
    parts = str(toc.get("tocId", "")).split("-")
    return len(parts) > 3 and parts[0] == "eg" and parts[2] == "primary"


def _hoc_is_measured(hoc: Mapping[str, Any]) -> bool:
    # artifacts/ileap_hubs.py describes a HOC as "<type> (<temperature>), <basis> basis".
    return str(hoc.get("description", "")).endswith(", measured basis")


def _percent(part: Decimal, whole: Decimal) -> Decimal | None:
    if whole <= 0:
        return None
    return (part * 100 / whole).quantize(_PERCENT, rounding=ROUND_HALF_EVEN)


def _exempted(doc: Mapping[str, Any]) -> tuple[Decimal, str]:
    """Share of the run's rows that were not calculated, rounded up: their emissions are unknown
    (a mode, distance or mass is missing), so the row share stands for the emission share."""
    shipment_rows = int(doc.get("excluded_shipment_rows") or 0)
    hub_rows = int(doc.get("excluded_hub_rows") or 0)
    calculated = sum(len(sf.get("tces") or []) for sf in doc.get("shipmentFootprints") or [])
    total = shipment_rows + hub_rows + calculated
    share = (Decimal(shipment_rows + hub_rows) * 100 / total).quantize(_PERCENT, ROUND_CEILING) if total else _ZERO
    text = (
        f"{shipment_rows + hub_rows} of the run's {total} rows were not calculated ({shipment_rows} shipment rows "
        f"missing a mode, distance or mass; {hub_rows} hub rows not calculated). Their emissions are unknown, so "
        "the share of rows stands for the share of emissions; it is the run's share, the same for each shipment."
    )
    return share.normalize() if share else _ZERO, text


def _sources(tocs: Iterable[Mapping[str, Any]]) -> list[dict[str, str]]:
    seen: dict[tuple[str, str], dict[str, str]] = {}
    for toc in tocs:
        for s in toc.get("secondaryEmissionFactorSources") or []:
            name, version = str(s.get("name") or ""), str(s.get("version") or "")
            if name and version:
                seen.setdefault((name, version), {"name": name, "version": version})
    return list(seen.values())


def _spec_shipment(sf: dict[str, Any]) -> dict[str, Any]:
    """The ShipmentFootprint as iLEAP 1.0.0 encodes it: a TCE's ``packagingOrTrEqAmount`` is a
    Decimal (a string, "2.25" for a 45 ft container) where the pack's file (format_version 2) writes
    a JSON integer. Only the TCEs that need it are copied; a file that writes strings passes as is."""
    tces = sf.get("tces") or []
    if not any(isinstance(t.get("packagingOrTrEqAmount"), int | float) for t in tces):
        return sf
    fixed = [
        {**t, "packagingOrTrEqAmount": decimal_text(dec(t["packagingOrTrEqAmount"]))}
        if isinstance(t.get("packagingOrTrEqAmount"), int | float)
        else t
        for t in tces
    ]
    return {**sf, "tces": fixed}


def _records(doc: Mapping[str, Any], source: PackSource) -> list[Record]:
    tocs = {t["tocId"]: t for t in doc.get("tocs") or []}
    hocs = {h["hocId"]: h for h in doc.get("hocs") or []}
    exempted, exempted_text = _exempted(doc)
    origin = f"From evidence pack {source.pack_id} version {source.pack_version} (pack hash {source.pack_hash})."
    boundary = (
        "Transport chain operations per ISO 14083 and the GLEC Framework: well-to-wheel emissions (vehicle "
        "operation, tank-to-wheel, plus energy provision, well-to-tank) of each transport chain element; hub "
        "operations where the run includes them. " + str(doc.get("hub_operations") or "")
    ).strip()
    # Per TOC, its TCEs' WTW and t·km in this pack (the per-t·km value of a TEU-km TOC).
    toc_sums: dict[str, list[Decimal]] = {}
    records: list[Record] = []
    for sf in doc.get("shipmentFootprints") or []:
        tces = sf.get("tces") or []
        for t in tces:
            if t.get("tocId"):
                sums = toc_sums.setdefault(t["tocId"], [_ZERO, _ZERO])
                sums[0] += dec(t.get("co2eWTW"))
                sums[1] += dec(t.get("transportActivity"))
        tkm = sum((dec(t.get("transportActivity")) for t in tces), _ZERO)
        if tkm <= 0:  # hub-only: iLEAP's declared unit (t·km) and amount (> 0) cannot be met
            continue
        wtw = sum((dec(t.get("co2eWTW")) for t in tces), _ZERO)
        primary = sum(
            (
                dec(t.get("co2eWTW"))
                for t in tces
                if (t.get("tocId") in tocs and _toc_is_primary(tocs[t["tocId"]]))
                or (t.get("hocId") in hocs and _hoc_is_measured(hocs[t["hocId"]]))
            ),
            _ZERO,
        )
        used = [tocs[t["tocId"]] for t in tces if t.get("tocId") in tocs]
        modes = ", ".join(dict.fromkeys(str(t.get("mode")) for t in used)) or "hub operations"
        sid = str(sf["shipmentId"])
        per_tkm = decimal_text((wtw / tkm).quantize(_PLACES, ROUND_HALF_EVEN))
        records.append(
            Record(
                kind="ShipmentFootprint",
                local_id=sid,
                name=f"Shipment {sid}",
                description=(
                    f"Transport of shipment {sid}: {len(tces)} transport chain element(s) ({modes}), "
                    f"{decimal_text(dec(sf.get('mass')))} kg, {decimal_text(tkm)} t·km."
                ),
                unit="ton kilometer",
                amount=tkm,
                mass=dec(sf.get("mass")),
                pcf=wtw,
                primary_share=_percent(primary, wtw),
                exempted=exempted,
                exempted_description=exempted_text,
                boundary=boundary,
                sources=_sources(used),
                comment=(
                    f"iLEAP ShipmentFootprint: the PCF is the shipment's total WTW emissions, {decimal_text(wtw)} "
                    f"kg CO2e over its {decimal_text(tkm)} t·km (the declared amount), i.e. {per_tkm} kg CO2e "
                    f"per t·km. {origin}"
                ),
                data=_spec_shipment(sf),
            )
        )
    for toc_id, toc in tocs.items():
        if toc.get("transportActivityUnit") == "TEUkm":
            wtw, tkm = toc_sums.get(toc_id, [_ZERO, _ZERO])
            pcf = (wtw / tkm).quantize(_PLACES, ROUND_HALF_EVEN) if tkm > 0 else _ZERO
            how = (
                f"The TOC's intensity is per TEU-km ({toc.get('co2eIntensityWTW')} kg CO2e/TEU-km); the "
                f"declared unit is the ton kilometer, so the PCF is its TCEs' WTW emissions over their t·km "
                f"in this pack, {decimal_text(pcf)} kg CO2e per t·km (9 decimals)."
            )
        else:
            pcf = dec(toc.get("co2eIntensityWTW"))
            how = f"iLEAP TOC: the PCF is the TOC's WTW intensity, {decimal_text(pcf)} kg CO2e per t·km."
        records.append(
            Record(
                kind="TOC",
                local_id=toc_id,
                name=f"TOC {toc_id}",
                description=str(toc.get("description") or f"Transport operation category {toc_id}"),
                unit="ton kilometer",
                amount=Decimal(1),
                mass=Decimal(1),
                pcf=pcf,
                primary_share=Decimal(100) if _toc_is_primary(toc) else _ZERO,
                exempted=_ZERO,
                exempted_description="None: the intensity is over the calculated rows of this operation category.",
                boundary=boundary,
                sources=_sources([toc]),
                comment=f"{how} {origin}",
                data=toc,
            )
        )
    for hoc_id, hoc in hocs.items():
        pcf = dec(hoc.get("co2eIntensityWTW"))
        records.append(
            Record(
                kind="HOC",
                local_id=hoc_id,
                name=f"HOC {hoc_id}",
                description=str(hoc.get("description") or f"Hub operation category {hoc_id}"),
                unit="kilogram",
                amount=Decimal(1000),
                mass=Decimal(1000),
                pcf=pcf,
                primary_share=Decimal(100) if _hoc_is_measured(hoc) else _ZERO,
                exempted=_ZERO,
                exempted_description="None: the intensity is over the calculated hub rows of this category.",
                boundary=boundary,
                sources=[],
                comment=(
                    f"iLEAP HOC: the PCF is the HOC's WTW intensity, {decimal_text(pcf)} kg CO2e per tonne "
                    f"handled (declared amount 1000 kg). {origin}"
                ),
                data=hoc,
            )
        )
    return records
