"""A recipient's request is answered at its own host (PACT v2 "Action Events", v3 events;
conformance TC 13 and 14.B): two servers in one test, black-box over HTTP.

The data owner's gateway (its answer sender on) and the requester's host — a small app on a real
socket that issues tokens and records the events it is sent. The requester asks through the
gateway's ``/2/events`` / ``/3/events``; the gateway answers later, from its sender, at the
requester's ``/2/events`` / ``/3/events`` with a token from the requester's token endpoint.
"""

from __future__ import annotations

import base64
import io
import logging
import secrets
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from evidence_gateway.settings import get_settings
from tests.cli_inprocess import run_cli
from tests.conftest import Api, Configured
from tests.live_server import served
from tests.test_pact_host import Client, publish, published_pack, recipient
from tests.waiting import eventually

HOST_ID, HOST_SECRET = "owner-at-requester", "requester-issued-secret-" + "x" * 12
V2 = "org.wbcsd.pathfinder.ProductFootprintRequest."
V3 = "org.wbcsd.pact.ProductFootprint."


@dataclass
class RequesterHost:
    """The requester's own PACT host: tokens for the data owner's credentials, events recorded."""

    discovery: bool
    # Statuses of the next /N/events answers, in order; 200 once spent.
    script: list[int] = field(default_factory=list)
    base: str = ""
    tokens: set[str] = field(default_factory=set)
    received: list[tuple[str, dict[str, str], Any]] = field(default_factory=list)
    token_calls: list[str] = field(default_factory=list)

    def app(self) -> Starlette:
        async def openid(_request: Request) -> Response:
            if not self.discovery:
                return JSONResponse({"code": "NotFound"}, status_code=404)
            return JSONResponse({"issuer": self.base, "token_endpoint": f"{self.base}/oauth2/token"})

        async def token(request: Request) -> Response:
            self.token_calls.append(request.url.path)
            expected = base64.b64encode(f"{HOST_ID}:{HOST_SECRET}".encode()).decode()
            form = (await request.body()).decode()
            if (
                request.headers.get("authorization") != f"Basic {expected}"
                or "grant_type=client_credentials" not in form
            ):
                return JSONResponse({"error": "invalid_client"}, status_code=401)
            issued = secrets.token_hex(8)
            self.tokens.add(issued)
            return JSONResponse({"access_token": issued, "token_type": "Bearer"})

        async def events(request: Request) -> Response:
            bearer = request.headers.get("authorization", "").removeprefix("Bearer ")
            if bearer not in self.tokens:
                return JSONResponse({"code": "BadRequest", "message": "Invalid token"}, status_code=400)
            self.received.append((request.url.path, dict(request.headers), await request.json()))
            return Response(status_code=self.script.pop(0) if self.script else 200)

        return Starlette(
            routes=[
                Route("/.well-known/openid-configuration", openid),
                Route("/oauth2/token", token, methods=["POST"]),
                Route("/auth/token", token, methods=["POST"]),
                Route("/2/events", events, methods=["POST"]),
                Route("/3/events", events, methods=["POST"]),
            ]
        )

    def answer_to(self, request_id: str) -> tuple[str, dict[str, Any]]:
        found = [(path, body) for path, _h, body in self.received if body["data"]["requestEventId"] == request_id]
        assert len(found) == 1, found
        return found[0]


@asynccontextmanager
async def requester_host(discovery: bool = True, script: list[int] | None = None) -> AsyncIterator[RequesterHost]:
    host = RequesterHost(discovery, list(script or []))
    async with served(host.app()) as host_port:
        host.base = f"http://{host_port}"
        yield host


async def set_host(api: Api, client: Client, url: str, secret: str = HOST_SECRET, **more: str) -> httpx.Response:
    body = {"url": url, "client_id": HOST_ID, "client_secret": secret, **more}
    return await api.http.put(
        f"/api/sharing/recipients/{client.recipient_id}/host", json=body, headers={"Authorization": f"Bearer {api.key}"}
    )


