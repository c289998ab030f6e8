"""Depth, aliases and cost of a GraphQL document, measured in ONE walk that computes each fragment
once, and the validation rule that refuses a document over any of those ceilings.

Strawberry's ``QueryDepthLimiter`` and ``MaxAliasesLimiter`` re-walk a fragment at every
spread, so a ~200-token "fragment bomb" (fragments spreading the next one a few times,
a dozen levels deep) takes them minutes of blocked event loop; here it is refused in
microseconds. The rule class is built once at import: the validation cache is keyed by
the rule tuple, so a class per request would never hit it. The same walk prices an operation
for the rate-limit budget (``operation_cost``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from graphql import (
    DocumentNode,
    FieldNode,
    FragmentDefinitionNode,
    FragmentSpreadNode,
    GraphQLError,
    GraphQLList,
    GraphQLObjectType,
    GraphQLSchema,
    InlineFragmentNode,
    IntValueNode,
    NullValueNode,
    OperationDefinitionNode,
    SelectionSetNode,
    ValidationContext,
    ValidationRule,
    VariableNode,
    get_named_type,
    get_nullable_type,
)
from strawberry.extensions import AddValidationRules

from evidence_gateway.resolvers.pagination import DEFAULT_PER_PAGE, MAX_PER_PAGE
from evidence_gateway.schema.errors import TOO_COMPLEX

MAX_DEPTH = 10
# Introspection nests deeper than data: the standard query's type references are ten levels
# (graphql-js 16 ``getIntrospectionQuery``: __schema > types > fields > args > type > 9 x ofType).
MAX_INTROSPECTION_DEPTH = 16
MAX_ALIASES = 30
# Fields a document may resolve, each weighted by the list sizes above it: 100 workspaces
# with every nested relation fit; two nested full pages of lists with many fields do not.
MAX_COST = 50_000
# What one ``__schema`` costs, whatever it selects: about the values a full introspection of this
# schema returns. One (GraphiQL, a code generator) fits; a handful in one document does not.
INTROSPECTION_SCHEMA_COST = 10_000
# Items a relation list (no size argument) is assumed to hold: a few packs per workspace, nine
# artifacts per pack. 100 workspaces with every relation still fit under MAX_COST.
RELATION_LIST_WEIGHT = 4
CACHE_SIZE = 256

# The lists of a page or connection: sized by the field above them, not weighted again.
PAGE_ITEMS = frozenset({"items", "nodes", "edges"})
# Arguments that size a list. A variable counts as the value the request gives it (or its
# default); in the cached validation, which sees no variables, as 1, the least it can be, and the
# ceiling is checked again with the request's values before anything runs (``operation_cost``).
LIST_SIZE_ARGUMENTS = frozenset({"perPage", "first", "last", "limit"})
# Measures saturate here: a bomb's true size is astronomically large and irrelevant.
CAP = 10**15


@dataclass(frozen=True, slots=True)
class Measure:
    depth: int = 0  # nested object fields, as Strawberry's QueryDepthLimiter counts them
    introspection_depth: int = 0  # the same, inside __schema and __type
    aliases: int = 0  # aliased fields, fragments expanded at every spread
    cost: int = 0  # fields, each weighted by the list sizes above it

    def __add__(self, other: Measure) -> Measure:
        return Measure(
            max(self.depth, other.depth),
            max(self.introspection_depth, other.introspection_depth),
            min(self.aliases + other.aliases, CAP),
            min(self.cost + other.cost, CAP),
        )


@dataclass(frozen=True, slots=True)
class ListFields:
    """Names of the schema's fields that take a page size, and of those that return a list of
    objects without one (a workspace's packs; not the ``items`` of a page nor the ``nodes`` and
    ``edges`` of a connection, whose page field carries the size). Names, not coordinates: the
    walk has no types."""

    paged: frozenset[str] = frozenset()
    related: frozenset[str] = frozenset()


def list_fields(schema: GraphQLSchema) -> ListFields:
    paged: set[str] = set()
    related: set[str] = set()
    for named in schema.type_map.values():
        if named.name.startswith("__") or not isinstance(named, GraphQLObjectType):
            continue
        for name, definition in named.fields.items():
            returned = get_nullable_type(definition.type)
            if not LIST_SIZE_ARGUMENTS.isdisjoint(definition.args):
                paged.add(name)
            elif name not in PAGE_ITEMS and isinstance(returned, GraphQLList):
                if isinstance(get_named_type(returned), GraphQLObjectType):
                    related.add(name)
    return ListFields(frozenset(paged), frozenset(related - paged))


# A variable's page size: a number, None (null or not given: the argument's default applies), or
# UNKNOWN (a value that is no number: execution refuses it, the largest page until then).
UNKNOWN = -(2**31) - 1  # below every GraphQL Int: no value given can be mistaken for it


def variable_sizes(operation: OperationDefinitionNode, variables: Mapping[str, Any] | None) -> dict[str, int | None]:
    """Each of the operation's variables as a page size would read it: the request's value, else
    the variable's default, else None."""
    given = variables or {}
    sizes: dict[str, int | None] = {}
    for definition in operation.variable_definitions or ():
        name = definition.variable.name.value
        if name in given:
            value = given[name]
            if value is None:
                sizes[name] = None
            elif isinstance(value, int) and not isinstance(value, bool) and -(2**31) <= value < 2**31:
                sizes[name] = value  # a GraphQL Int; anything else fails the variable's coercion
            else:
                sizes[name] = UNKNOWN
        elif isinstance(definition.default_value, IntValueNode):
            sizes[name] = int(definition.default_value.value)
        elif definition.default_value is None or isinstance(definition.default_value, NullValueNode):
            sizes[name] = None
        else:
            sizes[name] = UNKNOWN
    return sizes


