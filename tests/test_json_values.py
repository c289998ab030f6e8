"""One rule for JSON values on both transports (docs/api.md, "Bodies"): what REST refuses,
the GraphQL ``JSON`` scalar refuses too, as a variable and as a literal, before anything is
stored. A 30-digit integer used to store a run that could never be written back (500 on every
read, never failed by the sweeper); ``1e400`` in a literal became infinity.

Bodies are sent as raw JSON text, so numbers travel exactly as written.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from evidence_gateway.core.jsoncodec import MAX_JSON_DEPTH
from tests.conftest import Api, create_workspace
from tests.test_bad_input import (
    CALCULATE,
    CREATE_EVIDENCE,
    EVIDENCE,
    GQL_EVIDENCE,
    NUL,
    SURROGATE,
    assert_invalid,
    nested,
    post_raw,
    row_counts,
)

INTEGER_RANGE = "must be an integer from -9223372036854775808 to 9223372036854775807 (64 bits)"
THIRTY_DIGITS = "123456789012345678901234567890"
EVIDENCE_LITERAL = (
    'mutation { createEvidenceItem(input: {evidenceType: OTHER, title: "t", fileName: "f.pdf", '
    'fileUrl: "https://example.com/f.pdf", extractedMetadataJson: %s}) { id extractedMetadataJson } }'
)
# The JSON scalar's values sit one level below a body: what a REST free-form field may hold.
VALUE_DEPTH = MAX_JSON_DEPTH - 1


def _gql_body(query: str, variables_text: str) -> str:
    return '{"query": ' + json.dumps(query) + ', "variables": ' + variables_text + "}"


async def gql_raw(api: Api, query: str, variables_text: str = "{}") -> tuple[int, dict[str, Any]]:
    resp = await post_raw(api, "/graphql", _gql_body(query, variables_text))
    return resp.status_code, resp.json()


async def rest_metadata(api: Api, metadata_text: str) -> Any:
    head = json.dumps(EVIDENCE)[:-1]
    return await post_raw(api, "/api/v2/evidence-items", f'{head}, "extracted_metadata_json": {metadata_text}}}')


async def gql_metadata_variable(api: Api, metadata_text: str) -> tuple[int, dict[str, Any]]:
    fields = json.dumps(GQL_EVIDENCE)[:-1]
    return await gql_raw(api, CREATE_EVIDENCE, '{"i": ' + fields + ', "extractedMetadataJson": ' + metadata_text + "}}")


def refused_request(status: int, body: dict[str, Any], *, http_status: int = 200) -> str:
    """A GraphQL request refused before anything ran; returns the message."""
    assert status == http_status, body
    assert "data" not in body, body
    (error,) = body["errors"]
    assert error["extensions"]["code"] == "BAD_USER_INPUT", body
    message: str = error["message"]
    return message


# -- integers beyond 64 bits ----------------------------------------------------------------------


async def test_a_30_digit_integer_is_refused_on_both_transports(api: Api) -> None:
    ws = await create_workspace(api)
    before = await row_counts(api)
    snapshot = '{"rate": {"x": [1, ' + THIRTY_DIGITS + "]}}"
    resp = await post_raw(api, f"/api/v2/workspaces/{ws['id']}/calculate", '{"assumptions_snapshot": ' + snapshot + "}")
    assert_invalid(resp, {"assumptions_snapshot.rate.x[1]": INTEGER_RANGE})

    variables = '{"id": "' + ws["id"] + '", "i": {"assumptionsSnapshot": ' + snapshot + "}}"
    message = refused_request(*await gql_raw(api, CALCULATE, variables))
    assert message == (
        f"Variable '$i' has invalid value at .assumptionsSnapshot: Invalid JSON value: $.rate.x[1] {INTEGER_RANGE}"
    )
    literal = (
        f'mutation {{ calculateWorkspace(workspaceId: "{ws["id"]}", '
        f"input: {{assumptionsSnapshot: {{rate: {{x: [1, {THIRTY_DIGITS}]}}}}}}) {{ workspaceId }} }}"
    )
    status, body = await gql_raw(api, literal)
    assert refused_request(status, body) == f"Invalid JSON value: $.rate.x[1] {INTEGER_RANGE}"
    assert body["errors"][0]["locations"]  # where in the document the literal is
    # Past what int() reads at all (a 500 would be the old answer's cousin): refused the same way.
    status, body = await gql_raw(api, literal.replace(THIRTY_DIGITS, "9" * 5_000))
    assert refused_request(status, body).startswith("Invalid JSON value: the number 9999")
    # The run the issue found stuck `running` is never stored.
    assert await row_counts(api) == before


@pytest.mark.parametrize(
    ("number", "accepted"),
    [
        ("9223372036854775807", True),
        ("-9223372036854775808", True),
        ("9223372036854775808", False),  # 2**63: orjson would still write it, PostgreSQL's bigint would not hold it
        ("-9223372036854775809", False),
        ("18446744073709551616", False),  # 2**64: orjson read it as a double, silently
    ],
)
async def test_the_64_bit_boundary_is_the_same_on_both_transports(api: Api, number: str, accepted: bool) -> None:
    before = await row_counts(api)
    rest = await rest_metadata(api, '{"n": ' + number + "}")
    gql_status, gql_body = await gql_metadata_variable(api, '{"n": ' + number + "}")
    literal_status, literal_body = await gql_raw(api, EVIDENCE_LITERAL % ("{n: " + number + "}"))
    if accepted:
        assert rest.status_code == 201, rest.text
        assert rest.json()["data"]["extracted_metadata_json"] == {"n": int(number)}
        for status, body in ((gql_status, gql_body), (literal_status, literal_body)):
            assert status == 200 and "errors" not in body, body
            assert body["data"]["createEvidenceItem"]["extractedMetadataJson"] == {"n": int(number)}
        # And read back exactly, by id, on both transports.
        item_id = gql_body["data"]["createEvidenceItem"]["id"]
        read = await api.get(f"/api/v2/evidence-items/{item_id}")
        assert read.status_code == 200 and read.json()["data"]["extracted_metadata_json"] == {"n": int(number)}
        return
    assert_invalid(rest, {"extracted_metadata_json.n": INTEGER_RANGE})
    assert refused_request(gql_status, gql_body).endswith(f"Invalid JSON value: $.n {INTEGER_RANGE}")
    assert refused_request(literal_status, literal_body) == f"Invalid JSON value: $.n {INTEGER_RANGE}"
    assert await row_counts(api) == before


# -- numbers too large for a double ---------------------------------------------------------------


async def test_1e400_is_refused_as_a_literal_and_as_a_variable(api: Api) -> None:
    before = await row_counts(api)
    rest = await rest_metadata(api, '{"x": 1e400}')
    assert rest.status_code == 400, rest.text
    assert rest.json()["error"] == "malformed JSON body: the number 1e400 is too large (not a finite double)"

    message = refused_request(*await gql_metadata_variable(api, '{"x": [1, -1e400]}'), http_status=400)
    assert message == "malformed JSON body: the number -1e400 is too large (not a finite double)"

    status, body = await gql_raw(api, EVIDENCE_LITERAL % "{x: 1e400}")
    assert refused_request(status, body) == "Invalid JSON value: the number 1e400 is too large (not a finite double)"
    assert body["errors"][0]["locations"]
    assert await row_counts(api) == before
    # Large but finite numbers are ordinary doubles, on both.
    ok = await rest_metadata(api, '{"x": 1.5e308}')
    assert ok.status_code == 201 and ok.json()["data"]["extracted_metadata_json"] == {"x": 1.5e308}
    status, body = await gql_raw(api, EVIDENCE_LITERAL % "{x: 1.5e308, y: -2.5e-300}")
    assert body["data"]["createEvidenceItem"]["extractedMetadataJson"] == {"x": 1.5e308, "y": -2.5e-300}


# -- nesting --------------------------------------------------------------------------------------


async def test_nesting_is_limited_alike_for_literals_variables_and_rest(api: Api) -> None:
    # At the limit: stored and read back whole, as a literal and over REST.
    deepest = nested(VALUE_DEPTH)
    rest = await rest_metadata(api, deepest)
    assert rest.status_code == 201, rest.text[:300]
    literal = deepest.replace('"a"', "a")
    status, body = await gql_raw(api, EVIDENCE_LITERAL % literal)
    assert status == 200 and "errors" not in body, str(body)[:300]
    assert body["data"]["createEvidenceItem"]["extractedMetadataJson"] == json.loads(deepest)

    before = await row_counts(api)
    for depth in (VALUE_DEPTH + 1, MAX_JSON_DEPTH + 1):
        too_deep = nested(depth)
        rest = await rest_metadata(api, too_deep)
        assert rest.status_code == 400 and rest.json()["details"]["max_depth"] == MAX_JSON_DEPTH
        # A variable: the body around it is over the ceiling already (docs/graphql-schema.md).
        refused_request(*await gql_metadata_variable(api, too_deep), http_status=400)
        status, body = await gql_raw(api, EVIDENCE_LITERAL % too_deep.replace('"a"', "a"))
        path = "$" + ".a" * VALUE_DEPTH
        assert refused_request(status, body) == (
            f"Invalid JSON value: {path} must not be nested deeper than {VALUE_DEPTH} levels"
        )
    assert await row_counts(api) == before


# -- text -----------------------------------------------------------------------------------------


async def test_nul_and_lone_surrogates_are_refused_as_literals_too(api: Api) -> None:
    before = await row_counts(api)
    status, body = await gql_raw(api, EVIDENCE_LITERAL % '{note: "a\\u0000b", list: ["ok", {k: "x"}]}')
    assert refused_request(status, body) == f"Invalid JSON value: $.note {NUL}"
    # A lone surrogate escape is not even a GraphQL string (its lexer refuses it): refused all the same.
    status, body = await gql_raw(api, EVIDENCE_LITERAL % '{note: "a\\ud800b"}')
    assert status in (200, 400) and "data" not in body and body["errors"], body
    # The same values as variables and over REST: refused, named by path.
    for text, reason in (('"a\\u0000b"', NUL), ('"a\\ud800b"', SURROGATE)):
        metadata = '{"list": ["ok", {"note": ' + text + "}]}"
        assert_invalid(await rest_metadata(api, metadata), {"extracted_metadata_json.list[1].note": reason})
        message = refused_request(*await gql_metadata_variable(api, metadata))
        assert message.endswith(f"Invalid JSON value: $.list[1].note {reason}")
    assert await row_counts(api) == before


# -- outputs --------------------------------------------------------------------------------------


async def test_json_outputs_keep_working(api: Api) -> None:
    metadata: dict[str, Any] = {"pages": [{"n": 1, "t": "é ✓"}, None, True, 2.5, [], {}]}
    status, body = await gql_raw(
        api, CREATE_EVIDENCE, json.dumps({"i": GQL_EVIDENCE | {"extractedMetadataJson": metadata}})
    )
    assert status == 200 and body["data"]["createEvidenceItem"]["extractedMetadataJson"] == metadata
    events = await api.gql("{ events(first: 5) { items { type data } } }")
    (created,) = [e for e in events["data"]["events"]["items"] if e["type"] == "evidence_item.created"]
    assert created["data"]["extracted_metadata_json"] == metadata


def test_the_sdl_keeps_the_scalar_name_and_states_the_rule() -> None:
    from pathlib import Path

    sdl = (Path(__file__).resolve().parents[1] / "schema.graphql").read_text()
    assert "\nscalar JSON " in sdl
    assert "integers within 64 bits" in sdl and f"at most {VALUE_DEPTH} levels" in sdl
