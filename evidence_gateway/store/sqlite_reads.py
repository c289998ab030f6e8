"""SQLite's hot reads on the sqlite3 connection itself, in the reader thread, past SQLAlchemy's
execution path.

Through ``Connection.execute`` a built-once statement costs about 70 µs of the reader thread's
CPU for a workspace detail (execution context, cursor wrapper, result metadata, rows); the same
compiled SQL on the sqlite3 connection, with the same bind and result processors, about 30 µs
(docs/performance.md, issue 29). As on PostgreSQL (pg_reads.py, whose ``Plan`` this shares),
a read is compiled once per statement, its parameters go through the column types' bind
processors and its values through their result processors, exactly as SQLAlchemy applies them,
and the rows come back as namedtuples of the statement's column keys. A statement this path
cannot take as compiled (an expanding ``IN``) goes through SQLAlchemy, and so does every
statement while something listens to the engine's statements (tracing, statement counters):
they see what they saw before.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from sqlalchemy import Connection, Dialect, Engine, Executable

from evidence_gateway.store import sqlite_pragmas
from evidence_gateway.store.pg_reads import Plan, compiled_plan

# Statements are built once at import, so there are a few dozen; a bound keeps a caller that
# builds them per request from growing the cache without end.
_MAX_PLANS = 512
_PLANS: dict[Executable, Plan | None] = {}
Listener = Callable[[str], None]


def plan_of(statement: Executable, dialect: Dialect) -> Plan | None:
    """The statement as the sqlite3 connection runs it, or None when it must go through SQLAlchemy."""
    try:
        return _PLANS[statement]
    except KeyError:
        pass
    plan = compiled_plan(statement, dialect)
    if plan is not None:
        # SQLite's driver says nothing of a column's type: the processors are known at once.
        results = tuple(t.dialect_impl(dialect).result_processor(dialect, None) for t in plan.types)
        plan.results = results if any(p is not None for p in results) else None
        plan.learnt = True
    if len(_PLANS) >= _MAX_PLANS:
        _PLANS.clear()
    _PLANS[statement] = plan
    return plan


def observed(engine: Engine) -> bool:
    """Whether anything listens to the engine's statements (then they go through SQLAlchemy)."""
    dispatch: Any = engine.dispatch
    return bool(dispatch.before_cursor_execute or dispatch.after_cursor_execute)


def read(
    conn: Connection, statements: Sequence[tuple[Executable, Mapping[str, Any]]], listeners: Sequence[Listener]
) -> list[Sequence[Any]]:
    """Every statement's rows, on the connection's sqlite3 connection when its plan allows."""
    engine = conn.engine
    if engine.echo or observed(engine):
        return [conn.execute(stmt, dict(params)).all() for stmt, params in statements]
    driver: Any = None
    out: list[Sequence[Any]] = []
    for stmt, params in statements:
        plan = plan_of(stmt, engine.dialect)
        if plan is None:
            out.append(conn.execute(stmt, dict(params)).all())
            continue
        arguments = plan.arguments(params)
        if driver is None:
            driver = conn.connection.driver_connection
        for listener in listeners:
            listener(plan.sql)
        try:
            records = driver.execute(plan.sql, arguments).fetchall()
        except sqlite3.Error:
            # Read again through SQLAlchemy: its answer, or its error (wrapped as callers expect).
            out.append(conn.execute(stmt, dict(params)).all())
            continue
        out.append(plan.rows(records))
    return out


class PointReads:
    """Reads of a few rows by key (a detail) on the event loop's own thread, on a connection of
    their own: the hop to a reader thread and back cost more CPU than such a read itself
    (bench/layers.py: about 50 µs of a workspace detail's 290). Only a statement with a plan and
    nothing listening to the engine runs here, and never waits for a lock: the connection's busy
    timeout is zero, and a read that fails for any reason is left to the reader thread, which
    answers as before (or raises what SQLAlchemy raises)."""

    def __init__(self, engine: Engine, listeners: Sequence[Listener]) -> None:
        self.engine = engine
        self.listeners = listeners
        self.held: sqlite3.Connection | None = None

    def rows(self, statement: Executable, params: Mapping[str, Any]) -> Sequence[Any] | None:
        """The statement's rows, or None when the reader thread must read them."""
        engine = self.engine
        plan = None if engine.echo or observed(engine) else plan_of(statement, engine.dialect)
        if plan is None:
            return None
        arguments = plan.arguments(params)
        try:
            conn = self.held if self.held is not None else self._connect()
            records = conn.execute(plan.sql, arguments).fetchall()
        except sqlite3.Error:
            return None
        for listener in self.listeners:
            listener(plan.sql)
        return plan.rows(records)

    def _connect(self) -> sqlite3.Connection:
        """As the reader's engine connects (autocommit: each statement reads the latest commit),
        but never waiting on a lock."""
        cargs, cparams = self.engine.dialect.create_connect_args(self.engine.url)
        connect: Any = sqlite3.connect
        conn: sqlite3.Connection = connect(*cargs, **{**cparams, "timeout": 0, "isolation_level": None})
        sqlite_pragmas.reader_cache(conn)
        self.held = conn
        return conn

    def close(self) -> None:
        conn, self.held = self.held, None
        if conn is not None:
            conn.close()
