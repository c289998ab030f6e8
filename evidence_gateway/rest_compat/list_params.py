"""A REST list's ``filter[...]`` and ``sort`` query parameters, as the mapping the list
declarations read (resolvers/list_queries.py validates them, for GraphQL's ``filter:`` too).

- ``filter[status]=draft,approved`` (or the parameter repeated): one of these values;
- ``filter[created_at][gte]=2025-01-01T00:00:00Z`` and ``[lt]``: a date-time range;
- ``filter[name_contains]=north``: a case-insensitive substring;
- ``sort=name`` ascending, ``sort=-updated_at`` descending (the id breaks ties).

Additive to the contract: without them a list answers exactly as before, and other unknown
query parameters are still ignored. A ``filter[...]`` naming no declared field, or a ``sort``
naming no declared ordering, is a 422 naming the parameter.
"""

from __future__ import annotations

import re
from typing import Any

from starlette.datastructures import QueryParams

from evidence_gateway.errors import InvalidInput

_FILTER = re.compile(r"^filter\[([^\[\]]*)\](?:\[([^\[\]]*)\])?$")


def list_filters(query: QueryParams) -> dict[str, Any]:
    """``{field: value}`` of every ``filter[...]`` parameter (ranges as ``{bound: value}``)."""
    found: dict[str, Any] = {}
    malformed: dict[str, str] = {}
    for key in dict.fromkeys(query.keys()):
        if key != "filter" and not key.startswith("filter["):
            continue  # another parameter ("filters", "filtered"): ignored as before
        match = _FILTER.fullmatch(key)
        if match is None:
            malformed[key] = "write filter[field] or filter[field][gte|lt]"
            continue
        name, bound = match.groups()
        values = query.getlist(key)
        if bound is not None:
            found.setdefault(name, {})
            if isinstance(found[name], dict):
                found[name][bound] = values[-1]
            continue
        # Repeated or comma-separated values: one list (a single value stays text, which the
        # declaration splits on commas or reads as a substring or id).
        found[name] = values[0] if len(values) == 1 else ",".join(values)
    if malformed:
        raise InvalidInput(fields=malformed)
    return found


def list_order(query: QueryParams) -> tuple[str, str] | None:
    """``(field, "asc"|"desc")`` of ``sort=field`` / ``sort=-field``, None without one."""
    raw = query.get("sort")
    if raw is None:
        return None
    if raw.startswith("-"):
        return raw[1:], "desc"
    return raw, "asc"
