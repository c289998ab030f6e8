"""Every write path of a resource stores the same rows (issue 25, item 4).

tests/test_stored_forms.py compares what REST and GraphQL store when they create each resource,
and what the command line and an ORM flush store. Here: the paths it does not cover, each a pair
acting on twin records (the synchronous request and the worker's queue, a request and its
idempotent replay, REST and GraphQL changing, rotating, deleting and testing webhook endpoints
and retrying what the dispatcher sent, GraphQL and the command line revoking a key) must change
the same rows the same way, but for their own ids, instants and secrets; and one script must
store the same rows on SQLite and PostgreSQL, each value of the same Python type, every instant
aware, in UTC, to the microsecond the API answered. Rows are read with SQLAlchemy Core
``select()`` on the models' tables, on an engine of the test's own.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import pytest
from starlette.applications import Starlette

from evidence_gateway import cli
from evidence_gateway.settings import Settings
from evidence_gateway.webhooks.dispatcher import Dispatcher
from evidence_gateway.worker import Worker
from tests.conftest import Api, create_workspace
from tests.parity_rows import ONE_DATABASE_ONLY, changed, comparable, in_order, stored
from tests.parity_scenario import ROWS, gql, rest, scenario
from tests.parity_support import DEAD_HOOK, database_urls, first_difference, running
from tests.waiting import eventually

# ---- pairs of write paths ----------------------------------------------------------------------

Write = Callable[[Api, Starlette, dict[str, Any]], Awaitable[None]]


@dataclass
class Pair:
    name: str
    setup: Callable[[Api, Starlette], Awaitable[list[dict[str, Any]]]]  # a twin record for each path
    first: Write
    second: Write
    # The tables both paths must change (the comparison must compare something).
    touches: set[str]
    # Columns the two paths fill differently by design, and where that is documented.
    unlike: frozenset[str] = frozenset()


async def _imported(api: Api) -> dict[str, Any]:
    ws = await create_workspace(api, reporting_period_start="2025-01-01", reporting_period_end="2025-03-31")
    await rest(api, f"/api/v2/workspaces/{ws['id']}/imports", {"source_row_count": 4, "shipments": ROWS})
    return ws


async def _calculated(api: Api) -> dict[str, Any]:
    ws = await _imported(api)
    await rest(api, f"/api/v2/workspaces/{ws['id']}/calculate", {}, status=200)
    return ws


async def _queued_then_worked(app: Starlette) -> None:
    """The node's worker takes what is queued and finishes it (no background loop in tests)."""
    worker = Worker(app.state.db, app.state.settings)
    assert await worker.claim() >= 1
    await worker.stop(120)


async def _calculate_now(api: Api, app: Starlette, env: dict[str, Any]) -> None:
    await rest(api, f"/api/v2/workspaces/{env['id']}/calculate", {"assumptions_snapshot": {"a": 1.5}}, status=200)


async def _calculate_queued(api: Api, app: Starlette, env: dict[str, Any]) -> None:
    await rest(
        api,
        f"/api/v2/workspaces/{env['id']}/calculate",
        {"assumptions_snapshot": {"a": 1.5}},
        status=202,
        headers={"Prefer": "respond-async"},
    )
    await _queued_then_worked(app)


async def _pack_now(api: Api, app: Starlette, env: dict[str, Any]) -> None:
    await rest(api, f"/api/v2/workspaces/{env['id']}/packs", {})


async def _pack_queued(api: Api, app: Starlette, env: dict[str, Any]) -> None:
    await rest(api, f"/api/v2/workspaces/{env['id']}/packs", {}, status=202, headers={"Prefer": "respond-async"})
    await _queued_then_worked(app)


def _replayed(path: str, body: dict[str, Any]) -> Write:
    async def write(api: Api, app: Starlette, env: dict[str, Any]) -> None:
        key = {"Idempotency-Key": f"parity-{uuid.uuid4().hex}"}
        first = await api.post(path.format(**env), body, headers=key)
        again = await api.post(path.format(**env), body, headers=key)
        assert first.status_code == again.status_code < 300, again.text
        assert again.headers["Idempotent-Replayed"] == "true" and again.json() == first.json()

    return write


