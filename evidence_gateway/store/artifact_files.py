"""Pack files in the database: stored a slice at a time, read back a slice at a time.

SQLite keeps a file as one BLOB in ``artifact_content``, filled in place through an incremental
blob handle (sqlite_blobs.py). PostgreSQL keeps it as consecutive uncompressed rows of
``artifact_content_chunk`` (migration 0008): its driver would hold one bound value whole, plus a
copy in its send buffer. Either way at most a slice of a file is in memory, and a file is stored
in the one short transaction that marks its artifact ``generated``: complete or not there.
"""

from __future__ import annotations

import asyncio
import os
import uuid
from collections.abc import AsyncIterator
from typing import IO

from sqlalchemy import CursorResult, delete, func, select, update
from sqlalchemy.ext.asyncio import AsyncSession
from sqlmodel import col

from evidence_gateway.core import checkpoints
from evidence_gateway.core.context import Ctx
from evidence_gateway.core.leases import NODE_ID
from evidence_gateway.core.timeutil import utcnow
from evidence_gateway.errors import Conflict, NotFound
from evidence_gateway.models import ArtifactContent, ArtifactContentChunk, ArtifactStatus, PackArtifact, ReportPack
from evidence_gateway.models.base import table_of
from evidence_gateway.store import sqlite_blobs
from evidence_gateway.store.db import Database, rows_changed

# Bytes per stored row on PostgreSQL (ArtifactContentChunk): the driver holds one at a time.
CHUNK_BYTES = 1024 * 1024
# Files up to this size are answered whole; larger ones stream.
WHOLE_BYTES = 1024 * 1024


# ---- writing ------------------------------------------------------------------------------------


async def store_file(ctx: Ctx, artifact: PackArtifact, out: IO[bytes], digest: str) -> None:
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
        if not rows_changed(held):
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
    table = table_of(ArtifactContent)
    inserted = await session.execute(table.insert().values(artifact_id=artifact_id, content=func.zeroblob(size)))
    assert isinstance(inserted, CursorResult)  # an INSERT's result: it carries the new rowid
    await sqlite_blobs.fill(session, table.name, "content", inserted.lastrowid, out, size)


async def _store_chunks(session: AsyncSession, artifact_id: uuid.UUID, out: IO[bytes]) -> None:
    """PostgreSQL: one row per slice, in order."""
    table = table_of(ArtifactContentChunk)
    seq = 0
    while block := await asyncio.to_thread(out.read, CHUNK_BYTES):
        await session.execute(table.insert().values(artifact_id=artifact_id, seq=seq, data=block))
        seq += 1


async def discard(session: AsyncSession, pack_id: uuid.UUID) -> None:
    """Remove whatever files of the pack were stored (its generation failed)."""
    artifact_ids = select(col(PackArtifact.id)).where(col(PackArtifact.report_pack_id) == pack_id)
    await session.execute(delete(ArtifactContent).where(col(ArtifactContent.artifact_id).in_(artifact_ids)))
    await session.execute(delete(ArtifactContentChunk).where(col(ArtifactContentChunk.artifact_id).in_(artifact_ids)))


# ---- reading ------------------------------------------------------------------------------------


def _gone(artifact: PackArtifact) -> NotFound:
    return NotFound("artifact content not found", resource="pack_artifact", id=str(artifact.id))


async def read_whole(db: Database, artifact: PackArtifact) -> bytes:
    """A file of at most WHOLE_BYTES, in one piece."""
    async with db.read() as session:
        if db.is_sqlite:
            value = (
                await session.execute(
                    select(col(ArtifactContent.content)).where(col(ArtifactContent.artifact_id) == artifact.id)
                )
            ).scalar_one_or_none()
            if value is None:
                raise _gone(artifact)
            return bytes(value)
        pieces = (
            await session.execute(
                select(col(ArtifactContentChunk.data))
                .where(col(ArtifactContentChunk.artifact_id) == artifact.id)
                .order_by(col(ArtifactContentChunk.seq))
            )
        ).scalars()
        content = b"".join(pieces)
    if len(content) != (artifact.size_bytes or 0):
        raise _gone(artifact)
    return content


def read_slices(db: Database, artifact: PackArtifact) -> AsyncIterator[bytes]:
    """The file a slice at a time: on a SQLite file through incremental blob reads (substr()
    there loads the whole value per slice), on PostgreSQL one stored row per query."""
    size = artifact.size_bytes or 0
    path = db.engine.url.database
    if db.is_sqlite and path:  # an in-memory database is refused (db.refuse_in_memory)
        return sqlite_blobs.chunks(
            path,
            ArtifactContent.__tablename__,
            "content",
            "artifact_id",
            artifact.id,
            size,
            sqlite_blobs.STREAM_CHUNK,
        )
    return _queried_slices(db, artifact, size)


async def _queried_slices(db: Database, artifact: PackArtifact, size: int) -> AsyncIterator[bytes]:
    offset = seq = 0
    while offset < size:
        piece = await _chunk(db, artifact, seq)
        if not piece:
            break
        yield piece
        offset += len(piece)
        seq += 1


async def _chunk(db: Database, artifact: PackArtifact, seq: int) -> bytes:
    async with db.read() as session:
        value = (
            await session.execute(
                select(col(ArtifactContentChunk.data)).where(
                    col(ArtifactContentChunk.artifact_id) == artifact.id, col(ArtifactContentChunk.seq) == seq
                )
            )
        ).scalar_one_or_none()
    if value is None:
        raise _gone(artifact)
    return bytes(value)
