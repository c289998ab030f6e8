"""/metrics (DESIGN.md §17): Prometheus text, scraped before and after real requests; the
counters move for the right route template (never the raw path), GraphQL operation and status;
calculation and pack durations and webhook delivery outcomes are recorded; the endpoint can be
switched off or put behind a token; with `serve --workers 2` a scrape sums every worker."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from evidence_gateway.settings import Settings
from tests.conftest import Api, create_workspace
from tests.serve_process import Database, Node
from tests.test_packs import calculated_workspace, generated
from tests.waiting import eventually, until
from tests.webhook_receiver import Receiver, running

Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


@pytest.fixture
def settings(settings: Settings) -> Settings:
    """The dispatcher runs, so that webhook deliveries happen and are counted."""
    return settings.model_copy(update={"dispatcher": True, "webhook_connect_timeout_seconds": 1.0})


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    with running() as r:
        yield r


def parse(text: str) -> Samples:
    return {
        (s.name, frozenset(s.labels.items())): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


async def scrape(http: httpx.AsyncClient, **headers: str) -> Samples:
    resp = await http.get("/metrics", headers=headers)
    assert resp.status_code == 200, resp.text
    assert resp.headers["content-type"].startswith("text/plain; version=")
    return parse(resp.text)


def delta(before: Samples, after: Samples, name: str, **labels: str) -> float:
    key = (name, frozenset(labels.items()))
    return after.get(key, 0.0) - before.get(key, 0.0)


def request_labels(method: str, route: str, status: int, operation: str = "") -> dict[str, str]:
    return {"method": method, "route": route, "operation": operation, "status": str(status)}


async def test_requests_are_counted_by_route_template_operation_and_status(api: Api) -> None:
    before = await scrape(api.http)
    for _ in range(2):
        assert (await api.get("/api/v2/workspaces")).status_code == 200
    missing = str(uuid.uuid4())
    assert (await api.get(f"/api/v2/workspaces/{missing}")).status_code == 404
    assert (await api.get("/api/v2/workspaces", key=None)).status_code == 401
    assert "errors" not in await api.gql("query CountThem { workspaces { pagination { total } } }")
    assert "errors" not in await api.gql("{ workspaces { pagination { total } } }")
    after = await scrape(api.http)

    def moved(name: str, **labels: str) -> float:
        return delta(before, after, name, **labels)

    for name in ("evidence_http_requests_total", "evidence_http_request_duration_seconds_count"):
        assert moved(name, **request_labels("GET", "/api/v2/workspaces", 200)) == 2
        assert moved(name, **request_labels("GET", "/api/v2/workspaces/{id}", 404)) == 1
        assert moved(name, **request_labels("GET", "/api/v2/workspaces", 401)) == 1
        assert moved(name, **request_labels("POST", "/graphql", 200, "CountThem")) == 1
        assert moved(name, **request_labels("POST", "/graphql", 200, "anonymous")) == 1
    assert moved("evidence_http_request_duration_seconds_sum", **request_labels("GET", "/api/v2/workspaces", 200)) > 0
    assert not [key for key in after if missing in str(key)]  # ids never become labels


async def test_calculation_and_pack_durations_are_recorded(api: Api) -> None:
    before = await scrape(api.http)
    ws = await calculated_workspace(api)
    await generated(api, ws["id"])
    after = await scrape(api.http)
    completed = {"outcome": "completed"}
    assert delta(before, after, "evidence_calculation_duration_seconds_count", **completed) == 1
    assert delta(before, after, "evidence_calculation_duration_seconds_sum", **completed) > 0
    assert delta(before, after, "evidence_pack_generation_duration_seconds_count", **completed) == 1


async def test_webhook_delivery_outcomes_are_counted(api: Api, receiver: Receiver) -> None:
    before = await scrape(api.http)
    ok = await api.post("/api/v2/webhook-endpoints", {"url": receiver.url, "event_types": ["workspace.created"]})
    dead = await api.post(
        "/api/v2/webhook-endpoints", {"url": "http://127.0.0.1:9/gone", "event_types": ["workspace.created"]}
    )
    assert ok.status_code == dead.status_code == 201
    await create_workspace(api)

    async def counted() -> Samples | None:
        now = await scrape(api.http)
        delivered = delta(before, now, "evidence_webhook_delivery_attempts_total", outcome="delivered")
        failed = delta(before, now, "evidence_webhook_delivery_attempts_total", outcome="network_error")
        return now if delivered >= 1 and failed >= 1 else None

    after = await eventually(counted, "one delivered and one failed attempt to be counted")
    assert delta(before, after, "evidence_webhook_delivery_attempts_total", outcome="http_error") == 0


async def test_metrics_can_be_switched_off_or_need_a_token(app: object, client: httpx.AsyncClient) -> None:
    settings = app.state.settings  # type: ignore[attr-defined]
    settings.metrics_token = "scrape-me"
    refused = await client.get("/metrics")
    assert refused.status_code == 401 and refused.json()["details"]["code"] == "unauthenticated"
    assert (await client.get("/metrics", headers={"Authorization": "Bearer wrong"})).status_code == 401
    await scrape(client, Authorization="Bearer scrape-me")
    settings.metrics = False
    off = await client.get("/metrics", headers={"Authorization": "Bearer scrape-me"})
    assert off.status_code == 404 and off.json()["details"]["code"] == "not_found"


# Deadlines only: on a busy machine a worker's first answers can take many seconds.
BUSY_SECONDS = 120.0


@pytest.mark.slow
def test_a_scrape_of_serve_with_two_workers_sums_both(tmp_path: Path) -> None:
    samples = tmp_path / "metrics"
    database = Database(f"sqlite+aiosqlite:///{tmp_path / 'evidence.db'}", sqlite_path=tmp_path / "evidence.db")
    node = Node(database, tmp_path, env={"PROMETHEUS_MULTIPROC_DIR": str(samples)}).start("--workers", "2")
    try:
        sent = 0

        def both_workers_counted() -> bool:
            nonlocal sent
            resp = httpx.get(f"{node.base}/api/v2/workspaces/{uuid.uuid4()}", timeout=BUSY_SECONDS)  # 401: no key
            assert resp.status_code == 401
            sent += 1
            return len(list(samples.glob("counter_*.db"))) >= 2  # one file per worker process

        until(both_workers_counted, "requests answered by both workers", BUSY_SECONDS)
        text = httpx.get(f"{node.base}/metrics", timeout=BUSY_SECONDS).text
        labels = request_labels("GET", "/api/v2/workspaces/{id}", 401)
        assert parse(text)[("evidence_http_requests_total", frozenset(labels.items()))] == sent
    finally:
        node.stop()
