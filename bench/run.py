"""Benchmark harness: the real server against the floor, alternately, in one bounded run.

    python bench/run.py --quick     # ~3 minutes: SQLite and PostgreSQL, one worker
    python bench/run.py             # full (< 15 minutes): one and two workers, more rounds
    python bench/run.py --profile   # also py-spy the product under each load scenario
    python bench/run.py --quick --previous-floor   # the previous floor in the product's place
    python bench/run.py --scale-only --workers 1   # 1k vs 100k workspaces, SQLite and PostgreSQL

See docs/performance.md for what is measured and how. Prints a table and writes
bench/results/<timestamp>.json.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import http.client
import json
import math
import os
import platform
import random
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
RESULTS = BENCH / "results"
PORT_PRODUCT, PORT_FLOOR, PORT_COUNT_PRODUCT, PORT_COUNT_FLOOR = 8110, 8111, 8112, 8113
PG_ADMIN = "postgresql://postgres@127.0.0.1:5432/postgres"
CONNECTIONS = 32
SEED_WORKSPACES = 1_000
SCALE_WORKSPACES = 100_000
IMPORT_ROWS = 50_000

WS_FIELDS = (
    "id orgId name externalReference reportingPeriodStart reportingPeriodEnd status defaultMethodologyProfileId "
    "latestCalculationRunId latestReportPackId archivedAt createdAt updatedAt"
)
NESTED = ("latestCalculationRun", "latestPack", "latestQualityAssessment")
CONNECTION_Q = (
    "{ workspacesConnection(first: 20) { nodes { id name status createdAt } pageInfo { hasNextPage endCursor } } }"
)

# Issue 29's goals, product / the raw-driver floor in one run (one worker, all features on): the REST
# list 0.5x, detail 0.4x, create 0.25x; the GraphQL list (13 fields x 20) 0.3x and with three nested
# relations 0.2x the floor's REST list; resident memory after load within 1.5x the floor's.
TARGETS = {
    "rest_list_p1": 0.5,
    "rest_detail": 0.4,
    "rest_create": 0.25,
    "gql_list": 0.3,
    "gql_list_nested": 0.2,
}
TARGET_RSS_RATIO = 1.5
TARGET_SCALE = 1.3
TARGET_IMPORT_S = 5.0
TARGET_CALC_S = 5.0
TARGET_PACK_S = 10.0
TARGET_PACK_RSS_MB = 250.0


@dataclass
class Mode:
    name: str
    rounds: int
    duration: float
    workers: list[int]
    heavy_on: set[str]  # backends that get import / calculation / pack
    scale_on: set[str]  # backends that get the 1k vs 100k latency test
    budget_s: float
    scale_requests_s: float = 2.0


QUICK = Mode(
    "quick",
    rounds=2,
    duration=2,
    workers=[1],
    heavy_on={"sqlite"},
    scale_on={"sqlite"},
    budget_s=280,
    scale_requests_s=1.0,
)
FULL = Mode(
    "full", rounds=3, duration=2, workers=[1, 2], heavy_on={"sqlite", "postgresql"},
    scale_on={"sqlite", "postgresql"}, budget_s=14 * 60, scale_requests_s=1.0,
)  # fmt: skip


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


# ----------------------------------------------------------------------------- processes


def has_taskset() -> bool:
    return shutil.which("taskset") is not None and (os.cpu_count() or 1) >= 2


def pinned(cmd: list[str], cores: str) -> list[str]:
    return ["taskset", "-c", cores, *cmd] if has_taskset() else cmd


class Server:
    """A server process group we started (uvicorn with --workers 2 has children)."""

    def __init__(self, name: str, cmd: list[str], env: dict[str, str], port: int, logfile: Path) -> None:
        self.name, self.port = name, port
        self.log = logfile.open("wb")
        self.proc = subprocess.Popen(
            cmd, env=env, cwd=ROOT, stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"{name} exited early; see {logfile}")
            try:
                status, _, _ = request("GET", port, "/healthz", timeout=2)
                if status == 200:
                    return
            except OSError:
                pass
            time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"{name} did not answer /healthz on {port}; see {logfile}")

    def pids(self) -> list[int]:
        """The process and its descendants (uvicorn workers)."""
        out, todo = [], [self.proc.pid]
        while todo:
            pid = todo.pop()
            out.append(pid)
            try:
                for task in Path(f"/proc/{pid}/task").iterdir():
                    todo += [int(c) for c in (task / "children").read_text().split()]
            except OSError:
                pass
        return out

    def worker_pids(self) -> list[int]:
        pids = self.pids()
        return pids[1:] if len(pids) > 1 else pids

    def memory(self) -> dict[str, float]:
        """VmRSS and VmHWM (MB) summed over the serving processes."""
        rss = hwm = 0.0
        for pid in self.worker_pids():
            status = proc_status(pid)
            rss += status.get("VmRSS", 0) / 1024
            hwm += status.get("VmHWM", 0) / 1024
        return {"rss_mb": round(rss, 1), "hwm_mb": round(hwm, 1)}

    def cpu_seconds(self) -> float:
        """User + system CPU time of the process and its descendants, every thread (/proc)."""
        ticks = 0
        for pid in self.pids():
            try:
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            ticks += int(fields[11]) + int(fields[12])  # utime, stime
        return ticks / os.sysconf("SC_CLK_TCK")

    def reset_peak(self) -> None:
        for pid in self.worker_pids():
            try:
                Path(f"/proc/{pid}/clear_refs").write_text("5")
            except OSError:
                pass

    def stop(self) -> None:
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)
                self.proc.wait(timeout=15)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                try:
                    os.killpg(self.proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                self.proc.wait(timeout=5)
        self.log.close()


def proc_status(pid: int) -> dict[str, int]:
    out: dict[str, int] = {}
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(("VmRSS", "VmHWM")):
                name, value = line.split(":", 1)
                out[name] = int(value.split()[0])
    except OSError:
        pass
    return out


def base_env() -> dict[str, str]:
    env = dict(os.environ)
    env["EVIDENCE_SECRET_KEY"] = "bench-secret-" + "0" * 32  # keeps dev secrets out of the cwd
    env.pop("EVIDENCE_SQL_ECHO", None)
    return env


def cli(*args: str) -> str:
    exe = shutil.which("evidence-gateway") or "evidence-gateway"
    res = subprocess.run([exe, *args], env=base_env(), cwd=ROOT, capture_output=True, text=True, check=True)
    return res.stdout


def start_product(url: str, workers: int, cores: str, logdir: Path) -> Server:
    exe = shutil.which("evidence-gateway") or "evidence-gateway"
    cmd = [exe, "serve", "--port", str(PORT_PRODUCT), "--workers", str(workers), "--database-url", url]
    return Server("product", pinned(cmd, cores), base_env(), PORT_PRODUCT, logdir / f"product-w{workers}.log")


def start_floor(
    url: str, workers: int, cores: str, logdir: Path, previous: bool = False, floor_mode: str = "raw"
) -> Server:
    """The floor; ``previous``: the floor the figures before 2026-11-25 were measured against, on the
    product's port, so that every ratio of the run reads "previous floor / floor". ``floor_mode``:
    ``raw`` (aiosqlite / asyncpg directly, issue 29's anchor) or ``core`` (SQLAlchemy Core)."""
    port, name = (PORT_PRODUCT, "floor-previous") if previous else (PORT_FLOOR, "floor")
    cmd = [sys.executable, "-m", "uvicorn", "floor_app:create_app", "--factory", "--app-dir", str(BENCH)]
    cmd += ["--host", "127.0.0.1", "--port", str(port), "--workers", str(workers)]
    env = base_env() | {"BENCH_FLOOR_DATABASE_URL": url, "BENCH_FLOOR_MODE": floor_mode}
    env |= {"BENCH_FLOOR_VARIANT": "previous"} if previous else {}
    return Server(name, pinned(cmd, cores), env, port, logdir / f"{name}-w{workers}.log")


def start_counter(app: str, url: str, port: int, logdir: Path) -> Server:
    cmd = [sys.executable, str(BENCH / "sqlcount_server.py"), "--app", app, "--port", str(port), "--database-url", url]
    return Server(f"count-{app}", cmd, base_env(), port, logdir / f"count-{app}.log")


# ----------------------------------------------------------------------------- HTTP helpers


def request(
    method: str,
    port: int,
    path: str,
    body: Any = None,
    key: str | None = None,
    timeout: float = 30,
    conn: http.client.HTTPConnection | None = None,
) -> tuple[int, dict[str, str], Any]:
    own = conn is None
    conn = conn or http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    data = None
    if body is not None:
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        headers["Content-Type"] = "application/json"
    try:
        conn.request(method, path, body=data, headers=headers)
        resp = conn.getresponse()
        raw = resp.read()
        hdrs = {k.lower(): v for k, v in resp.getheaders()}
    finally:
        if own:
            conn.close()
    try:
        parsed = json.loads(raw) if raw else None
    except ValueError:
        parsed = raw[:200]
    return resp.status, hdrs, parsed


@dataclass
class Scenario:
    name: str
    method: str
    path: str
    body: str | None
    key: str
    floor_equivalent: str  # scenario name on the floor this is compared with
    kind: str  # rest | graphql
    expect: int = 200


def gql_body(query: str, variables: dict[str, Any] | None = None) -> str:
    return json.dumps({"query": query, "variables": variables or {}})


def check(port: int, sc: Scenario) -> str | None:
    """One request: None when it answers as expected, else why not."""
    body = sc.body.encode() if sc.body else None
    status, _, parsed = request(sc.method, port, sc.path, body=body, key=sc.key)
    if status != sc.expect:
        return f"HTTP {status}: {str(parsed)[:200]}"
    if sc.kind == "graphql" and isinstance(parsed, dict) and parsed.get("errors"):
        return f"GraphQL errors: {str(parsed['errors'])[:200]}"
    return None


def load(port: int, sc: Scenario, duration: float, connections: int = CONNECTIONS) -> dict[str, Any]:
    """Drive one scenario for `duration` seconds from a separate, pinned process."""
    url = f"http://127.0.0.1:{port}{sc.path}"
    if shutil.which("wrk"):
        cmd = ["wrk", "-t1", f"-c{connections}", f"-d{max(1, round(duration))}s", "--timeout", "10s", "--latency", "-s"]
        cmd += [str(BENCH / "wrk_request.lua"), url]
        env = dict(os.environ, BENCH_KEY=sc.key, BENCH_METHOD=sc.method, BENCH_BODY=sc.body or "")
        tool = "wrk"
    else:
        cmd = [sys.executable, str(BENCH / "driver.py"), "--url", url, "--key", sc.key, "--method", sc.method]
        cmd += ["--body", sc.body or "", "-c", str(connections), "-d", str(duration)]
        env, tool = dict(os.environ), "asyncio-driver"
    cores = "1" if has_taskset() else ""
    res = subprocess.run(pinned(cmd, cores) if cores else cmd, env=env, capture_output=True, text=True, timeout=120)
    match = re.search(r"BENCH_JSON (\{.*\})", res.stdout)
    if not match:
        raise RuntimeError(f"load generator failed: {res.stdout[-500:]} {res.stderr[-500:]}")
    data = json.loads(match.group(1))
    secs = data["duration_us"] / 1e6
    errors = sum(v for k, v in data.items() if k.startswith("err_"))
    return {
        "rps": round(data["requests"] / secs, 1),
        "p50_ms": round(data["p50_us"] / 1000, 2),
        "p99_ms": round(data["p99_us"] / 1000, 2),
        "requests": data["requests"],
        "errors": errors,
        "tool": tool,
    }


# ----------------------------------------------------------------------------- databases


def pg_available() -> bool:
    import socket

    try:
        with socket.create_connection(("127.0.0.1", 5432), timeout=1):
            return True
    except OSError:
        return False


async def _pg_admin(sql: str) -> None:
    import asyncpg

    conn = await asyncpg.connect("postgresql://postgres@127.0.0.1:5432/postgres")
    try:
        await conn.execute(sql)
    finally:
        await conn.close()


def pg_create(name: str) -> str:
    asyncio.run(_pg_admin(f'CREATE DATABASE "{name}"'))
    return f"postgresql://postgres@127.0.0.1:5432/{name}"


def pg_drop(name: str) -> None:
    try:
        asyncio.run(_pg_admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    except Exception as exc:  # noqa: BLE001 - cleanup must not hide results
        log(f"could not drop {name}: {exc}")


async def _checkpoint(url: str) -> None:
    from sqlalchemy.ext.asyncio import create_async_engine

    from evidence_gateway.store.db import normalise_url

    engine = create_async_engine(normalise_url(url))
    try:
        async with engine.connect() as conn:
            await conn.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        await engine.dispose()


async def _bulk_insert_workspaces(url: str, org_name: str, count: int) -> tuple[float, str]:
    """Seeding shortcut for the scale test: rows go straight into the server's database."""
    from sqlalchemy import delete, func, insert, select
    from sqlalchemy.ext.asyncio import create_async_engine
    from sqlmodel import SQLModel

    from evidence_gateway import models  # noqa: F401
    from evidence_gateway.store.db import normalise_url

    ws, org = SQLModel.metadata.tables["workspace"], SQLModel.metadata.tables["organization"]
    engine = create_async_engine(normalise_url(url))
    t0 = time.perf_counter()
    try:
        async with engine.begin() as conn:
            org_id = (await conn.execute(select(org.c.id).where(org.c.name == org_name))).scalar_one()
            base = datetime.now(UTC) - timedelta(days=400)
            rng = random.Random(7)
            for start in range(0, count, 10_000):
                rows = []
                for i in range(start, min(count, start + 10_000)):
                    created = base + timedelta(seconds=rng.randrange(0, 365 * 86400))
                    rows.append(
                        {
                            "id": uuid.uuid4(),
                            "org_id": org_id,
                            "name": f"bulk workspace {i}",
                            "external_reference": f"BULK-{i}",
                            "reporting_period_start": None,
                            "reporting_period_end": None,
                            "status": "draft",
                            "default_methodology_profile_id": None,
                            "latest_calculation_run_id": None,
                            "latest_report_pack_id": None,
                            "archived_at": None,
                            "created_at": created,
                            "updated_at": created,
                        }
                    )
                await conn.execute(insert(ws), rows)
            counts = SQLModel.metadata.tables.get("list_count")
            if counts is not None:
                # As the write path would: the organisation's count moves with its rows
                # (store/list_counts.py), in the same transaction.
                mine = (counts.c.org_id == org_id) & (counts.c.list_name == "workspace")
                n = (await conn.execute(select(func.count()).select_from(ws).where(ws.c.org_id == org_id))).scalar_one()
                await conn.execute(delete(counts).where(mine))
                await conn.execute(insert(counts).values(org_id=org_id, list_name="workspace", row_count=n))
        if url.startswith("sqlite"):
            # Fold the bulk rows into the main file so the 100k probe does not measure a huge WAL.
            async with engine.connect() as conn:
                await conn.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        await engine.dispose()
    return time.perf_counter() - t0, str(rows[len(rows) // 2]["id"])


# ----------------------------------------------------------------------------- the phases


def graphql_workspace_fields() -> set[str]:
    """Fields of the GraphQL Workspace type, from `evidence-gateway export-schema` at run time."""
    sdl = cli("export-schema")
    match = re.search(r"^type Workspace[^{]*\{(.*?)^\}", sdl, re.S | re.M)
    if not match:
        return set()
    body = re.sub(r'""".*?"""|"[^"\n]*"', "", match.group(1), flags=re.S)
    return {m.group(1) for m in re.finditer(r"^\s*(\w+)\s*[(:]", body, re.M)}


def rest_routes() -> set[str]:
    """Route templates the product mounts under /api (read at run time)."""
    code = "from evidence_gateway import rest_compat; print('\\n'.join(sorted({r.path for r in rest_compat.routes})))"
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, env=base_env())
    return {"/api" + line for line in res.stdout.split()}


def seed_workspaces(port: int, key: str, count: int) -> list[str]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    ids = []
    try:
        for i in range(count):
            body = {
                "name": f"bench workspace {i}",
                "external_reference": f"B-{i}",
                "reporting_period_start": "2026-01-01",
                "reporting_period_end": "2026-12-31",
            }
            status, _, parsed = request("POST", port, "/api/v2/workspaces", body=body, key=key, conn=conn)
            if status != 201:
                raise RuntimeError(f"seeding failed: {status} {parsed}")
            ids.append(parsed["data"]["id"])
    finally:
        conn.close()
    return ids


def scenarios(keys: dict[str, str], detail_id: str, last_page: int, nested: bool) -> list[Scenario]:
    rk, wk = keys["read"], keys["write"]
    page = "pagination { page perPage total }"
    list_q = f"query {{ workspaces(page: 1, perPage: 20) {{ items {{ {WS_FIELDS} }} {page} }} }}"
    nested_fields = " ".join(f"{n} {{ id }}" for n in NESTED)
    nested_q = (
        f"query {{ workspaces(page: 1, perPage: 20) {{ items {{ {WS_FIELDS} {nested_fields} }} "
        "pagination { page perPage total } } }"
    )
    detail_q = f"query($id: UUID!) {{ workspace(id: $id) {{ {WS_FIELDS} }} }}"
    create_q = f'mutation {{ createWorkspace(input: {{name: "bench gql"}}) {{ {WS_FIELDS} }} }}'
    out = [
        Scenario("rest_list_p1", "GET", "/api/v2/workspaces?page=1&per_page=20", None, rk, "rest_list_p1", "rest"),
        Scenario(
            "rest_list_last",
            "GET",
            f"/api/v2/workspaces?page={last_page}&per_page=20",
            None,
            rk,
            "rest_list_last",
            "rest",
        ),  # fmt: skip
        Scenario("rest_detail", "GET", f"/api/v2/workspaces/{detail_id}", None, rk, "rest_detail", "rest"),
        Scenario(
            "rest_create",
            "POST",
            "/api/v2/workspaces",
            json.dumps({"name": "bench create"}),
            wk,
            "rest_create",
            "rest",
            expect=201,
        ),  # fmt: skip
        Scenario("gql_list", "POST", "/graphql", gql_body(list_q), rk, "rest_list_p1", "graphql"),
    ]
    if nested:
        out.append(Scenario("gql_list_nested", "POST", "/graphql", gql_body(nested_q), rk, "rest_list_p1", "graphql"))
    out += [
        Scenario("gql_detail", "POST", "/graphql", gql_body(detail_q, {"id": detail_id}), rk, "rest_detail", "graphql"),
        Scenario("gql_create", "POST", "/graphql", gql_body(create_q), wk, "rest_create", "graphql"),
    ]
    return out


def count_statements(port: int, sc: Scenario, repeat: int = 4) -> int | None:
    counts = []
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        for _ in range(repeat):
            body = sc.body.encode() if sc.body else None
            status, headers, _ = request(sc.method, port, sc.path, body=body, key=sc.key, conn=conn)
            if status >= 400 or "x-bench-sql-count" not in headers:
                return None
            counts.append(int(headers["x-bench-sql-count"]))
    finally:
        conn.close()
    return counts[-1]


def sql_counts(url: str, scs: list[Scenario], keys: dict[str, str], nested: bool, logdir: Path) -> dict[str, Any]:
    """Statements per request, product and floor, sequential requests on counting wrappers."""
    out: dict[str, Any] = {"product": {}, "floor": {}}
    product = start_counter("product", url, PORT_COUNT_PRODUCT, logdir)
    floor = start_counter("floor", url, PORT_COUNT_FLOOR, logdir)
    try:
        for sc in scs:
            out["product"][sc.name] = count_statements(PORT_COUNT_PRODUCT, sc)
            if sc.kind == "rest":
                out["floor"][sc.name] = count_statements(PORT_COUNT_FLOOR, sc)
        extra = f" {' '.join(f'{n} {{ id }}' for n in NESTED)}" if nested else ""
        for per_page in (1, 100):
            items = f"items {{ id{extra} imports {{ id }} }} pagination {{ total }}"
            q = f"query {{ workspaces(perPage: {per_page}) {{ {items} }} }}"
            sc = Scenario(f"gql_list_{per_page}", "POST", "/graphql", gql_body(q), keys["read"], "", "graphql")
            out["product"][f"gql_list_per_page_{per_page}"] = count_statements(PORT_COUNT_PRODUCT, sc)
            path = f"/api/v2/workspaces?per_page={per_page}"
            sc = Scenario(f"rest_list_{per_page}", "GET", path, None, keys["read"], "", "rest")
            out["product"][f"rest_list_per_page_{per_page}"] = count_statements(PORT_COUNT_PRODUCT, sc)
        out["graphql_list_query"] = f"workspaces(perPage: N) {{ {items} }}"
    finally:
        product.stop()
        floor.stop()
    return out


def sequential_latency(port: int, sc: Scenario, seconds: float) -> dict[str, Any]:
    """One connection: per-request latency without queueing (wrk -c1, or the driver)."""
    return load(port, sc, seconds, connections=1)


def scale_test(
    url: str, keys: dict[str, str], detail_id: str, mode: Mode, product: Server, floor: Server
) -> dict[str, Any]:
    """Org "bench" (1,000 workspaces, seeded over HTTP) against org "bench-scale" (100,000, bulk SQL).

    Both orgs live in the same database and are probed alternately (A/B rounds, one
    connection, so latency without queueing): machine noise hits both sides alike.
    """
    secs, scale_detail_id = asyncio.run(_bulk_insert_workspaces(url, "bench-scale", SCALE_WORKSPACES))
    if url.startswith("sqlite"):
        asyncio.run(_checkpoint(url))  # probe the main file, not a large WAL
    out: dict[str, Any] = {"bulk_insert_s": round(secs, 2), "rounds": 3 if mode.name == "full" else 2}
    sizes = {
        "1k": (keys["read"], detail_id, SEED_WORKSPACES),
        "100k": (keys["scale"], scale_detail_id, SCALE_WORKSPACES),
    }
    samples: dict[str, dict[str, dict[str, list[dict[str, Any]]]]] = {}
    for r in range(out["rounds"]):
        for size in ("1k", "100k") if r % 2 == 0 else ("100k", "1k"):
            key, wid, total = sizes[size]
            probes = [
                Scenario("list_p1", "GET", "/api/v2/workspaces?page=1&per_page=20", None, key, "", "rest"),
                Scenario("detail", "GET", f"/api/v2/workspaces/{wid}", None, key, "", "rest"),
                Scenario(
                    "list_last",
                    "GET",
                    f"/api/v2/workspaces?page={math.ceil(total / 20)}&per_page=20",
                    None,
                    key,
                    "",
                    "rest",
                ),  # fmt: skip
                # Issue 15: a connection's first page stays flat as the organisation grows.
                Scenario("connection_p1", "POST", "/graphql", gql_body(CONNECTION_Q), key, "", "graphql"),
            ]
            for sc in probes:
                for who, srv in (("product", product), ("floor", floor)):
                    if who == "floor" and sc.kind == "graphql":
                        continue  # the floor serves REST only
                    res = sequential_latency(srv.port, sc, mode.scale_requests_s)
                    samples.setdefault(who, {}).setdefault(sc.name, {}).setdefault(size, []).append(res)
    for who, per_probe in samples.items():
        for probe_name, per_size in per_probe.items():
            for size, runs in per_size.items():
                p50 = round(statistics.median(x["p50_ms"] for x in runs), 2)
                p99 = round(statistics.median(x["p99_ms"] for x in runs), 2)
                out.setdefault(f"at_{size}", {}).setdefault(who, {})[probe_name] = {"p50_ms": p50, "p99_ms": p99}
            a, b = out["at_1k"][who][probe_name]["p50_ms"], out["at_100k"][who][probe_name]["p50_ms"]
            out.setdefault("ratio_p50", {}).setdefault(who, {})[probe_name] = round(b / a, 2) if a else None
    return out


def shipments(n: int) -> list[dict[str, Any]]:
    rng = random.Random(42)
    modes = ["road", "rail", "sea", "air", "inland_waterway"]
    fuels = ["diesel", "hvo", "lng", "electricity"]
    rows = []
    for i in range(n):
        row: dict[str, Any] = {
            "external_id": f"SHP-{i:06d}",
            "mode": modes[i % 5],
            "distance_km": round(rng.uniform(5, 3000), 1),
            "mass_tonnes": round(rng.uniform(0.1, 30), 2),
            "origin": "DEHAM",
            "destination": "NLRTM",
        }
        if i % 7 == 0:
            row["fuel_type"] = fuels[i % 4]
            row["fuel_amount"] = round(rng.uniform(10, 500), 1)
            if row["fuel_type"] == "electricity":
                row["electricity_country"] = "DE"  # the grid is required with electricity (docs/api.md)
        if i % 11 == 0:
            row["carrier_intensity_g_per_tkm"] = round(rng.uniform(10, 120), 1)
            row["carrier_intensity_basis"] = "wtw"
        rows.append(row)
    return rows


def timed_post(port: int, path: str, body: Any, key: str, server: Server, timeout: float = 300) -> dict[str, Any]:
    """One heavy request; peak RSS of the serving processes reset just before it."""
    payload = body if isinstance(body, bytes) else json.dumps(body).encode()
    server.reset_peak()
    before = server.memory()
    t0 = time.perf_counter()
    status, _, parsed = request("POST", port, path, body=payload, key=key, timeout=timeout)
    secs = time.perf_counter() - t0
    after = server.memory()
    return {
        "status": status,
        "seconds": round(secs, 2),
        "rss_before_mb": before["rss_mb"],
        "peak_rss_mb": after["hwm_mb"],
        "rss_after_mb": after["rss_mb"],
        "response": parsed if status >= 400 else None,
        "data": parsed.get("data") if isinstance(parsed, dict) and status < 400 else None,
    }


def heavy(product: Server, key: str, routes: set[str], spy: bool = False) -> dict[str, Any]:
    out: dict[str, Any] = {}
    stamp = time.strftime("%Y%m%dT%H%M%S")

    def profiled(name: str, path: str, body: Any) -> dict[str, Any]:
        raw = RESULTS / f"profile-{stamp}-{name}.txt"
        proc = spy_during(product, raw, "raw", 60) if spy else None
        res = timed_post(product.port, path, body, key, product)
        if proc:
            proc.send_signal(signal.SIGINT)  # py-spy writes what it has on SIGINT
            proc.wait(timeout=60)
            res["profile"] = top_frames(raw)
        return res

    port = product.port
    status, _, parsed = request("POST", port, "/api/v2/workspaces", body={"name": "heavy"}, key=key)
    wid = parsed["data"]["id"]
    rows = shipments(IMPORT_ROWS)
    body = json.dumps({"source_row_count": IMPORT_ROWS, "source_filename": "bench.csv", "shipments": rows}).encode()
    res = profiled("import", f"/api/v2/workspaces/{wid}/imports", body)
    res["rows"] = IMPORT_ROWS
    res["body_mb"] = round(len(body) / 1e6, 1)
    res["rows_per_s"] = round(IMPORT_ROWS / res["seconds"]) if res["status"] == 201 else None
    res.pop("data")
    out["import"] = res
    log(f"  import {IMPORT_ROWS} rows: HTTP {res['status']} in {res['seconds']} s, peak RSS {res['peak_rss_mb']} MB")
    if res["status"] != 201:
        return out
    if "/api/v2/workspaces/{id}/calculate" in routes:
        calc = profiled("calculate", f"/api/v2/workspaces/{wid}/calculate", {})
        calc.pop("data")
        out["calculation"] = calc
        log(f"  calculation: HTTP {calc['status']} in {calc['seconds']} s, peak RSS {calc['peak_rss_mb']} MB")
    else:
        out["calculation"] = {"skipped": "POST /api/v2/workspaces/{id}/calculate does not exist yet"}
    if "/api/v2/workspaces/{id}/packs" in routes:
        pack = profiled("pack", f"/api/v2/workspaces/{wid}/packs", {})
        data = pack.pop("data") or {}
        pack["artifacts"] = len(data.get("artifacts") or []) if isinstance(data, dict) else None
        out["pack"] = pack
        log(f"  pack: HTTP {pack['status']} in {pack['seconds']} s, peak RSS {pack['peak_rss_mb']} MB")
    else:
        out["pack"] = {"skipped": "POST /api/v2/workspaces/{id}/packs does not exist yet"}
    return out


def profile(product: Server, scs: list[Scenario], duration: float) -> dict[str, Any]:
    """py-spy the product under load: a flame graph and the top frames per scenario."""
    if not shutil.which("py-spy"):
        return {"skipped": "py-spy not installed (pip install py-spy)"}
    out = {}
    stamp = time.strftime("%Y%m%dT%H%M%S")
    for sc in scs:
        raw = RESULTS / f"profile-{stamp}-{sc.name}.txt"
        svg = RESULTS / f"profile-{stamp}-{sc.name}.svg"
        for fmt, path in (("raw", raw), ("flamegraph", svg)):
            proc = spy_during(product, path, fmt, duration)
            load(product.port, sc, duration)
            if proc:
                proc.wait(timeout=60)
        out[sc.name] = {"flamegraph": str(svg.relative_to(ROOT)), **top_frames(raw)}
    return out


def top_frames(path: Path, limit: int = 25) -> dict[str, Any]:
    """From py-spy's collapsed output: inclusive and self shares per frame, self share per package/thread."""
    if not path.exists():
        return {}
    inclusive: dict[str, int] = {}
    self_fn: dict[str, int] = {}
    packages: dict[str, int] = {}
    threads: dict[str, int] = {}
    samples = 0
    for line in path.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        if not count.isdigit():
            continue
        n = int(count)
        samples += n
        names = []
        files = []
        for frame in stack.split(";"):
            m = re.match(r"(.+?) \((.+?)(?::\d+)?\)$", frame)
            names.append(f"{m.group(2)}:{m.group(1)}" if m else frame)
            files.append(m.group(2) if m else "")
        for name in set(names):
            inclusive[name] = inclusive.get(name, 0) + n
        if names:
            self_fn[names[-1]] = self_fn.get(names[-1], 0) + n
            pkg = files[-1].split("/")[0].removesuffix(".py") or "other"
            packages[pkg] = packages.get(pkg, 0) + n
            # Worker threads: aiosqlite's connection threads and asyncio.to_thread work.
            thread = "worker threads" if "Thread._bootstrap" in stack.split(";")[0] else "event loop thread"
            threads[thread] = threads.get(thread, 0) + n
    if not samples:
        return {}

    def pct(d: dict[str, int], k: int) -> list[tuple[str, float]]:
        return [(name, round(100 * v / samples, 1)) for name, v in sorted(d.items(), key=lambda kv: -kv[1])[:k]]

    return {
        "samples": samples,
        "threads_pct": pct(threads, 5),
        "self_pct_by_package": pct(packages, 12),
        "self_pct_top": pct(self_fn, limit),
        "inclusive_pct": pct(inclusive, limit),
    }


def spy_during(server: Server, path: Path, fmt: str, seconds: float) -> subprocess.Popen[bytes] | None:
    spy = shutil.which("py-spy")
    if not spy:
        return None
    cmd = [spy, "record", "--pid", str(server.worker_pids()[0]), "--rate", "200", "--duration", str(int(seconds)),
           "--format", fmt, "--output", str(path), "--nonblocking"]  # fmt: skip
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(0.5)
    return proc


def run_phase(
    backend: str, url: str, workers: int, mode: Mode, logdir: Path, deadline: float, args: argparse.Namespace
) -> dict[str, Any]:
    phase: dict[str, Any] = {"backend": backend, "workers": workers}
    # As an operator would: the schema first (the CLI refuses a database behind head).
    cli("db", "upgrade", "--database-url", url)
    keys = {
        "read": cli("keys", "create", "--org", "bench", "--database-url", url).strip().splitlines()[-1],
        "write": cli("keys", "create", "--org", "bench-writes", "--database-url", url).strip().splitlines()[-1],
        "heavy": cli("keys", "create", "--org", "bench-heavy", "--database-url", url).strip().splitlines()[-1],
        "scale": cli("keys", "create", "--org", "bench-scale", "--database-url", url).strip().splitlines()[-1],
    }
    cores = "0" if workers == 1 else "0,1"
    routes = rest_routes()  # read with the code the server is about to load
    if args.previous_floor:
        product = start_floor(url, workers, cores, logdir, previous=True)
    else:
        product = start_product(url, workers, cores, logdir)
    floor = start_floor(url, workers, cores, logdir, floor_mode=args.floor_mode)
    servers = {"product": product, "floor": floor}
    try:
        t0 = time.perf_counter()
        ids = seed_workspaces(PORT_PRODUCT, keys["read"], SEED_WORKSPACES)
        phase["seed_s"] = round(time.perf_counter() - t0, 2)
        log(f"  seeded {len(ids)} workspaces through POST /api/v2/workspaces in {phase['seed_s']} s")
        fields = graphql_workspace_fields()
        nested = all(n in fields for n in NESTED)
        phase["graphql_nested"] = nested or f"skipped: Workspace lacks {[n for n in NESTED if n not in fields]}"
        detail_id = ids[len(ids) // 2]
        scs = scenarios(keys, detail_id, math.ceil(SEED_WORKSPACES / 20), nested)
        problems = {}
        for sc in list(scs):
            why = check(PORT_PRODUCT, sc)
            if why:
                problems[sc.name] = why
                scs.remove(sc)
            elif sc.kind == "rest" and (why := check(PORT_FLOOR, sc)):
                raise RuntimeError(f"floor answers {sc.name} wrongly: {why}")
        phase["scenario_problems"] = problems
        # Warm both servers (imports, pools, caches) before anything is measured.
        for port in (PORT_FLOOR, PORT_PRODUCT):
            load(port, scs[0], 1.0)
        results: dict[str, Any] = {}
        every = list(scs)
        for sc in [] if args.scale_only else [sc for sc in scs if not args.only or sc.name in args.only]:
            if time.monotonic() > deadline:
                phase["truncated"] = "time budget reached"
                break
            floor_sc = next(s for s in every if s.name == sc.floor_equivalent)
            rounds = []
            for r in range(mode.rounds):
                order = [("floor", PORT_FLOOR, floor_sc), ("product", PORT_PRODUCT, sc)]
                pair = {}
                for who, port, s in order if r % 2 == 0 else reversed(order):
                    cpu0 = servers[who].cpu_seconds()
                    pair[who] = load(port, s, mode.duration)
                    # The server's CPU per request: steadier than req/s on a shared machine.
                    served = max(pair[who]["requests"], 1)
                    pair[who]["cpu_us"] = round((servers[who].cpu_seconds() - cpu0) / served * 1e6, 1)
                f_rps = pair["floor"]["rps"]
                pair["ratio"] = round(pair["product"]["rps"] / f_rps, 3) if f_rps else None
                rounds.append(pair)
            results[sc.name] = summarise(rounds, sc)
            r = results[sc.name]
            log(f"  {sc.name:16s} product {r['product']['rps']:8.1f} req/s  floor {r['floor']['rps']:8.1f}  "
                f"ratio {r['ratio']:.2f}  p50 {r['product']['p50_ms']} ms p99 {r['product']['p99_ms']} ms  "
                f"CPU µs/req {r['product']['cpu_us']} (floor {r['floor']['cpu_us']})")  # fmt: skip
        phase["load"] = results
        phase["memory_after_load"] = {"product": product.memory(), "floor": floor.memory()}
        if args.load_only:
            return phase
        if args.scale_only:
            log(f"  scale: org with {SEED_WORKSPACES} vs org with {SCALE_WORKSPACES} workspaces (bulk SQL insert)")
            phase["scale"] = scale_test(url, keys, detail_id, mode, product, floor)
            log(f"  scale p50 ratio product {phase['scale']['ratio_p50']['product']}  "
                f"floor {phase['scale']['ratio_p50']['floor']}")  # fmt: skip
            return phase
        if args.profile and workers == 1 and not args.previous_floor:
            log("  profiling the product under each scenario (py-spy)")
            phase["profile"] = profile(product, scs, max(3.0, mode.duration))
        if workers == 1 and backend in mode.scale_on and time.monotonic() < deadline:
            log(f"  scale: org with {SEED_WORKSPACES} vs org with {SCALE_WORKSPACES} workspaces (bulk SQL insert)")
            phase["scale"] = scale_test(url, keys, detail_id, mode, product, floor)
            s = phase["scale"]["ratio_p50"]
            log(f"  scale p50 ratio product {s['product']}  floor {s['floor']}")
        if workers == 1 and backend in mode.heavy_on and time.monotonic() < deadline and not args.previous_floor:
            phase["heavy"] = heavy(product, keys["heavy"], routes, spy=args.profile)
    finally:
        product.stop()
        floor.stop()
    if workers == 1 and not args.previous_floor and not args.load_only and not args.scale_only:
        phase["sql_statements"] = sql_counts(url, scs, keys, nested, logdir)
    return phase


def summarise(rounds: list[dict[str, Any]], sc: Scenario) -> dict[str, Any]:
    def med(who: str, metric: str) -> float:
        return round(statistics.median(r[who][metric] for r in rounds), 2)

    ratios = [r["ratio"] for r in rounds if r["ratio"] is not None]
    f_total = sum(r["floor"]["rps"] for r in rounds)
    return {
        "compared_with_floor": sc.floor_equivalent,
        "product": {m: med("product", m) for m in ("rps", "p50_ms", "p99_ms", "cpu_us")},
        "floor": {m: med("floor", m) for m in ("rps", "p50_ms", "p99_ms", "cpu_us")},
        # Ratio of summed throughput: one stalled round (a noisy neighbour) cannot blow it up
        # the way a median of two per-round ratios can. Per-round ratios stay in "rounds".
        "ratio": round(sum(r["product"]["rps"] for r in rounds) / f_total, 3) if f_total else 0.0,
        "round_ratios": ratios,
        "errors": sum(r["product"]["errors"] + r["floor"]["errors"] for r in rounds),
        "rounds": rounds,
    }


# ----------------------------------------------------------------------------- report


def targets(phases: list[dict[str, Any]]) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []

    def add(name: str, where: str, value: Any, target: str, ok: bool | None) -> None:
        status = "n/a" if ok is None else ("PASS" if ok else "MISS")
        rows.append({"target": name, "where": where, "value": value, "goal": target, "status": status})

    for ph in phases:
        where = f"{ph['backend']} w{ph['workers']}"
        ld = ph.get("load", {})
        for name, goal in TARGETS.items():
            if name in ld:
                ratio = ld[name]["ratio"]
                versus = "floor list" if name.startswith("gql") else "floor"
                add(f"{name} req/s vs {versus}", where, ratio, f">= {goal}", ratio >= goal)
        mem = ph.get("memory_after_load")
        if mem:
            rss = round(mem["product"]["rss_mb"] / mem["floor"]["rss_mb"], 2)
            add("RSS after load vs floor", where, rss, f"<= {TARGET_RSS_RATIO}", rss <= TARGET_RSS_RATIO)
        sq = ph.get("sql_statements", {}).get("product", {})
        if sq:
            a, b = sq.get("gql_list_per_page_1"), sq.get("gql_list_per_page_100")
            same = None if a is None else a == b
            add("SQL statements GraphQL list 1 vs 100 items", where, f"{a} vs {b}", "equal", same)
        sc = ph.get("scale", {}).get("ratio_p50", {}).get("product")
        if sc:
            for probe in ("connection_p1", "detail"):
                if sc.get(probe) is not None:
                    ok = sc[probe] <= TARGET_SCALE
                    add(f"{probe} p50 latency 100k/1k", where, sc[probe], f"<= {TARGET_SCALE}", ok)
            # A REST page carries the organisation's total, a COUNT that grows with it (the floor's too).
            add("list_p1 (with total) p50 latency 100k/1k", where, sc["list_p1"], "reported", None)
        hv = ph.get("heavy")
        if hv:
            imp = hv["import"]
            add("50k-row import seconds", where, imp["seconds"], f"<= {TARGET_IMPORT_S}",
                imp["status"] == 201 and imp["seconds"] <= TARGET_IMPORT_S)  # fmt: skip
            calc = hv.get("calculation", {})
            if "skipped" in calc:
                add("calculation 50k seconds", where, calc["skipped"], f"<= {TARGET_CALC_S}", None)
            elif calc:
                add("calculation 50k seconds", where, calc["seconds"], f"<= {TARGET_CALC_S}",
                    calc["status"] < 300 and calc["seconds"] <= TARGET_CALC_S)  # fmt: skip
            pack = hv.get("pack", {})
            if "skipped" in pack:
                add("pack 50k seconds / peak RSS", where, pack["skipped"], f"<= {TARGET_PACK_S} s, <= 250 MB", None)
            elif pack:
                ok = pack["status"] < 300 and pack["seconds"] <= TARGET_PACK_S
                ok = ok and pack["peak_rss_mb"] <= TARGET_PACK_RSS_MB
                add("pack 50k seconds / peak RSS", where, f"{pack['seconds']} s / {pack['peak_rss_mb']} MB",
                    f"<= {TARGET_PACK_S} s, <= 250 MB", ok)  # fmt: skip
    return rows


def print_report(result: dict[str, Any]) -> None:
    print()
    print(f"Evidence Gateway bench ({result['mode']}) {result['started']}  {result['machine']}")
    for ph in result["phases"]:
        if "error" in ph:
            print(f"\n## {ph['backend']} w{ph['workers']}: ERROR {ph['error']}")
            continue
        print(f"\n## {ph['backend']}, --workers {ph['workers']}  (load: {CONNECTIONS} connections, median of rounds)")
        print(f"{'scenario':18s} {'req/s':>9s} {'floor':>9s} {'ratio':>6s} {'p50 ms':>8s} {'p99 ms':>8s} "
              f"{'fl p50':>7s} {'fl p99':>7s} {'SQL':>4s} {'fl SQL':>6s} {'CPU µs':>7s} {'fl CPU':>7s}")  # fmt: skip
        sq = ph.get("sql_statements", {})
        for name, r in ph.get("load", {}).items():
            p, f = r["product"], r["floor"]
            n_sql = sq.get("product", {}).get(name)
            f_sql = sq.get("floor", {}).get(r["compared_with_floor"])
            print(f"{name:18s} {p['rps']:9.1f} {f['rps']:9.1f} {r['ratio']:6.2f} {p['p50_ms']:8.2f} {p['p99_ms']:8.2f} "
                  f"{f['p50_ms']:7.2f} {f['p99_ms']:7.2f} {str(n_sql):>4s} {str(f_sql):>6s} "
                  f"{p.get('cpu_us', ''):>7} {f.get('cpu_us', ''):>7}")  # fmt: skip
        if sq:
            pr = sq["product"]
            print(f"SQL statements, GraphQL list 1 vs 100 items: {pr.get('gql_list_per_page_1')} vs "
                  f"{pr.get('gql_list_per_page_100')}; REST list: {pr.get('rest_list_per_page_1')} vs "
                  f"{pr.get('rest_list_per_page_100')}")  # fmt: skip
        mem = ph.get("memory_after_load")
        if mem:
            print(f"RSS after load: product {mem['product']['rss_mb']} MB (peak {mem['product']['hwm_mb']}), "
                  f"floor {mem['floor']['rss_mb']} MB (peak {mem['floor']['hwm_mb']})")  # fmt: skip
        if ph.get("scale"):
            s = ph["scale"]
            for who in ("product", "floor"):
                a, b = s["at_1k"][who], s["at_100k"][who]
                parts = [f"{k} {a[k]['p50_ms']}->{b[k]['p50_ms']} ms (x{s['ratio_p50'][who][k]})" for k in a]
                print(f"scale 1k->100k p50, {who}: " + ", ".join(parts))
        if ph.get("heavy"):
            for name, h in ph["heavy"].items():
                if "skipped" in h:
                    print(f"{name}: skipped ({h['skipped']})")
                else:
                    extra = f", {h['rows_per_s']} rows/s" if h.get("rows_per_s") else ""
                    print(f"{name}: HTTP {h['status']} {h['seconds']} s{extra}, peak RSS {h['peak_rss_mb']} MB")
        if ph.get("scenario_problems"):
            print(f"scenarios not measured: {ph['scenario_problems']}")
        if ph.get("truncated"):
            print(f"phase truncated: {ph['truncated']}")
    if "pack_rss" in result:
        print(f"\nbench/pack_rss.py: {json.dumps(result['pack_rss'])[:600]}")
    print("\n## Targets")
    for t in result["targets"]:
        print(f"{t['status']:5s} {t['target']:45s} {t['where']:15s} {t['value']!s:>20s}  (goal {t['goal']})")


def markdown(result: dict[str, Any]) -> str:
    """The figures of one results JSON as the Markdown tables docs/performance.md carries."""
    lines = [f"Run: {result['mode']} mode, {result['started']}, {result['machine']}, load tool {result['load_tool']}, "
             f"pinning: {result['pinning']}, commit {result['git']}, {result['elapsed_s']} s."]  # fmt: skip
    for ph in result["phases"]:
        lines.append("")
        if "error" in ph:
            lines.append(f"**{ph['backend']}, --workers {ph['workers']}**: {ph['error']}")
            continue
        note = f"; truncated: {ph['truncated']}" if ph.get("truncated") else ""
        lines.append(
            f"**{ph['backend']}, --workers {ph['workers']}** ({CONNECTIONS} connections, median of rounds{note})"
        )
        lines.append("")
        lines.append(
            "| scenario | req/s | floor req/s | ratio | p50 ms | p99 ms | floor p50 / p99 ms | SQL/req | floor SQL "
            "| CPU µs/req | floor CPU µs/req |"
        )
        lines.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        sq = ph.get("sql_statements", {})
        for name, r in ph.get("load", {}).items():
            p, f = r["product"], r["floor"]
            n_sql = sq.get("product", {}).get(name, "")
            f_sql = sq.get("floor", {}).get(r["compared_with_floor"], "")
            cells = [name, f"{p['rps']:.0f}", f"{f['rps']:.0f}", f"**{r['ratio']:.2f}**", f"{p['p50_ms']:.1f}"]
            cells += [f"{p['p99_ms']:.1f}", f"{f['p50_ms']:.1f} / {f['p99_ms']:.1f}", str(n_sql), str(f_sql)]
            cells += [f"{p['cpu_us']:.0f}" if "cpu_us" in p else "", f"{f['cpu_us']:.0f}" if "cpu_us" in f else ""]
            lines.append("| " + " | ".join(cells) + " |")
        if sq:
            pr = sq["product"]
            lines.append("")
            lines.append(f"SQL statements per GraphQL list request, 1 vs 100 items: {pr.get('gql_list_per_page_1')} vs "
                         f"{pr.get('gql_list_per_page_100')} (`{sq.get('graphql_list_query')}`); REST list 1 vs 100: "
                         f"{pr.get('rest_list_per_page_1')} vs {pr.get('rest_list_per_page_100')}.")  # fmt: skip
        mem = ph.get("memory_after_load")
        if mem:
            lines.append(f"RSS after load: product {mem['product']['rss_mb']} MB (peak {mem['product']['hwm_mb']}), "
                         f"floor {mem['floor']['rss_mb']} MB (peak {mem['floor']['hwm_mb']}).")  # fmt: skip
        if ph.get("scale"):
            s = ph["scale"]
            lines.append("")
            lines.append("| 1k -> 100k workspaces, p50 ms (1 connection) | product | ratio | floor | ratio |")
            lines.append("|---|---:|---:|---:|---:|")
            for k in s["at_1k"]["product"]:
                pa, pb = s["at_1k"]["product"][k]["p50_ms"], s["at_100k"]["product"][k]["p50_ms"]
                if k not in s["at_1k"]["floor"]:  # GraphQL probes: the floor serves REST only
                    lines.append(f"| {k} | {pa} -> {pb} | **{s['ratio_p50']['product'][k]}** | – | – |")
                    continue
                fa, fb = s["at_1k"]["floor"][k]["p50_ms"], s["at_100k"]["floor"][k]["p50_ms"]
                lines.append(f"| {k} | {pa} -> {pb} | **{s['ratio_p50']['product'][k]}** | {fa} -> {fb} | "
                             f"{s['ratio_p50']['floor'][k]} |")  # fmt: skip
        if ph.get("heavy"):
            lines.append("")
            for name, h in ph["heavy"].items():
                if "skipped" in h:
                    lines.append(f"- {name}: skipped ({h['skipped']})")
                else:
                    extra = f", {h['rows_per_s']} rows/s" if h.get("rows_per_s") else ""
                    lines.append(f"- {name}: HTTP {h['status']}, {h['seconds']} s{extra}, peak server RSS "
                                 f"{h['peak_rss_mb']} MB (before {h['rss_before_mb']} MB)")  # fmt: skip
    if "pack_rss" in result:
        lines += ["", f"bench/pack_rss.py (SQLite, separate server): `{json.dumps(result['pack_rss'])[:600]}`"]
    lines += ["", "| target | where | value | goal | status |", "|---|---|---|---|---|"]
    for t in result["targets"]:
        lines.append(f"| {t['target']} | {t['where']} | {t['value']} | {t['goal']} | {t['status']} |")
    return "\n".join(lines)


def run_pack_rss(script: Path) -> Any:
    cmd = [sys.executable, str(script), "--port", "8114", "--repeat", "1"]
    try:
        res = subprocess.run(pinned(cmd, "0"), cwd=ROOT, env=base_env(), capture_output=True, text=True, timeout=300)
    except subprocess.TimeoutExpired:
        return {"error": "timed out after 300 s"}
    lines = res.stdout.splitlines()
    start = next((i for i, ln in enumerate(lines) if ln == "{"), None)
    if res.returncode != 0 or start is None:
        return {"error": f"exit {res.returncode}: {(res.stderr or res.stdout)[-400:]}"}
    return json.loads("\n".join(lines[start:]))


def machine() -> str:
    try:
        model = next(
            ln.split(":", 1)[1].strip() for ln in Path("/proc/cpuinfo").read_text().splitlines() if "model name" in ln
        )
    except (OSError, StopIteration):
        model = platform.processor()
    load1 = os.getloadavg()[0]
    return f"{os.cpu_count()} cores ({model}), Python {platform.python_version()}, load avg {load1:.2f} at start"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="short run (~3 min)")
    parser.add_argument("--profile", action="store_true", help="py-spy the product under each scenario")
    parser.add_argument("--no-postgres", action="store_true", help="SQLite only")
    parser.add_argument("--no-sqlite", action="store_true", help="PostgreSQL only")
    parser.add_argument(
        "--only", nargs="+", metavar="SCENARIO", help="load these scenarios alone (e.g. rest_create); the rest skipped"
    )
    parser.add_argument(
        "--previous-floor",
        action="store_true",
        help="serve the previous floor (statements built per request) where the product runs: ratios = previous/floor",
    )
    parser.add_argument(
        "--floor-mode",
        choices=["raw", "core"],
        default="raw",
        help="the floor's data layer: raw = aiosqlite / asyncpg directly (default), core = SQLAlchemy Core",
    )
    parser.add_argument(
        "--load-only", action="store_true", help="the load scenarios alone: no scale, heavy jobs or SQL counts"
    )
    parser.add_argument(
        "--scale-only",
        action="store_true",
        help="the 1k vs 100k scale probes alone, on every backend: no load scenarios, heavy jobs or SQL counts",
    )
    parser.add_argument("--rounds", type=int, help="rounds per scenario (default: the mode's)")
    parser.add_argument("--workers", type=int, nargs="+", help="uvicorn worker counts to run (default: the mode's)")
    parser.add_argument("--markdown", metavar="RESULTS_JSON", help="print the tables of a results file and exit")
    args = parser.parse_args()
    if args.markdown:
        print(markdown(json.loads(Path(args.markdown).read_text())))
        return 0
    mode = QUICK if args.quick else FULL
    if args.workers:
        mode = dataclasses.replace(mode, workers=args.workers)
    if args.rounds:
        mode = dataclasses.replace(mode, rounds=args.rounds)
    # SIGTERM (e.g. `timeout`) unwinds through the finally blocks: servers stopped, PG databases dropped.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    RESULTS.mkdir(exist_ok=True)
    started = datetime.now(UTC)
    deadline = time.monotonic() + mode.budget_s
    result: dict[str, Any] = {
        "mode": mode.name,
        "started": started.isoformat(timespec="seconds"),
        "machine": machine(),
        "load_tool": "wrk" if shutil.which("wrk") else "asyncio-driver",
        "pinning": "server core 0 (w2: 0,1), load core 1" if has_taskset() else "none",
        "git": subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
        ).stdout.strip(),
        "phases": [],
    }
    result["floor_mode"] = args.floor_mode
    if args.previous_floor:
        result["product_is"] = "the previous floor (BENCH_FLOOR_VARIANT=previous)"
    tmp = Path(tempfile.mkdtemp(prefix="eg-bench-"))
    logdir = RESULTS / f"logs-{started:%Y%m%dT%H%M%SZ}"
    logdir.mkdir()
    backends = [] if args.no_sqlite else ["sqlite"]
    backends += [] if args.no_postgres or not pg_available() else ["postgresql"]
    if "postgresql" not in backends:
        result["postgresql"] = "skipped: nothing answers on 127.0.0.1:5432" if not args.no_postgres else "skipped"
    try:
        for backend in backends:
            for workers in mode.workers:
                if time.monotonic() > deadline:
                    result["phases"].append({"backend": backend, "workers": workers, "error": "skipped: time budget"})
                    continue
                log(f"phase {backend} --workers {workers}")
                pg_name = None
                if backend == "sqlite":
                    url = f"sqlite:///{tmp}/bench-w{workers}.db"
                else:
                    pg_name = f"eg_bench_{started:%Y%m%d%H%M%S}_w{workers}"
                    url = pg_create(pg_name)
                try:
                    result["phases"].append(run_phase(backend, url, workers, mode, logdir, deadline, args))
                except Exception as exc:  # noqa: BLE001 - one broken phase must not lose the others
                    log(f"  phase failed: {exc!r}")
                    result["phases"].append({"backend": backend, "workers": workers, "error": repr(exc)})
                finally:
                    if pg_name:
                        pg_drop(pg_name)
        pack_rss = BENCH / "pack_rss.py"
        if mode.name == "full" and pack_rss.exists() and time.monotonic() < deadline and not args.scale_only:
            # The packs helper's own probe (issue 4): a separate server, generation timed twice.
            log("bench/pack_rss.py (packs' own 50k-row pack probe, SQLite)")
            result["pack_rss"] = run_pack_rss(pack_rss)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    result["targets"] = targets([p for p in result["phases"] if "error" not in p])
    result["elapsed_s"] = round((datetime.now(UTC) - started).total_seconds(), 1)
    out = RESULTS / f"{started:%Y%m%dT%H%M%SZ}.json"
    out.write_text(json.dumps(result, indent=2, default=str))
    print_report(result)
    print(f"\nwrote {out.relative_to(ROOT)} in {result['elapsed_s']} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
