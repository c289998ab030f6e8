"""GraphQL spends its document cost from a points budget, as GitHub's and Shopify's APIs do:
the cost is the one the document limits measure (fields weighted by the list sizes above them,
schema/complexity.py), charged once the document is valid and before it runs; the answer's
``extensions.cost`` reports it with what is left. Over budget, nothing runs: 429 RATE_LIMITED.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from graphql import ExecutionResult as GraphQLExecutionResult
from graphql import GraphQLError
from starlette.types import Scope
from strawberry.extensions import SchemaExtension

from evidence_gateway.errors import DomainError
from evidence_gateway.schema.complexity import operation_cost
from evidence_gateway.web.ratelimit.limiter import Verdict
from evidence_gateway.web.ratelimit.middleware import budget_of, refusal_details, refusal_message


class RateLimited(DomainError):
    status = 429
    code = "rate_limited"
    graphql_code = "RATE_LIMITED"


class GraphQLCost(SchemaExtension):
    verdict: Verdict | None = None

    async def on_execute(self) -> AsyncIterator[None]:
        context = self.execution_context
        request = getattr(context.context, "request", None)
        budget = budget_of(request.scope) if request is not None else None
        if budget is not None and context.graphql_document is not None:
            cost = operation_cost(
                context.schema._schema, context.graphql_document, context.operation_name, context.variables
            )
            policy = budget.limiter.policies.graphql
            self.verdict = await budget.limiter.hit(policy, budget.identity, cost=cost)
            if self.verdict is not None:
                self.verdict = Verdict(policy, self.verdict.allowed, self.verdict.remaining,
                                       self.verdict.reset_seconds, cost)  # fmt: skip
                budget.verdicts.append(self.verdict)
                if not self.verdict.allowed:
                    self._refuse(self.verdict)
        yield

    def _refuse(self, verdict: Verdict) -> None:
        details = refusal_details(verdict)
        error = RateLimited(refusal_message(verdict.policy, int(details["retry_after"])), **details)
        self.execution_context.result = GraphQLExecutionResult(
            data=None, errors=[GraphQLError(error.message, original_error=error)]
        )
        response = getattr(self.execution_context.context, "response", None)
        if response is not None:
            response.status_code = 429
            response.headers["Retry-After"] = str(details["retry_after"])

    def get_results(self) -> dict[str, Any]:
        return cost_extension(self.verdict)


def cost_extension(verdict: Verdict | None) -> dict[str, Any]:
    """``extensions.cost`` of an answer: what the operation cost and what is left."""
    if verdict is None:
        return {}
    return {
        "cost": {
            "requestedQueryCost": verdict.cost,
            "throttleStatus": {
                "maximumAvailable": verdict.policy.limit,
                "currentlyAvailable": verdict.remaining,
                "resetSeconds": verdict.reset_seconds,
            },
        }
    }


def spent(scope: Scope) -> dict[str, Any]:
    """``extensions.cost`` of the operation this request ran, from its budget (an answer in parts,
    which Strawberry hands over without the extensions' results)."""
    budget = budget_of(scope)
    if budget is None:
        return {}
    policy = budget.limiter.policies.graphql
    charged = [v for v in budget.verdicts if v.policy == policy]
    return cost_extension(charged[-1] if charged else None)
