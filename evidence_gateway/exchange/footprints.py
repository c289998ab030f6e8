"""PLACEHOLDER (replaced at merge): iLEAP shipment footprints, TOCs and HOCs as PACT
ProductFootprints. Only the shape the host needs: a stable id and the product ids."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

_NS = uuid.UUID("6f1f3c0e-5a8e-4d0b-9a43-3d7f8f2b1c55")


@dataclass(frozen=True)
class PackSource:
    pack_id: uuid.UUID
    pack_version: int
    pack_hash: str
    organization_id: uuid.UUID
    organization_name: str
    created: datetime
    period_start: datetime
    period_end: datetime
    ileap: dict[str, Any]


@dataclass(frozen=True)
class Footprint:
    id: uuid.UUID
    kind: Literal["ShipmentFootprint", "TOC", "HOC"]
    created: datetime
    v2: dict[str, Any]
    v3: dict[str, Any]


def _one(source: PackSource, kind: Literal["ShipmentFootprint", "TOC", "HOC"], local: str) -> Footprint:
    fid = uuid.uuid5(_NS, f"{source.pack_id}/{kind}/{local}")
    created = source.created.isoformat().replace("+00:00", "Z")
    product = f"urn:pathfinder:product:customcode:vendor-assigned:{kind.lower()}:{local}"
    v2 = {"id": str(fid), "specVersion": "2.3.0", "created": created, "productIds": [product]}
    v3 = {"id": str(fid), "specVersion": "3.0.0", "created": created, "productIds": [product]}
    return Footprint(fid, kind, source.created, v2, v3)


def product_footprints(source: PackSource) -> list[Footprint]:
    out = [_one(source, "ShipmentFootprint", str(s["shipmentId"])) for s in source.ileap.get("shipmentFootprints", [])]
    out += [_one(source, "TOC", str(t["tocId"])) for t in source.ileap.get("tocs", [])]
    out += [_one(source, "HOC", str(h["hocId"])) for h in source.ileap.get("hocs", [])]
    return out
