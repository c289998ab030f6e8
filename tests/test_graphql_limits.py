"""Abusive GraphQL documents are refused before execution with QUERY_TOO_COMPLEX; crashes are masked."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from evidence_gateway.resolvers import workspaces as workspace_resolvers
from evidence_gateway.schema import limits
from tests.conftest import Api, create_workspace, gql_code


def refused(body: dict[str, Any], fragment: str) -> None:
    assert gql_code(body) == "QUERY_TOO_COMPLEX", body
    assert "data" not in body, body
    messages = " | ".join(e["message"] for e in body["errors"])
    assert fragment in messages, messages


@pytest.fixture
def no_resolver_calls(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Records any call to the workspace resolvers: refused documents must make none."""
    calls: list[str] = []
    original = workspace_resolvers.list_workspaces

    async def spy(*args: Any, **kwargs: Any) -> Any:
        calls.append("list_workspaces")
        return await original(*args, **kwargs)

    monkeypatch.setattr(workspace_resolvers, "list_workspaces", spy)
    return calls


async def test_thousand_aliases_refused(api: Api, no_resolver_calls: list[str]) -> None:
    aliases = " ".join(f"a{i}: workspaces {{ pagination {{ total }} }}" for i in range(1000))
    refused(await api.gql(f"{{ {aliases} }}"), "tokens")  # over the token ceiling before counting aliases
    assert no_resolver_calls == []


async def test_alias_ceiling(api: Api, no_resolver_calls: list[str]) -> None:
    over = " ".join(f"a{i}: workspaces {{ pagination {{ total }} }}" for i in range(limits.MAX_ALIASES + 1))
    refused(await api.gql(f"{{ {over} }}"), f"Allowed: {limits.MAX_ALIASES}")
    assert no_resolver_calls == []
    at = " ".join(f"a{i}: workspaces(perPage: 1) {{ pagination {{ total }} }}" for i in range(limits.MAX_ALIASES))
    body = await api.gql(f"{{ {at} }}")
    assert "errors" not in body, body
    assert len(no_resolver_calls) == limits.MAX_ALIASES


async def test_deep_nesting_refused(api: Api, no_resolver_calls: list[str]) -> None:
    depth = 15  # 31 levels of braces: parsed (deeper is refused before parsing, see below)
    nested = "workspaces { items { " * depth + "id" + " } }" * depth
    refused(await api.gql(f"query Deep {{ {nested} }}"), "exceeds maximum operation depth")
    assert no_resolver_calls == []


async def test_huge_token_document_refused(api: Api) -> None:
    document = "{ workspaces { pagination { total " + "total " * 10_000 + "} } }"  # 60 KB: under the byte size
    refused(await api.gql(document), f"more than {limits.MAX_TOKENS} tokens")


async def test_fragment_bomb_refused_without_expanding_it(api: Api, no_resolver_calls: list[str]) -> None:
    # 40 fragments, each spreading the next 4 times: ~4^40 fields once expanded, ~400 tokens.
    # Walking it spread by spread would block the server; each fragment is measured once.
    levels = 40
    fragments = " ".join(
        f"fragment F{i} on Workspace {{ {' '.join([f'...F{i + 1}'] * 4) if i < levels - 1 else 'id'} }}"
        for i in range(levels)
    )
    refused(await api.gql(f"{{ workspaces {{ items {{ ...F0 }} }} }} {fragments}"), "Query cost")
    assert no_resolver_calls == []


async def test_aliases_inside_fragments_count_at_every_spread(api: Api) -> None:
    fragment = "fragment P on WorkspacePage { " + " ".join(f"t{i}: pagination {{ total }}" for i in range(8)) + " }"
    body = await api.gql(
        "{ a: workspaces { ...P } b: workspaces { ...P } c: workspaces { ...P } d: workspaces { ...P } } " + fragment
    )
    refused(body, f"36 aliases found. Allowed: {limits.MAX_ALIASES}")


async def test_huge_list_refused_by_cost(api: Api, no_resolver_calls: list[str]) -> None:
    refused(
        await api.gql("{ workspaces(perPage: 1000000) { items { id name imports { id } } } }"),
        f"exceeds the limit of {limits.MAX_COST}",
    )
    assert no_resolver_calls == []


async def test_nested_lists_with_variables_count_their_values(api: Api) -> None:
    # $n weighs what the request gives it: at 100 these nested full pages would still fit.
    fields = " ".join(f"f{i}: id" for i in range(limits.MAX_ALIASES - 1))
    query = (
        "query($n: Int!) { workspaces(perPage: $n) { items { imports { id sourceRowCount } } } "
        f"w2: workspaces(perPage: $n) {{ items {{ {fields} imports {{ id }} }} }} }}"
    )
    cost = 1 + 100 * (1 + 1 + 2) + 1 + 100 * (1 + limits.MAX_ALIASES - 1 + 1 + 1)
    assert cost < limits.MAX_COST  # this one is fine
    body = await api.gql(query, {"n": 5})
    assert "errors" not in body, body


