"""Nested GraphQL relations go through DataLoaders: statements per request do not grow with items."""

from __future__ import annotations

from tests.conftest import Api, create_workspace
from tests.sqlcount import count_statements

PACK_FIELDS = """
  id versionNumber status summaryPdfUrl
  calculationRun { id status }
  qualityAssessment { id coverageScore }
  artifacts { id artifactType signedDownloadUrl }
  approvals { actionType statusAfter }
  evidenceItems { id title }
"""
EVERY_RELATION = f"""
query($perPage: Int!) {{
  workspaces(page: 1, perPage: $perPage) {{
    items {{
      id name status
      imports {{ id sourceRowCount }}
      latestCalculationRun {{ id totalCo2eKg }}
      latestQualityAssessment {{ id coverageScore }}
      calculationRuns {{ id }}
      evidenceItems {{ id }}
      latestPack {{ {PACK_FIELDS} }}
      packs {{ {PACK_FIELDS} }}
    }}
    pagination {{ total }}
  }}
}}"""
ROW = {"mode": "road", "distance_km": 100, "mass_tonnes": 2}


async def _workspace_with_everything(api: Api, name: str) -> None:
    """Import, run, pack in review, evidence on the workspace and on the pack."""
    ws = await create_workspace(api, name=name)
    base = f"/api/v2/workspaces/{ws['id']}"
    assert (await api.post(f"{base}/imports", {"source_row_count": 1, "shipments": [ROW]})).status_code == 201
    assert (await api.post(f"{base}/calculate", {})).status_code == 200
    pack = (await api.post(f"{base}/packs", {})).json()["data"]
    assert (await api.post(f"/api/v2/packs/{pack['id']}/approvals", {"action_type": "requested"})).status_code == 201
    for ref in ({"workspace_id": ws["id"]}, {"report_pack_id": pack["id"]}):
        body = {"evidence_type": "other", "title": name, "file_name": "e.pdf", "file_url": "https://e.example/e.pdf"}
        assert (await api.post("/api/v2/evidence-items", {**body, **ref})).status_code == 201


async def _statements_for(api: Api, per_page: int) -> int:
    db = api.http._transport.app.state.db  # type: ignore[attr-defined]
    with count_statements(db) as log:
        body = await api.gql(EVERY_RELATION, {"perPage": per_page})
    assert "errors" not in body, body
    items = body["data"]["workspaces"]["items"]
    assert len(items) == per_page
    # The newest item carries every relation, so each loader runs in both requests.
    assert items[0]["latestPack"]["artifacts"] and items[0]["latestPack"]["approvals"]
    assert items[0]["latestPack"]["evidenceItems"] and items[0]["evidenceItems"]
    return log.count


async def test_listing_100_workspaces_with_every_relation_costs_the_same_as_1(api: Api) -> None:
    for i in range(97):
        ws = await create_workspace(api, name=f"ws-{i}")
        assert (await api.post(f"/api/v2/workspaces/{ws['id']}/imports", {"source_row_count": 1})).status_code == 201
    for i in range(3):
        await _workspace_with_everything(api, f"full-{i}")
    one = await _statements_for(api, 1)
    hundred = await _statements_for(api, 100)
    assert one >= 10  # a statement per relation: the hook really counts
    assert hundred == one, f"1 item: {one} statements, 100 items: {hundred}"


CONNECTION = (
    EVERY_RELATION.replace("query($perPage: Int!) {", "query($first: Int!) {")
    .replace(
        "workspaces(page: 1, perPage: $perPage) {\n    items {", "workspacesConnection(first: $first) {\n    nodes {"
    )
    .replace("pagination { total }", "totalCount pageInfo { hasNextPage hasPreviousPage endCursor }")
)


async def test_a_connection_page_of_100_with_every_relation_costs_the_same_as_1(api: Api) -> None:
    for i in range(97):
        await create_workspace(api, name=f"ws-{i}")
    for i in range(3):
        await _workspace_with_everything(api, f"full-{i}")
    db = api.http._transport.app.state.db  # type: ignore[attr-defined]
    counts = []
    for first in (1, 100):
        with count_statements(db) as log:
            body = await api.gql(CONNECTION, {"first": first})
        assert "errors" not in body, body
        page = body["data"]["workspacesConnection"]
        assert len(page["nodes"]) == first and page["totalCount"] == 100
        assert page["nodes"][0]["latestPack"]["artifacts"] and page["nodes"][0]["evidenceItems"]
        counts.append(log.count)
    assert counts[0] >= 10
    assert counts[1] == counts[0], f"1 item: {counts[0]} statements, 100 items: {counts[1]}"
