"""CORS: pages of the origins in EVIDENCE_CORS_ORIGINS may call GraphQL and REST from a browser;
other origins may not. Headers checked in-process on both databases; then a real page on one
origin calling a real server on another, in headless Chromium."""

from __future__ import annotations

import http.server
import threading
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette

from evidence_gateway.app import create_app
from evidence_gateway.resolvers.organizations import create_api_key
from evidence_gateway.settings import Settings
from tests.chromium import CHROMIUM, chromium
from tests.live_server import LiveServer, free_port, serving, ws_served

ALLOWED = "https://app.example.com"


@pytest.fixture
async def cors_client(settings: Settings) -> AsyncIterator[tuple[httpx.AsyncClient, str]]:
    application: Starlette = create_app(
        settings.model_copy(update={"cors_origins": f"{ALLOWED}, http://localhost:5173"})
    )
    async with application.router.lifespan_context(application):
        key = await create_api_key(application.state.db, "org-cors")
        transport = httpx.ASGITransport(app=application)
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
            yield client, key


def preflight(origin: str, method: str = "POST") -> dict[str, str]:
    return {
        "Origin": origin,
        "Access-Control-Request-Method": method,
        "Access-Control-Request-Headers": ", ".join(
            ("authorization", "content-type", "idempotency-key", "if-match", "prefer", "x-request-id")
        ),
    }


@pytest.mark.parametrize("path", ["/graphql", "/api/v2/workspaces"])
async def test_preflight_from_an_allowed_origin_is_cached_and_names_the_headers(
    cors_client: tuple[httpx.AsyncClient, str], path: str
) -> None:
    client, _ = cors_client
    resp = await client.options(path, headers=preflight(ALLOWED))
    assert resp.status_code == 200
    assert resp.headers["access-control-allow-origin"] == ALLOWED
    assert int(resp.headers["access-control-max-age"]) >= 3600
    allowed = {h.strip().lower() for h in resp.headers["access-control-allow-headers"].split(",")}
    assert {"authorization", "content-type", "idempotency-key", "if-match", "prefer", "x-request-id"} <= allowed
    assert "POST" in resp.headers["access-control-allow-methods"]


# What browser clients add on their own: W3C trace context (OpenTelemetry's fetch instrumentation),
# conditional requests, Apollo Client's client headers.
CLIENT_HEADERS = (
    "traceparent",
    "tracestate",
    "baggage",
    "if-none-match",
    "if-match",
    "idempotency-key",
    "prefer",
    "accept",
    "apollographql-client-name",
    "apollographql-client-version",
)


def preflight_with(origin: str, *headers: str) -> dict[str, str]:
    return {
        "Origin": origin,
        "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": ", ".join(headers),
    }


@pytest.mark.parametrize("path", ["/graphql", "/api/v2/workspaces"])
async def test_preflights_with_tracing_conditional_and_apollo_headers_are_granted(
    cors_client: tuple[httpx.AsyncClient, str], path: str
) -> None:
    client, _ = cors_client
    for header in CLIENT_HEADERS:  # one at a time: a preflight with one header not allowed is a 400
        resp = await client.options(path, headers=preflight_with(ALLOWED, "authorization", "content-type", header))
        assert resp.status_code == 200, (header, resp.text)
        assert resp.headers["access-control-allow-origin"] == ALLOWED
        allowed = {h.strip().lower() for h in resp.headers["access-control-allow-headers"].split(",")}
        assert header in allowed


async def test_a_header_outside_the_list_is_refused_until_the_setting_adds_it(settings: Settings) -> None:
    async def preflight_status(cors_settings: Settings) -> int:
        application = create_app(cors_settings)
        async with application.router.lifespan_context(application):
            transport = httpx.ASGITransport(app=application)
            async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
                resp = await client.options("/graphql", headers=preflight_with(ALLOWED, "x-tenant", "traceparent"))
                return resp.status_code

    assert await preflight_status(settings.model_copy(update={"cors_origins": ALLOWED})) == 400
    added = settings.model_copy(update={"cors_origins": ALLOWED, "cors_allow_headers": "X-Tenant, Sentry-Trace"})
    assert await preflight_status(added) == 200


def test_allow_headers_setting_refuses_what_is_not_a_header_name() -> None:
    with pytest.raises(ValueError, match="not an HTTP header name"):
        Settings(cors_allow_headers="X-Tenant, x tenant")
    assert Settings(cors_allow_headers=" X-Tenant ,, Sentry-Trace").cors_allow_header_list() == [
        "X-Tenant",
        "Sentry-Trace",
    ]


async def test_other_origins_get_no_grant(cors_client: tuple[httpx.AsyncClient, str]) -> None:
    client, key = cors_client
    resp = await client.options("/graphql", headers=preflight("https://evil.example"))
    assert resp.status_code == 400 and "access-control-allow-origin" not in resp.headers
    simple = await client.get(
        "/api/v2/workspaces", headers={"Origin": "https://evil.example", "Authorization": f"Bearer {key}"}
    )
    assert "access-control-allow-origin" not in simple.headers