def _multiplier(node: FieldNode, lists: ListFields, sizes: Mapping[str, int | None] | None = None) -> int:
    """How many items a field's selection is resolved for: its size argument (a variable's value
    from ``sizes``; None: not known yet, counted as 1), else a default page."""
    for argument in node.arguments or ():
        if argument.name.value in LIST_SIZE_ARGUMENTS:
            value = argument.value
            if isinstance(value, IntValueNode):
                return max(min(int(value.value), CAP), 1)
            if isinstance(value, VariableNode):
                if sizes is None:
                    return 1
                size = sizes.get(value.name.value, UNKNOWN)
                if size is None:
                    break  # null or not given: the resolver's default page
                if size != UNKNOWN:
                    return max(min(size, CAP), 1)
            return MAX_PER_PAGE
    if node.name.value in lists.paged:
        return DEFAULT_PER_PAGE  # what the resolver returns without a size
    if node.name.value in lists.related:
        return RELATION_LIST_WEIGHT
    return 1


@dataclass
class DocumentWalk:
    """Measures selection sets; each fragment is measured once (memo), cycles count as empty.

    A page's size weighs everything selected inside it, a page without a size argument as the
    default page (20) it returns; a relation list (a workspace's packs, a pack's artifacts) as
    ``RELATION_LIST_WEIGHT`` items: the data bounds them, but nested lists multiply.
    Introspection counts too: ``__schema`` as the size of a whole introspection, its nesting
    against its own depth ceiling.
    """

    fragments: dict[str, FragmentDefinitionNode]
    lists: ListFields = ListFields()
    sizes: Mapping[str, int | None] | None = None  # the variables' page sizes; None: not known
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
        nested = 1 if node.selection_set else 0
        if node.name.value in ("__schema", "__type"):
            depth = max(inner.depth, inner.introspection_depth) + nested
            cost = INTROSPECTION_SCHEMA_COST if node.name.value == "__schema" else 1 + inner.cost
            return Measure(0, depth, aliases, min(cost, CAP))
        cost = min(1 + self._weight(node) * inner.cost, CAP)
        return Measure(inner.depth + nested, inner.introspection_depth, aliases, cost)

    def _weight(self, node: FieldNode) -> int:
        return _multiplier(node, self.lists, self.sizes)

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


