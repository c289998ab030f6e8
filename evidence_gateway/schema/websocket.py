"""GraphQL over WebSocket: ``graphql-transport-ws`` for subscriptions, the key in ``connection_init``.

Browsers cannot set headers on a WebSocket, so the API key travels where the protocol puts
connection parameters: the ``connection_init`` payload, ``{"authorization": "Bearer evk_..."}``
(any case of the name: GraphiQL sends the contents of its Headers pane, ``Authorization``).
No key, a bad key, or a payload that is not an object: the socket closes with 4403 Forbidden
(4400 for a payload that is not an object) and nothing runs without an organisation.

The key is only as good as it is now: every ``subscribe`` looks it up again (through the key
cache) before anything runs, an open socket looks it up every ``Sockets.recheck_seconds`` and
at the key's expiry, and a key that no longer works closes the socket (4403) with all its
operations. Each message is held to the HTTP body ceiling and spends from the HTTP rate-limit
budgets; sockets and subscriptions are capped (schema/socket_limits.py).

Only subscriptions run here. Queries and mutations go over HTTP, where Idempotency-Key,
If-Match and the 401 status live; over the socket they are refused with an ``error`` message,
so there is one write path, not two.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncGenerator, Mapping
from dataclasses import dataclass
from typing import Any, cast

from graphql import GraphQLError
from starlette.websockets import WebSocketDisconnect, WebSocketState
from strawberry.asgi import ASGIWebSocketAdapter
from strawberry.exceptions import ConnectionRejectionError
from strawberry.http.exceptions import NonJsonMessageReceived, NonTextMessageReceived
from strawberry.schema import BaseSchema
from strawberry.subscriptions.protocols.graphql_transport_ws.handlers import BaseGraphQLTransportWSHandler
from strawberry.subscriptions.protocols.graphql_transport_ws.types import ConnectionInitMessage, SubscribeMessage
from strawberry.types.graphql import OperationType

from evidence_gateway.auth import KeyCache, authenticate, bearer_token
from evidence_gateway.core.subscriptions import SubscriptionHub
from evidence_gateway.core.timeutil import utcnow
from evidence_gateway.errors import BadRequest, Unauthenticated
from evidence_gateway.schema import document_text
from evidence_gateway.schema.context import BatchFn, GraphQLContext, K, V
from evidence_gateway.schema.errors import INTERNAL_MESSAGE
from evidence_gateway.schema.socket_limits import (
    BAD_REQUEST,
    FORBIDDEN,
    SocketLimits,
    SocketRefused,
    Sockets,
)

log = logging.getLogger(__name__)

# The close reason once the key stops working (unknown, revoked and expired alike, as over HTTP).
KEY_REFUSED = "Forbidden: the API key was revoked or has expired"


@dataclass
class WebSocketContext(GraphQLContext):
    """One per connection, shared by all its operations; authenticated at ``connection_init``."""

    # The connection_init payload (set by Strawberry before ``on_ws_connect`` runs).
    connection_params: dict[str, object] | None = None
    key_cache: KeyCache | None = None
    # The Authorization value that was accepted, kept to re-verify a long-lived connection.
    authorization: str | None = None
    limits: SocketLimits | None = None

    async def authenticate(self) -> None:
        """From the connection_init payload: ConnectionRejectionError (4403) when it will not do,
        SocketRefused (4429) when the address or the key is over a limit."""
        assert self.limits is not None
        authorization = authorization_of(self.connection_params)
        token = bearer_token(authorization)
        try:
            if authorization is None or token is None:
                raise Unauthenticated()
            principal = await authenticate(self.db, authorization, self.key_cache)
        except Unauthenticated:
            await self.limits.authentication_failed(presented=authorization is not None)
            raise ConnectionRejectionError() from None
        self.limits.authenticated(principal, token)
        self.principal, self.authorization = principal, authorization

    async def recheck(self) -> None:
        """Raises Unauthenticated once the connection's key no longer works (revoked, expired)."""
        held = self.principal
        if held is None or (held.expires_at is not None and held.expires_at <= utcnow()):
            raise Unauthenticated()
        principal = await authenticate(self.db, self.authorization, self.key_cache)
        if (principal.org_id, principal.key_id) != (held.org_id, held.key_id):
            raise Unauthenticated()

    @property
    def subscriptions(self) -> SubscriptionHub:
        hub: SubscriptionHub = self.request.app.state.subscriptions
        return hub

    def loader(self, batch: BatchFn[K, V], default: Any = None) -> Any:
        """Batching without memory: the context lives as long as the connection, and a pack sent
        again after a change must not show the artifacts or approvals cached for the first."""
        created = super().loader(batch, default)
        created.cache = False
        return created


