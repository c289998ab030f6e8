"""A span per SQL statement while tracing is on, on both roads statements take:

- through SQLAlchemy (ORM, Core, the SQLite reader threads): the engines' cursor events;
- straight on the driver (store/pg_reads.py and the few hot statements on asyncpg or
  aiosqlite itself, which SQLAlchemy never sees): the driver connections' statement methods,
  wrapped once per process.

Only statements run inside a traced operation get a span: the dispatcher's and the worker's
polls, and the probes, would otherwise be root spans every second. The span carries the
statement's SQL (parameters are never recorded), its operation and the database system.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import aiosqlite
import asyncpg
from opentelemetry import trace
from opentelemetry.trace import SpanKind, Status, StatusCode
from sqlalchemy import Engine, event

MAX_STATEMENT_CHARS = 2000
_SPAN = "_evidence_sql_span"
# The tracer of the traced app running in this process (None: the wrappers pass straight through).
_tracer: Any = None


def operation_of(sql: str) -> str:
    """The statement's first keyword (SELECT, INSERT, BEGIN, WITH…): a span name of bounded cardinality."""
    head = sql.lstrip()[:16].split(None, 1)
    return head[0].upper().rstrip(";") if head else "SQL"


def _traced_parent() -> bool:
    return trace.get_current_span().is_recording()


def _start(system: str, sql: str) -> Any:
    operation = operation_of(sql)
    return _tracer.start_span(
        operation,
        kind=SpanKind.CLIENT,
        attributes={
            "db.system": system,
            "db.operation": operation,
            "db.statement": sql[:MAX_STATEMENT_CHARS],
        },
    )


def _end(span: Any, error: BaseException | None = None) -> None:
    if error is not None:
        span.set_status(Status(StatusCode.ERROR, type(error).__name__))
    span.end()


# ---- SQLAlchemy ---------------------------------------------------------------------------------


def _before(conn: Any, _cursor: Any, statement: str, _params: Any, context: Any, _many: bool) -> None:
    if _tracer is None or context is None or not _traced_parent():
        return
    system = "sqlite" if conn.dialect.name == "sqlite" else "postgresql"
    setattr(context, _SPAN, _start(system, statement))


def _after(_conn: Any, _cursor: Any, _statement: str, _params: Any, context: Any, _many: bool) -> None:
    span = getattr(context, _SPAN, None)
    if span is not None:
        _end(span)
        setattr(context, _SPAN, None)


def _failed(exception_context: Any) -> None:
    span = getattr(exception_context.execution_context, _SPAN, None)
    if span is not None:
        _end(span, exception_context.original_exception)
        setattr(exception_context.execution_context, _SPAN, None)


def listen(engine: Engine) -> None:
    if not event.contains(engine, "before_cursor_execute", _before):
        event.listen(engine, "before_cursor_execute", _before)
        event.listen(engine, "after_cursor_execute", _after)
        event.listen(engine, "handle_error", _failed)


# ---- the drivers themselves -----------------------------------------------------------------------

_WRAPPED = "_evidence_traced"


def _wrap(owner: type, name: str, system: str, sql_of: Callable[[tuple[Any, ...], dict[str, Any]], str]) -> None:
    original = getattr(owner, name)
    if getattr(original, _WRAPPED, False):
        return

    @functools.wraps(original)
    async def traced(self: Any, *args: Any, **kwargs: Any) -> Any:
        if _tracer is None or not _traced_parent():
            return await original(self, *args, **kwargs)
        span = _start(system, sql_of(args, kwargs))
        try:
            with trace.use_span(span, end_on_exit=False):
                result = await original(self, *args, **kwargs)
        except BaseException as exc:
            _end(span, exc)
            raise
        _end(span)
        return result

    setattr(traced, _WRAPPED, True)
    setattr(owner, name, traced)


def _first(args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    sql = args[0] if args else kwargs.get("query", kwargs.get("sql", ""))
    return sql if isinstance(sql, str) else "SQL"


def _copy(args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    return f"COPY {args[0] if args else kwargs.get('table_name', '')} FROM STDIN"


def wrap_drivers() -> None:
    """asyncpg's and aiosqlite's statement methods, once per process. SQLAlchemy's own calls
    go through methods not wrapped here (asyncpg's prepared statements and ``executemany``,
    aiosqlite's cursors), so no statement is counted twice. Transactions' ends are spans too,
    round trips worth seeing: aiosqlite's ``commit`` and ``rollback``, and asyncpg's ``execute``,
    which carries the BEGIN and COMMIT of SQLAlchemy's PostgreSQL transactions."""
    for name in ("execute", "fetch", "fetchrow", "fetchval"):
        _wrap(asyncpg.connection.Connection, name, "postgresql", _first)
    _wrap(asyncpg.connection.Connection, "copy_records_to_table", "postgresql", _copy)
    for name in ("execute", "executemany", "execute_fetchall", "execute_insert"):
        _wrap(aiosqlite.Connection, name, "sqlite", _first)
    # SQLAlchemy ends SQLite transactions here; a commit also runs the event-log inserts queued
    # just before it on the driver's thread (core/events.py), so its span covers them.
    _wrap(aiosqlite.Connection, "commit", "sqlite", lambda _a, _k: "COMMIT")
    _wrap(aiosqlite.Connection, "rollback", "sqlite", lambda _a, _k: "ROLLBACK")


def instrument(db: Any, tracer: Any) -> None:
    """Spans for every statement of ``db`` (a store Database) from now on, with ``tracer``."""
    global _tracer
    _tracer = tracer
    for engine in db.sync_engines:
        listen(engine)
    wrap_drivers()


def stop() -> None:
    global _tracer
    _tracer = None
