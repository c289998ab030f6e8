"""Writing and reading a large artifact in SQLite a slice at a time, never all of it at once.

Writing: binding a 50 MB file as one value held it three times (the bytes, the driver's copy,
SQLite's record), so a file is stored as ``zeroblob(size)`` and then filled slice by slice
through an incremental blob handle, inside the caller's write transaction: the file is
complete when that commits, and not there at all if it does not.

Reading: SQL ``substr()`` over a BLOB makes SQLite materialise the whole value for every call, so each
megabyte streamed cost the whole file in memory (24 downloads of 24 MB peaked near +500 MB).
SQLite's incremental blob I/O (``sqlite3.Connection.blobopen``) reads only the pages asked
for. One handle is kept per download: SQLite caches where each overflow page of the value is
on the open handle, so every next slice is a seek rather than a walk down the page chain.
The handle lives on a connection of its own (the async driver does not expose blob I/O) and
its reads run in a worker thread; its read transaction keeps the bytes consistent to the end.
"""

from __future__ import annotations

import asyncio
import sqlite3
import uuid
from collections.abc import AsyncIterator
from typing import IO, Any

from sqlalchemy.ext.asyncio import AsyncSession

from evidence_gateway.store.db import driver_connection
from evidence_gateway.store.internals import on_aiosqlite_thread

CACHE_KIB = 64
# Bytes per slice sent: every concurrent download holds about one slice (and the socket buffer
# a copy of it), so smaller slices keep many downloads flat; blob reads make them cheap.
STREAM_CHUNK = 256 * 1024
# Bytes per slice written: one slice of the spooled file is in memory at a time.
WRITE_CHUNK = 1024 * 1024


class BlobGone(LookupError):
    """The row is not there (any more)."""


def _open(path: str, table: str, column: str, key_column: str, key: Any) -> tuple[sqlite3.Connection, Any]:
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False, isolation_level=None)
    try:
        # Each page is read once, in order: a page cache would only hold memory (2 MB by default,
        # per concurrent download).
        con.execute(f"PRAGMA cache_size = -{CACHE_KIB}")
        con.execute("BEGIN")  # one snapshot for the whole read (WAL readers never block writers)
        # rowid is looked up inside the snapshot: VACUUM may renumber rows of tables like ours.
        row = con.execute(f"SELECT rowid FROM {table} WHERE {key_column} = ?", (key,)).fetchone()
        if row is None:
            raise BlobGone(key)
        return con, con.blobopen(table, column, row[0], readonly=True)
    except BaseException:
        con.close()
        raise


def _read(blob: Any, offset: int, length: int) -> bytes:
    blob.seek(offset)
    return bytes(blob.read(length))


def _close(con: sqlite3.Connection, blob: Any) -> None:
    try:
        blob.close()
    finally:
        con.close()


async def chunks(
    path: str, table: str, column: str, key_column: str, key: uuid.UUID, size: int, chunk: int
) -> AsyncIterator[bytes]:
    """``size`` bytes of one row's BLOB, ``chunk`` bytes at a time (SQLAlchemy keeps Uuid keys
    as 32 hex digits on SQLite)."""
    con, blob = await asyncio.to_thread(_open, path, table, column, key_column, key.hex)
    try:
        offset = 0
        while offset < size:
            piece = await asyncio.to_thread(_read, blob, offset, min(chunk, size - offset))
            if not piece:
                break
            yield piece
            offset += len(piece)
    finally:
        await asyncio.shield(asyncio.to_thread(_close, con, blob))


def _fill(con: sqlite3.Connection, table: str, column: str, rowid: int, source: IO[bytes], size: int) -> None:
    """Runs on the connection's own thread: copy ``source`` into the zero-filled BLOB."""
    written = 0
    with con.blobopen(table, column, rowid) as blob:
        while block := source.read(WRITE_CHUNK):
            blob.write(block)  # a handle cannot grow the value: more bytes than size raise here
            written += len(block)
    if written != size:
        raise ValueError(f"{table}.{column} row {rowid}: wrote {written} bytes into a BLOB of {size}")


async def fill(session: AsyncSession, table: str, column: str, rowid: int, source: IO[bytes], size: int) -> None:
    """Write ``source`` (``size`` bytes, rewound) into the ``zeroblob(size)`` the session inserted
    at ``rowid``, within the session's open write transaction.

    aiosqlite has no blob API, so the copy runs as one call on aiosqlite's own thread, which owns
    the session's connection (SQLAlchemy's adapter queues its isolation-level changes the same
    way).
    """
    driver = await driver_connection(session)
    await on_aiosqlite_thread(driver, lambda con: _fill(con, table, column, rowid, source, size))