class LimitedWebSocket(ASGIWebSocketAdapter):
    """Strawberry's socket, each message measured and charged (``SocketLimits.received``) before
    it is parsed; JSON it refuses closes the socket with 4400 as the protocol says."""

    limits: SocketLimits | None = None

    async def iter_json(self, *, ignore_parsing_errors: bool = False) -> AsyncGenerator[object, None]:
        assert self.limits is not None
        while self.ws.application_state != WebSocketState.DISCONNECTED:
            message = await self.ws.receive()
            if message["type"] == "websocket.disconnect":
                return
            text: str | None = message.get("text")
            await self.limits.received(text if text is not None else message.get("bytes") or b"")
            if text is None:
                raise NonTextMessageReceived()
            try:
                parsed = self.view.decode_json(text)
            except (BadRequest, ValueError):
                raise NonJsonMessageReceived() from None
            yield parsed


class _SubscriptionsOnly:
    """The schema as the socket handler sees it: ``stream`` runs subscription documents only."""

    def __init__(self, schema: BaseSchema) -> None:
        self._schema = schema

    async def stream(self, *args: Any, **kwargs: Any) -> Any:
        kwargs["allowed_operation_types"] = (OperationType.SUBSCRIPTION,)
        # Documents over the byte size, nesting or token ceiling: refused before the lexer, as on HTTP.
        refusal = document_text.settings_refusal(args[0] if args else kwargs.get("query"), kwargs.get("context_value"))
        if refusal is not None:
            return document_text.refused_stream(refusal)
        return await self._schema.stream(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._schema, name)


