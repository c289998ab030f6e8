"""GraphQL for calculation runs, quality assessments and legacy reports (issue 3)."""

from __future__ import annotations

import strawberry


@strawberry.type
class WorkspaceCalculationFields:
    """Fields this domain adds to `Workspace` (WorkspaceType inherits them)."""


@strawberry.type
class Query:
    pass


@strawberry.type
class Mutation:
    pass
