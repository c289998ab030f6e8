"""Webhooks: what one registered endpoint costs a write, and how fast events reach a receiver.

    python bench/webhooks.py [--duration 5] [--rate 200] [--seconds 10] [--backend sqlite|postgresql|both]

1. Create latency: POST /api/v2/workspaces, first with no endpoint, then with one endpoint
   (every event type) whose receiver answers 200 at once. Sequential (one connection: the
   latency a client sees) and saturated (32 connections, the server pinned to core 0, the load
   generator and the receiver on core 1).
2. Delivery latency: creates paced at ``--rate`` per second for ``--seconds``; for each event,
   the time from the create's answer to the receiver getting its webhook. Target: every event
   within 1 s at 200 events/s.

Prints a table and writes bench/results/webhooks-<timestamp>.json (docs/performance.md, "Webhooks").
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import httpx

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))
sys.path.insert(0, str(BENCH.parent))

import run as harness  # noqa: E402  (the harness's processes, load generator and helpers)

from tests.webhook_receiver import Receiver, running  # noqa: E402

PORT = 8131


def start(url: str, logdir: Path) -> harness.Server:
    env = {**harness.base_env(), "EVIDENCE_WEBHOOK_ALLOW_PRIVATE_TARGETS": "true"}
    cmd = [sys.executable, "-m", "evidence_gateway.cli", "serve", "--port", str(PORT), "--database-url", url]
    if url.startswith("postgresql"):
        cmd.append("--migrate")
    return harness.Server("webhooks", harness.pinned(cmd, "0"), env, PORT, logdir / "serve.log")


def create_scenario(key: str) -> harness.Scenario:
    body = json.dumps({"name": "bench"})
    return harness.Scenario("create", "POST", "/api/v2/workspaces", body, key, "create", "rest")


def register(key: str, receiver: Receiver) -> None:
    status, _, body = harness.request("POST", PORT, "/api/v2/webhook-endpoints", body={"url": receiver.url}, key=key)
    assert status == 201, body


def create_latency(key: str, duration: float) -> dict[str, Any]:
    sc = create_scenario(key)
    return {
        "sequential": harness.load(PORT, sc, duration, connections=1),
        "saturated": harness.load(PORT, sc, duration),
    }


async def paced(key: str, rate: float, seconds: float) -> dict[str, float]:
    """Creates at ``rate``/s; returns workspace id -> monotonic time its answer arrived."""
    answered: dict[str, float] = {}
    headers = {"Authorization": f"Bearer {key}"}
    limits = httpx.Limits(max_connections=64)
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{PORT}", headers=headers, limits=limits) as http:

        async def one(n: int) -> None:
            resp = await http.post("/api/v2/workspaces", json={"name": f"paced-{n}"}, timeout=30)
            answered[resp.json()["data"]["id"]] = time.monotonic()

        start_at = time.monotonic()
        tasks = []
        for n in range(int(rate * seconds)):
            await asyncio.sleep(max(0.0, start_at + n / rate - time.monotonic()))
            tasks.append(asyncio.create_task(one(n)))
        await asyncio.gather(*tasks)
    return answered


def delivery_latency(key: str, receiver: Receiver, rate: float, seconds: float) -> dict[str, Any]:
    receiver.received.clear()
    answered = asyncio.run(paced(key, rate, seconds))
    deadline = time.monotonic() + 60
    arrived: dict[str, float] = {}
    while time.monotonic() < deadline and len(arrived) < len(answered):
        for r in list(receiver.received):
            body = json.loads(r.body)
            if body["type"] == "workspace.created":
                arrived.setdefault(body["subject_id"], r.at)
        time.sleep(0.05)
    lags = sorted(max(0.0, arrived[i] - answered[i]) * 1000 for i in answered if i in arrived)
    return {
        "events": len(answered),
        "delivered": len(lags),
        "p50_ms": round(statistics.median(lags), 1) if lags else None,
        "p99_ms": round(lags[int(len(lags) * 0.99) - 1], 1) if lags else None,
        "max_ms": round(lags[-1], 1) if lags else None,
        "within_1s": round(sum(1 for x in lags if x <= 1000) / len(answered), 4) if answered else None,
    }


def run_backend(backend: str, args: argparse.Namespace, logdir: Path) -> dict[str, Any]:
    name = f"evidence_bench_wh_{uuid.uuid4().hex[:8]}"
    url = f"sqlite+aiosqlite:///{logdir / 'wh.db'}" if backend == "sqlite" else harness.pg_create(name)
    server = start(url, logdir)
    try:
        key = harness.cli("keys", "create", "--org", "bench", "--database-url", url).strip().splitlines()[-1]
        out: dict[str, Any] = {"none": create_latency(key, args.duration)}
        with running() as receiver:
            register(key, receiver)
            # Delivery first: the saturated load below leaves a backlog the paced events would queue behind.
            out["delivery"] = delivery_latency(key, receiver, args.rate, args.seconds)
            out["one_endpoint"] = create_latency(key, args.duration)
        return out
    finally:
        server.stop()
        if backend != "sqlite":
            harness.pg_drop(name)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--duration", type=float, default=5)
    parser.add_argument("--rate", type=float, default=200)
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--backend", choices=["sqlite", "postgresql", "both"], default="both")
    args = parser.parse_args()
    backends = ["sqlite", "postgresql"] if args.backend == "both" else [args.backend]
    if "postgresql" in backends and not harness.pg_available():
        backends.remove("postgresql")
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for backend in backends:
            harness.log(f"webhooks bench on {backend}")
            results[backend] = run_backend(backend, args, Path(tmp))
    for backend, r in results.items():
        for mode in ("sequential", "saturated"):
            none, one = r["none"][mode], r["one_endpoint"][mode]
            print(
                f"{backend:10} create {mode:10} none p50 {none['p50_ms']:6} p99 {none['p99_ms']:6} rps {none['rps']:7}"
                f" | one endpoint p50 {one['p50_ms']:6} p99 {one['p99_ms']:6} rps {one['rps']:7}"
            )
        d = r["delivery"]
        print(
            f"{backend:10} delivery at {args.rate:g}/s: {d['delivered']}/{d['events']} p50 {d['p50_ms']} ms"
            f" p99 {d['p99_ms']} ms max {d['max_ms']} ms within 1 s {d['within_1s']}"
        )
    harness.RESULTS.mkdir(exist_ok=True)
    path = harness.RESULTS / f"webhooks-{time.strftime('%Y%m%d-%H%M%S')}.json"
    path.write_text(json.dumps({"args": vars(args), "results": results}, indent=2))
    print(f"wrote {path.relative_to(harness.ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
