"""Trusted documents: Apollo-compatible automatic persisted queries stored for every node, and the
allow-list mode in which no other document runs."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette

from evidence_gateway.app import create_app
from evidence_gateway.core.events import cursor_of
from evidence_gateway.schema.persisted import TrustedDocumentsError
from evidence_gateway.settings import Settings
from tests.conftest import Api, Configured, create_workspace, error_body, gql_code, seed_key
from tests.live_server import ws_served
from tests.wsclient import GraphQLWS

COUNT = "{ workspaces { pagination { total } } }"
GRAPHQL_RESPONSE = "application/graphql-response+json"


def sha(document: str) -> str:
    return hashlib.sha256(document.encode()).hexdigest()


def persisted(sha256: str, version: int = 1) -> dict[str, Any]:
    return {"persistedQuery": {"version": version, "sha256Hash": sha256}}


async def send(
    api: Api, query: str | None, extensions: dict[str, Any] | None, *, key: str | None = "default", accept: str = ""
) -> httpx.Response:
    body: dict[str, Any] = {"extensions": extensions} if extensions else {}
    if query is not None:
        body["query"] = query
    headers = {**api._headers(key), **({"Accept": accept} if accept else {})}
    return await api.http.post("/graphql", json=body, headers=headers)


async def get(api: Api, extensions: dict[str, Any], **params: str) -> httpx.Response:
    query = {"extensions": json.dumps(extensions), **params}
    return await api.http.get("/graphql", params=query, headers=api._headers("default"))


@pytest.fixture
def node(configured: Configured) -> Configured:
    """Another node on the test's database: its own process memory, the same table."""
    return configured


async def test_apollo_flow_hash_then_document_then_hash(api: Api, node: Configured) -> None:
    document = COUNT.replace("total", "total perPage")
    unknown = await send(api, None, persisted(sha(document)))
    assert unknown.status_code == 200
    assert error_body(unknown) == {
        "errors": [{"message": "PersistedQueryNotFound", "extensions": {"code": "PERSISTED_QUERY_NOT_FOUND"}}]
    }
    strict = await send(api, None, persisted(sha(document)), accept=GRAPHQL_RESPONSE)
    assert strict.status_code == 400 and gql_code(strict.json()) == "PERSISTED_QUERY_NOT_FOUND"

    registered = await send(api, document, persisted(sha(document)))
    assert registered.json()["data"]["workspaces"]["pagination"] == {"total": 0, "perPage": 20}
    by_hash = await send(api, None, persisted(sha(document)))
    assert by_hash.json()["data"]["workspaces"]["pagination"]["perPage"] == 20
    by_get = await get(api, persisted(sha(document)))
    assert by_get.status_code == 200 and by_get.json()["data"]["workspaces"]["pagination"]["total"] == 0

    async with node() as other:  # stored in the database: a node that never saw it knows it
        assert (await send(other, None, persisted(sha(document)))).json()["data"]["workspaces"]


async def test_a_persisted_document_answers_with_the_callers_data(api: Api, api_b: Api) -> None:
    await create_workspace(api)
    assert (await send(api, COUNT, persisted(sha(COUNT)))).json()["data"]["workspaces"]["pagination"]["total"] == 1
    assert (await send(api_b, None, persisted(sha(COUNT)))).json()["data"]["workspaces"]["pagination"]["total"] == 0


@pytest.mark.parametrize(
    ("extensions", "fragment"),
    [
        (persisted(sha("{ __typename }")), "provided sha does not match query"),
        (persisted(sha(COUNT), version=2), "version: 1"),
        (persisted("not-a-hash"), "64 hexadecimal"),
    ],
)
async def test_a_wrong_hash_or_version_is_refused_and_nothing_is_stored(
    api: Api, node: Configured, extensions: dict[str, Any], fragment: str
) -> None:
    resp = await send(api, COUNT, extensions)
    assert gql_code(resp.json()) == "PERSISTED_QUERY_INVALID" and fragment in resp.json()["errors"][0]["message"]
    assert "data" not in resp.json()
    async with node() as other:
        assert gql_code((await send(other, None, persisted(sha(COUNT)))).json()) == "PERSISTED_QUERY_NOT_FOUND"


async def test_only_valid_documents_of_callers_with_a_key_are_stored(api: Api, node: Configured) -> None:
    anonymous = "{ __typename }"
    assert (await send(api, anonymous, persisted(sha(anonymous)), key=None)).json()["data"] == {"__typename": "Query"}
    invalid = "{ workspaces { nope } }"
    assert gql_code((await send(api, invalid, persisted(sha(invalid)))).json()) == "GRAPHQL_VALIDATION_FAILED"
    async with node() as other:
        for document in (anonymous, invalid):
            assert gql_code((await send(other, None, persisted(sha(document)))).json()) == "PERSISTED_QUERY_NOT_FOUND"


async def test_get_runs_persisted_queries_only_and_never_mutations(api: Api) -> None:
    plain = await api.http.get("/graphql", params={"query": COUNT}, headers=api._headers("default"))
    assert plain.status_code == 400 and "persisted queries only" in plain.json()["errors"][0]["message"]
    mutation = 'mutation { createWorkspace(input: {name: "via GET"}) { id } }'
    resp = await get(api, persisted(sha(mutation)), query=mutation)
    assert resp.status_code in (400, 405) and "errors" in resp.json()
    assert (await api.get("/api/v2/workspaces")).json()["pagination"]["total"] == 0


