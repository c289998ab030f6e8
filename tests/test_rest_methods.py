"""A known path with a wrong method: 405, an ErrorResponse, and an Allow header naming every method."""

from __future__ import annotations

import httpx
import pytest

from evidence_gateway import rest_compat
from evidence_gateway.rest_compat.openapi import document
from tests.conftest import error_body


@pytest.mark.parametrize(
    ("path", "allowed"),
    [
        ("/api/v2/workspaces", {"GET", "HEAD", "POST"}),
        ("/api/v2/evidence-items", {"GET", "HEAD", "POST"}),
        ("/api/v2/workspaces/00000000-0000-0000-0000-000000000000", {"GET", "HEAD"}),
        ("/api/v2/webhooks/test", {"POST"}),
    ],
)
async def test_wrong_method_lists_every_allowed_method(client: httpx.AsyncClient, path: str, allowed: set[str]) -> None:
    resp = await client.request("DELETE", path)
    assert resp.status_code == 405
    assert {m.strip() for m in resp.headers["allow"].split(",")} == allowed
    assert error_body(resp) == {"error": "method not allowed", "details": {"code": "method_not_allowed"}}


def test_each_documented_path_is_one_route() -> None:
    paths = [getattr(r, "path", None) for r in rest_compat.routes]
    assert len(paths) == len(set(paths))
    for path, item in document()["paths"].items():
        route = next(r for r in rest_compat.routes if getattr(r, "path", None) == path)
        assert {m.upper() for m in item} <= set(getattr(route, "methods", set()))


async def test_both_methods_of_a_merged_path_still_work(client: httpx.AsyncClient, key_a: str) -> None:
    headers = {"Authorization": f"Bearer {key_a}"}
    created = await client.post("/api/v2/workspaces", json={"name": "merged"}, headers=headers)
    assert created.status_code == 201
    listed = await client.get("/api/v2/workspaces", headers=headers)
    assert [w["name"] for w in listed.json()["data"]] == ["merged"]
    head = await client.head("/api/v2/workspaces", headers=headers)
    assert head.status_code == 200


@pytest.mark.parametrize("path", list(document()["paths"]))
async def test_every_documented_path_answers_405_with_its_documented_methods(
    client: httpx.AsyncClient, path: str
) -> None:
    documented = {m.upper() for m in document()["paths"][path]}
    expected = documented | ({"HEAD"} if "GET" in documented else set())
    unserved = next(m for m in ("DELETE", "PUT", "PATCH") if m not in documented)
    resp = await client.request(unserved, "/api" + path.replace("{id}", "00000000-0000-0000-0000-000000000000"))
    assert resp.status_code == 405
    assert {m.strip() for m in resp.headers["allow"].split(",")} == expected
