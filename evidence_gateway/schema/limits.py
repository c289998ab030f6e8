"""GraphQL document limits and caches, applied before execution.

Every limit is a parse option or a validation rule, so a refused document never reaches a
resolver and its error has no path: ``format_error`` reports it as BAD_USER_INPUT.

The rule classes are built once at import: the validation cache is keyed by the rule
tuple, so per-request rule classes (what the stock ``QueryDepthLimiter(...)`` and
``MaxAliasesLimiter(...)`` build in their constructors) would never hit the cache.
"""

from __future__ import annotations

from collections.abc import Callable
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
from strawberry.extensions import (
    AddValidationRules,
    MaxTokensLimiter,
    ParserCache,
    SchemaExtension,
    ValidationCache,
    max_aliases,
    query_depth_limiter,
)

from evidence_gateway.resolvers.pagination import MAX_PER_PAGE

MAX_DEPTH = 10
MAX_ALIASES = 30
MAX_TOKENS = 2_000
# Fields a document may resolve, each weighted by the list sizes above it: 100 workspaces
# with every nested relation fit; two nested full pages of lists with many fields do not.
MAX_COST = 50_000
CACHE_SIZE = 256

# Arguments that size a list; a variable counts as the largest page a resolver allows.
LIST_SIZE_ARGUMENTS = frozenset({"perPage", "first", "last", "limit"})


def _multiplier(field: FieldNode) -> int:
    for argument in field.arguments or ():
        if argument.name.value in LIST_SIZE_ARGUMENTS:
            if isinstance(argument.value, IntValueNode):
                return max(int(argument.value.value), 1)
            return MAX_PER_PAGE
    return 1


def selection_cost(
    selection_set: SelectionSetNode | None,
    fragments: dict[str, FragmentDefinitionNode],
    visiting: frozenset[str] = frozenset(),
) -> int:
    """Each field costs 1 plus its children times its list size; introspection is free.

    Relation lists without a size argument (a workspace's imports, a pack's eight artifacts)
    count once: the data bounds them and DataLoaders batch them, whereas pages are what a
    caller can inflate at will.
    """
    if selection_set is None:
        return 0
    total = 0
    for selection in selection_set.selections:
        if isinstance(selection, FieldNode):
            if selection.name.value.startswith("__"):
                continue
            total += 1 + _multiplier(selection) * selection_cost(selection.selection_set, fragments, visiting)
        elif isinstance(selection, InlineFragmentNode):
            total += selection_cost(selection.selection_set, fragments, visiting)
        elif isinstance(selection, FragmentSpreadNode):
            name = selection.name.value
            fragment = fragments.get(name)
            # Cycles and unknown fragments are reported by the standard rules.
            if fragment is not None and name not in visiting:
                total += selection_cost(fragment.selection_set, fragments, visiting | {name})
    return total


def create_cost_rule(max_cost: int) -> type[ValidationRule]:
    class QueryCostRule(ValidationRule):
        """Refuses operations whose weighted field count exceeds ``max_cost``."""

        def __init__(self, context: ValidationContext) -> None:
            super().__init__(context)
            definitions = context.document.definitions
            fragments = {d.name.value: d for d in definitions if isinstance(d, FragmentDefinitionNode)}
            for definition in definitions:
                if isinstance(definition, OperationDefinitionNode):
                    cost = selection_cost(definition.selection_set, fragments)
                    if cost > max_cost:
                        context.report_error(
                            GraphQLError(
                                f"Query cost {cost} exceeds the limit of {max_cost} "
                                "(fields weighted by list sizes): request fewer items or fields.",
                                definition,
                            )
                        )

    return QueryCostRule


DEPTH_RULE = query_depth_limiter.create_validator(MAX_DEPTH, should_ignore=None)
ALIASES_RULE = max_aliases.create_validator(MAX_ALIASES)
COST_RULE = create_cost_rule(MAX_COST)


class DocumentLimits(AddValidationRules):
    """Depth, alias and cost ceilings as validation rules (shared classes, see module doc)."""

    def __init__(self) -> None:
        super().__init__([DEPTH_RULE, ALIASES_RULE, COST_RULE])


def extensions() -> list[Callable[[], SchemaExtension] | type[SchemaExtension]]:
    """Classes or factories: Strawberry builds fresh instances for every request."""
    factories: list[Any] = [
        partial(MaxTokensLimiter, max_token_count=MAX_TOKENS),
        partial(ParserCache, maxsize=CACHE_SIZE),
        DocumentLimits,
        partial(ValidationCache, maxsize=CACHE_SIZE),
    ]
    return factories
