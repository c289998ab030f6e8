"""The GraphQL schema: one Query and one Mutation merged from the domain modules, and the
Subscription root (schema/subscriptions.py, served over WebSocket)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, cast

import strawberry
from graphql import GraphQLError
from graphql.execution import ExperimentalIncrementalExecutionResults
from strawberry.extensions import SchemaExtension
from strawberry.extensions.runner import SchemaExtensionsRunner
from strawberry.schema.config import StrawberryConfig
from strawberry.tools import merge_types
from strawberry.types import ExecutionContext, ExecutionResult
from strawberry.types.base import get_object_definition
from strawberry.types.graphql import OperationType

from evidence_gateway.schema import (
    calculations,
    enums,
    events,
    evidence,
    incremental,
    keys,
    legacy_reports,
    limits,
    nodes,
    packs,
    scalars,
    sharing,
    subscriptions,
    tlog,
    webhook_endpoints,
    webhooks,
    workspaces,
)
from evidence_gateway.schema.budget import ExecutionBudget
from evidence_gateway.schema.context import GraphQLContext
from evidence_gateway.schema.errors import log_unexpected
from evidence_gateway.schema.extension_runner import LeanExtensionsRunner
from evidence_gateway.schema.rate_limit import GraphQLCost, spent
from evidence_gateway.web.observability.graphql import OperationRecorder, with_tracing

# Each domain module contributes its own Query/Mutation; empty ones are skipped.
_DOMAINS = (
    workspaces,
    calculations,
    legacy_reports,
    packs,
    evidence,
    webhooks,
    webhook_endpoints,
    events,
    nodes,
    keys,
    tlog,
    sharing,
)
Query = merge_types("Query", tuple(m.Query for m in _DOMAINS if m.Query.__strawberry_definition__.fields))
Mutation = merge_types("Mutation", tuple(m.Mutation for m in _DOMAINS if m.Mutation.__strawberry_definition__.fields))
for _root, _about in (
    (Query, "Reads: every field needs a Bearer API key (introspection does not)."),
    (Mutation, "Writes: each mutation is one transaction; nothing is half-written."),
):
    get_object_definition(_root, strict=True).description = _about


class EvidenceSchema(strawberry.Schema):
    async def execute(  # noqa: PLR0917 - Strawberry's signature
        self,
        query: str | None,
        variable_values: dict[str, Any] | None = None,
        context_value: Any | None = None,
        root_value: Any | None = None,
        operation_name: str | None = None,
        allowed_operation_types: Iterable[OperationType] | None = None,
        operation_extensions: dict[str, Any] | None = None,
    ) -> ExecutionResult:
        """One result per document (HTTP): a subscription cannot stream here, so it is refused
        (400 BAD_USER_INPUT) instead of failing inside; subscriptions run over the WebSocket."""
        allowed = set(OperationType if allowed_operation_types is None else allowed_operation_types)
        # A query gets a time budget once it is known to be one (schema/budget.py); a call
        # without a request context (tools, tests of the schema alone) gets none.
        settings = getattr(context_value, "settings", None)
        budget = ExecutionBudget(settings.graphql_execution_seconds if settings is not None else None)
        if isinstance(context_value, GraphQLContext):
            context_value.execution_budget = budget
        try:
            async with budget.scope():
                result: Any = await super().execute(
                    query,
                    variable_values,
                    context_value,
                    root_value,
                    operation_name,
                    allowed - {OperationType.SUBSCRIPTION},
                    operation_extensions,
                )
                if isinstance(result, ExperimentalIncrementalExecutionResults):
                    # @defer/@stream (schema/incremental.py): in parts to a client reading them, a
                    # query only; otherwise all its parts now, as one result, within the budget.
                    # Strawberry logs no error of these: the first part's here, the others as they come.
                    first_errors = list(result.initial_result.errors or ())
                    log_unexpected(first_errors)
                    if isinstance(context_value, GraphQLContext) and context_value.incremental and budget.reading:
                        return self._in_parts(result, budget, context_value)
                    result = await incremental.complete(result)
                    log_unexpected(list(result.errors or ())[len(first_errors) :])
                    # Strawberry hands the parts over without its extensions' results: the cost
                    # the budget charged, as any single answer reports it.
                    request = getattr(context_value, "request", None)
                    if request is not None:
                        result.extensions = spent(request.scope) or None
                # Reads a failed field left running end before the answer, within the budget:
                # past it they finish unawaited rather than be cut off (GraphQLContext.settle).
                if isinstance(context_value, GraphQLContext):
                    await context_value.settle()
                return cast(ExecutionResult, result)
        except TimeoutError:
            return budget.exceeded()

    @staticmethod
    def _in_parts(
        result: ExperimentalIncrementalExecutionResults, budget: ExecutionBudget, context: GraphQLContext
    ) -> ExecutionResult:
        """The parts after the first keep the query's deadline and settle its reads at the end.
        Typed as Strawberry types ``execute``: its HTTP view streams this container."""
        parts = incremental.within(result, budget.deadline(), budget.error, log_unexpected, context.settle)
        return cast(ExecutionResult, parts)

    def get_extensions(self, sync: bool = False) -> list[SchemaExtension]:
        return with_tracing(super().get_extensions(sync))

    def create_extensions_runner(
        self, execution_context: ExecutionContext, extensions: list[SchemaExtension]
    ) -> SchemaExtensionsRunner:
        # The hooks entered without Strawberry's per-request scaffolding (schema/extension_runner.py).
        return LeanExtensionsRunner(execution_context=execution_context, extensions=extensions)

    def process_errors(self, errors: list[GraphQLError], execution_context: ExecutionContext | None = None) -> None:
        # Domain errors are answers, not incidents: log only the unexpected.
        log_unexpected(errors)


def build_schema(**kwargs: Any) -> EvidenceSchema:
    # Depth/alias/token/cost ceilings and parser/validation caches (schema/limits.py).
    # Subscription results reach the socket as they are: StreamErrors gives them HTTP's error shape.
    # OperationRecorder names the operation in the access log and metrics (observability/);
    # GraphQLCost spends the document's cost from the caller's points budget (schema/rate_limit.py).
    kwargs.setdefault("extensions", [*limits.extensions(), subscriptions.StreamErrors, OperationRecorder, GraphQLCost])
    # One execution per event for all the subscribers asking the same (schema/subscriptions.py).
    kwargs.setdefault("execution_context_class", subscriptions.SharedEventExecution)
    # Wire formats shared with REST (schema/scalars.py); enum values in SCREAMING_SNAKE_CASE (schema/enums.py).
    kwargs.setdefault(
        "config",
        StrawberryConfig(
            scalar_map=scalars.SCALARS,
            name_converter=enums.EvidenceNameConverter(),
            # @defer/@stream in the schema; who gets parts is the view's choice (schema/incremental.py).
            enable_experimental_incremental_execution=True,
        ),
    )
    return EvidenceSchema(query=Query, mutation=Mutation, subscription=subscriptions.Subscription, **kwargs)


schema = build_schema()
