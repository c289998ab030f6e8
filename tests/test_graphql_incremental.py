"""@defer and @stream over HTTP (issue 30): the parts over multipart/mixed and text/event-stream,
parsed as a client parses them; the error codes and masking on every part; organisation scoping
inside a deferred fragment; the document limits, points budget, persisted queries and time budget
for such documents; one complete result for a client that does not read parts."""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
from collections.abc import Awaitable, Callable
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette

from evidence_gateway.resolvers import calculation_reads, pack_reads
from tests.conftest import Api, Configured
from tests.test_packs import calculated_workspace, generated

MULTIPART = "multipart/mixed;deferSpec=20220824, application/json"
SSE = "text/event-stream"

PACK_PAGE = """query($id: UUID!) {
  pack(id: $id) {
    id versionNumber
    ... @defer(label: "files") { artifacts { artifactType status } }
  }
}"""
WORKSPACE_PAGE = """query($id: UUID!) {
  workspace(id: $id) {
    id name
    packs @stream(initialCount: 0) { id versionNumber }
  }
}"""


async def send(api: Api, query: str, variables: dict[str, Any], accept: str | None, **body: Any) -> httpx.Response:
    headers = {**api._headers("default"), **({"Accept": accept} if accept else {})}
    return await api.http.post("/graphql", json={"query": query, "variables": variables, **body}, headers=headers)


def multipart_parts(resp: httpx.Response) -> list[dict[str, Any]]:
    """The JSON parts of a multipart/mixed body (RFC 2046 §5.1.1) under the boundary its
    Content-Type names; each part must say it is JSON."""
    media_type, _, params = resp.headers["content-type"].partition(";")
    assert media_type.strip() == "multipart/mixed"
    found = re.search(r'boundary="?([^";]+)"?', params)
    assert found is not None, resp.headers["content-type"]
    delimiter = "\r\n--" + found.group(1)
    body = resp.text
    assert body.endswith(delimiter + "--\r\n"), body[-40:]
    preamble, *chunks = body[: -len(delimiter + "--\r\n")].split(delimiter)
    assert preamble == ""
    parts = []
    for chunk in chunks:
        assert chunk.startswith("\r\n")
        head, _, payload = chunk[2:].partition("\r\n\r\n")
        assert "content-type: application/json" in head.lower()
        parts.append(json.loads(payload))
    return parts


def sse_parts(resp: httpx.Response) -> list[dict[str, Any]]:
    """The ``next`` events' JSON of a text/event-stream body (HTML's event stream format: events
    end at a blank line, ``data`` lines join with a newline), which must end with ``complete``."""
    assert resp.headers["content-type"].split(";")[0] == "text/event-stream"
    events: list[tuple[str, str]] = []
    for block in re.split(r"\r\n\r\n|\n\n|\r\r", resp.text):
        if not block.strip():
            continue
        name, data = "message", []
        for line in re.split(r"\r\n|\n|\r", block):
            field, _, value = line.partition(":")
            value = value.removeprefix(" ")
            if field == "event":
                name = value
            elif field == "data":
                data.append(value)
        events.append((name, "\n".join(data)))
    assert events[-1][0] == "complete" and all(name == "next" for name, _ in events[:-1]), events
    return [json.loads(data) for _, data in events[:-1]]


PARSERS: dict[str, Callable[[httpx.Response], list[dict[str, Any]]]] = {MULTIPART: multipart_parts, SSE: sse_parts}


