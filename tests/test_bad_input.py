"""Bad input never reaches the database: unstorable text (422), over-deep JSON (400), non-JSON
bodies (415) — over REST and GraphQL, on SQLite and PostgreSQL alike, and nothing written.

Bodies are sent as raw JSON text built with ``json.dumps`` (ASCII escapes), so NUL and lone
surrogates travel as ``\\u0000`` / ``\\ud800`` exactly as a client would send them.
"""

from __future__ import annotations

import json
from typing import Any
from unittest.mock import ANY

import httpx
import pytest
from sqlalchemy import func, select
from sqlmodel import SQLModel

from evidence_gateway.web.http_body import MAX_JSON_DEPTH
from tests.conftest import Api, create_workspace, error_body
from tests.test_packs import calculated_workspace, generated

NUL = "must not contain the NUL character (U+0000)"
SURROGATE = "must not contain surrogate code points (U+D800-U+DFFF)"
ROW = {"external_id": "S-1", "mode": "road", "distance_km": 100, "mass_tonnes": 2, "origin": "DEHAM",
       "destination": "NLRTM"}  # fmt: skip
GQL_ROW = {"externalId": "S-1", "mode": "ROAD", "distanceKm": 100, "massTonnes": 2, "origin": "DEHAM",
           "destination": "NLRTM"}  # fmt: skip
EVIDENCE = {"evidence_type": "other", "title": "t", "file_name": "f.pdf", "file_url": "https://example.com/f.pdf"}
GQL_EVIDENCE = {"evidenceType": "OTHER", "title": "t", "fileName": "f.pdf", "fileUrl": "https://example.com/f.pdf"}

CREATE_WORKSPACE = "mutation($i: CreateWorkspaceInput!) { createWorkspace(input: $i) { id } }"
REGISTER_IMPORT = (
    "mutation($id: UUID!, $i: RegisterImportInput!) { registerImport(workspaceId: $id, input: $i) { id } }"
)
RECORD_APPROVAL = (
    "mutation($id: UUID!, $i: RecordApprovalInput!) { recordApproval(packId: $id, input: $i) { statusAfter } }"
)
CALCULATE = (
    "mutation($id: UUID!, $i: CalculateWorkspaceInput) { calculateWorkspace(workspaceId: $id, input: $i) "
    "{ workspaceId } }"
)
CREATE_EVIDENCE = (
    "mutation($i: CreateEvidenceItemInput!) { createEvidenceItem(input: $i) { id extractedMetadataJson } }"
)


# -- helpers ------------------------------------------------------------------------------------


def _auth(api: Api) -> dict[str, str]:
    return {"Authorization": f"Bearer {api.key}"}


async def post_raw(api: Api, path: str, body: str | bytes, content_type: str | None = "application/json") -> Any:
    headers = _auth(api) | ({"Content-Type": content_type} if content_type is not None else {})
    return await api.http.post(path, content=body, headers=headers)


async def rest(api: Api, path: str, body: dict[str, Any]) -> httpx.Response:
    """POST with ASCII escapes (httpx's own encoder cannot even write a lone surrogate)."""
    resp: httpx.Response = await post_raw(api, path, json.dumps(body))
    return resp


