"""X-Request-ID (DESIGN.md §17) on every answer — routed, unknown, refused, crashed, REST and
GraphQL — and in every error body: ``details.request_id`` on REST, ``extensions.request_id``
on each GraphQL error. Events recording the id are covered in tests/test_events.py."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette

from tests.conftest import Api

GENERATED = re.compile(r"[0-9a-f]{32}")


@pytest.fixture
async def lenient(app: Starlette) -> AsyncIterator[httpx.AsyncClient]:
    """A client that sees the 500 a crash answers instead of the crash itself."""
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as c:
        yield c


@pytest.mark.parametrize(
    ("method", "path", "status", "code"),
    [
        ("GET", "/nowhere", 404, "not_found"),
        ("DELETE", "/api/v2/workspaces", 405, "method_not_allowed"),
        ("GET", "/api/v2/workspaces", 401, "unauthenticated"),
        ("GET", "/api/v2/workspaces/not-a-uuid", 404, "not_found"),
    ],
)
async def test_rest_errors_carry_the_request_id_in_header_and_body(
    api: Api, method: str, path: str, status: int, code: str
) -> None:
    key = None if status == 401 else "default"
    resp = await api.http.request(method, path, headers={**api._headers(key), "X-Request-ID": "client-7"})
    assert resp.status_code == status
    assert resp.headers["X-Request-ID"] == "client-7"
    assert resp.json()["details"] == {**resp.json()["details"], "code": code, "request_id": "client-7"}


async def test_validation_errors_and_oversized_bodies_carry_a_generated_id(api: Api) -> None:
    resp = await api.post("/api/v2/workspaces", {"name": ""})
    assert resp.status_code == 422
    rid = resp.headers["X-Request-ID"]
    assert GENERATED.fullmatch(rid) and resp.json()["details"]["request_id"] == rid
    assert resp.json()["details"]["fields"]  # the rest of the body is untouched

    big = await api.post("/api/v2/workspaces", {"name": "x" * 2_000_000})
    assert big.status_code == 413
    assert big.json()["details"]["request_id"] == big.headers["X-Request-ID"]


async def test_an_insane_id_is_replaced(api: Api) -> None:
    resp = await api.get("/api/v2/workspaces", headers={"X-Request-ID": "bad id\twith spaces"})
    assert GENERATED.fullmatch(resp.headers["X-Request-ID"])


async def test_a_crash_answers_500_with_the_request_id(
    lenient: httpx.AsyncClient, key_a: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def boom(*_a: Any, **_k: Any) -> Any:
        raise RuntimeError("database on fire: evk_" + "0" * 48)

    monkeypatch.setattr("evidence_gateway.resolvers.workspaces.list_workspaces", boom)
    resp = await lenient.get(
        "/api/v2/workspaces", headers={"Authorization": f"Bearer {key_a}", "X-Request-ID": "crash-1"}
    )
    assert resp.status_code == 500
    assert resp.headers["X-Request-ID"] == "crash-1"
    assert resp.json() == {
        "error": "internal server error",
        "details": {"code": "internal_error", "request_id": "crash-1"},
    }


async def test_graphql_errors_carry_the_request_id_in_extensions(api: Api) -> None:
    headers = {"X-Request-ID": "gql-9"}
    # A refused key (200 with WWW-Authenticate, docs/graphql.md), a validation error, a domain error.
    unauth = await api.http.post("/graphql", json={"query": "{ workspaces { items { id } } }"}, headers=headers)
    assert unauth.status_code == 200 and unauth.headers["X-Request-ID"] == "gql-9"
    assert "WWW-Authenticate" in unauth.headers
    assert [e["extensions"]["request_id"] for e in unauth.json()["errors"]] == ["gql-9"]

    authed = {**api._headers("default"), **headers}
    invalid = await api.http.post("/graphql", json={"query": "{ nope }"}, headers=authed)
    assert invalid.json()["errors"][0]["extensions"] == {"code": "GRAPHQL_VALIDATION_FAILED", "request_id": "gql-9"}

    missing = "00000000-0000-0000-0000-000000000000"
    approve = f'mutation {{ recordApproval(packId: "{missing}", input: {{actionType: REQUESTED}}) {{ statusAfter }} }}'
    partial = await api.http.post("/graphql", json={"query": approve}, headers=authed)
    assert partial.status_code == 200
    assert partial.json()["errors"][0]["extensions"]["code"] == "NOT_FOUND"
    assert partial.json()["errors"][0]["extensions"]["request_id"] == "gql-9"

    fine = await api.http.post("/graphql", json={"query": "{ workspaces { pagination { total } } }"}, headers=authed)
    assert fine.headers["X-Request-ID"] == "gql-9" and "errors" not in fine.json()

    malformed = await api.http.post("/graphql", content=b"{", headers={**authed, "Content-Type": "application/json"})
    assert malformed.status_code == 400
    assert malformed.json()["errors"][0]["extensions"]["request_id"] == "gql-9"


async def test_success_bodies_are_left_alone(api: Api) -> None:
    resp = await api.post("/api/v2/workspaces", {"name": "error"}, headers={"X-Request-ID": "ok-1"})
    assert resp.status_code == 201 and resp.headers["X-Request-ID"] == "ok-1"
    assert "request_id" not in resp.text
