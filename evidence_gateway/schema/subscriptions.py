"""GraphQL subscriptions (graphql-transport-ws at /graphql): the event log live, a pack's changes.

Thin fields over ``evidence_gateway/core/subscriptions.py`` (the per-node hub and the replay-then-
live followers); the authentication of the socket is in ``schema/websocket.py``.
"""

from __future__ import annotations

import contextlib
import json
import logging
import uuid
from collections import Counter, OrderedDict
from collections.abc import AsyncGenerator, Iterator
from typing import Annotated, Any, cast

import strawberry
from graphql import ExecutionResult as GraphQLExecutionResult
from graphql import (
    FieldNode,
    GraphQLError,
    OperationDefinitionNode,
    OperationType,
    VariableNode,
    Visitor,
    get_operation_ast,
    visit,
)
from strawberry.extensions import SchemaExtension
from strawberry.schema.exceptions import InvalidOperationTypeError
from strawberry.types import Info
from strawberry.types.execution import PreExecutionError

from evidence_gateway.core.subscriptions import SubscriptionHub, follow_events, follow_pack
from evidence_gateway.errors import DomainError
from evidence_gateway.models import Event
from evidence_gateway.resolvers import subscriptions as feed
from evidence_gateway.schema.context import GraphQLContext
from evidence_gateway.schema.errors import INTERNAL_MESSAGE, format_error
from evidence_gateway.schema.events import EventType, event_type
from evidence_gateway.schema.input_paths import GraphQLInputPaths
from evidence_gateway.schema.packs import ReportPackType, pack_type

log = logging.getLogger("evidence_gateway.graphql")

GqlInfo = Info[GraphQLContext, None]


def _hub(info: GqlInfo) -> SubscriptionHub:
    hub: SubscriptionHub = info.context.request.app.state.subscriptions
    return hub


@strawberry.type(
    description=(
        "Live updates over WebSocket at /graphql (graphql-transport-ws); the API key goes in the "
        'connection_init payload: {"authorization": "Bearer evk_..."} (docs/events.md).'
    )
)
class Subscription:
    @strawberry.subscription(
        description=(
            "The organisation's events as they commit, oldest first, each once. With `after`, the "
            "events after that cursor are replayed from the log first: resubscribing with the last "
            "cursor received misses nothing. Without it, only events from now on."
        )
    )
    async def events(
        self,
        info: GqlInfo,
        types: Annotated[
            list[str] | None,
            strawberry.argument(description="Only these event types (e.g. pack.status_changed); all when absent."),
        ] = None,
        after: Annotated[str | None, strawberry.argument(description="Cursor of the last event already seen.")] = None,
    ) -> AsyncGenerator[EventType, None]:
        ctx = info.context.ctx
        only = feed.event_filter(types)
        start = feed.start_after(after)
        events = follow_events(_hub(info), ctx, only, start)
        async with contextlib.aclosing(events):
            async for event in events:
                seen = feed.as_seen_by(ctx, event)
                yield _payload(seen, redacted=seen is not event)

    @strawberry.subscription(
        description=(
            "One pack as it is now, then again after each of its pack.* events (generated, failed, "
            "status_changed). NOT_FOUND for unknown or other organisations' ids: a stream has no null to "
            "answer with, unlike the pack(id) query."
        )
    )
    async def pack(
        self, info: GqlInfo, id: Annotated[uuid.UUID, strawberry.argument(description="Pack to follow.")]
    ) -> AsyncGenerator[ReportPackType, None]:
        changes = follow_pack(_hub(info), info.context.ctx, id)
        async with contextlib.aclosing(changes):
            async for pack in changes:
                yield pack_type(pack)


_payloads: OrderedDict[tuple[uuid.UUID, bool], EventType] = OrderedDict()


def _payload(event: Event, *, redacted: bool) -> EventType:
    """One ``Event`` object per event and view for all subscribers (built once, not once per subscriber)."""
    found = _payloads.get((event.id, redacted))
    if found is None:
        found = _payloads[(event.id, redacted)] = event_type(event, redacted=redacted)
        if len(_payloads) > SHARED_RESULTS:
            _payloads.popitem(last=False)
    return found


class StreamErrors(SchemaExtension):
    """Streamed results (over the socket) get the error shape of HTTP answers: ``extensions.code``
    on every error, internal details only in the server log.

    The HTTP view formats errors itself (``format_error``); the socket handler sends what the
    result holds, so the errors are replaced by their formatted form before it is sent. An
    exception raised by a subscription's own stream (not a field) carries no path; unless it
    is a domain error it is an internal failure, logged here.
    """

    def on_stream_result(self, result: Any) -> Iterator[None]:
        errors = getattr(result, "errors", None)
        if errors:
            before_execution = isinstance(result, PreExecutionError)
            root = None if before_execution else self._root_field()
            result.errors = [_shaped(e, before_execution=before_execution, root=root) for e in errors]
        yield None

    def _root_field(self) -> FieldNode | None:
        """The subscription's field: where an error raised by its stream is located, as a query's would be."""
        document = self.execution_context.graphql_document
        operation = None if document is None else get_operation_ast(document, self.execution_context.operation_name)
        first = operation.selection_set.selections[0] if operation and operation.selection_set.selections else None
        return first if isinstance(first, FieldNode) else None


