"""The release as an operator gets it (issue 31): the wheel built exactly as the Dockerfile
builds it, installed in a clean virtual environment, and the README's production shape run from
it against PostgreSQL and Redis; and the image itself where a Docker daemon answers.

The wheels of the dependencies are kept between runs (pytest's cache directory), so a run costs
the project's wheel, an install from local files and the flow itself.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from evidence_gateway import __version__
from evidence_gateway.store import migrate
from tests.conftest import PG_AVAILABLE, PG_HOST, PG_PORT, PG_USER
from tests.dockerfile import parse
from tests.serve_process import free_port, pg_admin
from tests.test_container import wheel_command
from tests.waiting import until

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parent.parent
# What the Dockerfile's builder copies (and .dockerignore lets through).
CONTEXT = ("pyproject.toml", "README.md", "LICENSE", "evidence_gateway")
STARTUP_SECONDS = 180.0


def run(cmd: list[str], *, env: dict[str, str], cwd: Path, timeout: float = 300) -> str:
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=cwd, timeout=timeout, check=False)
    assert done.returncode == 0, f"{cmd}: exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    return done.stdout


def outside_env(**extra: str) -> dict[str, str]:
    """The environment of a fresh shell: no EVIDENCE_* setting and no path to this checkout."""
    env = {
        k: v for k, v in os.environ.items() if not k.startswith("EVIDENCE_") and k not in ("PYTHONPATH", "VIRTUAL_ENV")
    }
    env.update(PYTHONUNBUFFERED="1", **extra)
    return env


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> Path:
    """The ``bin`` directory of a clean virtual environment holding the wheel and its dependencies."""
    wheels = Path(request.config.cache.mkdir("container-wheels"))
    for old in wheels.glob("evidence_gateway-*.whl"):
        old.unlink()  # the project's own wheel is always built anew
    context = tmp_path_factory.mktemp("build-context")
    for name in CONTEXT:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, context / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(source, context / name)
    words = wheel_command(parse(ROOT / "Dockerfile"))
    command = [sys.executable, "-m", *[str(wheels) if w == "/wheels" else w for w in words]]
    run(command, env=outside_env(), cwd=context)
    (wheel,) = wheels.glob("evidence_gateway-*.whl")
    assert wheel.name == f"evidence_gateway-{__version__}-py3-none-any.whl"

    venv = tmp_path_factory.mktemp("clean") / "venv"
    run([sys.executable, "-m", "venv", "--without-pip", str(venv)], env=outside_env(), cwd=context)
    # As the runtime stage installs it: from the wheel files alone, nothing from an index.
    install = ["install", "-q", "--no-compile", "--no-index", "--find-links", str(wheels), "evidence-gateway"]
    run(
        [sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), *install],
        env=outside_env(),
        cwd=context,
    )
    return venv / "bin"


@pytest.fixture
def pg_url() -> Iterator[str]:
    if not PG_AVAILABLE:
        pytest.skip(f"no PostgreSQL on {PG_HOST}:{PG_PORT}")
    name = f"evidence_release_{uuid.uuid4().hex[:12]}"
    asyncio.run(pg_admin(f'CREATE DATABASE "{name}"'))
    try:
        yield f"postgresql://{PG_USER}@{PG_HOST}:{PG_PORT}/{name}"
    finally:
        asyncio.run(pg_admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


@pytest.fixture
def redis_url(tmp_path: Path) -> Iterator[str | None]:
    """A private redis-server on a free port, or None (with the reason kept) where there is none."""
    binary = shutil.which("redis-server")
    if binary is None:
        yield None
        return
    port = free_port()
    proc = subprocess.Popen(
        [
            binary,
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            str(tmp_path),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        until(lambda: _redis_ping(port), f"redis-server on port {port}")
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def _redis_ping(port: int) -> bool:
    cli = shutil.which("redis-cli")
    if cli is None:
        return True
    done = subprocess.run([cli, "-p", str(port), "ping"], capture_output=True, text=True, check=False)
    return done.stdout.strip() == "PONG"


class Process:
    """A long-running command of the installed release, its output in a file."""

    def __init__(self, cmd: list[str], *, env: dict[str, str], cwd: Path, log: Path) -> None:
        self.log = log
        self._out = log.open("w")
        self.proc = subprocess.Popen(
            cmd, stdout=self._out, stderr=subprocess.STDOUT, env=env, cwd=cwd, start_new_session=True
        )

    def output(self) -> str:
        return self.log.read_text()

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=10)
        self._out.close()


def test_the_readme_flow_from_the_wheel(installed: Path, pg_url: str, redis_url: str | None, tmp_path: Path) -> None:
    cli = str(installed / "evidence-gateway")
    head = migrate.head()
    env = outside_env(EVIDENCE_DATABASE_URL=pg_url)
    assert run([cli, "--version"], env=env, cwd=tmp_path) == f"evidence-gateway {__version__} (schema {head})\n"
    assert run([cli, "db", "upgrade"], env=env, cwd=tmp_path).strip().startswith(head)
    key = run([cli, "keys", "create", "--org", "acme"], env=env, cwd=tmp_path).strip()
    assert re.fullmatch(r"evk_[0-9a-f]{48}", key)

    port = free_port()
    node_env = {
        **env,
        "EVIDENCE_BACKGROUND_WORK": "false",
        "EVIDENCE_TRUSTED_PROXIES": "127.0.0.1",
        "EVIDENCE_PUBLIC_BASE_URL": f"http://127.0.0.1:{port}",
    }
    if redis_url:
        node_env["EVIDENCE_REDIS_URL"] = redis_url
    node = Process(
        [cli, "serve", "--port", str(port), "--no-dispatcher"], env=node_env, cwd=tmp_path, log=tmp_path / "node.log"
    )
    worker = Process([cli, "worker"], env=env, cwd=tmp_path, log=tmp_path / "worker.log")
    base = f"http://127.0.0.1:{port}"
    try:
        ready = until(lambda: _ready(base), "the node's /readyz", STARTUP_SECONDS, node.output)
        assert ready["version"] == __version__ and ready["schema_revision"] == head
        assert "background_work" not in ready["checks"], "the node leaves background work to the worker"

        headers = {"Authorization": f"Bearer {key}", "X-Forwarded-For": "203.0.113.7"}
        with httpx.Client(base_url=base, headers=headers, timeout=60) as client:
            workspace = client.post("/api/v2/workspaces", json={"name": "EU road 2025"})
            assert workspace.status_code == 201, workspace.text
            ws = workspace.json()["data"]["id"]
            rows = (ROOT / "examples" / "q1-2026-import.json").read_bytes()
            imported = client.post(
                f"/api/v2/workspaces/{ws}/imports", content=rows, headers={"Content-Type": "application/json"}
            )
            assert imported.status_code == 201, imported.text
            queued = client.post(f"/api/v2/workspaces/{ws}/calculate", headers={"Prefer": "respond-async"}, json={})
            assert queued.status_code == 202, queued.text
            location = queued.headers["Location"]

            def finished() -> dict[str, object] | None:
                found = client.get(location).json()["data"]
                return found if found["status"] not in ("queued", "running") else None

            # Only the worker runs queued work here: its completion proves the worker is at work.
            done = until(finished, "the worker to run the queued calculation", STARTUP_SECONDS, worker.output)
            assert done["status"] == "completed", done
        until(
            lambda: '"client":"203.0.113.7"' in node.output(), "the proxied client in the access log", 30, node.output
        )
        if redis_url:
            port_of = redis_url.rsplit(":", 1)[1].split("/")[0]
            keys = subprocess.run(["redis-cli", "-p", port_of, "--scan"], capture_output=True, text=True, check=False)
            assert keys.stdout.strip(), "the node counts its rate limits in Redis"
    finally:
        node.stop()
        worker.stop()
    if redis_url is None:
        pytest.skip("the flow passed without Redis: no redis-server on this machine (apt-get install redis-server)")


def _ready(base: str) -> dict[str, object] | None:
    try:
        answer = httpx.get(f"{base}/readyz", timeout=2)
    except httpx.TransportError:
        return None
    return answer.json() if answer.status_code == 200 else None  # type: ignore[no-any-return]


def _daemon_refusal() -> str | None:
    """Why no image can be built here, or None when a Docker daemon answers."""
    docker = shutil.which("docker")
    if docker is None:
        return "no docker client on this machine"
    done = subprocess.run(
        [docker, "info", "--format", "{{json .ServerVersion}}"], capture_output=True, text=True, timeout=30, check=False
    )
    if done.returncode != 0:
        lines = (done.stderr or done.stdout).strip().splitlines()
        return f"no Docker daemon answers: {lines[-1] if lines else 'docker info failed'}"
    return None


def test_the_image_builds_and_becomes_healthy(tmp_path: Path) -> None:
    refusal = _daemon_refusal()
    if refusal:
        pytest.skip(refusal)
    tag = f"evidence-gateway:test-{uuid.uuid4().hex[:8]}"
    env = {**os.environ, "DOCKER_BUILDKIT": "1"}
    run(["docker", "build", "-t", tag, str(ROOT)], env=env, cwd=ROOT, timeout=1800)
    name = f"evidence-gateway-test-{uuid.uuid4().hex[:8]}"
    try:
        assert run(["docker", "run", "--rm", tag, "--version"], env=env, cwd=ROOT).startswith(
            f"evidence-gateway {__version__} "
        )
        user = run(["docker", "run", "--rm", "--entrypoint", "id", tag, "-u"], env=env, cwd=ROOT).strip()
        assert user != "0"
        run(["docker", "run", "-d", "--name", name, tag], env=env, cwd=ROOT)

        def health() -> str | None:
            state = run(["docker", "inspect", "--format", "{{json .State.Health.Status}}", name], env=env, cwd=ROOT)
            status = json.loads(state)
            return status if status in ("healthy", "unhealthy") else None

        assert until(health, "the image's HEALTHCHECK", STARTUP_SECONDS) == "healthy"
        ready = run(
            [
                "docker",
                "exec",
                name,
                "python",
                "-c",
                "import urllib.request; print(urllib.request.urlopen('http://127.0.0.1:8000/readyz').read().decode())",
            ],
            env=env,
            cwd=ROOT,
        )
        assert json.loads(ready)["version"] == __version__
    finally:
        subprocess.run(["docker", "rm", "-f", name], capture_output=True, check=False)
        subprocess.run(["docker", "rmi", "-f", tag], capture_output=True, check=False)
