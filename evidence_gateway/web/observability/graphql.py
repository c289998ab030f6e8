"""The GraphQL operation a request ran, for its access line, its trace and its metrics."""

from __future__ import annotations

from collections.abc import Iterator

from strawberry.extensions import SchemaExtension

from evidence_gateway.web.observability import access, tracing


def with_tracing(extensions: list[SchemaExtension]) -> list[SchemaExtension]:
    """The request's extensions, plus the GraphQL spans while tracing is on."""
    if tracing.active:
        from evidence_gateway.web.observability.graphql_tracing import GraphQLSpans

        extensions.append(GraphQLSpans(tracing.provider()))
    return extensions


class OperationRecorder(SchemaExtension):
    """Notes the operation's name (``anonymous`` when it has none) and type once the document
    is known to be valid; refused documents are logged without one."""

    def on_execute(self) -> Iterator[None]:
        context = self.execution_context
        kind = context.operation_type.value if context.operation_type else None
        name = context.operation_name or "anonymous"
        access.note_graphql(name, kind)
        if tracing.active:
            tracing.annotate_graphql(name, kind)
        yield
