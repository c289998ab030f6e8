"""Relay-style building blocks: the Node interface, cursor connections and their arguments.

Every connection field is a thin wrapper: the resolver returns a keyset ``Slice``
(store/keyset.py) and ``connection()`` shapes it. ``totalCount`` and the half of
``pageInfo`` the page query could not answer run their query only when selected.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any, Generic, TypeVar

import orjson
import strawberry

from evidence_gateway.core.context import Ctx
from evidence_gateway.resolvers import connections
from evidence_gateway.store.keyset import DEFAULT_PAGE, MAX_PAGE, Slice

T = TypeVar("T")
M = TypeVar("M")


@strawberry.interface(
    description="An object that can be fetched again by its id alone with node(id). Ids are random UUIDs, "
    "unique across every type, so an object's id is its global id."
)
class Node:
    id: uuid.UUID = strawberry.field(description="Global id (a UUID; unique across types).")


@strawberry.type(description="Where a connection's page sits in the whole list (Relay PageInfo).")
class PageInfo:
    start_cursor: str | None = strawberry.field(description="Cursor of the first edge; null on an empty page.")
    end_cursor: str | None = strawberry.field(description="Cursor of the last edge; null on an empty page.")
    source: strawberry.Private[Slice[Any]]

    @strawberry.field(
        description="More rows follow this page (forward: within the bounds asked; backward: rows at or after "
        "`before`)."
    )
    async def has_next_page(self) -> bool:
        return await self.source.has_next_page()

    @strawberry.field(
        description="Rows come before this page (backward: within the bounds asked; forward: rows at or before "
        "`after`)."
    )
    async def has_previous_page(self) -> bool:
        return await self.source.has_previous_page()


@strawberry.type(description="One row of a connection with its cursor.")
class Edge(Generic[T]):
    cursor: str = strawberry.field(description="Opaque cursor of this row: pass it as after or before.")
    node: T = strawberry.field(description="The row.")


@strawberry.type(description="One page of a list, by cursor (Relay connection; docs/graphql-schema.md).")
class Connection(Generic[T]):
    edges: list[Edge[T]] = strawberry.field(description="The page's rows with their cursors, in list order.")
    nodes: list[T] = strawberry.field(description="The page's rows alone, in list order.")
    page_info: PageInfo = strawberry.field(description="Cursors of the page's ends and whether more rows exist.")
    source: strawberry.Private[Slice[Any]]

    @strawberry.field(description="Rows in the whole list (not only this page); counted only when selected.")
    async def total_count(self) -> int:
        return await self.source.total_count()


First = Annotated[
    int | None,
    strawberry.argument(
        description=f"Rows from the start (or from after), 0 to {MAX_PAGE}; {DEFAULT_PAGE} when neither first "
        "nor last is given."
    ),
]
After = Annotated[str | None, strawberry.argument(description="Cursor of an edge: the page starts after it.")]
Last = Annotated[
    int | None,
    strawberry.argument(description=f"Rows from the end (or up to before), 0 to {MAX_PAGE}; not with first."),
]
Before = Annotated[str | None, strawberry.argument(description="Cursor of an edge: the page ends before it.")]


def connection(found: Slice[M], convert: Callable[[M], T]) -> Connection[T]:
    nodes = [convert(item) for item in found.items]
    return Connection(
        edges=[Edge(cursor=c, node=n) for c, n in zip(found.cursors, nodes, strict=True)],
        nodes=nodes,
        page_info=PageInfo(
            start_cursor=found.cursors[0] if found.cursors else None,
            end_cursor=found.cursors[-1] if found.cursors else None,
            source=found,
        ),
        source=found,
    )


def deprecated_for(replacement: str) -> str:
    """The dated deprecation reason of a field a connection replaces (docs/graphql-schema.md)."""
    return f"Deprecated since {DEPRECATED_SINCE}; use {replacement}."


DEPRECATED_SINCE = "2026-11-26"


@dataclass(frozen=True)
class _NestedPage:
    """A DataLoader batch function per nested list and page arguments: every parent asking the
    same page of the same list in one request shares one statement."""

    relation: str
    first: int | None
    after: str | None
    last: int | None
    before: str | None
    # The filter as canonical JSON and the order as (field, direction): hashable, so siblings
    # asking the same filtered page share the batch too.
    filters: str | None = None
    order: tuple[str, str] | None = None

    async def __call__(self, ctx: Ctx, parents: list[uuid.UUID]) -> dict[uuid.UUID, Slice[Any]]:
        relay = {"first": self.first, "after": self.after, "last": self.last, "before": self.before}
        filters = orjson.loads(self.filters) if self.filters is not None else None
        return await connections.nested(ctx, self.relation, parents, filters, self.order, **relay)


async def nested_connection(
    info: Any,
    relation: str,
    parent_id: uuid.UUID,
    convert: Callable[[Any], T],
    first: int | None,
    after: str | None,
    last: int | None,
    before: str | None,
    filters: dict[str, Any] | None = None,
    order: tuple[str, str] | None = None,
) -> Connection[T]:
    """A parent's page of a nested list (``connections.nested``), batched with its siblings'."""
    key = orjson.dumps(filters, default=str, option=orjson.OPT_SORT_KEYS).decode() if filters is not None else None
    batch = _NestedPage(relation, first, after, last, before, key, order)
    found: Slice[Any] = await info.context.loader(batch).load(parent_id)
    return connection(found, convert)
