"""Types shared by several GraphQL domains."""

from __future__ import annotations

from typing import Annotated, Any

import strawberry

from evidence_gateway.resolvers.pagination import Page

PageArg = Annotated[int, strawberry.argument(description="1-based page number; past the last page, items is empty.")]
PerPageArg = Annotated[int, strawberry.argument(description="Items per page, 1 to 100.")]


@strawberry.type(description="Position of a page within a list (same rules as the REST contract).")
class PaginationMeta:
    page: int = strawberry.field(description="1-based page number.")
    per_page: int = strawberry.field(description="Items per page, 1 to 100.")
    total: int = strawberry.field(description="Items in the whole list.")

    @classmethod
    def of(cls, page: Page[Any]) -> PaginationMeta:
        return cls(page=page.page, per_page=page.per_page, total=page.total)
