"""The edge: which address a request comes from (trusted proxies only), deadlines and caps on slow
clients (real sockets against `serve`), /metrics' token, and production's GraphQL defaults."""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette

from evidence_gateway.app import create_app
from evidence_gateway.resolvers.organizations import create_api_key
from evidence_gateway.settings import Settings
from tests.conftest import Api
from tests.serve_process import Database, Node
from tests.waiting import until

WINDOW = 3600
DEVELOPMENT_AIDS = ("graphiql", "graphql_anonymous_introspection", "graphql_suggestions")


@asynccontextmanager
async def started(settings: Settings, **changes: Any) -> AsyncIterator[Api]:
    """An app on the test's database built from ``changes`` as the environment would give them:
    the development aids left unset unless ``changes`` name them."""
    fields = settings.model_dump(exclude=set(DEVELOPMENT_AIDS))
    application = create_app(Settings(**{**fields, **changes}))
    async with application.router.lifespan_context(application):
        key = await create_api_key(application.state.db, "org-edge")
        transport = httpx.ASGITransport(app=application)
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as http:
            yield Api(http, key)


# ---- the client's address ----------------------------------------------------------------------


def _keyless(api: Api, forwarded: dict[str, str]) -> Any:
    return api.get("/api/openapi.json", key=None, headers=forwarded)


async def test_forwarding_headers_are_ignored_unless_the_peer_is_a_trusted_proxy(
    settings: Settings, app: Starlette
) -> None:
    # The test client's peer is 127.0.0.1: loopback is not trusted unless listed.
    async with started(settings, rate_limit_per_address=2, rate_limit_window_seconds=WINDOW) as api:
        codes = [(await _keyless(api, {"X-Forwarded-For": f"203.0.113.{n}"})).status_code for n in range(3)]
        assert codes == [200, 200, 429]
    async with started(
        settings, rate_limit_per_address=2, rate_limit_window_seconds=WINDOW, trusted_proxies="10.0.0.0/8, 127.0.0.1"
    ) as api:
        one, other = {"X-Forwarded-For": "203.0.113.1"}, {"X-Forwarded-For": "203.0.113.2"}
        assert [(await _keyless(api, one)).status_code for _ in range(2)] == [200, 200]
        assert (await _keyless(api, other)).status_code == 200  # another client: a budget of its own
        # What the client wrote itself (left of the proxies' entries) changes nothing.
        spoofed = {"X-Forwarded-For": "198.51.100.7, 203.0.113.1, 10.1.1.1"}
        assert (await _keyless(api, spoofed)).status_code == 429
        assert (await _keyless(api, {"X-Forwarded-For": "198.51.100.7, 203.0.113.1"})).status_code == 429
        # Forwarded is not the configured header: it is ignored, so this is the proxy's own budget.
        assert (await _keyless(api, {"Forwarded": "for=198.51.100.9"})).status_code == 200


async def test_the_forwarded_header_when_it_is_the_one_configured(settings: Settings, app: Starlette) -> None:
    async with started(
        settings,
        rate_limit_per_address=1,
        rate_limit_window_seconds=WINDOW,
        trusted_proxies="127.0.0.1",
        trusted_proxy_header="forwarded",
    ) as api:
        first = {"Forwarded": 'for="[2001:db8:cafe::17]:4711";proto=https'}
        assert (await _keyless(api, first)).status_code == 200
        assert (await _keyless(api, {"Forwarded": "for=192.0.2.60, for=[2001:db8:cafe::17]"})).status_code == 429
        assert (await _keyless(api, {"Forwarded": "for=192.0.2.60"})).status_code == 200
        # X-Forwarded-For is not read now: the proxy's own address, a budget still unspent.
        assert (await _keyless(api, {"X-Forwarded-For": "192.0.2.60"})).status_code == 200


def test_an_unparseable_trusted_proxy_list_is_refused() -> None:
    with pytest.raises(ValueError, match="not-an-address"):
        Settings(trusted_proxies="10.0.0.0/8,not-an-address")
    with pytest.raises(ValueError, match="x-forwarded-for"):
        Settings(trusted_proxy_header="x-real-ip")


# ---- `serve`: real sockets ------------------------------------------------------------------------


