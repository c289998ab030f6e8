"""/api/v2/webhooks/test (contract) and /api/v2/webhooks/deliveries (extension)."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from evidence_gateway.core.context import Ctx
from evidence_gateway.errors import UpstreamFailed
from evidence_gateway.read_models import WebhookDelivery, WebhookTestResult
from evidence_gateway.resolvers import webhooks
from evidence_gateway.resolvers.pagination import page_params
from evidence_gateway.rest_compat.http import JSONResponse, caller, envelope, paginated
from evidence_gateway.rest_compat.list_params import list_filters, list_order
from evidence_gateway.rest_compat.writes import write


async def webhook_test(request: Request) -> Response:
    """POST /v2/webhooks/test: 200 when the target answered 2xx, else 502 with the result in details."""

    def render(result: webhooks.WebhookTestResult, _ctx: Ctx) -> Response:
        if not result.delivered:
            failed = UpstreamFailed(
                "webhook target did not accept the test request", **WebhookTestResult.render(result)
            )
            return JSONResponse(failed.body(), status_code=failed.status)
        return envelope(WebhookTestResult.render(result))

    return await write(request, webhooks.send_test_webhook, render)


async def list_deliveries(request: Request) -> Response:
    """GET /v2/webhooks/deliveries (extension): every recorded attempt, newest first; ``filter[...]``
    and ``sort`` (list_params.py)."""
    ctx = await caller(request)
    query = request.query_params
    params = page_params(query.get("page"), query.get("per_page"))
    page = await webhooks.list_webhook_deliveries(ctx, params, list_filters(query), list_order(query))
    return paginated(page, WebhookDelivery.render, request=request)


routes = [
    Route("/v2/webhooks/test", webhook_test, methods=["POST"]),
    Route("/v2/webhooks/deliveries", list_deliveries, methods=["GET"]),
]
