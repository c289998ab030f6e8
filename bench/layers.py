"""Per-request CPU cost of the read path, layer by layer, in-process (no sockets, no HTTP parsing).

Both apps are driven through ASGI directly on one event loop (eight requests in flight) against
the same fresh database (SQLite file, or PostgreSQL with --pg; 1,000 workspaces in one
organisation), and the process's CPU time (every thread's) is divided by the requests served:
what is left is the work each app does per request, without the HTTP parser both share.
Logging is configured as ``serve`` configures it (JSON lines, level info; written to
/dev/null here), so the access line costs what it costs when served. Variants:

- floor_raw:       bench/floor_app.py, BENCH_FLOOR_MODE=raw (aiosqlite / asyncpg directly)
- floor_core:      bench/floor_app.py, BENCH_FLOOR_MODE=core (SQLAlchemy Core, async engine)
- product:         the app as served (rate limits, metrics, access log, request ids, CORS on)
- then the product's own middleware stack rebuilt from the inside out, one layer added per
  variant, so the differences between neighbours are the layers' costs:
  handlers (Starlette's error handling + the router + our handlers: authentication, resolvers,
  serialisation), +ratelimit, +headers (nosniff, no-store), +access (the access line, no
  metrics hook), +metrics, +request_id, +cors, +client_address (= the product's stack)

    python bench/layers.py [--pg] [--n 3000] [--rounds 5] [--only list,detail] [--profile list]

Each figure is the median over the rounds (alternating variants within each round); --profile
prints the top frames of the product under one scenario.

Figures go in docs/performance.md ("per-layer breakdown").
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import cProfile
import io
import json
import os
import pstats
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from sqlalchemy import insert
from sqlmodel import SQLModel

sys.path.insert(0, str(Path(__file__).parent))

import floor_app  # noqa: E402
import run  # noqa: E402

from evidence_gateway.app import EvidenceApp, create_app  # noqa: E402
from evidence_gateway.auth import authenticate  # noqa: E402
from evidence_gateway.core.timeutil import utcnow  # noqa: E402
from evidence_gateway.resolvers import organizations  # noqa: E402
from evidence_gateway.settings import Settings  # noqa: E402
from evidence_gateway.store import migrate  # noqa: E402
from evidence_gateway.store.db import Database  # noqa: E402
from evidence_gateway.web import cors  # noqa: E402
from evidence_gateway.web.observability import logs, metrics  # noqa: E402
from evidence_gateway.web.observability.access import AccessLogMiddleware  # noqa: E402
from evidence_gateway.web.proxies import ClientAddress, ClientAddressMiddleware, parse_networks  # noqa: E402
from evidence_gateway.web.ratelimit.middleware import RateLimitMiddleware  # noqa: E402
from evidence_gateway.web.request_id import RequestIdMiddleware  # noqa: E402
from evidence_gateway.web.response_headers import ResponseHeadersMiddleware  # noqa: E402

App = Callable[[dict[str, Any], Any, Any], Awaitable[None]]
WS = SQLModel.metadata.tables["workspace"]
CONCURRENCY = 8

PAGE = "pagination { page perPage total }"
NESTED = " ".join(f"{n} {{ id }}" for n in run.NESTED)
# The queries of bench/run.py: 13 fields per item, and the same with three nested relations.
LIST_QUERY = f"{{ workspaces(page: 1, perPage: 20) {{ items {{ {run.WS_FIELDS} }} {PAGE} }} }}"
NESTED_QUERY = f"{{ workspaces(page: 1, perPage: 20) {{ items {{ {run.WS_FIELDS} {NESTED} }} {PAGE} }} }}"


async def call(app: App, method: str, path: str, key: str, body: bytes = b"", query: str = "") -> tuple[int, bytes]:
    headers = [(b"host", b"bench"), (b"authorization", f"Bearer {key}".encode())]
    if body:
        headers += [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "root_path": "",
        "query_string": query.encode(),
        "headers": headers,
        "client": ("127.0.0.1", 5000),
        "server": ("bench", 80),
        "state": {},
    }
    sent = False

    async def receive() -> dict[str, Any]:
        nonlocal sent
        if sent:
            await asyncio.Event().wait()
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    status = 0
    chunks: list[bytes] = []

    async def send(message: dict[str, Any]) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = message["status"]
        elif message["type"] == "http.response.body":
            chunks.append(message.get("body", b""))

    await app(scope, receive, send)
    return status, b"".join(chunks)


async def seed(url: str) -> tuple[str, str]:
    db = Database(url)
    await migrate.prepare(db, migrate=True)
    key = await organizations.create_api_key(db, "layers")
    principal = await authenticate(db, f"Bearer {key}")
    now = utcnow()
    rows = []
    for i in range(1000):
        rows.append(
            {
                "id": uuid.uuid4(),
                "org_id": principal.org_id,
                "name": f"Workspace {i}",
                "status": "draft",
                "created_at": now,
                "updated_at": now,
                "data_version": 0,
                "etag_version": 0,
            }
        )
    async with db.engine.begin() as conn:
        await conn.execute(insert(WS), rows)
        if (counts := SQLModel.metadata.tables.get("list_count")) is not None:  # as the write path keeps it
            count = {"org_id": principal.org_id, "list_name": "workspace", "row_count": len(rows)}
            await conn.execute(insert(counts).values(**count))
    detail = str(rows[500]["id"])
    await db.dispose()
    return key, detail


def scenarios(detail: str) -> dict[str, tuple[str, str, bytes, str]]:
    return {
        "list": ("GET", "/api/v2/workspaces", b"", "page=1&per_page=20"),
        "detail": ("GET", f"/api/v2/workspaces/{detail}", b"", ""),
        "graphql_list": ("POST", "/graphql", json.dumps({"query": LIST_QUERY}).encode(), ""),
        "graphql_nested": ("POST", "/graphql", json.dumps({"query": NESTED_QUERY}).encode(), ""),
        # Last: every create adds a row the lists above would count.
        "create": ("POST", "/api/v2/workspaces", b'{"name": "bench create"}', ""),
    }


async def measure(app: App, key: str, sc: tuple[str, str, bytes, str], n: int) -> float:
    """CPU time of the whole process (every thread: aiosqlite's too) per request, with
    CONCURRENCY requests in flight as under load, so thread hops overlap as they do when served."""
    method, path, body, query = sc
    status, out = await call(app, method, path, key, body, query)
    assert status == (201 if method == "POST" and path.startswith("/api") else 200), (status, out[:300])

    async def client(count: int) -> None:
        for _ in range(count):
            got, out = await call(app, method, path, key, body, query)
            assert got == status, (got, out[:300])

    await asyncio.gather(*(client(10) for _ in range(CONCURRENCY)))
    per_client = max(1, n // CONCURRENCY)
    start = time.process_time()
    await asyncio.gather(*(client(per_client) for _ in range(CONCURRENCY)))
    return (time.process_time() - start) / (per_client * CONCURRENCY) * 1e6


class Lifespan:
    def __init__(self, app: Any) -> None:
        self.app = app
        self.cm: Any = None

    async def __aenter__(self) -> Any:
        self.cm = self.app.router.lifespan_context(self.app)
        await self.cm.__aenter__()
        return self.app

    async def __aexit__(self, *exc: Any) -> None:
        await self.cm.__aexit__(*exc)


def product(url: str, **env: str) -> Any:
    for name, value in env.items():
        os.environ[name] = value
    try:
        settings = Settings(database_url=url)  # as served: the dispatcher and the worker run
    finally:
        for name in env:
            del os.environ[name]
    return create_app(settings)


def layered(app: Any) -> dict[str, App]:
    """The product's middleware stack (``EvidenceApp.build_middleware_stack``), rebuilt one layer
    at a time from the inside out; the last is the whole stack."""
    settings = app.state.settings
    inner = super(EvidenceApp, app).build_middleware_stack()  # Starlette's error handling + router
    out: dict[str, App] = {"handlers": inner}
    limited = RateLimitMiddleware(inner, app.state.limiter, settings.rate_limits)
    out["+ratelimit"] = limited
    headers = ResponseHeadersMiddleware(limited)
    out["+headers"] = headers
    out["+access"] = AccessLogMiddleware(headers, app.routes, [])
    observed = AccessLogMiddleware(headers, app.routes, [metrics.observe_request])
    out["+metrics"] = observed
    ids = RequestIdMiddleware(observed)
    out["+request_id"] = ids
    with_cors = cors.wrap(ids, settings)
    out["+cors"] = with_cors
    addresses = ClientAddress(parse_networks(settings.trusted_proxies), settings.trusted_proxy_header)
    out["+client_address"] = ClientAddressMiddleware(with_cors, addresses)

    def bound(asgi: Any) -> App:
        async def call_it(scope: dict[str, Any], receive: Any, send: Any) -> None:
            scope["app"] = app
            await asgi(scope, receive, send)

        return call_it

    return {name: bound(asgi) for name, asgi in out.items()}


def floor(url: str, mode: str) -> Any:
    os.environ["BENCH_FLOOR_DATABASE_URL"] = url
    os.environ["BENCH_FLOOR_MODE"] = mode
    try:
        return floor_app.create_app()
    finally:
        del os.environ["BENCH_FLOOR_MODE"]


def quiet_logging() -> None:
    """As ``serve`` logs (JSON, info), into /dev/null: formatting the lines is the cost."""
    config = logs.dict_config("info", "json")
    config["handlers"]["stderr"]["stream"] = open(os.devnull, "w")  # noqa: SIM115 (the process's life)
    import logging.config

    logging.config.dictConfig(config)


async def main(
    url: str, n: int, rounds: int, only: list[str] | None, profile: str | None, variants: list[str] | None = None
) -> dict[str, Any]:
    key, detail = await seed(url)
    scs = {name: sc for name, sc in scenarios(detail).items() if not only or name in only}
    quiet_logging()
    # The per-key budget past what a run spends (100,000 a minute by default): every request is
    # charged as usual, none is refused.
    served = product(url, EVIDENCE_RATE_LIMIT_PER_KEY="1000000000")
    floors = {"floor_raw": floor(url, "raw"), "floor_core": floor(url, "core")}
    apps: dict[str, App] = {**floors, "product": served, **layered(served)}
    if variants:
        apps = {name: app for name, app in apps.items() if name in variants}
    results: dict[str, dict[str, float]] = {name: {} for name in apps}
    async with contextlib.AsyncExitStack() as stack:
        for app in (*floors.values(), served):
            await stack.enter_async_context(Lifespan(app))
        for s, sc in scs.items():
            samples: dict[str, list[float]] = {}
            # Alternating within each round; the median over rounds: the machine's other load
            # lands on every variant alike.
            for _ in range(rounds):
                for name, app in apps.items():
                    if name.startswith("floor") and s.startswith("graphql"):
                        continue
                    samples.setdefault(name, []).append(await measure(app, key, sc, n // rounds))
            for name, got in samples.items():
                results[name][s] = statistics.median(got)
            print(f"{s}: " + "  ".join(f"{k} {statistics.median(v):.0f}" for k, v in samples.items()), flush=True)
            if profile == s:
                prof = cProfile.Profile()
                prof.enable()
                await measure(served, key, sc, n)
                prof.disable()
                buf = io.StringIO()
                pstats.Stats(prof, stream=buf).sort_stats("tottime").print_stats(45)
                print(buf.getvalue())
    return results


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=3000, help="requests per scenario and variant")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--pg", action="store_true", help="a fresh PostgreSQL database on 127.0.0.1:5432")
    parser.add_argument("--profile", choices=["list", "detail", "create", "graphql_list", "graphql_nested"])
    parser.add_argument("--only", help="comma-separated scenarios (default: all)")
    parser.add_argument("--variants", help="comma-separated variants (default: all), e.g. floor_raw,product")
    parser.add_argument("--json", help="write the figures (µs per request) to this file")
    args = parser.parse_args()
    pg_name = f"eg_layers_{uuid.uuid4().hex[:8]}" if args.pg else None
    url = run.pg_create(pg_name) if pg_name else f"sqlite:///{tempfile.mkdtemp(prefix='eg-layers-')}/layers.db"
    try:
        only = args.only.split(",") if args.only else None
        variants = args.variants.split(",") if args.variants else None
        out = asyncio.run(main(url, args.n, args.rounds, only, args.profile, variants))
    finally:
        if pg_name:
            run.pg_drop(pg_name)
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=2))
    ref_row = out.get("floor_raw", {})
    print("CPU µs per request (median of rounds); in brackets: the raw floor's CPU / this (REST list for GraphQL)")
    for name, row in out.items():
        cells = []
        for s, us in row.items():
            ref = ref_row.get(s if not s.startswith("graphql") else "list")
            cells.append(f"{s} {us:7.0f} ({ref / us:4.2f}x)" if ref else f"{s} {us:7.0f}")
        print(f"{name:16s} " + "  ".join(cells))