async def gql(api: Api, query: str, variables: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    resp = await post_raw(api, "/graphql", json.dumps({"query": query, "variables": variables}))
    return resp.status_code, resp.json()


async def row_counts(api: Api) -> dict[str, int]:
    """Rows of every table: a refused request must leave all of them as they were."""
    db = api.http._transport.app.state.db  # type: ignore[attr-defined]
    async with db.read() as session:
        return {
            table.name: int((await session.execute(select(func.count()).select_from(table))).scalar_one())
            for table in SQLModel.metadata.sorted_tables
        }


def assert_invalid(resp: httpx.Response, fields: dict[str, str]) -> None:
    assert resp.status_code == 422, resp.text
    assert error_body(resp) == {"error": "invalid input", "details": {"code": "invalid_input", "fields": fields}}


def assert_gql_invalid(status: int, body: dict[str, Any], fields: dict[str, str]) -> None:
    assert status == 200, body
    assert body["data"] is None, body
    (error,) = body["errors"]
    assert error["extensions"] == {"code": "BAD_USER_INPUT", "fields": fields, "request_id": ANY}


def assert_gql_json_refused(status: int, body: dict[str, Any], message: str) -> None:
    """A JSON scalar value refused while the request was read: a request error, nothing ran."""
    assert status == 200, body
    assert "data" not in body, body
    (error,) = body["errors"]
    assert error["message"] == message
    assert error["extensions"] == {"code": "BAD_USER_INPUT", "request_id": ANY}


def nested(depth: int, opener: str = '{"a":', closer: str = "}", leaf: str = "{}") -> str:
    """A JSON value exactly ``depth`` levels deep (``{}`` is one level)."""
    return opener * (depth - 1) + leaf + closer * (depth - 1)


# -- rule 1: text PostgreSQL cannot store is refused with 422, naming the field -------------------


@pytest.mark.parametrize(
    ("fields", "path", "gql_path"),
    [
        ({"name": "Q1\x00freight"}, "name", "input.name"),
        ({"name": "Q1", "external_reference": "PO-\x00"}, "external_reference", "input.externalReference"),
    ],
    ids=["name", "external_reference"],
)
async def test_nul_in_workspace_fields(api: Api, fields: dict[str, str], path: str, gql_path: str) -> None:
    before = await row_counts(api)
    assert_invalid(await rest(api, "/api/v2/workspaces", fields), {path: NUL})
    gql_input = {"name": fields["name"]} | (
        {"externalReference": fields["external_reference"]} if "external_reference" in fields else {}
    )
    assert_gql_invalid(*await gql(api, CREATE_WORKSPACE, {"i": gql_input}), {gql_path: NUL})
    assert await row_counts(api) == before
    assert (await api.get("/api/v2/workspaces")).json()["pagination"]["total"] == 0


async def test_nul_in_import_source_filename(api: Api) -> None:
    ws = await create_workspace(api)
    before = await row_counts(api)
    body = {"source_row_count": 1, "source_filename": "q1\x00.csv", "shipments": [ROW]}
    assert_invalid(await rest(api, f"/api/v2/workspaces/{ws['id']}/imports", body), {"source_filename": NUL})
    variables = {"id": ws["id"], "i": {"sourceRowCount": 1, "sourceFilename": "q1\x00.csv", "shipments": [GQL_ROW]}}
    assert_gql_invalid(*await gql(api, REGISTER_IMPORT, variables), {"input.sourceFilename": NUL})
    assert await row_counts(api) == before
    assert (await api.get(f"/api/v2/workspaces/{ws['id']}")).json()["data"]["status"] == "draft"


@pytest.mark.parametrize(("field", "gql_field"), [("external_id", "externalId"), ("origin", "origin"),
                                                  ("destination", "destination")])  # fmt: skip
async def test_nul_in_a_shipment_row_is_named_by_index(api: Api, field: str, gql_field: str) -> None:
    ws = await create_workspace(api)
    before = await row_counts(api)
    rows = [dict(ROW) for _ in range(5)]
    rows[3][field] = "SHP\x00-3"
    gql_rows = [dict(GQL_ROW) for _ in range(5)]
    gql_rows[3][gql_field] = "SHP\x00-3"
    expected = {f"shipments[3].{field}": NUL}
    body = {"source_row_count": 5, "shipments": rows}
    assert_invalid(await rest(api, f"/api/v2/workspaces/{ws['id']}/imports", body), expected)
    variables = {"id": ws["id"], "i": {"sourceRowCount": 5, "shipments": gql_rows}}
    assert_gql_invalid(*await gql(api, REGISTER_IMPORT, variables), {f"input.shipments[3].{gql_field}": NUL})
    assert await row_counts(api) == before


async def test_nul_in_approval_comment(api: Api) -> None:
    ws = await calculated_workspace(api)
    pack = (await generated(api, ws["id"]))["data"]
    before = await row_counts(api)
    body = {"action_type": "requested", "comment": "looks fine\x00"}
    assert_invalid(await rest(api, f"/api/v2/packs/{pack['id']}/approvals", body), {"comment": NUL})
    variables = {"id": pack["id"], "i": {"actionType": "REQUESTED", "comment": "looks fine\x00"}}
    assert_gql_invalid(*await gql(api, RECORD_APPROVAL, variables), {"input.comment": NUL})
    assert await row_counts(api) == before
    assert (await api.get(f"/api/v2/packs/{pack['id']}")).json()["data"]["status"] == pack["status"]


@pytest.mark.parametrize(
    "surrogate", [chr(0xD800), chr(0xDFFF), chr(0xDC00) + chr(0xD800)], ids=["high", "low", "reversed-pair"]
)
async def test_lone_surrogates_are_refused_alike(api: Api, surrogate: str) -> None:
    before = await row_counts(api)
    assert_invalid(await rest(api, "/api/v2/workspaces", {"name": f"Q1{surrogate}"}), {"name": SURROGATE})
    variables = {"i": {"name": f"Q1{surrogate}"}}
    assert_gql_invalid(*await gql(api, CREATE_WORKSPACE, variables), {"input.name": SURROGATE})
    assert await row_counts(api) == before


async def test_surrogate_bytes_in_the_body_are_refused_alike(api: Api) -> None:
    """UTF-8-encoded surrogates (not valid UTF-8): both parsers' readings reach the same rule."""
    raw = '{"name": "Q1\ud800"}'.encode("utf-8", "surrogatepass")
    assert_invalid(await post_raw(api, "/api/v2/workspaces", raw), {"name": SURROGATE})
    query = json.dumps(CREATE_WORKSPACE)
    gql_raw = ('{"query": ' + query + ', "variables": {"i": {"name": "Q1\ud800"}}}').encode("utf-8", "surrogatepass")
    resp = await post_raw(api, "/graphql", gql_raw)
    assert_gql_invalid(resp.status_code, resp.json(), {"input.name": SURROGATE})
    assert (await api.get("/api/v2/workspaces")).json()["pagination"]["total"] == 0


async def test_keys_and_values_inside_free_form_objects(api: Api) -> None:
    ws = await create_workspace(api)
    before = await row_counts(api)
    snapshot = {"a": {"b": "x\x00", "ok": "fine"}, "list": [1, {"k\ud800": 2}]}
    expected = {
        "assumptions_snapshot.a.b": NUL,
        "assumptions_snapshot.list[1].k\\ud800": "key " + SURROGATE,
    }
    resp = await rest(api, f"/api/v2/workspaces/{ws['id']}/calculate", {"assumptions_snapshot": snapshot})
    assert_invalid(resp, expected)
    # GraphQL: the JSON scalar applies the same rule while the variables are read, naming the
    # variable's path and, inside the value, the caller's own keys as sent.
    variables = {"id": ws["id"], "i": {"assumptionsSnapshot": snapshot}}
    assert_gql_json_refused(
        *await gql(api, CALCULATE, variables),
        "Variable '$i' has invalid value at .assumptionsSnapshot: Invalid JSON value: "
        f"$.a.b {NUL}; $.list[1].k\\ud800 key {SURROGATE}",
    )

    metadata = {"pages": [{"t\x00": "x"}, {"ok": "\udc00"}]}
    expected = {
        "extracted_metadata_json.pages[0].t\\u0000": "key " + NUL,
        "extracted_metadata_json.pages[1].ok": SURROGATE,
    }
    assert_invalid(
        await rest(api, "/api/v2/evidence-items", EVIDENCE | {"extracted_metadata_json": metadata}), expected
    )
    variables = {"i": GQL_EVIDENCE | {"extractedMetadataJson": metadata}}
    assert_gql_json_refused(
        *await gql(api, CREATE_EVIDENCE, variables),
        "Variable '$i' has invalid value at .extractedMetadataJson: Invalid JSON value: "
        f"$.pages[0].t\\u0000 key {NUL}; $.pages[1].ok {SURROGATE}",
    )
    assert await row_counts(api) == before


async def test_unstorable_text_is_listed_with_the_other_invalid_fields(api: Api) -> None:
    resp = await rest(api, "/api/v2/workspaces", {"name": "a\x00", "reporting_period_start": "soon", "x\x00": 1})
    assert resp.status_code == 422
    assert resp.json()["details"]["fields"] == {
        "name": NUL,
        "x\\u0000": "key " + NUL,  # ignored keys too: the rule covers everything sent
        "reporting_period_start": "must be a date string (YYYY-MM-DD)",
    }


async def test_a_typed_backslash_u0000_is_ordinary_text(api: Api) -> None:
    """The fast path looks for the escape orjson writes for NUL; a user's literal text is not it."""
    resp = await api.post("/api/v2/workspaces", {"name": "C:\\u0000", "external_reference": "\\\\u0000"})
    assert resp.status_code == 201, resp.text
    assert resp.json()["data"]["name"] == "C:\\u0000"


# -- rule 2: JSON deeper than MAX_JSON_DEPTH is a 400 before any resolver runs -------------------


async def test_rest_depth_limit(api: Api) -> None:
    head = json.dumps(EVIDENCE)[:-1]
    at_limit = f'{head}, "extracted_metadata_json": {nested(MAX_JSON_DEPTH - 1)}}}'
    resp = await post_raw(api, "/api/v2/evidence-items", at_limit)
    assert resp.status_code == 201, resp.text
    stored = (await api.get(f"/api/v2/evidence-items/{resp.json()['data']['id']}")).json()["data"]
    assert stored["extracted_metadata_json"] == json.loads(nested(MAX_JSON_DEPTH - 1))

    before = await row_counts(api)
    for too_deep in (
        f'{head}, "extracted_metadata_json": {nested(MAX_JSON_DEPTH)}}}',
        f'{head}, "extracted_metadata_json": {{"a": {nested(MAX_JSON_DEPTH - 1, "[", "]", "[]")}}}}}',
        f'{head}, "extracted_metadata_json": {nested(1_000)}}}',  # was a 500 (stdlib json in SQLAlchemy)
        f'{head}, "extracted_metadata_json": {nested(100_000)}}}',  # beyond orjson's own limit
    ):
        resp = await post_raw(api, "/api/v2/evidence-items", too_deep)
        assert resp.status_code == 400, resp.text[:300]
        assert error_body(resp) == {
            "error": f"JSON nested deeper than {MAX_JSON_DEPTH} levels",
            "details": {"code": "bad_request", "max_depth": MAX_JSON_DEPTH},
        }
    assert await row_counts(api) == before


async def test_rest_depth_limit_on_assumptions_snapshot(api: Api) -> None:
    ws = await create_workspace(api)
    before = await row_counts(api)
    for depth in (MAX_JSON_DEPTH, 255, 1_000):  # 255 and 1,000 were 500s, one after storing a run
        resp = await post_raw(
            api, f"/api/v2/workspaces/{ws['id']}/calculate", f'{{"assumptions_snapshot": {nested(depth)}}}'
        )
        assert resp.status_code == 400, resp.text[:300]
        assert error_body(resp)["details"] == {"code": "bad_request", "max_depth": MAX_JSON_DEPTH}
    assert await row_counts(api) == before
    # At the limit the body is read; this workspace has no data, so the resolver answers 409.
    at_limit = f'{{"assumptions_snapshot": {nested(MAX_JSON_DEPTH - 1)}}}'
    assert (await post_raw(api, f"/api/v2/workspaces/{ws['id']}/calculate", at_limit)).status_code == 409


async def test_brackets_inside_strings_do_not_count(api: Api) -> None:
    notes = '\\"[{' * 300 + "\\" + "[" * 500
    resp = await api.post("/api/v2/evidence-items", EVIDENCE | {"notes": notes, "title": '"]}' * 50})
    assert resp.status_code == 201, resp.text
    assert resp.json()["data"]["notes"] == notes


async def test_graphql_depth_limit(api: Api) -> None:
    query = json.dumps(CREATE_EVIDENCE)
    prefix = '{"query": ' + query + ', "variables": {"i": {"evidenceType": "OTHER", "title": "t", "fileName": "f.pdf", '
    prefix += '"fileUrl": "https://example.com/f.pdf", "extractedMetadataJson": '

    def body(metadata_depth: int) -> str:
        return prefix + nested(metadata_depth) + "}}}"  # body, variables, i: three levels above

    resp = await post_raw(api, "/graphql", body(MAX_JSON_DEPTH - 3))
    assert resp.status_code == 200, resp.text
    assert resp.json()["data"]["createEvidenceItem"]["extractedMetadataJson"] == json.loads(nested(MAX_JSON_DEPTH - 3))

    before = await row_counts(api)
    for depth in (MAX_JSON_DEPTH - 2, 1_000, 100_000):  # 1,000 was a 500 (RecursionError in json.loads)
        resp = await post_raw(api, "/graphql", body(depth))
        assert resp.status_code == 400, resp.text[:300]
        assert error_body(resp) == {
            "errors": [
                {
                    "message": f"JSON nested deeper than {MAX_JSON_DEPTH} levels",
                    "extensions": {"code": "BAD_USER_INPUT"},
                }
            ],
        }
    assert await row_counts(api) == before


async def test_graphql_get_variables_obey_the_depth_limit(api: Api) -> None:
    params = {"query": "query($v: JSON) { __typename }", "variables": nested(2_000, "[", "]", "[]")}
    resp = await api.get("/graphql", params=params)
    assert resp.status_code == 400, resp.text[:300]
    assert resp.json()["errors"][0]["extensions"]["code"] == "BAD_USER_INPUT"


async def test_graphql_refuses_nan_like_rest(api: Api) -> None:
    """NaN is not JSON: orjson refuses it on REST; stored, PostgreSQL's json type would fail."""
    before = await row_counts(api)
    query = json.dumps(CREATE_EVIDENCE)
    variables = json.dumps(GQL_EVIDENCE | {"extractedMetadataJson": {"x": float("nan")}})
    raw = '{"query": ' + query + ', "variables": {"i": ' + variables + "}}"
    resp = await post_raw(api, "/graphql", raw)
    assert resp.status_code == 400, resp.text
    assert resp.json()["errors"][0]["extensions"]["code"] == "BAD_USER_INPUT"
    resp = await post_raw(
        api, "/api/v2/evidence-items", json.dumps(EVIDENCE | {"extracted_metadata_json": {"x": float("nan")}})
    )
    assert resp.status_code == 400
    assert await row_counts(api) == before


# -- rule 3: a REST body declared as anything but JSON is a 415 ---------------------------------

NOT_JSON = [
    "text/plain",
    "text/plain; charset=utf-8",
    "application/x-www-form-urlencoded",
    "multipart/form-data; boundary=x",
    "application/xml",
    "application/jsonp",
    "text/json",
]


async def post_routes(api: Api) -> list[tuple[str, dict[str, Any]]]:
    """Every REST POST route with a body that would succeed (or get past parsing) as JSON."""
    ws = await calculated_workspace(api)
    pack = (await generated(api, ws["id"]))["data"]
    empty = await create_workspace(api, name="empty")
    return [
        ("/api/v2/workspaces", {"name": "created by a form"}),
        (f"/api/v2/workspaces/{empty['id']}/imports", {"source_row_count": 1, "shipments": [ROW]}),
        (f"/api/v2/workspaces/{ws['id']}/calculate", {}),
        (f"/api/v2/workspaces/{ws['id']}/packs", {}),
        (f"/api/v2/packs/{pack['id']}/approvals", {"action_type": "requested"}),
        ("/api/v2/evidence-items", EVIDENCE),
        ("/api/v2/webhooks/test", {"target_url": "http://127.0.0.1:9/hook"}),
    ]


@pytest.mark.parametrize("content_type", ["text/plain", "application/x-www-form-urlencoded"])
async def test_every_post_route_refuses_non_json_bodies(api: Api, content_type: str) -> None:
    routes = await post_routes(api)
    before = await row_counts(api)
    for path, body in routes:
        resp = await post_raw(api, path, json.dumps(body), content_type)
        assert resp.status_code == 415, (path, resp.text)
        assert resp.headers["accept-post"] == "application/json"
        assert resp.headers["content-type"].startswith("application/json")
        assert error_body(resp)["details"] == {"code": "unsupported_media_type"}
    assert await row_counts(api) == before


@pytest.mark.parametrize("content_type", NOT_JSON)
async def test_non_json_media_types_are_415(api: Api, content_type: str) -> None:
    resp = await post_raw(api, "/api/v2/workspaces", '{"name": "x"}', content_type)
    assert resp.status_code == 415, resp.text
    assert resp.json()["error"] and resp.json()["details"]["code"] == "unsupported_media_type"
    assert (await api.get("/api/v2/workspaces")).json()["pagination"]["total"] == 0


@pytest.mark.parametrize(
    "content_type",
    ["application/json", "APPLICATION/JSON", "application/json; charset=utf-8", "Application/Json ;charset=UTF-8",
     "application/vnd.api+json", "application/merge-patch+json; charset=utf-8", None],
)  # fmt: skip
async def test_json_media_types_and_no_header_are_read(api: Api, content_type: str | None) -> None:
    resp = await post_raw(api, "/api/v2/workspaces", '{"name": "x"}', content_type)
    assert resp.status_code == 201, resp.text


async def test_optional_bodies_may_be_absent_but_not_mistyped(api: Api) -> None:
    ws = await create_workspace(api)  # no data: both operations answer 409 once the body is read
    for path in (f"/api/v2/workspaces/{ws['id']}/calculate", f"/api/v2/workspaces/{ws['id']}/packs"):
        assert (await api.http.post(path, headers=_auth(api))).status_code == 409
        assert (await post_raw(api, path, b"", None)).status_code == 409
        assert (await post_raw(api, path, b"", "application/json")).status_code == 409
        # A declared type is taken at its word, empty or not.
        assert (await post_raw(api, path, b"", "text/plain")).status_code == 415
    # A required body still has to be there.
    resp = await post_raw(api, "/api/v2/workspaces", b"", None)
    assert resp.status_code == 400 and resp.json()["details"]["code"] == "bad_request"


async def test_415_comes_after_authentication(api: Api) -> None:
    resp = await api.http.post("/api/v2/workspaces", content=b'{"name": "x"}', headers={"Content-Type": "text/plain"})
    assert resp.status_code == 401


@pytest.mark.parametrize("content_type", ["text/plain", "application/x-www-form-urlencoded"])
async def test_graphql_non_json_post_is_a_graphql_400(api: Api, content_type: str) -> None:
    body = json.dumps({"query": CREATE_WORKSPACE, "variables": {"i": {"name": "via text"}}})
    resp = await post_raw(api, "/graphql", body, content_type)
    assert resp.status_code == 400, resp.text
    assert error_body(resp) == {
        "errors": [{"message": "Unsupported content type", "extensions": {"code": "BAD_USER_INPUT"}}],
    }
    assert (await api.get("/api/v2/workspaces")).json()["pagination"]["total"] == 0


def test_depth_constant_is_documented() -> None:
    from pathlib import Path

    docs = (Path(__file__).resolve().parents[1] / "docs" / "api.md").read_text()
    assert f"{MAX_JSON_DEPTH} levels" in docs
