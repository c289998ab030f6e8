"""The PACT spelling of one exchanged record: PACT 2.x (2.3) and PACT 3.0 ProductFootprints.

Both majors are written from the same ``Record`` so a recipient on either gets the same numbers;
what differs is the names and types PACT gives them (2.x ``declaredUnit``, ``unitaryProductAmount``,
``pCfExcludingBiogenic``, percentages as JSON numbers; 3.0 ``declaredUnitOfMeasurement``,
``declaredUnitAmount``, ``pcfExcludingBiogenicUptake``, percentages as decimal strings, the CPC
code as a ``productClassifications`` URN). footprints.py decides the values; docs/ileap-mapping.md
is the table.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any, Literal
from urllib.parse import quote

Kind = Literal["ShipmentFootprint", "TOC", "HOC"]

V2_SPEC_VERSION = "2.3.0"
V3_SPEC_VERSION = "3.0.0"
# iLEAP 1.0.0: DataModelExtension.specVersion MUST be "2.0.0" (the Data Model Extensions spec).
EXTENSION_SPEC_VERSION = "2.0.0"
DOCUMENTATION = "https://sine-fdn.github.io/ileap-extension/"
DATA_SCHEMA: dict[Kind, str] = {
    "ShipmentFootprint": "https://api.ileap.sine.dev/shipment-footprint.json",
    "TOC": "https://api.ileap.sine.dev/toc.json",
    "HOC": "https://api.ileap.sine.dev/hoc.json",
}
URN_KIND: dict[Kind, str] = {"ShipmentFootprint": "shipment", "TOC": "toc", "HOC": "hoc"}
CPC_LOGISTICS = "83117"
V3_CLASSIFICATION = f"urn:pact:productclassification:un-cpc:{CPC_LOGISTICS}"
# PACT 2.x caps exemptedEmissionsPercent at 5 (its text, and SINE's schema); 3.0 removed the cap.
# A host may decline to serve a pack above it over /2 (the value is never altered to fit).
V2_EXEMPTED_LIMIT = Decimal(5)
# The GWP set of the factor editions (IPCC AR5, 100 years: artifacts/fuel_properties.py).
GWP = "AR5"
# PACT 2.x's deprecated list has no ISO 14083; GHG Protocol, as SINE's reference mapping states it.
V2_STANDARDS_USED = ["GHG Protocol Product standard"]
STANDARDS = ["ISO14083"]
SECTOR_RULES = [{"operator": "Other", "ruleNames": ["GLEC Framework v3"], "otherOperatorName": "Smart Freight Centre"}]


@dataclass(frozen=True, slots=True)
class Owner:
    """What the data owner's pack adds to every footprint of it."""

    company_name: str
    company_id: uuid.UUID
    created: datetime
    period_start: datetime
    period_end: datetime


@dataclass(frozen=True, slots=True)
class Record:
    """One footprint before it is spelled for a PACT major."""

    kind: Kind
    local_id: str
    name: str
    description: str
    unit: Literal["ton kilometer", "kilogram"]
    amount: Decimal
    mass: Decimal
    pcf: Decimal
    primary_share: Decimal | None
    exempted: Decimal
    exempted_description: str
    boundary: str
    sources: list[dict[str, str]]
    comment: str
    data: dict[str, Any]


def decimal_text(value: Decimal) -> str:
    """Plain decimal text: no exponent, no trailing zeros, "0" for any zero."""
    if value == 0:
        return "0"
    return format(value.normalize(), "f")


def iso_utc(value: datetime) -> str:
    if value.tzinfo is None:
        raise ValueError("PackSource times must be timezone-aware (UTC)")
    return value.astimezone(UTC).isoformat().replace("+00:00", "Z")


def product_urn(kind: Kind, local_id: str) -> str:
    """iLEAP's product id; the id percent-encoded where a URN may not carry a character as is."""
    encoded = quote(local_id, safe=":@!$&()*+,;=-._~")
    return f"urn:pathfinder:product:customcode:vendor-assigned:{URN_KIND[kind]}:{encoded}"


