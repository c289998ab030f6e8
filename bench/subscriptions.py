"""Subscription fan-out: 1,000 events to 100 subscribers of one organisation on one node.

    python bench/subscriptions.py                       # SQLite and PostgreSQL (when it answers)
    python bench/subscriptions.py --no-postgres --rate 0 --events 2000

A real `evidence-gateway serve` (one worker) runs on a fresh database; this process opens
``--subscribers`` WebSocket connections (graphql-transport-ws, the key in connection_init), each
subscribing to ``events(after: <end of the log>) { sequence occurredAt }``, then writes
``--events`` events through the REST API (``POST /api/v2/workspaces``: one
``workspace.created`` each) at ``--rate`` per second (0: as fast as 8 connections go).

Delivery latency of a message = the time this process read it off the socket minus the
event's ``occurredAt`` (stamped by the server in the committing transaction, on the same
clock). p50/p99/max are over every (event, subscriber) pair. Every subscriber must receive
every event exactly once, in sequence order, with no gap; the run fails otherwise.

On two or more cores the server is pinned to core 0 and this process (clients and writer) to
core 1, so the clients' own JSON parsing does not slow the server down; it still adds to the
measured latency (conservative). Results: a table on stdout and ``--json FILE``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
from websockets.asyncio.client import ClientConnection, connect
from websockets.typing import Subprotocol

ROOT = Path(__file__).resolve().parent.parent
CLI = [sys.executable, "-m", "evidence_gateway.cli"]
PG_HOST, PG_PORT, PG_USER = "127.0.0.1", 5432, "postgres"
PORT = 8120
QUERY = "subscription($after: String) { events(after: $after) { sequence occurredAt } }"


@dataclass
class Subscriber:
    ws: ClientConnection
    sequences: list[int] = field(default_factory=list)
    latencies: list[float] = field(default_factory=list)
    errors: list[Any] = field(default_factory=list)
    done: asyncio.Event = field(default_factory=asyncio.Event)

    async def read(self, expected: int) -> None:
        async for raw in self.ws:
            received = time.time()
            message = json.loads(raw)
            if message.get("type") != "next" or message["payload"].get("errors"):
                self.errors.append(message)
                self.done.set()
                return
            event = message["payload"]["data"]["events"]
            self.sequences.append(event["sequence"])
            self.latencies.append(received - datetime.fromisoformat(event["occurredAt"]).timestamp())
            if len(self.sequences) >= expected:
                self.done.set()


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process (Linux), robust to other load on the machine."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return float("nan")
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def pin(pid: int, cores: set[int]) -> None:
    with contextlib.suppress(OSError, AttributeError):
        os.sched_setaffinity(pid, cores)


async def pg_admin(sql: str) -> None:
    import asyncpg

    conn = await asyncpg.connect(host=PG_HOST, port=PG_PORT, user=PG_USER, database="postgres", timeout=5)
    try:
        await conn.execute(sql)
    finally:
        await conn.close()


def pg_answers() -> bool:
    import socket

    try:
        with socket.create_connection((PG_HOST, PG_PORT), timeout=1):
            return True
    except OSError:
        return False


def cli(url: str, *args: str, cwd: Path) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("EVIDENCE_")}
    done = subprocess.run(
        [*CLI, *args, "--database-url", url], capture_output=True, text=True, env=env, cwd=cwd, check=False
    )
    if done.returncode != 0:
        raise SystemExit(f"{args}: {done.stdout}{done.stderr}")
    return done.stdout.strip()


async def end_cursor(http: httpx.AsyncClient, key: str) -> str | None:
    """The cursor of the organisation's last event (None: empty log)."""
    after: str | None = None
    while True:
        params = {"limit": "200", **({"after": after} if after else {})}
        resp = await http.get("/api/v2/events", params=params, headers={"Authorization": f"Bearer {key}"})
        resp.raise_for_status()
        body = resp.json()
        after = body["pagination"]["next_cursor"] or after
        if not body["pagination"]["has_more"]:
            return after


