"""Servers on a real socket, for clients that must speak to one: a real `evidence-gateway serve` in
a subprocess (the graphql-http audit in Node, a browser), started by serve_process.start_serve;
and an in-process app served by uvicorn (WebSocket clients)."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import uvicorn
from starlette.applications import Starlette

from tests.serve_process import free_port, start_serve
from tests.waiting import eventually

__all__ = ["LiveServer", "free_port", "served", "serving", "ws_served"]


@dataclass(frozen=True)
class LiveServer:
    base: str
    key: str
    log: Path


@asynccontextmanager
async def serving(directory: Path, env: dict[str, str] | None = None) -> AsyncIterator[LiveServer]:
    """A server on a fresh SQLite file in ``directory``: what a process adds over the in-process
    app is the socket, and the transport does not depend on the database."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    full_env = {
        **os.environ,
        "EVIDENCE_SECRET_KEY": "live-server-secret",
        # As a developer runs it (README, "Quick start"): GraphiQL on.
        "EVIDENCE_ENV": "development",
        "EVIDENCE_PUBLIC_BASE_URL": base,
        **(env or {}),
    }
    args = ["--log-level", "warning", "--database-url", f"sqlite+aiosqlite:///{directory / 'live.db'}"]
    log_path = directory / "serve.log"
    with log_path.open("w+") as log:
        # Blocks this loop until /healthz answers: nothing else runs on it meanwhile.
        proc = start_serve(
            port, args, env=full_env, cwd=directory, stdout=log, stderr=subprocess.STDOUT, logs=log_path.read_text
        )
        try:
            key = next(line.strip() for line in log_path.read_text().splitlines() if line.startswith("evk_"))
            yield LiveServer(base, key, log_path)
        finally:
            proc.terminate()
            proc.wait(timeout=10)


@asynccontextmanager
async def served(application: Starlette) -> AsyncIterator[str]:
    """The app (its lifespan already running) served by uvicorn on a free port: ``host:port``.
    For clients that need a real socket (WebSockets, generated clients)."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(application, lifespan="off", log_level="warning"))
    task = asyncio.create_task(server.serve(sockets=[sock]))
    try:
        await eventually(lambda: server.started or task.done(), "uvicorn to start")
        yield f"127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        await asyncio.wait_for(task, 15)
        sock.close()


@asynccontextmanager
async def ws_served(application: Starlette) -> AsyncIterator[str]:
    """The app on a free port for WebSocket clients: the GraphQL socket's URL."""
    async with served(application) as host_port:
        yield f"ws://{host_port}/graphql"
