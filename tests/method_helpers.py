"""Helpers for the ISO 14083 method tests: import rows, calculate, fetch a pack's files."""

from __future__ import annotations

from typing import Any

from tests.conftest import Api, create_workspace


async def run_rows(api: Api, rows: list[dict[str, Any]], **workspace: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """A new workspace with these rows, calculated: (workspace, calculate data)."""
    ws = await create_workspace(api, **workspace)
    resp = await api.post(f"/api/v2/workspaces/{ws['id']}/imports", {"source_row_count": len(rows), "shipments": rows})
    assert resp.status_code == 201, resp.text
    calc = await api.post(f"/api/v2/workspaces/{ws['id']}/calculate", {})
    assert calc.status_code == 200, calc.text
    return ws, calc.json()["data"]


async def pack_files(api: Api, workspace_id: str) -> dict[str, bytes]:
    """Generate a pack and download every artifact (the eight listed and the pack's iLEAP file):
    artifact_type -> bytes."""
    resp = await api.post(f"/api/v2/workspaces/{workspace_id}/packs", {})
    assert resp.status_code == 201, resp.text
    pack = resp.json()["data"]
    listing = (await api.get(f"/api/v2/packs/{pack['id']}/artifacts")).json()["data"]
    files = {a["artifact_type"]: (await api.get(a["file_url"])).content for a in listing}
    files["ileap_shipment_footprints"] = (await api.get(pack["ileap_shipment_footprints_url"])).content
    return files
