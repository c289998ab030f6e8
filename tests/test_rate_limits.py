"""Rate limits (DESIGN.md §17): bursts past the per-key, per-address, failed-authentication and
GraphQL points budgets over REST and GraphQL; the 429 bodies and Retry-After; RateLimit and
RateLimit-Policy on every limited answer; a budget shared by two `serve` nodes through Redis."""

from __future__ import annotations

import re
import socket
from pathlib import Path
from typing import Any

import httpx
import pytest
from graphql import parse
from starlette.applications import Starlette

from evidence_gateway.schema import schema
from evidence_gateway.schema.limits import operation_cost
from evidence_gateway.web.ratelimit.limiter import Limiter
from tests.conftest import Api, error_body
from tests.serve_process import Database, Node
from tests.test_downloads import artifacts_of, with_query

WINDOW = 3600  # long enough that no window ends during a test: counts are exact
LIST = "query Few { workspaces(perPage: 10) { items { id name } } }"
CREATE = 'mutation Make { createWorkspace(input: {name: "spent"}) { id } }'


def limit(app: Starlette, **settings: Any) -> None:
    """New budgets for this app; before its first request (the middleware is built on it)."""
    for name, value in {"rate_limit_window_seconds": WINDOW, **settings}.items():
        setattr(app.state.settings, name, value)
    app.state.limiter = Limiter(app.state.settings)


def rate_limit(resp: httpx.Response) -> dict[str, tuple[int, int]]:
    """RateLimit as {policy: (remaining, reset seconds)}."""
    found = re.findall(r'"(\w+)";r=(\d+);t=(\d+)', resp.headers["RateLimit"])
    return {name: (int(r), int(t)) for name, r, t in found}


def assert_refused(resp: httpx.Response, policy: str, quota: int) -> dict[str, Any]:
    assert resp.status_code == 429, resp.text
    retry_after = int(resp.headers["Retry-After"])
    assert 0 < retry_after <= WINDOW
    assert f'"{policy}";q={quota};w={WINDOW}' in resp.headers["RateLimit-Policy"]
    assert rate_limit(resp)[policy][0] == 0
    body: dict[str, Any] = error_body(resp)
    return body


async def test_a_key_bursting_past_its_budget_gets_429_and_other_keys_do_not(
    app: Starlette, api: Api, api_b: Api
) -> None:
    limit(app, rate_limit_per_key=5)
    for n in range(5):
        ok = await api.get("/api/v2/workspaces")
        assert ok.status_code == 200
        assert ok.headers["RateLimit-Policy"] == f'"key";q=5;w={WINDOW}'
        assert rate_limit(ok)["key"][0] == 4 - n
    refused = await api.post("/api/v2/workspaces", {"name": "over budget"})
    body = assert_refused(refused, "key", 5)
    assert body["error"].startswith("rate limit exceeded: requests with this API key are limited to 5 per")
    assert body["details"] == {
        "code": "rate_limited", "policy": "key", "limit": 5, "window_seconds": WINDOW,
        "retry_after": int(refused.headers["Retry-After"]),
    }  # fmt: skip
    # GraphQL spends the same request budget, and is refused in its own shape.
    gql = await api.http.post("/graphql", json={"query": LIST}, headers=api._headers("default"))
    gql_body = assert_refused(gql, "key", 5)
    assert gql_body["data"] is None and gql_body["errors"][0]["extensions"]["code"] == "RATE_LIMITED"
    # Nothing was written by the refused create; another key has its own budget.
    assert (await api_b.get("/api/v2/workspaces")).status_code == 200
    assert (await api_b.gql("{ workspaces { pagination { total } } }"))["data"]["workspaces"]["pagination"] == {
        "total": 0
    }


async def test_requests_without_a_key_are_limited_per_address(app: Starlette, client: httpx.AsyncClient) -> None:
    limit(app, rate_limit_per_address=3)
    for n in range(3):
        ok = await client.get("/api/openapi.json")
        assert ok.status_code == 200
        assert rate_limit(ok) == {"address": (2 - n, rate_limit(ok)["address"][1])}
    assert_refused(await client.get("/api/openapi.json"), "address", 3)
    # GraphQL without a key spends the same budget, and is refused in its own shape.
    gql = await client.post("/graphql", json={"query": "{ __typename }"})
    assert assert_refused(gql, "address", 3)["errors"][0]["extensions"]["code"] == "RATE_LIMITED"
    assert (await client.get("/healthz")).status_code == 200  # probes are never limited
    assert "RateLimit" not in (await client.get("/healthz")).headers


