"""Page/per_page rules of the contract, shared by every paginated list."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Generic, TypeVar

from pydantic import BaseModel, ConfigDict, Field
from sqlalchemy import ColumnElement, and_, bindparam, func, select

from evidence_gateway.core.context import Ctx
from evidence_gateway.core.scoping import owned, rows, table_of
from evidence_gateway.resolvers.validation import parse
from evidence_gateway.store.records import records

T = TypeVar("T")

DEFAULT_PER_PAGE = 20
MAX_PER_PAGE = 100


class PageParams(BaseModel):
    # Lax on purpose: query strings arrive as text ("2").
    model_config = ConfigDict(extra="ignore", frozen=True)

    page: Annotated[int, Field(ge=1, le=10_000_000)] = 1
    per_page: Annotated[int, Field(ge=1, le=MAX_PER_PAGE)] = DEFAULT_PER_PAGE

    @property
    def offset(self) -> int:
        return (self.page - 1) * self.per_page


def page_params(page: Any = None, per_page: Any = None) -> PageParams:
    raw = {k: v for k, v in (("page", page), ("per_page", per_page)) if v is not None}
    return parse(PageParams, raw)


@dataclass(frozen=True, slots=True)
class Page(Generic[T]):
    items: list[T]
    page: int
    per_page: int
    total: int


class NewestFirst:
    """One organisation-scoped list, newest first, as records (``records.py``): the page and the
    total in one statement, built once.

    The total rides along as an uncorrelated scalar subquery, which SQLite and PostgreSQL both
    evaluate once per statement (a ``count(*) OVER ()`` would read every row of the
    organisation to number them); only a page past the end, which has no row to carry it,
    costs a second statement.
    """

    TOTAL = "page_total"

    def __init__(self, model: Any, *where: ColumnElement[bool], time_column: str = "created_at") -> None:
        table = self._table = table_of(model)
        scoped = and_(owned(table), *where)
        self._count = select(func.count()).select_from(table).where(scoped)
        self._page = (
            select(*table.c, self._count.scalar_subquery().label(self.TOTAL))
            .where(scoped)
            .order_by(table.c[time_column].desc(), table.c.id.desc())
            .limit(bindparam("page_limit"))
            .offset(bindparam("page_offset"))
        )

    async def page(self, ctx: Ctx, params: PageParams, **bind: Any) -> Page[Any]:
        found = await rows(ctx, self._page, page_limit=params.per_page, page_offset=params.offset, **bind)
        items = records(self._table, found, self.TOTAL)
        if items:
            total = items[0].page_total
        else:
            total = (await rows(ctx, self._count, **bind))[0][0]
        return Page(items=items, page=params.page, per_page=params.per_page, total=total)
