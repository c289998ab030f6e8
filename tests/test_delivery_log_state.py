"""The delivery log shows where each attempt's event stands now (issue 31): owed and when it is
tried next, delivered, or given up; over REST and GraphQL, and nothing for bare-URL tests."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest

from evidence_gateway.settings import Settings
from tests.conftest import Api
from tests.waiting import eventually
from tests.webhook_receiver import Receiver, running

ENDPOINTS = "/api/v2/webhook-endpoints"
RETRY_SECONDS = 3600
ENDPOINT_DELIVERIES = """
query ($id: UUID!) { webhookEndpoint(id: $id) { deliveries { items { delivered messageStatus nextAttemptAt } } } }
"""


@pytest.fixture
def settings(settings: Settings) -> Settings:
    """The dispatcher runs; after a failure the next try is an hour away (±20 %)."""
    return settings.model_copy(
        update={
            "dispatcher": True,
            "webhook_allow_private_targets": True,
            "webhook_retry_schedule": f"{RETRY_SECONDS},{RETRY_SECONDS}",
            "webhook_read_timeout_seconds": 2.0,
        }
    )


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    with running() as r:
        yield r


async def log_of(api: Api, endpoint_id: str) -> list[dict[str, Any]]:
    resp = await api.get(f"{ENDPOINTS}/{endpoint_id}/deliveries")
    assert resp.status_code == 200, resp.text
    return list(resp.json()["data"])


def parse(stamp: str) -> datetime:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00"))


async def test_a_failed_attempt_shows_its_event_owed_and_when_then_delivered(api: Api, receiver: Receiver) -> None:
    receiver.script = [500]
    resp = await api.post(ENDPOINTS, {"url": receiver.url, "event_types": ["webhook_endpoint.created"]})
    assert resp.status_code == 201, resp.text
    endpoint = resp.json()["data"]

    async def failed_once() -> list[dict[str, Any]] | None:
        found = await log_of(api, endpoint["id"])
        return found if found else None

    (failed,) = await eventually(failed_once, "the first, failed attempt")
    assert failed["delivered"] is False and failed["message_status"] == "pending"
    wait = (parse(failed["next_attempt_at"]) - datetime.now(UTC)).total_seconds()
    assert 0.8 * RETRY_SECONDS - 60 < wait <= 1.2 * RETRY_SECONDS
    everything = (await api.get("/api/v2/webhooks/deliveries")).json()["data"]
    assert [(d["message_status"], d["next_attempt_at"]) for d in everything] == [("pending", failed["next_attempt_at"])]
    read = await api.gql(ENDPOINT_DELIVERIES, {"id": endpoint["id"]})
    (item,) = read["data"]["webhookEndpoint"]["deliveries"]["items"]
    assert item["messageStatus"] == "PENDING" and parse(item["nextAttemptAt"]) == parse(failed["next_attempt_at"])

    # The receiver is back: a hand retry delivers, and every attempt of the event says so now.
    retried = await api.post(f"{ENDPOINTS}/deliveries/{failed['id']}/retry")
    assert retried.status_code == 200 and retried.json()["data"]["delivered"] is True, retried.text
    assert (retried.json()["data"]["message_status"], retried.json()["data"]["next_attempt_at"]) == ("delivered", None)
    assert [(d["delivered"], d["message_status"], d["next_attempt_at"]) for d in await log_of(api, endpoint["id"])] == [
        (True, "delivered", None),
        (False, "delivered", None),
    ]


async def test_a_test_to_a_bare_url_has_no_message(api: Api, receiver: Receiver) -> None:
    assert (await api.post("/api/v2/webhooks/test", {"target_url": receiver.url})).status_code == 200
    (logged,) = (await api.get("/api/v2/webhooks/deliveries")).json()["data"]
    assert (logged["message_status"], logged["next_attempt_at"]) == (None, None)
    body = await api.gql("{ webhookDeliveries { items { messageStatus nextAttemptAt } } }")
    assert body["data"]["webhookDeliveries"]["items"] == [{"messageStatus": None, "nextAttemptAt": None}]
