"""Headers of every answer: `X-Content-Type-Options: nosniff` everywhere, `Cache-Control:
no-store` on whatever was asked for with a key or a signed link (ETag, If-None-Match and
If-Match behave as before), and EVIDENCE_GRAPHIQL=false turning the IDE off. The missing
`server` banner is checked on a real `serve` (tests/test_logs.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest
from starlette.applications import Starlette

from evidence_gateway.app import create_app
from evidence_gateway.settings import Settings
from tests.conftest import Api, create_workspace
from tests.test_packs import calculated_workspace, generated
from tests.test_write_concurrency import add_import

HTML = {"Accept": "text/html"}


def assert_private(resp: httpx.Response) -> None:
    assert resp.headers["Cache-Control"] == "no-store", resp.headers
    assert resp.headers["X-Content-Type-Options"] == "nosniff"


async def test_answers_to_a_key_are_never_stored_and_etags_still_work(api: Api) -> None:
    ws = await create_workspace(api)
    got = await api.get(f"/api/v2/workspaces/{ws['id']}")
    assert_private(got)
    tag = got.headers["ETag"]
    stale = await add_import(api, ws["id"], [], **{"If-Match": '"0"'})
    assert stale.status_code == 412
    assert_private(stale)
    ok = await add_import(api, ws["id"], [], **{"If-Match": tag})
    assert ok.status_code == 201, ok.text
    assert_private(ok)
    assert_private(await api.get("/api/v2/workspaces/00000000-0000-0000-0000-000000000000"))  # 404
    assert_private(
        await api.http.post("/graphql", json={"query": "{ viewer { id } }"}, headers=api._headers("default"))
    )
    assert_private(await api.get("/api/v2/workspaces", key="evk_" + "0" * 48))  # refused keys too


async def test_signed_downloads_are_never_stored_and_revalidate(api: Api) -> None:
    ws = await calculated_workspace(api)
    pack = (await generated(api, ws["id"]))["data"]
    artifacts = (await api.get(f"/api/v2/packs/{pack['id']}/artifacts")).json()["data"]
    link = artifacts[0]["signed_download_url"].removeprefix("http://testserver")
    first = await api.http.get(link)
    assert first.status_code == 200 and first.content
    assert_private(first)
    again = await api.http.get(link, headers={"If-None-Match": first.headers["ETag"]})
    assert again.status_code == 304 and again.headers["ETag"] == first.headers["ETag"]
    assert_private(again)


async def test_public_answers_say_nosniff_and_keep_their_caching(client: httpx.AsyncClient) -> None:
    for path in ("/healthz", "/nowhere", "/api/openapi.json"):
        resp = await client.get(path)
        assert resp.headers["X-Content-Type-Options"] == "nosniff", path
        assert resp.headers.get("Cache-Control") != "no-store", path
    page = await client.get("/graphql", headers=HTML)
    assert page.status_code == 200 and "graphiql" in page.text.lower()


@pytest.fixture
async def no_ide(settings: Settings) -> AsyncIterator[httpx.AsyncClient]:
    app: Starlette = create_app(settings.model_copy(update={"graphiql": False}))
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as c:
            yield c


async def test_graphiql_can_be_turned_off(no_ide: httpx.AsyncClient) -> None:
    page = await no_ide.get("/graphql", headers=HTML)
    assert page.status_code == 404
    assert page.headers["content-type"].startswith("application/json")
    assert page.json()["errors"][0]["extensions"]["code"] == "NOT_FOUND"
    assert (await no_ide.get("/graphql/assets/graphiql.min.js")).status_code == 404
    # The API itself is unchanged.
    answer = await no_ide.post("/graphql", json={"query": "{ __typename }"})
    assert answer.status_code == 200 and answer.json()["data"] == {"__typename": "Query"}
