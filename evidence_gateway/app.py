"""The one Starlette app: GraphQL at /graphql, REST under /api, /healthz."""

from __future__ import annotations

import gc
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Mount, Route, WebSocketRoute
from starlette.types import ASGIApp

from evidence_gateway import rest_compat
from evidence_gateway.auth import KeyCache
from evidence_gateway.core import evidence_keys, instance_secrets, wakeups
from evidence_gateway.core.subscriptions import SubscriptionHub
from evidence_gateway.exchange import routes as exchange
from evidence_gateway.exchange.auth import TokenKeys
from evidence_gateway.exchange.outbox import ExchangeOutbox
from evidence_gateway.resolvers.persisted_queries import PersistedQueries
from evidence_gateway.rest_compat.errors import handlers
from evidence_gateway.schema import persisted, schema
from evidence_gateway.schema.socket_limits import Sockets
from evidence_gateway.schema.view import EvidenceGraphQL
from evidence_gateway.settings import Settings, get_settings
from evidence_gateway.store import migrate
from evidence_gateway.store.db import Database
from evidence_gateway.web import api_docs, cors, graphiql, resident
from evidence_gateway.web.json_response import JSONResponse
from evidence_gateway.web.observability import metrics, multiproc, readiness, tracing
from evidence_gateway.web.observability.access import AccessLogMiddleware, RouteTemplates
from evidence_gateway.web.observability.saturation import Saturation
from evidence_gateway.web.proxies import ClientAddress, ClientAddressMiddleware, parse_networks
from evidence_gateway.web.ratelimit.limiter import Limiter
from evidence_gateway.web.ratelimit.middleware import RateLimitMiddleware
from evidence_gateway.web.request_id import RequestIdMiddleware
from evidence_gateway.web.response_headers import ResponseHeadersMiddleware
from evidence_gateway.webhooks.dispatcher import Dispatcher
from evidence_gateway.worker import Worker


class EvidenceApp(Starlette):
    """Starlette with our middleware outside its error handling, so that a crash's 500 (answered
    by Starlette's ``ServerErrorMiddleware``) still carries the request id and is logged and
    counted like any other answer."""

    def build_middleware_stack(self) -> ASGIApp:
        # Outermost first: the client's address (everything below counts and logs by it), CORS
        # (every answer carries its headers), the id, the access line (it sees every status, 429s
        # and crashes included), the headers every answer needs, the limits.
        settings = self.state.settings
        limited = RateLimitMiddleware(super().build_middleware_stack(), self.state.limiter, settings.rate_limits)
        observed = AccessLogMiddleware(ResponseHeadersMiddleware(limited), self.routes, [metrics.observe_request])
        addresses = ClientAddress(parse_networks(settings.trusted_proxies), settings.trusted_proxy_header)
        stack = ClientAddressMiddleware(cors.wrap(RequestIdMiddleware(observed), settings), addresses)
        # Tracing on: the server span outside everything, so every log line of the request is in it.
        return tracing.wrap(stack, RouteTemplates(self.routes), self.state.tracer_provider)


async def healthz(request: Request) -> Response:
    """Liveness plus a trivial database round-trip."""
    db: Database = request.app.state.db
    async with db.read() as session:
        await session.connection()
    return JSONResponse({"status": "ok"})


