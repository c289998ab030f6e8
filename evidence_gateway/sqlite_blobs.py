"""Reading a large artifact from SQLite a slice at a time without loading all of it.

SQL ``substr()`` over a BLOB makes SQLite materialise the whole value for every call, so each
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
from typing import Any

CACHE_KIB = 64
# Bytes per slice sent: every concurrent download holds about one slice (and the socket buffer
# a copy of it), so smaller slices keep many downloads flat; blob reads make them cheap.
STREAM_CHUNK = 256 * 1024


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
