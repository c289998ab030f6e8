"""Saturation on /metrics (docs/observability.md): scraped before and after real work, the pool,
queue, webhook backlog, delivery latency, subscription and event-log figures move as the work
says they must; the endpoint label of the latency histogram stays bounded."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette

from evidence_gateway.app import create_app
from evidence_gateway.settings import Settings
from evidence_gateway.store.db import SQLITE_READER_THREADS, Database
from evidence_gateway.web.observability import metrics
from tests.conftest import PG_AVAILABLE, Api, create_workspace, seed_key
from tests.live_server import ws_served
from tests.serve_process import Database as ServedDatabase
from tests.serve_process import Node
from tests.test_metrics import BUSY_SECONDS, Samples, delta, parse, scrape
from tests.test_packs import calculated_workspace
from tests.test_webhook_endpoints import register
from tests.waiting import eventually, until
from tests.webhook_receiver import Receiver, running
from tests.wsclient import GraphQLWS

ASYNC = {"Prefer": "respond-async"}


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples.get((name, frozenset(labels.items())), 0.0)


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    with running() as r:
        yield r


async def test_pool_connections_in_use_are_read_at_the_scrape(app: Starlette, api: Api) -> None:
    before = await scrape(api.http)
    assert value(before, "evidence_db_pool_max_connections", pool="main") >= 1
    async with app.state.db.engine.connect() as held:
        await held.exec_driver_sql("SELECT 1")
        during = await scrape(api.http)
    after = await scrape(api.http)
    in_use = "evidence_db_pool_connections"
    assert value(during, in_use, pool="main", state="in_use") == value(before, in_use, pool="main", state="in_use") + 1
    assert value(after, in_use, pool="main", state="in_use") == value(before, in_use, pool="main", state="in_use")


@asynccontextmanager
async def started(settings: Settings, **changes: Any) -> AsyncIterator[tuple[Starlette, Api]]:
    """Another app on the test's database with ``changes`` (the fixture app cleans up)."""
    other = create_app(settings.model_copy(update=changes))
    async with other.router.lifespan_context(other):
        key = await seed_key(other.state.db, "org-saturation")
        transport = httpx.ASGITransport(app=other)
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as http:
            yield other, Api(http, key)


# SQLite's pool is SQLAlchemy's default (five and ten more), not the setting: PostgreSQL only.
@pytest.mark.parametrize(
    "database_url",
    [pytest.param("postgresql", marks=pytest.mark.skipif(not PG_AVAILABLE, reason="no PostgreSQL"))],
    indirect=True,
)
async def test_callers_waiting_for_a_connection_are_counted(app: Starlette, settings: Settings) -> None:
    """A pool of one connection, held: the next caller waits, and the scrape says so."""
    async with started(settings, database_pool_size=1) as (other, api):
        db = other.state.db
        async with db.engine.connect() as held:
            await held.exec_driver_sql("SELECT 1")
            waiter = asyncio.create_task(_one_query(db))
            found = await eventually(_waiting_of(api), "a caller waiting for the one connection")
            assert found == 1
        await waiter
        assert await _waiting_of(api)() == 0


async def _one_query(db: Database) -> None:
    async with db.engine.connect() as conn:
        await conn.exec_driver_sql("SELECT 1")


def _waiting_of(api: Api) -> Callable[[], Awaitable[float]]:
    async def probe() -> float:
        # The scrape's own read of the queues waits too (and gives up): only the pool gauge counts.
        return value(await scrape(api.http), "evidence_db_pool_waiting", pool="main")

    return probe


async def test_respond_async_work_waiting_is_the_queue_depth_and_age(api: Api) -> None:
    """background_work is off in the test app: work accepted with respond-async stays queued."""
    before = await scrape(api.http)
    assert value(before, "evidence_metrics_database_read_ok") == 1
    assert value(before, "evidence_respond_async_queue_depth", kind="calculation") == 0
    ws = await calculated_workspace(api)
    resp = await api.post(f"/api/v2/workspaces/{ws['id']}/calculate", headers=ASYNC)
    assert resp.status_code == 202, resp.text
    resp = await api.post(f"/api/v2/workspaces/{ws['id']}/packs", headers=ASYNC)
    assert resp.status_code == 202, resp.text
    after = await scrape(api.http)
    assert delta(before, after, "evidence_respond_async_queue_depth", kind="calculation") == 1
    assert delta(before, after, "evidence_respond_async_queue_depth", kind="pack") == 1

    async def older() -> bool:
        return value(await scrape(api.http), "evidence_respond_async_queue_oldest_age_seconds", kind="calculation") > 0

    await eventually(older, "the queued calculation's age")