async def ask(client: Client, token: str, major: str, event_id: str, type_: str, data: dict[str, Any]) -> None:
    event = {"specversion": "1.0", "id": event_id, "source": "//requester.example/events", "type": type_, "data": data}
    resp = await client.http.post(
        f"/{major}/events",
        json=event,
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/cloudevents+json"},
    )
    assert resp.status_code == 200 and resp.content == b"", resp.text


async def test_requests_are_answered_at_the_requester_s_host_on_both_majors(configured: Configured) -> None:
    async with (
        requester_host(discovery=True) as with_discovery,
        requester_host(discovery=False) as plain,
        configured(dispatcher=True) as api,
    ):
        pack = await published_pack(api)
        first, second = await recipient(api, "Shipper AG"), await recipient(api, "Retailer SA")
        for client, host in ((first, with_discovery), (second, plain)):
            await publish(api, client, pack)
            resp = await set_host(api, client, host.base + "/")
            assert resp.status_code == 200, resp.text
            assert resp.json()["data"]["host"] == {"url": host.base, "client_id": HOST_ID, "pact_version": "3"}
        token = await first.token()
        footprints = (await first.get("/2/footprints", token, params={"limit": 100})).json()["data"]
        wanted = footprints[0]["productIds"]
        await ask(first, token, "2", "run-1/12", V2 + "Created.v1", {"pf": {"productIds": wanted}, "comment": "2026"})
        await ask(first, token, "2", "run-1/14.A", V2 + "Created.v1", {"pf": {"productIds": ["urn:pact:null"]}})
        await ask(first, token, "2", "run-1/bad", V2 + "Created.v1", {"pf": {"comment": "anything"}})
        token_2 = await second.token()
        await ask(second, token_2, "3", "run-2/12", V3 + "RequestCreatedEvent.3", {"productId": wanted})
        await ask(second, token_2, "3", "run-2/14.A", V3 + "RequestCreatedEvent.3", {"productId": ["urn:null"]})

        await eventually(lambda: len(with_discovery.received) == 3 and len(plain.received) == 2, "the five answers")

    # v2, at the host that names its token endpoint through OpenID discovery
    assert set(with_discovery.token_calls) == {"/oauth2/token"}
    for _path, headers, _body in with_discovery.received + plain.received:
        assert headers["content-type"].startswith("application/cloudevents+json")
    path, fulfilled = with_discovery.answer_to("run-1/12")
    assert path == "/2/events" and fulfilled["type"] == V2 + "Fulfilled.v1" and fulfilled["specversion"] == "1.0"
    assert fulfilled["source"] == "http://testserver/2/events" and fulfilled["id"] and fulfilled["time"]
    pfs = fulfilled["data"]["pfs"]
    assert pfs and all(set(pf["productIds"]) & set(wanted) for pf in pfs)
    assert footprints[0] in pfs  # the same documents GET /2/footprints answers
    path, rejected = with_discovery.answer_to("run-1/14.A")
    assert path == "/2/events" and rejected["type"] == V2 + "Rejected.v1"
    assert rejected["data"]["error"]["code"] == "NoSuchFootprint" and rejected["data"]["error"]["message"]
    _path, bad = with_discovery.answer_to("run-1/bad")
    assert bad["type"] == V2 + "Rejected.v1" and bad["data"]["error"]["code"] == "BadRequest"

    # v3, at a host without discovery: the token comes from <base>/auth/token
    assert set(plain.token_calls) == {"/auth/token"}
    path, fulfilled_3 = plain.answer_to("run-2/12")
    assert path == "/3/events" and fulfilled_3["type"] == V3 + "RequestFulfilledEvent.3"
    assert fulfilled_3["source"] == "http://testserver/3/events"
    assert fulfilled_3["data"]["pfs"] and all(set(pf["productIds"]) & set(wanted) for pf in fulfilled_3["data"]["pfs"])
    assert all(pf["specVersion"].startswith("3.") for pf in fulfilled_3["data"]["pfs"])
    path, rejected_3 = plain.answer_to("run-2/14.A")
    assert path == "/3/events" and rejected_3["type"] == V3 + "RequestRejectedEvent.3"
    assert rejected_3["data"]["error"]["code"] == "NotFound"


