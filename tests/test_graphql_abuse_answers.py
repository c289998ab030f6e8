"""How abusive GraphQL documents are answered: the same refusal whatever the white space, no
error echoing a large literal, answers no larger than about the request, documents over the
byte size refused before lexing on both transports, and a request id on every error under
either media type."""

from __future__ import annotations

import json
import uuid
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette

from evidence_gateway.schema import limits
from evidence_gateway.schema.errors import MAX_MESSAGE_CHARS
from tests.conftest import Api, Configured, gql_code
from tests.live_server import ws_served
from tests.wsclient import GraphQLWS

GRAPHQL_RESPONSE = "application/graphql-response+json"


async def post(api: Api, query: str, accept: str = "application/json", **extra: Any) -> httpx.Response:
    headers = {"Authorization": f"Bearer {api.key}", "Accept": accept}
    return await api.http.post("/graphql", json={"query": query, **extra}, headers=headers)


def messages(resp: httpx.Response) -> list[str]:
    return [e["message"] for e in resp.json()["errors"]]


@pytest.fixture
def spy_parse(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Documents that reached graphql-core's parser (and lexer): a refusal before lexing leaves none."""
    from graphql.language import parser as graphql_parser

    parsed: list[str] = []

    class Recording(graphql_parser.Parser):
        def __init__(self, source: Any, **kwargs: Any) -> None:
            parsed.append(source if isinstance(source, str) else source.body)
            super().__init__(source, **kwargs)

    monkeypatch.setattr(graphql_parser, "Parser", Recording)
    return parsed


# -- nesting: one answer whatever the white space ------------------------------------------------


async def test_a_deep_type_chain_is_refused_the_same_way_whatever_the_white_space(api: Api) -> None:
    chain = '{ __type(name: "Workspace") ' + "{ ofType " * 150 + "{ name }" + " }" * 150 + " }"
    answers = []
    for document in (chain, "\n" + chain, "\n" + chain, chain, "\n\n  " + chain.replace(" ", "\n")):
        resp = await post(api, document, GRAPHQL_RESPONSE)
        assert resp.status_code == 400, resp.text
        body = resp.json()
        assert "data" not in body
        answers.append([(e["message"], e["extensions"]["code"]) for e in body["errors"]])
    assert all(answer == answers[0] for answer in answers), answers
    ((message, code),) = answers[0]
    assert code == "QUERY_TOO_COMPLEX"
    assert f"more than {limits.MAX_NESTING} levels deep" in message
    assert "recursion" not in message


async def test_nesting_is_counted_outside_strings_and_up_to_the_limit(api: Api) -> None:
    def nested_literal(levels: int) -> str:  # "{" and "(" are two levels, then the brackets
        brackets = levels - 2
        return "{ workspaces(perPage: " + "[" * brackets + "1" + "]" * brackets + ") { items { id } } }"

    at_limit = await post(api, nested_literal(limits.MAX_NESTING))
    assert gql_code(at_limit.json()) == "GRAPHQL_VALIDATION_FAILED", at_limit.text  # parsed, then validated
    over = await post(api, nested_literal(limits.MAX_NESTING + 1))
    assert gql_code(over.json()) == "QUERY_TOO_COMPLEX" and "levels deep" in messages(over)[0]
    # Brackets inside a string or a comment are text, not nesting.
    quoted = '{ workspace(id: "' + "[" * 100 + '") { id } }\n# ' + "{" * 100
    answer = await post(api, quoted)
    assert "levels deep" not in answer.text and "Invalid UUID" in answer.text, answer.text


# -- answers no larger than about the request ----------------------------------------------------


async def test_errors_quote_an_excerpt_of_a_large_literal(api: Api) -> None:
    long_list = "[" + ", ".join(f'"{n:04}"' for n in range(400)) + "]"
    resp = await post(api, f"{{ workspaces(perPage: {long_list}) {{ items {{ id }} }} }}")
    body = resp.json()
    assert gql_code(body) == "GRAPHQL_VALIDATION_FAILED"
    (message,) = messages(resp)
    assert len(message) <= MAX_MESSAGE_CHARS + 60 and "elided" in message, message
    assert message.startswith("Int cannot represent non-integer value")
    assert '"0399"' in message  # the end is kept: the reason, if any, follows the literal
    # Scalars quote what they refuse too: a 60 KB string comes back as an excerpt.
    big_id = await post(api, '{ workspace(id: "' + "x" * 60_000 + '") { id } }')
    (message,) = messages(big_id)
    assert "Invalid UUID" in message and len(message) <= MAX_MESSAGE_CHARS + 60
    assert len(big_id.content) < 2_000


@pytest.mark.parametrize(
    "document",
    [
        # 25 deep list literals where an Int goes (the report's 2 KB document: a 105 KB answer)
        "{ "
        + " ".join(f"a{i}: workspaces(perPage: {'[' * 30}1{']' * 30}) {{ items {{ id }} }}" for i in range(25))
        + " }",
        # one error per list item: hundreds of small errors
        "{ workspaces(perPage: [" + ", ".join(["[1]"] * 300) + "]) { items { id } } }",
        # one error per unknown field
        "{ workspaces { items { " + " ".join(f"f{i}" for i in range(400)) + " } } }",
    ],
)
@pytest.mark.parametrize("accept", ["application/json", GRAPHQL_RESPONSE])
async def test_a_refused_document_answers_at_most_twice_its_size_or_8_kb(api: Api, document: str, accept: str) -> None:
    request = json.dumps({"query": document}).encode()
    resp = await api.http.post(
        "/graphql", content=request, headers={"Authorization": f"Bearer {api.key}", "Accept": accept}
    )
    body = resp.json()
    assert "data" not in body and body["errors"], body
    assert len(resp.content) <= max(2 * len(request), 8 * 1024), (len(request), len(resp.content))
    # Every error kept has its code and the request id; a cut list says so in its last entry.
    assert all(e["extensions"]["code"] and e["extensions"]["request_id"] for e in body["errors"])
    if "omitted" in body["errors"][-1]["message"]:
        assert len(body["errors"]) >= 2


async def test_a_few_errors_are_all_kept(api: Api) -> None:
    resp = await post(api, "{ workspaces { items { nope1 nope2 nope3 } } }")
    assert [m.split("'")[1] for m in messages(resp)] == ["nope1", "nope2", "nope3"]


# -- documents over the byte size: refused before lexing, HTTP and WebSocket ---------------------


async def test_a_document_over_the_byte_size_is_refused_before_lexing(api: Api, spy_parse: list[str]) -> None:
    limit = limits.DEFAULT_MAX_DOCUMENT_BYTES
    over = '{ workspace(id: "' + "x" * 900_000 + '") { id } }'
    for accept, status in (("application/json", 200), (GRAPHQL_RESPONSE, 400)):
        resp = await post(api, over, accept)
        assert resp.status_code == status
        body = resp.json()
        assert "data" not in body
        (error,) = body["errors"]
        assert error["extensions"]["code"] == "QUERY_TOO_COMPLEX"
        assert error["extensions"]["limit_bytes"] == limit
        assert "EVIDENCE_GRAPHQL_MAX_DOCUMENT_BYTES" in error["message"]
        assert len(resp.content) < 1_000
    assert spy_parse == []
    # Bytes, not characters: 30,000 three-byte characters are 90,000 bytes.
    wide = await post(api, '{ workspace(id: "' + "€" * 30_000 + '") { id } }')
    assert wide.json()["errors"][0]["extensions"].get("limit_bytes") == limit
    assert spy_parse == []
    # Under the size, the document is parsed as usual (a text of its own: the parser cache is per process).
    under = await post(api, '{ workspace(id: "' + "x" * 1_000 + f'") {{ id }} }} # {uuid.uuid4()}')
    assert "Invalid UUID" in messages(under)[0]
    assert len(spy_parse) == 1


async def test_the_document_size_is_a_setting(configured: Configured) -> None:
    document = "{ workspaces { pagination { total } } }" + " " * 2_000
    async with configured(graphql_max_document_bytes=2_048) as api:
        assert "errors" not in (await post(api, document)).json()
        refused = (await post(api, document + " " * 100)).json()
        assert refused["errors"][0]["extensions"] == {
            "code": "QUERY_TOO_COMPLEX",
            "limit_bytes": 2_048,
            "request_id": refused["errors"][0]["extensions"]["request_id"],
        }


async def test_a_subscription_over_the_byte_size_is_refused_on_the_socket(
    app: Starlette, key_a: str, spy_parse: list[str]
) -> None:
    over = "subscription { events { sequence } }" + " " * (limits.DEFAULT_MAX_DOCUMENT_BYTES + 1)
    async with ws_served(app) as url, GraphQLWS.connect(url, {"authorization": f"Bearer {key_a}"}) as client:
        message = await client.message(await client.subscribe(over))
        assert message["type"] == "error", message
        (error,) = message["payload"]
        assert error["extensions"]["code"] == "QUERY_TOO_COMPLEX"
        assert error["extensions"]["limit_bytes"] == limits.DEFAULT_MAX_DOCUMENT_BYTES
        # The socket stays usable: a document of ordinary size subscribes.
        op = await client.subscribe("subscription { events { sequence } }")
        await client.complete(op)
    assert all(len(parsed) < 1_000 for parsed in spy_parse)


# -- a request id on every error, under both media types ------------------------------------------


@pytest.mark.parametrize("accept", ["application/json", GRAPHQL_RESPONSE])
@pytest.mark.parametrize(
    ("document", "code"),
    [
        ("{ workspaces {", "GRAPHQL_PARSE_FAILED"),
        ("{ workspaces { nope } }", "GRAPHQL_VALIDATION_FAILED"),
        ("{ " + "workspaces { items { " * 12 + "id" + " } }" * 12 + " }", "QUERY_TOO_COMPLEX"),
        ("{ workspaces { pagination { total } } }", "UNAUTHENTICATED"),  # executed: a field error
        ("query($n: Int!) { workspaces(perPage: $n) { items { id } } }", "BAD_USER_INPUT"),
    ],
)
async def test_every_error_carries_the_request_id(api: Api, accept: str, document: str, code: str) -> None:
    headers = {"Accept": accept, "X-Request-ID": "trace-me-1"}
    if code != "UNAUTHENTICATED":
        headers["Authorization"] = f"Bearer {api.key}"
    resp = await api.http.post("/graphql", json={"query": document, "variables": {}}, headers=headers)
    assert resp.headers["content-type"].startswith(accept)
    errors = resp.json()["errors"]
    assert errors and all(e["extensions"]["request_id"] == "trace-me-1" for e in errors), errors
    assert errors[0]["extensions"]["code"] == code


@pytest.mark.parametrize("accept", ["application/json", GRAPHQL_RESPONSE])
async def test_refusals_before_any_document_carry_the_request_id(api: Api, accept: str) -> None:
    headers = {"Authorization": f"Bearer {api.key}", "Accept": accept, "X-Request-ID": "trace-me-2"}
    unknown = {"extensions": {"persistedQuery": {"version": 1, "sha256Hash": "0" * 64}}}
    for resp in (
        await api.http.post("/graphql", json=unknown, headers=headers),
        await api.http.post("/graphql", content=b"5", headers={**headers, "Content-Type": "application/json"}),
    ):
        assert resp.status_code in (200, 400)
        errors = resp.json()["errors"]
        assert errors[0]["extensions"]["request_id"] == "trace-me-2", resp.text
