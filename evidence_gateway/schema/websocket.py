"""GraphQL over WebSocket: ``graphql-transport-ws`` for subscriptions, the key in ``connection_init``.

Browsers cannot set headers on a WebSocket, so the API key travels where the protocol puts
connection parameters: the ``connection_init`` payload, ``{"authorization": "Bearer evk_..."}``
(any case of the name: GraphiQL sends the contents of its Headers pane, ``Authorization``).
No key, a bad key, or a payload that is not an object: the socket closes with 4403 Forbidden
(4400 for a payload that is not an object) and nothing runs without an organisation.

Only subscriptions run here. Queries and mutations go over HTTP, where the body ceilings,
Idempotency-Key, If-Match and the 401 status live; over the socket they are refused with an
``error`` message, so there is one write path, not two.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, cast

from strawberry.exceptions import ConnectionRejectionError
from strawberry.schema import BaseSchema
from strawberry.subscriptions.protocols.graphql_transport_ws.handlers import BaseGraphQLTransportWSHandler
from strawberry.types.graphql import OperationType

from evidence_gateway.auth import KeyCache, authenticate
from evidence_gateway.errors import Unauthenticated
from evidence_gateway.schema import limits
from evidence_gateway.schema.context import BatchFn, GraphQLContext, K, V
from evidence_gateway.subscriptions import SubscriptionHub


@dataclass
class WebSocketContext(GraphQLContext):
    """One per connection, shared by all its operations; authenticated at ``connection_init``."""

    # The connection_init payload (set by Strawberry before ``on_ws_connect`` runs).
    connection_params: dict[str, object] | None = None
    key_cache: KeyCache | None = None
    # The Authorization value that was accepted, kept to re-verify a long-lived connection.
    authorization: str | None = None

    async def authenticate(self) -> None:
        """From the connection_init payload; ConnectionRejectionError (4403) when it will not do."""
        authorization = authorization_of(self.connection_params)
        if authorization is None:
            raise ConnectionRejectionError()
        try:
            self.principal = await authenticate(self.db, authorization, self.key_cache)
        except Unauthenticated:
            raise ConnectionRejectionError() from None
        self.authorization = authorization

    async def recheck(self) -> None:
        """Raises UNAUTHENTICATED once the connection's key is revoked (subscriptions call it)."""
        principal = await authenticate(self.db, self.authorization, self.key_cache)
        if self.principal is None or principal.org_id != self.principal.org_id:
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


class _SubscriptionsOnly:
    """The schema as the socket handler sees it: ``stream`` runs subscription documents only."""

    def __init__(self, schema: BaseSchema) -> None:
        self._schema = schema

    async def stream(self, *args: Any, **kwargs: Any) -> Any:
        kwargs["allowed_operation_types"] = (OperationType.SUBSCRIPTION,)
        # Documents over the byte size, nesting or token ceiling: refused before the lexer, as on HTTP.
        refusal = limits.settings_refusal(args[0] if args else kwargs.get("query"), kwargs.get("context_value"))
        if refusal is not None:
            return limits.refused_stream(refusal)
        return await self._schema.stream(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._schema, name)


class SubscriptionsHandler(BaseGraphQLTransportWSHandler[GraphQLContext, None]):
    """Strawberry's graphql-transport-ws handler, refusing queries and mutations (see above)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.schema = cast(BaseSchema, _SubscriptionsOnly(self.schema))


def authorization_of(params: Mapping[str, object] | None) -> str | None:
    """The Authorization entry of a connection_init payload, whatever the case of its name
    (None when absent, not text, or given twice with different values)."""
    values = [v for k, v in (params or {}).items() if isinstance(k, str) and k.lower() == "authorization"]
    if not values or not all(isinstance(v, str) and v == values[0] for v in values):
        return None
    return cast(str, values[0])