async def write(http: httpx.AsyncClient, key: str, count: int, rate: float, concurrency: int = 8) -> float:
    """``count`` workspace creations at ``rate`` per second (0: as fast as possible); elapsed s."""
    headers = {"Authorization": f"Bearer {key}"}
    started = time.monotonic()
    next_index = 0

    async def one_connection() -> None:
        nonlocal next_index
        while next_index < count:
            index = next_index
            next_index += 1
            if rate > 0:
                delay = started + index / rate - time.monotonic()
                if delay > 0:
                    await asyncio.sleep(delay)
            resp = await http.post("/api/v2/workspaces", json={"name": f"ws {index}"}, headers=headers)
            if resp.status_code != 201:
                raise SystemExit(f"write failed: {resp.status_code} {resp.text}")

    await asyncio.gather(*(one_connection() for _ in range(concurrency)))
    return time.monotonic() - started


async def measure(base: str, key: str, subscribers: int, events: int, rate: float, compression: bool) -> dict[str, Any]:
    limits = httpx.Limits(max_connections=16)
    async with httpx.AsyncClient(base_url=base, timeout=30, limits=limits) as http:
        after = await end_cursor(http, key)
        url = base.replace("http://", "ws://") + "/graphql"
        async with contextlib.AsyncExitStack() as stack:
            subs: list[Subscriber] = []
            for _ in range(subscribers):
                ws = await stack.enter_async_context(
                    connect(
                        url,
                        subprotocols=[Subprotocol("graphql-transport-ws")],
                        max_size=None,
                        # Browsers offer permessage-deflate and the server accepts it: measured so.
                        compression="deflate" if compression else None,
                    )
                )
                await ws.send(json.dumps({"type": "connection_init", "payload": {"authorization": f"Bearer {key}"}}))
                ack = json.loads(await ws.recv())
                assert ack["type"] == "connection_ack", ack
                payload = {"query": QUERY, "variables": {"after": after}}
                await ws.send(json.dumps({"id": "1", "type": "subscribe", "payload": payload}))
                subs.append(Subscriber(ws))
            readers = [asyncio.create_task(s.read(events)) for s in subs]
            elapsed_write = await write(http, key, events, rate)
            started_wait = time.monotonic()
            try:
                async with asyncio.timeout(120):
                    await asyncio.gather(*(s.done.wait() for s in subs))
            except TimeoutError:
                pass
            drained_after_write = time.monotonic() - started_wait
            for task in readers:
                task.cancel()
    problems = []
    for index, s in enumerate(subs):
        if s.errors:
            problems.append(f"subscriber {index}: {s.errors[:1]}")
        elif len(s.sequences) != events:
            problems.append(f"subscriber {index}: {len(s.sequences)} of {events} events")
        elif any(b != a + 1 for a, b in zip(s.sequences, s.sequences[1:], strict=False)):
            problems.append(f"subscriber {index}: sequences out of order or with gaps")
    latencies = [lat for s in subs for lat in s.latencies]
    return {
        "subscribers": subscribers,
        "events": events,
        "rate_per_s": rate,
        "write_seconds": round(elapsed_write, 2),
        "events_per_s_written": round(events / elapsed_write, 1),
        "drain_after_last_write_s": round(drained_after_write, 3),
        "messages": len(latencies),
        "p50_ms": round(pct(latencies, 50) * 1000, 1) if latencies else None,
        "p99_ms": round(pct(latencies, 99) * 1000, 1) if latencies else None,
        "max_ms": round(max(latencies) * 1000, 1) if latencies else None,
        "mean_ms": round(statistics.fmean(latencies) * 1000, 1) if latencies else None,
        "problems": problems[:5],
    }


