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
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import httpx

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

import run as harness  # noqa: E402  (the harness's processes, load generator and helpers)
from run import log  # noqa: E402

PORT = 8131
RECEIVER_PORT = 8132


# ---- a receiver fast enough not to be the bottleneck (its own process, asyncio, keep-alive) ----


async def _serve_receiver(port: int) -> None:
    """Answers every POST 200 at once; GET /arrivals returns [[type, subject_id, monotonic], ...]."""
    arrivals: list[tuple[str, str, float]] = []

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n")[1:]:
                    name, _, value = line.partition(b":")
                    if name.strip().lower() == b"content-length":
                        length = int(value)
                body = await reader.readexactly(length) if length else b""
                if head.startswith(b"GET"):
                    out = json.dumps(arrivals).encode()
                else:
                    event = json.loads(body)
                    arrivals.append((event["type"], event["subject_id"], time.monotonic()))
                    out = b"ok"
                writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: %d\r\n\r\n%s" % (len(out), out))
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", port, backlog=1024)
    async with server:
        await server.serve_forever()


class FastReceiver:
    def __init__(self) -> None:
        cmd = [sys.executable, __file__, "--receiver", str(RECEIVER_PORT)]
        self.proc = subprocess.Popen(harness.pinned(cmd, "1") if harness.has_taskset() else cmd)
        self.url = f"http://127.0.0.1:{RECEIVER_PORT}/hooks"
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                self.arrivals()
                return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("receiver did not start")

    def arrivals(self) -> list[tuple[str, str, float]]:
        _, _, data = harness.request("GET", RECEIVER_PORT, "/arrivals")
        return [tuple(a) for a in data]  # type: ignore[misc]

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(10)


def start(url: str, logdir: Path, *, dispatcher: bool = True) -> harness.Server:
    env = {**harness.base_env(), "EVIDENCE_WEBHOOK_ALLOW_PRIVATE_TARGETS": "true"}
    if not dispatcher:
        env["EVIDENCE_DISPATCHER"] = "false"
    cmd = [sys.executable, "-m", "evidence_gateway.cli", "serve", "--port", str(PORT), "--database-url", url]
    if url.startswith("postgresql"):
        cmd.append("--migrate")
    return harness.Server("webhooks", harness.pinned(cmd, "0"), env, PORT, logdir / "serve.log")


def create_scenario(key: str) -> harness.Scenario:
    body = json.dumps({"name": "bench"})
    return harness.Scenario("create", "POST", "/api/v2/workspaces", body, key, "create", "rest")


def register(key: str, receiver: FastReceiver) -> None:
    status, _, body = harness.request("POST", PORT, "/api/v2/webhook-endpoints", body={"url": receiver.url}, key=key)
    assert status == 201, body


def create_latency(key: str, duration: float) -> dict[str, Any]:
    sc = create_scenario(key)
    return {
        "sequential": harness.load(PORT, sc, duration, connections=1),
        "saturated": harness.load(PORT, sc, duration),
    }


async def paced(key: str, rate: float, seconds: float) -> dict[str, float]:
    """Creates at ``rate``/s; returns workspace id -> monotonic time its request was sent."""
    answered: dict[str, float] = {}
    failed: list[int] = []
    headers = {"Authorization": f"Bearer {key}"}
    limits = httpx.Limits(max_connections=64)
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{PORT}", headers=headers, limits=limits) as http:

        async def one(n: int) -> None:
            sent = time.monotonic()  # from the request's start: the webhook may beat the answer back
            try:
                resp = await http.post("/api/v2/workspaces", json={"name": f"paced-{n}"}, timeout=30)
            except httpx.HTTPError:
                failed.append(n)
                return
            answered[resp.json()["data"]["id"]] = sent

        start_at = time.monotonic()
        tasks = []
        for n in range(int(rate * seconds)):
            await asyncio.sleep(max(0.0, start_at + n / rate - time.monotonic()))
            tasks.append(asyncio.create_task(one(n)))
        await asyncio.gather(*tasks)
    if failed:
        log(f"{len(failed)} paced creates failed (not counted)")
    return answered


