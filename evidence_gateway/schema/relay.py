"""Relay-style building blocks: the Node interface, cursor connections and their arguments.

Every connection field is a thin wrapper: the resolver returns a keyset ``Slice``
(store/keyset.py) and ``connection()`` shapes it. ``totalCount`` and the half of
``pageInfo`` the page query could not answer run their query only when selected.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Annotated, Any, Generic, TypeVar

import strawberry

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
