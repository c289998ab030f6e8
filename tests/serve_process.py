"""Real `evidence-gateway serve` processes for tests that need one: a socket, a restart, a
SIGKILL, a second node, or the streams an operator sees.

``start_serve`` is the one way to start one and wait until /healthz answers. ``Server`` (the
crash tests' process in its own session, on a throwaway SQLite or PostgreSQL database: the
``database`` fixture) and ``Node`` (the same, stdout and stderr in two files) build on it, as
does tests/live_server.py's async ``serving``.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import socket
import sqlite3
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Self

import asyncpg
import httpx
import pytest

from tests.conftest import PG_AVAILABLE, PG_HOST, PG_PORT, PG_USER
from tests.waiting import until

CLI = [sys.executable, "-m", "evidence_gateway.cli"]
LEASE_SECONDS = "1"
# A start (migrations, imports, N worker processes each importing the app) takes seconds alone
# and minutes on a machine busy with other work; only a server that never answers waits this long.
STARTUP_SECONDS = 180.0
SECRET = "crash-safety-test-secret"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_serve(
    port: int,
    args: tuple[str, ...] | list[str],
    *,
    env: dict[str, str],
    cwd: Path,
    stdout: IO[bytes] | IO[str],
    stderr: IO[bytes] | IO[str] | int,
    logs: Callable[[], str],
) -> subprocess.Popen[bytes]:
    """``serve --port PORT ARGS`` in its own session (so killpg takes all of it), returned once
    it answers /healthz; ``logs`` says what it printed when it exits or never answers."""
    proc = subprocess.Popen(
        [*CLI, "serve", "--port", str(port), *args],
        stdout=stdout,
        stderr=stderr,
        env=env,
        cwd=cwd,
        start_new_session=True,
    )

    def answers() -> bool:
        if proc.poll() is not None:
            pytest.fail(f"serve exited with {proc.returncode} before answering\n{logs()}")
        try:
            return httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200
        except httpx.TransportError:
            return False

    try:
        until(answers, f"serve to answer on port {port}", STARTUP_SECONDS, logs)
    except BaseException:
        # Never leave it behind: with --workers N its supervisor would go on restarting workers.
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
        raise
    return proc


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


async def pg_admin(sql: str) -> None:
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
    asyncio.run(pg_admin(f'CREATE DATABASE "{name}"'))
    try:
        yield Database(f"postgresql+asyncpg://{PG_USER}@{PG_HOST}:{PG_PORT}/{name}")
    finally:
        asyncio.run(pg_admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


# ---- the command line and the server process --------------------------------------------------------


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
    if not database.is_sqlite:
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

    def start(self, *args: str, pause_at: str = "") -> Self:
        assert self.proc is None or self.proc.poll() is not None, "the previous process still runs"
        self.starts += 1
        self.log_path = self.workdir / f"serve-{self.starts}.log"
        with open(self.log_path, "wb") as log:
            self._launch(args, log, subprocess.STDOUT, {"EVIDENCE_PAUSE_AT": pause_at} if pause_at else {})
        return self

    def _launch(self, args: tuple[str, ...], stdout: IO[bytes], stderr: IO[bytes] | int, extra: dict[str, str]) -> None:
        if not self.database.is_sqlite:
            args = (*args, "--migrate")
        env = clean_env(self.database, **self.env, **extra)
        self.proc = start_serve(
            self.port, args, env=env, cwd=self.workdir, stdout=stdout, stderr=stderr, logs=self.logs
        )

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
class Node(Server):
    """The crash tests' ``Server`` (process group, /healthz wait), with the two streams in two files."""

    @property
    def stdout_path(self) -> Path:
        return self.workdir / f"serve-{self.port}.out"

    @property
    def stderr_path(self) -> Path:
        return self.workdir / f"serve-{self.port}.err"

    def start(self, *args: str, pause_at: str = "") -> Self:
        self.starts += 1
        with open(self.stdout_path, "wb") as out, open(self.stderr_path, "wb") as err:
            self._launch(args, out, err, {"EVIDENCE_PAUSE_AT": pause_at} if pause_at else {})
        return self

    def logs(self) -> str:
        return self.output()

    def output(self) -> str:
        return f"--- stdout ---\n{self.stdout()}\n--- stderr ---\n{self.stderr()[-6000:]}"

    def stdout(self) -> str:
        return self.stdout_path.read_text(errors="replace") if self.stdout_path.exists() else ""

    def stderr(self) -> str:
        return self.stderr_path.read_text(errors="replace") if self.stderr_path.exists() else ""

    def stop(self) -> None:
        """SIGTERM and wait: every log line is written once this returns."""
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=10)

    def log_lines(self) -> list[dict[str, Any]]:
        """Every stderr line, each of which must be one JSON object."""
        lines = []
        for line in self.stderr().splitlines():
            try:
                lines.append(json.loads(line))
            except json.JSONDecodeError:
                pytest.fail(f"a log line that is not JSON: {line!r}")
        return lines


# ---- a client of the served API -------------------------------------------------------------------


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
