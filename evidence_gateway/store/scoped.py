"""Organisation scoping, run: the ORM select every entity read starts from, and the executors of
the statements built once with ``owned(table)`` (core/scoping.py holds the rule itself).

- ``readable(ctx, Model)``: an ORM ``select`` already filtered to the caller's organisation, for
  the unit-of-work paths that load entities to change them (polar's ``get_readable_statement``).
- ``rows(ctx, statement, ...)``: Core rows of a statement built once at import with
  ``owned(table)``; the organisation is a bound parameter only these executors fill, from the
  caller's context. A statement that forgets it cannot be run that way, and one that names it
  cannot be run without it (SQLAlchemy refuses a missing bound value).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

from sqlalchemy import Executable, Row, Select, select

from evidence_gateway.core.context import Ctx
from evidence_gateway.core.scoping import ORG_PARAM, owned_by

__all__ = ["bound", "point_rows", "readable", "rows", "rows_many"]

M = TypeVar("M")


def readable(ctx: Ctx, model: type[M]) -> Select[M]:
    """An ORM select of ``model`` entities the caller may see."""
    return select(model).where(owned_by(ctx, model))


def bound(ctx: Ctx, params: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Parameters of a built-once statement, with the caller's organisation bound."""
    return {**(params or {}), ORG_PARAM: ctx.org_id}


async def rows(ctx: Ctx, statement: Executable, **params: Any) -> Sequence[Row[Any]]:
    """Core rows of a built-once, organisation-scoped statement."""
    return await ctx.db.fetch(statement, bound(ctx, params))


async def point_rows(ctx: Ctx, statement: Executable, **params: Any) -> Sequence[Row[Any]]:
    """``rows`` of a statement that reads a few rows by key (a detail, a counted list's first page):
    see ``Database.fetch_point``."""
    return await ctx.db.fetch_point(statement, bound(ctx, params))


async def rows_many(ctx: Ctx, *statements: tuple[Executable, Mapping[str, Any]]) -> list[Sequence[Row[Any]]]:
    """Several scoped reads at once (one hop to SQLite's reader thread for all of them)."""
    return await ctx.db.fetch_many([(stmt, bound(ctx, params)) for stmt, params in statements])
