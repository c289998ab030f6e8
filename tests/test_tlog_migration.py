"""Migration 0011 gives every event already stored its leaf: a log written before the
transparency log existed is, after the upgrade, a tree that ``log verify`` finds consistent."""

from __future__ import annotations

import httpx

from evidence_gateway.app import create_app
from evidence_gateway.models import Event
from evidence_gateway.models.base import table_of
from evidence_gateway.resolvers import log_audit
from evidence_gateway.settings import Settings
from evidence_gateway.store import migrate
from evidence_gateway.store.db import Database
from tests.conftest import Api, create_workspace, seed_key
from tests.test_migrations import empty_url  # noqa: F401  (the fixture: a database of its own)


async def test_existing_events_become_leaves(empty_url: str) -> None:  # noqa: F811
    settings = Settings(database_url=empty_url, secret_key="k", public_base_url="http://testserver",
                        background_work=False, dispatcher=False, auth_cache_seconds=0)  # fmt: skip
    db = Database(empty_url)
    await migrate.upgrade(db)
    await db.dispose()
    app = create_app(settings)
    async with app.router.lifespan_context(app):
        key = await seed_key(app.state.db, "org-old")
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as http:
            for i in range(5):
                await create_workspace(Api(http, key), name=f"before {i}")
    db = Database(empty_url)
    try:
        await migrate.downgrade(db, "0010_persisted_query_bounds")
        await migrate.upgrade(db)
        async with db.engine.connect() as conn:
            events = (await conn.execute(table_of(Event).select())).all()
        assert len(events) == 5 and all(row.leaf_hash for row in events)
        audit = await log_audit.audit(db)
        assert audit.problems == [] and audit.checked
    finally:
        await db.dispose()
