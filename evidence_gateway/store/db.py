"""Engine and transactions. Resolvers own their transaction through ``Database``.

Making the schema fit to serve is ``migrate.prepare(db)``: migrations stand on this module,
never the other way round.
"""

from __future__ import annotations

import asyncio
import contextvars
import os
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from typing import Any, TypeVar

from sqlalchemy import (
    DDL,
    CursorResult,
    Engine,
    Executable,
    Insert,
    Result,
    Row,
    Select,
    Table,
    column,
    create_engine,
    event,
    literal,
    make_url,
    select,
)
from sqlalchemy import (
    table as table_clause,
)
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, AsyncSession, async_sessionmaker, create_async_engine
from sqlalchemy.orm import Session
from sqlalchemy.pool import Pool

from evidence_gateway.core.jsoncodec import dumps
from evidence_gateway.models import ArtifactContentChunk
from evidence_gateway.models.base import table_of
from evidence_gateway.store import pg_reads, sqlite_pragmas, sqlite_reads
from evidence_gateway.store.dialect_insert import insert_for

S = TypeVar("S", bound=Select[Any])
# Alembic's version table (migrate.VERSION_TABLE), read without its migration context.
_REVISIONS: Select[Any] = select(column("version_num")).select_from(table_clause("alembic_version"))

# Threads (and connections) of the SQLite row reader: WAL readers never wait for one another, and
# sqlite3 lets go of the GIL. Each holds its schema and caches (0.2-0.5 MB): no more than needed.
SQLITE_READER_THREADS = 2
SQLITE_POOL_SIZE = 4  # aiosqlite connections (a thread each) for sessions: writes, ORM reads


class _NoLock:
    async def __aenter__(self) -> None:
        return None

    async def __aexit__(self, *_exc: object) -> None:
        return None


_NO_LOCK = _NoLock()


def normalise_url(url: str) -> str:
    """Accept plain ``sqlite://`` / ``postgresql://`` URLs and pick the async driver."""
    if url.startswith("sqlite://"):
        return "sqlite+aiosqlite://" + url[len("sqlite://") :]
    for prefix in ("postgresql://", "postgres://"):
        if url.startswith(prefix):
            return "postgresql+asyncpg://" + url[len(prefix) :]
    return url


IN_MEMORY_REFUSED = (
    "in-memory SQLite is not supported: each connection would see its own empty database "
    "(give a file, e.g. sqlite:///./evidence.db)"
)


class UnsupportedDatabase(ValueError):
    """A database URL this code will not run on; ``str()`` is one line for an operator."""


def refuse_in_memory(url: str) -> None:
    """Refuse an in-memory SQLite URL (``sqlite://``, ``sqlite:///:memory:``, ``mode=memory``).

    The app spreads its work over several connections (a write, reads beside it, a reader
    pool, migrations); in memory each of them would open a database of its own, empty.
    """
    parsed = make_url(normalise_url(url))
    if parsed.get_backend_name() != "sqlite":
        return
    database = parsed.database or ""
    if database in ("", ":memory:") or "mode=memory" in database or parsed.query.get("mode") == "memory":
        raise UnsupportedDatabase(IN_MEMORY_REFUSED)


