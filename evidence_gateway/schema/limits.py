"""GraphQL document limits and caches, applied before execution: the extensions every schema runs.

Every limit is a parse option or a validation rule, so a refused document never reaches a
resolver and its error has no path: ``format_error`` reports it as QUERY_TOO_COMPLEX. The text
checks are in document_text.py, depth, aliases and cost in complexity.py; what needs the request
or the settings (the operation chosen, mutation fields, introspection, trusted documents) is here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import partial
from typing import Any

from graphql import (
    DocumentNode,
    FieldNode,
    FragmentDefinitionNode,
    FragmentSpreadNode,
    GraphQLError,
    InlineFragmentNode,
    OperationDefinitionNode,
    OperationType,
    SelectionSetNode,
    validate,
)
from graphql.validation import NoSchemaIntrospectionCustomRule
from strawberry.extensions import MaxTokensLimiter, ParserCache, SchemaExtension, ValidationCache

from evidence_gateway.resolvers.persisted_queries import sha256_of
from evidence_gateway.schema.complexity import (
    CACHE_SIZE,
    MAX_ALIASES,
    MAX_COST,
    MAX_DEPTH,
    MAX_INTROSPECTION_DEPTH,
    DocumentLimits,
    cost_refusal,
    operation_cost,
)
from evidence_gateway.schema.document_text import (
    DEFAULT_MAX_DOCUMENT_BYTES,
    MAX_NESTING,
    MAX_TOKENS,
    DocumentGuard,
    document_refusal,
    nesting_depth,
    over_token_limit,
    refused_stream,
    settings_refusal,
)
from evidence_gateway.schema.errors import TOO_COMPLEX, VALIDATION_FAILED
from evidence_gateway.schema.persisted import DocumentNotTrusted

__all__ = [
    "CACHE_SIZE",
    "DEFAULT_MAX_DOCUMENT_BYTES",
    "DEFAULT_MAX_MUTATIONS",
    "MAX_ALIASES",
    "MAX_COST",
    "MAX_DEPTH",
    "MAX_INTROSPECTION_DEPTH",
    "MAX_NESTING",
    "MAX_TOKENS",
    "DocumentGuard",
    "DocumentLimits",
    "OperationChecks",
    "document_refusal",
    "extensions",
    "nesting_depth",
    "operation_cost",
    "over_token_limit",
    "refused_stream",
    "settings_refusal",
]

DEFAULT_MAX_MUTATIONS = 5  # EVIDENCE_GRAPHQL_MAX_MUTATIONS


class OperationChecks(SchemaExtension):
    """Checks that need the request or the settings, not only the document, so they stay out of
    the cached validation: which operation runs, how many mutation fields it has, whether
    introspection is allowed. Listed after ``ValidationCache``, it runs once the cached rules
    have (Strawberry reads the errors before the hooks' exits run).

    The spec (GraphQL §6.1 GetOperation) makes a document with several operations and no
    ``operationName`` an error; without this check one of them would run, a mutation included.
    """

    def on_validate(self) -> Iterator[None]:
        context = self.execution_context
        if not context.pre_execution_errors and context.graphql_document is not None:
            context.pre_execution_errors = self.refusals()
        yield

    def refusals(self) -> list[GraphQLError]:
        context = self.execution_context
        assert context.graphql_document is not None
        operations = [d for d in context.graphql_document.definitions if isinstance(d, OperationDefinitionNode)]
        # ``operation_name`` falls back to the first operation's name; what the client sent is here.
        if len(operations) > 1 and not context._provided_operation_name:
            return [
                GraphQLError(
                    "Must provide operationName if the document contains multiple operations.",
                    extensions={"code": VALIDATION_FAILED},
                )
            ]
        # Trusted documents (schema/persisted.py) are checked on HTTP before parsing; here again so
        # that subscriptions over the WebSocket obey the allow-list too.
        app = getattr(getattr(context.context, "request", None), "app", None)
        trusted: dict[str, str] | None = getattr(getattr(app, "state", None), "trusted_documents", None)
        if trusted is not None and (context.query is None or sha256_of(context.query) not in trusted):
            return [GraphQLError(DocumentNotTrusted().message, extensions={"code": DocumentNotTrusted.graphql_code})]
        settings = getattr(context.context, "settings", None)
        anonymous = getattr(context.context, "principal", None) is None
        if settings is not None and not (
            settings.graphql_introspection and (settings.graphql_anonymous_introspection or not anonymous)
        ):
            refused = validate(context.schema._schema, context.graphql_document, [NoSchemaIntrospectionCustomRule])
            if refused:
                return [GraphQLError(e.message, e.nodes, extensions={"code": VALIDATION_FAILED}) for e in refused]
        limit = settings.graphql_max_mutations if settings is not None else DEFAULT_MAX_MUTATIONS
        chosen = [o for o in operations if len(operations) == 1 or (o.name and o.name.value == context.operation_name)]
        if chosen and chosen[0].operation == OperationType.MUTATION:
            fields = _root_fields(chosen[0].selection_set, context.graphql_document)
            if fields > limit:
                return [
                    GraphQLError(
                        f"{fields} mutation fields in one document; at most {limit} "
                        "(EVIDENCE_GRAPHQL_MAX_MUTATIONS): send the rest in further requests.",
                        chosen[0],
                        extensions={"code": TOO_COMPLEX},
                    )
                ]
        if chosen:
            # The cost ceiling again, with the request's page sizes (the cached rule counted a
            # variable size as 1): ``first: $n`` weighs n, as the budget charges it.
            cost = operation_cost(context.schema._schema, context.graphql_document, context.operation_name,
                                  context.variables)  # fmt: skip
            if cost > MAX_COST:
                return [cost_refusal(cost, chosen[0])]
        if chosen and chosen[0].operation == OperationType.QUERY:
            budget = getattr(context.context, "execution_budget", None)
            if budget is not None:
                budget.reads_only()
        return []


def _root_fields(selection_set: SelectionSetNode, document: DocumentNode) -> int:
    """Fields a mutation runs at its root, through fragments (each fragment at most once)."""
    fragments = {d.name.value: d for d in document.definitions if isinstance(d, FragmentDefinitionNode)}
    pending, seen, count = [selection_set], set[str](), 0
    while pending:
        for selection in pending.pop().selections:
            if isinstance(selection, FieldNode):
                count += 1
            elif isinstance(selection, InlineFragmentNode):
                pending.append(selection.selection_set)
            elif isinstance(selection, FragmentSpreadNode) and selection.name.value not in seen:
                seen.add(selection.name.value)
                if (definition := fragments.get(selection.name.value)) is not None:
                    pending.append(definition.selection_set)
    return count


# The validation cache's key holds the parsed document, and graphql-core 3.3 hashes a document
# by walking every node of it (its nodes are frozen dataclasses; 3.2 remembered the hash): on
# every request, for a document the parser cache has handed out many times before. A document
# cannot change, so its hash is remembered here, by identity, for as many documents as the
# parser cache holds (and a little more: emptied when full).
_DOCUMENT_HASHES: dict[int, tuple[DocumentNode, int]] = {}
_hash_of_document = DocumentNode.__hash__


def _remembered_hash(document: DocumentNode) -> int:
    held = _DOCUMENT_HASHES.get(id(document))
    if held is not None and held[0] is document:  # the document is kept: its id cannot be reused
        return held[1]
    hashed = _hash_of_document(document)
    if len(_DOCUMENT_HASHES) >= CACHE_SIZE * 4:
        _DOCUMENT_HASHES.clear()
    _DOCUMENT_HASHES[id(document)] = (document, hashed)
    return hashed


DocumentNode.__hash__ = _remembered_hash  # type: ignore[method-assign, assignment]


def extensions() -> list[Callable[[], SchemaExtension] | type[SchemaExtension]]:
    """Classes or factories: Strawberry builds fresh instances for every request."""
    factories: list[Any] = [
        DocumentGuard,
        partial(MaxTokensLimiter, max_token_count=MAX_TOKENS),
        partial(ParserCache, maxsize=CACHE_SIZE),
        DocumentLimits,
        partial(ValidationCache, maxsize=CACHE_SIZE),
        OperationChecks,
    ]
    return factories
