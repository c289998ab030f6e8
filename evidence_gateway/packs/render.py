"""Rendering a pack's artifacts, with the shipment rows streamed from the database, and storing them.

The rows are read once, in keyset pages (rows.py), by one producer thread and handed page by page
to the renderers that read them (CSV, XLSX, JSON, iLEAP; the PDF and the methodology statement for
the short report's tallies), each in its own thread behind a small bounded queue: at most a few
pages are in memory at any time, shared by them. Finished files spill to temporary files and are
stored one at a time (store.py), each in its own short write transaction, so no write lock is held
while anything renders.
"""

from __future__ import annotations

import asyncio
import hashlib
import queue
import tempfile
import threading
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import IO, Any, BinaryIO, cast

from evidence_gateway.artifacts import ArtifactSpec, specs
from evidence_gateway.artifacts.data import PackData, ShipmentLine
from evidence_gateway.core.context import Ctx
from evidence_gateway.models import PackArtifact
from evidence_gateway.packs.rows import pages
from evidence_gateway.store.artifact_files import store_file

SPOOL_BYTES = 1024 * 1024
QUEUE_PAGES = 2
_POLL_SECONDS = 0.05
_END = object()


class RenderAborted(Exception):
    """Another thread of the same pack failed; this one stops too."""


async def render_and_store(
    ctx: Ctx, data: PackData, batch_ids: list[uuid.UUID], artifacts: dict[str, PackArtifact]
) -> dict[str, str]:
    """Render all nine artifacts, store each; returns content SHA-256 by artifact type."""
    row_specs = [s for s in specs().values() if s.needs_rows]
    files = await _render_row_artifacts(ctx, data, batch_ids, row_specs)
    hashes: dict[str, str] = {}
    try:
        for kind, spec in specs().items():
            if spec.needs_rows:
                out, digest = files.pop(kind.value)
            else:
                out, digest = await _render_plain(spec, data)
            with out:
                await store_file(ctx, artifacts[kind.value], out, digest)
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
            for page in pages(loop, ctx, data.run.id, batch_ids, data.factor_refs()):
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
    rendered: list[tuple[IO[bytes], str]] = [r for r in outputs if not isinstance(r, BaseException)]
    return {spec.artifact_type.value: out for spec, out in zip(specs, rendered, strict=True)}


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
        spec.render(data, rows, cast(BinaryIO, out))  # typeshed: SpooledTemporaryFile is IO[bytes], not BinaryIO
        out.seek(0)
        digest = hashlib.sha256()
        while block := out.read(SPOOL_BYTES):
            digest.update(block)
        out.seek(0)
    except BaseException:
        out.close()
        raise
    return out, digest.hexdigest()