def _posted(path: str, body: dict[str, Any]) -> Write:
    async def write(api: Api, app: Starlette, env: dict[str, Any]) -> None:
        resp = await api.post(path.format(**env), body)
        assert resp.status_code < 300, resp.text

    return write


async def _gql_replayed(api: Api, app: Starlette, env: dict[str, Any]) -> None:
    document = {
        "query": 'mutation($ws: UUID!) { createEvidenceItem(input: {evidenceType: OTHER, title: "t", '
        'fileName: "f.pdf", fileUrl: "https://e.example/f.pdf", workspaceId: $ws}) { id } }',
        "variables": {"ws": env["id"]},
    }
    headers = {"Authorization": f"Bearer {api.key}", "Idempotency-Key": f"parity-{uuid.uuid4().hex}"}
    first = await api.http.post("/graphql", json=document, headers=headers)
    again = await api.http.post("/graphql", json=document, headers=headers)
    assert "errors" not in first.json() and again.json()["data"] == first.json()["data"], again.text


async def _gql_once(api: Api, app: Starlette, env: dict[str, Any]) -> None:
    await gql(
        api,
        'mutation($ws: UUID!) { createEvidenceItem(input: {evidenceType: OTHER, title: "t", '
        'fileName: "f.pdf", fileUrl: "https://e.example/f.pdf", workspaceId: $ws}) { id } }',
        {"ws": env["id"]},
    )


async def _endpoint(api: Api) -> dict[str, Any]:
    # Subscribed to an event nothing here emits: no fan-out to it from the other path's writes.
    body = {"url": DEAD_HOOK, "description": "twin", "event_types": ["legacy_report.imported"]}
    return dict((await rest(api, "/api/v2/webhook-endpoints", body))["data"])


async def _rest_update(api: Api, app: Starlette, env: dict[str, Any]) -> None:
    resp = await api.patch(f"/api/v2/webhook-endpoints/{env['id']}", {"description": "moved", "enabled": False})
    assert resp.status_code == 200, resp.text


async def _gql_update(api: Api, app: Starlette, env: dict[str, Any]) -> None:
    await gql(
        api,
        'mutation($id: UUID!) { updateWebhookEndpoint(id: $id, input: {description: "moved", enabled: false}) { id } }',
        {"id": env["id"]},
    )


async def _rest_rotate(api: Api, app: Starlette, env: dict[str, Any]) -> None:
    await rest(api, f"/api/v2/webhook-endpoints/{env['id']}/rotate-secret", None, status=200)


async def _gql_rotate(api: Api, app: Starlette, env: dict[str, Any]) -> None:
    await gql(api, "mutation($id: UUID!) { rotateWebhookEndpointSecret(id: $id) { secret } }", {"id": env["id"]})


async def _endpoint_tested(api: Api) -> dict[str, Any]:
    endpoint = await _endpoint(api)
    await gql(api, "mutation($e: UUID!) { testWebhook(input: {endpointId: $e}) { deliveryId } }", {"e": endpoint["id"]})
    return endpoint


async def _rest_delete(api: Api, app: Starlette, env: dict[str, Any]) -> None:
    resp = await api.delete(f"/api/v2/webhook-endpoints/{env['id']}")
    assert resp.status_code < 300, resp.text


async def _gql_delete(api: Api, app: Starlette, env: dict[str, Any]) -> None:
    await gql(api, "mutation($id: UUID!) { deleteWebhookEndpoint(id: $id) { id } }", {"id": env["id"]})


async def _rest_test(api: Api, app: Starlette, env: dict[str, Any]) -> None:
    body = {"target_url": DEAD_HOOK, "event_type": "pack.generated", "workspace_id": env["id"]}
    await rest(api, "/api/v2/webhooks/test", body, status=502)


async def _gql_test(api: Api, app: Starlette, env: dict[str, Any]) -> None:
    await gql(
        api,
        "mutation($ws: UUID!, $u: String!) { testWebhook(input: {targetUrl: $u, eventType: "
        '"pack.generated", workspaceId: $ws}) { delivered } }',
        {"ws": env["id"], "u": DEAD_HOOK},
    )


async def _workspace(api: Api) -> dict[str, Any]:
    return await create_workspace(api, name="twin")


