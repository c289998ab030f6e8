"""/api/v1/reports: deprecated legacy reports, v2 envelopes, deprecation headers on every answer."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from email.utils import format_datetime

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from evidence_gateway.errors import DomainError
from evidence_gateway.read_models import LegacyReport
from evidence_gateway.resolvers import legacy
from evidence_gateway.resolvers.pagination import page_params
from evidence_gateway.rest_compat.http import JSONResponse, caller, envelope, paginated
from evidence_gateway.rest_compat.list_params import list_filters, list_order
from evidence_gateway.settings import Settings, parse_day_or_http_date

# RFC 9745: the resource has been deprecated since 2026-01-01T00:00:00Z (structured-field date).
DEPRECATED_SINCE = "@1767225600"


def sunset_value(raw: str | None) -> str | None:
    """RFC 8594 wants an HTTP-date: an ISO date/datetime or an HTTP-date as configured (settings
    refuses anything else), sent in the IMF-fixdate form."""
    if not raw or not raw.strip():
        return None
    parsed = parse_day_or_http_date(raw)
    return None if parsed is None else format_datetime(parsed, usegmt=True)


def deprecation_headers(settings: Settings) -> dict[str, str]:
    base = settings.public_base_url.rstrip("/")
    headers = {
        "Deprecation": DEPRECATED_SINCE,
        "Link": f'<{base}/api/v2/workspaces>; rel="successor-version"',
    }
    sunset = sunset_value(settings.legacy_sunset)
    if sunset:
        headers["Sunset"] = sunset
    return headers


Handler = Callable[[Request], Awaitable[Response]]


def with_deprecation(handler: Handler) -> Handler:
    """Errors of v1 routes (401, 404, 422) carry the deprecation headers too."""

    async def wrapped(request: Request) -> Response:
        headers = deprecation_headers(request.app.state.settings)
        try:
            response = await handler(request)
        except DomainError as exc:
            if exc.status == 401:
                headers["WWW-Authenticate"] = "Bearer"
            return JSONResponse(exc.body(), status_code=exc.status, headers=headers)
        paging = response.headers.get("Link")
        response.headers.update(headers)
        if paging:  # a list's first/prev/next/last beside the successor (one Link, RFC 8288)
            response.headers["Link"] = f"{headers['Link']}, {paging}"
        return response

    wrapped.__doc__ = handler.__doc__
    return wrapped


@with_deprecation
async def list_reports(request: Request) -> Response:
    """GET /v1/reports (deprecated): paginated like /v2/workspaces, newest first; ``filter[...]`` and
    ``sort`` (list_params.py) as the v2 lists."""
    ctx = await caller(request)
    query = request.query_params
    params = page_params(query.get("page"), query.get("per_page"))
    base = ctx.settings.public_base_url
    page = await legacy.list_legacy_reports(ctx, params, list_filters(query), list_order(query))
    return paginated(page, lambda v: LegacyReport.render_view(v, base), request=request)


@with_deprecation
async def get_report(request: Request) -> Response:
    """GET /v1/reports/{id} (deprecated): detail with successor links; 404 unknown/other organisation."""
    ctx = await caller(request)
    view = await legacy.get_legacy_report(ctx, request.path_params["id"])
    return envelope(LegacyReport.render_view(view, ctx.settings.public_base_url))


routes = [
    Route("/v1/reports", list_reports, methods=["GET"]),
    Route("/v1/reports/{id}", get_report, methods=["GET"]),
]

__all__ = ["routes"]