class SubscriptionsHandler(BaseGraphQLTransportWSHandler[GraphQLContext, None]):
    """Strawberry's graphql-transport-ws handler, refusing queries and mutations (see above), with
    the key checked at every ``subscribe``, periodically and at its expiry, and the limits."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.schema = cast(BaseSchema, _SubscriptionsOnly(self.schema))
        context, websocket = self.context, self.websocket
        assert isinstance(context, WebSocketContext) and context.limits is not None
        assert isinstance(websocket, LimitedWebSocket)
        self.socket_context, self.limits = context, context.limits
        websocket.limits = context.limits
        self.socket = websocket
        self._watch: asyncio.Task[None] | None = None
        self._closing = False

    async def handle(self) -> None:
        try:
            try:
                await self.limits.opened()
                await super().handle()
            except SocketRefused as refused:
                # Raised by a message's handling: Strawberry's shutdown has stopped the operations.
                await self._close(refused.code, refused.reason)
        finally:
            if self._watch is not None:
                self._watch.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await self._watch
            self.limits.release()

    async def handle_connection_init(self, message: ConnectionInitMessage) -> None:
        await super().handle_connection_init(message)
        if self.connection_acknowledged and self._watch is None:
            self._watch = asyncio.create_task(self._watch_key(), name="websocket-key-watch")

    async def handle_subscribe(self, message: SubscribeMessage) -> None:
        if self._closing:
            return
        if not self.connection_acknowledged or message["id"] in self.operations:
            await super().handle_subscribe(message)  # 4401 before the ack, 4409 for an id in use
            return
        try:
            await self.socket_context.recheck()
        except Unauthenticated:
            await self.limits.authentication_failed(presented=True)  # as a request with that key would be
            raise SocketRefused(FORBIDDEN, KEY_REFUSED) from None
        except Exception:
            log.exception("re-checking a WebSocket's API key failed")
            await self._refuse_operation(message["id"], INTERNAL_MESSAGE, {"code": "INTERNAL_SERVER_ERROR"})
            return
        refused = self.refused_payload(message)
        if refused is not None:
            await self._refuse_operation(message["id"], refused.message, refused.extensions)
            return
        cap = self.limits.take_subscription()
        if cap is not None:
            settings = self.limits.settings
            extensions = {"code": "RATE_LIMITED", "policy": cap.name, "limit": cap.limit(settings)}
            await self._refuse_operation(message["id"], cap.refusal(settings), extensions)
            return
        try:
            await super().handle_subscribe(message)
        finally:
            operation = self.operations.get(message["id"])
            if operation is not None and operation.task is not None:
                operation.task.add_done_callback(lambda _task: self.limits.release_subscription())
            else:  # refused by Strawberry (its limit per connection) or a malformed message
                self.limits.release_subscription()

    def refused_payload(self, message: SubscribeMessage) -> GraphQLError | None:
        """The one place a ``subscribe`` payload is accepted, after the key and before anything is
        parsed or run: a payload the protocol does not allow closes the socket (4400); a check of
        the document that refuses it returns the error sent for the operation (nothing runs)."""
        payload: Any = message.get("payload")
        if (
            not isinstance(payload, dict)
            or not isinstance(payload.get("query"), str)
            or not isinstance(payload.get("variables") or {}, dict)
            or not isinstance(payload.get("operationName") or "", str)
        ):
            raise SocketRefused(BAD_REQUEST, "Invalid subscribe payload")
        return None

    async def _refuse_operation(self, op: str, message: str, extensions: Mapping[str, Any] | None) -> None:
        error = GraphQLError(message, extensions=dict(extensions or {}))
        await self.send_message({"id": op, "type": "error", "payload": [error.formatted]})

    async def _watch_key(self) -> None:
        """Closes the socket (4403) once its key stops working: looked up again every
        ``recheck_seconds`` and at the key's expiry."""
        context = self.socket_context
        while True:
            wait = self.limits.sockets.recheck_seconds
            expires_at = context.principal.expires_at if context.principal is not None else None
            if expires_at is not None:
                wait = min(wait, (expires_at - utcnow()).total_seconds())
            await asyncio.sleep(max(wait, 0.0))
            try:
                await context.recheck()
            except Unauthenticated:
                await self._stop(FORBIDDEN, KEY_REFUSED)
                return
            except Exception:  # the database went away for a moment: the next turn tries again
                log.warning("re-checking a WebSocket's API key failed; trying again later", exc_info=True)

    async def _stop(self, code: int, reason: str) -> None:
        """Ends every operation, then closes the socket (from outside the message loop)."""
        self._closing = True
        tasks = [op.task for op in self.operations.values() if op.task is not None]
        for op in list(self.operations):
            await self.cleanup_operation(op)
        if tasks:
            await asyncio.wait(tasks)
        await self._close(code, reason)

    async def _close(self, code: int, reason: str) -> None:
        self._closing = True
        if self.socket.ws.application_state != WebSocketState.DISCONNECTED:
            with contextlib.suppress(WebSocketDisconnect, RuntimeError):  # the client left first
                await self.socket.close(code, reason)


def authorization_of(params: Mapping[str, object] | None) -> str | None:
    """The Authorization entry of a connection_init payload, whatever the case of its name
    (None when absent, not text, or given twice with different values)."""
    values = [v for k, v in (params or {}).items() if isinstance(k, str) and k.lower() == "authorization"]
    if not values or not all(isinstance(v, str) and v == values[0] for v in values):
        return None
    return cast(str, values[0])


__all__ = ["LimitedWebSocket", "Sockets", "SubscriptionsHandler", "WebSocketContext", "authorization_of"]