async def test_wrong_keys_count_against_the_address_and_only_they_are_refused(
    app: Starlette, api: Api, api_b: Api
) -> None:
    limit(app, rate_limit_auth_failures=3)
    assert (await api.get("/api/v2/workspaces", key="evk_" + "0" * 48)).status_code == 401
    assert (await api.get("/api/v2/workspaces", key="not-even-a-key")).status_code == 401
    # GraphQL refuses a wrong key with 200 and WWW-Authenticate (docs/graphql.md): it counts too.
    headers = {"Authorization": "Bearer evk_" + "e" * 48}
    wrong_gql = await api.http.post("/graphql", json={"query": "{ workspaces { items { id } } }"}, headers=headers)
    assert wrong_gql.status_code == 200 and "WWW-Authenticate" in wrong_gql.headers
    # Spent: the next wrong key is 429, on REST and on GraphQL (in its own shape) ...
    assert_refused(await api.get("/api/v2/workspaces", key="evk_" + "f" * 48), "auth_failures", 3)
    gql = await api.http.post("/graphql", json={"query": "{ __typename }"}, headers=headers)
    assert assert_refused(gql, "auth_failures", 3)["errors"][0]["extensions"]["code"] == "RATE_LIMITED"
    # ... but a valid key is never refused for it, even one this node has never seen before,
    assert (await api_b.get("/api/v2/workspaces")).status_code == 200
    assert "errors" not in await api.gql("{ workspaces { pagination { total } } }")
    # and a request without a key is answered as ever: 401, not 429.
    assert (await api.get("/api/v2/workspaces", key=None)).status_code == 401


async def test_requests_without_a_key_never_count_as_failed_authentications(
    app: Starlette, api: Api, client: httpx.AsyncClient
) -> None:
    limit(app, rate_limit_auth_failures=2)
    introspection = {"query": "{ __schema { queryType { name } } }"}
    for _ in range(5):
        assert (await api.get("/api/v2/workspaces", key=None)).status_code == 401
        assert (await client.post("/graphql", json=introspection)).status_code == 200
        assert (await client.post("/graphql", json={"query": "{ workspaces { items { id } } }"})).status_code == 200
    # The budget is whole: two wrong keys are still answered 401, the third is refused.
    for _ in range(2):
        assert (await api.get("/api/v2/workspaces", key="evk_" + "1" * 48)).status_code == 401
    assert_refused(await api.get("/api/v2/workspaces", key="evk_" + "1" * 48), "auth_failures", 2)


async def test_a_wrong_key_counts_even_when_no_field_needed_one(app: Starlette, client: httpx.AsyncClient) -> None:
    limit(app, rate_limit_auth_failures=1)
    introspection = {"query": "{ __schema { queryType { name } } }"}
    headers = {"Authorization": "Bearer evk_" + "2" * 48}
    assert (await client.post("/graphql", json=introspection, headers=headers)).status_code == 200
    assert_refused(await client.post("/graphql", json=introspection, headers=headers), "auth_failures", 1)


async def test_signed_downloads_pass_while_wrong_keys_and_forged_links_are_refused(app: Starlette, api: Api) -> None:
    limit(app, rate_limit_auth_failures=5)
    link = next(iter((await artifacts_of(api)).values()))["signed_download_url"]
    for n in range(20):  # valid and wrong keys mixed, far past the failed-authentication budget
        assert (await api.get("/api/v2/workspaces")).status_code == 200
        expected = 401 if n < 5 else 429
        assert (await api.get("/api/v2/workspaces", key=f"evk_{n:048x}")).status_code == expected
    download = await api.http.get(link)
    assert download.status_code == 200 and download.content
    # A forged link is a wrong credential: 429 once the address has spent its budget.
    forged = with_query(link, signature="0" * 64)
    assert_refused(await api.http.get(forged), "auth_failures", 5)


async def test_forged_links_count_as_failed_authentications(app: Starlette, api: Api) -> None:
    limit(app, rate_limit_auth_failures=2)
    link = next(iter((await artifacts_of(api)).values()))["signed_download_url"]
    forged = with_query(link, signature="0" * 64)
    assert [(await api.http.get(forged)).status_code for _ in range(3)] == [403, 403, 429]
    assert (await api.http.get(link)).status_code == 200
    assert (await api.get("/api/v2/workspaces")).status_code == 200