async def test_an_answer_the_host_refuses_is_sent_again_and_a_malformed_request_is_400(
    configured: Configured,
) -> None:
    async with (
        requester_host(script=[503]) as host,
        configured(dispatcher=True, webhook_retry_schedule="0.05,0.05") as api,
    ):
        pack = await published_pack(api)
        client = await recipient(api)
        await publish(api, client, pack)
        assert (await set_host(api, client, host.base)).status_code == 200
        token = await client.token()
        # Malformed criteria are refused at once and never answered.
        resp = await client.http.post(
            "/2/events",
            json={"specversion": "1.0", "id": "x", "source": "//r", "type": V2 + "Created.v1", "data": {"pf": 3}},
            headers={"Authorization": f"Bearer {token}", "Content-Type": "application/cloudevents+json"},
        )
        assert resp.status_code == 400 and resp.json()["code"] == "BadRequest"
        await ask(client, token, "2", "again-1", V2 + "Created.v1", {"pf": {"productIds": ["urn:pact:null"]}})
        # The requester sends the same event again: it is answered once.
        await ask(client, token, "2", "again-1", V2 + "Created.v1", {"pf": {"productIds": ["urn:pact:null"]}})
        await eventually(lambda: len(host.received) == 2, "the answer, refused once then sent again")
        await ask(client, token, "2", "after", V2 + "Created.v1", {"pf": {"productIds": ["urn:pact:null"]}})
        await eventually(lambda: len(host.received) == 3, "the next request's answer")
    assert [body["data"]["requestEventId"] for _p, _h, body in host.received] == ["again-1", "again-1", "after"]
    first, second, _after = (body for _p, _h, body in host.received)
    # The same answer sent again, with the same event id (a receiver can drop repeats).
    assert first["id"] == second["id"] and first["data"] == second["data"]
    assert first["data"]["requestEventId"] == "again-1" and first["data"]["error"]["code"] == "NoSuchFootprint"


async def test_the_host_secret_is_never_shown_and_a_recipient_without_a_host_is_not_answered(
    configured: Configured, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="evidence_gateway")
    async with requester_host() as host, configured(dispatcher=True) as api:
        pack = await published_pack(api)
        client = await recipient(api)
        await publish(api, client, pack)
        token = await client.token()
        await ask(client, token, "2", "no-host", V2 + "Created.v1", {"pf": {"productIds": ["urn:pact:null"]}})
        # A private or malformed URL is refused as webhook URLs are (here private ones are allowed).
        refused = await set_host(api, client, "ftp://example.com")
        assert refused.status_code == 422 and "url" in refused.text
        assert (await set_host(api, client, host.base)).status_code == 200
        listed = (await api.get("/api/sharing/recipients")).json()["data"]
        assert listed[0]["host"] == {"url": host.base, "client_id": HOST_ID, "pact_version": "3"}
        gql = await api.gql("{ dataRecipients { id host { url clientId pactVersion } } }")
        assert gql["data"]["dataRecipients"][0]["host"] == {"url": host.base, "clientId": HOST_ID, "pactVersion": "3"}
        events = (await api.get("/api/v2/events", params={"limit": 100})).json()["data"]
        changed = [e for e in events if e["type"] == "data_recipient.host_changed"]
        assert len(changed) == 1
        assert changed[0]["data"]["host"] == {"url": host.base, "client_id": HOST_ID, "pact_version": "3"}
        await ask(client, token, "2", "with-host", V2 + "Created.v1", {"pf": {"productIds": ["urn:pact:null"]}})
        await eventually(lambda: host.received, "the answer")
        assert [body["data"]["requestEventId"] for _p, _h, body in host.received] == ["with-host"]

        # Cleared through GraphQL: later requests are not answered, and no second clear event.
        cleared = await api.gql(
            "mutation($id: UUID!) { clearDataRecipientHost(id: $id) { host { url } } }", {"id": client.recipient_id}
        )
        assert cleared["data"]["clearDataRecipientHost"]["host"] is None
        everything = (await api.get("/api/v2/events", params={"limit": 100})).text
        listed_text = (await api.get("/api/sharing/recipients")).text
    assert HOST_SECRET not in everything and HOST_SECRET not in listed_text and HOST_SECRET not in str(gql)
    assert HOST_SECRET not in caplog.text
    assert not any(r.getMessage().count(t) for r in caplog.records for t in host.tokens)