async def test_fragment_cost_counts_and_cycles_do_not_hang(api: Api) -> None:
    body = await api.gql(
        "fragment A on Workspace { id ...B } fragment B on Workspace { name ...A } { workspaces { items { ...A } } }"
    )
    assert gql_code(body) == "GRAPHQL_VALIDATION_FAILED"  # NoFragmentCycles reports it; our cost walk ends


async def test_legitimate_listing_of_100_workspaces_is_allowed(api: Api) -> None:
    for i in range(3):
        await create_workspace(api, name=f"ws-{i}")
    body = await api.gql(
        "query($n: Int!) { workspaces(page: 1, perPage: $n) { items { id name status imports { id } } "
        "pagination { total } } }",
        {"n": 100},
    )
    assert "errors" not in body, body
    assert body["data"]["workspaces"]["pagination"]["total"] == 3


async def test_list_size_cap_is_enforced(api: Api) -> None:
    body = await api.gql("{ workspaces(perPage: 101) { items { id } } }")
    assert gql_code(body) == "BAD_USER_INPUT"


async def test_standard_introspection_fits_the_depth_and_cost_limits(api: Api) -> None:
    from graphql import get_introspection_query

    body = await api.gql(get_introspection_query(descriptions=True, input_value_deprecation=True), key=None)
    assert "errors" not in body, body
    assert body["data"]["__schema"]["queryType"]["name"] == "Query"


async def test_unexpected_resolver_error_is_masked(
    api: Api, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    async def boom(*_args: Any, **_kwargs: Any) -> Any:
        raise RuntimeError("secret connection string postgres://admin:hunter2@db")

    monkeypatch.setattr(workspace_resolvers, "list_workspaces", boom)
    with caplog.at_level(logging.ERROR, logger="evidence_gateway.graphql"):
        body = await api.gql("{ workspaces { items { id } } }")
    assert gql_code(body) == "INTERNAL_SERVER_ERROR"
    text = str(body)
    assert "secret" not in text and "hunter2" not in text and "RuntimeError" not in text
    assert body["errors"][0]["message"] == "Internal server error"
    # ... but the server log has it.
    assert any("hunter2" in str(r.exc_info) for r in caplog.records if r.exc_info)


async def test_parser_and_validation_caches_hit_on_a_repeated_document(api: Api) -> None:
    from strawberry.extensions.parser_cache import _get_parse_cache
    from strawberry.extensions.validation_cache import _get_validate_cache

    parse_cache, validate_cache = _get_parse_cache(limits.CACHE_SIZE), _get_validate_cache(limits.CACHE_SIZE)
    query = "{ workspaces(perPage: 3) { pagination { total perPage } } }"
    await api.gql(query)
    parse_hits, validate_hits = parse_cache.cache_info().hits, validate_cache.cache_info().hits
    body = await api.gql(query)
    assert body["data"]["workspaces"]["pagination"]["perPage"] == 3
    assert parse_cache.cache_info().hits == parse_hits + 1
    # Only true when the limit rules are the same classes on every request.
    assert validate_cache.cache_info().hits == validate_hits + 1


def _cost(body: dict[str, Any]) -> int:
    assert "errors" not in body, body
    cost: int = body["extensions"]["cost"]["requestedQueryCost"]
    return cost


async def test_a_page_size_variable_costs_its_value(api: Api) -> None:
    """``first: $n`` is charged as ``first: n`` (it counted as the largest page, 100, whatever n was);
    a variable not given weighs its default, or the list's own default page."""
    page = "{ workspacesConnection(first: %s) { nodes { id name status } } }"
    by_variable = "query($n: Int%s) { workspacesConnection(first: $n) { nodes { id name status } } }"
    literal = {n: _cost(await api.gql(page % n)) for n in (5, 7, 100)}
    assert literal[5] < literal[7] < literal[100]
    assert _cost(await api.gql(by_variable % "", {"n": 5})) == literal[5]
    assert _cost(await api.gql(by_variable % "", {"n": 100})) == literal[100]
    assert _cost(await api.gql(by_variable % " = 7")) == literal[7]
    assert _cost(await api.gql(by_variable % "", {})) == _cost(await api.gql(page.replace("(first: %s)", "")))
    # A value no Int can hold is the variable's error, not a cost.
    assert gql_code(await api.gql(by_variable % "", {"n": 2**40})) == "BAD_USER_INPUT"


async def test_variables_that_put_a_document_over_the_ceiling_are_refused(
    api: Api, no_resolver_calls: list[str]
) -> None:
    """The ceiling is checked with the request's page sizes before anything runs: the same document
    is answered with small pages and refused, naming its cost, with full ones."""
    fields = " ".join(f"f{i}: id" for i in range(20))
    query = (
        "query($n: Int!, $m: Int!) { workspaces(perPage: $n) { items { "
        f"packsConnection(first: $m) {{ nodes {{ {fields} }} }} }} }} }}"
    )
    small = await api.gql(query, {"n": 5, "m": 5})
    assert 0 < _cost(small) < limits.MAX_COST
    assert no_resolver_calls == ["list_workspaces"]
    refused(await api.gql(query, {"n": 100, "m": 100}), f"exceeds the limit of {limits.MAX_COST}")
    assert no_resolver_calls == ["list_workspaces"]  # the refused one ran nothing
