"""The shipment rows a pack lists, read once from the database in keyset pages.

A producer thread (packs/render.py) pulls the pages through the event loop's database, so the
renderers never touch a session; each page is a list of plain ShipmentLine tuples.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator

from evidence_gateway.artifacts.data import ShipmentLine
from evidence_gateway.core.context import Ctx
from evidence_gateway.store.repositories.shipments import ShipmentRepository

ROW_CHUNK = 2_000


def pages(
    loop: asyncio.AbstractEventLoop,
    ctx: Ctx,
    run_id: uuid.UUID,
    batch_ids: list[uuid.UUID],
    refs: dict[uuid.UUID, str],
) -> Iterator[list[ShipmentLine]]:
    """Runs in the producer thread: pages of rows from the event loop's database, in import order."""
    lines = ShipmentRepository(ctx).pack_lines
    for batch_id in batch_ids:
        after = -1
        while True:
            page = asyncio.run_coroutine_threadsafe(lines(run_id, batch_id, after, ROW_CHUNK, refs), loop).result()
            if page:
                yield page
            if len(page) < ROW_CHUNK:
                break
            after = page[-1].row_index
