"""Who sees what through the PACT / iLEAP host: only a recipient's live publications, never an
unpublished pack, another recipient's or another organisation's; revocation and withdrawal end
access at the next request; the admin side is the organisation's own and an admin key's.
Black-box over HTTP, both databases."""

from __future__ import annotations

import asyncio
import logging
import uuid
from typing import Any

import pytest

from evidence_gateway.web.observability.logs import json_formatter
from tests.cli_inprocess import run_cli
from tests.conftest import Api
from tests.test_pact_host import ROWS, Client, pact_error, publish, published_pack, recipient

OTHER_ROWS = [{"external_id": "B-1", "mode": "road", "distance_km": 50, "mass_tonnes": 1}]


async def ids(client: Client, token: str | None = None) -> dict[str, set[str]]:
    """What the recipient reads: footprint ids on each major, TAD activity ids."""
    token = token or await client.token()
    out: dict[str, set[str]] = {}
    for path in ("/2/footprints", "/3/footprints", "/2/ileap/tad"):
        resp = await client.get(path, token)
        assert resp.status_code == 200, resp.text
        key = "activityId" if path.endswith("tad") else "id"
        out[path] = {item[key] for item in resp.json()["data"]}
    return out


async def test_a_recipient_sees_only_its_publications_and_never_an_unpublished_pack(api: Api) -> None:
    first, second = await published_pack(api), await published_pack(api, ROWS[:2])
    client, bystander = await recipient(api, "Customer"), await recipient(api, "Someone else")
    assert await ids(bystander) == {"/2/footprints": set(), "/3/footprints": set(), "/2/ileap/tad": set()}
    await publish(api, client, first)
    only_first = await ids(client)
    assert all(only_first.values())
    await publish(api, client, second)
    both = await ids(client)
    assert all(both[p] > only_first[p] for p in both)  # the second pack adds its own footprints
    # The other recipient of the same organisation still sees nothing, and cannot reach them by id.
    assert await ids(bystander) == {"/2/footprints": set(), "/3/footprints": set(), "/2/ileap/tad": set()}
    token = await bystander.token()
    for footprint_id in both["/2/footprints"]:
        pact_error(await bystander.get(f"/2/footprints/{footprint_id}", token), 404, "NoSuchFootprint")
        pact_error(await bystander.get(f"/3/footprints/{footprint_id}", token), 404, "NotFound")


async def test_another_organisation_s_recipient_sees_only_its_own_organisation_s_packs(api: Api, api_b: Api) -> None:
    pack_a, pack_b = await published_pack(api), await published_pack(api_b, OTHER_ROWS)
    client_a, client_b = await recipient(api), await recipient(api_b)
    await publish(api, client_a, pack_a)
    await publish(api_b, client_b, pack_b)
    seen_a, seen_b = await ids(client_a), await ids(client_b)
    assert all(seen_a[p] and seen_b[p] and not seen_a[p] & seen_b[p] for p in seen_a)
    token_b = await client_b.token()
    for footprint_id in seen_a["/2/footprints"]:
        pact_error(await client_b.get(f"/2/footprints/{footprint_id}", token_b), 404, "NoSuchFootprint")
    # Organisation B cannot publish A's pack, nor act on A's recipients and publications.
    refused = await api_b.post(
        "/api/sharing/publications", {"recipient_id": client_b.recipient_id, "pack_id": pack_a["id"]}
    )
    assert refused.status_code == 422 and "pack_id" in refused.json()["details"]["fields"]
    cross = await api_b.post(
        "/api/sharing/publications", {"recipient_id": client_a.recipient_id, "pack_id": pack_b["id"]}
    )
    assert cross.status_code == 422 and "recipient_id" in cross.json()["details"]["fields"]
    assert (await api_b.post(f"/api/sharing/recipients/{client_a.recipient_id}/revoke")).status_code == 404
    listed = (await api_b.get("/api/sharing/recipients")).json()["data"]
    assert [r["id"] for r in listed] == [client_b.recipient_id]
    publications_a = (await api.get("/api/sharing/publications")).json()["data"]
    (publication_a,) = publications_a
    assert (await api_b.post(f"/api/sharing/publications/{publication_a['id']}/withdraw")).status_code == 404
    assert await ids(client_a) == seen_a


