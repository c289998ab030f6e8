"""``serve`` and ``worker``: the long-running processes of a deployment."""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import signal

from evidence_gateway.cli.support import prepared
from evidence_gateway.core import evidence_keys, instance_secrets, wakeups
from evidence_gateway.exchange.outbox import ExchangeOutbox
from evidence_gateway.resolvers import organizations
from evidence_gateway.schema.persisted import load_trusted
from evidence_gateway.settings import get_settings
from evidence_gateway.store.db import Database
from evidence_gateway.web import allocator, serving
from evidence_gateway.web.connections import GuardedHttpToolsProtocol
from evidence_gateway.web.observability import logs, metrics, multiproc, tracing
from evidence_gateway.webhooks.dispatcher import Dispatcher
from evidence_gateway.worker import Worker

DEMO_ORG = "demo"
log = logging.getLogger(__name__)


def serve(args: argparse.Namespace) -> int:
    allocator.cap_arenas()  # before any thread exists (the database's below)
    # JSON lines on stderr from here on, in this process and (log_config below) in every worker.
    logs.configure(args.log_level, get_settings().log_format)
    if args.database_url:
        os.environ["EVIDENCE_DATABASE_URL"] = args.database_url
    if "EVIDENCE_PUBLIC_BASE_URL" not in os.environ:
        # Links (signed downloads, file_url) must point at where this server listens.
        host = "127.0.0.1" if args.host in ("0.0.0.0", "::", "") else args.host
        os.environ["EVIDENCE_PUBLIC_BASE_URL"] = f"http://{host}:{args.port}"
    # The app knows where it listens: /metrics needs its token unless that is loopback alone.
    os.environ["EVIDENCE_LISTEN_HOST"] = args.host
    get_settings.cache_clear()
    settings = get_settings()
    if settings.metrics and not settings.metrics_token and not metrics.loopback_only(args.host):
        log.warning("GET /metrics answers 401 on %s: set EVIDENCE_METRICS_TOKEN to scrape it", args.host)
    if get_settings().graphql_trusted_documents:
        load_trusted(get_settings().graphql_trusted_documents)  # a wrong file stops here, in one line
    evidence_keys.check_supplied(get_settings())  # so does a signing key that cannot sign

    async def demo_key(db: Database) -> str | None:
        if await organizations.organization_count(db):
            return None
        return await organizations.create_api_key(db, DEMO_ORG)

    if args.workers > 1:
        # Every worker process writes its metric samples where any of them can read all (/metrics);
        # ready before anything here counts (the demo key's events).
        multiproc.prepare(os.environ)
    # Migrate here, once, before any worker exists; a refusal ends serve (main prints it).
    key = asyncio.run(prepared(args, demo_key, allow_migrate=args.migrate or get_settings().migrate))
    # The schema is at head now: workers (and this process's app) only check it.
    os.environ["EVIDENCE_MIGRATE"] = "false"
    if args.no_dispatcher:
        os.environ["EVIDENCE_DISPATCHER"] = "false"
    get_settings.cache_clear()
    settings = get_settings()
    if key:
        print(f"Created organisation '{DEMO_ORG}'. Its API key (shown once):\n{key}", flush=True)
    # uvicorn, with a shutdown that answers every request already received (serving.py).
    serving.run(
        "evidence_gateway.app:create_app",
        factory=True,
        host=args.host,
        port=args.port,
        workers=args.workers,
        log_level=args.log_level,
        log_config=logs.dict_config(args.log_level, settings.log_format),
        # One JSON access line per request comes from observability/access.py instead; uvicorn's
        # own would print query strings, signed download links' signatures included.
        access_log=False,
        server_header=False,  # no "server: uvicorn" banner
        # A WebSocket message is held to the HTTP body ceiling by the server itself (1009 above it),
        # so no larger one is ever buffered (uvicorn's default is 16 MiB); the app checks it too.
        ws_max_size=settings.max_body_bytes,
        timeout_graceful_shutdown=args.graceful_timeout,
        timeout_worker_healthcheck=serving.WORKER_HEALTHCHECK_SECONDS,
        # Forwarding headers are read by the app, from EVIDENCE_TRUSTED_PROXIES only (proxies.py):
        # uvicorn's own reading trusts any loopback peer, so anything on the host could pose as any client.
        proxy_headers=False,
        forwarded_allow_ips="",
        # Slow clients (docs/operations.md): the header deadline and the per-address cap are in
        # the protocol (connections.py), the body deadline in the app (http_body.py).
        http=GuardedHttpToolsProtocol,
        timeout_keep_alive=settings.keep_alive_seconds,
        # uvicorn answers 503 once it holds this many, the asking connection included.
        limit_concurrency=settings.max_connections + 1,
    )
    return 0


def worker(args: argparse.Namespace) -> int:
    """Background work without HTTP: the webhook dispatcher, the sweeper and the queue of
    respond-async work, until SIGTERM or SIGINT. Pair it with ``serve --no-dispatcher``."""
    allocator.cap_arenas()
    if args.database_url:
        os.environ["EVIDENCE_DATABASE_URL"] = args.database_url
    get_settings.cache_clear()
    settings = get_settings()
    logs.configure(log_format=settings.log_format)
    evidence_keys.check_supplied(settings)

    async def run(db: Database) -> None:
        # Events of work done here carry signed download links, signed as the API nodes sign them.
        settings.secret_key = await instance_secrets.signing_key(db, settings)
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop.set)
        listener = wakeups.node_listener(db)
        worker, dispatcher = Worker(db, settings), Dispatcher(db, settings)
        answers = ExchangeOutbox(db, settings)  # PACT answers to recipients' hosts
        tracer_provider = tracing.instrument(db)  # queued work and deliveries, when OTEL_* asks
        if listener is not None:
            await listener.start()
        await worker.start()
        await dispatcher.start()
        await answers.start()
        print("worker running: webhook dispatcher, sweeper, queued work (Ctrl-C stops)", flush=True)
        try:
            await stop.wait()
        finally:
            await answers.stop(settings.webhook_read_timeout_seconds)
            await dispatcher.stop(settings.webhook_read_timeout_seconds)
            await worker.stop(settings.lease_seconds)
            if listener is not None:
                await listener.stop()
            if tracer_provider is not None:
                tracing.shutdown(tracer_provider)

    asyncio.run(prepared(args, run))
    return 0