async def test_the_command_line_sets_and_clears_a_host_reading_the_secret_from_standard_input(
    api: Api, monkeypatch: pytest.MonkeyPatch, database_url: str
) -> None:
    client = await recipient(api)
    url = database_url.replace("+aiosqlite", "").replace("+asyncpg", "")
    monkeypatch.setattr(sys, "stdin", io.StringIO(HOST_SECRET + "\n"))
    monkeypatch.setenv("EVIDENCE_WEBHOOK_ALLOW_PRIVATE_TARGETS", "true")  # the host is on this machine
    get_settings.cache_clear()
    try:
        done = run_cli("recipients", "host", client.recipient_id, "--org", "org-a", "--url", "http://127.0.0.1:9/pact",
                       "--client-id", HOST_ID, "--pact-version", "2", "--database-url", url)  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert HOST_SECRET not in done.stdout and "http://127.0.0.1:9/pact" in done.stdout
        listed = (await api.get("/api/sharing/recipients")).json()["data"]
        assert listed[0]["host"] == {"url": "http://127.0.0.1:9/pact", "client_id": HOST_ID, "pact_version": "2"}
        refused = run_cli("recipients", "host", client.recipient_id, "--org", "org-a", "--database-url", url)
        assert refused.returncode != 0 and "--url" in refused.stderr
        cleared = run_cli("recipients", "host", client.recipient_id, "--org", "org-a", "--clear", "--database-url", url)
        assert cleared.returncode == 0, cleared.stderr
        assert (await api.get("/api/sharing/recipients")).json()["data"][0]["host"] is None
    finally:
        get_settings.cache_clear()


async def test_a_pack_published_to_a_recipient_with_a_host_is_announced_in_the_major_it_speaks(
    configured: Configured,
) -> None:
    async with requester_host() as host, configured(dispatcher=True) as api:
        pack = await published_pack(api)
        client = await recipient(api)
        assert (await set_host(api, client, host.base, pact_version="2")).status_code == 200
        publication = await publish(api, client, pack)
        await eventually(lambda: host.received, "the Published notice")
        token = await client.token()
        ids = {f["id"] for f in (await client.get("/2/footprints", token, params={"limit": 100})).json()["data"]}
        # Withdrawn and published again: a second notice; publishing a live one again: none.
        withdrawn = await api.post(f"/api/sharing/publications/{publication['id']}/withdraw")
        assert withdrawn.status_code == 200
        await publish(api, client, pack)
        await publish(api, client, pack)
        await eventually(lambda: len(host.received) >= 2, "the second notice")
    path, _headers, notice = host.received[0]
    assert path == "/2/events" and notice["type"] == "org.wbcsd.pathfinder.ProductFootprint.Published.v1"
    assert set(notice["data"]["pfIds"]) == ids and notice["source"] == "http://testserver/2/events"
    assert len(host.received) == 2 and host.received[1][2]["data"] == notice["data"]
    assert host.received[1][2]["id"] != notice["id"]
