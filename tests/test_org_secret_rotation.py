"""``webhooks secret --rotate`` (issue 31): the organisation's previous secret keeps signing
beside the new one for 24 hours, as a registered endpoint's does, then stops."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
from sqlalchemy import update
from standardwebhooks.webhooks import WebhookVerificationError
from starlette.applications import Starlette

from evidence_gateway.cli import main as cli_main
from evidence_gateway.models import Organization
from evidence_gateway.settings import Settings
from tests.conftest import Api
from tests.webhook_receiver import Receiver, running

VIEWER = "{ viewer { webhookSigningSecret } }"


@pytest.fixture
def settings(database_url: str) -> Settings:
    """Private targets allowed: the receiver listens on 127.0.0.1."""
    return Settings(
        database_url=database_url,
        secret_key="test-secret-key",
        public_base_url="http://testserver",
        webhook_allow_private_targets=True,
    )


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    with running() as rec:
        yield rec


async def viewer_secret(api: Api) -> str:
    resp = await api.gql(VIEWER)
    return str(resp["data"]["viewer"]["webhookSigningSecret"])


async def send_test(api: Api, receiver: Receiver) -> None:
    resp = await api.post("/api/v2/webhooks/test", {"target_url": receiver.url})
    assert resp.status_code == 200 and resp.json()["data"]["delivered"] is True, resp.text


def verifies(receiver: Receiver, secret: str) -> bool:
    try:
        receiver.verified(secret)
    except WebhookVerificationError:
        return False
    return True


async def rotate(settings: Settings, capsys: pytest.CaptureFixture[str]) -> str:
    """The command's own entry point, in a thread: it runs its own event loop."""
    args = ["webhooks", "secret", "--org", "org-a", "--rotate", "--database-url", settings.database_url]
    code = await asyncio.to_thread(cli_main, args)
    out, err = capsys.readouterr()
    assert (code, err) == (0, ""), err
    return out.strip()


async def test_both_secrets_sign_for_the_overlap_then_only_the_new_one(
    app: Starlette, api: Api, settings: Settings, receiver: Receiver, capsys: pytest.CaptureFixture[str]
) -> None:
    old = await viewer_secret(api)
    new = await rotate(settings, capsys)
    assert new.startswith("whsec_") and new != old
    assert await viewer_secret(api) == new

    await send_test(api, receiver)
    assert len(receiver.received[0].headers["webhook-signature"].split()) == 2
    assert verifies(receiver, new) and verifies(receiver, old), "a receiver on either secret accepts it"

    # 24 hours later (the overlap's end moved to the past): the old secret no longer signs.
    async with app.state.db.engine.begin() as conn:
        past = datetime(2000, 1, 1, tzinfo=UTC)
        await conn.execute(update(Organization).values(previous_webhook_signing_secret_expires_at=past))
    receiver.received.clear()
    await send_test(api, receiver)
    assert len(receiver.received[0].headers["webhook-signature"].split()) == 1
    assert verifies(receiver, new) and not verifies(receiver, old)


async def test_a_second_rotation_retires_the_first_secret_at_once(
    api: Api, settings: Settings, receiver: Receiver, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two secrets sign at most: the one replaced twice ago stops, as an endpoint's does."""
    first = await viewer_secret(api)
    second = await rotate(settings, capsys)
    third = await rotate(settings, capsys)
    await send_test(api, receiver)
    assert verifies(receiver, third) and verifies(receiver, second) and not verifies(receiver, first)