def create_app(settings: Settings | None = None) -> Starlette:
    settings = settings or get_settings()
    db = Database(settings.database_url, echo=settings.sql_echo, pool_size=settings.database_pool_size)

    worker = Worker(db, settings)
    dispatcher = Dispatcher(db, settings)
    answers = ExchangeOutbox(db, settings)  # PACT answers to recipients' hosts, beside the webhooks
    # Other nodes' commits wake this node's dispatcher and subscribers (SQLite: one node).
    listener = wakeups.node_listener(db)
    # GraphQL subscriptions: one tail of the event log per organisation with subscribers here.
    subscriptions = SubscriptionHub(db)
    # Read at each scrape of /metrics: pools and subscriptions of this process, queues of all.
    saturation = Saturation(
        lambda: db.pools, lambda: subscriptions.subscriber_count, mirrored=bool(os.environ.get(multiproc.MULTIPROC_ENV))
    )

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        evidence_keys.check_supplied(settings)  # an app started by uvicorn directly refuses it too
        await migrate.prepare(db)
        settings.secret_key = await instance_secrets.signing_key(db, settings)
        subscriptions.start()  # before the listener: its first wake-up must reach the hub
        if listener is not None:
            await listener.start()
        if settings.background_work:
            await worker.start()
        if settings.dispatcher:
            await dispatcher.start()
            await answers.start()
        # What start-up built (schema, metadata, compiled plans) lives as long as the process:
        # frozen, the collector stops walking it on every full collection. Under load those walks
        # were the long tail: p99 183 -> 138 ms, +20 % reads a second (docs/performance.md). No
        # collection first: it cost the test suite half its time (an app per test), and what
        # little start-up garbage is frozen with the rest stays for the process's life.
        saturation.start()
        resident.forget_source_files()
        gc.freeze()
        try:
            yield
        finally:
            gc.unfreeze()  # an app that stops (tests start many) leaves nothing behind for good
            await saturation.stop()
            if settings.dispatcher:
                await answers.stop(settings.webhook_read_timeout_seconds)
                await dispatcher.stop(settings.webhook_read_timeout_seconds)
            if settings.background_work:
                await worker.stop(settings.lease_seconds)
            await subscriptions.stop()
            if listener is not None:
                await listener.stop()
            await db.dispose()
            if app.state.tracer_provider is not None:
                tracing.shutdown(app.state.tracer_provider)  # the spans still buffered go out

    # GET runs persisted queries only (schema/persisted.py refuses any other GET); EVIDENCE_GRAPHIQL=false:
    # no IDE page and no assets. Pages of the CORS origins may also open the subscription socket
    # (browsers apply no CORS to WebSockets; Strawberry checks Origin against this list).
    graphql = EvidenceGraphQL(
        schema,
        graphql_ide="graphiql" if settings.graphiql else None,
        allow_queries_via_get=True,
        allowed_origins=settings.cors_origin_list(),
    )
    app = EvidenceApp(
        routes=[
            Route("/healthz", healthz, methods=["GET"]),
            Route("/readyz", readiness.readyz, methods=["GET"]),
            Route("/metrics", metrics.metrics_endpoint, methods=["GET"]),
            Route("/graphql", graphql, methods=["GET", "POST"]),
            # Subscriptions (graphql-transport-ws) on the same path.
            WebSocketRoute("/graphql", graphql),
            *(graphiql.routes if settings.graphiql else []),
            # The REST reference (Redoc over /api/openapi.json), before the /api mount that would take it.
            *api_docs.routes,
            Mount("/api", routes=rest_compat.routes),
            *rest_compat.well_known,
            # PACT / iLEAP host (docs/ileap.md): /auth/token, discovery, /2/…, /3/… at the root,
            # where the specifications put them.
            *exchange.routes,
        ],
        exception_handlers=handlers,
        lifespan=lifespan,
    )
    app.state.tracer_provider = tracing.instrument(db)
    app.state.saturation = saturation
    app.state.db = db
    app.state.worker = worker
    app.state.subscriptions = subscriptions
    app.state.sockets = Sockets()  # open GraphQL sockets, for their caps (schema/socket_limits.py)
    app.state.dispatcher = dispatcher
    app.state.exchange_outbox = answers
    app.state.settings = settings
    app.state.limiter = Limiter(settings)
    app.state.key_cache = KeyCache(settings.auth_cache_seconds)
    app.state.persisted_queries = PersistedQueries(db, settings)
    app.state.exchange_keys = TokenKeys(db)  # the access tokens' signing key, loaded on first use
    trusted = settings.graphql_trusted_documents
    app.state.trusted_documents = persisted.load_trusted(trusted) if trusted else None
    return app
