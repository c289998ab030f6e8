"""page/per_page lists: one organisation-scoped list, newest first, the page and its total in one
statement built once (the contract's REST lists)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

from sqlalchemy import ColumnElement, and_, bindparam, func, select

from evidence_gateway.core.context import Ctx
from evidence_gateway.core.scoping import owned, table_of
from evidence_gateway.store import list_counts
from evidence_gateway.store.record_types import TYPED
from evidence_gateway.store.records import records
from evidence_gateway.store.scoped import point_rows, rows

T = TypeVar("T")


class PageWindow(Protocol):
    """What a page needs of the validated page/per_page (resolvers/pagination.PageParams)."""

    @property
    def page(self) -> int: ...

    @property
    def per_page(self) -> int: ...

    @property
    def offset(self) -> int: ...


@dataclass(frozen=True, slots=True)
class Page(Generic[T]):
    items: list[T]
    page: int
    per_page: int
    total: int


class NewestFirst:
    """One organisation-scoped list, newest first, as records (``records.py``): the page and the
    total in one statement, built once.

    The total rides along as an uncorrelated scalar subquery (the organisation's ``list_count``
    row when the list is counted by the write path, else a COUNT), which SQLite and PostgreSQL both
    evaluate once per statement (a ``count(*) OVER ()`` would read every row of the
    organisation to number them); only a page past the end, which has no row to carry it,
    costs a second statement.
    """

    TOTAL = "page_total"

    def __init__(
        self, model: Any, *where: ColumnElement[bool], time_column: str = "created_at", counted: bool = False
    ) -> None:
        table = self._table = table_of(model)
        scoped = and_(owned(table), *where)
        # ``counted``: the organisation's every row, whose count the write path keeps (list_counts.py).
        if counted and where:
            raise ValueError("only an organisation's whole list is counted by the write path")
        count = list_counts.total_of(table.name) if counted else select(func.count()).select_from(table).where(scoped)
        self._count = count
        self._counted = counted
        self._page = (
            select(*table.c, self._count.scalar_subquery().label(self.TOTAL))
            .where(scoped)
            .order_by(table.c[time_column].desc(), table.c.id.desc())
            .limit(bindparam("page_limit"))
            .offset(bindparam("page_offset"))
        )
        self._typed = TYPED.get(table.name)

    async def page(self, ctx: Ctx, params: PageWindow, **bind: Any) -> Page[Any]:
        # A counted list's first page is an index walk of at most per_page rows and one probe for
        # the total: read like a detail (``point_rows``: on SQLite without the hop to a reader
        # thread, which cost more CPU than such a read). Later pages pay their OFFSET, and a
        # list that counts pays its COUNT: those stay on the reader threads.
        read = point_rows if self._counted and params.offset == 0 else rows
        found = await read(ctx, self._page, page_limit=params.per_page, page_offset=params.offset, **bind)
        if self._typed is not None:
            # The table's typed record: its columns, the total apart.
            make = self._typed._make
            items: list[Any] = [make(row[:-1]) for row in found]
            total = found[0][-1] if found else None
        else:
            items = records(self._table, found, self.TOTAL)
            total = items[0].page_total if items else None
        if total is None:
            total = (await rows(ctx, self._count, **bind))[0][0]
        return Page(items=items, page=params.page, per_page=params.per_page, total=total)


async def ordered_page(
    ctx: Ctx, model: Any, where: Sequence[ColumnElement[bool]], order_by: Sequence[Any], params: PageWindow
) -> Page[Any]:
    """A page/per_page list under a filter and an ordering (``where`` includes the caller's
    organisation; ``order_by`` ends with the id, so a page boundary is the same on every read):
    built per request, since its shape varies (so not through the prepared-once fast path, as
    the keyset pages); the total is the filtered count."""
    table = table_of(model)
    count = select(func.count()).select_from(table).where(*where)
    stmt = select(*table.c).where(*where).order_by(*order_by).limit(params.per_page).offset(params.offset)
    async with ctx.db.read() as session:
        found = (await session.execute(stmt)).all()
        total = int((await session.execute(count)).scalar_one())
    typed = TYPED.get(table.name)
    items: list[Any] = [typed._make(row) for row in found] if typed is not None else records(table, found)
    return Page(items=items, page=params.page, per_page=params.per_page, total=total)
