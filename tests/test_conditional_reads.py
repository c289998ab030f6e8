"""If-None-Match on workspace and pack reads: 304 while the ETag is current, the body once it moved."""

from __future__ import annotations

import uuid

import httpx

from tests.conftest import Api, create_workspace
from tests.test_packs import calculated_workspace, generated


async def assert_not_modified(api: Api, path: str, tag: str, sent: str | None = None) -> None:
    resp = await api.get(path, headers={"If-None-Match": sent or tag})
    assert resp.status_code == 304, resp.text
    assert resp.content == b""
    assert resp.headers["etag"] == tag
    assert resp.headers["cache-control"] == "no-store"  # still the organisation's data


async def assert_modified(api: Api, path: str, sent: str) -> httpx.Response:
    resp = await api.get(path, headers={"If-None-Match": sent})
    assert resp.status_code == 200, resp.text
    assert resp.json()["data"]["id"] == path.rsplit("/", 1)[1]
    return resp


async def test_workspace_read_is_304_until_it_changes(api: Api) -> None:
    ws = await create_workspace(api)
    path = f"/api/v2/workspaces/{ws['id']}"
    tag = (await api.get(path)).headers["etag"]
    await assert_not_modified(api, path, tag)
    await assert_not_modified(api, path, tag, sent=f'"nope", W/{tag}')  # a list; weak comparison
    await assert_not_modified(api, path, tag, sent="*")
    await assert_modified(api, path, '"nope"')

    imported = await api.post(f"{path}/imports", {"source_row_count": 1, "shipments": []})
    assert imported.status_code == 201, imported.text
    fresh = await assert_modified(api, path, tag)
    assert fresh.headers["etag"] != tag and fresh.json()["data"]["status"] == "data_imported"
    await assert_not_modified(api, path, fresh.headers["etag"])


async def test_pack_read_is_304_until_an_approval_moves_it(api: Api) -> None:
    ws = await calculated_workspace(api)
    pack = (await generated(api, ws["id"]))["data"]
    path = f"/api/v2/packs/{pack['id']}"
    tag = (await api.get(path)).headers["etag"]
    await assert_not_modified(api, path, tag)
    # The workspace shows this pack: its own tag moves with the pack's.
    ws_path = f"/api/v2/workspaces/{ws['id']}"
    ws_tag = (await api.get(ws_path)).headers["etag"]

    moved = await api.post(f"{path}/approvals", {"action_type": "requested"})
    assert moved.status_code == 201, moved.text
    fresh = await assert_modified(api, path, tag)
    assert fresh.json()["data"]["status"] == "in_review" != pack["status"]
    await assert_not_modified(api, path, fresh.headers["etag"])
    await assert_modified(api, ws_path, ws_tag)


async def test_a_matching_tag_never_reveals_another_organisations_record(api: Api, api_b: Api) -> None:
    ws = await calculated_workspace(api)
    pack = (await generated(api, ws["id"]))["data"]
    for path in (f"/api/v2/workspaces/{ws['id']}", f"/api/v2/packs/{pack['id']}"):
        tag = (await api.get(path)).headers["etag"]
        for sent in (tag, "*"):
            resp = await api_b.get(path, headers={"If-None-Match": sent})
            assert resp.status_code == 404, resp.text
    missing = await api.get(f"/api/v2/workspaces/{uuid.uuid4()}", headers={"If-None-Match": "*"})
    assert missing.status_code == 404
    unauth = await api.get(f"/api/v2/packs/{pack['id']}", key=None, headers={"If-None-Match": "*"})
    assert unauth.status_code == 401


async def test_openapi_declares_the_304(api: Api) -> None:
    doc = (await api.get("/api/openapi.json")).json()
    for path in ("/v2/workspaces/{id}", "/v2/packs/{id}"):
        op = doc["paths"][path]["get"]
        assert "If-None-Match" in {p["name"] for p in op["parameters"]}
        assert op["responses"]["304"]["headers"]["ETag"]
