"""GraphQL spans while tracing is on: the operation, its parse and validation, and each field
with a resolver of its own, by Strawberry's OpenTelemetry extension with three changes:

- the operation span is an internal span under the request's server span (the extension makes
  it a second server span), named by the operation;
- neither the document nor any argument is recorded: literals and variables may hold what a
  span must not (a URL with a token, a secret);
- it is added per request only while tracing is on: its resolver hook makes Strawberry run
  every field through a middleware, which turns off the plain-leaf fast path
  (schema/execution.py), a cost paid only when traces are wanted.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

from opentelemetry.trace import SpanKind
from strawberry.extensions import LifecycleStep
from strawberry.extensions.tracing.opentelemetry import OpenTelemetryExtension


def _no_arguments(_args: dict[str, Any], _info: Any) -> dict[str, Any]:
    return {}


class GraphQLSpans(OpenTelemetryExtension):
    def __init__(self, tracer_provider: Any) -> None:
        super().__init__(arg_filter=_no_arguments, tracer_provider=tracer_provider)

    def on_operation(self) -> Generator[None, None, None]:
        name = self.execution_context.operation_name
        span = self._tracer.start_span(f"GraphQL {name or 'operation'}", kind=SpanKind.INTERNAL)
        span.set_attribute("component", "graphql")
        self._span_holder[LifecycleStep.OPERATION] = span
        yield
        named = self.execution_context.operation_name
        if named and not name:
            span.update_name(f"GraphQL {named}")
        if named:
            span.set_attribute("graphql.operation.name", named)
        span.end()