async def wait_ready(base: str, proc: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 60
    async with httpx.AsyncClient(base_url=base, timeout=2) as http:
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise SystemExit(f"serve exited {proc.returncode}: see {log}")
            with contextlib.suppress(httpx.TransportError):
                if (await http.get("/healthz")).status_code == 200:
                    return
            await asyncio.sleep(0.1)
    raise SystemExit("serve did not answer within 60 s")


def run_backend(backend: str, args: argparse.Namespace, workdir: Path) -> dict[str, Any]:
    if backend == "sqlite":
        url = f"sqlite+aiosqlite:///{workdir / 'bench.db'}"
    else:
        name = f"eg_bench_subs_{int(time.time())}"
        asyncio.run(pg_admin(f'CREATE DATABASE "{name}"'))
        url = f"postgresql+asyncpg://{PG_USER}@{PG_HOST}:{PG_PORT}/{name}"
    proc: subprocess.Popen[bytes] | None = None
    try:
        if backend == "postgresql":
            cli(url, "db", "upgrade", cwd=workdir)
        key = cli(url, "keys", "create", "--org", "bench-subs", cwd=workdir)
        env = {k: v for k, v in os.environ.items() if not k.startswith("EVIDENCE_")}
        env.update(EVIDENCE_SECRET_KEY="bench-subscriptions", EVIDENCE_DATABASE_URL=url)
        # Every socket comes from one key and one address: caps that fit the run (docs/events.md, "Limits").
        sockets = str(max(args.subscribers, 100))
        env.update(
            EVIDENCE_WS_MAX_CONNECTIONS_PER_KEY=sockets,
            EVIDENCE_WS_MAX_CONNECTIONS_PER_ADDRESS=sockets,
            EVIDENCE_WS_MAX_SUBSCRIPTIONS_PER_KEY=str(max(args.subscribers, 500)),
        )
        log = workdir / f"serve-{backend}.log"
        cmd = [*CLI, "serve", "--port", str(args.port), "--log-level", "warning", "--no-dispatcher"]
        with open(log, "wb") as out:
            proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env, cwd=workdir)
        two_cores = (os.cpu_count() or 1) >= 2
        if two_cores:
            pin(proc.pid, {0})
            pin(0, {1})
        base = f"http://127.0.0.1:{args.port}"
        asyncio.run(wait_ready(base, proc, log))
        cpu_before = cpu_seconds(proc.pid)
        result = asyncio.run(measure(base, key, args.subscribers, args.events, args.rate, args.compression))
        # Server CPU per message delivered, writes included: the capacity figure (one core).
        result["server_cpu_us_per_message"] = round((cpu_seconds(proc.pid) - cpu_before) / result["messages"] * 1e6)
        result["backend"] = backend
        result["pinned"] = two_cores
        return result
    finally:
        if proc is not None:
            proc.terminate()
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
        if backend == "postgresql":
            asyncio.run(pg_admin(f'DROP DATABASE IF EXISTS "{url.rsplit("/", 1)[1]}" WITH (FORCE)'))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--subscribers", type=int, default=100)
    parser.add_argument("--events", type=int, default=1000)
    parser.add_argument("--rate", type=float, default=100, help="events written per second (0: unpaced)")
    parser.add_argument("--port", type=int, default=PORT)
    parser.add_argument(
        "--no-compression", dest="compression", action="store_false", help="do not offer permessage-deflate"
    )
    parser.add_argument("--no-sqlite", action="store_true")
    parser.add_argument("--no-postgres", action="store_true")
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args()
    backends = [b for b, off in (("sqlite", args.no_sqlite), ("postgresql", args.no_postgres)) if not off]
    if "postgresql" in backends and not pg_answers():
        print(f"no PostgreSQL on {PG_HOST}:{PG_PORT}: skipped")
        backends.remove("postgresql")
    results = []
    workdir = Path(tempfile.mkdtemp(prefix="bench-subs-"))
    try:
        for backend in backends:
            results.append(run_backend(backend, args, workdir))
            r = results[-1]
            print(
                f"{backend:<10} {r['subscribers']} subscribers x {r['events']} events "
                f"(written at {r['events_per_s_written']}/s): {r['messages']} messages, "
                f"p50 {r['p50_ms']} ms, p99 {r['p99_ms']} ms, max {r['max_ms']} ms, "
                f"drained {r['drain_after_last_write_s']} s after the last write; "
                f"server CPU {r['server_cpu_us_per_message']} us per message"
                + (f"\n  PROBLEMS: {r['problems']}" if r["problems"] else ""),
                flush=True,
            )
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")
    if any(r["problems"] for r in results):
        raise SystemExit(1)


if __name__ == "__main__":
    main()
