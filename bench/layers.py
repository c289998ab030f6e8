"""Per-request CPU cost of the read path, layer by layer, in-process (no sockets, no HTTP parsing).

Both apps are driven through ASGI directly on one event loop (eight requests in flight) against
the same fresh database (SQLite file, or PostgreSQL with --pg; 1,000 workspaces in one
organisation), and the process's CPU time (every thread's) is divided by the requests served:
what is left is the work each app does per request, without the HTTP parser both share. Each
variant peels one layer off the product, so the differences are the layers' costs:

- floor:           bench/floor_app.py (Starlette + Core, statements built once, tuple rows)
- product:         the app as served
- no_ratelimit:    EVIDENCE_RATE_LIMITS=false
- no_metrics:      ... and EVIDENCE_METRICS=false
- router_only:     the Starlette router without any of our middleware (CORS, request id, access
                   line, response headers, rate limits)

    python bench/layers.py [--pg] [--n 3000] [--rounds 5] [--profile list]   # --profile: top frames of one scenario

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

from evidence_gateway.app import create_app  # noqa: E402
from evidence_gateway.auth import authenticate  # noqa: E402
from evidence_gateway.core.timeutil import utcnow  # noqa: E402
from evidence_gateway.resolvers import organizations  # noqa: E402
from evidence_gateway.settings import Settings  # noqa: E402
from evidence_gateway.store import migrate  # noqa: E402
from evidence_gateway.store.db import Database  # noqa: E402

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
            await call(app, method, path, key, body, query)

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


async def main(url: str, n: int, rounds: int, profile: str | None) -> dict[str, Any]:
    key, detail = await seed(url)
    scs = scenarios(detail)
    os.environ["BENCH_FLOOR_DATABASE_URL"] = url
    variants: dict[str, Any] = {
        "floor": floor_app.create_app(),
        "product": product(url),
        "no_ratelimit": product(url, EVIDENCE_RATE_LIMITS="false"),
        "no_metrics": product(url, EVIDENCE_RATE_LIMITS="false", EVIDENCE_METRICS="false"),
    }
    quiet = variants["no_metrics"]

    async def router_only(scope: dict[str, Any], receive: Any, send: Any) -> None:
        scope["app"] = quiet
        await quiet.router(scope, receive, send)

    apps: dict[str, App] = {**variants, "router_only": router_only}
    results: dict[str, dict[str, float]] = {name: {} for name in apps}
    async with contextlib.AsyncExitStack() as stack:
        for app in variants.values():
            await stack.enter_async_context(Lifespan(app))
        for s, sc in scs.items():
            samples: dict[str, list[float]] = {}
            # Alternating rounds, the least CPU per request of each: the machine's other load only adds.
            for _ in range(rounds):
                for name, app in apps.items():
                    if name == "floor" and s.startswith("graphql"):
                        continue
                    samples.setdefault(name, []).append(await measure(app, key, sc, n // rounds))
            for name, got in samples.items():
                results[name][s] = min(got)
            if profile == s:
                prof = cProfile.Profile()
                prof.enable()
                await measure(variants["product"], key, sc, n)
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
    args = parser.parse_args()
    pg_name = f"eg_layers_{uuid.uuid4().hex[:8]}" if args.pg else None
    url = run.pg_create(pg_name) if pg_name else f"sqlite:///{tempfile.mkdtemp(prefix='eg-layers-')}/layers.db"
    try:
        out = asyncio.run(main(url, args.n, args.rounds, args.profile))
    finally:
        if pg_name:
            run.pg_drop(pg_name)
    floor = out["floor"]
    for name, row in out.items():
        cells = []
        for s, us in row.items():
            ref = floor.get(s if not s.startswith("graphql") else "list")
            cells.append(f"{s} {us:7.0f} µs ({ref / us:4.2f}x)" if ref else f"{s} {us:7.0f} µs")
        print(f"{name:14s} " + "  ".join(cells))
