"""The Strawberry ASGI view: auth, body ceiling, JSON errors, error codes, the GraphQL-over-HTTP
media types and status rules (schema/negotiation.py); subscriptions over WebSocket
(graphql-transport-ws only, the key in connection_init: schema/websocket.py)."""

from __future__ import annotations

import functools
import json
from datetime import timedelta
from typing import Any

import orjson
from cross_web import HTTPException as StrawberryHTTPException
from cross_web import StarletteRequestAdapter
from graphql.execution import ExperimentalIncrementalExecutionResults
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import Receive, Scope, Send
from starlette.websockets import WebSocket
from strawberry.asgi import GraphQL
from strawberry.http import GraphQLHTTPResponse, GraphQLRequestData
from strawberry.http import async_base_view as strawberry_async_view
from strawberry.http import parse_content_type as strawberry_content_type
from strawberry.http import streaming as strawberry_streaming
from strawberry.subscriptions import GRAPHQL_TRANSPORT_WS_PROTOCOL
from strawberry.types.execution import ExecutionResult, PreExecutionError
from strawberry.types.unset import UNSET, UnsetType

from evidence_gateway.auth import authenticate
from evidence_gateway.core.jsoncodec import dumps
from evidence_gateway.errors import BadRequest, DomainError, RequestTimeout, Unauthenticated
from evidence_gateway.schema import incremental, negotiation, parts_http, persisted
from evidence_gateway.schema.context import GraphQLContext
from evidence_gateway.schema.errors import format_error, unauthenticated, within_budget
from evidence_gateway.schema.idempotent import run_idempotent
from evidence_gateway.schema.socket_limits import SocketLimits
from evidence_gateway.schema.websocket import LimitedWebSocket, SubscriptionsHandler, WebSocketContext
from evidence_gateway.web import graphiql
from evidence_gateway.web.http_body import (
    MAX_JSON_DEPTH,
    check_json_depth,
    finite_float,
    may_hold_a_long_integer,
    read_body,
    replayed,
)
from evidence_gateway.web.ratelimit.middleware import refuse_credential
from evidence_gateway.web.request_id import request_id_of


@functools.lru_cache(maxsize=256)
def _parsed_content_type(content_type: str) -> tuple[str, tuple[tuple[str, str], ...]]:
    mime_type, params = strawberry_content_type.parse_content_type(content_type)
    return mime_type, tuple(params.items())


def _parse_content_type(content_type: str) -> tuple[str, dict[str, str]]:
    """Strawberry's ``parse_content_type``, remembered per header value: it builds an
    ``email.message.Message`` for the Content-Type and for the Accept of every request, which
    took about as long as the rest of reading the request's body; the answer is the same."""
    mime_type, params = _parsed_content_type(content_type)
    return mime_type, dict(params)


# Only where the name is Strawberry's own function: a release that moves it keeps its own (slower) path.
for _module in (strawberry_async_view, strawberry_streaming):
    if getattr(_module, "parse_content_type", None) is strawberry_content_type.parse_content_type:
        _module.parse_content_type = _parse_content_type  # type: ignore[attr-defined]

# Refusals of the HTTP request itself (Strawberry's own, before any document is read).
_CODES = {400: "BAD_USER_INPUT", 404: "NOT_FOUND", 405: "BAD_USER_INPUT", 413: "PAYLOAD_TOO_LARGE"}

# RFC 6750 §3: how to authenticate. Sent with every answer that refused a field for want of a
# key: 200 with the GraphQL body (see docs/graphql.md, "Status codes"), never a bare 401.
WWW_AUTHENTICATE = 'Bearer realm="evidence-gateway"'


def graphql_error_response(
    request: Request, status: int, message: str, code: str, details: dict[str, Any] | None = None
) -> Response:
    """A request refused before any document ran: no ``data`` entry, one error with its code.

    Unauthenticated is the one exception to ``status``: a key is checked per field elsewhere,
    and a typed client must keep the body, so it answers 200 with ``WWW-Authenticate``.
    """
    media_type = negotiation.response_media_type(request.headers.get("accept"))
    headers = {}
    if code == "UNAUTHENTICATED":
        status, headers = 200, {"WWW-Authenticate": WWW_AUTHENTICATE}
    elif status == RequestTimeout.status:
        headers = {"Connection": "close"}  # the rest of the body may still come: not a next request
    body = {"errors": [{"message": message, "extensions": {**(details or {}), "code": code}}]}
    return Response(dumps(body), status_code=status, headers=headers, media_type=negotiation.content_type(media_type))


