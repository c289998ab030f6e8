"""Idempotency-Key (DESIGN.md §14): one change per key, the stored answer replayed, refusals."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest
from sqlalchemy import func, select

from evidence_gateway.core import checkpoints
from evidence_gateway.models import CalculationRun, IdempotencyRecord, ImportBatch, Shipment, Workspace
from evidence_gateway.resolvers.organizations import create_api_key
from tests.conftest import Api, create_workspace, gql_code
from tests.gates import Gate
from tests.test_packs import ROWS


def db_of(api: Api) -> Any:
    return api.http._transport.app.state.db  # type: ignore[attr-defined]


async def count(api: Api, model: Any, *where: Any) -> int:
    async with db_of(api).read() as session:
        return int((await session.execute(select(func.count()).select_from(model).where(*where))).scalar_one())


def keyed(key: str) -> dict[str, str]:
    return {"Idempotency-Key": key}


async def test_same_key_twice_creates_one_workspace_and_replays_the_answer(api: Api) -> None:
    body = {"name": "Retried"}
    first = await api.post("/api/v2/workspaces", body, headers=keyed("create-1"))
    again = await api.post("/api/v2/workspaces", body, headers=keyed("create-1"))
    assert first.status_code == again.status_code == 201
    assert again.headers["Idempotent-Replayed"] == "true"
    assert "Idempotent-Replayed" not in first.headers
    assert again.content == first.content
    assert again.headers["Location"] == first.headers["Location"]
    assert await count(api, Workspace) == 1


async def test_same_key_other_body_is_refused_with_422(api: Api) -> None:
    assert (await api.post("/api/v2/workspaces", {"name": "A"}, headers=keyed("k"))).status_code == 201
    resp = await api.post("/api/v2/workspaces", {"name": "B"}, headers=keyed("k"))
    assert resp.status_code == 422
    assert resp.json()["details"]["code"] == "idempotency_key_reused"
    assert await count(api, Workspace) == 1


async def test_same_key_on_another_path_is_another_request(api: Api) -> None:
    ws = await create_workspace(api)
    resp = await api.post(f"/api/v2/workspaces/{ws['id']}/calculate", {"name": "x"}, headers=keyed("k2"))
    assert resp.status_code == 409  # no data: refused, so the key is free again
    again = await api.post("/api/v2/workspaces", {"name": "x"}, headers=keyed("k2"))
    assert again.status_code == 201


async def test_keys_are_scoped_to_the_organisation(api: Api, api_b: Api) -> None:
    a = await api.post("/api/v2/workspaces", {"name": "Same"}, headers=keyed("shared"))
    b = await api_b.post("/api/v2/workspaces", {"name": "Same"}, headers=keyed("shared"))
    assert a.status_code == b.status_code == 201
    assert "Idempotent-Replayed" not in b.headers
    assert a.json()["data"]["id"] != b.json()["data"]["id"]


@pytest.mark.parametrize("bad", ["", "x" * 256, "tab\tkey", "del\x7fkey"])
async def test_malformed_key_is_400(api: Api, bad: str) -> None:
    resp = await api.post("/api/v2/workspaces", {"name": "A"}, headers={"Idempotency-Key": bad})
    assert resp.status_code == 400
    assert resp.json()["details"]["header"] == "Idempotency-Key"
    assert await count(api, Workspace) == 0


async def test_a_refused_request_frees_its_key(api: Api) -> None:
    resp = await api.post("/api/v2/workspaces", {"name": ""}, headers=keyed("fix-me"))
    assert resp.status_code == 422
    fixed = await api.post("/api/v2/workspaces", {"name": ""}, headers=keyed("fix-me"))
    assert fixed.status_code == 422 and "Idempotent-Replayed" not in fixed.headers


async def test_retried_50k_row_import_stores_one_batch(api: Api) -> None:
    ws = await create_workspace(api)
    rows = [{**ROWS[i % 3], "external_id": f"R{i}"} for i in range(50_000)]
    body = {"source_row_count": len(rows), "source_filename": "big.csv", "shipments": rows}
    path = f"/api/v2/workspaces/{ws['id']}/imports"
    first = await api.post(path, body, headers=keyed("import-q1"))
    retry = await api.post(path, body, headers=keyed("import-q1"))
    assert first.status_code == retry.status_code == 201
    assert retry.headers["Idempotent-Replayed"] == "true"
    assert retry.json() == first.json()
    assert await count(api, ImportBatch) == 1
    assert await count(api, Shipment) == 50_000
    calc = await api.post(f"/api/v2/workspaces/{ws['id']}/calculate")
    assert calc.json()["data"]["calculation_run"]["shipment_count"] == 50_000


async def test_twin_requests_with_one_key_make_exactly_one_change(api: Api, gate: Callable[..., Gate]) -> None:
    ws = await create_workspace(api)
    body = {"source_row_count": 3, "shipments": ROWS[:3]}
    assert (await api.post(f"/api/v2/workspaces/{ws['id']}/imports", body)).status_code == 201
    held = gate(checkpoints.CALCULATION_STARTED)
    path = f"/api/v2/workspaces/{ws['id']}/calculate"
    first = asyncio.create_task(api.post(path, headers=keyed("calc-1")))
    await held.wait_reached()
    twin = await api.post(path, headers=keyed("calc-1"))
    assert twin.status_code == 409
    assert twin.json()["details"]["code"] == "idempotency_key_in_use"
    held.open()
    done = await first
    assert done.status_code == 200
    replay = await api.post(path, headers=keyed("calc-1"))
    assert replay.status_code == 200 and replay.headers["Idempotent-Replayed"] == "true"
    assert replay.content == done.content
    assert await count(api, CalculationRun) == 1


async def test_concurrent_twins_without_a_barrier_still_change_once(api: Api) -> None:
    results = await asyncio.gather(
        *(api.post("/api/v2/workspaces", {"name": "Race"}, headers=keyed("race")) for _ in range(6))
    )
    statuses = sorted(r.status_code for r in results)
    assert set(statuses) <= {201, 409}
    assert await count(api, Workspace) == 1
    ids = {r.json()["data"]["id"] for r in results if r.status_code == 201}
    assert len(ids) == 1


# ---- GraphQL ------------------------------------------------------------------------------------

CREATE = "mutation($n: String!) { createWorkspace(input: {name: $n}) { id name } }"


async def gql_keyed(api: Api, query: str, variables: dict[str, Any], key: str) -> Any:
    return await api.http.post(
        "/graphql",
        json={"query": query, "variables": variables},
        headers={"Authorization": f"Bearer {api.key}", "Idempotency-Key": key},
    )


async def test_graphql_single_mutation_honours_the_key(api: Api) -> None:
    first = await gql_keyed(api, CREATE, {"n": "G"}, "g-1")
    again = await gql_keyed(api, CREATE, {"n": "G"}, "g-1")
    assert first.status_code == again.status_code == 200
    assert again.headers["Idempotent-Replayed"] == "true"
    assert again.json() == first.json()
    assert await count(api, Workspace) == 1
    other = await gql_keyed(api, CREATE, {"n": "H"}, "g-1")
    assert gql_code(other.json()) == "BAD_USER_INPUT"
    assert other.status_code == 422


async def test_graphql_key_with_two_mutation_fields_is_refused(api: Api) -> None:
    doc = 'mutation { a: createWorkspace(input: {name: "a"}) { id } b: createWorkspace(input: {name: "b"}) { id } }'
    resp = await gql_keyed(api, doc, {}, "g-2")
    assert resp.status_code == 400
    assert gql_code(resp.json()) == "BAD_USER_INPUT"
    assert await count(api, Workspace) == 0


async def test_graphql_failed_mutation_frees_the_key(api: Api) -> None:
    bad = await gql_keyed(api, CREATE, {"n": ""}, "g-3")
    assert gql_code(bad.json()) == "BAD_USER_INPUT"
    good = await gql_keyed(api, CREATE, {"n": "ok"}, "g-3")
    assert good.json()["data"]["createWorkspace"]["name"] == "ok"


# ---- a stored answer belongs to the API key that made it; secrets are never stored ---------------

ENDPOINTS = "/api/v2/webhook-endpoints"
DEAD = {"url": "http://127.0.0.1:9/hook?token=capability"}


async def other_key(api: Api, scope: str) -> Api:
    """Another key of organisation A (the ``api`` fixture's), of ``scope``."""
    return Api(api.http, await create_api_key(db_of(api), "org-a", scope=scope, name=f"{scope} key"))


async def stored_answers(api: Api) -> bytes:
    """Everything the idempotency records hold, as one blob: no secret may be in it."""
    async with db_of(api).read() as session:
        rows = (await session.execute(select(IdempotencyRecord.response_body))).scalars()
        return b"\n".join(r or b"" for r in rows)


async def test_an_endpoint_replay_answers_its_own_key_only_and_without_the_secret(api: Api) -> None:
    reader, writer = await other_key(api, "read"), await other_key(api, "write")
    first = await api.post(ENDPOINTS, DEAD, headers=keyed("ep-1"))
    assert first.status_code == 201, first.text
    secret = first.json()["data"]["secret"]
    assert secret.startswith("whsec_") and first.json()["data"]["secret_withheld"] is False

    # Another key sending the same key and request is a fresh request: checked like one.
    for other, scope in ((reader, "read"), (writer, "write")):
        refused = await other.post(ENDPOINTS, DEAD, headers=keyed("ep-1"))
        assert refused.status_code == 403, refused.text
        assert refused.json()["details"]["key_scope"] == scope
        assert "Idempotent-Replayed" not in refused.headers and "whsec_" not in refused.text

    replay = await api.post(ENDPOINTS, DEAD, headers=keyed("ep-1"))
    assert replay.status_code == 201 and replay.headers["Idempotent-Replayed"] == "true"
    assert replay.headers["Location"] == first.headers["Location"]
    answer = replay.json()["data"]
    assert (answer["secret"], answer["secret_withheld"]) == (None, True)
    assert {k: v for k, v in answer.items() if not k.startswith("secret")} == {
        k: v for k, v in first.json()["data"].items() if not k.startswith("secret")
    }
    assert (await api.get(ENDPOINTS)).json()["pagination"]["total"] == 1
    assert secret.encode() not in await stored_answers(api)


async def test_a_rotation_replay_needs_the_same_key_and_shows_no_secret(api: Api) -> None:
    reader = await other_key(api, "read")
    endpoint = (await api.post(ENDPOINTS, DEAD)).json()["data"]
    path = f"{ENDPOINTS}/{endpoint['id']}/rotate-secret"
    first = await api.post(path, headers=keyed("rot-1"))  # no body: the key is all a replay needs
    assert first.status_code == 200, first.text
    rotated = first.json()["data"]
    # A read key with the admin's key is refused as any read key is: no secret, no replay.
    refused = await reader.post(path, headers=keyed("rot-1"))
    assert refused.status_code == 403 and "whsec_" not in refused.text
    replay = await api.post(path, headers=keyed("rot-1"))
    assert replay.status_code == 200 and replay.headers["Idempotent-Replayed"] == "true"
    assert replay.json()["data"] == {**rotated, "secret": None, "secret_withheld": True}
    # Nothing ran again: still the rotation of the first answer.
    now = (await api.get(f"{ENDPOINTS}/{endpoint['id']}")).json()["data"]
    assert now["updated_at"] == rotated["updated_at"]
    assert rotated["secret"].encode() not in await stored_answers(api)


async def test_a_write_keys_answer_is_not_replayed_to_another_key(api: Api) -> None:
    reader, writer = await other_key(api, "read"), await other_key(api, "write")
    body = {"name": "Written"}
    first = await writer.post("/api/v2/workspaces", body, headers=keyed("w-1"))
    assert first.status_code == 201
    refused = await reader.post("/api/v2/workspaces", body, headers=keyed("w-1"))
    assert refused.status_code == 403 and "Idempotent-Replayed" not in refused.headers
    # An admin key of the same organisation: its own request, run (keys are per API key).
    own = await api.post("/api/v2/workspaces", body, headers=keyed("w-1"))
    assert own.status_code == 201 and "Idempotent-Replayed" not in own.headers
    assert own.json()["data"]["id"] != first.json()["data"]["id"]
    replay = await writer.post("/api/v2/workspaces", body, headers=keyed("w-1"))
    assert replay.headers["Idempotent-Replayed"] == "true" and replay.content == first.content
    assert await count(api, Workspace) == 2


CREATE_ENDPOINT = "mutation($u: String!) { createWebhookEndpoint(input: {url: $u}) { s: secret endpoint { id url } } }"
ROTATE = "mutation($id: UUID!) { rotateWebhookEndpointSecret(id: $id) { secret endpoint { id updatedAt } } }"


async def test_graphql_endpoint_replays_check_the_key_and_withhold_the_secret(api: Api) -> None:
    reader = await other_key(api, "read")
    first = await gql_keyed(api, CREATE_ENDPOINT, {"u": DEAD["url"]}, "g-ep")
    created = first.json()["data"]["createWebhookEndpoint"]
    assert created["s"].startswith("whsec_")
    refused = await gql_keyed(reader, CREATE_ENDPOINT, {"u": DEAD["url"]}, "g-ep")
    assert gql_code(refused.json()) == "FORBIDDEN" and refused.json()["data"] is None
    assert "Idempotent-Replayed" not in refused.headers

    replay = await gql_keyed(api, CREATE_ENDPOINT, {"u": DEAD["url"]}, "g-ep")
    assert replay.headers["Idempotent-Replayed"] == "true"
    assert replay.json()["data"] == {"createWebhookEndpoint": {**created, "s": None}}
    assert replay.json()["extensions"]["withheld"] == [
        {"path": ["createWebhookEndpoint", "s"], "reason": "shown once, in the first answer"}
    ]
    assert (await api.get(ENDPOINTS)).json()["pagination"]["total"] == 1

    endpoint_id = created["endpoint"]["id"]
    rotated = (await gql_keyed(api, ROTATE, {"id": endpoint_id}, "g-rot")).json()["data"]
    refused = await gql_keyed(reader, ROTATE, {"id": endpoint_id}, "g-rot")
    assert gql_code(refused.json()) == "FORBIDDEN" and "whsec_" not in refused.text
    again = (await gql_keyed(api, ROTATE, {"id": endpoint_id}, "g-rot")).json()
    assert again["data"]["rotateWebhookEndpointSecret"] == {**rotated["rotateWebhookEndpointSecret"], "secret": None}
    stored = await stored_answers(api)
    assert b"whsec_" not in stored and created["s"].encode() not in stored


# ---- API keys: one key per Idempotency-Key, an event each, the secret shown once -------------------

CREATE_KEY = 'mutation { createApiKey(input: {scope: WRITE, name: "ci"}) { key apiKey { id displayPrefix } } }'
REVOKE_KEY = "mutation($id: UUID!) { revokeApiKey(id: $id) { id revokedAt } }"


async def key_events(api: Api) -> list[dict[str, Any]]:
    events = (await api.get("/api/v2/events", params={"limit": 200})).json()["data"]
    return [e for e in events if e["subject_type"] == "api_key"]


async def test_create_api_key_retried_with_one_key_mints_one_key(api: Api) -> None:
    first = await gql_keyed(api, CREATE_KEY, {}, "mint-1")
    made = first.json()["data"]["createApiKey"]
    assert made["key"].startswith("evk_")
    retry = await gql_keyed(api, CREATE_KEY, {}, "mint-1")
    assert retry.status_code == 200 and retry.headers["Idempotent-Replayed"] == "true"
    assert retry.json()["data"] == {"createApiKey": {**made, "key": None}}
    assert retry.json()["extensions"]["withheld"][0]["path"] == ["createApiKey", "key"]
    listed = (await api.gql("{ apiKeys { id name } }"))["data"]["apiKeys"]
    assert [k["id"] for k in listed if k["name"] == "ci"] == [made["apiKey"]["id"]]
    assert made["key"].encode() not in await stored_answers(api)
    # The key works; the retry made none.
    assert (await api.post("/api/v2/workspaces", {"name": "ci"}, key=made["key"])).status_code == 201

    [created] = await key_events(api)
    assert (created["type"], created["subject_id"], created["actor"]) == (
        "api_key.created",
        made["apiKey"]["id"],
        (await api.gql("{ apiKeys { id name } }"))["data"]["apiKeys"][0]["id"],  # the fixture's key
    )
    assert created["data"]["display_prefix"] == made["apiKey"]["displayPrefix"]
    assert (created["data"]["scope"], created["data"]["revoked_at"]) == ("write", None)
    assert "key" not in created["data"] and "key_hash" not in created["data"]

    revoked = await gql_keyed(api, REVOKE_KEY, {"id": made["apiKey"]["id"]}, "revoke-1")
    again = await gql_keyed(api, REVOKE_KEY, {"id": made["apiKey"]["id"]}, "revoke-1")
    assert again.headers["Idempotent-Replayed"] == "true" and again.json() == revoked.json()
    assert (await api.get("/api/v2/workspaces", key=made["key"])).status_code == 401
    # Revoking a revoked key (another Idempotency-Key, or none) changes nothing: no second event.
    assert (await api.gql(REVOKE_KEY, {"id": made["apiKey"]["id"]}))["data"]["revokeApiKey"]["revokedAt"]
    assert [e["type"] for e in await key_events(api)] == ["api_key.created", "api_key.revoked"]
    stamp = revoked.json()["data"]["revokeApiKey"]["revokedAt"].replace("+00:00", "Z")
    assert (await key_events(api))[1]["data"]["revoked_at"] == stamp


async def test_a_read_key_cannot_replay_an_admins_new_api_key(api: Api) -> None:
    reader = await other_key(api, "read")
    made = (await gql_keyed(api, CREATE_KEY, {}, "mint-2")).json()["data"]["createApiKey"]
    refused = await gql_keyed(reader, CREATE_KEY, {}, "mint-2")
    assert gql_code(refused.json()) == "FORBIDDEN" and made["key"] not in refused.text
    assert len([e for e in await key_events(api) if e["type"] == "api_key.created"]) == 2  # the reader, the new one
