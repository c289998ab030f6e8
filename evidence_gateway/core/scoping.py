"""Every read and write of organisation-owned rows is scoped here, once.

Two forms, one rule (the caller's organisation is part of the statement):

- ``readable(ctx, Model)``: an ORM ``select`` already filtered to the caller's organisation, for
  the unit-of-work paths that load entities to change them (polar's ``get_readable_statement``).
- ``owned(table)`` inside a statement built once at import, run with ``rows(ctx, ...)``: the
  organisation is a bound parameter that only ``rows`` fills, from the caller's context. A
  statement that forgets it cannot be run that way, and one that names it cannot be run without
  it (SQLAlchemy refuses a missing bound value). The hot reads use this form: statements built
  once, Core rows rather than ORM entities.

``tests/test_org_scoping.py`` fails when a resolver compares ``org_id`` by hand.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

from sqlalchemy import BindParameter, ColumnElement, Executable, Row, Select, bindparam, select

from evidence_gateway.core.context import Ctx
from evidence_gateway.models.base import table_of

__all__ = ["ORG_PARAM", "bound", "org_column", "owned", "owned_by", "readable", "rows", "rows_many", "table_of"]

M = TypeVar("M")

ORG_PARAM = "scope_org_id"


def org_column(model: Any) -> ColumnElement[Any]:
    return table_of(model).c.org_id


def owned(model: Any) -> ColumnElement[bool]:
    """``model.org_id = :scope_org_id``, for statements built once and run by ``rows``."""
    column = org_column(model)
    param: BindParameter[Any] = bindparam(ORG_PARAM, type_=column.type)
    return column == param


def owned_by(ctx: Ctx, model: Any) -> ColumnElement[bool]:
    """The caller's organisation as a literal condition, for statements built per request."""
    return org_column(model) == ctx.org_id


def readable(ctx: Ctx, model: type[M]) -> Select[M]:
    """An ORM select of ``model`` entities the caller may see."""
    return select(model).where(owned_by(ctx, model))


def bound(ctx: Ctx, params: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Parameters of a built-once statement, with the caller's organisation bound."""
    return {**(params or {}), ORG_PARAM: ctx.org_id}


async def rows(ctx: Ctx, statement: Executable, **params: Any) -> Sequence[Row[Any]]:
    """Core rows of a built-once, organisation-scoped statement."""
    return await ctx.db.fetch(statement, bound(ctx, params))


async def rows_many(ctx: Ctx, *statements: tuple[Executable, Mapping[str, Any]]) -> list[Sequence[Row[Any]]]:
    """Several scoped reads at once (one hop to SQLite's reader thread for all of them)."""
    return await ctx.db.fetch_many([(stmt, bound(ctx, params)) for stmt, params in statements])


def of_org(org_id: uuid.UUID, model: Any) -> ColumnElement[bool]:
    """The same condition for work done on an organisation's behalf without a caller (the key
    CLI, subscription tails, webhook cursors), where the organisation is all there is."""
    return org_column(model) == org_id
