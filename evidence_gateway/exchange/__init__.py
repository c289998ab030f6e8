"""Exchange: the gateway as an iLEAP / PACT host system (docs/ileap.md).

``footprints`` and ``tad`` map a pack's iLEAP document to PACT ProductFootprints and iLEAP
Transport Activity Data (pure functions); ``auth`` issues and checks the recipients' access
tokens; ``host`` reads what a recipient may see; ``routes`` is the HTTP transport with the
specifications' own error bodies.
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
