"""GraphQL for evidence items and webhook tests (issue 5)."""

from __future__ import annotations

import strawberry


@strawberry.type
class WorkspaceEvidenceFields:
    """Fields this domain adds to `Workspace` (WorkspaceType inherits them)."""


@strawberry.type
class Query:
    pass


@strawberry.type
class Mutation:
    pass
