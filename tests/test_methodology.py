"""Methodology profiles: listed on both transports, validated as a workspace reference."""

from __future__ import annotations

import uuid

from tests.conftest import Api, gql_code

PROFILE_FIELDS = {"id", "code", "name", "description", "boundary", "factor_version_id", "is_default", "created_at"}


async def test_profiles_listed_over_rest_and_graphql(api: Api) -> None:
    resp = await api.get("/api/v2/methodology-profiles")
    assert resp.status_code == 200
    profiles = resp.json()["data"]
    assert len(profiles) >= 2 and set(profiles[0]) >= PROFILE_FIELDS
    assert profiles[0]["is_default"] and profiles[0]["boundary"] == "WTW"
    assert {p["boundary"] for p in profiles} >= {"WTW", "TTW"}
    body = await api.gql("{ methodologyProfiles { id code boundary isDefault factorVersionId } }")
    assert [p["id"] for p in body["data"]["methodologyProfiles"]] == [p["id"] for p in profiles]
    assert (await api.get("/api/v2/methodology-profiles", key=None)).status_code == 401


async def test_workspace_with_a_known_profile_is_created(api: Api) -> None:
    profiles = (await api.get("/api/v2/methodology-profiles")).json()["data"]
    resp = await api.post("/api/v2/workspaces", {"name": "ttw", "default_methodology_profile_id": profiles[1]["id"]})
    assert resp.status_code == 201
    assert resp.json()["data"]["default_methodology_profile_id"] == profiles[1]["id"]


async def test_unknown_profile_is_422_naming_the_field(api: Api) -> None:
    resp = await api.post("/api/v2/workspaces", {"name": "x", "default_methodology_profile_id": str(uuid.uuid4())})
    assert resp.status_code == 422
    assert "default_methodology_profile_id" in resp.json()["details"]["fields"]
    listing = (await api.get("/api/v2/workspaces")).json()
    assert listing["pagination"]["total"] == 0
    body = await api.gql(
        'mutation($p: UUID!) { createWorkspace(input: {name: "x", defaultMethodologyProfileId: $p}) { id } }',
        {"p": str(uuid.uuid4())},
    )
    assert gql_code(body) == "BAD_USER_INPUT"
