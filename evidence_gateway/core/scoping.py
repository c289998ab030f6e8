"""Every read and write of organisation-owned rows is scoped by this rule, once.

Two forms, one rule (the caller's organisation is part of the statement):

- ``owned_by(ctx, Model)``: the caller's organisation as a literal condition, for statements
  built per request (store/scoped.py's ``readable`` starts every entity read with it).
- ``owned(table)`` inside a statement built once at import, run with store/scoped.py's
  ``rows(ctx, ...)``: the organisation is a bound parameter that only those executors fill, from
  the caller's context. The hot reads use this form: statements built once, Core rows rather
  than ORM entities.

The statements themselves, and their executors, live in ``evidence_gateway/store/``
(tests/test_store_boundary.py); this module holds the conditions they are built from.

``tests/test_org_scoping.py`` fails when a resolver compares ``org_id`` by hand.
"""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import BindParameter, ColumnElement, bindparam

from evidence_gateway.core.context import Ctx
from evidence_gateway.models.base import table_of

__all__ = ["ORG_PARAM", "of_org", "org_column", "owned", "owned_by", "table_of"]

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


def of_org(org_id: uuid.UUID, model: Any) -> ColumnElement[bool]:
    """The same condition for work done on an organisation's behalf without a caller (the key
    CLI, subscription tails, webhook cursors), where the organisation is all there is."""
    return org_column(model) == org_id
