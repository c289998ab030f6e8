"""PostgreSQL's hot reads on asyncpg itself (evidence_gateway/store/pg_reads.py): what they return is
what SQLAlchemy returns, and a read cut short never leaves its connection in the pool."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from datetime import datetime

import asyncpg
import pytest
from sqlalchemy import Integer, bindparam, func, literal, select
from sqlalchemy.exc import StatementError

from evidence_gateway.models import Workspace
from evidence_gateway.models.base import table_of
from evidence_gateway.store.db import Database
from tests.conftest import PG_AVAILABLE
from tests.waiting import eventually

pytestmark = pytest.mark.skipif(not PG_AVAILABLE, reason="no PostgreSQL on 127.0.0.1:5432")

WORKSPACE = table_of(Workspace)


def _plain(url: str) -> str:
    return url.replace("+asyncpg", "")


async def test_values_are_what_sqlalchemy_returns(pg_database: str) -> None:
    """Literal binds, a fixed LIMIT, typed results (UUIDs, aware timestamps, numerics as floats)."""
    db = Database(pg_database, pool_size=2)
    try:
        stmt = select(
            literal("kind").label("kind"),
            func.gen_random_uuid().label("id"),
            func.now().label("at"),
            literal(1.5).label("share"),
            bindparam("n", type_=Integer).label("n"),
        ).limit(1)
        fast = (await db.fetch(stmt, {"n": 7}))[0]
        async with db.engine.connect() as conn:
            slow = (await conn.execute(stmt, {"n": 7})).one()
        assert fast.kind == slow.kind == "kind" and fast.n == slow.n == 7
        assert isinstance(fast.id, uuid.UUID) and type(fast.share) is type(slow.share)
        assert isinstance(fast.at, datetime) and fast.at.tzinfo is not None
        with pytest.raises(StatementError, match="'n'"):
            await db.fetch(stmt, {})
    finally:
        await db.dispose()


async def test_a_read_cut_short_leaves_nothing_held(pg_database: str) -> None:
    """A read cancelled mid-protocol (as the dispatcher's is when a node stops) must not go back to
    the pool half done, holding the locks its statement took: another session can then never
    lock the table (a test's TRUNCATE waited for good). Here the read is cut short while its new
    statement is being prepared, blocked on a table another session has locked."""
    db = Database(pg_database, pool_size=1)
    admin = await asyncpg.connect(_plain(pg_database))
    try:
        assert (await db.fetch(select(literal(1).label("one")), {}))[0].one == 1
        locker = admin.transaction()
        await locker.start()
        await admin.execute("LOCK TABLE workspace IN ACCESS EXCLUSIVE MODE")
        fresh = select(func.count().label(f"n_{uuid.uuid4().hex}")).select_from(WORKSPACE)  # never prepared
        read = asyncio.create_task(db.fetch(fresh, {}))

        async def waiting_for_the_lock() -> bool:
            rows = await admin.fetch(
                "SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%FROM workspace%'"
            )
            return bool(rows)

        await eventually(waiting_for_the_lock, "the read to wait on the locked table", within=60)
        read.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await read
        await locker.rollback()

        async def table_free() -> bool:
            try:
                async with admin.transaction():
                    await admin.execute("LOCK TABLE workspace IN ACCESS EXCLUSIVE MODE NOWAIT")
            except asyncpg.LockNotAvailableError:
                return False
            return True

        await eventually(table_free, "no session to hold a lock of the cut-short read", within=60)
        # The pool's only connection works: a fresh one, not the one left mid-read.
        found = await asyncio.wait_for(db.fetch(fresh, {}), 10)
        assert found[0][0] == 0
    finally:
        await admin.close()
        await asyncio.wait_for(db.dispose(), 10)
