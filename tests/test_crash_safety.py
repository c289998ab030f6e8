"""Crash safety of long work (DESIGN.md §15) with real processes, real sockets and SIGKILL.

A server is started with ``EVIDENCE_PAUSE_AT`` so its work blocks for good at a named point,
killed there with SIGKILL (its whole process group), and restarted without the pause: the
sweeper of the new process must fail what the dead one left half done. Every wait polls an
observable state (a row in the database, a resource over the API) against a deadline.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import os
import re
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import httpx
import pytest

from tests.conftest import PG_AVAILABLE, PG_HOST, PG_PORT, PG_USER
from tests.waiting import until

pytestmark = pytest.mark.slow

CLI = [sys.executable, "-m", "evidence_gateway.cli"]
ASYNC = {"Prefer": "respond-async"}
LEASE_SECONDS = "1"
SECRET = "crash-safety-test-secret"
ROWS: list[dict[str, Any]] = [
    {"external_id": "D", "mode": "road", "distance_km": 100, "mass_tonnes": 10},
    {
        "external_id": "S", "mode": "rail", "distance_km": 500, "mass_tonnes": 20,
        "carrier_intensity_g_per_tkm": 20, "carrier_intensity_basis": "wtw",
    },  # fmt: skip
    {"external_id": "P", "mode": "road", "distance_km": 300, "mass_tonnes": 8, "fuel_type": "diesel",
     "fuel_amount": 90},
]  # fmt: skip


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# ---- the database, read directly (what the server shows is checked over the API) ------------------


@dataclass
class Database:
    url: str
    sqlite_path: Path | None = None

    @property
    def is_sqlite(self) -> bool:
        return self.sqlite_path is not None

    def rows(self, sql: str, *args: Any) -> list[tuple[Any, ...]]:
        """``sql`` with ``$1, $2…`` placeholders; uuid arguments as UUID objects."""
        if self.sqlite_path is not None:
            # SQLAlchemy's Uuid type stores 32 hex characters on SQLite.
            plain = [a.hex if isinstance(a, uuid.UUID) else a for a in args]
            conn = sqlite3.connect(self.sqlite_path, timeout=5)
            try:
                return [tuple(r) for r in conn.execute(re.sub(r"\$\d+", "?", sql), plain).fetchall()]
            finally:
                conn.close()
        return asyncio.run(self._pg_rows(sql, *args))

    async def _pg_rows(self, sql: str, *args: Any) -> list[tuple[Any, ...]]:
        import asyncpg

        conn = await asyncpg.connect(
            host=PG_HOST, port=PG_PORT, user=PG_USER, database=self.url.rsplit("/", 1)[1], timeout=5
        )
        try:
            return [tuple(r) for r in await conn.fetch(sql, *args)]
        finally:
            await conn.close()

    def lease_owner(self, table: str, item_id: str) -> str | None:
        found = self.rows(f"SELECT lease_owner FROM {table} WHERE id = $1", uuid.UUID(item_id))
        return found[0][0] if found else None

    def packs_of(self, workspace_id: str) -> list[str]:
        found = self.rows("SELECT id FROM report_pack WHERE workspace_id = $1", uuid.UUID(workspace_id))
        return [str(r[0]) if isinstance(r[0], uuid.UUID) else str(uuid.UUID(r[0])) for r in found]


async def _pg_admin(sql: str) -> None:
    import asyncpg

    conn = await asyncpg.connect(host=PG_HOST, port=PG_PORT, user=PG_USER, database="postgres", timeout=5)
    try:
        await conn.execute(sql)
    finally:
        await conn.close()


@pytest.fixture(
    params=[
        "sqlite",
        pytest.param(
            "postgresql", marks=pytest.mark.skipif(not PG_AVAILABLE, reason=f"no PostgreSQL on {PG_HOST}:{PG_PORT}")
        ),
    ]
)
def database(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Database]:
    """A throwaway database per test: a SQLite file, or a PostgreSQL database dropped after."""
    if request.param == "sqlite":
        path = tmp_path / "evidence.db"
        yield Database(f"sqlite+aiosqlite:///{path}", sqlite_path=path)
        return
    name = f"evidence_crash_{uuid.uuid4().hex[:12]}"
    asyncio.run(_pg_admin(f'CREATE DATABASE "{name}"'))
    try:
        yield Database(f"postgresql+asyncpg://{PG_USER}@{PG_HOST}:{PG_PORT}/{name}")
    finally:
        asyncio.run(_pg_admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


# ---- the command line and the server process --------------------------------------------------------


def _cli_features() -> tuple[bool, bool]:
    """(serve has --migrate, there is a `db upgrade` command): schema handling may be in flux,
    so ask the command line's own parser once instead of assuming either state."""
    from evidence_gateway.cli import build_parser

    def understood(*argv: str) -> bool:
        try:
            with contextlib.redirect_stderr(io.StringIO()):
                _args, unknown = build_parser().parse_known_args(list(argv))
        except SystemExit:  # an unknown command
            return False
        return not unknown

    return understood("serve", "--migrate"), understood("db", "upgrade")


