"""GraphQL over HTTP: media types and their status rules, malformed bodies, operation choice,
auth refusals a typed client keeps, and the public graphql-http audit against a real server."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import Api, gql_code
from tests.live_server import serving
from tests.npm_tools import node_modules

GRAPHQL_RESPONSE = "application/graphql-response+json"
CREATE = 'mutation { createWorkspace(input: {name: "never"}) { id } }'


async def post(
    api: Api, content: bytes | str, accept: str | None = None, key: str | None = "default"
) -> httpx.Response:
    headers = {"Content-Type": "application/json", **api._headers(key)}
    if accept is not None:
        headers["Accept"] = accept
    return await api.http.post("/graphql", content=content, headers=headers)


async def workspace_count(api: Api) -> int:
    total: int = (await api.get("/api/v2/workspaces")).json()["pagination"]["total"]
    return total


@pytest.mark.parametrize(
    ("document", "code"),
    [
        ("{ workspaces { ", "GRAPHQL_PARSE_FAILED"),
        ("{ workspaces { nope } }", "GRAPHQL_VALIDATION_FAILED"),
        ("query($n: Int!) { workspaces(perPage: $n) { items { id } } }", "BAD_USER_INPUT"),  # $n missing
    ],
)
async def test_request_errors_are_400_with_graphql_response_json_and_200_with_json(
    api: Api, document: str, code: str
) -> None:
    body = json.dumps({"query": document})
    strict = await post(api, body, GRAPHQL_RESPONSE)
    assert strict.status_code == 400, strict.text
    assert strict.headers["content-type"] == f"{GRAPHQL_RESPONSE}; charset=utf-8"
    assert "data" not in strict.json() and gql_code(strict.json()) == code

    legacy = await post(api, body, "application/json")
    assert legacy.status_code == 200
    assert legacy.headers["content-type"] == "application/json; charset=utf-8"
    assert "data" not in legacy.json() and gql_code(legacy.json()) == code


@pytest.mark.parametrize(
    ("accept", "media_type"),
    [
        (None, "application/json"),
        ("*/*", "application/json"),
        (f"{GRAPHQL_RESPONSE}, application/json;q=0.9", GRAPHQL_RESPONSE),
        (f"application/json, {GRAPHQL_RESPONSE};q=0.5", "application/json"),
        (f"application/json, {GRAPHQL_RESPONSE}", GRAPHQL_RESPONSE),
        ("text/html", "application/json"),
    ],
)
async def test_accept_chooses_the_media_type(api: Api, accept: str | None, media_type: str) -> None:
    resp = await post(api, json.dumps({"query": "{ workspaces { pagination { total } } }"}), accept)
    assert resp.status_code == 200
    assert resp.headers["content-type"] == f"{media_type}; charset=utf-8"
    assert resp.json()["data"]["workspaces"]["pagination"]["total"] == 0


@pytest.mark.parametrize("accept", ["application/json", GRAPHQL_RESPONSE])
async def test_auth_refusal_is_200_with_a_challenge_and_the_graphql_body(api: Api, accept: str) -> None:
    """The document is valid and introspection needs no key, so a missing key is a field error: a
    data entry (null) exists, so both media types answer 2xx, and generated clients keep the body."""
    resp = await post(api, json.dumps({"query": "{ workspaces { items { id } } }"}), accept, key=None)
    assert resp.status_code == 200
    assert resp.headers["www-authenticate"] == 'Bearer realm="evidence-gateway"'
    assert gql_code(resp.json()) == "UNAUTHENTICATED" and "data" in resp.json()
    fine = await post(api, json.dumps({"query": "{ workspaces { items { id } } }"}), accept)
    assert "www-authenticate" not in fine.headers


DEEP = b"[" * 100_000 + b"]" * 100_000
MALFORMED: dict[str, bytes] = {
    "a number": b"5",
    "null": b"null",
    "true": b"true",
    "a string": b'"{ workspaces { items { id } } }"',
    "an array": b"[]",
    "100k-deep nesting": DEEP,
    "deep variables": json.dumps({"query": CREATE}).encode()[:-1] + b', "variables": {"v": ' + DEEP + b"}}",
    "invalid UTF-8": b'{"query": "' + CREATE.encode().replace(b"never", b"\xff\xfe") + b'"}',
    "a 5000-digit integer": json.dumps({"query": CREATE}).encode()[:-1]
    + b', "variables": {"n": '
    + b"9" * 5000
    + b"}}",
    "NaN in variables": json.dumps({"query": CREATE}).encode()[:-1] + b', "variables": {"n": NaN}}',
    "Infinity in variables": json.dumps({"query": CREATE}).encode()[:-1] + b', "variables": {"n": -Infinity}}',
    "truncated": json.dumps({"query": CREATE}).encode()[:-3],
}


@pytest.mark.parametrize("name", list(MALFORMED))
async def test_malformed_bodies_are_a_graphql_shaped_400(api: Api, name: str) -> None:
    for accept in ("application/json", GRAPHQL_RESPONSE):
        resp = await post(api, MALFORMED[name], accept)
        assert resp.status_code == 400, resp.text[:300]
        assert resp.headers["content-type"] == f"{accept}; charset=utf-8"
        body = resp.json()
        assert set(body) == {"errors"}, body  # GraphQL's shape, not the REST envelope
        assert gql_code(body) == "BAD_USER_INPUT" and body["errors"][0]["message"]
    assert await workspace_count(api) == 0


async def test_several_operations_need_an_operation_name(api: Api) -> None:
    document = "query Read { workspaces { pagination { total } } } " + CREATE.replace("mutation", "mutation Write")
    body = await api.gql(document)
    assert gql_code(body) == "GRAPHQL_VALIDATION_FAILED" and "operationName" in body["errors"][0]["message"]
    assert "data" not in body
    assert await workspace_count(api) == 0  # the mutation did not run
    named = await api.http.post(
        "/graphql", json={"query": document, "operationName": "Write"}, headers=api._headers("default")
    )
    assert named.json()["data"]["createWorkspace"]["id"]
    assert await workspace_count(api) == 1


AUDIT = """
import { auditServer } from 'graphql-http';
const results = await auditServer({ url: process.argv[2] });
console.log(JSON.stringify(results.map(r => ({ id: r.id, name: r.name, status: r.status, reason: r.reason }))));
"""

# Audit items that do not apply, each with the reason (none at present: the MAY notices are
# not failures, and every MUST and SHOULD passes).
NOT_APPLICABLE: dict[str, str] = {}


@pytest.mark.slow
async def test_graphql_http_audit_has_no_must_or_should_failures(tmp_path: Path) -> None:
    modules = node_modules()
    script = modules.parent / "audit.mjs"
    script.write_text(AUDIT)
    async with serving(tmp_path) as server:
        proc = subprocess.run(  # noqa: S603, ASYNC221 - one short child process, fixed argv
            ["node", str(script), f"{server.base}/graphql"],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    assert proc.returncode == 0, proc.stderr
    results: list[dict[str, Any]] = json.loads(proc.stdout)
    assert len(results) > 50  # the audit ran in full
    failures = [
        f"{r['status']} {r['id']} {r['name']}: {r['reason']}"
        for r in results
        if r["status"] in ("error", "warn") and r["id"] not in NOT_APPLICABLE
    ]
    assert failures == []
