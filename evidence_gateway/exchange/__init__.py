"""The iLEAP / PACT exchange: what a data recipient is served, mapped from a sealed evidence pack.

``footprints`` turns a pack's iLEAP file (``ileap-shipment-footprints.json``) into PACT
ProductFootprints, v2 and v3 from one record, with the iLEAP ShipmentFootprint, TOC or HOC as the
extension; ``tad`` turns the same file into iLEAP Transport Activity Data. Both are pure functions
of a ``PackSource``: no database, no clock, so the same pack always maps to the same objects (ids
included) and the HTTP host only decides who may see which pack. docs/ileap-mapping.md is the
field-by-field table.
"""

from __future__ import annotations

from evidence_gateway.exchange.footprints import Footprint, PackSource, RowFacts, product_footprints
from evidence_gateway.exchange.tad import row_facts_from_shipment_csv, transport_activity_data

__all__ = [
    "Footprint",
    "PackSource",
    "RowFacts",
    "product_footprints",
    "row_facts_from_shipment_csv",
    "transport_activity_data",
]