async def test_responses_expose_the_headers_a_browser_app_reads(cors_client: tuple[httpx.AsyncClient, str]) -> None:
    client, key = cors_client
    headers = {"Origin": ALLOWED, "Authorization": f"Bearer {key}"}
    for resp in (
        await client.post("/graphql", json={"query": "{ workspaces { pagination { total } } }"}, headers=headers),
        await client.post("/api/v2/workspaces", json={"name": "x"}, headers={**headers, "Idempotency-Key": "k-1"}),
        await client.get("/api/v2/workspaces", headers={"Origin": ALLOWED}),  # a refusal carries them too
    ):
        assert resp.headers["access-control-allow-origin"] == ALLOWED
        exposed = {h.strip().lower() for h in resp.headers["access-control-expose-headers"].split(",")}
        expected = {"x-request-id", "ratelimit", "ratelimit-policy", "retry-after", "deprecation", "link", "etag"}
        assert expected | {"location", "idempotent-replayed", "preference-applied", "content-disposition"} <= exposed


async def test_no_origin_is_allowed_by_default(client: httpx.AsyncClient) -> None:
    resp = await client.options("/graphql", headers=preflight(ALLOWED))
    assert "access-control-allow-origin" not in resp.headers


def test_origins_setting_refuses_a_url_with_a_path() -> None:
    with pytest.raises(ValueError, match="without a path"):
        Settings(cors_origins="https://app.example.com/")


# -- a real browser -----------------------------------------------------------------------------


@pytest.fixture
def page_origin() -> Iterator[int]:
    """A static page server: the page's origin is http://<host>:<port> of this, not of the API."""

    class Blank(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = b"<!doctype html><title>app</title><p>app"
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *_args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", free_port()), Blank)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


FETCH = """
fetch(%(url)s, {method: "POST", headers: %(headers)s, body: %(body)s})
  .then(async r => ({ok: true, status: r.status, body: await r.json(),
                     requestId: r.headers.get("X-Request-ID"), location: r.headers.get("Location")}))
  .catch(e => ({ok: false, error: String(e)}))
"""


def browser_post(browser: Any, url: str, key: str, body: str, extra: dict[str, str] | None = None) -> Any:
    import json

    headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json", **(extra or {})}
    return browser.js(FETCH % {"url": json.dumps(url), "headers": json.dumps(headers), "body": json.dumps(body)})


@pytest.mark.slow
@pytest.mark.skipif(CHROMIUM is None, reason="Chromium not installed (Debian: apt-get install chromium)")
async def test_a_page_on_an_allowed_origin_calls_the_api_and_others_cannot(page_origin: int, tmp_path: Path) -> None:
    allowed = f"http://127.0.0.1:{page_origin}"
    async with serving(tmp_path, {"EVIDENCE_CORS_ORIGINS": allowed}) as server:
        run(server, allowed, f"http://localhost:{page_origin}", tmp_path)


def run(server: LiveServer, allowed: str, other: str, tmp_path: Path) -> None:
    query = '{"query": "{ workspaces { pagination { total } } }"}'
    with chromium(tmp_path / "profile", reachable=("127.0.0.1", "localhost")) as browser:
        browser.send("Page.enable")
        browser.send("Page.navigate", url=f"{allowed}/")
        browser.js("new Promise(r => document.readyState === 'complete' ? r(1) : addEventListener('load', r))")
        assert browser.js("location.origin") == allowed

        graphql = browser_post(browser, f"{server.base}/graphql", server.key, query)
        assert graphql["ok"], graphql
        assert graphql["body"]["data"]["workspaces"]["pagination"]["total"] == 0
        assert graphql["requestId"]  # exposed to the page's script

        created = browser_post(
            browser,
            f"{server.base}/api/v2/workspaces",
            server.key,
            '{"name": "from a browser"}',
            {"Idempotency-Key": "b-1"},
        )
        assert created["ok"] and created["status"] == 201, created
        assert created["location"].endswith(created["body"]["data"]["id"])

        # What OpenTelemetry's fetch instrumentation adds to a cross-origin call: the preflight
        # must grant it, or the browser never sends the request.
        traced = browser_post(
            browser,
            f"{server.base}/graphql",
            server.key,
            query,
            {
                "traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
                "tracestate": "vendor=x",
                "apollographql-client-name": "web",
            },
        )
        assert traced["ok"] and traced["status"] == 200, traced
        assert traced["body"]["data"]["workspaces"]["pagination"]["total"] == 1

        browser.send("Page.navigate", url=f"{other}/")
        browser.js("new Promise(r => document.readyState === 'complete' ? r(1) : addEventListener('load', r))")
        assert browser.js("location.origin") == other
        refused = browser_post(browser, f"{server.base}/graphql", server.key, query)
        assert refused == {"ok": False, "error": "TypeError: Failed to fetch"}


async def test_pages_of_allowed_origins_may_open_the_subscription_socket(settings: Settings, app: Starlette) -> None:
    from websockets.asyncio.client import connect
    from websockets.exceptions import InvalidStatus

    allowed = create_app(settings.model_copy(update={"cors_origins": ALLOWED}))
    async with allowed.router.lifespan_context(allowed), ws_served(allowed) as url:
        async with connect(url, origin=ALLOWED, subprotocols=["graphql-transport-ws"]) as ws:  # type: ignore[list-item]
            assert ws.subprotocol == "graphql-transport-ws"
        with pytest.raises(InvalidStatus) as refused:
            async with connect(url, origin="https://evil.example", subprotocols=["graphql-transport-ws"]):  # type: ignore[list-item]
                pass
        assert refused.value.response.status_code == 403
