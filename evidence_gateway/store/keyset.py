"""Cursor pagination by keyset, shared by every connection (GraphQL ``*Connection`` fields).

page/per_page costs an OFFSET (the database walks every skipped row) and a COUNT over the
organisation's rows on each page. A keyset page starts at the cursor's key instead: with an
index on (scope, sort key, id) page 5,000 costs what page 1 costs (bench/connections.py), and
the total is counted only when a client asks for it.

A cursor is opaque to clients: base64url of ``[list kind, key values...]``. The kind makes a
workspace cursor useless on the packs list; a cursor that does not decode is BAD_USER_INPUT.
The key is unique per row (a timestamp and then the id, or the event sequence), so a page
boundary never splits or repeats rows that share a timestamp.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Generic, TypeVar

import orjson
from sqlalchemy import ColumnElement, Select, bindparam, exists, func, not_, select, tuple_
from sqlmodel import col

from evidence_gateway.core.timeutil import as_aware
from evidence_gateway.errors import InvalidInput
from evidence_gateway.models.base import table_of
from evidence_gateway.resolvers.validation import canonical_uuid
from evidence_gateway.store.db import Database
from evidence_gateway.store.record_types import TYPED

T = TypeVar("T")

DEFAULT_PAGE = 20
MAX_PAGE = 100
NOT_A_CURSOR = "not a cursor of this list"


def _aware(value: Any) -> datetime:
    parsed = datetime.fromisoformat(value) if isinstance(value, str) else None
    if parsed is None or parsed.tzinfo is None:
        raise ValueError
    return parsed


def _whole(value: Any) -> int:
    # Within BIGINT: a forged cursor must not reach PostgreSQL as an out-of-range parameter.
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 2**63:
        raise ValueError
    return value


def _string(value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError
    return value


# The key parsers an ordering names (store/list_filters.py).
aware_key = _aware
whole_key = _whole
text_key = _string


def _text(value: Any) -> Any:
    if isinstance(value, datetime | uuid.UUID):
        return value.isoformat() if isinstance(value, datetime) else str(value)
    return value


@dataclass(frozen=True)
class Order:
    """How one list is sorted: the key columns (unique together) and their direction."""

    kind: str
    columns: tuple[Any, ...]
    parsers: tuple[Callable[[Any], Any], ...]
    descending: bool

    @classmethod
    def newest_first(cls, kind: str, model: Any, time_column: str = "created_at") -> Order:
        """(time, id) descending: the order of every REST list and its (scope, time, id) index."""
        return cls(kind, (getattr(model, time_column), model.id), (_aware, canonical_uuid), descending=True)

    @classmethod
    def ascending_by(cls, kind: str, column: Any) -> Order:
        """One unique integer key, oldest first (the event log's sequence)."""
        return cls(kind, (column,), (_whole,), descending=False)

    def key_of(self, row: Any) -> tuple[Any, ...]:
        values = (getattr(row, column.key) for column in self.columns)
        return tuple(as_aware(v) if isinstance(v, datetime) else v for v in values)

    def encode(self, key: tuple[Any, ...]) -> str:
        raw = orjson.dumps([self.kind, *(_text(v) for v in key)])
        return base64.urlsafe_b64encode(raw).decode().rstrip("=")

    def decode(self, cursor: str, field_name: str) -> tuple[Any, ...]:
        try:
            padded = cursor + "=" * (-len(cursor) % 4)
            parts = orjson.loads(base64.urlsafe_b64decode(padded.encode("ascii")))
            if not isinstance(parts, list) or len(parts) != len(self.columns) + 1 or parts[0] != self.kind:
                raise ValueError
            return tuple(parse(v) for parse, v in zip(self.parsers, parts[1:], strict=True))
        except (ValueError, TypeError, UnicodeError, binascii.Error, orjson.JSONDecodeError):
            raise InvalidInput(fields={field_name: NOT_A_CURSOR}) from None

    def _compare(self, values: tuple[Any, ...], *, greater: bool) -> ColumnElement[bool]:
        params = [bindparam(None, v, type_=c.type) for c, v in zip(self.columns, values, strict=True)]
        if len(self.columns) == 1:
            single: ColumnElement[bool] = self.columns[0] > params[0] if greater else self.columns[0] < params[0]
            return single
        # A row-value comparison: both databases read it as one range of the (scope, time, id)
        # index. Every write path stores a time in one form (models/base.py), so on SQLite, where
        # times are text, comparing the text is comparing the instants.
        left, right = tuple_(*self.columns), tuple_(*params)
        return left > right if greater else left < right

    def beyond(self, values: tuple[Any, ...]) -> ColumnElement[bool]:
        """Rows after ``values`` in list order: a range of the (scope, time, id) index."""
        return self._compare(values, greater=not self.descending)

    def before(self, values: tuple[Any, ...]) -> ColumnElement[bool]:
        """Rows ahead of ``values`` in list order."""
        return self._compare(values, greater=self.descending)

    def sort(self, *, reverse: bool = False) -> list[Any]:
        down = self.descending != reverse
        return [col(c).desc() if down else col(c).asc() for c in self.columns]


@dataclass(frozen=True)
class Window:
    """Validated Relay arguments: at most one of first/last; after/before as decoded keys."""

    first: int | None
    last: int | None
    after: tuple[Any, ...] | None
    before: tuple[Any, ...] | None


def window(order: Order, first: Any = None, after: Any = None, last: Any = None, before: Any = None) -> Window:
    fields: dict[str, str] = {}
    for name, value in (("first", first), ("last", last)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_PAGE):
            fields[name] = f"must be a whole number from 0 to {MAX_PAGE}"
    if first is not None and last is not None:
        fields["last"] = "give first or last, not both"
    for name, value in (("after", after), ("before", before)):
        if value is not None and not isinstance(value, str):
            fields[name] = NOT_A_CURSOR
    if fields:
        raise InvalidInput(fields=fields)
    decoded = {n: order.decode(v, n) if v is not None else None for n, v in (("after", after), ("before", before))}
    if first is None and last is None:
        first = DEFAULT_PAGE
    return Window(first=first, last=last, after=decoded["after"], before=decoded["before"])


@dataclass
class Slice(Generic[T]):
    """One page of a list, its cursors, and what is known of its neighbours.

    What the page query could not tell (rows on the far side of the cursor the client came
    from; the total) is computed only if the client selects it: one indexed probe or COUNT.
    """

    items: list[T]
    cursors: list[str]
    _has_next: Callable[[], Awaitable[bool]]
    _has_previous: Callable[[], Awaitable[bool]]
    _count: Callable[[], Awaitable[int]]
    _memo: dict[str, Any] = field(default_factory=dict)

    async def _once(self, name: str, compute: Callable[[], Awaitable[Any]]) -> Any:
        if name not in self._memo:
            self._memo[name] = await compute()
        return self._memo[name]

    async def has_next_page(self) -> bool:
        return bool(await self._once("next", self._has_next))

    async def has_previous_page(self) -> bool:
        return bool(await self._once("previous", self._has_previous))

    async def total_count(self) -> int:
        return int(await self._once("count", self._count))


def _known(value: bool) -> Callable[[], Awaitable[bool]]:
    async def known() -> bool:
        return value

    return known


async def keyset_slice(
    db: Database, model: Any, scoped: Sequence[ColumnElement[bool]], order: Order, win: Window
) -> Slice[Any]:
    """A page of ``model`` rows matching ``scoped`` (the caller's organisation, always), in ``order``.

    Forward (first/after): rows beyond ``after``, one more than asked to learn whether more
    follow. Backward (last/before): the same in reverse, turned back into list order.
    """
    bounds = list(scoped)
    if win.after is not None:
        bounds.append(order.beyond(win.after))
    if win.before is not None:
        bounds.append(order.before(win.before))
    backward = win.last is not None
    size = win.last if backward else win.first
    assert size is not None
    typed = TYPED.get(table_of(model).name)
    async with db.read() as session:
        if typed is not None:
            # The table's typed record (record_types.py), as every other read of it answers.
            stmt: Select[Any] = select(*table_of(model).c)
        else:
            stmt = select(model)
        stmt = stmt.where(*bounds).order_by(*order.sort(reverse=backward)).limit(size + 1)
        found = (await session.execute(stmt)) if size else None
        if found is None:
            rows: list[Any] = []
        elif typed is not None:
            rows = [typed._make(row) for row in found]
        else:
            rows = list(found.scalars())
    more = len(rows) > size
    rows = rows[:size]
    if backward:
        rows.reverse()

    async def exists_where(condition: ColumnElement[bool]) -> bool:
        async with db.read() as session:
            return bool((await session.execute(select(exists().where(*scoped, condition)))).scalar())

    def behind(values: tuple[Any, ...] | None, page_side: Callable[..., Any]) -> Callable[[], Awaitable[bool]]:
        """Rows at the cursor the client came from or past it, away from this page."""
        if values is None:
            return _known(False)
        condition = not_(page_side(values))
        return lambda: exists_where(condition)

    async def count() -> int:
        async with db.read() as session:
            return int((await session.execute(select(func.count()).select_from(model).where(*scoped))).scalar_one())

    if backward:
        has_previous, has_next = _known(more), behind(win.before, order.before)
    else:
        has_next, has_previous = _known(more), behind(win.after, order.beyond)
    return Slice(
        items=rows,
        cursors=[order.encode(order.key_of(r)) for r in rows],
        _has_next=has_next,
        _has_previous=has_previous,
        _count=count,
    )


def _shared(compute: Callable[[], Awaitable[Any]]) -> Callable[[], Awaitable[Any]]:
    """``compute`` run at most once however many slices of a batch ask (concurrently or not)."""
    task: list[asyncio.Future[Any]] = []

    async def once() -> Any:
        if not task:
            task.append(asyncio.ensure_future(compute()))
        return await task[0]

    return once


async def keyset_slices(
    db: Database,
    model: Any,
    scoped: Sequence[ColumnElement[bool]],
    parent: str,
    parents: Sequence[Any],
    order: Order,
    win: Window,
) -> dict[Any, Slice[Any]]:
    """The same page of each parent's rows (a workspace's packs, an endpoint's deliveries) for
    many parents in one statement: a window function numbers each parent's rows in list order
    and the page keeps the first ``size + 1`` of each. The totals and the far-side probes, when
    a client selects them, are one grouped statement each for the whole batch (no N+1)."""
    table = table_of(model)
    group = table.c[parent]
    typed = TYPED[table.name]
    within = [*scoped, group.in_(list(parents))]
    bounds = list(within)
    if win.after is not None:
        bounds.append(order.beyond(win.after))
    if win.before is not None:
        bounds.append(order.before(win.before))
    backward = win.last is not None
    size = win.last if backward else win.first
    assert size is not None
    found: dict[Any, list[Any]] = {p: [] for p in parents}
    if size and parents:
        rank = func.row_number().over(partition_by=group, order_by=order.sort(reverse=backward)).label("page_rank")
        numbered = select(*table.c, rank).where(*bounds).subquery()
        stmt = (
            select(*(numbered.c[c.name] for c in table.c))
            .where(numbered.c.page_rank <= size + 1)
            .order_by(numbered.c[parent], numbered.c.page_rank)
        )
        async with db.read() as session:
            for row in await session.execute(stmt):
                record = typed._make(row)
                found[getattr(record, parent)].append(record)

    async def grouped(*condition: ColumnElement[bool]) -> dict[Any, int]:
        stmt = select(group, func.count()).where(*within, *condition).group_by(group)
        async with db.read() as session:
            return {key: int(n) for key, n in await session.execute(stmt)}

    counts = _shared(grouped)
    probes: dict[str, Callable[[], Awaitable[Any]]] = {}
    for name, values, side in (("after", win.after, order.beyond), ("before", win.before, order.before)):
        if values is not None:

            def beyond(side: Any = side, values: Any = values) -> Awaitable[dict[Any, int]]:
                return grouped(not_(side(values)))

            probes[name] = _shared(beyond)

    def probe(name: str, key: Any) -> Callable[[], Awaitable[bool]]:
        if name not in probes:
            return _known(False)
        run = probes[name]

        async def behind() -> bool:
            return bool((await run()).get(key))

        return behind

    out: dict[Any, Slice[Any]] = {}
    for key, rows in found.items():
        more = len(rows) > size
        rows = rows[:size]
        if backward:
            rows.reverse()
            has_previous, has_next = _known(more), probe("before", key)
        else:
            has_next, has_previous = _known(more), probe("after", key)

        async def total(key: Any = key) -> int:
            return int((await counts()).get(key, 0))

        out[key] = Slice(
            items=rows,
            cursors=[order.encode(order.key_of(r)) for r in rows],
            _has_next=has_next,
            _has_previous=has_previous,
            _count=total,
        )
    return out
