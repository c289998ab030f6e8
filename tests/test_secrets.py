"""The download-signing secret without EVIDENCE_SECRET_KEY (issue 14): generated once and kept
in the database, so every worker and node signs and verifies with the same one; nothing
secret is written to a file anyone else can read."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import httpx
import pytest
from starlette.applications import Starlette

from evidence_gateway.app import create_app
from evidence_gateway.settings import Settings
from tests.conftest import Api
from tests.test_cli import run_cli
from tests.test_downloads import artifacts_of


def _unset_secret(settings: Settings) -> Settings:
    return settings.model_copy(update={"secret_key": ""})


@asynccontextmanager
async def running(settings: Settings) -> AsyncIterator[tuple[Starlette, httpx.AsyncClient]]:
    app = create_app(settings)
    async with app.router.lifespan_context(app):
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://testserver") as c:
            yield app, c


async def test_two_processes_without_a_secret_key_share_one_generated_secret(
    app: Starlette, settings: Settings, key_a: str
) -> None:
    """Two apps on one database stand for two workers (or nodes): a link one signs, the other
    accepts; a link signed with another secret is refused."""
    async with running(_unset_secret(settings)) as (one, c1), running(_unset_secret(settings)) as (two, c2):
        secret = one.state.settings.secret_key
        assert secret and secret == two.state.settings.secret_key
        artifacts = await artifacts_of(Api(c1, key_a))
        link = artifacts["machine_json"]["signed_download_url"]
        assert (await c2.get(link)).status_code == 200
        tampered = link.replace("signature=", "signature=0")
        assert (await c2.get(tampered)).status_code == 403
    # A third start finds the same secret: links survive restarts.
    async with running(_unset_secret(settings)) as (three, _c3):
        assert three.state.settings.secret_key == secret


async def test_a_set_secret_key_wins(app: Starlette, settings: Settings) -> None:
    async with running(settings.model_copy(update={"secret_key": "from-the-environment"})) as (mine, _c):
        assert mine.state.settings.secret_key == "from-the-environment"


@pytest.mark.parametrize("source", ["app-start", "cli"])
def test_no_secret_file_and_a_private_database_file(tmp_path: Path, source: str) -> None:
    """SQLite: the database file itself holds the secrets; a new one is created mode 0600."""
    db = tmp_path / "fresh.db"
    done = run_cli("keys", "create", "--org", "acme", "--database-url", f"sqlite:///{db}", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert stat.S_IMODE(db.stat().st_mode) == 0o600
    if source == "app-start":
        # The app's start (what each serve worker runs) generates the secret into the database, not beside it.
        env = {k: v for k, v in os.environ.items() if not k.startswith("EVIDENCE_")}
        code = (
            "import asyncio\n"
            "from evidence_gateway.app import create_app\n"
            "from evidence_gateway.settings import Settings\n"
            f"app = create_app(Settings(database_url='sqlite:///{db}'))\n"
            "async def main():\n"
            "    async with app.router.lifespan_context(app):\n"
            "        print(len(app.state.settings.secret_key))\n"
            "asyncio.run(main())\n"
        )
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=tmp_path)
        assert out.stdout.strip() == "64", out.stderr
    leftovers = sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith("fresh.db"))
    assert leftovers == []
    for sidecar in tmp_path.glob("fresh.db*"):
        assert stat.S_IMODE(sidecar.stat().st_mode) & 0o077 == 0, sidecar
