"""GraphQL hardening: introspection inside the limits and switchable off, nested lists weighted by
their page size, a cap on mutation fields, a response size cap, a query time budget, and an SSRF
refusal that names the rule, not the address. Every refusal happens before anything runs."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from graphql import get_introspection_query

from evidence_gateway.resolvers import workspaces as workspace_resolvers
from evidence_gateway.schema import limits
from tests.conftest import Api, Configured, create_workspace, gql_code


def refused(body: dict[str, Any], code: str, fragment: str) -> None:
    assert gql_code(body) == code, body
    assert "data" not in body, body
    assert fragment in " | ".join(e["message"] for e in body["errors"])


OF_TYPE_150 = '{ __type(name: "Workspace") ' + "{ ofType " * 150 + "{ name }" + " }" * 150 + " }"
SCHEMA_30 = "{ " + " ".join(f"s{i}: __schema {{ types {{ name fields {{ name }} }} }}" for i in range(30)) + " }"


async def test_deep_type_introspection_is_refused_by_depth_every_time(api: Api) -> None:
    for _ in range(3):  # once answered, then "maximum recursion depth exceeded": now the same refusal each time
        body = await api.gql(OF_TYPE_150, key=None)
        refused(body, "QUERY_TOO_COMPLEX", f"more than {limits.MAX_NESTING} levels deep")  # before parsing
    # Shallow enough to parse, still over the introspection depth.
    of_type_20 = '{ __type(name: "Workspace") ' + "{ ofType " * 20 + "{ name }" + " }" * 20 + " }"
    body = await api.gql(of_type_20, key=None)
    refused(body, "QUERY_TOO_COMPLEX", f"maximum introspection depth of {limits.MAX_INTROSPECTION_DEPTH}")


async def test_aliased_schema_introspections_are_refused_by_cost(api: Api) -> None:
    refused(await api.gql(SCHEMA_30, key=None), "QUERY_TOO_COMPLEX", "Query cost")
    one = await api.gql("{ __schema { types { name fields { name } } } }", key=None)
    assert "errors" not in one and one["data"]["__schema"]["types"]


PACKS = (
    "items { packs { artifacts { id reportPackId workspaceId artifactType status a: id b: id } "
    "approvals { actionType statusAfter } evidenceItems { id title } } }"
)


async def test_nested_lists_weigh_by_their_page_and_relation_sizes(api: Api) -> None:
    # 100 workspaces x 4 packs x (4 artifacts x 7 + ...) = 31,801: one fits, two do not.
    # Counted once per relation list, as before, the two cost 3,402.
    one = await api.gql(f"{{ workspaces(perPage: 100) {{ {PACKS} }} }}")
    assert "errors" not in one, one
    two = await api.gql(f"{{ a: workspaces(perPage: 100) {{ {PACKS} }} b: workspaces(perPage: 100) {{ {PACKS} }} }}")
    refused(two, "QUERY_TOO_COMPLEX", "Query cost 63602 exceeds")
    # Without a size the default page (20) counts: 6,361 each, so seven fit and eight do not.
    seven = " ".join(f"w{i}: workspaces {{ {PACKS} }}" for i in range(7))
    assert "errors" not in await api.gql(f"{{ {seven} }}")
    refused(await api.gql(f"{{ {seven} w7: workspaces {{ {PACKS} }} }}"), "QUERY_TOO_COMPLEX", "Query cost 50888")


async def test_at_most_five_mutation_fields_per_document(api: Api) -> None:
    def creating(n: int) -> str:
        return (
            "mutation { "
            + " ".join(f'w{i}: createWorkspace(input: {{name: "w{i}"}}) {{ id }}' for i in range(n))
            + " }"
        )

    refused(await api.gql(creating(6)), "QUERY_TOO_COMPLEX", "6 mutation fields in one document; at most 5")
    assert (await api.get("/api/v2/workspaces")).json()["pagination"]["total"] == 0
    # Through fragments they count just the same.
    first = " ".join(f'a{i}: createWorkspace(input: {{name: "a"}}) {{ id }}' for i in range(3))
    second = " ".join(f'b{i}: createWorkspace(input: {{name: "b"}}) {{ id }}' for i in range(3))
    spread = f"mutation {{ ...M ...N }} fragment M on Mutation {{ {first} }} fragment N on Mutation {{ {second} }}"
    refused(await api.gql(spread), "QUERY_TOO_COMPLEX", "6 mutation fields")
    body = await api.gql(creating(5))
    assert "errors" not in body and len(body["data"]) == 5
    assert (await api.get("/api/v2/workspaces")).json()["pagination"]["total"] == 5


async def test_the_mutation_cap_is_a_setting(configured: Configured) -> None:
    async with configured(graphql_max_mutations=1) as api:
        two = 'mutation { a: createWorkspace(input: {name: "a"}) { id } b: createWorkspace(input: {name: "b"}) { id } }'
        refused(await api.gql(two), "QUERY_TOO_COMPLEX", "at most 1")


async def test_introspection_can_be_switched_off_with_its_suggestions(api: Api, configured: Configured) -> None:
    typo = "{ workspaces { itms { id } } }"
    assert "Did you mean" in (await api.gql(typo))["errors"][0]["message"]
    async with configured(graphql_introspection=False) as closed:
        for document in ("{ __schema { queryType { name } } }", '{ __type(name: "Workspace") { name } }'):
            refused(
                await closed.gql(document, key=None), "GRAPHQL_VALIDATION_FAILED", "introspection has been disabled"
            )
        body = await closed.gql(typo)
        assert gql_code(body) == "GRAPHQL_VALIDATION_FAILED"
        assert "Did you mean" not in body["errors"][0]["message"] and "items" not in body["errors"][0]["message"]
        fine = await closed.gql("{ __typename workspaces { pagination { total } } }")
        assert fine["data"]["__typename"] == "Query"


async def test_a_response_over_the_size_cap_is_refused_with_a_clear_error(configured: Configured) -> None:
    async with configured(graphql_max_response_bytes=1024) as api:
        for i in range(12):
            await create_workspace(api, name=f"workspace with a long enough name {i:02d}")
        body = await api.gql("{ workspaces(perPage: 50) { items { id name status } } }")
        assert gql_code(body) == "RESPONSE_TOO_LARGE" and body["errors"][0]["extensions"]["limit_bytes"] == 1024
        small = await api.gql("{ workspaces(perPage: 1) { items { id } } }")
        assert len(small["data"]["workspaces"]["items"]) == 1


async def test_a_query_over_its_time_budget_is_stopped(configured: Configured, monkeypatch: pytest.MonkeyPatch) -> None:
    never = asyncio.Event()

    async def stuck(*_args: Any, **_kwargs: Any) -> Any:
        await never.wait()  # a read that does not finish: only the budget ends it

    monkeypatch.setattr(workspace_resolvers, "list_workspaces", stuck)
    async with configured(graphql_execution_seconds=0.05) as api:
        body = await api.gql("{ workspaces { items { id } } }")
    assert gql_code(body) == "QUERY_TIMEOUT" and "EVIDENCE_GRAPHQL_EXECUTION_SECONDS" in body["errors"][0]["message"]


TEST_WEBHOOK = "mutation($i: TestWebhookInput!) { testWebhook(input: $i) { delivered } }"


async def test_ssrf_refusal_names_the_rule_not_the_address(configured: Configured) -> None:
    async with configured(webhook_allow_private_targets=False, webhook_connect_timeout_seconds=0.5) as api:
        rule = "must be a host that resolves to public internet addresses only"
        for url in ("http://localhost:9/x", "http://10.1.2.3/x"):
            rest = await api.post("/api/v2/webhooks/test", {"target_url": url})
            assert rest.status_code == 422
            reason = rest.json()["details"]["fields"]["target_url"]
            assert reason == rule and "127.0.0.1" not in rest.text and "::1" not in rest.text

            body = await api.gql(TEST_WEBHOOK, {"i": {"targetUrl": url}})
            assert gql_code(body) == "BAD_USER_INPUT"
            assert rule in str(body) and "127.0.0.1" not in str(body) and "::1" not in str(body)


def _lexer_count(document: str) -> int:
    from graphql.language import Lexer, Source, TokenKind

    lexer, count = Lexer(Source(document)), 0
    while lexer.advance().kind != TokenKind.EOF:
        count += 1
    return count


@pytest.mark.parametrize(
    "document",
    [
        get_introspection_query(descriptions=True),
        '# a comment with "quotes and words" { }\n{ workspaces(perPage: -5) { items { id } } }',
        'mutation { createWorkspace(input: {name: "many words, { braces } and # hashes"}) { id } }',
        'query { a: __type(name: """block "quoted" \\""" words\n lines""") { name } } fragment F on Query { x }',
        "query($v: [Float!] = [1.5e-3, -2, 3.0E+7]) @dir(a: $v) { ...F ... on Query { __typename } }",
    ],
)
def test_the_token_pre_count_is_the_lexers(document: str) -> None:
    """The cheap refusal of a token flood must never refuse a document the parser would take."""
    count = _lexer_count(document)
    assert limits.over_token_limit(document, count) is False
    assert limits.over_token_limit(document, count - 1) is True
