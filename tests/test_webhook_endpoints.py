"""Registered webhook endpoints (DESIGN.md §16) over REST and GraphQL, and delivery from the event
log by the dispatcher running in the app, to a receiver on a real socket: retries with one
webhook-id, Standard Webhooks signatures (checked with the `standardwebhooks` library), rotation,
the SSRF guard at registration and at every delivery, failing -> disabled, hand retries, and
another organisation seeing nothing."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from typing import Any, TypeVar

import httpx
import pytest
from starlette.applications import Starlette

from evidence_gateway.app import create_app
from evidence_gateway.resolvers.organizations import create_api_key
from evidence_gateway.settings import Settings
from tests.conftest import Api, create_workspace, gql_code
from tests.waiting import eventually
from tests.webhook_receiver import Receiver, running

T = TypeVar("T")
ENDPOINTS = "/api/v2/webhook-endpoints"


@pytest.fixture
def settings(settings: Settings) -> Settings:
    """The dispatcher runs, and retries come at once (the schedule is its own test)."""
    return settings.model_copy(
        update={
            "dispatcher": True,
            "webhook_retry_schedule": "0,0,0",
            "webhook_connect_timeout_seconds": 1.0,
            "webhook_read_timeout_seconds": 2.0,
        }
    )


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    with running() as r:
        yield r


async def register(api: Api, url: str, **fields: Any) -> dict[str, Any]:
    resp = await api.post(ENDPOINTS, {"url": url, **fields})
    assert resp.status_code == 201, resp.text
    data: dict[str, Any] = resp.json()["data"]
    return data


async def attempts(api: Api, endpoint_id: str) -> list[dict[str, Any]]:
    resp = await api.get(f"{ENDPOINTS}/{endpoint_id}/deliveries", params={"per_page": 100})
    assert resp.status_code == 200, resp.text
    return list(reversed(resp.json()["data"]))  # oldest first


async def log_of(api: Api) -> list[dict[str, Any]]:
    return list((await api.get("/api/v2/events", params={"limit": 200})).json()["data"])


# ---- registration and its answers -------------------------------------------------------------------


async def test_create_shows_the_secret_once_and_reads_never_do(api: Api, receiver: Receiver) -> None:
    resp = await api.post(ENDPOINTS, {"url": receiver.url, "description": "ops", "event_types": ["pack.generated"]})
    assert resp.status_code == 201, resp.text
    created = resp.json()["data"]
    assert created["secret"].startswith("whsec_")
    assert resp.headers["Location"].endswith(f"{ENDPOINTS}/{created['id']}")
    assert (created["url"], created["description"], created["event_types"]) == (receiver.url, "ops", ["pack.generated"])
    assert (created["enabled"], created["status"], created["failing_since"]) == (True, "healthy", None)

    one = (await api.get(f"{ENDPOINTS}/{created['id']}")).json()["data"]
    listed = (await api.get(ENDPOINTS)).json()
    assert one == {k: v for k, v in created.items() if k not in ("secret", "secret_withheld")}
    assert created["secret_withheld"] is False
    assert listed["data"] == [one]
    assert listed["pagination"] == {"page": 1, "per_page": 20, "total": 1}
    assert created["secret"] not in str(await log_of(api))


async def test_update_changes_only_what_is_given_and_delete_keeps_the_attempts(api: Api, receiver: Receiver) -> None:
    endpoint = await register(api, receiver.url, description="first")
    path = f"{ENDPOINTS}/{endpoint['id']}"
    await eventually(lambda: _ids(receiver), "the endpoint's own created event")
    resp = await api.patch(path, {"event_types": ["workspace.created"], "enabled": False})
    assert resp.status_code == 200, resp.text
    changed = resp.json()["data"]
    assert (changed["description"], changed["event_types"], changed["status"]) == (
        "first",
        ["workspace.created"],
        "disabled",
    )

    assert (await api.delete(path)).status_code == 204
    assert (await api.get(path)).status_code == 404
    assert (await api.delete(path)).status_code == 404
    kept = (await api.get("/api/v2/webhooks/deliveries")).json()["data"]
    assert [(d["event_type"], d["endpoint_id"]) for d in kept] == [("webhook_endpoint.created", None)]


async def _ids(receiver: Receiver) -> list[str]:
    return receiver.ids()


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({}, "url"),
        ({"url": "ftp://example.com/x"}, "url"),
        ({"url": "not a url"}, "url"),
        ({"url": "http://127.0.0.1:9/x", "event_types": ["pack.exploded"]}, "event_types[0]"),
        ({"url": "http://127.0.0.1:9/x", "event_types": ["pack.generated", "pack.generated"]}, "event_types"),
        ({"url": "http://127.0.0.1:9/x", "enabled": "yes"}, "enabled"),
        ({"url": "http://127.0.0.1:9/x", "description": "x" * 501}, "description"),
        ({"url": "http://no-such-host.invalid/x"}, "url"),
    ],
)
async def test_bad_registrations_are_422_and_nothing_is_stored(api: Api, body: dict[str, Any], field: str) -> None:
    resp = await api.post(ENDPOINTS, body)
    assert resp.status_code == 422, resp.text
    assert field in resp.json()["details"]["fields"]
    assert (await api.get(ENDPOINTS)).json()["pagination"]["total"] == 0
    assert await log_of(api) == []


async def test_a_patch_with_null_or_a_bad_url_changes_nothing(api: Api, receiver: Receiver) -> None:
    endpoint = await register(api, receiver.url)
    path = f"{ENDPOINTS}/{endpoint['id']}"
    assert (await api.patch(path, {"url": None})).json()["details"]["fields"] == {"url": "must not be null"}
    assert (await api.patch(path, {"url": "gopher://x"})).status_code == 422
    assert (await api.get(path)).json()["data"]["url"] == receiver.url


# ---- delivery -----------------------------------------------------------------------------------------


async def test_a_receiver_failing_twice_gets_three_attempts_with_one_webhook_id(api: Api, receiver: Receiver) -> None:
    receiver.script = [500, 503]
    endpoint = await register(api, receiver.url, event_types=["workspace.created"])
    workspace = await create_workspace(api)

    tried = await eventually(lambda: _delivered(api, endpoint["id"]), "a delivered attempt after two failures")
    assert [(a["attempt"], a["delivered"], a["http_status"]) for a in tried] == [
        (1, False, 500),
        (2, False, 503),
        (3, True, 200),
    ]
    event = next(e for e in await log_of(api) if e["type"] == "workspace.created")
    assert {a["webhook_id"] for a in tried} == {event["id"]} == set(receiver.ids())
    payloads = receiver.verified(endpoint["secret"])
    assert len(payloads) == 3
    assert all(p == {**event, "timestamp": event["occurred_at"]} for p in payloads)
    assert payloads[0]["data"] == workspace  # type: ignore[comparison-overlap]
    # A success after failures: healthy again.
    assert (await api.get(f"{ENDPOINTS}/{endpoint['id']}")).json()["data"]["status"] == "healthy"


async def _delivered(api: Api, endpoint_id: str) -> list[dict[str, Any]] | None:
    tried = await attempts(api, endpoint_id)
    return tried if tried and tried[-1]["delivered"] else None


async def test_only_the_chosen_event_types_are_sent(api: Api, receiver: Receiver) -> None:
    await register(api, receiver.url, event_types=["evidence_item.created"])
    everything = await register(api, receiver.url)
    await create_workspace(api)
    item = {"evidence_type": "other", "title": "t", "file_name": "f.pdf", "file_url": "https://files.example.com/f"}
    assert (await api.post("/api/v2/evidence-items", item)).status_code == 201

    def types() -> list[str]:
        return sorted(r.headers["webhook-id"] for r in receiver.received)

    # everything: its own created event, the workspace and the item; the other one: the item only.
    await eventually(lambda: _count(receiver, 4), "four deliveries")
    by_type = {e["id"]: e["type"] for e in await log_of(api)}
    sent = sorted(by_type[i] for i in types())
    assert sent == ["evidence_item.created", "evidence_item.created", "webhook_endpoint.created", "workspace.created"]
    recorded = await eventually(lambda: _attempts_n(api, everything["id"], 3), "three recorded attempts")
    # Attempts run side by side: no order between events (their sequence gives it).
    assert sorted(a["event_type"] for a in recorded) == [
        "evidence_item.created",
        "webhook_endpoint.created",
        "workspace.created",
    ]


async def _count(receiver: Receiver, n: int) -> bool:
    return len(receiver.received) >= n


async def test_a_request_never_waits_for_the_receiver(api: Api, receiver: Receiver) -> None:
    receiver.released.clear()  # the receiver holds every request until released
    await register(api, receiver.url)
    await eventually(lambda: _count(receiver, 1), "the first delivery to be on the wire")
    # The receiver is still holding it, and writes go on.
    workspace = await create_workspace(api)
    assert not receiver.released.is_set()
    receiver.released.set()
    await eventually(lambda: _count(receiver, 2), "the workspace's delivery after release")
    assert workspace["id"] in receiver.received[1].body.decode()


async def test_rotation_signs_with_both_secrets_for_a_day(api: Api, receiver: Receiver) -> None:
    endpoint = await register(api, receiver.url, event_types=["workspace.created"])
    resp = await api.post(f"{ENDPOINTS}/{endpoint['id']}/rotate-secret")
    assert resp.status_code == 200, resp.text
    rotated = resp.json()["data"]
    assert rotated["secret"] != endpoint["secret"] and rotated["previous_secret_expires_at"]
    await create_workspace(api)
    await eventually(lambda: _count(receiver, 1), "a delivery")
    assert len(receiver.received[0].headers["webhook-signature"].split()) == 2
    assert receiver.verified(endpoint["secret"]) == receiver.verified(rotated["secret"])


async def test_test_webhook_can_target_a_registered_endpoint(api: Api, receiver: Receiver) -> None:
    endpoint = await register(api, receiver.url, enabled=False)
    resp = await api.post("/api/v2/webhooks/test", {"endpoint_id": endpoint["id"]})
    assert resp.status_code == 200, resp.text
    result = resp.json()["data"]
    assert (result["delivered"], result["target_url"], result["event_type"]) == (True, receiver.url, "pack.published")
    assert receiver.verified(endpoint["secret"])[0] == result["payload"]
    unknown = await api.post("/api/v2/webhooks/test", {"endpoint_id": "00000000-0000-4000-8000-000000000000"})
    assert unknown.status_code == 422 and "endpoint_id" in unknown.json()["details"]["fields"]
    assert (await api.post("/api/v2/webhooks/test", {})).json()["details"]["fields"] == {"target_url": "field required"}


async def test_an_endpoint_failing_too_long_is_disabled_and_a_hand_retry_delivers(
    app: Starlette, settings: Settings, receiver: Receiver
) -> None:
    strict = settings.model_copy(update={"webhook_disable_after_seconds": 0, "webhook_retry_schedule": "0"})
    async with _app(app, strict) as api:
        receiver.script = [500, 500]
        endpoint = await register(api, receiver.url)
        path = f"{ENDPOINTS}/{endpoint['id']}"
        disabled = await eventually(lambda: _status(api, path, "disabled"), "the endpoint to be disabled")
        assert disabled["enabled"] is False and "failing" in disabled["disabled_reason"]
        tried = await attempts(api, endpoint["id"])
        assert [a["delivered"] for a in tried] == [False, False]  # the schedule ("0") is spent: failed

        # The receiver is back (the script is spent): a hand retry delivers, over REST and GraphQL.
        resp = await api.post(f"{ENDPOINTS}/deliveries/{tried[-1]['id']}/retry")
        assert resp.status_code == 200, resp.text
        assert (resp.json()["data"]["delivered"], resp.json()["data"]["attempt"]) == (True, 3)
        body = await api.gql(
            "mutation ($id: UUID!) { retryWebhookDelivery(id: $id) { delivered attempt webhookId } }",
            {"id": tried[0]["id"]},
        )
        assert body["data"]["retryWebhookDelivery"] == {
            "delivered": True,
            "attempt": 4,
            "webhookId": tried[0]["webhook_id"],
        }
        assert len(set(receiver.ids())) == 1

        # Enabled again: healthy, and it goes on from the newest event.
        resp = await api.patch(path, {"enabled": True})
        assert (resp.json()["data"]["status"], resp.json()["data"]["disabled_reason"]) == ("healthy", None)


async def _status(api: Api, path: str, status: str) -> dict[str, Any] | None:
    data: dict[str, Any] = (await api.get(path)).json()["data"]
    return data if data["status"] == status else None


# ---- the SSRF guard at every delivery ----------------------------------------------------------------


@pytest.fixture
def dns(monkeypatch: pytest.MonkeyPatch) -> dict[str, list[str]]:
    """``rebind.test`` resolves to the next address of its list on every lookup (the last one stays)."""
    answers: dict[str, list[str]] = {}
    real = socket.getaddrinfo

    def fake(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        if host in answers:
            queue = answers[host]
            address = queue.pop(0) if len(queue) > 1 else queue[0]
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (address, int(port or 80)))]
        return real(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", fake)
    return answers


async def test_a_name_that_turns_private_after_registration_is_refused_at_delivery(
    app: Starlette, settings: Settings, receiver: Receiver, dns: dict[str, list[str]]
) -> None:
    strict = settings.model_copy(update={"webhook_allow_private_targets": False, "webhook_retry_schedule": "0"})
    async with _app(app, strict) as api:
        dns["rebind.test"] = ["93.184.215.14", "127.0.0.1"]  # public when registered, loopback after
        endpoint = await register(api, f"http://rebind.test:{receiver.port}/hooks", event_types=["workspace.created"])
        await create_workspace(api)
        tried = await eventually(lambda: _attempts_n(api, endpoint["id"], 2), "two refused attempts")
        assert all(not a["delivered"] and a["http_status"] is None for a in tried)
        # The delivery log says what the API says, never what the name resolved to.
        assert all(
            a["error"] == "refused: must be a host that resolves to public internet addresses only" for a in tried
        )
        assert receiver.received == []


async def test_the_connection_goes_to_the_address_that_was_checked(
    api: Api, receiver: Receiver, dns: dict[str, list[str]]
) -> None:
    # Registration looks once, the delivery once; a third lookup would get an address nobody listens at.
    dns["rebind.test"] = ["127.0.0.1", "127.0.0.1", "127.0.0.2"]
    endpoint = await register(api, f"http://rebind.test:{receiver.port}/hooks")
    tried = await eventually(lambda: _delivered(api, endpoint["id"]), "a delivery")
    assert [a["delivered"] for a in tried] == [True]
    assert receiver.received[0].headers["host"] == f"rebind.test:{receiver.port}"


async def _attempts_n(api: Api, endpoint_id: str, n: int) -> list[dict[str, Any]] | None:
    tried = await attempts(api, endpoint_id)
    return tried if len(tried) >= n else None


# ---- GraphQL ------------------------------------------------------------------------------------------

CREATE = """
mutation ($input: CreateWebhookEndpointInput!) {
  createWebhookEndpoint(input: $input) { secret endpoint { id url eventTypes enabled status } }
}"""
READ = """
query ($id: UUID!) {
  webhookEndpoint(id: $id) { id url description status deliveries { items { eventType delivered attempt } } }
  webhookEndpoints { items { id } pagination { total } }
}"""


async def test_graphql_runs_the_same_lifecycle(api: Api, receiver: Receiver) -> None:
    body = await api.gql(CREATE, {"input": {"url": receiver.url, "eventTypes": ["webhook_endpoint.updated"]}})
    created = body["data"]["createWebhookEndpoint"]
    assert created["secret"].startswith("whsec_")
    endpoint_id = created["endpoint"]["id"]
    assert created["endpoint"]["status"] == "HEALTHY"

    body = await api.gql(
        'mutation ($id: UUID!) { updateWebhookEndpoint(id: $id, input: {description: "gql"}) { description } }',
        {"id": endpoint_id},
    )
    assert body["data"]["updateWebhookEndpoint"] == {"description": "gql"}
    read = await eventually(lambda: _read_with_attempt(api, endpoint_id), "the update's recorded delivery")
    assert read["webhookEndpoint"]["deliveries"]["items"] == [
        {"eventType": "webhook_endpoint.updated", "delivered": True, "attempt": 1}
    ]
    assert read["webhookEndpoints"]["pagination"]["total"] == 1

    body = await api.gql(
        "mutation ($id: UUID!) { rotateWebhookEndpointSecret(id: $id) { secret } }", {"id": endpoint_id}
    )
    assert body["data"]["rotateWebhookEndpointSecret"]["secret"] != created["secret"]
    body = await api.gql("mutation ($id: UUID!) { deleteWebhookEndpoint(id: $id) { id } }", {"id": endpoint_id})
    assert body["data"]["deleteWebhookEndpoint"] == {"id": endpoint_id}
    gone = await api.gql(READ, {"id": endpoint_id})
    assert "errors" not in gone and gone["data"]["webhookEndpoint"] is None  # lookups answer null
    bad = await api.gql(CREATE, {"input": {"url": "ftp://x"}})
    assert gql_code(bad) == "BAD_USER_INPUT"


async def _read_with_attempt(api: Api, endpoint_id: str) -> dict[str, Any] | None:
    read: dict[str, Any] = (await api.gql(READ, {"id": endpoint_id}))["data"]
    return read if read["webhookEndpoint"]["deliveries"]["items"] else None


# ---- organisations ----------------------------------------------------------------------------------


async def test_another_organisation_sees_no_endpoint_delivery_or_event(
    api: Api, api_b: Api, receiver: Receiver
) -> None:
    endpoint = await register(api, receiver.url)
    await create_workspace(api_b)  # B's event: never sent to A's endpoint
    tried = await eventually(lambda: _delivered(api, endpoint["id"]), "A's own delivery")
    path = f"{ENDPOINTS}/{endpoint['id']}"
    for call in (
        api_b.get(path),
        api_b.patch(path, {"description": "mine"}),
        api_b.post(f"{path}/rotate-secret"),
        api_b.get(f"{path}/deliveries"),
        api_b.post(f"{ENDPOINTS}/deliveries/{tried[0]['id']}/retry"),
        api_b.delete(path),
    ):
        assert (await call).status_code == 404
    assert (await api_b.get(ENDPOINTS)).json()["data"] == []
    assert (await api_b.get("/api/v2/webhooks/deliveries")).json()["data"] == []
    theirs = await api_b.gql(READ, {"id": endpoint["id"]})
    assert "errors" not in theirs and theirs["data"]["webhookEndpoint"] is None
    assert [a["event_type"] for a in await attempts(api, endpoint["id"])] == ["webhook_endpoint.created"]
    assert (await api.get(path)).json()["data"]["description"] == ""


# ---- helpers -------------------------------------------------------------------------------------------


class _app:
    """Another app with other settings, on the same database, with its own key. The fixture app
    (which cleans the database after the test) stops its dispatcher: one schedule at a time."""

    def __init__(self, fixture_app: Starlette, settings: Settings) -> None:
        self.fixture_app = fixture_app
        self.app: Starlette = create_app(settings)

    async def __aenter__(self) -> Api:
        await self.fixture_app.state.dispatcher.stop(0)
        self._lifespan = self.app.router.lifespan_context(self.app)
        await self._lifespan.__aenter__()
        key = await create_api_key(self.app.state.db, f"org-{id(self)}")
        self._http = httpx.AsyncClient(transport=httpx.ASGITransport(app=self.app), base_url="http://testserver")
        return Api(self._http, key)

    async def __aexit__(self, *exc: object) -> None:
        await self._http.aclose()
        await self._lifespan.__aexit__(*exc)


# ---- what only an admin key reads: endpoint URLs in the log, attempts to endpoints -------------------

EVENT_READS = """query($id: UUID!) {
  events(first: 200) { items { id type data } }
  eventsConnection(first: 100) { edges { node { id type data } } }
  node(id: $id) { ... on Event { id data } }
}"""
DELIVERIES = "{ webhookDeliveries(perPage: 100) { items { endpointId eventType targetUrl payload } } }"


async def keyed_api(app: Starlette, api: Api, scope: str) -> Api:
    return Api(api.http, await create_api_key(app.state.db, "org-a", scope=scope))


async def test_endpoint_urls_in_the_log_are_for_admin_keys_only(app: Starlette, api: Api) -> None:
    from tests.test_events import assert_documented

    url = "http://127.0.0.1:9/hooks/secret-token-123"
    endpoint = await register(api, url)
    assert (await api.patch(f"{ENDPOINTS}/{endpoint['id']}", {"description": "x"})).status_code == 200
    admin_log = [e for e in await log_of(api) if e["subject_type"] == "webhook_endpoint"]
    assert [e["data"]["url"] for e in admin_log] == [url, url]
    for scope in ("read", "write"):
        other = await keyed_api(app, api, scope)
        seen = [e for e in await log_of(other) if e["subject_type"] == "webhook_endpoint"]
        assert [e["id"] for e in seen] == [e["id"] for e in admin_log]
        assert [e["data"] for e in seen] == [{**e["data"], "url": None} for e in admin_log]
        for event in seen:
            assert_documented(event)
        body = await other.gql(EVENT_READS, {"id": admin_log[0]["id"]})
        assert "errors" not in body, body
        assert "secret-token-123" not in json.dumps(body)
        hidden = [e for e in body["data"]["events"]["items"] if e["type"].startswith("webhook_endpoint.")]
        assert [e["data"]["url"] for e in hidden] == [None, None]
        edges = [e["node"] for e in body["data"]["eventsConnection"]["edges"]]
        assert [e["data"]["url"] for e in edges if e["type"].startswith("webhook_endpoint.")] == [None, None]
        assert body["data"]["node"]["data"]["url"] is None
    # The admin key still reads it, over GraphQL too: the log itself keeps it.
    body = await api.gql(EVENT_READS, {"id": admin_log[0]["id"]})
    assert body["data"]["node"]["data"]["url"] == url
    shown = [e for e in body["data"]["events"]["items"] if e["type"].startswith("webhook_endpoint.")]
    assert [e["data"]["url"] for e in shown] == [url, url]


async def test_attempts_to_endpoints_are_for_admin_keys_only(app: Starlette, api: Api, receiver: Receiver) -> None:
    reader, writer = await keyed_api(app, api, "read"), await keyed_api(app, api, "write")
    endpoint = await register(api, receiver.url)
    await eventually(lambda: _delivered(api, endpoint["id"]), "the endpoint's first delivery")
    # A test to a bare URL is the writer's own business; one to a registered endpoint is not.
    assert (await writer.post("/api/v2/webhooks/test", {"target_url": receiver.url})).status_code == 200
    refused = await writer.post("/api/v2/webhooks/test", {"endpoint_id": endpoint["id"]})
    assert refused.status_code == 403 and refused.json()["details"]["required_scope"] == "admin"

    everything = (await api.get("/api/v2/webhooks/deliveries")).json()
    assert sorted((d["endpoint_id"] is None, d["event_type"]) for d in everything["data"]) == [
        (False, "webhook_endpoint.created"),
        (True, "pack.published"),
    ]
    for other in (reader, writer):
        rest = (await other.get("/api/v2/webhooks/deliveries")).json()
        assert rest["pagination"]["total"] == 1
        assert [(d["endpoint_id"], d["event_type"]) for d in rest["data"]] == [(None, "pack.published")]
        gql = (await other.gql(DELIVERIES))["data"]["webhookDeliveries"]["items"]
        assert [(d["endpointId"], d["eventType"]) for d in gql] == [(None, "pack.published")]
        assert (await other.get(f"{ENDPOINTS}/{endpoint['id']}/deliveries")).status_code == 403
    admin = (await api.gql(DELIVERIES))["data"]["webhookDeliveries"]["items"]
    assert len(admin) == 2
