"""ETags of workspaces and packs, and If-Match on the writes that change them (DESIGN.md §14)."""

from __future__ import annotations

from typing import Protocol

from evidence_gateway.core.context import Ctx
from evidence_gateway.errors import PreconditionFailed


class Versioned(Protocol):
    """Whatever carries a row version: an entity, or a record read from a repository."""

    @property
    def row_version(self) -> int: ...


class Changing(Protocol):
    """An entity a unit of work changes."""

    row_version: int


def etag(row: Versioned) -> str:
    """A strong tag: the row_version moves with every change of what the resource's GET shows."""
    return f'"{row.row_version}"'


def touch(row: Changing) -> None:
    row.row_version += 1


def check_if_match(ctx: Ctx, row: Versioned, what: str) -> None:
    """RFC 9110 §13.1.1: strong comparison; ``*`` matches any current version."""
    if ctx.if_match is None:
        return
    tags = {t.strip() for t in ctx.if_match.split(",")}
    if "*" in tags or etag(row) in tags:
        return
    raise PreconditionFailed(
        f"the {what} has changed since the version named in If-Match",
        resource=what,
        etag=etag(row),
    )
