"""GraphQL for evidence packs, artifacts and approvals (issue 4)."""

from __future__ import annotations

import strawberry


@strawberry.type
class WorkspacePackFields:
    """Fields this domain adds to `Workspace` (WorkspaceType inherits them)."""


@strawberry.type
class Query:
    pass


@strawberry.type
class Mutation:
    pass
