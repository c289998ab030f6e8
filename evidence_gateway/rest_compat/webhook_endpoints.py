"""/api/v2/webhook-endpoints (extension, DESIGN.md §16): registered receivers, their attempts,
rotation and hand retries."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from evidence_gateway.core.context import Ctx
from evidence_gateway.errors import UpstreamFailed
from evidence_gateway.models import WebhookDelivery, WebhookEndpoint
from evidence_gateway.read_models import WebhookDelivery as DeliveryOut
from evidence_gateway.read_models import WebhookEndpoint as EndpointOut
from evidence_gateway.read_models import WebhookEndpointWithSecret
from evidence_gateway.resolvers import webhook_endpoints as endpoints
from evidence_gateway.resolvers.pagination import page_params
from evidence_gateway.rest_compat.http import JSONResponse, caller, envelope, paginated
from evidence_gateway.rest_compat.list_params import list_filters, list_order
from evidence_gateway.rest_compat.writes import location, write


async def create_endpoint(request: Request) -> Response:
    """POST /v2/webhook-endpoints: 201 with the endpoint and its secret (shown this once)."""

    def render(result: endpoints.EndpointWithSecret, ctx: Ctx) -> Response:
        headers = {"Location": location(ctx, f"/v2/webhook-endpoints/{result.endpoint.id}")}
        return envelope(WebhookEndpointWithSecret.render_with_secret(result), status=201, headers=headers)

    return await write(request, endpoints.create_endpoint, render)


async def list_endpoints(request: Request) -> Response:
    """GET /v2/webhook-endpoints: newest first; ``filter[...]`` and ``sort`` (list_params.py)."""
    ctx = await caller(request)
    query = request.query_params
    params = page_params(query.get("page"), query.get("per_page"))
    page = await endpoints.list_endpoints(ctx, params, list_filters(query), list_order(query))
    return paginated(page, EndpointOut.render, request=request)


async def get_endpoint(request: Request) -> Response:
    ctx = await caller(request)
    return envelope(EndpointOut.render(await endpoints.get_endpoint(ctx, request.path_params["id"])))


async def update_endpoint(request: Request) -> Response:
    """PATCH /v2/webhook-endpoints/{id}: the fields given change, the others stay."""
    endpoint_id = request.path_params["id"]

    def render(endpoint: WebhookEndpoint, _ctx: Ctx) -> Response:
        return envelope(EndpointOut.render(endpoint))

    return await write(request, lambda ctx, body: endpoints.update_endpoint(ctx, endpoint_id, body), render)


async def delete_endpoint(request: Request) -> Response:
    """DELETE /v2/webhook-endpoints/{id}: 204; its recorded attempts stay in the delivery log."""
    endpoint_id = request.path_params["id"]

    def render(_endpoint: WebhookEndpoint, _ctx: Ctx) -> Response:
        return Response(status_code=204)

    return await write(
        request, lambda ctx, _body: endpoints.delete_endpoint(ctx, endpoint_id), render, body_required=False
    )


async def rotate_secret(request: Request) -> Response:
    """POST /v2/webhook-endpoints/{id}/rotate-secret: the new secret; the old one signs 24 h more."""
    endpoint_id = request.path_params["id"]

    def render(result: endpoints.EndpointWithSecret, _ctx: Ctx) -> Response:
        return envelope(WebhookEndpointWithSecret.render_with_secret(result))

    return await write(
        request, lambda ctx, _body: endpoints.rotate_secret(ctx, endpoint_id), render, body_required=False
    )


async def list_deliveries(request: Request) -> Response:
    """GET /v2/webhook-endpoints/{id}/deliveries: every attempt to it, newest first; ``filter[...]``
    and ``sort`` (list_params.py)."""
    ctx = await caller(request)
    query = request.query_params
    params = page_params(query.get("page"), query.get("per_page"))
    page = await endpoints.list_endpoint_deliveries(
        ctx, request.path_params["id"], params, list_filters(query), list_order(query)
    )
    return paginated(page, DeliveryOut.render, request=request)


async def retry_delivery(request: Request) -> Response:
    """POST /v2/webhook-endpoints/deliveries/{id}/retry: one new attempt now; 200 when the receiver
    answered 2xx, else 502 with the recorded attempt in details (as the webhook test answers)."""
    delivery_id = request.path_params["id"]

    def render(attempt: WebhookDelivery, _ctx: Ctx) -> Response:
        if not attempt.delivered:
            failed = UpstreamFailed("webhook endpoint did not accept the delivery", **DeliveryOut.render(attempt))
            return JSONResponse(failed.body(), status_code=failed.status)
        return envelope(DeliveryOut.render(attempt))

    return await write(
        request, lambda ctx, _body: endpoints.retry_delivery(ctx, delivery_id), render, body_required=False
    )


routes = [
    Route("/v2/webhook-endpoints", list_endpoints, methods=["GET"]),
    Route("/v2/webhook-endpoints", create_endpoint, methods=["POST"]),
    Route("/v2/webhook-endpoints/{id}", get_endpoint, methods=["GET"]),
    Route("/v2/webhook-endpoints/{id}", update_endpoint, methods=["PATCH"]),
    Route("/v2/webhook-endpoints/{id}", delete_endpoint, methods=["DELETE"]),
    Route("/v2/webhook-endpoints/{id}/rotate-secret", rotate_secret, methods=["POST"]),
    Route("/v2/webhook-endpoints/{id}/deliveries", list_deliveries, methods=["GET"]),
    Route("/v2/webhook-endpoints/deliveries/{id}/retry", retry_delivery, methods=["POST"]),
]
