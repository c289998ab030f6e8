"""A pack's calculated shipment rows as iLEAP Transport Activity Data (TAD), one per transport leg.

iLEAP Technical Specifications 1.0.0, "Transport Activity Data": every transport TCE of the pack's
iLEAP file is one imported row (its ``tceId`` is the row id), so it gives one TAD: the row's
distance (with its GLEC type), mass, mode (its TOC's), packaging, and its shipment as the
consignment. Hub TCEs are not transport activity and give none; excluded rows have no TCE.

What the file does not carry comes from ``PackSource.rows`` (the pack's own ``shipment_csv``,
through ``row_facts_from_shipment_csv``): the places and the date as imported. The import has no
country for a place, and iLEAP's Location requires one, so ``country`` is ``ZZ`` (ISO 3166-1
user-assigned; "unknown region" in Unicode CLDR) with the imported text as ``city``. It has one
date per row, the shipment date: ``departureAt`` is that day at 00:00 UTC and ``arrivalAt`` the
same instant (no arrival is recorded); a row without a date states the reference period
(``departureAt`` its start, ``arrivalAt`` its exclusive end). docs/ileap-mapping.md lists it all.

``activityId`` is uuid5 of (pack, "TAD", row id): stable across calls, distinct across packs.
"""

from __future__ import annotations

import csv
import io
from datetime import date
from decimal import Decimal
from typing import Any

from evidence_gateway.exchange.footprints import PackSource, RowFacts, iso_utc, stable_id

UNKNOWN_COUNTRY = "ZZ"
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def _text(value: str) -> str | None:
    """A user-text cell of the shipment CSV back as imported (the CSV prefixes ``'`` to text
    that would start a formula)."""
    if value == "":
        return None
    if value.startswith("'") and value[1:].startswith(_FORMULA_START):
        return value[1:]
    return value


def row_facts_from_shipment_csv(data: bytes) -> dict[str, RowFacts]:
    """Row id -> places and date, from a pack's ``shipment_csv`` artifact (docs/packs.md)."""
    reader = csv.DictReader(io.StringIO(data.decode("utf-8-sig"), newline=""))
    out: dict[str, RowFacts] = {}
    for row in reader:
        raw_date = row.get("shipment_date") or ""
        out[row["shipment_id"]] = RowFacts(
            origin=_text(row.get("origin") or ""),
            destination=_text(row.get("destination") or ""),
            shipment_date=date.fromisoformat(raw_date) if raw_date else None,
        )
    return out


def _location(text: str | None) -> dict[str, Any]:
    city = (text or "").strip()
    return {"city": city or "unknown", "country": UNKNOWN_COUNTRY}


def _times(tce: dict[str, Any], facts: RowFacts | None, source: PackSource) -> tuple[str, str]:
    if facts is not None and facts.shipment_date is not None:
        day = f"{facts.shipment_date.isoformat()}T00:00:00Z"
        return day, day
    if tce.get("departureAt"):
        return str(tce["departureAt"]), str(tce["departureAt"])
    return iso_utc(source.period_start), iso_utc(source.period_end)


def transport_activity_data(source: PackSource) -> list[dict[str, Any]]:
    """One TAD per transport TCE of the pack, in the file's order (shipments, then legs)."""
    doc = source.ileap
    tocs = {t["tocId"]: t for t in doc.get("tocs") or []}
    out: list[dict[str, Any]] = []
    for sf in doc.get("shipmentFootprints") or []:
        for tce in sf.get("tces") or []:
            toc = tocs.get(tce.get("tocId") or "")
            if toc is None:  # a hub TCE
                continue
            row_id = str(tce["tceId"])
            facts = source.rows.get(row_id)
            departure, arrival = _times(tce, facts, source)
            tad: dict[str, Any] = {
                "activityId": str(stable_id(source.pack_id, "TAD", row_id)),
                "consignmentIds": [str(sf["shipmentId"])],
                "distance": dict(tce["distance"]),
                "mass": str(tce["mass"]),
                "origin": _location(facts.origin if facts else None),
                "destination": _location(facts.destination if facts else None),
                "departureAt": departure,
                "arrivalAt": arrival,
                "mode": toc["mode"],
            }
            amount = tce.get("packagingOrTrEqAmount")
            if "packagingOrTrEqType" in tce and amount is not None and Decimal(str(amount)) % 1 == 0:
                # TAD's amount is an integer (a TCE's is a Decimal string in iLEAP 1.0.0).
                tad["packagingOrTrEqType"] = tce["packagingOrTrEqType"]
                tad["packagingOrTrEqAmount"] = int(Decimal(str(amount)))
            out.append(tad)
    return out