class Database:
    def __init__(self, url: str, *, echo: bool = False, pool_size: int = 20) -> None:
        refuse_in_memory(url)
        self.url = normalise_url(url)
        self.is_sqlite = self.url.startswith("sqlite")
        # JSON columns in the API's one encoding (jsoncodec), as the event log's data is written:
        # one stored form for a document, whichever path writes it.
        kwargs: dict[str, Any] = {"echo": echo, "json_serializer": _json_text}
        if not self.is_sqlite:
            # A fixed set of connections, no overflow: overflow connections are closed as soon
            # as they are returned, so under load every request opened one (connect, TLS
            # probe, type codecs) and throughput halved (docs/performance.md).
            kwargs.update(pool_size=pool_size, max_overflow=0, pool_pre_ping=False)
        else:
            # SQLite connections run in autocommit outside the transactions write() and
            # snapshot() open and always end, so the pool's ROLLBACK on every return is a no-op
            # that costs a hop to aiosqlite's thread on every request. A fixed set: each is a
            # thread, and overflow ones (closed on return) left allocator arenas behind (~5 MB).
            kwargs.update(pool_reset_on_return=None, pool_size=SQLITE_POOL_SIZE, max_overflow=0)
        self.engine: AsyncEngine = create_async_engine(self.url, **kwargs)
        if self.is_sqlite:
            _create_private(self.engine.url.database)
            _configure_sqlite(self.engine)
        self.sessionmaker = async_sessionmaker(self.engine, expire_on_commit=False)
        # SQLite has one writer; queueing writers in-process beats its busy back-off.
        self._write_lock: asyncio.Lock | None = asyncio.Lock() if self.is_sqlite else None
        # Told the SQL of every read that bypasses SQLAlchemy's events (pg_reads, sqlite_reads),
        # so statement counters see every statement.
        self.statement_listeners: list[Callable[[str], None]] = []
        self._reader: _SqliteReader | None = None
        if self.is_sqlite:
            self._reader = _SqliteReader(self.engine.url.database or "", echo=echo, listeners=self.statement_listeners)
        # PostgreSQL reads in autocommit: no BEGIN and ROLLBACK around them (two round trips of
        # three); under READ COMMITTED each statement took its own snapshot anyway.
        self._autocommit = self.engine.execution_options(isolation_level="AUTOCOMMIT")

    @property
    def sync_engines(self) -> list[Engine]:
        """Every engine statements run on (for statement counters and event hooks)."""
        engines = [self.engine.sync_engine]
        if self._reader is not None:
            engines.append(self._reader.engine)
        return engines

    @property
    def pools(self) -> list[tuple[str, Pool]]:
        """Every connection pool by name (for the pool gauges of /metrics)."""
        pools = [("main", self.engine.sync_engine.pool)]
        if self._reader is not None:
            pools.append(("sqlite_reader", self._reader.engine.pool))
        return pools

    async def fetch(self, statement: Executable, params: Mapping[str, Any]) -> Sequence[Any]:
        """All rows of one Core statement, read outside any transaction (each statement sees
        the latest commit), by attribute, position or iteration. The hot reads come here rather
        than through an ORM session."""
        return (await self.fetch_many([(statement, params)]))[0]

    async def fetch_point(self, statement: Executable, params: Mapping[str, Any]) -> Sequence[Any]:
        """``fetch`` for a few rows by key: on SQLite without the hop to a reader thread when it
        can (sqlite_reads.PointReads)."""
        found = self._reader.point.rows(statement, params) if self._reader is not None else None
        return found if found is not None else await self.fetch(statement, params)

    async def fetch_many(self, statements: Sequence[tuple[Executable, Mapping[str, Any]]]) -> list[Sequence[Any]]:
        """Several independent reads in one go: on SQLite one hop to a reader thread for all of
        them, where the async adapter takes about four per statement (bench/layers.py); on
        PostgreSQL on asyncpg itself (pg_reads.py)."""
        if self._reader is not None:
            return await self._reader.run(statements)
        out: list[Sequence[Any]] = []
        async with self._autocommit.connect() as conn:
            for stmt, params in statements:
                plan = pg_reads.plan_of(stmt, self.engine.dialect)
                if plan is None:
                    out.append((await conn.execute(stmt, dict(params))).all())
                    continue
                arguments = plan.arguments(params)
                async with _on_driver(conn) as driver:
                    if not plan.learnt:
                        await plan.learn(driver, self.engine.dialect)
                    for listener in self.statement_listeners:
                        listener(plan.sql)
                    out.append(plan.rows(await driver.fetch(plan.sql, *arguments)))
        return out

    def skip_locked(self, statement: S, *, of: Any = None) -> S:
        """Rows no other node is working on: PostgreSQL's ``FOR UPDATE SKIP LOCKED`` (DESIGN.md §15);
        SQLite has one writer at a time, so the statement as it is."""
        if self.is_sqlite:
            return statement
        return statement.with_for_update(skip_locked=True, of=of)

    def insert_or_nothing(self, table: Table) -> Insert:
        """``INSERT … ON CONFLICT DO NOTHING`` in this database's dialect: the first writer of a
        key wins, the others learn it from what the statement returns."""
        statement: Insert = insert_for(self.is_sqlite)(table).on_conflict_do_nothing()
        return statement

    async def recorded_revisions(self) -> set[str]:
        """Readiness: a trivial query, then the schema revisions the database records (none
        before the first migration). Raises whatever the driver raises when it is unreachable."""
        async with self.engine.connect() as conn:
            await conn.execute(select(literal(1)))
            try:
                return {str(row[0]) for row in await conn.execute(_REVISIONS)}
            except DBAPIError:
                return set()

    async def execute_alone(self, sql: str, *args: Any) -> None:
        """PostgreSQL: one statement on the driver, in autocommit, so it is its own transaction
        (no BEGIN and COMMIT round trips around it)."""
        async with self._autocommit.connect() as conn, _on_driver(conn) as driver:
            await driver.execute(sql, *args)

    @asynccontextmanager
    async def read(self) -> AsyncIterator[AsyncSession]:
        async with self.sessionmaker() as session:
            yield session

    @asynccontextmanager
    async def snapshot(self) -> AsyncIterator[AsyncSession]:
        """Several reads that must see one committed state (SQLite reads otherwise autocommit)."""
        async with self.sessionmaker() as session:
            if not self.is_sqlite:
                await session.connection(execution_options={"isolation_level": "REPEATABLE READ"})
                # Closing ends the read transaction without expiring what was loaded (a rollback would).
                yield session
                return
            await _sqlite_begin(session, "BEGIN")
            try:
                yield session
            finally:
                # Through the driver: ends the read transaction without expiring what was loaded.
                await asyncio.shield((await driver_connection(session)).rollback())

    @asynccontextmanager
    async def write(self) -> AsyncIterator[AsyncSession]:
        """One transaction: committed when the block returns, rolled back when it raises."""
        lock = self._write_lock or _NO_LOCK
        async with lock, self.sessionmaker() as session:
            if self.is_sqlite:
                # BEGIN IMMEDIATE takes the write lock up front, so a second process
                # waits on busy_timeout instead of failing to upgrade a read snapshot.
                await _sqlite_begin(session, "BEGIN IMMEDIATE")
            try:
                yield session
                await session.commit()
            except BaseException:
                await session.rollback()
                raise

    async def dispose(self) -> None:
        await self.engine.dispose()
        if self._reader is not None:
            self._reader.close()