async def test_trusted_documents_mode_runs_only_the_listed_documents(node: Configured, tmp_path: Path) -> None:
    mutation = "mutation($n: String!) { createWorkspace(input: {name: $n}) { id } }"
    listed = tmp_path / "trusted.json"
    listed.write_text(json.dumps({sha(COUNT): COUNT, sha(mutation): mutation}))
    async with node(graphql_trusted_documents=str(listed)) as api:
        assert (await send(api, None, persisted(sha(COUNT)))).json()["data"]["workspaces"]["pagination"]["total"] == 0
        assert (await send(api, COUNT, None)).json()["data"]["workspaces"]  # its full text runs too
        created = await api.http.post(
            "/graphql",
            json={"variables": {"n": "trusted"}, "extensions": persisted(sha(mutation))},
            headers=api._headers("default"),
        )
        assert created.json()["data"]["createWorkspace"]["id"]

        other = "{ workspaces { items { id name } } }"
        for attempt in (
            await send(api, other, None),
            await send(api, other, persisted(sha(other))),  # no registration either
            await send(api, None, persisted(sha(other))),
            await send(api, 'mutation { createWorkspace(input: {name: "x"}) { id } }', None),
        ):
            assert attempt.status_code == 200 and gql_code(attempt.json()) == "DOCUMENT_NOT_TRUSTED", attempt.text
            assert "EVIDENCE_GRAPHQL_TRUSTED_DOCUMENTS" in attempt.json()["errors"][0]["message"]
        assert (await api.get("/api/v2/workspaces")).json()["pagination"]["total"] == 1


@pytest.mark.parametrize(
    "content", ["not json", "[]", "{}", json.dumps({"0" * 64: COUNT}), json.dumps({sha(COUNT): 5})]
)
def test_a_wrong_trusted_documents_file_stops_the_start(settings: Settings, tmp_path: Path, content: str) -> None:
    listed = tmp_path / "trusted.json"
    listed.write_text(content)
    with pytest.raises(TrustedDocumentsError):
        create_app(settings.model_copy(update={"graphql_trusted_documents": str(listed)}))


def test_serve_refuses_a_wrong_trusted_documents_file_in_one_line(tmp_path: Path) -> None:
    listed = tmp_path / "trusted.json"
    listed.write_text(json.dumps({"abc": COUNT}))
    env = {**os.environ, "EVIDENCE_GRAPHQL_TRUSTED_DOCUMENTS": str(listed)}
    cmd = [sys.executable, "-m", "evidence_gateway.cli", "serve", "--database-url", f"sqlite:///{tmp_path / 'x.db'}"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60, env=env, cwd=tmp_path, check=False)  # noqa: S603
    assert proc.returncode == 1
    assert proc.stderr.strip() == f"error: {listed}: 'abc' is not the SHA-256 of its document"


@pytest.mark.slow
async def test_trusted_documents_mode_covers_subscriptions(settings: Settings, app: Starlette, tmp_path: Path) -> None:
    trusted_subscription = "subscription($after: String) { events(after: $after) { sequence type } }"
    listed = tmp_path / "trusted.json"
    listed.write_text(json.dumps({sha(trusted_subscription): trusted_subscription}))
    other = create_app(settings.model_copy(update={"graphql_trusted_documents": str(listed)}))
    async with other.router.lifespan_context(other):
        key = await seed_key(other.state.db, "org-ws")  # no api_key.created: the log starts with the test
        async with ws_served(other) as url, GraphQLWS.connect(url, {"Authorization": f"Bearer {key}"}) as client:
            refused = await client.message(await client.subscribe("subscription { events { sequence } }"))
            assert refused["type"] == "error", refused
            assert refused["payload"][0]["extensions"]["code"] == "DOCUMENT_NOT_TRUSTED"
            op = await client.subscribe(trusted_subscription, {"after": cursor_of(0)})  # from the start: no race
            async with httpx.AsyncClient(transport=httpx.ASGITransport(app=other), base_url="http://t") as http:
                created = await http.post(
                    "/api/v2/workspaces", json={"name": "seen"}, headers={"Authorization": f"Bearer {key}"}
                )
                assert created.status_code == 201
            assert (await client.data(op))["events"]["type"] == "workspace.created"


async def test_idempotency_key_holds_for_a_mutation_sent_by_hash(api: Api) -> None:
    mutation = "mutation($n: String!) { createWorkspace(input: {name: $n}) { id } }"
    headers = {**api._headers("default"), "Idempotency-Key": "apq-1"}
    body = {"query": mutation, "variables": {"n": "once"}, "extensions": persisted(sha(mutation))}
    first = await api.http.post("/graphql", json=body, headers={**api._headers("default"), "Idempotency-Key": "apq-0"})
    assert first.json()["data"]["createWorkspace"]["id"]  # registered (with a key of its own)
    by_hash = {"variables": {"n": "twice?"}, "extensions": persisted(sha(mutation))}
    one = await api.http.post("/graphql", json=by_hash, headers=headers)
    again = await api.http.post("/graphql", json=by_hash, headers=headers)
    assert again.headers["Idempotent-Replayed"] == "true" and again.json() == one.json()
    assert (await api.get("/api/v2/workspaces")).json()["pagination"]["total"] == 2
