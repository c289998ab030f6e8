"""The shipment rows a pack lists, read once from the database in keyset pages.

A producer thread (packs/render.py) pulls the pages through the event loop's database, so the
renderers never touch a session; each page is a list of plain ShipmentLine tuples.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from typing import Any

from sqlalchemy import ColumnElement, Table, select
from sqlmodel import col

from evidence_gateway.artifacts.data import ShipmentLine
from evidence_gateway.core.context import Ctx
from evidence_gateway.core.scoping import owned_by
from evidence_gateway.models import Shipment, ShipmentEmission
from evidence_gateway.models.base import table_of

ROW_CHUNK = 2_000


def pages(
    loop: asyncio.AbstractEventLoop,
    ctx: Ctx,
    run_id: uuid.UUID,
    batch_ids: list[uuid.UUID],
    refs: dict[uuid.UUID, str],
) -> Iterator[list[ShipmentLine]]:
    """Runs in the producer thread: pages of rows from the event loop's database, in import order."""
    for batch_id in batch_ids:
        after = -1
        while True:
            page = asyncio.run_coroutine_threadsafe(_row_page(ctx, run_id, batch_id, after, refs), loop).result()
            if page:
                yield page
            if len(page) < ROW_CHUNK:
                break
            after = page[-1].row_index


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


ROW_COLUMNS: tuple[ColumnElement[Any], ...] = tuple(
    _column(at, name) for at, name in enumerate(ShipmentLine._fields) if name not in _ADDED
)


async def _row_page(
    ctx: Ctx, run_id: uuid.UUID, batch_id: uuid.UUID, after: int, refs: dict[uuid.UUID, str]
) -> list[ShipmentLine]:
    """Keyset page over the run's (calculation_run_id, row_index) index, one import batch at a time.

    Driving from that index keeps each page O(page): ordering by the shipment side instead made
    SQLite sort every remaining row per page (quadratic over 50,000 rows).
    """
    stmt = (
        select(*ROW_COLUMNS)
        .select_from(ShipmentEmission)
        .join(
            Shipment,
            (col(Shipment.id) == col(ShipmentEmission.shipment_id))
            & (col(Shipment.row_index) == col(ShipmentEmission.row_index)),
        )
        .where(
            col(ShipmentEmission.calculation_run_id) == run_id,
            col(ShipmentEmission.row_index) > after,
            col(Shipment.import_batch_id) == batch_id,
            owned_by(ctx, Shipment),
        )
        .order_by(col(ShipmentEmission.row_index))
        .limit(ROW_CHUNK)
    )
    async with ctx.db.read() as session:
        result = await session.execute(stmt)
        # factor_ref names the factor row the result used (the methodology statement lists it).
        return [
            ShipmentLine(
                import_batch_id=batch_id, factor_ref=refs.get(row.factor_id) if row.factor_id else None, **row._mapping
            )
            for row in result
        ]