def _json_text(value: Any) -> str:
    return dumps(value).decode()


def _create_private(path: str | None) -> None:
    """A new SQLite file is readable by its owner only: it holds key hashes and webhook signing
    secrets. (SQLite gives its -wal and -shm files the database file's permissions.)"""
    if not path or path == ":memory:" or path.startswith("file:"):
        return
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    except (FileExistsError, FileNotFoundError, NotADirectoryError):
        pass  # an existing database keeps its mode; a missing directory fails on connect


@asynccontextmanager
async def _on_driver(conn: AsyncConnection) -> AsyncIterator[Any]:
    """asyncpg itself under a pooled connection. A call cut short (cancelled, timed out) leaves
    it mid-protocol, holding its snapshot and locks: such a connection is closed, never pooled
    again, as SQLAlchemy does after its own calls. A database error leaves it usable."""
    driver = (await conn.get_raw_connection()).driver_connection
    if driver is None:
        raise RuntimeError("the pooled connection has been closed")
    try:
        yield driver
    except BaseException as exc:
        import asyncpg  # loaded already: this runs on PostgreSQL only (SQLite never imports it)

        if not isinstance(exc, asyncpg.PostgresError) and conn.sync_connection is not None:
            conn.sync_connection.invalidate(exc)
        raise


_CONNECTED = "evidence_connected"


@event.listens_for(Session, "after_begin")
def _connected(session: Session, _transaction: Any, _connection: Any) -> None:
    session.info[_CONNECTED] = True


