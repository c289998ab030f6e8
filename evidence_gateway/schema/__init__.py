"""The GraphQL schema: one Query and one Mutation merged from the domain modules."""

from __future__ import annotations

from typing import Any

import strawberry
from graphql import GraphQLError
from strawberry.tools import merge_types
from strawberry.types import ExecutionContext

from evidence_gateway.schema import workspaces
from evidence_gateway.schema.errors import log_unexpected

Query = merge_types("Query", (workspaces.Query,))
Mutation = merge_types("Mutation", (workspaces.Mutation,))


class EvidenceSchema(strawberry.Schema):
    def process_errors(self, errors: list[GraphQLError], execution_context: ExecutionContext | None = None) -> None:
        # Domain errors are answers, not incidents: log only the unexpected.
        log_unexpected(errors)


def build_schema(**kwargs: Any) -> EvidenceSchema:
    return EvidenceSchema(query=Query, mutation=Mutation, **kwargs)


schema = build_schema()
