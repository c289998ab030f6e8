"""The REST reference at /api/docs: Redoc from a pinned, verified copy; without it, how to fetch it."""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
import tarfile
from pathlib import Path

import httpx
import pytest
from starlette.applications import Starlette

from evidence_gateway.web import api_docs, graphiql
from tests.chromium import CHROMIUM, chromium
from tests.live_server import serving
from tests.waiting import until

HTML = {"Accept": "text/html"}
# Where `.ci/run` (or a developer) fetched Redoc: the server's own default, or the setting.
FETCHED = Path(os.environ.get("EVIDENCE_API_DOCS_ASSETS_DIR") or api_docs.DEFAULT_DIR)


def fake_assets(directory: Path) -> None:
    for name in api_docs.CONTENT_TYPES:
        (directory / name).parent.mkdir(parents=True, exist_ok=True)
        (directory / name).write_text(f"/* {name} */")


async def test_without_redoc_the_page_says_how_to_fetch_it(
    app: Starlette, client: httpx.AsyncClient, tmp_path: Path
) -> None:
    app.state.settings.api_docs_assets_dir = str(tmp_path / "absent")
    resp = await client.get("/api/docs", headers=HTML)
    assert resp.status_code == 503
    assert resp.headers["content-type"].startswith("text/html")
    assert "evidence-gateway api-docs-assets" in resp.text and 'href="openapi.json"' in resp.text
    assert "<script" not in resp.text  # nothing from anywhere else
    assert (await client.get(f"/api/docs/assets/{api_docs.SCRIPT}")).status_code == 404


async def test_with_redoc_the_page_loads_our_verified_copy(
    app: Starlette, client: httpx.AsyncClient, tmp_path: Path
) -> None:
    fake_assets(tmp_path)
    app.state.settings.api_docs_assets_dir = str(tmp_path)
    resp = await client.get("/api/docs", headers=HTML)
    assert resp.status_code == 200
    scripts = re.findall(r'<script src="([^"]+)" integrity="([^"]+)"', resp.text)
    assert scripts == [(f"docs/assets/{api_docs.SCRIPT}", api_docs.SCRIPT_SRI)]
    assert "https://" not in resp.text and "http://" not in resp.text
    # The page's relative URLs, resolved from /api/docs, reach the script and the OpenAPI document.
    base = httpx.URL("http://testserver/api/docs")
    script = await client.get(base.join(scripts[0][0]))
    assert script.status_code == 200 and script.text == f"/* {api_docs.SCRIPT} */"
    assert script.headers["content-type"] == "text/javascript; charset=utf-8"
    assert "immutable" in script.headers["cache-control"]
    assert 'Redoc.init("openapi.json"' in resp.text
    csp = resp.headers["content-security-policy"]
    assert "default-src 'none'" in csp and "connect-src 'self'" in csp and "img-src 'self' data:" in csp
    spec = await client.get(base.join("openapi.json"))
    assert spec.status_code == 200 and spec.json()["openapi"].startswith("3.1")


@pytest.mark.parametrize(
    "path",
    ["manifest.json", "../evidence.db", "%2e%2e/evidence.db", "redoc@2.5.4/bundles/redoc.js", "/etc/passwd"],
)
async def test_only_the_pinned_file_is_served(
    app: Starlette, client: httpx.AsyncClient, tmp_path: Path, path: str
) -> None:
    fake_assets(tmp_path)
    (tmp_path / "manifest.json").write_text("{}")
    app.state.settings.api_docs_assets_dir = str(tmp_path / "redoc@2.5.4")  # so ../ would reach real files
    resp = await client.get(f"/api/docs/assets/{path}")
    assert resp.status_code == 404


def test_a_tampered_redoc_is_refused(tmp_path: Path) -> None:
    tarball = tmp_path / "redoc.tgz"
    with tarfile.open(tarball, "w:gz") as archive:
        data = b"alert('not redoc')"
        info = tarfile.TarInfo(f"package/{api_docs.REDOC.files[0][0]}")
        info.size = len(data)
        archive.addfile(info, io.BytesIO(data))
    with pytest.raises(graphiql.AssetError, match="integrity"):
        graphiql._extract(api_docs.REDOC, tarball)
    trusted = graphiql.Package("redoc", "2.5.4", graphiql.sri("sha512", tarball.read_bytes()), api_docs.REDOC.files)
    with pytest.raises(graphiql.AssetError, match="differs"):
        graphiql._extract(trusted, tarball)


def test_a_fetched_copy_matches_the_pin() -> None:
    """Where the copy was fetched (CI runs `evidence-gateway api-docs-assets`), it is the pinned file."""
    directory = FETCHED
    if not api_docs.assets_present(directory):
        pytest.skip("Redoc not fetched: evidence-gateway api-docs-assets")
    assert graphiql.sri("sha384", (directory / api_docs.SCRIPT).read_bytes()) == api_docs.SCRIPT_SRI


def test_cli_without_npm_fails_clearly_and_installs_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from evidence_gateway.cli import main

    monkeypatch.setattr(graphiql.shutil, "which", lambda _name: None)
    assert main(["api-docs-assets", "--dir", str(tmp_path / "assets")]) == 1
    assert "npm not found" in capsys.readouterr().err
    assert not (tmp_path / "assets").exists()


@pytest.fixture
def redoc(tmp_path: Path) -> Path:
    """The fetched copy, else one fetched now (npm); skips where neither is possible."""
    if api_docs.assets_present(FETCHED):
        return FETCHED
    directory = tmp_path / "assets"
    cli = [sys.executable, "-m", "evidence_gateway.cli", "api-docs-assets", "--dir", str(directory)]
    proc = subprocess.run(cli, capture_output=True, text=True, timeout=600, check=False)  # noqa: S603
    if proc.returncode != 0:
        pytest.skip(f"could not fetch Redoc: {proc.stderr.strip()[-300:]}")
    return directory


RENDERED = "!!document.body && document.body.innerText.includes('Create a workspace (status draft)')"


@pytest.mark.slow
@pytest.mark.skipif(CHROMIUM is None, reason="Chromium not installed (Debian: apt-get install chromium)")
async def test_the_reference_renders_offline_in_a_browser(tmp_path: Path, redoc: Path) -> None:
    """A real server and headless Chromium with every other host unreachable: Redoc, from our
    verified copy, renders the operations of /api/openapi.json."""
    directory = redoc
    env = {"EVIDENCE_API_DOCS_ASSETS_DIR": str(directory.resolve())}
    async with serving(tmp_path, env) as server:
        with chromium(tmp_path / "profile") as browser:
            browser.send("Network.enable")
            browser.send("Page.navigate", url=f"{server.base}/api/docs")
            until(
                lambda: browser.js(
                    "!!document.body && document.body.innerText.includes('Create a workspace (status draft)')"
                ),
                "Redoc to render the operations",
                within=60,
            )
            assert browser.js("document.title") == "Evidence Gateway REST API reference"
            blocked = {
                e["params"]["requestId"]
                for e in browser.events
                if e.get("method") == "Network.loadingFailed" and e["params"].get("blockedReason") == "csp"
            }
            sent = {
                e["params"]["request"]["url"]
                for e in browser.events
                if e.get("method") == "Network.requestWillBeSent" and e["params"]["requestId"] not in blocked
            }
            # What went out went to our server; anything else the page's CSP stopped in the browser.
            assert f"{server.base}/api/openapi.json" in sent
            assert all(url.startswith((server.base, "blob:", "data:")) for url in sent), sent
