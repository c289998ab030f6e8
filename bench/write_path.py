"""Write path before and after: create throughput and a 50,000-row import, two builds side by side.

    git worktree add ../eg-baseline <commit-before>          # the build to compare with
    python bench/write_path.py --baseline ../eg-baseline [--rounds 3] [--duration 3]

Both builds run from this virtualenv (the baseline through PYTHONPATH), each on its own fresh
database, on SQLite and (when it answers) PostgreSQL, pinned to core 0 with the load generator
on core 1. Rounds alternate which build goes first. Prints a table and writes
bench/results/write-path-<timestamp>.json. Used for docs/performance.md "Write path".
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

import run as harness  # noqa: E402  (the harness's processes, load generator and helpers)

PORTS = {"baseline": 8120, "current": 8121}


def start(build: str, src: Path | None, url: str, logdir: Path) -> harness.Server:
    env = harness.base_env()
    if src is not None:
        env["PYTHONPATH"] = str(src)
    # -P: the cwd (this checkout) must not shadow the build PYTHONPATH names.
    cmd = [sys.executable, "-P", "-m", "evidence_gateway.cli", "serve", "--port", str(PORTS[build])]
    cmd += ["--database-url", url]
    if url.startswith("postgresql"):  # a fresh database: each build creates its own schema
        cmd.append("--migrate")
    return harness.Server(build, harness.pinned(cmd, "0"), env, PORTS[build], logdir / f"{build}.log")


def key_for(src: Path | None, url: str, org: str) -> str:
    env = harness.base_env()
    if src is not None:
        env["PYTHONPATH"] = str(src)
    import subprocess

    cmd = [sys.executable, "-P", "-m", "evidence_gateway.cli", "keys", "create", "--org", org, "--database-url", url]
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True, cwd=harness.ROOT)
    return out.stdout.strip().splitlines()[-1]


def create_load(port: int, key: str, duration: float) -> dict[str, Any]:
    sc = harness.Scenario("create", "POST", "/api/v2/workspaces", json.dumps({"name": "bench"}), key, "create", "rest")
    return harness.load(port, sc, duration)


def spread_create_load(port: int, keys: list[str], duration: float) -> dict[str, Any]:
    """The same 32 connections, spread over several organisations (one load process each)."""
    per = harness.CONNECTIONS // len(keys)
    results: list[dict[str, Any]] = []

    def one(key: str) -> None:
        sc = harness.Scenario("create", "POST", "/api/v2/workspaces", json.dumps({"name": "b"}), key, "create", "rest")
        results.append(harness.load(port, sc, duration, connections=per))

    threads = [threading.Thread(target=one, args=(k,)) for k in keys]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return {"rps": round(sum(r["rps"] for r in results), 1), "p99_ms": max(r["p99_ms"] for r in results)}


def import_50k(port: int, key: str, rows: list[dict[str, Any]]) -> float:
    _, _, ws = harness.request("POST", port, "/api/v2/workspaces", body={"name": "import"}, key=key)
    body = json.dumps({"source_row_count": len(rows), "shipments": rows}).encode()
    t0 = time.perf_counter()
    status, _, parsed = harness.request("POST", port, f"/api/v2/workspaces/{ws['data']['id']}/imports", body=body,
                                        key=key, timeout=300)  # fmt: skip
    secs = time.perf_counter() - t0
    if status != 201:
        raise RuntimeError(f"import answered {status}: {parsed}")
    return secs


def run_backend(backend: str, src: Path, rounds: int, duration: float, logdir: Path) -> dict[str, Any]:
    builds: dict[str, Path | None] = {"baseline": src, "current": None}
    urls: dict[str, str] = {}
    dropped: list[str] = []
    tmp = Path(tempfile.mkdtemp(prefix="write-path-"))
    for build in builds:
        if backend == "sqlite":
            urls[build] = f"sqlite:///{tmp / (build + '.db')}"
        else:
            name = f"bench_write_{build}_{uuid.uuid4().hex[:8]}"
            urls[build] = harness.pg_create(name)
            dropped.append(name)
    rows = harness.shipments(harness.IMPORT_ROWS)
    result: dict[str, Any] = {
        b: {"create_rps": [], "create_p50_ms": [], "create_p99_ms": [], "create_4_orgs_rps": [], "import_50k_s": []}
        for b in builds
    }
    servers: dict[str, harness.Server] = {}
    try:
        for build, bsrc in builds.items():
            servers[build] = start(build, bsrc, urls[build], logdir)
        keys = {b: key_for(builds[b], urls[b], "bench-writes") for b in builds}
        spread = {b: [key_for(builds[b], urls[b], f"bench-writes-{i}") for i in range(4)] for b in builds}
        for build in builds:  # warm up
            create_load(PORTS[build], keys[build], 1.0)
        for r in range(rounds):
            order = list(builds) if r % 2 == 0 else list(reversed(builds))
            for build in order:
                load = create_load(PORTS[build], keys[build], duration)
                result[build]["create_rps"].append(load["rps"])
                result[build]["create_p50_ms"].append(load["p50_ms"])
                result[build]["create_p99_ms"].append(load["p99_ms"])
                spread_load = spread_create_load(PORTS[build], spread[build], duration)
                result[build]["create_4_orgs_rps"].append(spread_load["rps"])
                result[build]["import_50k_s"].append(round(import_50k(PORTS[build], keys[build], rows), 2))
                harness.log(f"  {backend} round {r + 1} {build:8s} create {load['rps']:7.1f} req/s "
                            f"p50 {load['p50_ms']} ms p99 {load['p99_ms']} ms  "
                            f"4 orgs {result[build]['create_4_orgs_rps'][-1]:7.1f} req/s  "
                            f"import 50k {result[build]['import_50k_s'][-1]} s")  # fmt: skip
    finally:
        for server in servers.values():
            server.stop()
        for name in dropped:
            harness.pg_drop(name)
    summary: dict[str, Any] = {}
    for build, figures in result.items():
        summary[build] = {
            "create_rps_median": statistics.median(figures["create_rps"]),
            "create_p50_ms_median": statistics.median(figures["create_p50_ms"]),
            "create_p99_ms_median": statistics.median(figures["create_p99_ms"]),
            "create_4_orgs_rps_median": statistics.median(figures["create_4_orgs_rps"]),
            "import_50k_s_median": statistics.median(figures["import_50k_s"]),
            **figures,
        }
    base, cur = summary["baseline"], summary["current"]
    summary["create_ratio"] = round(cur["create_rps_median"] / base["create_rps_median"], 3)
    summary["create_p50_ratio"] = round(cur["create_p50_ms_median"] / base["create_p50_ms_median"], 3)
    summary["create_4_orgs_ratio"] = round(cur["create_4_orgs_rps_median"] / base["create_4_orgs_rps_median"], 3)
    summary["import_ratio"] = round(cur["import_50k_s_median"] / base["import_50k_s_median"], 3)
    return summary


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--baseline", required=True, type=Path, help="source checkout of the build to compare with")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--duration", type=float, default=3.0, help="seconds of create load per round")
    parser.add_argument("--backends", default="sqlite,postgresql")
    args = parser.parse_args()
    src = args.baseline.resolve()
    if not (src / "evidence_gateway").is_dir():
        parser.error(f"{src} holds no evidence_gateway package")
    harness.RESULTS.mkdir(exist_ok=True)
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    logdir = Path(tempfile.mkdtemp(prefix="write-path-logs-"))
    report: dict[str, Any] = {"stamp": stamp, "cpus": os.cpu_count(), "rounds": args.rounds}
    for backend in args.backends.split(","):
        if backend == "postgresql" and not harness.pg_available():
            harness.log("PostgreSQL does not answer: skipped")
            continue
        harness.log(f"{backend}:")
        report[backend] = run_backend(backend, src, args.rounds, args.duration, logdir)
    out = harness.RESULTS / f"write-path-{stamp}.json"
    out.write_text(json.dumps(report, indent=2))
    head = ("backend", "build", "create req/s", "p99 ms", "4 orgs req/s", "import 50k s")
    print("\n{:10s} {:9s} {:>12s} {:>8s} {:>12s} {:>13s}".format(*head))
    for backend in args.backends.split(","):
        if backend not in report:
            continue
        for build in ("baseline", "current"):
            b = report[backend][build]
            print(f"{backend:10s} {build:9s} {b['create_rps_median']:12.1f} {b['create_p99_ms_median']:8.1f} "
                  f"{b['create_4_orgs_rps_median']:12.1f} {b['import_50k_s_median']:13.2f}")  # fmt: skip
        ratios = report[backend]
        print(f"{backend:10s} current/baseline: create {ratios['create_ratio']}, "
              f"p50 {ratios['create_p50_ratio']}, 4 orgs {ratios['create_4_orgs_ratio']}, "
              f"import time {ratios['import_ratio']}")  # fmt: skip
    print(f"\nwritten to {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
