"""Page/per_page rules of the contract, shared by every paginated list."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Generic, TypeVar

from pydantic import BaseModel, ConfigDict, Field
from sqlalchemy import ColumnElement, func, select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlmodel import col

from evidence_gateway.resolvers.validation import parse

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


async def newest_first(session: AsyncSession, model: Any, scoped: ColumnElement[bool], params: PageParams) -> Page[Any]:
    """One page of ``model`` rows matching ``scoped``, newest first (created_at, then id)."""
    order = (col(model.created_at).desc(), col(model.id).desc())
    total = (await session.execute(select(func.count()).select_from(model).where(scoped))).scalar_one()
    rows = await session.execute(
        select(model).where(scoped).order_by(*order).limit(params.per_page).offset(params.offset)
    )
    return Page(items=list(rows.scalars()), page=params.page, per_page=params.per_page, total=total)
