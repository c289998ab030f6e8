"""/readyz (DESIGN.md §17): 200 when the database answers, its schema is at head and the
background work this process runs is running; otherwise 503 with the failing check named.
/healthz stays 200 throughout: the process lives."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest
from sqlalchemy import text
from starlette.applications import Starlette

from evidence_gateway import __version__
from evidence_gateway.app import create_app
from evidence_gateway.settings import Settings
from evidence_gateway.store import migrate


@pytest.fixture
async def busy_app(settings: Settings) -> AsyncIterator[Starlette]:
    """An app running its sweeper, queue and webhook dispatcher, as `serve` does by default."""
    app = create_app(settings.model_copy(update={"background_work": True, "dispatcher": True}))
    async with app.router.lifespan_context(app):
        yield app
        await app.state.dispatcher.stop(0)


async def test_ready_then_not_when_a_background_task_stops(busy_app: Starlette) -> None:
    transport = httpx.ASGITransport(app=busy_app)
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
        ready = await client.get("/readyz")
        assert ready.status_code == 200, ready.text
        assert ready.json() == {
            "status": "ready",
            "version": __version__,
            "schema_revision": migrate.head(),
            "checks": {"database": "ok", "schema": "ok", "background_work": "ok", "webhook_dispatcher": "ok"},
        }
        await busy_app.state.dispatcher.stop(0)
        down = await client.get("/readyz")
        assert down.status_code == 503 and down.headers["Retry-After"]
        body = down.json()
        assert body["error"] == "not ready: webhook_dispatcher: not running"
        assert body["details"]["code"] == "not_ready"
        assert body["details"]["checks"]["webhook_dispatcher"] == "not running"
        assert body["details"]["request_id"] == down.headers["X-Request-ID"]
        assert (await client.get("/healthz")).status_code == 200


async def test_not_ready_on_a_schema_behind_head(app: Starlette, client: httpx.AsyncClient) -> None:
    """Tasks this process does not run (the test settings turn both off) are not checked."""
    assert (await client.get("/readyz")).json()["checks"] == {"database": "ok", "schema": "ok"}
    head = migrate.head()
    async with app.state.db.engine.begin() as conn:
        await conn.execute(text("UPDATE alembic_version SET version_num = '0001_initial'"))
    try:
        resp = await client.get("/readyz")
    finally:
        async with app.state.db.engine.begin() as conn:
            await conn.execute(text("UPDATE alembic_version SET version_num = :head"), {"head": head})
    assert resp.status_code == 503
    assert resp.json()["details"]["checks"]["schema"] == f"at 0001_initial, this code needs {head}"
    assert resp.json()["details"]["schema_revision"] == "0001_initial"
    assert (await client.get("/readyz")).status_code == 200
