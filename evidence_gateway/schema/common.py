"""Types shared by several GraphQL domains."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Mapping
from datetime import date
from typing import Annotated, Any, TypeVar

import strawberry
from graphql import FieldNode, FragmentDefinitionNode, FragmentSpreadNode, InlineFragmentNode, SelectionSetNode
from strawberry.types import Info

from evidence_gateway.errors import NotFound
from evidence_gateway.resolvers.pagination import Page

M = TypeVar("M")

# The one nullability rule of by-id lookups (docs/graphql-schema.md), quoted in their descriptions.
LOOKUP_RULE = "null, without an error, when the id is unknown or another organisation's (REST: 404)"

# Deprecation policy (docs/graphql.md "Deprecations and breaking changes"): a reason starts with the
# day the deprecation was announced; the field may go (a breaking change) 90 days after it.
DEPRECATION_NOTICE_DAYS = 90
_DEPRECATION_REASON = re.compile(r"^Deprecated since (\d{4}-\d{2}-\d{2}); \S")


def deprecation_day(reason: str | None) -> date | None:
    """The announcement day of a reason in the policy's form, else None."""
    match = _DEPRECATION_REASON.match(reason or "")
    if not match:
        return None
    try:
        return date.fromisoformat(match.group(1))
    except ValueError:
        return None


def deprecated_since(day: str, advice: str) -> str:
    """A deprecation reason in the policy's form: "Deprecated since 2026-11-26; use X"."""
    reason = f"Deprecated since {day}; {advice}"
    if deprecation_day(reason) is None:
        raise ValueError(f"not a deprecation reason of the policy: {reason!r}")
    return reason


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


def selected_in(info: Info[Any, Any], child: str) -> set[str]:
    """GraphQL names of the fields selected under ``child`` of the field being resolved (e.g.
    what a page's ``items`` ask for), through fragments; lets a list read a relation for its
    whole page only when the document asks for it."""
    raw = info._raw_info
    names: set[str] = set()
    for field_node in raw.field_nodes:
        _collect(field_node.selection_set, False, child, raw.fragments, names)
    return names


def _collect(
    selection_set: SelectionSetNode | None,
    under: bool,
    child: str,
    fragments: Mapping[str, FragmentDefinitionNode],
    names: set[str],
) -> None:
    # A function of the module, not a closure: a recursive closure is a reference cycle that
    # only a full collection frees, once per request.
    for node in selection_set.selections if selection_set else ():
        if isinstance(node, FieldNode):
            if under:
                names.add(node.name.value)
            elif node.name.value == child:
                _collect(node.selection_set, True, child, fragments, names)
        elif isinstance(node, InlineFragmentNode):
            _collect(node.selection_set, under, child, fragments, names)
        elif isinstance(node, FragmentSpreadNode):
            fragment = fragments.get(node.name.value)
            _collect(fragment.selection_set if fragment else None, under, child, fragments, names)
