"""The GraphQL schema: one Query and one Mutation merged from the domain modules."""

from __future__ import annotations

from typing import Any

import strawberry
from graphql import GraphQLError
from strawberry.tools import merge_types
from strawberry.types import ExecutionContext
from strawberry.types.base import get_object_definition

from evidence_gateway.schema import calculations, events, evidence, limits, packs, webhooks, workspaces
from evidence_gateway.schema.errors import log_unexpected

# Each domain module contributes its own Query/Mutation; empty ones are skipped.
_DOMAINS = (workspaces, calculations, packs, evidence, webhooks, events)
Query = merge_types("Query", tuple(m.Query for m in _DOMAINS if m.Query.__strawberry_definition__.fields))
Mutation = merge_types("Mutation", tuple(m.Mutation for m in _DOMAINS if m.Mutation.__strawberry_definition__.fields))
for _root, _about in (
    (Query, "Reads: every field needs a Bearer API key (introspection does not)."),
    (Mutation, "Writes: each mutation is one transaction; nothing is half-written."),
):
    get_object_definition(_root, strict=True).description = _about


class EvidenceSchema(strawberry.Schema):
    def process_errors(self, errors: list[GraphQLError], execution_context: ExecutionContext | None = None) -> None:
        # Domain errors are answers, not incidents: log only the unexpected.
        log_unexpected(errors)


def build_schema(**kwargs: Any) -> EvidenceSchema:
    # Depth/alias/token/cost ceilings and parser/validation caches (schema/limits.py).
    kwargs.setdefault("extensions", limits.extensions())
    return EvidenceSchema(query=Query, mutation=Mutation, **kwargs)


schema = build_schema()
