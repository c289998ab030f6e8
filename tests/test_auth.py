"""Every path and every GraphQL data field needs a valid key; all refusals look alike."""

from __future__ import annotations

import pytest

from evidence_gateway.auth import hash_key
from tests.conftest import Api, error_body, gql_code

WS = "6d1f2b9e-3c4a-4e8b-9f70-1a2b3c4d5e6f"  # a fixed id: test ids must be the same in every collecting process
PATHS = [
    ("GET", "/api/v2/workspaces"),
    ("POST", "/api/v2/workspaces"),
    ("GET", f"/api/v2/workspaces/{WS}"),
    ("POST", f"/api/v2/workspaces/{WS}/imports"),
]
BAD_KEYS = {
    "missing": None,
    "malformed": "not-a-key",
    "wrong prefix": "abc_" + "0" * 48,
    "uppercase hex": "evk_" + "A" * 48,
    "unknown": "evk_" + "0" * 48,
}


@pytest.mark.parametrize(("method", "path"), PATHS)
@pytest.mark.parametrize("case", list(BAD_KEYS))
async def test_rest_refuses_without_valid_key(api: Api, method: str, path: str, case: str) -> None:
    resp = await api.http.request(
        method,
        path,
        json={"name": "x"},
        headers={"Authorization": f"Bearer {BAD_KEYS[case]}"} if BAD_KEYS[case] else {},
    )
    assert resp.status_code == 401
    assert error_body(resp) == {"error": "missing or invalid API key", "details": {"code": "unauthenticated"}}


async def test_revoked_key_is_refused(api: Api) -> None:
    from sqlalchemy import update

    from evidence_gateway.core.timeutil import utcnow
    from evidence_gateway.models import ApiKey

    assert (await api.get("/api/v2/workspaces")).status_code == 200
    db = api.http._transport.app.state.db  # type: ignore[attr-defined]
    async with db.write() as session:
        await session.execute(update(ApiKey).where(ApiKey.key_hash == hash_key(api.key)).values(revoked_at=utcnow()))
    resp = await api.get("/api/v2/workspaces")
    assert resp.status_code == 401
    assert resp.json()["details"]["code"] == "unauthenticated"


async def test_key_is_stored_only_as_hash(api: Api) -> None:
    from sqlalchemy import select

    from evidence_gateway.models import ApiKey

    db = api.http._transport.app.state.db  # type: ignore[attr-defined]
    async with db.read() as session:
        keys = (await session.execute(select(ApiKey))).scalars().all()
    assert api.key not in {k.key_hash for k in keys}
    assert hash_key(api.key) in {k.key_hash for k in keys}
    assert api.key is not None and api.key.startswith("evk_") and len(api.key) == 52


@pytest.mark.parametrize(
    "query",
    [
        "{ workspaces { items { id } } }",
        f'{{ workspace(id: "{WS}") {{ id }} }}',
        'mutation { createWorkspace(input: {name: "x"}) { id } }',
        f'mutation {{ registerImport(workspaceId: "{WS}", input: {{sourceRowCount: 1}}) {{ id }} }}',
    ],
)
@pytest.mark.parametrize("case", ["missing", "malformed", "unknown"])
async def test_graphql_refuses_without_valid_key(api: Api, query: str, case: str) -> None:
    """200 with the GraphQL body (a typed client keeps it) and the challenge header (docs/graphql.md)."""
    resp = await api.http.post("/graphql", json={"query": query}, headers=api._headers(BAD_KEYS[case]))
    assert resp.status_code == 200
    assert resp.headers["www-authenticate"].startswith("Bearer")
    body = resp.json()
    assert gql_code(body) == "UNAUTHENTICATED"
    assert not any((body.get("data") or {}).values())


async def test_graphql_introspection_needs_no_key(api: Api) -> None:
    """GraphiQL loads the schema before the developer has pasted a key."""
    body = await api.gql("{ __schema { queryType { name } } }", key=None)
    assert body["_status"] == 200
    assert body["data"]["__schema"]["queryType"]["name"] == "Query"


async def test_verified_keys_are_cached_briefly_and_revocation_takes_effect_after_the_ttl(api: Api) -> None:
    """The per-process key cache trades at most ``auth_cache_seconds`` of revocation lag for a
    lookup per request; unknown keys are never cached. The cache's clock is the test's, so a
    slow machine cannot stretch the window."""
    from sqlalchemy import update

    from evidence_gateway.auth import KeyCache
    from evidence_gateway.core.timeutil import utcnow
    from evidence_gateway.models import ApiKey

    now = [1000.0]
    app = api.http._transport.app  # type: ignore[attr-defined]
    app.state.key_cache = KeyCache(5, clock=lambda: now[0])
    assert (await api.get("/api/v2/workspaces")).status_code == 200
    async with app.state.db.write() as session:
        await session.execute(update(ApiKey).where(ApiKey.key_hash == hash_key(api.key)).values(revoked_at=utcnow()))
    now[0] += 4.9
    assert (await api.get("/api/v2/workspaces")).status_code == 200  # still trusted inside the TTL
    now[0] += 0.2
    assert (await api.get("/api/v2/workspaces")).status_code == 401
    assert (await api.get("/api/v2/workspaces", key="evk_" + "1" * 48)).status_code == 401
    assert len(app.state.key_cache._entries) == 0