SERVE_MIGRATE, DB_UPGRADE = _cli_features()


def clean_env(database: Database, **extra: str) -> dict[str, str]:
    """The inherited environment without any EVIDENCE_* setting, plus this test's."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("EVIDENCE_")}
    env.update(
        EVIDENCE_DATABASE_URL=database.url,
        EVIDENCE_SECRET_KEY=SECRET,
        EVIDENCE_LEASE_SECONDS=LEASE_SECONDS,
        PYTHONUNBUFFERED="1",
    )
    env.update(extra)
    return env


def run_cli(database: Database, *args: str, cwd: Path) -> str:
    done = subprocess.run(
        [*CLI, *args, "--database-url", database.url],
        capture_output=True,
        text=True,
        timeout=60,
        env=clean_env(database),
        cwd=cwd,
        check=False,
    )
    assert done.returncode == 0, f"{args}: exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    return done.stdout


def api_key(database: Database, cwd: Path) -> str:
    if not database.is_sqlite and DB_UPGRADE:
        run_cli(database, "db", "upgrade", cwd=cwd)
    out = run_cli(database, "keys", "create", "--org", "crash-test", cwd=cwd)
    match = re.fullmatch(r"(evk_[0-9a-f]{48})\n", out)
    assert match, out
    return match.group(1)


@dataclass
class Server:
    """One `evidence-gateway serve` process in its own session (so killpg takes all of it)."""

    database: Database
    workdir: Path
    port: int = field(default_factory=free_port)
    proc: subprocess.Popen[bytes] | None = None
    starts: int = 0
    log_path: Path | None = None
    # Extra EVIDENCE_* settings of every start.
    env: dict[str, str] = field(default_factory=dict)

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, *args: str, pause_at: str = "") -> None:
        assert self.proc is None or self.proc.poll() is not None, "the previous process still runs"
        self.starts += 1
        self.log_path = self.workdir / f"serve-{self.starts}.log"
        with open(self.log_path, "wb") as log:
            self._launch(args, log, subprocess.STDOUT, {"EVIDENCE_PAUSE_AT": pause_at} if pause_at else {})

    def _launch(self, args: tuple[str, ...], stdout: IO[bytes], stderr: IO[bytes] | int, extra: dict[str, str]) -> None:
        """Start ``serve`` in its own process group and wait until it answers /healthz."""
        cmd = [*CLI, "serve", "--port", str(self.port), *args]
        if not self.database.is_sqlite and SERVE_MIGRATE:
            cmd.append("--migrate")
        env = clean_env(self.database, **self.env, **extra)
        self.proc = subprocess.Popen(
            cmd, stdout=stdout, stderr=stderr, env=env, cwd=self.workdir, start_new_session=True
        )
        until(self._answers, f"serve #{self.starts} to answer on {self.base}", logs=self.logs)

    def _answers(self) -> bool:
        assert self.proc is not None
        if self.proc.poll() is not None:
            pytest.fail(f"serve exited with {self.proc.returncode} before answering\n{self.logs()}")
        try:
            return httpx.get(f"{self.base}/healthz", timeout=1).status_code == 200
        except httpx.TransportError:
            return False

    def logs(self) -> str:
        parts = []
        for n in range(1, self.starts + 1):
            path = self.workdir / f"serve-{n}.log"
            if path.exists():
                parts.append(f"--- serve #{n} output ---\n{path.read_text(errors='replace')[-6000:]}")
        return "\n".join(parts)

    def kill(self) -> None:
        """SIGKILL the whole process group: no shutdown code runs, leases are simply not renewed."""
        assert self.proc is not None
        os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=10)

    def terminate(self, timeout: float) -> int:
        """SIGTERM (the process group leader is uvicorn's process); the exit status."""
        assert self.proc is not None
        os.kill(self.proc.pid, signal.SIGTERM)
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            pytest.fail(f"serve did not exit within {timeout} s of SIGTERM\n{self.logs()}")

    def cleanup(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.proc.wait(timeout=10)


@pytest.fixture
def server(database: Database, tmp_path: Path) -> Iterator[Server]:
    srv = Server(database, tmp_path)
    try:
        yield srv
    finally:
        srv.cleanup()


@dataclass
class Client:
    base: str
    key: str

    def _url(self, path: str) -> str:
        return path if path.startswith("http") else f"{self.base}{path}"

    def get(self, path: str, **kw: Any) -> httpx.Response:
        return httpx.get(self._url(path), headers={"Authorization": f"Bearer {self.key}"}, timeout=10, **kw)

    def post(self, path: str, json: Any = None, headers: dict[str, str] | None = None, **kw: Any) -> httpx.Response:
        merged = {"Authorization": f"Bearer {self.key}", **(headers or {})}
        return httpx.post(self._url(path), json=json, headers=merged, timeout=kw.pop("timeout", 30), **kw)

    def data(self, path: str) -> Any:
        resp = self.get(path)
        assert resp.status_code == 200, resp.text
        return resp.json()["data"]

    def events(self, type_: str) -> list[dict[str, Any]]:
        """Every event of ``type_`` in the organisation's log, following the cursor."""
        found: list[dict[str, Any]] = []
        params = {"limit": "200"}
        while True:
            resp = self.get("/api/v2/events", params=params)
            assert resp.status_code == 200, resp.text
            body = resp.json()
            found += [e for e in body["data"] if e["type"] == type_]
            if not body["pagination"]["has_more"]:
                return found
            params["after"] = body["pagination"]["next_cursor"]


def imported_workspace(api: Client) -> str:
    created = api.post("/api/v2/workspaces", {"name": "crash test", "reporting_period_start": "2026-01-01"})
    assert created.status_code == 201, created.text
    ws_id: str = created.json()["data"]["id"]
    body = {"source_row_count": len(ROWS), "source_filename": "q1.csv", "shipments": ROWS}
    imported = api.post(f"/api/v2/workspaces/{ws_id}/imports", body)
    assert imported.status_code == 201, imported.text
    return ws_id


def calculated_workspace(api: Client) -> str:
    ws_id = imported_workspace(api)
    resp = api.post(f"/api/v2/workspaces/{ws_id}/calculate")
    assert resp.status_code == 200, resp.text
    assert resp.json()["data"]["status"] == "calculated"
    return ws_id


class Background:
    """A synchronous request that will hang in the server; it ends when the server dies."""

    def __init__(self, call: Callable[[], httpx.Response]) -> None:
        self.outcome: httpx.Response | BaseException | None = None

        def run() -> None:
            try:
                self.outcome = call()
            except BaseException as exc:  # the server is killed under it: a transport error
                self.outcome = exc

        self.thread = threading.Thread(target=run, daemon=True)
        self.thread.start()

    def join(self) -> httpx.Response | BaseException | None:
        self.thread.join(timeout=15)
        assert not self.thread.is_alive(), "the hanging request did not end with its server"
        return self.outcome


# ---- 1. a calculation killed mid-work ----------------------------------------------------------------


def test_killed_calculation_is_failed_after_restart_and_can_be_retried(server: Server, database: Database) -> None:
    key = api_key(database, server.workdir)
    server.start(pause_at="calculation.computed")
    api = Client(server.base, key)
    ws_id = imported_workspace(api)

    accepted = api.post(f"/api/v2/workspaces/{ws_id}/calculate", headers=ASYNC)
    assert accepted.status_code == 202, accepted.text
    run_id = accepted.json()["data"]["id"]
    assert accepted.headers["Location"].endswith(f"/api/v2/calculation-runs/{run_id}")
    # Claimed by the worker: mid-work, and it can never finish (the pause).
    owner = until(lambda: database.lease_owner("calculation_run", run_id), "the worker to claim the run", 15)
    assert api.data(f"/api/v2/calculation-runs/{run_id}")["status"] == "running"

    server.kill()
    # Nobody renews the lease now; the row still says running, owned by the dead process.
    assert database.lease_owner("calculation_run", run_id) == owner
    server.start()

    run = until(
        lambda: (d := api.data(f"/api/v2/calculation-runs/{run_id}"))["status"] != "running" and d,
        "the sweeper to fail the interrupted run",
        logs=server.logs,
    )
    assert run["status"] == "failed", run
    assert run["error_message"].startswith("interrupted"), run
    assert database.lease_owner("calculation_run", run_id) is None
    workspace = api.data(f"/api/v2/workspaces/{ws_id}")
    assert workspace["status"] == "data_imported", workspace
    assert workspace["latest_calculation_run_id"] is None, workspace
    failed = [e for e in api.events("calculation.failed") if e["data"]["id"] == run_id]
    assert [e["data"]["reason"] for e in failed] == ["interrupted"], failed

    retry = api.post(f"/api/v2/workspaces/{ws_id}/calculate")
    assert retry.status_code == 200, retry.text
    body = retry.json()["data"]
    assert body["calculation_run"]["status"] == "completed" and body["calculation_run"]["id"] != run_id
    workspace = api.data(f"/api/v2/workspaces/{ws_id}")
    assert workspace["status"] == "calculated"
    assert workspace["latest_calculation_run_id"] == body["calculation_run"]["id"]


# ---- 2. a pack killed after its first artifact was stored ----------------------------------------------


@pytest.mark.parametrize("mode", ["respond-async", "synchronous"])
def test_killed_pack_generation_is_failed_and_its_stored_artifact_unreadable(
    server: Server, database: Database, mode: str
) -> None:
    key = api_key(database, server.workdir)
    server.start(pause_at="pack.artifact_stored")
    api = Client(server.base, key)
    ws_id = calculated_workspace(api)

    hanging = None
    if mode == "respond-async":
        accepted = api.post(f"/api/v2/workspaces/{ws_id}/packs", headers=ASYNC)
        assert accepted.status_code == 202, accepted.text
        pack_id = accepted.json()["data"]["id"]
        assert accepted.headers["Location"].endswith(f"/api/v2/packs/{pack_id}")
    else:
        # The request renders the pack itself and hangs at the pause; a draft pack is not the
        # workspace's latest, so its id is read from the database.
        hanging = Background(lambda: api.post(f"/api/v2/workspaces/{ws_id}/packs", timeout=60))
        pack_id = until(lambda: database.packs_of(ws_id), "the pack to be allocated", 15, server.logs)[0]

    def one_artifact_stored() -> dict[str, Any] | None:
        detail: dict[str, Any] = api.data(f"/api/v2/packs/{pack_id}")
        return detail if any(a["status"] == "generated" for a in detail["artifacts"]) else None

    detail = until(one_artifact_stored, "the first artifact to be stored", 15, server.logs)
    assert detail["status"] == "draft" and detail["pack_hash"] is None
    statuses = sorted(a["status"] for a in detail["artifacts"])
    assert statuses == ["generated"] + ["pending"] * 8, statuses
    stored = next(a for a in detail["artifacts"] if a["status"] == "generated")
    # The bug this guards against: a half-generated pack whose files can be downloaded.
    signed = httpx.get(stored["signed_download_url"], timeout=10)
    assert signed.status_code == 200 and signed.content
    assert api.get(stored["file_url"]).status_code == 200
    assert database.lease_owner("report_pack", pack_id)

    server.kill()
    if hanging is not None:
        assert not isinstance(hanging.join(), httpx.Response), "the hanging request got an answer"
    server.start()

    final = until(
        lambda: (d := api.data(f"/api/v2/packs/{pack_id}"))["status"] != "draft" and d,
        "the sweeper to fail the interrupted pack",
        logs=server.logs,
    )
    assert final["status"] == "failed", final
    assert {a["status"] for a in final["artifacts"]} == {"failed"}, final["artifacts"]
    assert database.lease_owner("report_pack", pack_id) is None
    gone = httpx.get(stored["signed_download_url"], timeout=10)
    assert gone.status_code == 409, gone.text
    assert api.get(stored["file_url"]).status_code == 409
    approval = api.post(f"/api/v2/packs/{pack_id}/approvals", {"action_type": "requested"})
    assert approval.status_code == 409, approval.text
    failed = [e for e in api.events("pack.failed") if e["data"]["id"] == pack_id]
    assert [e["data"]["reason"] for e in failed] == ["interrupted"], failed

    retry = api.post(f"/api/v2/workspaces/{ws_id}/packs")
    assert retry.status_code == 201, retry.text
    pack = retry.json()["data"]
    assert pack["status"] == "generated" and pack["version_number"] == 2, pack
    workspace = api.data(f"/api/v2/workspaces/{ws_id}")
    assert workspace["status"] == "review_needed"


# ---- 3. a graceful stop ------------------------------------------------------------------------------


def test_sigterm_stops_an_idle_server_promptly(server: Server, database: Database) -> None:
    server.start("--graceful-timeout", "5")
    started = time.monotonic()
    status = server.terminate(timeout=10)
    elapsed = time.monotonic() - started
    # uvicorn re-raises the signal it handled once it has shut down cleanly, so the exit status
    # reads "ended by SIGTERM"; either that or 0 is a clean stop. A crash or a hang is neither.
    assert status in (0, -signal.SIGTERM), f"exit status {status}\n{server.logs()}"
    assert elapsed < 5, elapsed
    assert "Application shutdown complete" in server.logs()


def test_sigterm_fails_paused_work_instead_of_leaving_it_running(server: Server, database: Database) -> None:
    key = api_key(database, server.workdir)
    server.start("--graceful-timeout", "2", pause_at="calculation.computed")
    api = Client(server.base, key)
    queued_ws, inline_ws = imported_workspace(api), imported_workspace(api)
    # One run in the background worker, one inside a request in flight; both block at the pause.
    accepted = api.post(f"/api/v2/workspaces/{queued_ws}/calculate", headers=ASYNC)
    assert accepted.status_code == 202, accepted.text
    queued_run = accepted.json()["data"]["id"]
    hanging = Background(lambda: api.post(f"/api/v2/workspaces/{inline_ws}/calculate", timeout=60))

    def runs() -> list[tuple[Any, ...]]:
        return database.rows("SELECT id, status, lease_owner, error_message FROM calculation_run")

    until(lambda: len(runs()) == 2 and all(r[2] for r in runs()), "both runs to be under way", 15, server.logs)
    started = time.monotonic()
    status = server.terminate(timeout=15)
    elapsed = time.monotonic() - started
    assert status in (0, -signal.SIGTERM), f"exit status {status}\n{server.logs()}"
    assert elapsed < 10, elapsed
    answer = hanging.join()
    ended = runs()
    assert [(r[1], r[2]) for r in ended] == [("failed", None)] * 2, ended
    assert all(r[3] for r in ended), ended
    assert any(uuid.UUID(str(r[0])) == uuid.UUID(queued_run) for r in ended)
    if isinstance(answer, httpx.Response):  # the request in flight may be answered with its failure
        assert answer.status_code >= 500 or answer.status_code == 409, answer.text
