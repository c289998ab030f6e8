"""The shapes of a list declaration (resolvers/list_queries.py): what a list can be filtered
and ordered by, and the validated query it hands to the repository."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any


class FilterKind(enum.StrEnum):
    """How a filter field compares (each kind has one input shape on each transport)."""

    ONE_OF = "one_of"  # the column is one of the given values (enums, event types)
    RANGE = "range"  # a date-time range: gte (inclusive) and lt (exclusive)
    CONTAINS = "contains"  # case-insensitive substring of a text column
    EQUALS_ID = "equals_id"  # the column is this id (a workspace's rows)
    FLAG = "flag"  # a yes/no column is true or false (GraphQL Boolean, REST true|false)


class Direction(enum.StrEnum):
    asc = "asc"
    desc = "desc"


class KeyKind(enum.StrEnum):
    """What an ordering key is, so its cursor can be read back and checked."""

    TIME = "time"
    TEXT = "text"
    WHOLE = "whole"


@dataclass(frozen=True)
class Filterable:
    """One filter field: its wire name (``filter[name]``; GraphQL camelCases it), the column it
    reads and how it compares."""

    name: str
    column: str
    kind: FilterKind
    description: str
    values: tuple[str, ...] = ()
    enum: type[enum.Enum] | None = None  # GraphQL's enum for ONE_OF over a model enum


@dataclass(frozen=True)
class Orderable:
    """One ordering field: its wire name, the column and the kind of its cursor key."""

    name: str
    column: str
    key: KeyKind
    description: str


@dataclass(frozen=True)
class ListSpec:
    """What one list can be filtered and ordered by; ``default`` is its order without ``orderBy``
    (the order it always had, so its cursors keep working)."""

    resource: str  # the repository's cursor kind
    type_name: str  # GraphQL names: <type_name>Filter, <type_name>Order, <type_name>OrderField
    filters: tuple[Filterable, ...]
    orderings: tuple[Orderable, ...]
    default: tuple[str, Direction]

    def filter_named(self, name: str) -> Filterable | None:
        return next((f for f in self.filters if f.name == name), None)

    def ordering_named(self, name: str) -> Orderable | None:
        return next((o for o in self.orderings if o.name == name), None)


@dataclass(frozen=True)
class Condition:
    """One validated filter: ``column op value`` (op: in, gte, lt, contains, eq)."""

    column: str
    op: str
    value: Any


@dataclass(frozen=True)
class Ordering:
    column: str
    key: KeyKind
    direction: Direction
    is_default: bool
    name: str


@dataclass(frozen=True)
class ListQuery:
    """A list's validated filters and ordering, ready for the repository."""

    spec: ListSpec
    conditions: tuple[Condition, ...] = ()
    ordering: Ordering | None = None  # None: the list's default order

    @property
    def is_plain(self) -> bool:
        """No filter and the default order: the list as it was before filters existed."""
        return not self.conditions and (self.ordering is None or self.ordering.is_default)

    @property
    def cursor_kind(self) -> str:
        """Cursors of one ordering are refused by another (their keys differ)."""
        if self.ordering is None or self.ordering.is_default:
            return self.spec.resource
        return f"{self.spec.resource}.{self.ordering.name}.{self.ordering.direction.value}"
