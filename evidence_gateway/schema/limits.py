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

import re
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from functools import partial
from itertools import islice
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
    OperationDefinitionNode,
    OperationType,
    SelectionSetNode,
    ValidationContext,
    ValidationRule,
    get_named_type,
    get_nullable_type,
    validate,
)
from graphql.validation import NoSchemaIntrospectionCustomRule
from strawberry.extensions import AddValidationRules, MaxTokensLimiter, ParserCache, SchemaExtension, ValidationCache
from strawberry.types.execution import PreExecutionError

from evidence_gateway.resolvers.pagination import DEFAULT_PER_PAGE, MAX_PER_PAGE
from evidence_gateway.resolvers.persisted_queries import sha256_of
from evidence_gateway.schema.errors import TOO_COMPLEX, VALIDATION_FAILED
from evidence_gateway.schema.persisted import DocumentNotTrusted

MAX_DEPTH = 10
# Introspection nests deeper than data: the standard query's type references are ten levels
# (graphql-js 16 ``getIntrospectionQuery``: __schema > types > fields > args > type > 9 x ofType).
MAX_INTROSPECTION_DEPTH = 16
MAX_ALIASES = 30
DEFAULT_MAX_MUTATIONS = 5  # EVIDENCE_GRAPHQL_MAX_MUTATIONS
MAX_TOKENS = 2_000
# Braces, brackets and parentheses nested in one document: the standard introspection query
# needs 14, a data query at the depth limit with nested input objects about 20, and a JSON
# literal may nest as deep as a REST body's value (63 levels, jsoncodec.MAX_JSON_DEPTH) inside
# the few levels of its mutation. Checked before parsing, because graphql-core's parser and
# validation recurse per level (RecursionError well above this, in a request's stack).
MAX_NESTING = 80
# EVIDENCE_GRAPHQL_MAX_DOCUMENT_BYTES: a document is program text; the largest real one is a
# few kilobytes, and longer ones cost the lexer time in proportion before anything is refused.
DEFAULT_MAX_DOCUMENT_BYTES = 64 * 1024
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
# Arguments that size a list; a variable counts as the largest page a resolver allows.
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


def _multiplier(node: FieldNode, lists: ListFields) -> int:
    """How many items a field's selection is resolved for: its size argument, else a default page."""
    for argument in node.arguments or ():
        if argument.name.value in LIST_SIZE_ARGUMENTS:
            if isinstance(argument.value, IntValueNode):
                return max(min(int(argument.value.value), CAP), 1)
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
        return _multiplier(node, self.lists)

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


_COSTS: dict[tuple[int, int, str | None], tuple[DocumentNode, int]] = {}


def operation_cost(schema: GraphQLSchema, document: DocumentNode, operation_name: str | None) -> int:
    """The cost of the operation that runs, measured as the cost ceiling measures it (at least 1),
    so the rate-limit budget (schema/rate_limit.py) charges the same number the limit checks.

    Variables do not enter it (a variable page size counts as the largest page), so it is kept
    per parsed document: the parser cache hands the same document to every request sending the
    same text, and the walk was about a tenth of a page's GraphQL time."""
    key = (id(schema), id(document), operation_name)
    held = _COSTS.get(key)
    if held is not None and held[0] is document:  # the document is kept: its id cannot be reused
        return held[1]
    cost = _operation_cost(schema, document, operation_name)
    if len(_COSTS) >= CACHE_SIZE * 4:
        _COSTS.clear()
    _COSTS[key] = (document, cost)
    return cost


def _operation_cost(schema: GraphQLSchema, document: DocumentNode, operation_name: str | None) -> int:
    definitions = document.definitions
    walk = DocumentWalk(
        {d.name.value: d for d in definitions if isinstance(d, FragmentDefinitionNode)}, _lists_of(schema)
    )
    operations = [d for d in definitions if isinstance(d, OperationDefinitionNode)]
    chosen = [o for o in operations if operation_name is None or (o.name and o.name.value == operation_name)]
    return max(sum(walk.selection_set(o.selection_set).cost for o in chosen[:1]), 1)


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