_LIST_FIELDS: dict[int, ListFields] = {}


def _lists_of(schema: GraphQLSchema) -> ListFields:
    found = _LIST_FIELDS.get(id(schema))
    if found is None:
        found = _LIST_FIELDS[id(schema)] = list_fields(schema)
    return found


_COSTS: dict[tuple[Any, ...], tuple[DocumentNode, int]] = {}


def _chosen(document: DocumentNode, operation_name: str | None) -> OperationDefinitionNode | None:
    operations = [d for d in document.definitions if isinstance(d, OperationDefinitionNode)]
    chosen = [o for o in operations if operation_name is None or (o.name and o.name.value == operation_name)]
    return chosen[0] if chosen else None


def operation_cost(
    schema: GraphQLSchema,
    document: DocumentNode,
    operation_name: str | None,
    variables: Mapping[str, Any] | None = None,
) -> int:
    """The cost of the operation that runs with these variables (``first: $n`` weighs n), measured
    as the cost ceiling measures it (at least 1), so the rate-limit budget (schema/rate_limit.py)
    charges the number the limit checks (schema/limits.py, once the variables are known).

    Kept per parsed document and page-size variables: the parser cache hands the same document to
    every request sending the same text, and the walk was about a tenth of a page's GraphQL time."""
    operation = _chosen(document, operation_name)
    sizes = variable_sizes(operation, variables) if operation is not None else {}
    key = (id(schema), id(document), operation_name, tuple(sorted(sizes.items())))
    held = _COSTS.get(key)
    if held is not None and held[0] is document:  # the document is kept: its id cannot be reused
        return held[1]
    cost = _operation_cost(schema, document, operation, sizes)
    if len(_COSTS) >= CACHE_SIZE * 4:
        _COSTS.clear()
    _COSTS[key] = (document, cost)
    return cost


def _operation_cost(
    schema: GraphQLSchema,
    document: DocumentNode,
    operation: OperationDefinitionNode | None,
    sizes: Mapping[str, int | None],
) -> int:
    definitions = document.definitions
    walk = DocumentWalk(
        {d.name.value: d for d in definitions if isinstance(d, FragmentDefinitionNode)}, _lists_of(schema), sizes
    )
    return max(walk.selection_set(operation.selection_set).cost if operation is not None else 0, 1)


def cost_refusal(cost: int, operation: OperationDefinitionNode | None) -> GraphQLError:
    """The ceiling's refusal, in the same words whether the document alone or its variables
    put it over."""
    return _too_complex(
        f"Query cost {cost} exceeds the limit of {MAX_COST} (fields weighted by list sizes): request fewer "
        "items or fields.",
        operation,
    )


class DocumentLimitsRule(ValidationRule):
    """Refuses documents over the depth, alias or cost ceiling, with a message naming the limit."""

    def __init__(self, context: ValidationContext) -> None:
        super().__init__(context)
        definitions = context.document.definitions
        walk = DocumentWalk(
            {d.name.value: d for d in definitions if isinstance(d, FragmentDefinitionNode)},
            _lists_of(context.schema),
        )
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
            if measured.introspection_depth > MAX_INTROSPECTION_DEPTH:
                context.report_error(
                    _too_complex(
                        f"'{name}' exceeds maximum introspection depth of {MAX_INTROSPECTION_DEPTH}", definition
                    )
                )
            if measured.cost > MAX_COST:
                context.report_error(cost_refusal(measured.cost, definition))
        if aliases > MAX_ALIASES:
            context.report_error(_too_complex(f"{aliases} aliases found. Allowed: {MAX_ALIASES}"))


def _too_complex(message: str, node: OperationDefinitionNode | None = None) -> GraphQLError:
    return GraphQLError(message, node, extensions={"code": TOO_COMPLEX})


class DocumentLimits(AddValidationRules):
    """Depth, alias and cost ceilings as one shared validation rule (see the module doc)."""

    def __init__(self) -> None:
        super().__init__([DocumentLimitsRule])