async def test_a_withdrawn_publication_is_gone_and_publishing_again_brings_it_back(api: Api) -> None:
    pack = await published_pack(api)
    client = await recipient(api)
    publication = await publish(api, client, pack)
    token = await client.token()
    before = await ids(client, token)
    withdrawn = await api.post(f"/api/sharing/publications/{publication['id']}/withdraw")
    assert withdrawn.status_code == 200 and withdrawn.json()["data"]["published"] is False
    assert await ids(client, token) == {"/2/footprints": set(), "/3/footprints": set(), "/2/ileap/tad": set()}
    for footprint_id in before["/2/footprints"]:
        pact_error(await client.get(f"/2/footprints/{footprint_id}", token), 404, "NoSuchFootprint")
    again = await publish(api, client, pack)
    assert again["id"] == publication["id"] and again["published"] is True
    assert await ids(client, token) == before
    # Publishing what is already published changes nothing and writes no event.
    events = (await api.get("/api/v2/events", params={"limit": 100})).json()["data"]
    before_events = [e["type"] for e in events]
    assert (
        await api.post("/api/sharing/publications", {"recipient_id": client.recipient_id, "pack_id": pack["id"]})
    ).status_code == 201
    after = [e["type"] for e in (await api.get("/api/v2/events", params={"limit": 100})).json()["data"]]
    assert after == before_events
    assert before_events[-3:] == ["publication.created", "publication.withdrawn", "publication.created"]


async def test_a_revoked_recipient_gets_no_token_and_its_tokens_stop_working(api: Api) -> None:
    pack = await published_pack(api)
    client = await recipient(api)
    await publish(api, client, pack)
    token = await client.token()
    revoked = await api.post(f"/api/sharing/recipients/{client.recipient_id}/revoke")
    assert revoked.status_code == 200 and revoked.json()["data"]["revoked"] is True
    refused = await client.token_response()
    assert refused.status_code == 401 and refused.json()["error"] == "invalid_client"
    pact_error(await client.get("/2/footprints", token), 400, "BadRequest")
    pact_error(await client.get("/2/ileap/tad", token), 403, "AccessDenied")
    # And it cannot be published to any more.
    again = await api.post("/api/sharing/publications", {"recipient_id": client.recipient_id, "pack_id": pack["id"]})
    assert again.status_code == 409


async def test_the_client_secret_is_shown_once_and_the_admin_side_needs_an_admin_key(api: Api) -> None:
    client = await recipient(api)
    listed = (await api.get("/api/sharing/recipients")).json()["data"]
    assert listed == [
        {"id": client.recipient_id, "name": "Customer GmbH", "client_id": client.client_id,
         "created_at": listed[0]["created_at"], "revoked_at": None, "host": None, "revoked": False}
    ]  # fmt: skip
    made = await api.gql("mutation { createApiKey(input: {scope: READ}) { key } }")
    read_key = made["data"]["createApiKey"]["key"]
    for method, path in (("GET", "/api/sharing/recipients"), ("POST", "/api/sharing/recipients")):
        resp = await api.http.request(method, path, json={"name": "x"}, headers={"Authorization": f"Bearer {read_key}"})
        assert resp.status_code == 403 and resp.json()["details"]["code"] == "insufficient_scope"
    assert (await api.get("/api/sharing/recipients", key=None)).status_code == 401
    bad = await api.post("/api/sharing/recipients", {"name": "  "})
    assert bad.status_code == 422 and "name" in bad.json()["details"]["fields"]


async def test_a_pack_is_published_only_once_its_files_exist(api: Api) -> None:
    client = await recipient(api)
    unknown = await api.post(
        "/api/sharing/publications", {"recipient_id": client.recipient_id, "pack_id": str(uuid.uuid4())}
    )
    assert unknown.status_code == 422 and "pack_id" in unknown.json()["details"]["fields"]
    malformed = await api.post("/api/sharing/publications", {"recipient_id": "nope", "pack_id": 3})
    assert malformed.status_code == 422 and set(malformed.json()["details"]["fields"]) == {"recipient_id", "pack_id"}