async def _key(api: Api) -> dict[str, Any]:
    made = await gql(api, 'mutation { createApiKey(input: {name: "twin", scope: READ}) { apiKey { id } } }')
    return {"id": made["createApiKey"]["apiKey"]["id"]}


async def _gql_revoke(api: Api, app: Starlette, env: dict[str, Any]) -> None:
    await gql(api, "mutation($id: UUID!) { revokeApiKey(id: $id) { revokedAt } }", {"id": env["id"]})


async def _cli_revoke(api: Api, app: Starlette, env: dict[str, Any]) -> None:
    """The command's own entry point, run in a thread as its process would run it (its own event
    loop and engine), without a second interpreter's start-up."""
    settings: Settings = app.state.settings
    org = (await gql(api, "{ viewer { organizationName } }"))["viewer"]["organizationName"]
    args = ["keys", "revoke", env["id"], "--org", org, "--database-url", settings.database_url]
    assert await asyncio.to_thread(cli.main, args) == 0


def twice(setup: Callable[[Api], Awaitable[dict[str, Any]]]) -> Callable[[Api, Starlette], Awaitable[Any]]:
    """One record for each path, made alike one after the other."""

    async def both(api: Api, app: Starlette) -> list[dict[str, Any]]:
        return [await setup(api), await setup(api)]

    return both


async def _delivered_by_the_dispatcher(api: Api, app: Starlette) -> list[dict[str, Any]]:
    """Two endpoints, one event each is sent (by a dispatcher run for it), one failed attempt each."""
    body = {"url": DEAD_HOOK, "event_types": ["workspace.created"]}
    endpoints = [(await rest(api, "/api/v2/webhook-endpoints", body))["data"] for _ in range(2)]
    await create_workspace(api, name="sent")
    # No automatic retry while the test looks (the first is due an hour later).
    dispatcher = Dispatcher(app.state.db, app.state.settings.model_copy(update={"webhook_retry_schedule": "3600"}))
    await dispatcher.start()

    async def attempts() -> list[dict[str, Any]] | None:
        found = (await api.get("/api/v2/webhooks/deliveries")).json()["data"]
        return found if len(found) == 2 else None

    try:
        made = await eventually(attempts, "the dispatcher to record one attempt per endpoint", within=30)
    finally:
        await dispatcher.stop(10)
    by_endpoint = {d["endpoint_id"]: d for d in made}
    return [{"id": by_endpoint[e["id"]]["id"]} for e in endpoints]


async def _rest_retry(api: Api, app: Starlette, env: dict[str, Any]) -> None:
    resp = await api.post(f"/api/v2/webhook-endpoints/deliveries/{env['id']}/retry")
    assert resp.status_code in (200, 502), resp.text


async def _gql_retry(api: Api, app: Starlette, env: dict[str, Any]) -> None:
    await gql(api, "mutation($id: UUID!) { retryWebhookDelivery(id: $id) { delivered } }", {"id": env["id"]})


# Work run later by a worker has no request: its events carry no request id (docs/events.md).
LATER = frozenset({"request_id"})