# A request refused before execution answers at most about twice its own size, or this much.
MIN_ERROR_BUDGET_BYTES = 8 * 1024


def _error_budget(request: Request) -> int:
    """Bytes the errors of a request error may take: a small document with many bad literals must
    not amplify into an answer a hundred times its size."""
    sent = int(request.scope.get("state", {}).get("graphql_body_bytes", 0)) + len(request.url.query)
    return max(2 * sent, MIN_ERROR_BUDGET_BYTES) - 64  # the envelope: {"errors":[...]}


def _request_id_bytes(request: Request) -> int:
    """What the request-id middleware adds to each error: ``,"request_id":"..."``."""
    return len(request_id_of(request.scope) or "") + 18


# A client that opens the socket must say who it is within this long (then 4408).
CONNECTION_INIT_TIMEOUT = timedelta(seconds=10)


class _RequestAdapter(StarletteRequestAdapter):
    """Strawberry's adapter, with the request it wraps in reach (persisted queries need the app)."""

    @property
    def request(self) -> Request:
        return self._request


class EvidenceGraphQL(GraphQL[GraphQLContext, None]):
    graphql_transport_ws_handler_class = SubscriptionsHandler
    websocket_adapter_class = LimitedWebSocket
    request_adapter_class = _RequestAdapter

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        # graphql-transport-ws only. The legacy subscriptions-transport-ws protocol (sub-protocol
        # "graphql-ws") is deprecated by its authors; one protocol is one path to secure and test.
        # A socket that offers only the legacy one is closed with 4406.
        kwargs.setdefault("subscription_protocols", (GRAPHQL_TRANSPORT_WS_PROTOCOL,))
        kwargs.setdefault("connection_init_wait_timeout", CONNECTION_INIT_TIMEOUT)
        super().__init__(*args, **kwargs)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return await super().__call__(scope, receive, send)
        request = Request(scope, receive)
        try:
            if request.method == "POST":
                request = await _buffered(request)
            # Idempotency-Key: one change per key for single-mutation documents (schema/idempotent.py).
            response: Response = await run_idempotent(request, self.run)
            if response.media_type == "application/json":  # a GraphQL response, not the IDE page
                response = _negotiated(request, response)
        except parts_http.InParts as answered:
            response = answered.response
        except persisted.DocumentRefused as exc:
            media_type = negotiation.response_media_type(request.headers.get("accept"))
            status = negotiation.status_for(media_type, request_error=True)
            response = graphql_error_response(request, status, exc.message, exc.graphql_code, exc.details)
        except DomainError as exc:
            response = graphql_error_response(request, exc.status, exc.message, exc.graphql_code)
        except StrawberryHTTPException as exc:
            response = graphql_error_response(
                request, exc.status_code, exc.reason, _CODES.get(exc.status_code, "BAD_USER_INPUT")
            )
        await response(scope, receive, send)
        return None

    async def get_context(self, request: Any, response: Any) -> GraphQLContext:
        state = request.app.state
        if isinstance(request, WebSocket):
            # Authenticated by on_ws_connect, from the connection_init payload.
            return WebSocketContext(
                request=request,
                response=response,
                db=state.db,
                settings=state.settings,
                principal=None,
                key_cache=state.key_cache,
                limits=SocketLimits(request, state.sockets, state.limiter, state.settings),
            )
        try:
            principal = await authenticate(state.db, request.headers.get("authorization"), state.key_cache)
        except Unauthenticated:
            principal = None  # introspection stays open; data fields raise UNAUTHENTICATED
            if "authorization" in request.headers:
                refuse_credential(request.scope)  # a wrong key counts even if no field needed it
        request.state.sub_response = response
        request.state.authenticated = principal is not None
        request.state.org_id = principal.org_id if principal is not None else None
        settings = state.settings
        return GraphQLContext(
            request=request,
            response=response,
            db=state.db,
            settings=settings,
            principal=principal,
            idempotency=getattr(request.state, "idempotency", None),
            incremental=incremental.transport(request.headers.get("accept"))
            if settings.graphql_incremental_delivery
            else None,
        )

    async def execute_single(  # noqa: PLR0917 - Strawberry's signature
        self,
        request: Any,
        request_adapter: Any,
        sub_response: Any,
        context: Any,
        root_value: Any,
        request_data: GraphQLRequestData,
    ) -> ExecutionResult:
        """A query answered in parts leaves Strawberry's path here: its own framing (multipart
        only) would pass the parts' errors on unmasked."""
        result = await super().execute_single(request, request_adapter, sub_response, context, root_value, request_data)
        if isinstance(result, ExperimentalIncrementalExecutionResults):
            first = await self.process_result(request, result.initial_result)

            def too_large(body: bytes) -> Response:
                return _negotiated(request, Response(body, media_type="application/json"))

            raise parts_http.InParts(await parts_http.response(request, result, first, context.incremental, too_large))
        return result

    async def on_ws_connect(self, context: GraphQLContext) -> UnsetType | dict[str, object] | None:
        """connection_init: no organisation, no connection (4403 Forbidden)."""
        assert isinstance(context, WebSocketContext)
        await context.authenticate()
        plain_ack: UnsetType = UNSET
        return plain_ack

    async def process_result(self, request: Any, result: ExecutionResult) -> GraphQLHTTPResponse:
        """Codes on every error; the status and headers the negotiated media type calls for."""
        data: GraphQLHTTPResponse = {"data": result.data}
        sub_response: Response | None = getattr(request.state, "sub_response", None)
        before_execution = isinstance(result, PreExecutionError)
        await persisted.register_if_marked(
            request, validated=not before_execution, org_id=getattr(request.state, "org_id", None)
        )
        if result.errors:
            settings = request.app.state.settings
            suggestions = bool(settings.graphql_introspection and settings.graphql_suggestions)
            errors = [
                format_error(e, before_execution=before_execution, suggestions=suggestions) for e in result.errors
            ]
            request_error = negotiation.is_request_error(result.data, errors)
            if request_error:
                del data["data"]  # nothing executed: the spec's request error has no data entry
                errors = within_budget(errors, _error_budget(request), _request_id_bytes(request))
            data["errors"] = [*errors]  # the TypedDict types the list as list[object]
            if sub_response is not None:
                media_type = negotiation.response_media_type(request.headers.get("accept"))
                if sub_response.status_code in (None, 200):  # a status an extension chose (429) stands
                    sub_response.status_code = negotiation.status_for(media_type, request_error)
                if unauthenticated(errors):
                    sub_response.headers["WWW-Authenticate"] = WWW_AUTHENTICATE
        if result.extensions:
            data["extensions"] = result.extensions
        return data

    async def parse_http_body(self, request_adapter: Any) -> GraphQLRequestData | list[GraphQLRequestData]:
        """The request, with the document of a persisted query or trusted document (schema/persisted.py)."""
        data = await super().parse_http_body(request_adapter)
        if isinstance(data, list):  # batching is off: Strawberry has refused it already
            return data
        return await persisted.resolve(request_adapter.request, data)

    def should_render_graphql_ide(self, request: Any) -> bool:
        # A GET with a persisted query's extensions is a query, whatever it accepts.
        return super().should_render_graphql_ide(request) and "extensions" not in request.query_params

    async def render_graphql_ide(self, request: Request) -> Response:
        # Our own copies of GraphiQL's scripts when fetched (evidence-gateway graphiql-assets), else the CDN.
        return graphiql.ide_response(request, self.graphql_ide_html)

    def encode_json(self, data: object) -> str:
        return dumps(data).decode()

    def decode_json(self, data: str | bytes) -> object:
        """Strawberry's stdlib parse of bodies and GET ``variables``, made to refuse what REST refuses.

        The depth limit comes first: the stdlib parser recurses per level (RecursionError, a
        500, near 1,000 levels) and resolvers store what it returns. NaN and Infinity are
        not JSON (orjson refuses them on REST); the stdlib would hand them on, to be stored
        as tokens PostgreSQL's json type rejects, and it reads ``1e400`` as infinity, which
        REST refuses too (``finite_float``). Lone surrogates and integers beyond 64 bits stay:
        they reach the shared rule (the ``JSON`` scalar, the resolvers' input rule) and come
        back as BAD_USER_INPUT naming the field, as REST answers 422 naming it.
        """
        try:
            # The fast path: orjson parses what is plainly JSON (no recursion to fear: it stops at
            # 1,024 levels) in a fraction of the stdlib's time, and the depth is then counted on
            # the objects. Anything it refuses (NaN, 1e400, lone surrogates, not UTF-8,
            # too deep) takes the exact path below, with its own messages.
            parsed = orjson.loads(data)
        except orjson.JSONDecodeError:
            pass
        else:
            # A long integer orjson read as a double is read again exactly (http_body.loads).
            raw = data if isinstance(data, bytes) else data.encode()
            if not _deeper_than(parsed, MAX_JSON_DEPTH) and not may_hold_a_long_integer(raw):
                return parsed
        check_json_depth(data)
        try:
            return json.loads(data, parse_constant=_not_json, parse_float=finite_float)
        except RecursionError:  # unreachable under the limit; never a 500 if that changes
            raise BadRequest("JSON nested too deeply") from None
        except UnicodeDecodeError:
            raise BadRequest("malformed JSON body: not UTF-8") from None
        except ValueError as exc:
            # JSONDecodeError, and integers beyond Python's digit limit (a 5,000-digit number).
            reason = exc.msg if isinstance(exc, json.JSONDecodeError) else "number too long"
            raise BadRequest(f"malformed JSON body: {reason}") from None

    def parse_json(self, data: str | bytes) -> Any:
        """A POST body is one JSON object (no batching): ``5``, ``null`` or a string is a 400."""
        parsed = self.decode_json(data)
        if not isinstance(parsed, dict):
            raise BadRequest("request body must be a JSON object with a `query` (GraphQL over HTTP)")
        return parsed