async def test_exchange_answers_carry_request_ids_and_rate_limit_headers_and_logs_hold_no_secret(
    api: Api, caplog: pytest.LogCaptureFixture
) -> None:
    pack = await published_pack(api)
    client = await recipient(api)
    await publish(api, client, pack)
    caplog.set_level(logging.DEBUG)
    token = await client.token()
    for path in ("/2/footprints", "/3/footprints", "/2/ileap/tad"):
        resp = await client.http.get(path, headers={"Authorization": f"Bearer {token}", "X-Request-ID": "pact-req-1"})
        assert resp.headers["X-Request-ID"] == "pact-req-1" and "RateLimit" in resp.headers
    event = {"type": "org.wbcsd.pathfinder.ProductFootprintRequest.Created.v1", "specversion": "1.0", "id": "r1",
             "source": "//x/y", "data": {"pf": {"productIds": ["urn:x"]}}}  # fmt: skip
    resp = await client.http.post("/2/events", json=event, headers={"Authorization": f"Bearer {token}"})
    assert resp.status_code == 200
    await client.token_response(secret="evcs_" + "1" * 48)
    formatter = json_formatter()
    written = "\n".join(formatter.format(record) for record in caplog.records)
    assert "request" in written  # the access lines were captured
    for secret in (token, token.split(".")[2], client.client_secret, client.client_secret[5:]):
        assert secret not in written


async def test_wrong_client_credentials_count_as_failed_authentications(configured: Any) -> None:
    async with configured(rate_limits=True, rate_limit_auth_failures=2) as other:
        client = await recipient(other)
        statuses = [(await client.token_response(secret="evcs_" + "2" * 48)).status_code for _ in range(3)]
        assert statuses == [401, 401, 429]
        statuses = [(await client.get("/2/footprints", "garbage")).status_code for _ in range(1)]
        assert statuses == [429]


async def test_the_recipient_api_is_not_an_api_key_api(api: Api) -> None:
    """An API key is not an access token, and an access token opens nothing under /api."""
    resp = await api.get("/2/footprints")
    pact_error(resp, 400, "BadRequest")
    pack = await published_pack(api)
    client = await recipient(api)
    await publish(api, client, pack)
    token = await client.token()
    assert (await api.http.get("/api/v2/workspaces", headers={"Authorization": f"Bearer {token}"})).status_code == 401


async def test_graphql_admin_does_what_rest_does(api: Api, api_b: Api) -> None:
    pack = await published_pack(api)
    made = await api.gql(
        'mutation { createDataRecipient(name: "Shipper AG") { clientSecret recipient { id clientId revokedAt } } }'
    )
    created = made["data"]["createDataRecipient"]
    client = Client(api.http, created["recipient"]["clientId"], created["clientSecret"], created["recipient"]["id"])
    published = await api.gql(
        "mutation($r: UUID!, $p: UUID!) { publishPack(recipientId: $r, packId: $p) { id packId withdrawnAt } }",
        {"r": client.recipient_id, "p": pack["id"]},
    )
    publication = published["data"]["publishPack"]
    assert publication["packId"] == pack["id"] and publication["withdrawnAt"] is None
    assert all((await ids(client)).values())
    listed = await api.gql("{ dataRecipients { id name } publications { id recipientId } }")
    assert listed["data"] == {
        "dataRecipients": [{"id": client.recipient_id, "name": "Shipper AG"}],
        "publications": [{"id": publication["id"], "recipientId": client.recipient_id}],
    }
    assert (await api_b.gql("{ dataRecipients { id } publications { id } }"))["data"] == {
        "dataRecipients": [],
        "publications": [],
    }
    other = await api_b.gql("mutation($id: UUID!) { withdrawPublication(id: $id) { id } }", {"id": publication["id"]})
    assert other["errors"][0]["extensions"]["code"] == "NOT_FOUND"
    withdrawn = await api.gql(
        "mutation($id: UUID!) { withdrawPublication(id: $id) { withdrawnAt } }", {"id": publication["id"]}
    )
    assert withdrawn["data"]["withdrawPublication"]["withdrawnAt"]
    assert not any((await ids(client)).values())
    revoked = await api.gql(
        "mutation($id: UUID!) { revokeDataRecipient(id: $id) { revokedAt } }", {"id": client.recipient_id}
    )
    assert revoked["data"]["revokeDataRecipient"]["revokedAt"]
    assert (await client.token_response()).status_code == 401