@contextmanager
def serving(tmp_path: Path, *args: str, **env: str) -> Iterator[Node]:
    path = tmp_path / "edge.db"
    node = Node(Database(f"sqlite+aiosqlite:///{path}", sqlite_path=path), tmp_path, env=env).start(*args)
    try:
        yield node
    finally:
        node.stop()


def _raw(node: Node, data: bytes, source: str = "127.0.0.1") -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", node.port), timeout=60, source_address=(source, 0))
    if data:
        sock.sendall(data)
    return sock


def _read_all(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection (then this side closes too)."""
    chunks = []
    with sock:
        try:
            while chunk := sock.recv(65536):
                chunks.append(chunk)
        except ConnectionResetError:
            pass
    return b"".join(chunks)


def test_serve_ignores_forwarding_headers_from_loopback_unless_trusted(tmp_path: Path) -> None:
    limits = {"EVIDENCE_RATE_LIMIT_PER_ADDRESS": "2", "EVIDENCE_RATE_LIMIT_WINDOW_SECONDS": str(WINDOW)}
    (tmp_path / "default").mkdir()
    with serving(tmp_path / "default", **limits) as node:
        codes = [
            httpx.get(f"{node.base}/api/openapi.json", headers={"X-Forwarded-For": f"203.0.113.{n}"}, timeout=10)
            for n in range(3)
        ]
        assert [r.status_code for r in codes] == [200, 200, 429]
    (tmp_path / "trusted").mkdir()
    with serving(tmp_path / "trusted", EVIDENCE_TRUSTED_PROXIES="127.0.0.1", **limits) as node:
        codes = [
            httpx.get(f"{node.base}/api/openapi.json", headers={"X-Forwarded-For": f"203.0.113.{n}"}, timeout=10)
            for n in range(3)
        ]
        assert [r.status_code for r in codes] == [200, 200, 200]


def test_slow_headers_and_bodies_are_cut_off(tmp_path: Path) -> None:
    with serving(
        tmp_path, EVIDENCE_HEADER_TIMEOUT_SECONDS="1", EVIDENCE_BODY_TIMEOUT_SECONDS="1", EVIDENCE_ENV="development"
    ) as node:
        key = next(line for line in node.stdout().splitlines() if line.startswith("evk_"))
        # Half a request line, then nothing: 408, and the connection is closed.
        answer = _read_all(_raw(node, b"GET /healthz HT"))
        assert answer.startswith(b"HTTP/1.1 408 "), answer
        assert answer.endswith(b"request headers not received in time\r\n")
        # A connection that sends nothing at all is closed too.
        assert _read_all(_raw(node, b"")) == b""
        # Headers complete, the body withheld: 408 in the transport's own error shape.
        for path, shape in ((b"/api/v2/workspaces", b'"code":"request_timeout"'), (b"/graphql", b"REQUEST_TIMEOUT")):
            head = (
                b"POST " + path + b" HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                b"Authorization: Bearer " + key.encode() + b"\r\nContent-Length: 100\r\n\r\n{"
            )
            answer = _read_all(_raw(node, head))
            assert answer.startswith(b"HTTP/1.1 408 "), answer
            assert b"connection: close" in answer.lower() and shape in answer
        # Nothing was created by the cut-off request; a prompt client is served as ever.
        listed = httpx.get(f"{node.base}/api/v2/workspaces", headers={"Authorization": f"Bearer {key}"}, timeout=10)
        assert listed.status_code == 200 and listed.json()["data"] == []


def test_connections_are_capped_per_address_and_in_all(tmp_path: Path) -> None:
    env = {
        "EVIDENCE_MAX_CONNECTIONS_PER_ADDRESS": "3",
        "EVIDENCE_MAX_CONNECTIONS": "7",
        "EVIDENCE_TRUSTED_PROXIES": "127.0.0.4",
        "EVIDENCE_KEEP_ALIVE_SECONDS": "120",
        "EVIDENCE_HEADER_TIMEOUT_SECONDS": "120",
    }
    request = b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
    held: list[socket.socket] = []

    def hold(source: str) -> None:
        """A connection from ``source`` whose request was answered 200, kept open (keep-alive)."""
        sock = _raw(node, request, source=source)
        held.append(sock)
        assert sock.recv(65536).startswith(b"HTTP/1.1 200 ")

    with serving(tmp_path, **env) as node:
        try:
            for _ in range(3):
                hold("127.0.0.1")
            assert _read_all(_raw(node, request)) == b""  # the fourth from this address: closed unanswered
            held.pop().close()

            def a_fourth_is_served() -> bool:
                try:
                    return httpx.get(f"{node.base}/healthz", timeout=10).status_code == 200
                except httpx.TransportError:
                    return False

            until(a_fourth_is_served, "a connection once another one from the address closed", logs=node.output)
            hold("127.0.0.1")
            for _ in range(4):  # a trusted proxy carries many clients: not capped per address
                hold("127.0.0.4")
            # Seven held: the server's whole budget. The next request, from anywhere, is 503.
            late = _raw(node, request, source="127.0.0.3")
            held.append(late)
            assert late.recv(65536).startswith(b"HTTP/1.1 503 ")
        finally:
            for sock in held:
                sock.close()


def test_a_server_listening_beyond_loopback_wants_the_metrics_token(tmp_path: Path) -> None:
    with serving(tmp_path, "--host", "0.0.0.0") as node:
        refused = httpx.get(f"{node.base}/metrics", timeout=10)
        assert refused.status_code == 401 and "EVIDENCE_METRICS_TOKEN" in refused.json()["error"]
        assert "EVIDENCE_METRICS_TOKEN" in node.stderr()  # said once at start, too


async def test_the_metrics_token_opens_metrics_wherever_the_server_listens(settings: Settings, app: Starlette) -> None:
    async with started(settings, listen_host="0.0.0.0", metrics_token="scrape") as api:
        assert (await api.http.get("/metrics")).status_code == 401
        scraped = await api.http.get("/metrics", headers={"Authorization": "Bearer scrape"})
        assert scraped.status_code == 200 and "evidence_http_requests_total" in scraped.text
    async with started(settings, listen_host="::1") as api:  # loopback alone: no token needed
        assert (await api.http.get("/metrics")).status_code == 200
    async with started(settings, listen_host="") as api:  # not started by `serve`: unknown, so closed
        assert (await api.http.get("/metrics")).status_code == 401


# ---- production's GraphQL defaults ------------------------------------------------------------------

INTROSPECTION = "{ __schema { queryType { name } } }"
TYPO = "{ workspaces { itemz { id } } }"


async def test_production_serves_no_ide_no_keyless_introspection_and_no_suggestions(
    settings: Settings, app: Starlette
) -> None:
    async with started(settings, env="production") as api:
        page = await api.http.get("/graphql", headers={"Accept": "text/html"})
        assert page.status_code == 404
        refused = await api.gql(INTROSPECTION, key=None)
        assert refused["errors"][0]["extensions"]["code"] == "GRAPHQL_VALIDATION_FAILED"
        assert "introspection" in refused["errors"][0]["message"]
        # A key's holder may still introspect (code generators run with one).
        assert (await api.gql(INTROSPECTION))["data"]["__schema"]["queryType"]["name"] == "Query"
        typo = (await api.gql(TYPO))["errors"][0]["message"]
        assert "itemz" in typo and "Did you mean" not in typo


async def test_development_turns_them_on_and_explicit_settings_win(settings: Settings, app: Starlette) -> None:
    async with started(settings, env="development") as api:
        assert (await api.http.get("/graphql", headers={"Accept": "text/html"})).status_code == 200
        assert "errors" not in await api.gql(INTROSPECTION, key=None)
        assert "Did you mean" in (await api.gql(TYPO))["errors"][0]["message"]
    async with started(settings, env="production", graphiql=True, graphql_anonymous_introspection=True) as api:
        assert (await api.http.get("/graphql", headers={"Accept": "text/html"})).status_code == 200
        assert "errors" not in await api.gql(INTROSPECTION, key=None)
        assert "Did you mean" not in (await api.gql(TYPO))["errors"][0]["message"]
    async with started(settings, env="development", graphql_suggestions=False, graphiql=False) as api:
        assert (await api.http.get("/graphql", headers={"Accept": "text/html"})).status_code == 404
        assert "Did you mean" not in (await api.gql(TYPO))["errors"][0]["message"]
