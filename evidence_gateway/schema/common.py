"""Types shared by several GraphQL domains."""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Annotated, Any, TypeVar

import strawberry

from evidence_gateway.errors import NotFound
from evidence_gateway.resolvers.pagination import Page

M = TypeVar("M")

# The one nullability rule of by-id lookups (docs/graphql-schema.md), quoted in their descriptions.
LOOKUP_RULE = "null, without an error, when the id is unknown or another organisation's (REST: 404)"

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


async def or_null(lookup: Awaitable[M]) -> M | None:
    """A by-id lookup answers null, not NOT_FOUND: one missing record then empties only its own
    field, not a whole response of aliased lookups, and an unknown id and another organisation's
    stay indistinguishable (the resolvers' scoping decides; REST answers 404 for both)."""
    try:
        return await lookup
    except NotFound:
        return None