PAIRS = [
    Pair(
        "calculate: request, and the worker's queue",
        twice(_imported),
        _calculate_now,
        _calculate_queued,
        {"calculation_run", "shipment_emission", "data_quality_assessment", "workspace", "event"},
        LATER,
    ),
    Pair(
        "generate a pack: request, and the worker's queue",
        twice(_calculated),
        _pack_now,
        _pack_queued,
        {"report_pack", "pack_artifact", "data_quality_assessment", "workspace", "event"},
        LATER,
    ),
    Pair(
        "import: once, and replayed with its Idempotency-Key",
        twice(_workspace),
        _posted("/api/v2/workspaces/{id}/imports", {"source_row_count": 4, "shipments": ROWS}),
        _replayed("/api/v2/workspaces/{id}/imports", {"source_row_count": 4, "shipments": ROWS}),
        {"import_batch", "shipment", "workspace", "event"},
    ),
    Pair(
        "evidence over GraphQL: once, and replayed with its Idempotency-Key",
        twice(_workspace),
        _gql_once,
        _gql_replayed,
        {"evidence_item", "event"},
    ),
    Pair(
        "update a webhook endpoint: REST, GraphQL",
        twice(_endpoint),
        _rest_update,
        _gql_update,
        {"webhook_endpoint", "event"},
    ),
    Pair(
        "rotate a webhook endpoint's secret: REST, GraphQL",
        twice(_endpoint),
        _rest_rotate,
        _gql_rotate,
        {"webhook_endpoint", "event"},
    ),
    Pair(
        "delete a webhook endpoint: REST, GraphQL",
        twice(_endpoint_tested),
        _rest_delete,
        _gql_delete,
        {"webhook_endpoint", "webhook_delivery", "event"},
    ),
    Pair("test a webhook: REST, GraphQL", twice(_workspace), _rest_test, _gql_test, {"webhook_delivery"}),
    Pair(
        "retry a delivery the dispatcher made: REST, GraphQL",
        _delivered_by_the_dispatcher,
        _rest_retry,
        _gql_retry,
        {"webhook_delivery", "webhook_message"},
    ),
    # The command line has no key and no request: its events name neither (docs/events.md).
    Pair(
        "revoke an API key: GraphQL, the command line",
        twice(_key),
        _gql_revoke,
        _cli_revoke,
        {"api_key", "event"},
        frozenset({"actor", "request_id"}),
    ),
]


@pytest.mark.parametrize("pair", PAIRS, ids=lambda p: p.name)
async def test_both_write_paths_store_the_same_rows(app: Starlette, api: Api, settings: Settings, pair: Pair) -> None:
    url = settings.database_url
    twins = await pair.setup(api, app)
    changes = []
    for write, twin in zip((pair.first, pair.second), twins, strict=True):
        before = await stored(url)
        await write(api, app, twin)
        changes.append(changed(before, await stored(url), pair.unlike))
    assert pair.touches <= set(changes[0]), f"{pair.name}: changed only {sorted(changes[0])}"
    difference = first_difference(changes[0], changes[1])
    assert difference is None, f"{pair.name}: the two paths stored different rows at {difference}"


# ---- one script, two databases -----------------------------------------------------------------


@pytest.fixture
def databases(settings: Settings, request: pytest.FixtureRequest) -> dict[str, str]:
    return database_urls(settings, request)


# Resources whose REST detail shows stored instants, by table: (detail path, id role).
ANSWERED = [
    ("workspace", "/api/v2/workspaces/{}", "ws"),
    ("import_batch", "/api/v2/imports/{}", "import"),
    ("calculation_run", "/api/v2/calculation-runs/{}", "run"),
    ("report_pack", "/api/v2/packs/{}", "pack"),
    ("approval_action", "/api/v2/approvals/{}", "approval"),
    ("evidence_item", "/api/v2/evidence-items/{}", "item"),
    ("webhook_endpoint", "/api/v2/webhook-endpoints/{}", "endpoint"),
    ("legacy_report", "/api/v1/reports/{}", "legacy"),
]


def _instant(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
async def test_one_script_stores_the_same_rows_on_both_databases(settings: Settings, databases: dict[str, str]) -> None:
    tables: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for database, url in databases.items():
        async with running(settings.model_copy(update={"database_url": url})) as run:
            refs = await scenario(run)
            rows = await stored(url)
            # Every instant the API answers is the stored one, to the microsecond.
            for table, path, role in ANSWERED:
                answer = (await run.api.get(path.format(refs[role]))).json()["data"]
                row = rows[table][(uuid.UUID(refs[role]),)]
                for column, value in row.items():
                    if isinstance(value, datetime) and column in answer:
                        assert value.utcoffset() == timedelta(0), f"{database} {table}.{column}: {value!r}"
                        shown = answer[column] and _instant(answer[column])
                        assert shown == value, f"{database} {table}.{column}: answered {answer[column]}, stored {value}"
            tables[database] = {
                name: in_order([comparable(r) for r in found.values()])
                for name, found in rows.items()
                if name not in ONE_DATABASE_ONLY
            }
    assert all(tables["sqlite"][name] for name in ("workspace", "shipment_emission", "pack_artifact", "event"))
    if len(tables) == 2:
        difference = first_difference(tables["sqlite"], tables["postgresql"])
        assert difference is None, f"SQLite and PostgreSQL stored different rows at {difference}"
