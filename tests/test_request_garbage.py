"""A finished request leaves no reference cycle behind.

What a request holds (its context, its DataLoaders and their rows, graphql-core's executor) must
be freed by reference counting when its answer is sent. A cycle among them waits for a full
collection instead, and under load finished requests piled up between full collections: several
megabytes of resident memory that stayed (issue 29, docs/performance.md "Memory, third pass").
Each request kind below runs with the collector saving what it would free; none of the server's
objects may be among it.
"""

from __future__ import annotations

import gc
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from tests.conftest import Api, create_workspace

# Libraries whose objects a request creates on the server side; httpx's test client keeps a
# cycle of its own (a response and its stream), which is the client's, not the server's.
SERVER_SIDE = ("evidence_gateway", "graphql", "strawberry", "starlette", "sqlalchemy", "uvicorn")

NESTED = """
query Page($n: Int!) {
  workspaces(page: 1, perPage: $n) {
    items { ...Row latestCalculationRun { id } latestPack { id } latestQualityAssessment { id } }
    pagination { total }
  }
}
fragment Row on Workspace { id name createdAt }
"""
CONNECTION = "{ workspacesConnection(first: 5) { edges { node { id name } } pageInfo { hasNextPage } } }"


def _server_side(garbage: list[Any]) -> list[str]:
    names = {f"{type(o).__module__}.{type(o).__qualname__}" for o in garbage}
    return sorted(n for n in names if n.startswith(SERVER_SIDE))


async def _requests(api: Api, ws_id: str) -> dict[str, Callable[[], Awaitable[Any]]]:
    async def nested() -> None:
        body = await api.gql(NESTED, {"n": 5})
        assert "errors" not in body and body["data"]["workspaces"]["items"], body

    async def connection() -> None:
        body = await api.gql(CONNECTION)
        assert "errors" not in body, body

    async def lookup() -> None:
        body = await api.gql(f'{{ workspace(id: "{ws_id}") {{ id latestPack {{ id }} }} }}')
        assert body["data"]["workspace"]["id"] == ws_id, body

    async def mutation() -> None:
        body = await api.gql('mutation { createWorkspace(input: {name: "via graphql"}) { id name } }')
        assert body["data"]["createWorkspace"]["name"] == "via graphql", body

    async def graphql_error() -> None:
        body = await api.gql('{ workspace(id: "not-an-id") { id } }')
        assert body["errors"], body

    async def rest_not_found() -> None:
        assert (await api.get("/api/v2/workspaces/00000000-0000-0000-0000-000000000000")).status_code == 404

    async def rest_invalid() -> None:
        assert (await api.post("/api/v2/workspaces", {"name": ""})).status_code == 422

    async def rest_list() -> None:
        assert (await api.get("/api/v2/workspaces?page=1&per_page=5")).status_code == 200

    async def rest_detail() -> None:
        assert (await api.get(f"/api/v2/workspaces/{ws_id}")).status_code == 200

    async def rest_create() -> None:
        assert (await api.post("/api/v2/workspaces", {"name": "another"})).status_code == 201

    return {
        "graphql list with relations": nested,
        "graphql connection": connection,
        "graphql lookup": lookup,
        "graphql mutation": mutation,
        "graphql error": graphql_error,
        "rest not found": rest_not_found,
        "rest invalid input": rest_invalid,
        "rest list": rest_list,
        "rest detail": rest_detail,
        "rest create": rest_create,
    }


@pytest.mark.parametrize(
    "kind",
    [
        "graphql list with relations",
        "graphql connection",
        "graphql lookup",
        "graphql mutation",
        "graphql error",
        "rest not found",
        "rest invalid input",
        "rest list",
        "rest detail",
        "rest create",
    ],
)
async def test_a_finished_request_leaves_no_cycle(api: Api, kind: str) -> None:
    ws = await create_workspace(api, name="garbage")
    call = (await _requests(api, ws["id"]))[kind]
    await call()  # first use: caches and plans that live on are made here
    gc.collect()  # and what the first use left is freed for good, before anything is saved
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        for _ in range(3):
            await call()
        gc.collect()
        found = _server_side(gc.garbage)
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.collect()  # what was saved is unreachable again: freed now

    assert found == []