def delivery_latency(key: str, receiver: FastReceiver, rate: float, seconds: float) -> dict[str, Any]:
    answered = asyncio.run(paced(key, rate, seconds))
    deadline = time.monotonic() + 60
    arrived: dict[str, float] = {}
    while time.monotonic() < deadline and len(arrived) < len(answered):
        for type_, subject, at in receiver.arrivals():
            if type_ == "workspace.created" and subject in answered:
                arrived.setdefault(subject, at)
        time.sleep(0.2)
    lags = sorted(max(0.0, arrived[i] - answered[i]) * 1000 for i in answered if i in arrived)
    return {
        "events": len(answered),
        "delivered": len(lags),
        "p50_ms": round(statistics.median(lags), 1) if lags else None,
        "p99_ms": round(lags[int(len(lags) * 0.99) - 1], 1) if lags else None,
        "max_ms": round(lags[-1], 1) if lags else None,  # from the create's request to the webhook
        "within_1s": round(sum(1 for x in lags if x <= 1000) / len(answered), 4) if answered else None,
    }


def run_backend(backend: str, args: argparse.Namespace, logdir: Path) -> dict[str, Any]:
    """Delivery in serve, then (on a fresh database) in a worker process on the other core."""
    out: dict[str, Any] = {}
    for in_serve in (True, False):
        name = f"evidence_bench_wh_{uuid.uuid4().hex[:8]}"
        path = logdir / f"wh-{int(in_serve)}.db"
        url = f"sqlite+aiosqlite:///{path}" if backend == "sqlite" else harness.pg_create(name)
        server = start(url, logdir, dispatcher=in_serve)
        worker = None
        receiver = FastReceiver()
        try:
            key = harness.cli("keys", "create", "--org", "bench", "--database-url", url).strip().splitlines()[-1]
            if in_serve:
                out["none"] = create_latency(key, args.duration)
            else:
                cmd = [sys.executable, "-m", "evidence_gateway.cli", "worker", "--database-url", url]
                env = {**harness.base_env(), "EVIDENCE_WEBHOOK_ALLOW_PRIVATE_TARGETS": "true"}
                worker = subprocess.Popen(harness.pinned(cmd, "1"), env=env, stdout=subprocess.DEVNULL)
            register(key, receiver)
            suffix = "" if in_serve else "_worker"
            # Delivery first: the saturated load below leaves a backlog the paced events would queue behind.
            out["delivery" + suffix] = delivery_latency(key, receiver, args.rate, args.seconds)
            out["one_endpoint" + suffix] = create_latency(key, args.duration)
        finally:
            receiver.stop()
            if worker is not None:
                worker.terminate()
                worker.wait(20)
            server.stop()
            if backend != "sqlite":
                harness.pg_drop(name)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--duration", type=float, default=5)
    parser.add_argument("--rate", type=float, default=200)
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--backend", choices=["sqlite", "postgresql", "both"], default="both")
    parser.add_argument("--receiver", type=int, help=argparse.SUPPRESS)  # internal: run the receiver
    args = parser.parse_args()
    if args.receiver:
        asyncio.run(_serve_receiver(args.receiver))
        return 0
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
            for label, key in (("none", "none"), ("in serve", "one_endpoint"), ("in worker", "one_endpoint_worker")):
                m = r[key][mode]
                print(
                    f"{backend:10} create {mode:10} {label:9} p50 {m['p50_ms']:7} p99 {m['p99_ms']:7} rps {m['rps']:7}"
                )
        for label, key in (("in serve", "delivery"), ("in worker", "delivery_worker")):
            d = r[key]
            print(
                f"{backend:10} delivery {label:9} at {args.rate:g}/s: {d['delivered']}/{d['events']} p50 {d['p50_ms']}"
                f" ms p99 {d['p99_ms']} ms max {d['max_ms']} ms within 1 s {d['within_1s']}"
            )
    harness.RESULTS.mkdir(exist_ok=True)
    path = harness.RESULTS / f"webhooks-{time.strftime('%Y%m%d-%H%M%S')}.json"
    path.write_text(json.dumps({"args": vars(args), "results": results}, indent=2))
    print(f"wrote {path.relative_to(harness.ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
