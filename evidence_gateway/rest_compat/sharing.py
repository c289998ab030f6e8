"""/api/sharing/… : the data owner's side of the exchange over REST, with an admin API key.

Beside the frozen v2 contract, never inside it (``x-extension`` operations of the OpenAPI
document): recipients (client credentials shown once), their own PACT hosts, publications of
packs to them, withdrawals. The same resolvers as GraphQL's mutations and the command line
(resolvers/sharing.py); the gateway's usual envelopes, errors, Idempotency-Key.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from evidence_gateway import read_models as rm
from evidence_gateway.core.context import Ctx
from evidence_gateway.models import DataRecipient, Publication
from evidence_gateway.resolvers import sharing
from evidence_gateway.rest_compat.http import caller, envelope
from evidence_gateway.rest_compat.writes import location, write


def recipient_out(recipient: DataRecipient) -> dict[str, Any]:
    return rm.DataRecipient.render(recipient)


def publication_out(publication: Publication) -> dict[str, Any]:
    return rm.Publication.render(publication)


async def create_recipient(request: Request) -> Response:
    """POST /api/sharing/recipients: 201 with the recipient and its client secret (shown this once)."""

    def render(created: sharing.CreatedRecipient, ctx: Ctx) -> Response:
        body = {**recipient_out(created.recipient), "client_secret": created.client_secret}
        headers = {"Location": location(ctx, f"/sharing/recipients/{created.recipient.id}")}
        return envelope(body, status=201, headers=headers)

    return await write(request, sharing.create_recipient, render)


async def list_recipients(request: Request) -> Response:
    """GET /api/sharing/recipients: every recipient, revoked ones too, oldest first."""
    ctx = await caller(request)
    return envelope([recipient_out(r) for r in await sharing.list_recipients(ctx)])


async def revoke_recipient(request: Request) -> Response:
    """POST /api/sharing/recipients/{id}/revoke: its credentials and tokens stop working."""
    recipient_id = request.path_params["id"]

    def render(recipient: DataRecipient, _ctx: Ctx) -> Response:
        return envelope(recipient_out(recipient))

    return await write(
        request, lambda ctx, _body: sharing.revoke_recipient(ctx, recipient_id), render, body_required=False
    )


async def set_host(request: Request) -> Response:
    """PUT /api/sharing/recipients/{id}/host {url, client_id, client_secret}: where the answers to
    the recipient's PACT requests go, and the credentials for that host (the secret never shown)."""
    recipient_id = request.path_params["id"]

    def render(recipient: DataRecipient, _ctx: Ctx) -> Response:
        return envelope(recipient_out(recipient))

    return await write(request, lambda ctx, body: sharing.set_recipient_host(ctx, recipient_id, body), render)


async def clear_host(request: Request) -> Response:
    """DELETE /api/sharing/recipients/{id}/host: the recipient's requests are no longer answered."""
    recipient_id = request.path_params["id"]

    def render(recipient: DataRecipient, _ctx: Ctx) -> Response:
        return envelope(recipient_out(recipient))

    return await write(
        request, lambda ctx, _body: sharing.clear_recipient_host(ctx, recipient_id), render, body_required=False
    )


async def publish(request: Request) -> Response:
    """POST /api/sharing/publications {recipient_id, pack_id}: the pack is visible to the recipient."""

    def render(publication: Publication, ctx: Ctx) -> Response:
        headers = {"Location": location(ctx, f"/sharing/publications/{publication.id}")}
        return envelope(publication_out(publication), status=201, headers=headers)

    return await write(request, sharing.publish, render)


async def list_publications(request: Request) -> Response:
    """GET /api/sharing/publications[?recipient_id=…]: withdrawn ones too, oldest first."""
    ctx = await caller(request)
    found = await sharing.list_publications(ctx, request.query_params.get("recipient_id"))
    return envelope([publication_out(p) for p in found])


async def withdraw(request: Request) -> Response:
    """POST /api/sharing/publications/{id}/withdraw: the pack is gone for the recipient."""
    publication_id = request.path_params["id"]

    def render(publication: Publication, _ctx: Ctx) -> Response:
        return envelope(publication_out(publication))

    return await write(request, lambda ctx, _body: sharing.withdraw(ctx, publication_id), render, body_required=False)


routes: list[BaseRoute] = [
    Route("/sharing/recipients", list_recipients, methods=["GET"]),
    Route("/sharing/recipients", create_recipient, methods=["POST"]),
    Route("/sharing/recipients/{id}/revoke", revoke_recipient, methods=["POST"]),
    Route("/sharing/recipients/{id}/host", set_host, methods=["PUT"]),
    Route("/sharing/recipients/{id}/host", clear_host, methods=["DELETE"]),
    Route("/sharing/publications", list_publications, methods=["GET"]),
    Route("/sharing/publications", publish, methods=["POST"]),
    Route("/sharing/publications/{id}/withdraw", withdraw, methods=["POST"]),
]