def _extension(r: Record) -> list[dict[str, Any]]:
    return [
        {
            "specVersion": EXTENSION_SPEC_VERSION,
            "dataSchema": DATA_SCHEMA[r.kind],
            "documentation": DOCUMENTATION,
            "data": r.data,
        }
    ]


def _head(fid: uuid.UUID, r: Record, s: Owner, spec_version: str) -> dict[str, Any]:
    return {
        "id": str(fid),
        "specVersion": spec_version,
        "created": iso_utc(s.created),
        "status": "Active",
        "companyName": s.company_name,
        "companyIds": [f"urn:uuid:{s.company_id}"],
        "productDescription": r.description,
        "productIds": [product_urn(r.kind, r.local_id)],
    }


def v2(fid: uuid.UUID, r: Record, s: Owner) -> dict[str, Any]:
    pcf: dict[str, Any] = {
        "declaredUnit": r.unit,
        "unitaryProductAmount": decimal_text(r.amount),
        "productMassPerDeclaredUnit": decimal_text(r.mass),
        "pCfExcludingBiogenic": decimal_text(r.pcf),
        "fossilGhgEmissions": decimal_text(r.pcf),
        "fossilCarbonContent": "0",
        "biogenicCarbonContent": "0",
        "characterizationFactors": GWP,
        "ipccCharacterizationFactorsSources": [GWP],
        "crossSectoralStandardsUsed": list(V2_STANDARDS_USED),
        "crossSectoralStandards": list(STANDARDS),
        "productOrSectorSpecificRules": [dict(rule) for rule in SECTOR_RULES],
        "boundaryProcessesDescription": r.boundary,
        "referencePeriodStart": iso_utc(s.period_start),
        "referencePeriodEnd": iso_utc(s.period_end),
        "exemptedEmissionsPercent": float(r.exempted),
        "exemptedEmissionsDescription": r.exempted_description,
        "packagingEmissionsIncluded": False,
    }
    if r.sources:
        pcf["secondaryEmissionFactorSources"] = [dict(x) for x in r.sources]
    if r.primary_share is not None:
        pcf["primaryDataShare"] = float(r.primary_share)
    head = _head(fid, r, s, V2_SPEC_VERSION)
    return {
        **head,
        "version": 1,
        "productCategoryCpc": CPC_LOGISTICS,
        "productNameCompany": r.name,
        "comment": r.comment,
        "pcf": pcf,
        "extensions": _extension(r),
    }


def v3(fid: uuid.UUID, r: Record, s: Owner) -> dict[str, Any]:
    pcf: dict[str, Any] = {
        "declaredUnitOfMeasurement": r.unit,
        "declaredUnitAmount": decimal_text(r.amount),
        "productMassPerDeclaredUnit": decimal_text(r.mass),
        "referencePeriodStart": iso_utc(s.period_start),
        "referencePeriodEnd": iso_utc(s.period_end),
        "boundaryProcessesDescription": r.boundary,
        # Transport services take up no biogenic CO2: including and excluding uptake are the same.
        "pcfExcludingBiogenicUptake": decimal_text(r.pcf),
        "pcfIncludingBiogenicUptake": decimal_text(r.pcf),
        "fossilGhgEmissions": decimal_text(r.pcf),
        "fossilCarbonContent": "0",
        "biogenicCarbonContent": "0",
        "packagingEmissionsIncluded": False,
        "ipccCharacterizationFactors": [GWP],
        "crossSectoralStandards": list(STANDARDS),
        "productOrSectorSpecificRules": [dict(rule) for rule in SECTOR_RULES],
        "exemptedEmissionsPercent": decimal_text(r.exempted),
        "exemptedEmissionsDescription": r.exempted_description,
    }
    if r.sources:
        pcf["secondaryEmissionFactorSources"] = [dict(x) for x in r.sources]
    if r.primary_share is not None:
        pcf["primaryDataShare"] = decimal_text(r.primary_share)
    return {
        **_head(fid, r, s, V3_SPEC_VERSION),
        "productClassifications": [V3_CLASSIFICATION],
        "productNameCompany": r.name,
        "comment": r.comment,
        "pcf": pcf,
        "extensions": _extension(r),
    }
