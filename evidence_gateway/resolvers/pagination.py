"""Page/per_page rules of the contract, shared by every paginated list (the statements: store/pages.py)."""

from __future__ import annotations

from typing import Annotated, Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from evidence_gateway.resolvers.validation import parse
from evidence_gateway.store.pages import NewestFirst, Page

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


__all__ = ["DEFAULT_PER_PAGE", "MAX_PER_PAGE", "NewestFirst", "Page", "PageParams", "page_params"]
