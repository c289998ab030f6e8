"""One repository per resource, above organisation scoping (polar's ``RepositoryBase``).

A repository is built per call with the caller's context and is the only way a resolver reads
or writes its resource: every statement it runs is the caller's organisation's by
construction. Reads answer typed records (record_types.py); the unit of work's changes load
ORM entities through ``load``. Which executor serves a read (SQLite's reader threads, asyncpg
itself, an ORM session) is a method's implementation, never a second API beside it.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from functools import cache
from typing import Any, ClassVar, Generic, TypeVar

from sqlalchemy import ColumnElement, Select, Table, bindparam, select
from sqlalchemy.ext.asyncio import AsyncSession

from evidence_gateway.core.context import Ctx
from evidence_gateway.core.scoping import owned, owned_by, table_of
from evidence_gateway.resolvers.list_queries import ListQuery
from evidence_gateway.store import list_counts
from evidence_gateway.store.keyset import Order, Slice, keyset_slice, keyset_slices, window
from evidence_gateway.store.list_filters import conditions, order_of
from evidence_gateway.store.pages import NewestFirst, Page, PageWindow, ordered_page
from evidence_gateway.store.scoped import point_rows, readable, rows
from evidence_gateway.store.sqlite_text_search import planned

M = TypeVar("M")  # the table model (an ORM entity in a unit of work)
R = TypeVar("R")  # its typed record


class Repository(Generic[M, R]):
    """get / get_many / page / slice / load for one table; each resource adds its own queries."""

    model: ClassVar[Any]
    record: ClassVar[Any]  # the typed NamedTuple of the table's columns (record_types.py)
    # The list order of page/per_page and cursor lists: newest first by this column, then id.
    time_column: ClassVar[str] = "created_at"
    kind: ClassVar[str]  # what its cursors are made for (a cursor of another list is refused)

    table: ClassVar[Table]
    _by_id: ClassVar[Select[Any]]
    _by_ids: ClassVar[Select[Any]]
    _newest: ClassVar[NewestFirst]
    _order: ClassVar[Order]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # Built once per resource: PostgreSQL's fast path prepares each statement once.
        table = cls.table = table_of(cls.model)
        cls._by_id = select(*table.c).where(table.c.id == bindparam("row_id"), owned(table))
        cls._by_ids = select(*table.c).where(owned(table), table.c.id.in_(bindparam("row_ids", expanding=True)))
        cls._newest = NewestFirst(cls.model, time_column=cls.time_column, counted=list_counts.is_counted(table.name))
        cls._order = Order.newest_first(cls.kind, cls.model, cls.time_column)

    def __init__(self, ctx: Ctx) -> None:
        self.ctx = ctx

    def get_readable_statement(self) -> Select[Any]:
        """An ORM select of the entities the caller may see (every entity read starts here)."""
        return readable(self.ctx, self.model)

    async def get(self, row_id: uuid.UUID) -> R | None:
        """One of the caller's rows, or None (another organisation's id is simply not found)."""
        found = await point_rows(self.ctx, self._by_id, row_id=row_id)
        record: R | None = self.record._make(found[0]) if found else None
        return record

    async def get_many(self, ids: list[uuid.UUID]) -> dict[uuid.UUID, R]:
        """``{id: record}`` for the caller's rows among ``ids`` (DataLoaders); others are absent."""
        found = await rows(self.ctx, self._by_ids, row_ids=list(ids))
        make = self.record._make
        return {row.id: make(row) for row in found}

    async def page(self, params: PageWindow, query: ListQuery | None = None, *where: ColumnElement[bool]) -> Page[R]:
        """A page/per_page list, newest first, with its total; ``query`` filters and orders it
        and ``where`` narrows it (without either: the statement built once, as before)."""
        if not where and (query is None or query.is_plain):
            return await self._newest.page(self.ctx, params)
        order = order_of(self.table, query, self._order)
        scoped = [owned_by(self.ctx, self.table), *where, *await self._conditions(query)]
        return await ordered_page(self.ctx, self.model, scoped, order.sort(), params)

    async def grouped_by(
        self, key: str, keys: list[uuid.UUID], newest: tuple[str, ...] = ("created_at", "id")
    ) -> dict[uuid.UUID, list[R]]:
        """``{key: [records…]}``, highest ``newest`` first, every requested key present (DataLoaders)."""
        found = await rows(self.ctx, _by_keys(self.table, key, newest), batch_keys=list(keys))
        out: dict[uuid.UUID, list[R]] = {k: [] for k in keys}
        make = self.record._make
        for row in found:
            out[getattr(row, key)].append(make(row))
        return out

    async def slice(self, *where: ColumnElement[bool], query: ListQuery | None = None, **relay: Any) -> Slice[R]:
        """A cursor list (first/after, last/before), newest first or in ``query``'s order;
        ``where`` and ``query``'s filters narrow it (one workspace's rows), inside the caller's
        organisation always."""
        order = order_of(self.table, query, self._order)
        win = window(order, **relay)
        scoped = [owned_by(self.ctx, self.table), *where, *await self._conditions(query)]
        return await keyset_slice(self.ctx.db, self.model, scoped, order, win)

    async def slices_by(
        self, parent: str, parents: Sequence[uuid.UUID], *, query: ListQuery | None = None, **relay: Any
    ) -> dict[uuid.UUID, Slice[R]]:
        """The same cursor page of each parent's rows (``parent`` the column naming it: a
        workspace's packs), all parents in one statement (nested connections' DataLoaders),
        narrowed and ordered by ``query``."""
        order = order_of(self.table, query, self._order)
        win = window(order, **relay)
        scoped = [owned_by(self.ctx, self.table), *await self._conditions(query)]
        return await keyset_slices(self.ctx.db, self.model, scoped, parent, parents, order, win)

    async def _conditions(self, query: ListQuery | None) -> list[ColumnElement[bool]]:
        """``query``'s filters, each text filter with or without its trigram index (SQLite) as
        the text is rare or common (store/sqlite_text_search.py ``planned``)."""
        return await planned(self.ctx.db, conditions(self.table, query))

    async def load(self, session: AsyncSession, row_id: uuid.UUID, *, for_update: bool = False) -> M | None:
        """The entity, in a unit of work's session; ``for_update`` locks its row (PostgreSQL) and
        reads it again even if the session already holds it."""
        stmt = self.get_readable_statement().where(self.table.c.id == row_id)
        if for_update:
            stmt = stmt.with_for_update().execution_options(populate_existing=True)
        found: M | None = (await session.execute(stmt)).scalar_one_or_none()
        return found


@cache
def _by_keys(table: Table, key: str, newest: tuple[str, ...]) -> Select[Any]:
    """The caller's rows whose ``key`` is among ``:batch_keys``, highest ``newest`` first; built once."""
    return (
        select(*table.c)
        .where(owned(table), table.c[key].in_(bindparam("batch_keys", expanding=True)))
        .order_by(*(table.c[name].desc() for name in newest))
    )
