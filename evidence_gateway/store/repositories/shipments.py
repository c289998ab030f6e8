"""Shipments (an import's rows): the reads of one row by id. The calculation's bulk read of a
workspace's rows is store/shipment_results.py's, next to the results it writes."""

from __future__ import annotations

from evidence_gateway.models import Shipment
from evidence_gateway.store.record_types import ShipmentRecord
from evidence_gateway.store.repository import Repository


class ShipmentRepository(Repository[Shipment, ShipmentRecord]):
    model = Shipment
    record = ShipmentRecord
    kind = "shipment"
    time_column = "row_index"  # no creation time: a list is in import order (none is served yet)
