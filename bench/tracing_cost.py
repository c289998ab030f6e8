"""What tracing costs a REST list request (GET /api/v2/workspaces, a page of 20 of 1,000), with
tracing off (the default: it must cost nothing) and on (spans to a discarded console exporter).

One request at a time through ASGI in-process, so the wall time of a request is its latency
without sockets; rounds alternate off and on, and the best p50 of the rounds is kept (the
machine's other load only adds). Run it on two checkouts (``PYTHONPATH=<checkout>``) to compare
a change's cost with tracing off:

    python bench/tracing_cost.py [--n 2000] [--rounds 5] [--off-only] [--pg]

Prints one JSON object: p50 and p90 latency and process CPU per request, in microseconds.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import io
import json
import os
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

import layers  # noqa: E402

from evidence_gateway.app import create_app  # noqa: E402
from evidence_gateway.settings import Settings  # noqa: E402


def app_for(url: str, traced: bool) -> Any:
    os.environ.pop("OTEL_TRACES_EXPORTER", None)
    if traced:
        os.environ["OTEL_TRACES_EXPORTER"] = "console"
    try:
        return create_app(Settings(database_url=url, rate_limits=False))
    finally:
        os.environ.pop("OTEL_TRACES_EXPORTER", None)


async def one_round(app: Any, key: str, n: int) -> tuple[float, float, float]:
    method, path, body, query = layers.scenarios("")["list"]
    latencies = []
    cpu = time.process_time()
    for _ in range(n):
        started = time.perf_counter()
        status, _out = await layers.call(app, method, path, key, body, query)
        latencies.append(time.perf_counter() - started)
        assert status == 200
    cpu = (time.process_time() - cpu) / n
    q = statistics.quantiles(latencies, n=10)
    return statistics.median(latencies) * 1e6, q[8] * 1e6, cpu * 1e6


async def main(url: str, n: int, rounds: int, off_only: bool) -> dict[str, Any]:
    key, _detail = await layers.seed(url)
    variants = {"off": app_for(url, False)}
    if not off_only:
        variants["on"] = app_for(url, True)
    found: dict[str, list[tuple[float, float, float]]] = {name: [] for name in variants}
    # Spans printed by the console exporter go nowhere.
    with contextlib.redirect_stdout(io.StringIO()):
        async with contextlib.AsyncExitStack() as stack:
            for app in variants.values():
                await stack.enter_async_context(layers.Lifespan(app))
            for app in variants.values():
                await one_round(app, key, 100)  # warm: caches, compiled statements
            for _ in range(rounds):
                for name, app in variants.items():
                    found[name].append(await one_round(app, key, n // rounds))
    return {
        name: {
            "p50_us": round(min(r[0] for r in got), 1),
            "p90_us": round(min(r[1] for r in got), 1),
            "cpu_us": round(min(r[2] for r in got), 1),
        }
        for name, got in found.items()
    }


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--off-only", action="store_true", help="only tracing off (a checkout without tracing)")
    parser.add_argument("--pg", action="store_true", help="a fresh PostgreSQL database on 127.0.0.1:5432")
    args = parser.parse_args()
    pg_name = f"eg_tracing_{uuid.uuid4().hex[:8]}" if args.pg else None
    url = layers.run.pg_create(pg_name) if pg_name else f"sqlite:///{tempfile.mkdtemp(prefix='eg-tracing-')}/bench.db"
    try:
        print(json.dumps(asyncio.run(main(url, args.n, args.rounds, args.off_only))))
    finally:
        if pg_name:
            layers.run.pg_drop(pg_name)
