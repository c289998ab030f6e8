"""The only reach past a library's public API, one function per library.

Each is the one way found to the speed a hot path needs (docs/performance.md); each library
is pinned below its next minor version in pyproject.toml, and ``tests/test_store_internals.py``
fails naming the library and its version when an upgrade removes what is used here.

- aiosqlite has no call for "run this on the connection's thread, ahead of what comes next":
  the event append (store/event_log.py) and the incremental blob write (store/sqlite_blobs.py)
  queue their work on its worker queue, as its own ``_execute`` does.
- SQLAlchemy keeps a compiled statement's bind processors and result columns private; the
  PostgreSQL fast reads (store/pg_reads.py) take them to run the statement on asyncpg exactly as
  SQLAlchemy would. Its queue pool counts no callers waiting for a connection, nor says the
  overflow it was built with; the saturation metrics (web/observability/saturation.py) read both
  from the pool's queue.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import Any, cast

from sqlalchemy.sql.compiler import SQLCompiler
from sqlalchemy.types import TypeEngine

# What each function reaches for, by library: the test checks they are all still there.
AIOSQLITE_PRIVATE = ("_tx", "_conn")
SQLALCHEMY_PRIVATE = ("_bind_processors", "_result_columns")
SQLALCHEMY_POOL_PRIVATE = ("_pool", "_max_overflow")


def on_aiosqlite_thread(driver: Any, call: Callable[[sqlite3.Connection], None]) -> asyncio.Future[None]:
    """Queue ``call(sqlite3 connection)`` on aiosqlite's worker thread, behind what is queued and
    ahead of what the caller queues next; the future carries its outcome.

    Not awaited here: the event append is queued and the commit issued right after it, so both
    run back to back in the driver's thread without a round trip to the event loop in between.
    """
    future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    driver._tx.put_nowait((future, partial(call, driver._conn)))
    return future


def compiled_parts(
    compiled: SQLCompiler,
) -> tuple[Mapping[str, Callable[[Any], Any]], Sequence[tuple[str, TypeEngine[Any]]]]:
    """A compiled statement's bind processors by parameter name, and its result columns as
    (key, type) in select order: what SQLAlchemy applies around the driver's own execute."""
    binds = cast(Mapping[str, Callable[[Any], Any]], compiled._bind_processors)
    columns = [(column[0], column[3]) for column in compiled._result_columns]
    return binds, columns


def queue_pool_state(pool: Any) -> tuple[int, int]:
    """(callers waiting for a connection, the most connections past its size) of a queue pool.

    The waiters are those of its queue: an asyncio queue's pending getters (the async engine's
    pool) or a thread queue's condition waiters; 0 where the queue has neither.
    """
    queue = pool._pool
    inner = vars(queue).get("_queue")  # AsyncAdaptedQueue's asyncio.Queue, made on first use
    getters = getattr(inner, "_getters", None)
    if getters is not None:
        waiting = sum(1 for waiter in getters if not waiter.done())
    else:
        waiters = getattr(getattr(queue, "not_empty", None), "_waiters", None)
        waiting = len(waiters) if waiters is not None else 0
    return waiting, int(pool._max_overflow)