def delivered(parts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every entry of the parts after the first, with the path it delivers to."""
    return [entry for part in parts[1:] for entry in part.get("incremental", [])]


def codes_and_messages(parts: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """Every error of every part: in the part, in its entries, in its completed fragments."""
    found = []
    for part in parts:
        errors = [*part.get("errors", [])]
        for entry in [*part.get("incremental", []), *part.get("completed", [])]:
            errors.extend(entry.get("errors", []))
        found.extend((e["extensions"]["code"], e["message"]) for e in errors)
    return found


async def a_pack(api: Api) -> tuple[dict[str, Any], dict[str, Any]]:
    ws = await calculated_workspace(api)
    return ws, (await generated(api, ws["id"]))["data"]


@pytest.mark.parametrize("accept", [MULTIPART, SSE])
async def test_a_deferred_fragment_and_a_streamed_list_arrive_after_the_first_part(api: Api, accept: str) -> None:
    ws, pack = await a_pack(api)
    resp = await send(api, PACK_PAGE, {"id": pack["id"]}, accept)
    assert resp.status_code == 200, resp.text
    parts = PARSERS[accept](resp)
    first = parts[0]
    assert first["data"] == {"pack": {"id": pack["id"], "versionNumber": 1}}  # no artifacts yet
    assert first["hasNext"] is True
    assert first["pending"] == [{"id": "0", "path": ["pack"], "label": "files"}]
    [entry] = delivered(parts)
    assert entry["id"] == "0" and entry["path"] == ["pack"] and entry["label"] == "files"
    assert len(entry["data"]["artifacts"]) == 9
    assert parts[-1]["hasNext"] is False
    assert {"id": "0"} in [c for part in parts[1:] for c in part.get("completed", [])]
    assert not codes_and_messages(parts)

    resp = await send(api, WORKSPACE_PAGE, {"id": ws["id"]}, accept)
    parts = PARSERS[accept](resp)
    assert parts[0]["data"]["workspace"] == {"id": ws["id"], "name": ws["name"], "packs": []}
    assert parts[0]["pending"] == [{"id": "0", "path": ["workspace", "packs"]}]
    items = [item for entry in delivered(parts) for item in entry["items"]]
    assert items == [{"id": pack["id"], "versionNumber": 1}]
    assert all(entry["path"] == ["workspace", "packs"] for entry in delivered(parts))
    assert parts[-1]["hasNext"] is False


@pytest.mark.parametrize("accept", [MULTIPART, SSE])
async def test_errors_in_later_parts_keep_their_codes_and_hide_internal_messages(
    api: Api, monkeypatch: pytest.MonkeyPatch, accept: str
) -> None:
    _, pack = await a_pack(api)

    async def broken(ctx: Any, ids: list[Any]) -> Any:
        raise RuntimeError("connection string postgres://secret@db")

    monkeypatch.setattr(pack_reads, "artifacts_by_pack_ids", broken)
    resp = await send(api, PACK_PAGE, {"id": pack["id"]}, accept)
    parts = PARSERS[accept](resp)
    assert parts[0]["data"]["pack"]["id"] == pack["id"] and "errors" not in parts[0]
    later = codes_and_messages(parts[1:])
    assert later == [("INTERNAL_SERVER_ERROR", "Internal server error")], parts
    assert "secret" not in resp.text and "RuntimeError" not in resp.text
    assert parts[-1]["hasNext"] is False


@pytest.mark.parametrize("accept", [MULTIPART, SSE])
async def test_a_deferred_fragment_reaches_no_other_organisation(api: Api, api_b: Api, accept: str) -> None:
    _, theirs = await a_pack(api_b)
    _, ours = await a_pack(api)
    query = """query($ours: UUID!, $theirs: UUID!) {
      pack(id: $ours) { id }
      ... @defer { other: pack(id: $theirs) { id artifacts { id } } }
    }"""
    resp = await send(api, query, {"ours": ours["id"], "theirs": theirs["id"]}, accept)
    parts = PARSERS[accept](resp)
    assert parts[0]["data"] == {"pack": {"id": ours["id"]}}
    [entry] = delivered(parts)
    assert entry["path"] == [] and entry["data"] == {"other": None}
    assert theirs["id"] not in resp.text


async def test_a_client_that_reads_no_parts_gets_one_complete_result(api: Api, configured: Configured) -> None:
    ws, pack = await a_pack(api)
    for accept in (None, "application/json", "application/graphql-response+json", "multipart/mixed;deferSpec=1999"):
        resp = await send(api, PACK_PAGE, {"id": pack["id"]}, accept)
        assert resp.status_code == 200 and resp.headers["content-type"].startswith("application/")
        body = resp.json()
        assert "hasNext" not in body and "errors" not in body
        assert len(body["data"]["pack"]["artifacts"]) == 9
        assert list(body["data"]["pack"]) == ["id", "versionNumber", "artifacts"]
    resp = await send(api, WORKSPACE_PAGE, {"id": ws["id"]}, None)
    assert resp.json()["data"]["workspace"]["packs"] == [{"id": pack["id"], "versionNumber": 1}]

    # A mutation answers whole even to a client that reads parts (an Idempotency-Key stores the answer).
    create = 'mutation { createWorkspace(input: {name: "deferred"}) { id ... @defer { name } } }'
    for accept in (MULTIPART, SSE):
        resp = await send(api, create, {}, accept)
        assert resp.headers["content-type"].startswith("application/json"), resp.text
        assert resp.json()["data"]["createWorkspace"]["name"] == "deferred"

    # Switched off: every client, whatever it accepts, gets the complete result.
    async with configured(graphql_incremental_delivery=False) as other:
        for accept in (MULTIPART, SSE):
            resp = await send(other, "{ workspaces { items { id } } ... @defer { me: workspaces { items { id } } } }",
                              {}, accept)  # fmt: skip
            assert resp.headers["content-type"].startswith("application/json"), resp.text
            assert resp.json()["data"] == {"workspaces": {"items": []}, "me": {"items": []}}


@pytest.mark.parametrize("accept", [MULTIPART, SSE])
async def test_limits_apply_to_documents_with_defer(api: Api, configured: Configured, accept: str) -> None:
    # Depth: the fragment's fields count as if inline; refused before anything runs, as JSON.
    deep = "{ workspaces { items { " + "packs { workspace { " * 8 + "id" + " } }" * 8 + " } } }"
    deferred = deep.replace("{ workspaces", "{ ... @defer { workspaces", 1) + " }"
    resp = await send(api, deferred, {}, accept)
    assert resp.headers["content-type"].startswith("application/json")
    assert resp.json()["errors"][0]["extensions"]["code"] == "QUERY_TOO_COMPLEX"
    # @defer where the spec forbids it (on a mutation's root, on a subscription) is a validation error.
    resp = await send(api, 'mutation { ... @defer { createWorkspace(input: {name: "x"}) { id } } }', {}, accept)
    assert resp.json()["errors"][0]["extensions"]["code"] == "GRAPHQL_VALIDATION_FAILED"
    # The points budget: a document that costs more than is left does not run, in parts or not.
    async with configured(rate_limit_graphql_points=1) as limited:
        query = "{ workspaces { items { id } } ... @defer { w: workspaces { items { id } } } }"
        resp = await send(limited, query, {}, accept)
        assert resp.status_code == 429 and resp.json()["errors"][0]["extensions"]["code"] == "RATE_LIMITED"


@pytest.mark.parametrize("accept", [MULTIPART, SSE])
async def test_a_persisted_query_with_defer_answers_in_parts(api: Api, accept: str) -> None:
    _, pack = await a_pack(api)
    sha = hashlib.sha256(PACK_PAGE.encode()).hexdigest()
    extensions = {"persistedQuery": {"version": 1, "sha256Hash": sha}}
    unknown = await api.http.post(
        "/graphql", json={"extensions": extensions, "variables": {"id": pack["id"]}},
        headers={**api._headers("default"), "Accept": accept},
    )  # fmt: skip
    assert unknown.json()["errors"][0]["extensions"]["code"] == "PERSISTED_QUERY_NOT_FOUND"
    registered = await send(api, PACK_PAGE, {"id": pack["id"]}, accept, extensions=extensions)
    assert len(delivered(PARSERS[accept](registered))) == 1
    by_hash = await api.http.post(
        "/graphql", json={"extensions": extensions, "variables": {"id": pack["id"]}},
        headers={**api._headers("default"), "Accept": accept},
    )  # fmt: skip
    parts = PARSERS[accept](by_hash)
    assert parts[0]["data"]["pack"] == {"id": pack["id"], "versionNumber": 1}
    assert len(delivered(parts)[0]["data"]["artifacts"]) == 9


@pytest.mark.parametrize("accept", [MULTIPART, SSE])
async def test_later_parts_keep_the_query_time_budget(
    api: Api, app: Starlette, monkeypatch: pytest.MonkeyPatch, accept: str
) -> None:
    _, pack = await a_pack(api)
    release = asyncio.Event()
    real = pack_reads.artifacts_by_pack_ids

    async def stuck(ctx: Any, ids: list[Any]) -> Any:
        await release.wait()  # never set while the query runs
        return await real(ctx, ids)

    monkeypatch.setattr(pack_reads, "artifacts_by_pack_ids", stuck)
    app.state.settings.graphql_execution_seconds = 0.5
    try:
        resp = await send(api, PACK_PAGE, {"id": pack["id"]}, accept)
    finally:
        release.set()
    parts = PARSERS[accept](resp)
    assert parts[0]["data"]["pack"]["id"] == pack["id"]
    assert parts[-1] == {"hasNext": False, "completed": [{"id": "0", "errors": parts[-1]["completed"][0]["errors"]}]}
    assert codes_and_messages(parts[1:])[0][0] == "QUERY_TIMEOUT"


@pytest.mark.parametrize("accept", [MULTIPART, SSE])
async def test_the_last_part_waits_for_the_reads_its_fragment_started(
    api: Api, monkeypatch: pytest.MonkeyPatch, accept: str
) -> None:
    """A failed field of a deferred fragment cancels its siblings and the DataLoader their batches,
    but a read already in the driver is not cut off: the stream ends only once it has finished."""
    _, pack = await a_pack(api)
    siblings_reading, refused, release = asyncio.Event(), asyncio.Event(), asyncio.Event()
    reading: list[str] = []
    finished: list[str] = []

    async def failing(ctx: Any, ids: list[Any]) -> Any:
        await siblings_reading.wait()
        refused.set()
        raise RuntimeError("artifact store down")

    def held(name: str, real: Callable[[Any, list[Any]], Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
        async def read(ctx: Any, ids: list[Any]) -> Any:
            reading.append(name)
            if len(reading) == 2:
                siblings_reading.set()
            await release.wait()
            try:
                return await real(ctx, ids)
            finally:
                finished.append(name)

        return read

    monkeypatch.setattr(pack_reads, "artifacts_by_pack_ids", failing)
    monkeypatch.setattr(pack_reads, "approvals_by_pack_ids", held("approvals", pack_reads.approvals_by_pack_ids))
    monkeypatch.setattr(calculation_reads, "runs_by_ids", held("run", calculation_reads.runs_by_ids))
    query = """query($id: UUID!) { pack(id: $id) { id
      ... @defer { artifacts { id } approvals { actionType } calculationRun { id } } } }"""
    asking = asyncio.ensure_future(send(api, query, {"id": pack["id"]}, accept))
    await asyncio.wait_for(refused.wait(), 60)  # bounded: a broken hook fails, never hangs
    for _ in range(500):  # turns of the loop, not time: the answer needs no I/O from here
        await asyncio.sleep(0)
    assert not asking.done(), "the stream ended while its fragment's reads were still running"
    release.set()
    parts = PARSERS[accept](await asking)
    assert sorted(finished) == ["approvals", "run"]
    assert parts[0]["data"] == {"pack": {"id": pack["id"]}}
    assert codes_and_messages(parts[1:]) == [("INTERNAL_SERVER_ERROR", "Internal server error")]
    assert parts[-1]["hasNext"] is False and not delivered(parts)


@pytest.mark.parametrize("accept", [MULTIPART, SSE])
async def test_the_parts_together_keep_the_response_ceiling(configured: Configured, accept: str) -> None:
    async with configured(graphql_max_response_bytes=1024) as api:
        _, pack = await a_pack(api)
        query = PACK_PAGE.replace("artifactType status", "artifactType status fileName fileUrl signedDownloadUrl")
        parts = PARSERS[accept](await send(api, query, {"id": pack["id"]}, accept))
        assert parts[0]["data"]["pack"]["id"] == pack["id"]
        assert parts[-1]["hasNext"] is False and not delivered(parts)
        assert parts[-1]["completed"][0]["id"] == "0"
        assert codes_and_messages(parts) == [("RESPONSE_TOO_LARGE", parts[-1]["completed"][0]["errors"][0]["message"])]


@pytest.mark.parametrize("accept", [MULTIPART, SSE])
async def test_the_parts_carry_the_extensions_a_single_answer_does(
    api: Api, monkeypatch: pytest.MonkeyPatch, accept: str
) -> None:
    """The first part carries ``extensions.cost`` (the points the whole answer cost, as one
    result reports them) and ``extensions.request_id``; every error of every frame its code, its
    masked message and the request's id, as single answers carry them."""
    _, pack = await a_pack(api)
    whole = await send(api, PACK_PAGE, {"id": pack["id"]}, "application/json")
    cost = whole.json()["extensions"]["cost"]["requestedQueryCost"]
    resp = await send(api, PACK_PAGE, {"id": pack["id"]}, accept)
    parts = PARSERS[accept](resp)
    extensions = parts[0]["extensions"]
    assert extensions["cost"]["requestedQueryCost"] == cost
    assert (
        extensions["cost"]["throttleStatus"]["currentlyAvailable"]
        < extensions["cost"]["throttleStatus"]["maximumAvailable"]
    )
    assert extensions["request_id"] == resp.headers["x-request-id"]

    async def broken(ctx: Any, ids: list[Any]) -> Any:
        raise RuntimeError("connection string postgres://secret@db")

    monkeypatch.setattr(pack_reads, "artifacts_by_pack_ids", broken)
    query = """query($id: UUID!, $other: UUID!) {
      pack(id: $id) { id ... @defer { artifacts { id } } }
      missing: workspace(id: $other) { id }
      bad: pack(id: $id) { id artifacts { id } }
    }"""
    resp = await send(api, query, {"id": pack["id"], "other": "00000000-0000-0000-0000-000000000000"}, accept)
    parts = PARSERS[accept](resp)
    errors = [
        e
        for part in parts
        for holder in [part, *part.get("incremental", []), *part.get("completed", [])]
        for e in holder.get("errors", [])
    ]
    assert len(errors) == 2 and [p for p in parts if p.get("errors")] == [parts[0]], parts
    for error in errors:
        assert error["message"] == "Internal server error" and error["extensions"]["code"] == "INTERNAL_SERVER_ERROR"
        assert error["extensions"]["request_id"] == resp.headers["x-request-id"]
    assert "secret" not in resp.text and "RuntimeError" not in resp.text
    assert parts[0]["extensions"]["request_id"] == resp.headers["x-request-id"]
