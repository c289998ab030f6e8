"""GraphQL document limits and caches, applied before execution.

Every limit is a parse option or a validation rule, so a refused document never reaches a
resolver and its error has no path: ``format_error`` reports it as QUERY_TOO_COMPLEX.

Depth, aliases and cost are measured in ONE walk that computes each fragment once.
Strawberry's ``QueryDepthLimiter`` and ``MaxAliasesLimiter`` re-walk a fragment at every
spread, so a ~200-token "fragment bomb" (fragments spreading the next one a few times,
a dozen levels deep) takes them minutes of blocked event loop; here it is refused in
microseconds. The rule class is built once at import: the validation cache is keyed by
the rule tuple, so a class per request would never hit it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from graphql import (
    FieldNode,
    FragmentDefinitionNode,
    FragmentSpreadNode,
    GraphQLError,
    InlineFragmentNode,
    IntValueNode,
    OperationDefinitionNode,
    SelectionSetNode,
    ValidationContext,
    ValidationRule,
)
from strawberry.extensions import AddValidationRules, MaxTokensLimiter, ParserCache, SchemaExtension, ValidationCache

from evidence_gateway.resolvers.pagination import MAX_PER_PAGE
from evidence_gateway.schema.errors import TOO_COMPLEX, VALIDATION_FAILED

MAX_DEPTH = 10
MAX_ALIASES = 30
MAX_TOKENS = 2_000
# Fields a document may resolve, each weighted by the list sizes above it: 100 workspaces
# with every nested relation fit; two nested full pages of lists with many fields do not.
MAX_COST = 50_000
CACHE_SIZE = 256

# Arguments that size a list; a variable counts as the largest page a resolver allows.
LIST_SIZE_ARGUMENTS = frozenset({"perPage", "first", "last", "limit"})
# Measures saturate here: a bomb's true size is astronomically large and irrelevant.
CAP = 10**15


@dataclass(frozen=True, slots=True)
class Measure:
    depth: int = 0  # nested object fields, as Strawberry's QueryDepthLimiter counts them
    aliases: int = 0  # aliased fields, fragments expanded at every spread
    cost: int = 0  # fields, each weighted by the list sizes above it

    def __add__(self, other: Measure) -> Measure:
        return Measure(
            max(self.depth, other.depth), min(self.aliases + other.aliases, CAP), min(self.cost + other.cost, CAP)
        )


def _multiplier(node: FieldNode) -> int:
    for argument in node.arguments or ():
        if argument.name.value in LIST_SIZE_ARGUMENTS:
            if isinstance(argument.value, IntValueNode):
                return max(min(int(argument.value.value), CAP), 1)
            return MAX_PER_PAGE
    return 1


@dataclass
class DocumentWalk:
    """Measures selection sets; each fragment is measured once (memo), cycles count as empty.

    Relation lists without a size argument (a workspace's imports, a pack's nine artifacts)
    cost once: the data bounds them and DataLoaders batch them, whereas pages are what a
    caller can inflate at will. Introspection fields cost nothing and add no depth.
    """

    fragments: dict[str, FragmentDefinitionNode]
    memo: dict[str, Measure] = field(default_factory=dict)
    visiting: set[str] = field(default_factory=set)

    def selection_set(self, selection_set: SelectionSetNode | None) -> Measure:
        total = Measure()
        for selection in selection_set.selections if selection_set else ():
            if isinstance(selection, FieldNode):
                total = total + self.field(selection)
            elif isinstance(selection, InlineFragmentNode):
                total = total + self.selection_set(selection.selection_set)
            elif isinstance(selection, FragmentSpreadNode):
                total = total + self.fragment(selection.name.value)
        return total

    def field(self, node: FieldNode) -> Measure:
        inner = self.selection_set(node.selection_set)
        aliases = min(inner.aliases + (1 if node.alias else 0), CAP)
        if node.name.value.startswith("__"):
            return Measure(0, aliases, 0)
        depth = inner.depth + 1 if node.selection_set else 0
        return Measure(depth, aliases, min(1 + _multiplier(node) * inner.cost, CAP))

    def fragment(self, name: str) -> Measure:
        if name in self.memo:
            return self.memo[name]
        definition = self.fragments.get(name)
        if definition is None or name in self.visiting:
            return Measure()  # unknown fragments and cycles are reported by the standard rules
        self.visiting.add(name)
        measured = self.selection_set(definition.selection_set)
        self.visiting.discard(name)
        self.memo[name] = measured
        return measured


class DocumentLimitsRule(ValidationRule):
    """Refuses documents over the depth, alias or cost ceiling, with a message naming the limit."""

    def __init__(self, context: ValidationContext) -> None:
        super().__init__(context)
        definitions = context.document.definitions
        walk = DocumentWalk({d.name.value: d for d in definitions if isinstance(d, FragmentDefinitionNode)})
        aliases = 0
        for definition in definitions:
            if not isinstance(definition, OperationDefinitionNode):
                continue
            measured = walk.selection_set(definition.selection_set)
            aliases += measured.aliases
            name = definition.name.value if definition.name else "anonymous"
            if measured.depth > MAX_DEPTH:
                context.report_error(
                    _too_complex(f"'{name}' exceeds maximum operation depth of {MAX_DEPTH}", definition)
                )
            if measured.cost > MAX_COST:
                context.report_error(
                    _too_complex(
                        f"Query cost {measured.cost} exceeds the limit of {MAX_COST} "
                        "(fields weighted by list sizes): request fewer items or fields.",
                        definition,
                    )
                )
        if aliases > MAX_ALIASES:
            context.report_error(_too_complex(f"{aliases} aliases found. Allowed: {MAX_ALIASES}"))


def _too_complex(message: str, node: OperationDefinitionNode | None = None) -> GraphQLError:
    return GraphQLError(message, node, extensions={"code": TOO_COMPLEX})


class DocumentLimits(AddValidationRules):
    """Depth, alias and cost ceilings as one shared validation rule (see the module doc)."""

    def __init__(self) -> None:
        super().__init__([DocumentLimitsRule])


class OperationChecks(SchemaExtension):
    """Checks that need the request, not only the document, so they stay out of the cached
    validation: here, which operation runs. Listed after ``ValidationCache``, it runs once the
    cached rules have (Strawberry reads the errors before the hooks' exits run).

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
        return []


def extensions() -> list[Callable[[], SchemaExtension] | type[SchemaExtension]]:
    """Classes or factories: Strawberry builds fresh instances for every request."""
    factories: list[Any] = [
        partial(MaxTokensLimiter, max_token_count=MAX_TOKENS),
        partial(ParserCache, maxsize=CACHE_SIZE),
        DocumentLimits,
        partial(ValidationCache, maxsize=CACHE_SIZE),
        OperationChecks,
    ]
    return factories
