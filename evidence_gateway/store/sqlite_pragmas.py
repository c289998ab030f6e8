"""How every SQLite connection of the server is set up: the async engine's (writes and ORM
reads), the row readers' and the point reads'.

The page cache is each connection's own, 2 MB by SQLite's default. In WAL mode a connection drops
its whole cache when another has committed since its last read, so under writes the readers'
caches mostly held memory rather than hits: after a load they had added about 1 MB of resident
memory (docs/performance.md, issue 29). Their smaller cache keeps a read's hot pages (the B-tree
roots and the first pages of a list); a page it misses is read again from the operating system's
cache. The engine's connections keep SQLite's default: a large import's transaction reads its
indexes' pages again and again, and ran about a tenth slower with the smaller cache.
"""

from __future__ import annotations

import sqlite3
from typing import Any

BUSY_TIMEOUT_MS = 10_000
READER_CACHE_KIB = 512


def on_connect(dbapi_conn: Any, _record: Any) -> None:
    """The engines' connect hook. We issue BEGIN ourselves (db._sqlite_begin): writes take the lock
    up front; reads run in autocommit, each statement seeing a committed snapshot. The driver's
    implicit BEGIN is unreliable."""
    dbapi_conn.isolation_level = None
    cur = dbapi_conn.cursor()
    cur.execute("PRAGMA journal_mode=WAL")
    cur.execute("PRAGMA foreign_keys=ON")
    cur.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    cur.execute("PRAGMA synchronous=NORMAL")
    cur.close()


def on_reader_connect(dbapi_conn: Any, record: Any) -> None:
    """The row readers' connect hook: the engine's, with a reader's page cache."""
    on_connect(dbapi_conn, record)
    reader_cache(dbapi_conn)


def reader_cache(conn: sqlite3.Connection) -> None:
    conn.execute(f"PRAGMA cache_size=-{READER_CACHE_KIB}")
