"""Rendering a pack's artifacts and storing them, with the shipment rows streamed from the database.

The rows are read once, in keyset pages, by one producer thread and handed page by page to the
renderers that list them (CSV, XLSX, JSON, iLEAP), each in its own thread behind a small
bounded queue: at most a few pages are in memory at any time, shared by them. Finished files
spill to temporary files and are stored one at a time, each in its own short write transaction,
so no write lock is held while anything renders. A file is copied into the database a slice at
a time (SQLite: incremental blob writes; PostgreSQL: one row per slice), never held whole.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import queue
import tempfile
import threading
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import IO, Any

from sqlalchemy import func, select, update
from sqlalchemy.ext.asyncio import AsyncSession
from sqlmodel import col

from evidence_gateway import checkpoints, sqlite_blobs
from evidence_gateway.artifacts import SPECS, ArtifactSpec
from evidence_gateway.artifacts.data import PackData, ShipmentLine
from evidence_gateway.errors import Conflict
from evidence_gateway.leases import NODE_ID
from evidence_gateway.models import (
    ArtifactContent,
    ArtifactContentChunk,
    ArtifactStatus,
    PackArtifact,
    ReportPack,
    Shipment,
    ShipmentEmission,
)
from evidence_gateway.resolvers.context import Ctx
from evidence_gateway.timeutil import utcnow

ROW_CHUNK = 2_000
SPOOL_BYTES = 1024 * 1024
# Bytes per stored row on PostgreSQL (ArtifactContentChunk): the driver holds one at a time.
CHUNK_BYTES = 1024 * 1024
QUEUE_PAGES = 2
_POLL_SECONDS = 0.05
_END = object()


class RenderAborted(Exception):
    """Another thread of the same pack failed; this one stops too."""


async def render_and_store(
    ctx: Ctx, data: PackData, batch_ids: list[uuid.UUID], artifacts: dict[str, PackArtifact]
) -> dict[str, str]:
    """Render all nine artifacts, store each; returns content SHA-256 by artifact type."""
    row_specs = [s for s in SPECS.values() if s.needs_rows]
    files = await _render_row_artifacts(ctx, data, batch_ids, row_specs)
    hashes: dict[str, str] = {}
    try:
        for kind, spec in SPECS.items():
            if spec.needs_rows:
                out, digest = files.pop(kind.value)
            else:
                out, digest = await _render_plain(spec, data)
            with out:
                await _store(ctx, artifacts[kind.value], out, digest)
            hashes[kind.value] = digest
    finally:
        for out, _digest in files.values():
            out.close()
    return hashes


async def _render_row_artifacts(
    ctx: Ctx, data: PackData, batch_ids: list[uuid.UUID], specs: list[ArtifactSpec]
) -> dict[str, tuple[IO[bytes], str]]:
    loop = asyncio.get_running_loop()
    queues: list[queue.Queue[Any]] = [queue.Queue(maxsize=QUEUE_PAGES) for _ in specs]
    closed = [False] * len(specs)
    abort = threading.Event()

    def put(i: int, item: Any) -> None:
        while not closed[i]:
            if abort.is_set():
                raise RenderAborted()
            try:
                queues[i].put(item, timeout=_POLL_SECONDS)
                return
            except queue.Full:
                continue

    def produce() -> None:
        try:
            for page in _pages(loop, ctx, data.run.id, batch_ids, data.factor_refs()):
                for i in range(len(queues)):
                    put(i, page)
            for i in range(len(queues)):
                put(i, _END)
        except BaseException:
            abort.set()
            raise

    def rows(i: int) -> Iterator[ShipmentLine]:
        while True:
            try:
                item = queues[i].get(timeout=_POLL_SECONDS)
            except queue.Empty:
                if abort.is_set():
                    raise RenderAborted() from None
                continue
            if item is _END:
                return
            yield from item

    def consume(i: int) -> tuple[IO[bytes], str]:
        try:
            return _render_file(specs[i], data, rows(i))
        except BaseException:
            abort.set()
            raise
        finally:
            closed[i] = True

    # A pool per pack: a shared one could fill with consumers waiting on producers it cannot start.
    pool = ThreadPoolExecutor(max_workers=len(specs) + 1, thread_name_prefix="pack-render")
    jobs: list[Callable[[], Any]] = [produce, *(lambda i=i: consume(i) for i in range(len(specs)))]
    gathered = asyncio.gather(*(loop.run_in_executor(pool, job) for job in jobs), return_exceptions=True)
    try:
        results = await asyncio.shield(gathered)
    except BaseException:
        abort.set()  # cancelled: the threads stop at their next page instead of rendering on
        gathered.add_done_callback(lambda f: _close_outputs(f.result()[1:]))
        raise
    finally:
        # Never wait here: a thread may need this event loop to finish its page query.
        pool.shutdown(wait=False)
    outputs = results[1:]
    errors = [r for r in results if isinstance(r, BaseException)]
    if errors:
        _close_outputs(outputs)
        # The first real failure, not the RenderAborted it caused elsewhere.
        raise next((e for e in errors if not isinstance(e, RenderAborted)), errors[0])
    return {spec.artifact_type.value: out for spec, out in zip(specs, outputs, strict=True)}


def _close_outputs(outputs: list[Any]) -> None:
    for r in outputs:
        if not isinstance(r, BaseException):
            r[0].close()


async def _render_plain(spec: ArtifactSpec, data: PackData) -> tuple[IO[bytes], str]:
    """A file without rows, rendered in a thread; if we are cancelled meanwhile, it is closed when done."""
    future = asyncio.get_running_loop().run_in_executor(None, _render_file, spec, data, iter(()))
    try:
        return await asyncio.shield(future)
    except asyncio.CancelledError:
        future.add_done_callback(lambda f: None if f.cancelled() or f.exception() else f.result()[0].close())
        raise


def _render_file(spec: ArtifactSpec, data: PackData, rows: Iterator[ShipmentLine]) -> tuple[IO[bytes], str]:
    """Render into a spooled file (large files go to disk); returns it rewound, with its SHA-256."""
    out = tempfile.SpooledTemporaryFile(max_size=SPOOL_BYTES)
    try:
        spec.render(data, rows, out)  # type: ignore[arg-type]
        out.seek(0)
        digest = hashlib.sha256()
        while block := out.read(SPOOL_BYTES):
            digest.update(block)
        out.seek(0)
    except BaseException:
        out.close()
        raise
    return out, digest.hexdigest()  # type: ignore[return-value]


async def _store(ctx: Ctx, artifact: PackArtifact, out: IO[bytes], digest: str) -> None:
    """Store one file, only while this node still holds the pack's lease: once the sweeper has
    failed the pack, a late file must not make one of its artifacts readable again.

    The bytes go in a slice at a time within the one transaction that also marks the artifact
    generated, so a file is either all there and readable or not there at all.
    """
    size = await asyncio.to_thread(_size_of, out)
    async with ctx.db.write() as session:
        held = await session.execute(
            update(ReportPack)
            .where(col(ReportPack.id) == artifact.report_pack_id, col(ReportPack.lease_owner) == NODE_ID)
            .values(row_version=col(ReportPack.row_version) + 1)
        )
        if not held.rowcount:  # type: ignore[attr-defined]
            raise Conflict(
                "the pack generation was interrupted before it completed; generate again",
                reason="interrupted",
                pack_id=str(artifact.report_pack_id),
            )
        if ctx.db.is_sqlite:
            await _store_blob(session, artifact.id, out, size)
        else:
            await _store_chunks(session, artifact.id, out)
        await session.execute(
            update(PackArtifact)
            .where(col(PackArtifact.id) == artifact.id)
            .values(
                status=ArtifactStatus.generated.value,
                content_sha256=digest,
                size_bytes=size,
                generated_at=utcnow(),
            )
        )
    await checkpoints.reached(checkpoints.PACK_ARTIFACT_STORED, ctx.settings.pause_at)


def _size_of(out: IO[bytes]) -> int:
    size = out.seek(0, os.SEEK_END)
    out.seek(0)
    return size


async def _store_blob(session: AsyncSession, artifact_id: uuid.UUID, out: IO[bytes], size: int) -> None:
    """SQLite: a zero-filled BLOB of the final size, then filled slice by slice in place."""
    table = ArtifactContent.__table__  # type: ignore[attr-defined]
    inserted = await session.execute(table.insert().values(artifact_id=artifact_id, content=func.zeroblob(size)))
    await sqlite_blobs.fill(session, table.name, "content", inserted.lastrowid, out, size)  # type: ignore[attr-defined]


async def _store_chunks(session: AsyncSession, artifact_id: uuid.UUID, out: IO[bytes]) -> None:
    """PostgreSQL: one row per slice, in order."""
    table = ArtifactContentChunk.__table__  # type: ignore[attr-defined]
    seq = 0
    while block := await asyncio.to_thread(out.read, CHUNK_BYTES):
        await session.execute(table.insert().values(artifact_id=artifact_id, seq=seq, data=block))
        seq += 1


def _pages(
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


_ROW_COLUMNS = (
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
            col(Shipment.org_id) == ctx.org_id,
        )
        .order_by(col(ShipmentEmission.row_index))
        .limit(ROW_CHUNK)
    )
    async with ctx.db.read() as session:
        result = await session.execute(stmt)
        # factor_ref names the factor row the result used (the methodology statement lists it).
        return [ShipmentLine(batch_id, *row, refs.get(row[_FACTOR_AT]) if row[_FACTOR_AT] else None) for row in result]


_FACTOR_AT = ShipmentLine._fields.index("factor_id") - 1  # the row has no import_batch_id
