"""GraphiQL in a real browser, served only by us: headless Chromium with every other host unreachable
loads /graphql from a real `evidence-gateway serve`, runs a query with a key, and shows the result.

Driven over the Chrome DevTools Protocol (websocket). Skipped where Chromium is absent, or where
the GraphiQL assets are neither cached nor fetchable (no npm). `.ci/run` provides both.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from evidence_gateway.web import graphiql
from tests.chromium import CHROMIUM, Browser, chromium
from tests.live_server import serving
from tests.waiting import until

REPO = Path(__file__).resolve().parent.parent
CACHED_ASSETS = Path(os.environ.get("EVIDENCE_GRAPHIQL_ASSETS_DIR") or REPO / graphiql.DEFAULT_DIR)

HEADERS_EDITOR = ".graphiql-editor-tool .graphiql-editor:not(.hidden) .CodeMirror"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(CHROMIUM is None, reason="Chromium not installed (Debian: apt-get install chromium)"),
    pytest.mark.skipif(
        not graphiql.assets_present(CACHED_ASSETS) and shutil.which("npm") is None,
        reason="GraphiQL assets not cached and npm absent to fetch them",
    ),
]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait(predicate: Any, timeout: float, what: str) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.fixture(scope="module")
def assets(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if graphiql.assets_present(CACHED_ASSETS):
        return CACHED_ASSETS
    target = tmp_path_factory.mktemp("assets")
    cli = [sys.executable, "-m", "evidence_gateway.cli", "graphiql-assets", "--dir", str(target)]
    proc = subprocess.run(cli, capture_output=True, text=True, timeout=600, check=False)
    if proc.returncode != 0:
        pytest.skip(f"could not fetch GraphiQL assets: {proc.stderr.strip()[-300:]}")
    return target


@dataclass
class Server:
    base: str
    key: str


@pytest.fixture(scope="module")
def server(assets: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    tmp = tmp_path_factory.mktemp("serve")
    port = _free_port()
    env = {
        **os.environ,
        "EVIDENCE_GRAPHIQL_ASSETS_DIR": str(assets),
        # GraphiQL is a development aid: off in production (README, "Quick start").
        "EVIDENCE_ENV": "development",
        "EVIDENCE_SECRET_KEY": "browser-test-secret",
        "EVIDENCE_PUBLIC_BASE_URL": f"http://127.0.0.1:{port}",
    }
    cmd = [sys.executable, "-m", "evidence_gateway.cli", "serve", "--port", str(port), "--log-level", "warning"]
    cmd += ["--database-url", f"sqlite+aiosqlite:///{tmp / 'browser.db'}"]
    log = (tmp / "serve.log").open("w+")
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=tmp)
    base = f"http://127.0.0.1:{port}"

    def ready() -> bool:
        try:
            return httpx.get(f"{base}/healthz", timeout=1).status_code == 200
        except httpx.HTTPError:
            return False

    try:
        _wait(ready, 30, "the server")
        log.seek(0)
        key = next(line.strip() for line in log if line.startswith("evk_"))
        yield Server(base, key)
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        log.close()


@pytest.fixture
def browser(tmp_path: Path) -> Iterator[Browser]:
    with chromium(tmp_path / "profile") as launched:
        yield launched


def test_graphiql_runs_a_query_offline_with_the_key_in_the_headers_pane(
    server: Server, browser: Browser, tmp_path: Path
) -> None:
    created = httpx.post(
        f"{server.base}/api/v2/workspaces",
        json={"name": "Browser-visible workspace"},
        headers={"Authorization": f"Bearer {server.key}"},
    )
    assert created.status_code == 201, created.text

    browser.send("Network.enable")
    browser.send("Page.enable")
    query = "{ workspaces { items { name status } pagination { total } } }"
    headers = json.dumps({"Authorization": f"Bearer {server.key}"})
    url = f"{server.base}/graphql?q=" + urllib.parse.quote(query, safe="")  # the page decodes %20, not +
    browser.send("Page.navigate", url=url)

    # GraphiQL rendered from our assets: its editors exist.
    _wait(lambda: browser.js("!!document.querySelector('.graphiql-query-editor .CodeMirror')"), 30, "GraphiQL")

    # Paste the key into the Headers pane, as a user would.
    browser.js("[...document.querySelectorAll('button')].find(b => b.textContent.trim() === 'Headers').click()")
    _wait(
        lambda: browser.js(
            "!!document.querySelector('.graphiql-editor-tool .graphiql-editor:not(.hidden) .CodeMirror')"
        ),
        10,
        "the headers editor",
    )
    placeholder = browser.js(f"document.querySelector({HEADERS_EDITOR!r}).CodeMirror.getValue()")
    assert json.loads(placeholder) == {"Authorization": "Bearer evk_..."}  # a fresh tab shows where the key goes
    browser.js(f"document.querySelector({HEADERS_EDITOR!r}).CodeMirror.setValue({json.dumps(headers)})")
    browser.js("document.querySelector('.graphiql-execute-button').click()")

    def result() -> str:
        text = browser.js(
            "(() => { const el = document.querySelector('.graphiql-response .CodeMirror');"
            " return el ? el.CodeMirror.getValue() : ''; })()"
        )
        return str(text or "")

    shot = tmp_path / "graphiql.png"
    try:
        shown = _wait(lambda: "Browser-visible workspace" in result() and result(), 30, "the query result")
    finally:
        shot.write_bytes(base64.b64decode(browser.send("Page.captureScreenshot", format="png")["data"]))
        print(f"screenshot: {shot}; response pane: {result()[:300]!r}")
    assert json.loads(shown)["data"]["workspaces"]["pagination"]["total"] == 1
    assert shot.stat().st_size > 10_000

    requested = [
        e["params"]["request"]["url"] for e in browser.events if e.get("method") == "Network.requestWillBeSent"
    ]
    foreign = [u for u in requested if not u.startswith((server.base, "data:", "about:"))]
    assert not foreign, f"the page reached beyond our server: {foreign}"
    assert any("/graphql/assets/graphiql@" in u for u in requested)


async def test_without_assets_or_cdn_the_page_says_how_to_fix_it(tmp_path: Path) -> None:
    """No local copies and no route to the CDN: the page names the command instead of "Loading..."."""
    empty = tmp_path / "no-assets"
    empty.mkdir()
    async with serving(tmp_path, {"EVIDENCE_GRAPHIQL_ASSETS_DIR": str(empty)}) as live:
        with chromium(tmp_path / "profile") as page:
            page.send("Page.enable")
            page.send("Page.navigate", url=f"{live.base}/graphql")
            shown = until(
                lambda: page.js(
                    "(() => { const el = document.getElementById('graphiql-load-failure');"
                    " return el ? el.textContent : ''; })()"
                ),
                "the load-failure explanation",
            )
            assert "evidence-gateway graphiql-assets" in shown
            assert "https://unpkg.com/graphiql@" in shown  # names what failed
            assert "Loading..." not in page.js("document.body.innerText")