def has_run_anything(session: AsyncSession) -> bool:
    """Whether the session has sent anything to the database yet (it has taken a connection).
    ``in_transaction()`` does not say: adding an object already begins the session's
    transaction, without a connection."""
    return bool(session.sync_session.info.get(_CONNECTED))


async def driver_connection(session: AsyncSession) -> Any:
    """The driver's own connection (aiosqlite or asyncpg) under the session's transaction, for
    the few hot statements that skip SQLAlchemy's adapter and its hops to aiosqlite's thread."""
    driver = (await (await session.connection()).get_raw_connection()).driver_connection
    if driver is None:
        raise RuntimeError("the session's connection has been closed")
    return driver


def rows_changed(result: Result[Any]) -> int:
    """How many rows an UPDATE or DELETE touched (the session types its result as a plain Result)."""
    if not isinstance(result, CursorResult):
        raise TypeError(f"{type(result).__name__} of a statement that returns rows, not a count")
    return result.rowcount


async def _sqlite_begin(session: AsyncSession, statement: str) -> None:
    """Begin on the session's connection through the driver: one hop to aiosqlite's thread,
    where the adapter takes three (cursor, execute, close) — this runs on every write."""
    await (await driver_connection(session)).execute(statement)


class _SqliteReader:
    """Reads on the sqlite3 driver itself, in a small thread pool: a read costs one hop to a
    thread, whatever the number of its statements. Connections are in autocommit like the async
    engine's, so each statement reads the latest commit; they never write."""

    def __init__(self, path: str, *, echo: bool, listeners: list[Callable[[str], None]]) -> None:
        self.listeners = listeners
        self.engine = create_engine(
            f"sqlite:///{path}",
            echo=echo,
            pool_size=SQLITE_READER_THREADS,
            max_overflow=0,
            pool_reset_on_return=None,
            connect_args={"check_same_thread": False},
        )
        event.listen(self.engine, "connect", sqlite_pragmas.on_reader_connect)
        self._threads: ThreadPoolExecutor | None = None
        self.point = sqlite_reads.PointReads(self.engine, listeners)

    def _read(self, statements: Sequence[tuple[Executable, Mapping[str, Any]]]) -> list[Sequence[Row[Any]]]:
        with self.engine.connect() as conn:  # on the sqlite3 connection itself (sqlite_reads.py)
            return sqlite_reads.read(conn, statements, self.listeners)

    async def run(self, statements: Sequence[tuple[Executable, Mapping[str, Any]]]) -> list[Sequence[Row[Any]]]:
        if self._threads is None:
            self._threads = ThreadPoolExecutor(SQLITE_READER_THREADS, thread_name_prefix="sqlite-reader")
        # In the caller's context, so that what observes statements (tracing) knows whose they are.
        run = contextvars.copy_context().run
        return await asyncio.get_running_loop().run_in_executor(self._threads, run, self._read, statements)

    def close(self) -> None:
        """Like the engine's dispose: the reader starts again on its next read."""
        threads, self._threads = self._threads, None
        if threads is not None:
            threads.shutdown(wait=True)
        self.point.close()
        self.engine.dispose()


def _configure_sqlite(engine: AsyncEngine) -> None:
    event.listen(engine.sync_engine, "connect", sqlite_pragmas.on_connect)

    @event.listens_for(engine.sync_engine, "begin")
    def _on_begin(conn: Any) -> None:
        # Connections that ask for it (schema migrations) begin with the write lock taken.
        if conn.get_execution_options().get("sqlite_immediate", False):
            conn.exec_driver_sql("BEGIN IMMEDIATE")


# Stored uncompressed, as SQLite stores BLOBs (migration 0008 does the same when upgrading):
# TOAST's default pglz compression made storing a 50,000-row pack take 2.5 s instead of 0.4 s.
event.listen(
    table_of(ArtifactContentChunk),
    "after_create",
    DDL("ALTER TABLE artifact_content_chunk ALTER COLUMN data SET STORAGE EXTERNAL").execute_if(dialect="postgresql"),
)
