"""One nullability rule for by-id lookups: null without an error for an unknown id or another
organisation's, so one missing record empties its own field and nothing else."""

from __future__ import annotations

import uuid

from graphql import GraphQLNonNull

from evidence_gateway.schema import schema
from tests.conftest import Api, gql_answer
from tests.test_packs import calculated_workspace, generated

LOOKUPS = """
query($ws: UUID!, $pack: UUID!, $item: UUID!, $missing: UUID!) {
  workspace(id: $ws) { id }
  pack(id: $pack) { id }
  evidenceItem(id: $item) { id }
  qualityAssessment(workspaceId: $ws) { workspaceId }
  missingWorkspace: workspace(id: $missing) { id }
  missingPack: pack(id: $missing) { id }
  missingItem: evidenceItem(id: $missing) { id }
  missingEndpoint: webhookEndpoint(id: $missing) { id }
  missingLegacy: legacyReport(id: $missing) { id }
  missingQuality: qualityAssessment(workspaceId: $missing) { id }
}"""


def test_every_lookup_by_id_is_nullable() -> None:
    query = schema._schema.query_type
    assert query is not None
    lookups = {
        name: field
        for name, field in query.fields.items()
        if set(field.args) in ({"id"}, {"workspaceId"}) and not name.endswith("s")
    }
    assert {"workspace", "pack", "evidenceItem", "webhookEndpoint", "legacyReport", "qualityAssessment"} <= set(lookups)
    non_null = [name for name, field in lookups.items() if isinstance(field.type, GraphQLNonNull)]
    assert not non_null, f"lookups must be nullable: {non_null}"
    assert all("null, without an error" in (f.description or "") for f in lookups.values())


async def test_a_missing_record_empties_only_its_own_field(api: Api, api_b: Api) -> None:
    ws = await calculated_workspace(api)
    pack = (await generated(api, ws["id"]))["data"]
    item = (
        await api.post(
            "/api/v2/evidence-items",
            {"evidence_type": "other", "title": "t", "file_name": "f.pdf", "file_url": "https://e.example/f.pdf"},
        )
    ).json()["data"]
    variables = {"ws": ws["id"], "pack": pack["id"], "item": item["id"], "missing": str(uuid.uuid4())}
    mine = await api.gql(LOOKUPS, variables)
    assert "errors" not in mine, mine
    data = mine["data"]
    assert (data["workspace"]["id"], data["pack"]["id"], data["evidenceItem"]["id"]) == (
        ws["id"],
        pack["id"],
        item["id"],
    )
    assert data["qualityAssessment"] == {"workspaceId": ws["id"]}
    assert all(v is None for k, v in data.items() if k.startswith("missing"))
    # Another organisation's ids answer exactly as unknown ones: null everywhere, no error.
    theirs = await api_b.gql(LOOKUPS, variables)
    assert gql_answer(theirs) == {"data": dict.fromkeys(data), "_status": 200}