def _negotiated(request: Request, response: Response) -> Response:
    """The negotiated Content-Type; an answer over ``EVIDENCE_GRAPHQL_MAX_RESPONSE_BYTES`` replaced
    by an error (refused like a document over a limit: it asked for too much)."""
    media_type = negotiation.response_media_type(request.headers.get("accept"))
    limit = request.app.state.settings.graphql_max_response_bytes
    if len(response.body) > limit:
        message = (
            f"the response is larger than {limit} bytes (EVIDENCE_GRAPHQL_MAX_RESPONSE_BYTES): "
            "request fewer items or fields"
        )
        body = {"errors": [{"message": message, "extensions": {"code": "RESPONSE_TOO_LARGE", "limit_bytes": limit}}]}
        status = negotiation.status_for(media_type, request_error=True)
        return Response(dumps(body), status_code=status, media_type=negotiation.content_type(media_type))
    response.headers["content-type"] = negotiation.content_type(media_type)
    return response


def _deeper_than(value: object, limit: int) -> bool:
    """Whether a parsed JSON value nests more than ``limit`` levels (the outer object is level 1),
    as ``check_json_depth`` counts them; without recursion, visiting containers only."""
    pending: list[tuple[dict[str, object] | list[object], int]] = []
    if isinstance(value, (dict, list)):
        pending.append((value, 1))
    while pending:
        current, depth = pending.pop()
        for child in current.values() if isinstance(current, dict) else current:
            if isinstance(child, (dict, list)):
                if depth >= limit:
                    return True
                pending.append((child, depth + 1))
    return False


def _not_json(name: str) -> Any:
    raise BadRequest(f"malformed JSON body: {name} is not JSON")


async def _buffered(request: Request) -> Request:
    """Read the body once under the ceiling, then replay it to Strawberry."""
    body = await read_body(request, request.app.state.settings.max_body_bytes)
    request.scope.setdefault("state", {})["graphql_body_bytes"] = len(body)
    return replayed(request, body)
