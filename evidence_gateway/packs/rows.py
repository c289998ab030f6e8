"""The shipment rows a pack lists, read once from the database in keyset pages.

A producer thread (packs/render.py) pulls the pages through the event loop's database, so the
renderers never touch a session; each page is a list of plain ShipmentLine tuples.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from typing import Any

from sqlalchemy import select
from sqlmodel import col

from evidence_gateway.artifacts.data import ShipmentLine
from evidence_gateway.core.context import Ctx
from evidence_gateway.core.scoping import owned_by
from evidence_gateway.models import Shipment, ShipmentEmission

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


# Any: SQLModel types class attributes as their values, and select() has no overload for 34 of those.
_ROW_COLUMNS: tuple[Any, ...] = (
    Shipment.row_index,
    Shipment.id,
    Shipment.external_id,
    Shipment.mode,
    Shipment.origin,
    Shipment.destination,
    Shipment.shipment_date,
    Shipment.distance_km,
    Shipment.distance_source,
    Shipment.distance_type,
    Shipment.mass_tonnes,
    Shipment.fuel_type,
    Shipment.fuel_amount,
    Shipment.vehicle_payload_tonnes,
    Shipment.fuel_allocation_share,
    Shipment.carrier_intensity_g_per_tkm,
    Shipment.carrier_intensity_basis,
    ShipmentEmission.included,
    ShipmentEmission.data_tier,
    ShipmentEmission.data_category,
    ShipmentEmission.distance_type,
    ShipmentEmission.activity_distance_km,
    ShipmentEmission.tonne_km,
    ShipmentEmission.allocation_share,
    ShipmentEmission.co2e_ttw_kg,
    ShipmentEmission.co2e_wtt_kg,
    ShipmentEmission.co2e_wtw_kg,
    ShipmentEmission.co2e_kg,
    ShipmentEmission.intensity_g_per_tkm,
    ShipmentEmission.factor_id,
    ShipmentEmission.estimated_co2e_ttw_kg,
    ShipmentEmission.estimated_co2e_wtw_kg,
    ShipmentEmission.flags,
    ShipmentEmission.method_notes,
)


async def _row_page(
    ctx: Ctx, run_id: uuid.UUID, batch_id: uuid.UUID, after: int, refs: dict[uuid.UUID, str]
) -> list[ShipmentLine]:
    """Keyset page over the run's (calculation_run_id, row_index) index, one import batch at a time.

    Driving from that index keeps each page O(page): ordering by the shipment side instead made
    SQLite sort every remaining row per page (quadratic over 50,000 rows).
    """
    stmt = (
        select(*_ROW_COLUMNS)
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
            ShipmentLine._make((batch_id, *row, refs.get(row[_FACTOR_AT]) if row[_FACTOR_AT] else None))
            for row in result
        ]


_FACTOR_AT = ShipmentLine._fields.index("factor_id") - 1  # the row has no import_batch_id
