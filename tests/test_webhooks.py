"""The signed webhook test against a real HTTP receiver on 127.0.0.1, the SSRF guard in both
modes, the delivery log, and the organisation's signing secret (GraphQL and CLI)."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import ipaddress
import json
import socket
import ssl
import threading
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest
import trustme
from starlette.applications import Starlette

from evidence_gateway.app import create_app
from evidence_gateway.cli import main as cli_main
from evidence_gateway.resolvers.organizations import create_api_key, get_or_create_org
from evidence_gateway.settings import Settings
from evidence_gateway.store import migrate
from evidence_gateway.store.db import Database
from evidence_gateway.webhooks import guard, sender
from evidence_gateway.webhooks.guard import forbidden_reason
from tests.conftest import Api, create_workspace, error_body, gql_code

# -- a real receiver ------------------------------------------------------------------------------


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class Receiver:
    base: str
    requests: list[Received] = field(default_factory=list)
    release: threading.Event = field(default_factory=threading.Event)

    def url(self, path: str) -> str:
        return self.base + path


BIG_BODY = ("é" * 3000).encode()  # 6000 bytes of two-byte characters

# path -> (status, headers, body)
ROUTES: dict[str, tuple[int, dict[str, str], bytes]] = {
    "/ok": (200, {}, b"accepted"),
    "/no-content": (204, {}, b""),
    "/big": (200, {"Content-Type": "text/plain; charset=utf-8"}, BIG_BODY),
    "/fail": (500, {}, b"boom"),
    "/redirect": (302, {"Location": "/ok"}, b""),
    "/slow": (200, {}, b"too late"),
}


def _handler(receiver: Receiver) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:
            pass

        def do_POST(self) -> None:  # noqa: N802
            body = self.rfile.read(int(self.headers.get("content-length") or 0))
            receiver.requests.append(Received(self.path, {k.lower(): v for k, v in self.headers.items()}, body))
            if self.path == "/slow":
                receiver.release.wait(10)  # released at teardown; the client gave up long before
            status, headers, payload = ROUTES.get(self.path, (404, {}, b"no such path"))
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

    return Handler


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    holder: dict[str, Receiver] = {}
    server = ThreadingHTTPServer(("127.0.0.1", 0), lambda *a: _handler(holder["r"])(*a))
    server.daemon_threads = True
    server.block_on_close = False  # type: ignore[attr-defined]
    holder["r"] = rec = Receiver(base=f"http://127.0.0.1:{server.server_address[1]}")
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield rec
    finally:
        rec.release.set()
        server.shutdown()
        server.server_close()


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def settings(database_url: str) -> Settings:
    """Private targets allowed (the receiver is on 127.0.0.1); a short read timeout for /slow."""
    return Settings(
        database_url=database_url,
        secret_key="test-secret-key",
        public_base_url="http://testserver",
        webhook_allow_private_targets=True,
        webhook_connect_timeout_seconds=2.0,
        webhook_read_timeout_seconds=0.5,
    )


# -- helpers --------------------------------------------------------------------------------------

VIEWER = "{ viewer { orgId organizationName webhookSigningSecret } }"
DELIVERIES = """query($page: Int! = 1) { webhookDeliveries(page: $page, perPage: 50) {
  items { id webhookId targetUrl eventType delivered httpStatus error responseExcerpt payload apiKeyId createdAt }
  pagination { total } } }"""
GQL_TEST = """mutation($i: TestWebhookInput!) { testWebhook(input: $i) {
  delivered targetUrl eventType httpStatus responseExcerpt payload error webhookId deliveryId } }"""
RESULT_FIELDS = {"delivered", "target_url", "event_type", "http_status", "response_excerpt", "payload"}


async def secret_of(api: Api) -> str:
    body = await api.gql(VIEWER)
    assert "errors" not in body, body
    return str(body["data"]["viewer"]["webhookSigningSecret"])


def signature_ok(secret: str, headers: dict[str, str], body: bytes) -> bool:
    """What a receiver does (Standard Webhooks), written independently of the server code."""
    key = base64.b64decode(secret.removeprefix("whsec_"))
    signed = f"{headers['webhook-id']}.{headers['webhook-timestamp']}.".encode() + body
    expected = "v1," + base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()
    # Several space-separated signatures while a rotated secret overlaps its successor.
    return any(hmac.compare_digest(sig, expected) for sig in headers["webhook-signature"].split())


async def deliveries(api: Api) -> dict[str, Any]:
    body = await api.gql(DELIVERIES)
    assert "errors" not in body, body
    return dict(body["data"]["webhookDeliveries"])


# -- delivered ------------------------------------------------------------------------------------


async def test_delivery_is_signed_and_body_equals_payload(api: Api, receiver: Receiver) -> None:
    ws = await create_workspace(api)
    resp = await api.post("/api/v2/webhooks/test", {"target_url": receiver.url("/ok"), "workspace_id": ws["id"]})
    assert resp.status_code == 200, resp.text
    result = resp.json()["data"]
    assert set(result) >= RESULT_FIELDS
    assert result["delivered"] is True
    assert result["http_status"] == 200
    assert result["response_excerpt"] == "accepted"
    assert result["event_type"] == "pack.published"
    assert result["target_url"] == receiver.url("/ok")

    assert len(receiver.requests) == 1
    got = receiver.requests[0]
    assert json.loads(got.body) == result["payload"]
    payload = result["payload"]
    assert set(payload) == {"type", "timestamp", "data"}
    assert payload["type"] == "pack.published"
    assert payload["data"]["workspace_id"] == ws["id"]
    assert payload["data"]["report_pack_id"] is None
    assert got.headers["content-type"] == "application/json"
    assert got.headers["webhook-id"].startswith("msg_") and got.headers["webhook-id"] == result["webhook_id"]
    assert got.headers["webhook-timestamp"].isdigit()
    assert got.headers["webhook-signature"].startswith("v1,")
    assert signature_ok(await secret_of(api), got.headers, got.body)

    # Tampering is detectable: the signature covers the exact bytes sent.
    assert not signature_ok(await secret_of(api), got.headers, got.body.replace(b"pack", b"pick"))

    log = await deliveries(api)
    assert log["pagination"]["total"] == 1
    row = log["items"][0]
    assert row["delivered"] is True and row["httpStatus"] == 200 and row["payload"] == payload
    assert row["webhookId"] == result["webhook_id"] and row["id"] == result["delivery_id"]
    assert row["apiKeyId"] is not None


async def test_event_type_is_sent_as_given_and_204_counts_as_delivered(api: Api, receiver: Receiver) -> None:
    resp = await api.post("/api/v2/webhooks/test", {"target_url": receiver.url("/no-content"), "event_type": "x.y"})
    assert resp.status_code == 200, resp.text
    data = resp.json()["data"]
    assert data["event_type"] == "x.y" and data["http_status"] == 204 and data["response_excerpt"] == ""
    assert json.loads(receiver.requests[0].body)["type"] == "x.y"
    assert data["payload"]["data"]["workspace_id"] is None


async def test_response_excerpt_is_capped_at_1_kib(api: Api, receiver: Receiver) -> None:
    resp = await api.post("/api/v2/webhooks/test", {"target_url": receiver.url("/big")})
    assert resp.status_code == 200
    excerpt = resp.json()["data"]["response_excerpt"]
    assert len(excerpt.encode()) <= 1024
    assert excerpt == "é" * 512  # whole characters only


async def test_signature_uses_the_rotated_secret(app: Starlette, api: Api, receiver: Receiver) -> None:
    from evidence_gateway.resolvers.webhooks import signing_secret

    old = await secret_of(api)
    new = await signing_secret(app.state.db, "org-a", rotate=True)
    assert new != old and await secret_of(api) == new
    assert (await api.post("/api/v2/webhooks/test", {"target_url": receiver.url("/ok")})).status_code == 200
    got = receiver.requests[0]
    # The old secret signs beside the new one for 24 hours (tests/test_org_secret_rotation.py).
    assert signature_ok(new, got.headers, got.body) and signature_ok(old, got.headers, got.body)


# -- not delivered: 502 with the full result in details ---------------------------------------------


async def _failed(api: Api, target: str) -> dict[str, Any]:
    resp = await api.post("/api/v2/webhooks/test", {"target_url": target})
    assert resp.status_code == 502, resp.text
    body = resp.json()
    assert isinstance(body["error"], str)
    details = dict(body["details"])
    assert details["code"] == "upstream_failed"
    assert set(details) >= RESULT_FIELDS
    assert details["delivered"] is False and details["target_url"] == target
    assert details["payload"]["type"] == "pack.published"
    return details


async def test_500_target_is_502_with_the_result(api: Api, receiver: Receiver) -> None:
    details = await _failed(api, receiver.url("/fail"))
    assert details["http_status"] == 500 and details["response_excerpt"] == "boom"
    assert json.loads(receiver.requests[0].body) == details["payload"]
    log = await deliveries(api)
    assert [(r["delivered"], r["httpStatus"]) for r in log["items"]] == [(False, 500)]


async def test_closed_port_is_502_without_status(api: Api) -> None:
    details = await _failed(api, f"http://127.0.0.1:{closed_port()}/hook")
    assert details["http_status"] is None and details["response_excerpt"] == ""
    assert "connection" in details["error"]
    assert (await deliveries(api))["pagination"]["total"] == 1


async def test_slow_target_past_read_timeout_is_502(api: Api, receiver: Receiver) -> None:
    details = await _failed(api, receiver.url("/slow"))
    assert details["http_status"] is None
    assert "timed out" in details["error"]
    assert len(receiver.requests) == 1  # it was sent; the answer never came in time


async def test_redirect_is_not_followed(api: Api, receiver: Receiver) -> None:
    details = await _failed(api, receiver.url("/redirect"))
    assert details["http_status"] == 302
    assert "redirect" in details["error"]
    assert [r.path for r in receiver.requests] == ["/redirect"]


async def test_unresolvable_host_is_502(api: Api) -> None:
    details = await _failed(api, "http://no-such-host.invalid/hook")
    assert details["http_status"] is None and "resolve" in details["error"]


# -- GraphQL: the result, never an error, for delivery failures ------------------------------------


async def test_graphql_test_webhook_delivered_true_and_false(api: Api, receiver: Receiver) -> None:
    ok = await api.gql(GQL_TEST, {"i": {"targetUrl": receiver.url("/ok"), "eventType": "pack.approved"}})
    assert "errors" not in ok, ok
    result = ok["data"]["testWebhook"]
    assert result["delivered"] is True and result["httpStatus"] == 200 and result["eventType"] == "pack.approved"
    assert json.loads(receiver.requests[0].body) == result["payload"]
    assert signature_ok(await secret_of(api), receiver.requests[0].headers, receiver.requests[0].body)

    bad = await api.gql(GQL_TEST, {"i": {"targetUrl": receiver.url("/fail")}})
    assert "errors" not in bad, bad
    assert bad["data"]["testWebhook"]["delivered"] is False
    assert bad["data"]["testWebhook"]["httpStatus"] == 500

    down = await api.gql(GQL_TEST, {"i": {"targetUrl": f"http://127.0.0.1:{closed_port()}/"}})
    assert down["data"]["testWebhook"]["delivered"] is False and down["data"]["testWebhook"]["httpStatus"] is None
    assert (await deliveries(api))["pagination"]["total"] == 3


async def test_graphql_refused_input_is_bad_user_input(api: Api) -> None:
    body = await api.gql(GQL_TEST, {"i": {"targetUrl": "ftp://example.com/x"}})
    assert gql_code(body) == "BAD_USER_INPUT"
    assert "input.targetUrl" in body["errors"][0]["extensions"]["fields"]


# -- references and input --------------------------------------------------------------------------


async def test_foreign_and_unknown_references_are_422_and_nothing_is_sent(
    api: Api, api_b: Api, receiver: Receiver
) -> None:
    foreign_ws = await create_workspace(api_b)
    unknown = "00000000-0000-4000-8000-000000000000"
    cases = [
        ({"workspace_id": foreign_ws["id"]}, "workspace_id"),
        ({"workspace_id": unknown}, "workspace_id"),
        ({"report_pack_id": unknown}, "report_pack_id"),
    ]
    for extra, field_name in cases:
        resp = await api.post("/api/v2/webhooks/test", {"target_url": receiver.url("/ok"), **extra})
        assert resp.status_code == 422, resp.text
        assert field_name in resp.json()["details"]["fields"]
    assert receiver.requests == []
    assert (await deliveries(api))["pagination"]["total"] == 0


BAD_INPUT = [
    ({}, "target_url"),
    ({"target_url": 5}, "target_url"),
    ({"target_url": ""}, "target_url"),
    ({"target_url": "not a url"}, "target_url"),
    ({"target_url": "ftp://example.com/hook"}, "target_url"),
    ({"target_url": "file:///etc/passwd"}, "target_url"),
    ({"target_url": "gopher://127.0.0.1:70/"}, "target_url"),
    ({"target_url": "http:///no-host"}, "target_url"),
    ({"target_url": "/relative/path"}, "target_url"),
    ({"target_url": "http://ok.example/", "event_type": ""}, "event_type"),
    ({"target_url": "http://ok.example/", "event_type": 7}, "event_type"),
    ({"target_url": "http://ok.example/", "event_type": "a\nb"}, "event_type"),
    ({"target_url": "http://ok.example/", "workspace_id": "nope"}, "workspace_id"),
    ({"target_url": "http://ok.example/", "report_pack_id": 12}, "report_pack_id"),
]


async def test_bad_input_is_422_and_nothing_recorded(api: Api) -> None:
    for body, field_name in BAD_INPUT:
        resp = await api.post("/api/v2/webhooks/test", body)
        assert resp.status_code == 422, (body, resp.text)
        assert field_name in resp.json()["details"]["fields"], (body, resp.text)
    assert (await deliveries(api))["pagination"]["total"] == 0


async def test_malformed_body_and_no_key(api: Api) -> None:
    resp = await api.http.post(
        "/api/v2/webhooks/test", content=b"{nope", headers={"Authorization": f"Bearer {api.key}"}
    )
    assert resp.status_code == 400
    assert (await api.post("/api/v2/webhooks/test", {"target_url": "http://x.example/"}, key=None)).status_code == 401


# -- SSRF guard, refusing mode --------------------------------------------------------------------


@pytest.fixture
async def guarded(settings: Settings, app: Starlette) -> AsyncIterator[Api]:
    """A second app on the same database with private targets refused (the default)."""
    strict = settings.model_copy(
        update={"webhook_allow_private_targets": False, "webhook_connect_timeout_seconds": 0.5}
    )
    guarded_app = create_app(strict)
    async with guarded_app.router.lifespan_context(guarded_app):
        key = await create_api_key(guarded_app.state.db, "org-guarded")
        async with httpx.AsyncClient(
            transport=httpx.ASGITransport(app=guarded_app), base_url="http://testserver"
        ) as http:
            yield Api(http, key)


NON_PUBLIC_HOSTS = [
    "127.0.0.1",
    "127.1.2.3",
    "10.1.2.3",
    "172.16.0.1",
    "192.168.1.1",
    "169.254.169.254",
    "0.0.0.0",
    "100.64.0.1",
    "224.0.0.1",
    "[::1]",
    "[::ffff:127.0.0.1]",
    "[fe80::1]",
    "[fd00::1]",
    "localhost",  # a name that resolves to loopback
]


async def test_guard_refuses_non_public_targets(guarded: Api, receiver: Receiver) -> None:
    port = receiver.base.rsplit(":", 1)[1]
    for host in NON_PUBLIC_HOSTS:
        resp = await guarded.post("/api/v2/webhooks/test", {"target_url": f"http://{host}:{port}/ok"})
        assert resp.status_code == 422, (host, resp.text)
        assert "target_url" in resp.json()["details"]["fields"], host
    assert receiver.requests == []
    assert (await deliveries(guarded))["pagination"]["total"] == 0


DEPRECATED_AND_SPECIAL_HOSTS = [
    "[fec0::1]",  # site-local (deprecated)
    "[2002:a00:1::1]",  # 6to4 of 10.0.0.1
    "[2001:0:4136:e378:8000:63bf:f5ff:fffe]",  # Teredo of 10.0.0.1
    "[64:ff9b::a00:1]",  # NAT64 of 10.0.0.1
    "[::ffff:8.8.8.8]",  # IPv4-mapped: not an IPv6 host of its own
    "0.1.2.3",
    "192.0.0.9",
    "198.18.0.1",
    "239.1.1.1",
    "240.0.0.1",
    "255.255.255.255",
    "[3fff::1]",
]


async def test_every_refused_target_gets_one_answer(guarded: Api, receiver: Receiver) -> None:
    """A name that does not resolve and one that resolves to loopback, a private literal, a
    special-purpose range: the same status and the same words, so nobody can map the internal
    network or its DNS through the answers."""
    port = receiver.base.rsplit(":", 1)[1]
    hosts = ["no-such-host.invalid", "localhost", "10.1.2.3", *DEPRECATED_AND_SPECIAL_HOSTS]
    answers = set()
    for host in hosts:
        resp = await guarded.post("/api/v2/webhooks/test", {"target_url": f"http://{host}:{port}/ok"})
        answers.add((resp.status_code, json.dumps(error_body(resp), sort_keys=True)))
        created = await guarded.post("/api/v2/webhook-endpoints", {"url": f"http://{host}:{port}/ok"})
        answers.add((created.status_code, json.dumps(error_body(created), sort_keys=True)))
    assert answers == {
        (422, json.dumps({"error": "invalid webhook target", "details": {"code": "invalid_input",
          "fields": {field: "must be a host that resolves to public internet addresses only"}}}, sort_keys=True))
        for field in ("target_url", "url")
    }  # fmt: skip
    body = await guarded.gql(GQL_TEST, {"i": {"targetUrl": f"http://no-such-host.invalid:{port}/ok"}})
    assert gql_code(body) == "BAD_USER_INPUT"
    assert receiver.requests == []
    assert (await deliveries(guarded))["pagination"]["total"] == 0


async def test_guard_refuses_the_live_receiver_that_the_open_mode_reaches(
    guarded: Api, api: Api, receiver: Receiver
) -> None:
    assert (await guarded.post("/api/v2/webhooks/test", {"target_url": receiver.url("/ok")})).status_code == 422
    assert (await api.post("/api/v2/webhooks/test", {"target_url": receiver.url("/ok")})).status_code == 200
    assert len(receiver.requests) == 1


async def test_guard_lets_a_public_address_through_to_delivery(guarded: Api) -> None:
    resp = await guarded.post("/api/v2/webhooks/test", {"target_url": "http://198.51.100.1/"})
    assert resp.status_code == 422  # TEST-NET-2 is documentation space, not public
    resp = await guarded.post("/api/v2/webhooks/test", {"target_url": "http://1.1.1.1:9/"})
    assert resp.status_code == 502, resp.text  # past the guard: whatever answers, it is not a 2xx test receiver


@pytest.mark.parametrize(
    ("address", "refused"),
    [
        ("8.8.8.8", False),
        ("2606:4700:4700::1111", False),
        ("127.0.0.1", True),
        ("10.0.0.1", True),
        ("169.254.1.1", True),
        ("100.64.1.1", True),
        ("240.0.0.1", True),
        ("255.255.255.255", True),
        ("::", True),
        ("::ffff:10.0.0.1", True),
        ("::ffff:8.8.8.8", True),  # IPv4-mapped: never a host's own IPv6 address
        ("64:ff9b::808:808", False),  # NAT64 of 8.8.8.8
        ("2002:808:808::", False),  # 6to4 of 8.8.8.8
        ("fec0::1", True),  # site-local
        ("2002:a00:1::", True),  # 6to4 of 10.0.0.1
        ("2001:0:4136:e378:8000:63bf:f5ff:fffe", True),  # Teredo of 10.0.0.1
        ("64:ff9b::a00:1", True),  # NAT64 of 10.0.0.1
        ("64:ff9b:1::808:808", True),  # local-use NAT64
        ("0.1.2.3", True),
        ("192.0.0.9", True),
        ("192.88.99.1", True),
        ("198.18.0.1", True),
        ("3fff::1", True),
        ("64:ff9b::7f00:1", True),  # NAT64 of 127.0.0.1
        ("2002:7f00:1::", True),  # 6to4 of 127.0.0.1
        ("ff02::1", True),
    ],
)
def test_forbidden_reason_classifies_addresses(address: str, refused: bool) -> None:
    assert (forbidden_reason(ipaddress.ip_address(address)) is not None) is refused


# -- viewer, delivery log isolation, CLI ------------------------------------------------------------


async def test_viewer_shows_the_organisations_own_secret(api: Api, api_b: Api) -> None:
    a = (await api.gql(VIEWER))["data"]["viewer"]
    b = (await api_b.gql(VIEWER))["data"]["viewer"]
    assert a["organizationName"] == "org-a" and b["organizationName"] == "org-b"
    assert a["webhookSigningSecret"].startswith("whsec_") and a["webhookSigningSecret"] != b["webhookSigningSecret"]
    assert len(base64.b64decode(a["webhookSigningSecret"][6:])) >= 24
    assert gql_code(await api.gql(VIEWER, key=None)) == "UNAUTHENTICATED"


async def test_delivery_log_is_per_organisation(api: Api, api_b: Api, receiver: Receiver) -> None:
    assert (await api.post("/api/v2/webhooks/test", {"target_url": receiver.url("/ok")})).status_code == 200
    assert (await deliveries(api_b))["pagination"]["total"] == 0
    rest = await api.get("/api/v2/webhooks/deliveries")
    assert rest.status_code == 200 and rest.json()["pagination"]["total"] == 1
    assert rest.json()["data"][0]["delivered"] is True
    assert (await api_b.get("/api/v2/webhooks/deliveries")).json()["data"] == []


def _cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """The command's own entry point, in process (what `evidence-gateway ...` runs)."""
    code = cli_main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_shows_and_rotates_the_signing_secret(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    url = f"sqlite:///{tmp_path / 'cli.db'}"

    async def stored() -> str:
        db = Database(url)
        try:
            await migrate.prepare(db)
            return (await get_or_create_org(db, "acme")).webhook_signing_secret
        finally:
            await db.dispose()

    original = asyncio.run(stored())
    assert _cli(capsys, "webhooks", "secret", "--org", "acme", "--database-url", url) == (0, original + "\n", "")
    code, out, _err = _cli(capsys, "webhooks", "secret", "--org", "acme", "--rotate", "--database-url", url)
    new = out.strip()
    assert code == 0 and new.startswith("whsec_") and new != original and out == new + "\n"
    assert asyncio.run(stored()) == new
    code, out, err = _cli(capsys, "webhooks", "secret", "--org", "nobody", "--database-url", url)
    assert code == 1 and "nobody" in err and out == ""


async def test_pack_reference_is_carried_with_its_workspace(api: Api, api_b: Api, receiver: Receiver) -> None:
    ws = await create_workspace(api, reporting_period_start="2026-01-01", reporting_period_end="2026-03-31")
    rows = [{"mode": "road", "distance_km": 100, "mass_tonnes": 10}]
    imported = await api.post(f"/api/v2/workspaces/{ws['id']}/imports", {"source_row_count": 1, "shipments": rows})
    assert imported.status_code == 201
    assert (await api.post(f"/api/v2/workspaces/{ws['id']}/calculate")).status_code == 200
    pack = (await api.post(f"/api/v2/workspaces/{ws['id']}/packs")).json()["data"]

    resp = await api.post("/api/v2/webhooks/test", {"target_url": receiver.url("/ok"), "report_pack_id": pack["id"]})
    assert resp.status_code == 200, resp.text
    data = resp.json()["data"]["payload"]["data"]
    assert data["report_pack_id"] == pack["id"] and data["workspace_id"] == ws["id"]
    assert json.loads(receiver.requests[0].body)["data"] == data

    other = await create_workspace(api, name="other")
    mismatch = await api.post(
        "/api/v2/webhooks/test",
        {"target_url": receiver.url("/ok"), "report_pack_id": pack["id"], "workspace_id": other["id"]},
    )
    assert mismatch.status_code == 422 and "workspace_id" in mismatch.json()["details"]["fields"]
    foreign = await api_b.post(
        "/api/v2/webhooks/test", {"target_url": receiver.url("/ok"), "report_pack_id": pack["id"]}
    )
    assert foreign.status_code == 422 and "report_pack_id" in foreign.json()["details"]["fields"]
    assert len(receiver.requests) == 1


# -- TLS: the connection is pinned to the vetted address, the certificate is checked for the name ----


@pytest.fixture
def tls_receiver() -> Iterator[tuple[int, ssl.SSLContext, list[str]]]:
    """An HTTPS receiver on 127.0.0.1 whose certificate names only `localhost` (test CA via trustme)."""
    ca = trustme.CA()
    server_ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ca.issue_cert("localhost").configure_cert(server_ctx)
    client_ctx = ssl.create_default_context()
    ca.configure_trust(client_ctx)
    sni: list[str] = []
    server_ctx.sni_callback = lambda _sock, name, _ctx: sni.append(str(name))  # type: ignore[assignment,misc]
    holder = Receiver(base="")
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(holder))
    server.daemon_threads = True
    server.socket = server_ctx.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield int(server.server_address[1]), client_ctx, sni
    finally:
        server.shutdown()
        server.server_close()


async def _send(url: str, verify: ssl.SSLContext) -> sender.Outcome:
    target = guard.target_of(guard.parse_target_url(url))
    vetted = guard.vet(target, await guard.resolve(target, 2.0), allow_private=True)
    return await sender.post(vetted, b"{}", {}, connect_timeout=2.0, read_timeout=2.0, verify=verify)


async def test_https_keeps_the_host_name_for_sni_and_certificate_checks(
    tls_receiver: tuple[int, ssl.SSLContext, list[str]],
) -> None:
    port, trust, sni = tls_receiver
    # `localhost` resolves (and is pinned) to an address, yet TLS still speaks to and verifies `localhost`.
    ok = await _send(f"https://localhost:{port}/ok", trust)
    assert ok.delivered and ok.http_status == 200, ok
    assert sni == ["localhost"]
    # The same server by IP: the certificate does not name 127.0.0.1, so nothing is delivered.
    by_ip = await _send(f"https://127.0.0.1:{port}/ok", trust)
    assert not by_ip.delivered and by_ip.http_status is None
    assert "certificate" in (by_ip.error or "").lower()
