"""Shipments (an import's rows): the reads of one row by id, and the rows a pack lists (each
shipment with its stored result of one run). The calculation's bulk read of a workspace's rows
is store/shipment_results.py's, next to the results it writes."""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import ColumnElement, Select, Table, bindparam, select

from evidence_gateway.artifacts.data import ShipmentLine
from evidence_gateway.core.scoping import owned
from evidence_gateway.models import Shipment, ShipmentEmission
from evidence_gateway.models.base import table_of
from evidence_gateway.store.record_types import ShipmentRecord
from evidence_gateway.store.repository import Repository
from evidence_gateway.store.scoped import bound

# Bound by name: each ShipmentLine field is the shipment's column of that name up to
# ``included``, the stored result's after it, except where the names differ below; the two the
# page adds itself (its batch, the factor's reference) are not read.
_SHIPMENT: Table = table_of(Shipment)
_EMISSION: Table = table_of(ShipmentEmission)
_RENAMED = {"shipment_id": "id", "distance_type_used": "distance_type"}
_ADDED = ("import_batch_id", "factor_ref")
_FIRST_RESULT = ShipmentLine._fields.index("included")
_LATER_INPUTS = ("teu",)  # shipment columns added after the results' fields


def _column(at: int, name: str) -> ColumnElement[Any]:
    table = _SHIPMENT if at < _FIRST_RESULT or name in _LATER_INPUTS else _EMISSION
    return table.c[_RENAMED.get(name, name)].label(name)


LINE_COLUMNS: tuple[ColumnElement[Any], ...] = tuple(
    _column(at, name) for at, name in enumerate(ShipmentLine._fields) if name not in _ADDED
)

# Keyset page over the run's (calculation_run_id, row_index) index, one import batch at a time.
# Driving from that index keeps each page O(page): ordering by the shipment side instead made
# SQLite sort every remaining row per page (quadratic over 50,000 rows). Built once.
_LINES: Select[Any] = (
    select(*LINE_COLUMNS)
    .select_from(_EMISSION)
    .join(_SHIPMENT, (_SHIPMENT.c.id == _EMISSION.c.shipment_id) & (_SHIPMENT.c.row_index == _EMISSION.c.row_index))
    .where(
        _EMISSION.c.calculation_run_id == bindparam("run_id"),
        _EMISSION.c.row_index > bindparam("after"),
        _SHIPMENT.c.import_batch_id == bindparam("batch_id"),
        owned(_SHIPMENT),
    )
    .order_by(_EMISSION.c.row_index)
    .limit(bindparam("limit"))
)


class ShipmentRepository(Repository[Shipment, ShipmentRecord]):
    model = Shipment
    record = ShipmentRecord
    kind = "shipment"
    time_column = "row_index"  # no creation time: a list is in import order (none is served yet)

    async def pack_lines(
        self, run_id: uuid.UUID, batch_id: uuid.UUID, after: int, limit: int, refs: dict[uuid.UUID, str]
    ) -> list[ShipmentLine]:
        """Up to ``limit`` of one import batch's rows after row ``after``, each with its result of
        the run, in import order; ``refs`` names the factor row each result used (the pack's
        methodology statement lists it)."""
        params = bound(self.ctx, {"run_id": run_id, "batch_id": batch_id, "after": after, "limit": limit})
        async with self.ctx.db.read() as session:
            found = await session.execute(_LINES, params)
            return [
                ShipmentLine(
                    import_batch_id=batch_id,
                    factor_ref=refs.get(row.factor_id) if row.factor_id else None,
                    **row._mapping,
                )
                for row in found
            ]
