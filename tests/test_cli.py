"""The command line as scripts use it, and the real server over a socket."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

CLI = [sys.executable, "-m", "evidence_gateway.cli"]


def run_cli(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=60, env=env, cwd=cwd, check=False)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_keys_create_prints_the_key_alone(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'cli.db'}"
    first = run_cli("keys", "create", "--org", "acme", "--database-url", url)
    second = run_cli("keys", "create", "--org", "acme", "--database-url", url)
    assert first.returncode == 0, first.stderr
    assert re.fullmatch(r"evk_[0-9a-f]{48}\n", first.stdout)
    assert first.stdout != second.stdout


def test_export_schema_prints_sdl() -> None:
    out = run_cli("export-schema")
    assert out.returncode == 0
    assert "type Query" in out.stdout and "createWorkspace" in out.stdout


@pytest.mark.slow
def test_serve_prints_demo_key_and_answers_over_a_socket(tmp_path: Path) -> None:
    port = free_port()
    env = {**os.environ, "EVIDENCE_DATABASE_URL": f"sqlite:///{tmp_path / 'srv.db'}"}
    proc = subprocess.Popen(
        [*CLI, "serve", "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    try:
        assert proc.stdout is not None
        key = None
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and key is None:
            line = proc.stdout.readline()
            match = re.search(r"evk_[0-9a-f]{48}", line)
            key = match.group(0) if match else None
        assert key, "serve did not print a demo key"
        base = f"http://127.0.0.1:{port}"
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{base}/healthz", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.1)
        headers = {"Authorization": f"Bearer {key}"}
        created = httpx.post(f"{base}/api/v2/workspaces", json={"name": "over a socket"}, headers=headers)
        assert created.status_code == 201
        listed = httpx.get(f"{base}/api/v2/workspaces", headers=headers).json()
        assert listed["data"][0]["name"] == "over a socket"
        gql = httpx.post(f"{base}/graphql", json={"query": "{ workspaces { pagination { total } } }"}, headers=headers)
        # Without EVIDENCE_PUBLIC_BASE_URL, the links the API hands out point at this server.
        wid = created.json()["data"]["id"]
        row = {"mode": "road", "distance_km": 100, "mass_tonnes": 2}
        imported = httpx.post(
            f"{base}/api/v2/workspaces/{wid}/imports", json={"source_row_count": 1, "shipments": [row]}, headers=headers
        )
        assert imported.status_code == 201
        assert httpx.post(f"{base}/api/v2/workspaces/{wid}/calculate", json={}, headers=headers).status_code == 200
        pack = httpx.post(f"{base}/api/v2/workspaces/{wid}/packs", json={}, headers=headers, timeout=30)
        artifacts = httpx.get(f"{base}/api/v2/packs/{pack.json()['data']['id']}/artifacts", headers=headers).json()
        link = artifacts["data"][0]["signed_download_url"]
        assert link.startswith(f"{base}/api/v2/artifacts/")
        download = httpx.get(link)  # no key: the signature is the credential
        assert download.status_code == 200
        assert download.content.startswith(b"%PDF")
        assert gql.json()["data"]["workspaces"]["pagination"]["total"] == 1
    finally:
        proc.terminate()
        proc.wait(timeout=15)
        if proc.stdout is not None:
            proc.stdout.close()