async def test_graphql_spends_its_document_cost_and_reports_it(app: Starlette, api: Api) -> None:
    cost = operation_cost(schema._schema, parse(LIST), None)
    assert cost > 10  # a page of ten costs more than one request
    make = operation_cost(schema._schema, parse(CREATE), None)
    limit(app, rate_limit_graphql_points=2 * cost + make - 1)
    budget = 2 * cost + make - 1
    first = await api.gql(LIST)
    assert first["extensions"]["cost"] == {
        "requestedQueryCost": cost,
        "throttleStatus": {
            "maximumAvailable": budget, "currentlyAvailable": budget - cost,
            "resetSeconds": first["extensions"]["cost"]["throttleStatus"]["resetSeconds"],
        },
    }  # fmt: skip
    second = await api.gql(LIST)
    assert second["extensions"]["cost"]["throttleStatus"]["currentlyAvailable"] == budget - 2 * cost
    # What is left is less than the mutation costs: refused before it runs, nothing written.
    resp = await api.http.post("/graphql", json={"query": CREATE}, headers=api._headers("default"))
    body = assert_refused(resp, "graphql", budget)
    assert "data" not in body  # nothing ran: a request error (GraphQL over HTTP)
    (error,) = body["errors"]
    assert error["extensions"]["code"] == "RATE_LIMITED" and error["extensions"]["policy"] == "graphql"
    assert body["extensions"]["cost"]["requestedQueryCost"] == make
    assert (
        resp.headers["RateLimit-Policy"]
        == f'"key";q=100000;w={WINDOW}, "graphql";q={budget};w={WINDOW};qu="graphql-points"'
    )
    assert (await api.get("/api/v2/workspaces")).json()["pagination"]["total"] == 0
    # REST requests spend no points.
    assert (await api.get("/api/v2/workspaces")).status_code == 200


async def test_every_limited_answer_carries_the_headers(api: Api) -> None:
    answers = [
        await api.get("/api/v2/workspaces"),
        await api.get("/api/v2/workspaces/00000000-0000-0000-0000-000000000000"),
        await api.post("/api/v2/workspaces", {"name": ""}),
        await api.http.post("/graphql", json={"query": "{ nope }"}, headers=api._headers("default")),
        await api.get("/nowhere"),
    ]
    assert [a.status_code for a in answers] == [200, 404, 422, 200, 404]
    for answer in answers:
        assert answer.headers["RateLimit-Policy"].startswith('"key";q=100000;w=60')
        assert rate_limit(answer)["key"][0] >= 100_000 - len(answers)


def _redis_answers() -> bool:
    try:
        with socket.create_connection(("127.0.0.1", 6379), timeout=1):
            return True
    except OSError:
        return False


@pytest.mark.slow
@pytest.mark.skipif(not _redis_answers(), reason="no Redis on 127.0.0.1:6379")
def test_two_nodes_share_one_budget_through_redis(tmp_path: Path) -> None:
    """The budget lives in Redis, whatever the database: one SQLite file serves both nodes here
    (B neither delivers webhooks nor runs background work, so A owns them as on one host)."""
    database = Database(f"sqlite+aiosqlite:///{tmp_path / 'evidence.db'}", sqlite_path=tmp_path / "evidence.db")
    env = {"EVIDENCE_REDIS_URL": "redis://127.0.0.1:6379/0", "EVIDENCE_RATE_LIMIT_PER_KEY": "6",
           "EVIDENCE_RATE_LIMIT_WINDOW_SECONDS": str(WINDOW)}  # fmt: skip
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    a = Node(database, tmp_path / "a", env=env).start()
    try:
        key = next(line for line in a.stdout().splitlines() if line.startswith("evk_"))
        b = Node(database, tmp_path / "b", env={**env, "EVIDENCE_BACKGROUND_WORK": "false"}).start("--no-dispatcher")
        try:
            headers = {"Authorization": f"Bearer {key}"}
            answers = [httpx.get(f"{node.base}/api/v2/workspaces", headers=headers, timeout=10) for node in (a, b) * 5]
        finally:
            b.stop()
    finally:
        a.stop()
    assert [r.status_code for r in answers] == [200] * 6 + [429] * 4
    assert [rate_limit(r)["key"][0] for r in answers[:6]] == [5, 4, 3, 2, 1, 0]
    assert {r.json()["details"]["policy"] for r in answers[6:]} == {"key"}


async def test_graphql_is_charged_the_cost_its_limit_measures(api: Api) -> None:
    # A page of 20 workspaces, up to 4 packs each, up to 4 artifacts each (schema/limits.py):
    # the budget is charged for every nested list, as the cost ceiling counts them.
    nested = await api.gql("{ workspaces { items { id packs { id artifacts { id } } } } }")
    assert "errors" not in nested, nested
    assert nested["extensions"]["cost"]["requestedQueryCost"] >= 20 * 4 * 4