async def test_the_command_line_creates_publishes_withdraws_and_revokes(
    api: Api, api_b: Api, database_url: str
) -> None:
    url = database_url.replace("+aiosqlite", "").replace("+asyncpg", "")
    pack = await published_pack(api)
    made = run_cli("recipients", "create", "--org", "org-a", "--name", "Forwarder BV", "--database-url", url)
    assert made.returncode == 0, made.stderr
    client_id, secret = made.stdout.split()
    listed = run_cli("recipients", "list", "--org", "org-a", "--database-url", url)
    header, row = listed.stdout.splitlines()
    assert header.split("\t") == ["id", "client_id", "created", "revoked", "name"]
    recipient_id = row.split("\t")[0]
    assert row.split("\t")[1:2] == [client_id] and row.endswith("Forwarder BV") and secret not in listed.stdout
    client = Client(api.http, client_id, secret, recipient_id)
    assert not any((await ids(client)).values())
    shared = run_cli("recipients", "publish", "--org", "org-a", "--recipient", recipient_id, "--pack", pack["id"],
                     "--database-url", url)  # fmt: skip
    assert shared.returncode == 0, shared.stderr
    publication_id = shared.stdout.strip()
    assert all((await ids(client)).values())
    publications = run_cli("recipients", "publications", "--org", "org-a", "--database-url", url).stdout
    assert publication_id in publications and pack["id"] in publications
    other = run_cli("recipients", "withdraw", publication_id, "--org", "org-b", "--database-url", url)
    assert other.returncode == 1 and "not found" in other.stderr  # another organisation's publication
    withdrawn = run_cli("recipients", "withdraw", publication_id, "--org", "org-a", "--database-url", url)
    assert withdrawn.returncode == 0 and not any((await ids(client)).values())
    revoked = run_cli("recipients", "revoke", recipient_id, "--org", "org-a", "--database-url", url)
    assert revoked.returncode == 0 and client_id in revoked.stdout
    assert (await client.token_response()).status_code == 401
    events = [e for e in (await api.get("/api/v2/events", params={"limit": 100})).json()["data"] if e["actor"] is None]
    assert [e["type"] for e in events][-4:] == [
        "data_recipient.created", "publication.created", "publication.withdrawn", "data_recipient.revoked"
    ]  # fmt: skip


async def test_a_replayed_creation_makes_one_recipient_and_never_shows_its_secret_again(api: Api) -> None:
    headers = {"Idempotency-Key": "customer-1"}
    first = await api.post("/api/sharing/recipients", {"name": "Customer"}, headers=headers)
    again = await api.post("/api/sharing/recipients", {"name": "Customer"}, headers=headers)
    assert first.status_code == again.status_code == 201 and again.headers["Idempotent-Replayed"] == "true"
    made, replayed = first.json()["data"], again.json()["data"]
    assert made["client_secret"].startswith("evcs_")
    assert replayed == {**made, "client_secret": None, "client_secret_withheld": True}
    assert len((await api.get("/api/sharing/recipients")).json()["data"]) == 1
    query = 'mutation { createDataRecipient(name: "Other") { clientSecret recipient { id } } }'
    keyed = {"Idempotency-Key": "customer-2", "Authorization": f"Bearer {api.key}"}
    gql_first = await api.http.post("/graphql", json={"query": query}, headers=keyed)
    gql_again = await api.http.post("/graphql", json={"query": query}, headers=keyed)
    assert gql_first.json()["data"]["createDataRecipient"]["clientSecret"].startswith("evcs_")
    assert gql_again.json()["data"]["createDataRecipient"]["clientSecret"] is None
    assert gql_again.json()["extensions"]["withheld"][0]["path"] == ["createDataRecipient", "clientSecret"]


async def test_concurrent_publications_of_one_pack_make_one_publication_and_one_event(api: Api) -> None:
    pack = await published_pack(api)
    client = await recipient(api)
    body = {"recipient_id": client.recipient_id, "pack_id": pack["id"]}
    answers = await asyncio.gather(*(api.post("/api/sharing/publications", body) for _ in range(6)))
    assert {a.status_code for a in answers} == {201}
    assert len({a.json()["data"]["id"] for a in answers}) == 1
    events = (await api.get("/api/v2/events", params={"limit": 100})).json()["data"]
    assert [e["type"] for e in events].count("publication.created") == 1
