"""Resident memory of one ``serve`` process, step by step through a load (issue 29, item 4).

bench/run.py reports the resident memory after all its load scenarios, against the floor's. This
says where it grows: VmRSS after start, after seeding 100 workspaces through the API, and after
each scenario (wrk, 32 connections, a few seconds each), on a fresh SQLite file; then which of the
libraries that a serving process should load only when it uses them are mapped.

    python bench/memory_steps.py [--seconds 4] [--database-url URL] [--first-start] [--env NAME=VALUE ...]

``--database-url`` serves an empty database of yours instead (a PostgreSQL one: its schema is made
first, its tables are not emptied, so give it a fresh database). ``--first-start`` starts ``serve``
on the empty database as the README does, so that the server builds the schema itself (``serve
--migrate`` on PostgreSQL); otherwise ``db upgrade`` builds it first, in its own process.

Needs wrk on PATH. Point PYTHONPATH at another checkout's package to measure that build.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

BENCH = Path(__file__).resolve().parent
PORT = 8115
WS_FIELDS = (
    "id orgId name externalReference reportingPeriodStart reportingPeriodEnd status defaultMethodologyProfileId "
    "latestCalculationRunId latestReportPackId archivedAt createdAt updatedAt"
)
LIST = "{ workspaces(page:1, perPage:20) { items { " + WS_FIELDS + " } pagination { page perPage total totalPages } } }"
NESTED = (
    "{ workspaces(page:1, perPage:20) { items { id name latestCalculationRun { id } latestPack { id } "
    "latestQualityAssessment { id } } } }"
)
# Compiled libraries a serving process on SQLite maps only once something uses them, by a piece of
# their path (tests/test_start_memory.py checks the pure-Python ones by import).
LAZY_LIBRARIES = {"cryptography": "cryptography/hazmat/bindings", "asyncpg": "asyncpg/", "reportlab": "reportlab/"}


def _cli(env: dict[str, str], *args: str) -> str:
    # Outside any checkout: ``-m`` puts the working directory first on sys.path, before PYTHONPATH.
    done = subprocess.run(
        [sys.executable, "-m", "evidence_gateway.cli", *args],
        env=env,
        cwd=tempfile.gettempdir(),
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


def _key(env: dict[str, str], org: str) -> str:
    found = re.search(r"evk_[0-9a-f]+", _cli(env, "keys", "create", "--org", org))
    assert found, "no key printed"
    return found.group(0)


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return round(int(line.split()[1]) / 1024, 1)
    return 0.0


def _request(method: str, path: str, key: str, body: dict[str, object] | None = None) -> bytes:
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(f"http://127.0.0.1:{PORT}{path}", data=data, method=method)
    req.add_header("Authorization", f"Bearer {key}")
    if data is not None:
        req.add_header("Content-Type", "application/json")
    with urllib.request.urlopen(req, timeout=30) as answer:
        return bytes(answer.read())


def _wrk(seconds: float, url: str, key: str, method: str = "GET", body: str = "") -> None:
    env = {**os.environ, "BENCH_KEY": key, "BENCH_METHOD": method, "BENCH_BODY": body}
    cmd = ["wrk", "-t1", "-c32", f"-d{max(1, round(seconds))}s", "-s", str(BENCH / "wrk_request.lua"), url]
    subprocess.run(cmd, env=env, capture_output=True, check=True)


def _wait_ready(server: subprocess.Popen[bytes]) -> None:
    for _ in range(300):
        if server.poll() is not None:
            raise SystemExit("the server stopped while starting")
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{PORT}/healthz", timeout=1).close()
            return
        except OSError:
            time.sleep(0.2)
    raise SystemExit("the server did not answer /healthz")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=4.0, help="load per scenario")
    parser.add_argument("--env", action="append", default=[], help="NAME=VALUE for the server only")
    parser.add_argument("--database-url", help="an empty database to serve (default: a new SQLite file)")
    parser.add_argument("--first-start", action="store_true", help="serve builds the schema (the README's way)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "EVIDENCE_DATABASE_URL": args.database_url or f"sqlite:///{tmp}/bench.db"}
        if not args.first_start:
            _cli(env, "db", "upgrade")
        server_env = {**env, **dict(item.split("=", 1) for item in args.env)}
        cmd = [sys.executable, "-m", "evidence_gateway.cli", "serve", "--port", str(PORT)]
        cmd += ["--migrate"] if args.first_start else []
        server = subprocess.Popen(cmd, env=server_env, cwd=tmp, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        steps: list[tuple[str, float]] = []
        try:
            _wait_ready(server)
            key, writer = _key(env, "bench"), _key(env, "bench-writes")
            steps.append(("started", _rss_mb(server.pid)))
            for i in range(100):
                _request("POST", "/api/v2/workspaces", key, {"name": f"w{i}"})
            steps.append(("seeded 100 workspaces", _rss_mb(server.pid)))
            first = json.loads(_request("GET", "/api/v2/workspaces?page=1&per_page=1", key))["data"][0]["id"]
            base = f"http://127.0.0.1:{PORT}"
            scenarios = (
                ("REST list", f"{base}/api/v2/workspaces?page=1&per_page=20", key, "GET", ""),
                ("REST detail", f"{base}/api/v2/workspaces/{first}", key, "GET", ""),
                ("REST create", f"{base}/api/v2/workspaces", writer, "POST", '{"name": "x"}'),
                ("GraphQL list", f"{base}/graphql", key, "POST", json.dumps({"query": LIST})),
                ("GraphQL nested", f"{base}/graphql", key, "POST", json.dumps({"query": NESTED})),
                ("REST create again", f"{base}/api/v2/workspaces", writer, "POST", '{"name": "x"}'),
            )
            for name, url, who, method, body in scenarios:
                _wrk(args.seconds, url, who, method, body)
                steps.append((name, _rss_mb(server.pid)))
            maps = Path(f"/proc/{server.pid}/maps").read_text()
        finally:
            server.terminate()
            server.wait(timeout=30)
    previous = steps[0][1]
    for name, rss in steps:
        print(f"{name:24} {rss:7.1f} MB  ({rss - previous:+.1f})")
        previous = rss
    print("mapped:", ", ".join(f"{name} {'yes' if part in maps else 'no'}" for name, part in LAZY_LIBRARIES.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
