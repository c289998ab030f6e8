"""PostgreSQL's hot reads on asyncpg itself, past SQLAlchemy's async adapter.

Through the adapter a Core statement costs about 290 µs of the event loop's CPU (greenlet
switch, execution context, cursor emulation, result rows); the same compiled SQL on the asyncpg
connection costs about 100 µs (docs/performance.md, issue 15). A read is compiled once per statement into
asyncpg's ``$n`` SQL, its parameters go through the column types' bind processors and its
values through their result processors, exactly as SQLAlchemy applies them, and the rows come
back as namedtuples of the statement's column keys (read by attribute, position or iteration
like SQLAlchemy's rows). A statement this path cannot take as compiled (an expanding ``IN``)
goes through SQLAlchemy as before.
"""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Dialect, Executable
from sqlalchemy.exc import StatementError
from sqlalchemy.sql import ClauseElement
from sqlalchemy.sql.compiler import SQLCompiler

from evidence_gateway.store.internals import compiled_parts

# Statements are built once at import, so there are a few dozen; a bound keeps a caller that
# builds them per request from growing the cache without end.
_MAX_PLANS = 512


@dataclass(slots=True)
class Plan:
    sql: str
    names: tuple[str, ...]
    binds: tuple[Callable[[Any], Any] | None, ...]
    # Values the statement carries itself (literals, a fixed LIMIT), by parameter name.
    fixed: Mapping[str, Any]
    types: tuple[Any, ...]  # each result column's SQLAlchemy type
    record: Any  # the namedtuple type of the statement's columns
    # Each column's result processor (None: no value needs one), once learnt: some depend on
    # the type PostgreSQL answers with (a numeric read as a float), known once prepared.
    results: tuple[Callable[[Any], Any] | None, ...] | None = None
    learnt: bool = False

    async def learn(self, driver: Any, dialect: Dialect) -> None:
        prepared = await driver.prepare(self.sql)
        oids = [attribute.type.oid for attribute in prepared.get_attributes()]
        results = tuple(
            t.dialect_impl(dialect).result_processor(dialect, oid) for t, oid in zip(self.types, oids, strict=True)
        )
        self.results = results if any(p is not None for p in results) else None
        self.learnt = True

    def arguments(self, params: Mapping[str, Any]) -> list[Any]:
        out = []
        fixed = self.fixed
        for name, process in zip(self.names, self.binds, strict=True):
            if name in params:
                value = params[name]
            elif name in fixed:
                value = fixed[name]
            else:
                # What SQLAlchemy answers (the organisation's parameter is never optional).
                raise StatementError(f"A value is required for bind parameter {name!r}", self.sql, dict(params), None)
            out.append(value if process is None else process(value))
        return out

    def rows(self, records: Sequence[Any]) -> list[Any]:
        make = self.record._make
        if self.results is None:
            return [make(r) for r in records]
        results = self.results
        return [make([v if p is None else p(v) for p, v in zip(results, r, strict=True)]) for r in records]


_PLANS: dict[Executable, Plan | None] = {}


def plan_of(statement: Executable, dialect: Dialect) -> Plan | None:
    """The statement as asyncpg runs it, or None when it must go through SQLAlchemy."""
    if statement in _PLANS:
        return _PLANS[statement]
    plan = compiled_plan(statement, dialect)
    if len(_PLANS) >= _MAX_PLANS:
        _PLANS.clear()
    _PLANS[statement] = plan
    return plan


def compiled_plan(statement: Executable, dialect: Dialect) -> Plan | None:
    """The statement compiled for ``dialect`` with its processors (results not learnt yet), or
    None when it cannot run as compiled."""
    plan = None
    compiled = statement.compile(dialect=dialect) if isinstance(statement, ClauseElement) else None
    if isinstance(compiled, SQLCompiler) and compiled.positiontup is not None and "POSTCOMPILE" not in compiled.string:
        names = tuple(compiled.positiontup)
        bind_processors, columns = compiled_parts(compiled)
        plan = Plan(
            sql=compiled.string,
            names=names,
            binds=tuple(bind_processors.get(name) for name in names),
            fixed={
                name: bind.effective_value
                for name, bind in ((name, compiled.binds[name]) for name in names)
                if not bind.required
            },
            types=tuple(type_ for _key, type_ in columns),
            record=namedtuple("row", [key for key, _type in columns], rename=True),  # noqa: PYI024 - made per statement
        )
    return plan
