"""Scalar wire formats are the REST ones: canonical ids in, lowercase ids and Z timestamps out."""

from __future__ import annotations

import pytest

from tests.conftest import Api, create_workspace, gql_code

SPELLINGS = {
    "braced": lambda i: f"{{{i}}}",
    "dashless": lambda i: i.replace("-", ""),
    "urn": lambda i: f"urn:uuid:{i}",
    "padded": lambda i: f" {i}",
    "short": lambda i: i[:-1],
}
READ = "query($id: UUID!) { workspace(id: $id) { id createdAt updatedAt } }"


@pytest.mark.parametrize("spelling", SPELLINGS)
async def test_non_canonical_ids_are_refused_on_both_transports(api: Api, spelling: str) -> None:
    ws = await create_workspace(api)
    real = SPELLINGS[spelling](ws["id"])
    # REST: a path id that is not canonical names no record; a body id is invalid input.
    assert (await api.get(f"/api/v2/workspaces/{real}")).status_code == 404
    evidence = {"evidence_type": "other", "title": "t", "file_name": "f.pdf", "file_url": "https://e.example/f.pdf"}
    rest = await api.post("/api/v2/evidence-items", {**evidence, "workspace_id": real})
    assert rest.status_code == 422
    assert "workspace_id" in rest.json()["details"]["fields"]
    # GraphQL: the same rule, as a variable and as a literal in the document.
    as_variable = await api.gql(READ, {"id": real})
    assert gql_code(as_variable) == "BAD_USER_INPUT"
    assert "data" not in as_variable  # a request error: nothing ran (GraphQL over HTTP)
    assert "8-4-4-4-12" in as_variable["errors"][0]["message"]
    literal = await api.gql(f'{{ workspace(id: "{real}") {{ id }} }}')
    assert gql_code(literal) == "GRAPHQL_VALIDATION_FAILED"  # a literal is checked with the document
    assert "data" not in literal


async def test_uppercase_hex_is_read_and_ids_are_written_lowercase(api: Api) -> None:
    ws = await create_workspace(api)
    body = await api.gql(READ, {"id": ws["id"].upper()})
    assert body["data"]["workspace"]["id"] == ws["id"] == ws["id"].lower()
    assert (await api.get(f"/api/v2/workspaces/{ws['id'].upper()}")).json()["data"]["id"] == ws["id"]


async def test_timestamps_are_written_alike_with_z(api: Api) -> None:
    ws = await create_workspace(api)
    body = await api.gql(READ, {"id": ws["id"]})
    read = body["data"]["workspace"]
    assert read["createdAt"].endswith("Z") and "+00:00" not in read["createdAt"]
    assert (read["createdAt"], read["updatedAt"]) == (ws["created_at"], ws["updated_at"])
    events = await api.gql("{ events(first: 5) { items { occurredAt data } } }")
    first = events["data"]["events"]["items"][0]
    assert first["occurredAt"].endswith("Z")
    assert first["data"]["created_at"] == ws["created_at"]


async def test_dates_follow_the_rest_rule(api: Api) -> None:
    create = 'mutation($d: Date) { createWorkspace(input: {name: "d", reportingPeriodStart: $d}) { id } }'
    # ISO week dates and compact forms are valid isoformat, but not the contract's YYYY-MM-DD.
    for bad in ("20250101", "2025-W01-1", "2025-1-1"):
        assert gql_code(await api.gql(create, {"d": bad})) == "BAD_USER_INPUT", bad
        rest = await api.post("/api/v2/workspaces", {"name": "d", "reporting_period_start": bad})
        assert rest.status_code == 422, bad
    ok = await api.gql(create, {"d": "2025-01-01"})
    assert "errors" not in ok
    assert (await api.get("/api/v2/workspaces")).json()["pagination"]["total"] == 1
