"""Organisation scoping by construction: resolvers never compare org_id themselves, and the fast
read paths (Core rows, prefetched relations, DataLoaders) show nothing of another organisation."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from sqlalchemy.exc import StatementError

from evidence_gateway.core import scoping
from evidence_gateway.store.repositories.workspaces import WorkspaceRepository
from tests.conftest import Api, create_workspace

PACKAGE = Path(__file__).resolve().parent.parent / "evidence_gateway"
# The resolvers and the pack pipeline they drive.
SCOPED = (PACKAGE / "resolvers", PACKAGE / "packs")
# An SQL condition on org_id written by hand: `col(X.org_id) == ...`, `X.org_id == ...`.
HAND_WRITTEN = re.compile(r"\borg_id\)?\s*==")

ROW = {"external_id": "S-1", "mode": "road", "distance_km": 420, "mass_tonnes": 12}
RELATIONS = """
query($id: UUID!) {
  workspaces(page: 1, perPage: 100) {
    items { id latestCalculationRun { id } latestPack { id } latestQualityAssessment { id } }
    pagination { total }
  }
  workspace(id: $id) { id latestCalculationRun { id } latestPack { id } }
}
"""


def test_no_resolver_filters_org_id_by_hand() -> None:
    offenders = [
        f"{path.relative_to(PACKAGE.parent)}:{number}: {line.strip()}"
        for folder in SCOPED
        for path in sorted(folder.rglob("*.py"))
        if path.name != "scoping.py"
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if HAND_WRITTEN.search(line)
    ]
    assert not offenders, (
        "scope through core/scoping.py (owned, owned_by) and store/scoped.py (readable, rows):\n" + "\n".join(offenders)
    )


async def test_a_scoped_statement_cannot_run_without_the_callers_organisation(api: Api) -> None:
    """The organisation is a bound parameter only store/scoped.py's rows fills: the database refuses the
    statement without it, whatever else is bound."""
    db = api.http._transport.app.state.db  # type: ignore[attr-defined]
    page = WorkspaceRepository._newest._page
    with pytest.raises(StatementError, match=scoping.ORG_PARAM):
        await db.fetch(page, {"page_limit": 20, "page_offset": 0})


async def _calculated_and_packed(api: Api, name: str) -> tuple[str, str]:
    ws = await create_workspace(api, name=name)
    base = f"/api/v2/workspaces/{ws['id']}"
    assert (await api.post(f"{base}/imports", {"source_row_count": 1, "shipments": [ROW]})).status_code == 201
    assert (await api.post(f"{base}/calculate", {})).status_code == 200
    pack = await api.post(f"{base}/packs", {})
    assert pack.status_code == 201, pack.text
    return ws["id"], pack.json()["data"]["id"]


async def test_fast_reads_show_nothing_of_another_organisation(api: Api, api_b: Api) -> None:
    mine, my_pack = await _calculated_and_packed(api, "A's")
    theirs, their_pack = await _calculated_and_packed(api_b, "B's")

    listed = (await api.get("/api/v2/workspaces", params={"per_page": 100})).json()
    assert [w["id"] for w in listed["data"]] == [mine] and listed["pagination"]["total"] == 1
    assert (await api.get(f"/api/v2/workspaces/{theirs}")).status_code == 404
    detail = (await api.get(f"/api/v2/workspaces/{mine}")).json()["data"]
    assert detail["latest_pack"]["id"] == my_pack and detail["latest_calculation_run"]["id"]

    body = await api.gql(RELATIONS, {"id": theirs})
    assert "errors" not in body, body
    items = body["data"]["workspaces"]["items"]
    assert [i["id"] for i in items] == [mine] and items[0]["latestPack"]["id"] == my_pack
    assert body["data"]["workspace"] is None
    # B sees its own, with its own relations, and none of A's.
    theirs_body = await api_b.gql(RELATIONS, {"id": mine})
    assert [i["latestPack"]["id"] for i in theirs_body["data"]["workspaces"]["items"]] == [their_pack]
    assert theirs_body["data"]["workspace"] is None
    node = await api.gql("query($id: UUID!) { node(id: $id) { id } }", {"id": theirs})
    assert node["data"]["node"] is None


async def test_a_page_past_the_end_still_counts_the_organisations_rows(api: Api, api_b: Api) -> None:
    """The total rides on the page's rows; an empty page asks for it on its own, still scoped."""
    await create_workspace(api, name="one")
    for name in ("x", "y", "z"):
        await create_workspace(api_b, name=name)
    past = (await api.get("/api/v2/workspaces", params={"page": 5, "per_page": 1})).json()
    assert past == {"data": [], "pagination": {"page": 5, "per_page": 1, "total": 1}}
    gql = await api.gql("{ workspaces(page: 9) { items { id } pagination { total } } }")
    assert gql["data"]["workspaces"] == {"items": [], "pagination": {"total": 1}}