# GraphQL's lexical tokens, found by the regex engine in one left-to-right pass as the lexer
# would: block strings, strings and comments first (a comment is not a token, and what is inside
# a string is one), then names, numbers and punctuators. Commas and white space are skipped.
_TOKEN = re.compile(
    r'"""(?:\\"""|[^"]|"(?!""))*"""'
    r'|"(?:[^"\\\n\r]|\\.)*"'
    r"|(?P<comment>#[^\n\r]*)"
    r"|[_A-Za-z][_0-9A-Za-z]*"
    r"|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?"
    r"|\.\.\."
    r"|[!$&()\[\]{}:=@|]"
)


def over_token_limit(document: str, limit: int = MAX_TOKENS) -> bool:
    """True when the document has more than ``limit`` tokens, decided from at most ``limit + 1``
    of them: graphql-core's pure-Python lexer and parser take ~10 ms to reach its own limit."""
    tokens = (m for m in _TOKEN.finditer(document) if m.lastgroup != "comment")
    return next(islice(tokens, limit, None), None) is not None


_OPENING = frozenset("{[(")
_CLOSING = frozenset("}])")


def nesting_depth(document: str, limit: int = MAX_NESTING) -> int:
    """How deeply braces, brackets and parentheses nest (outside strings and comments), counted
    up to ``limit + 1`` and over at most ``MAX_TOKENS + 1`` tokens: enough to tell whether the
    document is over either limit, without the parser's recursion."""
    depth = deepest = 0
    tokens = (m.group() for m in _TOKEN.finditer(document) if m.lastgroup != "comment")
    for token in islice(tokens, MAX_TOKENS + 1):
        if token in _OPENING:
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > limit:
                    break
        elif token in _CLOSING:
            depth -= 1
    return deepest


def document_refusal(document: str | None, max_bytes: int = DEFAULT_MAX_DOCUMENT_BYTES) -> GraphQLError | None:
    """Why a document is refused before the lexer sees it, or None: over the byte size, nested too
    deeply, or over the token ceiling. Both transports pass here (the ``DocumentGuard`` extension
    runs first for HTTP requests and WebSocket ``subscribe`` messages alike), and the answer
    depends on the text alone, never on white space or on how deep the server's stack happens to be.

    Costs what it must: the size from the length (UTF-8 is at most 4 bytes a character), the
    token scan only for a document that has enough brackets or characters to be over a limit.
    """
    if not document:
        return None
    if len(document) > max_bytes or (4 * len(document) > max_bytes and len(document.encode()) > max_bytes):
        return GraphQLError(
            f"Document is larger than {max_bytes} bytes (EVIDENCE_GRAPHQL_MAX_DOCUMENT_BYTES). Parsing aborted.",
            extensions={"code": TOO_COMPLEX, "limit_bytes": max_bytes},
        )
    brackets = document.count("{") + document.count("[") + document.count("(")
    if brackets > MAX_NESTING and nesting_depth(document) > MAX_NESTING:
        return GraphQLError(
            f"Document nests braces, brackets and parentheses more than {MAX_NESTING} levels deep. Parsing aborted.",
            extensions={"code": TOO_COMPLEX},
        )
    if len(document) > MAX_TOKENS and over_token_limit(document):
        return GraphQLError(
            f"Document contains more than {MAX_TOKENS} tokens. Parsing aborted.", extensions={"code": TOO_COMPLEX}
        )
    return None


def settings_refusal(document: str | None, context: object) -> GraphQLError | None:
    """``document_refusal`` with the byte size the request's settings give (the context's)."""
    settings = getattr(context, "settings", None)
    return document_refusal(document, getattr(settings, "graphql_max_document_bytes", DEFAULT_MAX_DOCUMENT_BYTES))


async def refused_stream(refusal: GraphQLError) -> AsyncIterator[PreExecutionError]:
    """A refused WebSocket ``subscribe`` as the socket handler expects a stream's first result:
    the client gets an ``error`` message for the operation, and the socket stays open."""
    yield PreExecutionError(data=None, errors=[refusal])


class DocumentGuard(SchemaExtension):
    """Refuses a document over the byte size, nesting or token ceiling before the parser starts on
    it (first of the extensions: ahead of the parser cache, which would hash the whole text).
    ``MaxTokensLimiter`` stays as the exact token rule behind it. The WebSocket handler checks
    before it streams (an exception from this hook would end its task instead of answering)."""

    def on_parse(self) -> Iterator[None]:
        context = self.execution_context
        if context.graphql_document is None:
            refusal = settings_refusal(context.query, context.context)
            if refusal is not None:
                raise refusal  # HTTP: Strawberry's execute answers it as a request error
        yield


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