def _shaped(error: GraphQLError, *, before_execution: bool, root: FieldNode | None) -> GraphQLError:
    original = error.original_error
    nodes, path = error.nodes, error.path
    formatted: dict[str, Any]
    if before_execution:
        # Parse, validation, limits, or an operation type the socket refuses: the document's fault.
        message = error.message
        if isinstance(original, InvalidOperationTypeError):
            message += " over WebSocket: send queries and mutations to POST /graphql"
        # A code the limits put on the error (QUERY_TOO_COMPLEX, DOCUMENT_NOT_TRUSTED, ...) stays.
        formatted = {"message": message, "extensions": {"code": "BAD_USER_INPUT", **(error.extensions or {})}}
    elif path is None and original is not None and not isinstance(original, DomainError):
        log.error("GraphQL subscription stream failed", exc_info=original)
        formatted = {"message": INTERNAL_MESSAGE, "extensions": {"code": "INTERNAL_SERVER_ERROR"}}
    else:
        formatted = format_error(error)
        if path is None and root is not None:
            # Raised by the subscription's stream (e.g. NOT_FOUND): located at its field.
            nodes, path = [root], [(root.alias or root.name).value]
    return GraphQLError(
        formatted["message"],
        nodes=nodes,
        source=None if nodes is not error.nodes else error.source,
        positions=None if nodes is not error.nodes else error.positions,
        path=path,
        original_error=original,
        extensions=formatted["extensions"],
    )


# ---- one execution per event for identical subscriptions ----------------------------------------------

# Results kept for reuse: every subscriber of an organisation asks for the same few events at
# about the same time, so a short memory suffices.
SHARED_RESULTS = 4096


class SharedEventExecution(GraphQLInputPaths):
    """Executes an ``events`` subscription's selection once per event, for all its subscribers.

    graphql-core executes a subscription's selection set for each event and each subscriber:
    with 100 subscribers of one organisation, the same event goes through the executor 100
    times, which was most of a message's cost (docs/performance.md). An Event's fields depend
    on the event alone (no resolver reads the context), so the result for one (document,
    payload variables, event) is the result for every subscriber asking the same: it is kept
    and replayed. Only the variables that feed the root field's own arguments (``after``,
    ``types``: where the stream starts, not what a payload looks like) are left out of the
    key. Anything else (a pack, a result with errors) is executed as usual. Its base names
    input errors in GraphQL's terms for every operation (schema/input_paths.py).
    """

    _shared_key: tuple[int, str, uuid.UUID, bool] | None = None

    def build_per_event_executor(self, payload: Any) -> Any:
        if self.operation.operation is not OperationType.SUBSCRIPTION or not isinstance(payload, EventType):
            return super().build_per_event_executor(payload)
        key = (id(self.operation), self._payload_variables(), payload.id, payload.redacted)
        hit = _results.get(key)
        if hit is not None and hit[0] is self.operation:
            _results.move_to_end(key)
            return _Replay(hit[1])  # graphql-core only asks it to execute_operation()
        executor = cast(SharedEventExecution, super().build_per_event_executor(payload))
        executor._shared_key = key
        return executor

    def execute_operation(self, serially: bool | None = None) -> Any:
        result = super().execute_operation(serially)
        if self._shared_key is not None and isinstance(result, GraphQLExecutionResult) and not result.errors:
            # The operation is kept with the result: its id cannot be reused while the entry lives.
            _results[self._shared_key] = (self.operation, result)
            if len(_results) > SHARED_RESULTS:
                _results.popitem(last=False)
        return result

    def _payload_variables(self) -> str:
        stream_only = _stream_only_variables(self.operation, list(self.fragment_definitions.values()))
        used = {k: v for k, v in self.variable_values.coerced.items() if k not in stream_only}
        return json.dumps(used, sort_keys=True, default=str) if used else ""


class _Replay:
    """A per-event executor whose answer is already known."""

    __slots__ = ("result",)

    def __init__(self, result: GraphQLExecutionResult) -> None:
        self.result = result

    def execute_operation(self, serially: bool | None = None) -> GraphQLExecutionResult:
        return self.result


_results: OrderedDict[tuple[int, str, uuid.UUID, bool], tuple[OperationDefinitionNode, GraphQLExecutionResult]] = (
    OrderedDict()
)
_stream_only: OrderedDict[int, tuple[OperationDefinitionNode, frozenset[str]]] = OrderedDict()


def _stream_only_variables(operation: OperationDefinitionNode, fragments: list[Any]) -> frozenset[str]:
    """Variables used only as the whole value of a root field's argument (cached per document)."""
    cached = _stream_only.get(id(operation))
    if cached is not None and cached[0] is operation:
        return cached[1]
    root_arguments = Counter(
        argument.value.name.value
        for selection in operation.selection_set.selections
        if isinstance(selection, FieldNode)
        for argument in selection.arguments or ()
        if isinstance(argument.value, VariableNode)
    )
    everywhere: Counter[str] = Counter()

    class Uses(Visitor):
        def enter_variable(self, node: VariableNode, *_args: Any) -> None:
            everywhere[node.name.value] += 1

    for node in (operation.selection_set, *fragments):
        visit(node, Uses())
    found = frozenset(name for name, count in root_arguments.items() if everywhere[name] == count)
    _stream_only[id(operation)] = (operation, found)
    if len(_stream_only) > 256:
        _stream_only.popitem(last=False)
    return found