async def test_events_appended_are_counted_by_type(api: Api) -> None:
    before = await scrape(api.http)
    await create_workspace(api)
    await create_workspace(api)
    after = await scrape(api.http)
    assert delta(before, after, "evidence_events_appended_total", type="workspace.created") == 2


async def test_webhook_backlog_oldest_due_and_latency_by_endpoint(
    app: Starlette, settings: Settings, receiver: Receiver
) -> None:
    """A receiver that holds its answer: the message is owed and due, and ages; once answered
    the backlog is empty and the attempt is timed under its endpoint's id."""
    receiver.released.clear()
    # The labelled endpoints are the first this process delivered to: earlier tests in this
    # worker process may have used them all, and this endpoint would count as "other".
    metrics._known_endpoints.clear()
    async with started(settings, dispatcher=True, webhook_connect_timeout_seconds=1.0) as (_other, api):
        before = await scrape(api.http)
        endpoint = await register(api, receiver.url, event_types=["workspace.created"])
        await create_workspace(api)
        await eventually(lambda: receiver.received, "the delivery reaching the receiver")

        async def owed_and_aging() -> Samples | None:
            now = await scrape(api.http)
            owed = value(now, "evidence_webhook_backlog_messages") == 1
            return now if owed and value(now, "evidence_webhook_oldest_due_age_seconds") > 0 else None

        await eventually(owed_and_aging, "one owed message, due and ageing")
        receiver.released.set()

        async def delivered() -> Samples | None:
            now = await scrape(api.http)
            return now if value(now, "evidence_webhook_backlog_messages") == 0 else None

        after = await eventually(delivered, "the backlog emptied")
        timed = "evidence_webhook_delivery_duration_seconds_count"
        assert delta(before, after, timed, endpoint=endpoint["id"], outcome="delivered") == 1
        assert value(after, "evidence_webhook_oldest_due_age_seconds") == 0


def test_the_endpoint_label_is_bounded() -> None:
    names = [f"endpoint-{n}" for n in range(5)]
    metrics._known_endpoints.clear()
    try:
        assert [metrics.endpoint_label(n, 3) for n in names] == [*names[:3], "other", "other"]
        assert metrics.endpoint_label(names[1], 3) == names[1]  # a known one keeps its label
        assert metrics.endpoint_label("new", 0) == "other"
    finally:
        metrics._known_endpoints.clear()


async def test_open_subscriptions_are_counted(app: Starlette, api: Api, key_a: str) -> None:
    async with ws_served(app) as url:
        before = await scrape(api.http)
        async with GraphQLWS.connect(url, {"authorization": f"Bearer {key_a}"}) as client:
            await client.subscribe("subscription { events { sequence } }")

            async def counted() -> bool:
                return delta(before, await scrape(api.http), "evidence_subscriptions_open") == 1

            await eventually(counted, "the subscription counted")

        async def gone() -> bool:
            return delta(before, await scrape(api.http), "evidence_subscriptions_open") == 0

        await eventually(gone, "the subscription no longer counted")


@pytest.mark.slow
def test_serve_with_two_workers_sums_each_workers_pools(tmp_path: Path) -> None:
    """Whichever worker answers, the scrape holds both workers' pools: the reader pool's four
    connections twice (each worker copies its figures to the shared sample files)."""
    samples = tmp_path / "metrics"
    database = ServedDatabase(f"sqlite+aiosqlite:///{tmp_path / 'evidence.db'}", sqlite_path=tmp_path / "evidence.db")
    node = Node(database, tmp_path, env={"PROMETHEUS_MULTIPROC_DIR": str(samples)}).start("--workers", "2")
    try:

        def both_workers_mirrored() -> float | None:
            text = httpx.get(f"{node.base}/metrics", timeout=BUSY_SECONDS).text
            found = parse(text).get(("evidence_db_pool_max_connections", frozenset({("pool", "sqlite_reader")})))
            return found if found == 2 * SQLITE_READER_THREADS else None

        until(both_workers_mirrored, "both workers' reader pools in one scrape", BUSY_SECONDS)
        text = httpx.get(f"{node.base}/metrics", timeout=BUSY_SECONDS).text
        samples_of = [line for line in text.splitlines() if line.startswith("evidence_subscriptions_open ")]
        assert len(samples_of) == 1  # summed over the workers, not one per worker
        assert parse(text)[("evidence_metrics_database_read_ok", frozenset())] == 1
    finally:
        node.stop()
