"""The exchange's HTTP transport: PACT v2 and v3 footprints and events, iLEAP's TAD.

Every answer's error body is the specifications' own (``{"code", "message"}``), not the gateway's
envelope. Where the specifications' test cases differ, each route answers what its own test cases
expect (docs/ileap.md, "Errors"):

- a token that is not ours (or names a revoked recipient): PACT routes 400 ``BadRequest`` (PACT
  conformance TC 6, 7 and 16), iLEAP's ``/2/ileap/tad`` 403 ``AccessDenied`` (iLEAP TC007);
- an expired token: 401, ``TokenExpired`` on PACT routes (PACT's error table), ``ExpiredToken``
  on ``/2/ileap/tad`` (iLEAP TC008);
- no or a malformed ``Authorization`` header: 400 ``BadRequest``.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Literal
from urllib.parse import quote, urlencode

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from evidence_gateway.auth import bearer_token
from evidence_gateway.core.context import Ctx
from evidence_gateway.errors import DomainError
from evidence_gateway.exchange import auth, host, host_events, host_filters
from evidence_gateway.exchange.footprints import Footprint
from evidence_gateway.exchange.host import PactError, Recipient, bad_request
from evidence_gateway.exchange.routes_auth import issuer
from evidence_gateway.exchange.routes_auth import routes as auth_routes
from evidence_gateway.web.http_body import loads, read_body
from evidence_gateway.web.json_response import JSONResponse
from evidence_gateway.web.ratelimit.middleware import refuse_credential
from evidence_gateway.web.request_id import request_id_of

log = logging.getLogger(__name__)

Family = Literal["v2", "v3", "tad"]
Handler = Callable[[Request, Ctx, Recipient], Awaitable[Response]]
# A CloudEvent the specifications define is a few kilobytes; a fulfilled event carries footprints.
EVENT_BODY_LIMIT = 1024 * 1024


def _error(err: PactError) -> Response:
    return JSONResponse(err.body(), status_code=err.status)


async def _caller(request: Request, family: Family) -> tuple[Ctx, Recipient]:
    token = bearer_token(request.headers.get("authorization"))
    if token is None:
        raise bad_request("an Authorization: Bearer access token from /auth/token is required")
    keys: auth.TokenKeys = request.app.state.exchange_keys
    refused = PactError(403, "AccessDenied", "Access denied") if family == "tad" else bad_request("Invalid token")
    try:
        claims = await keys.verify(token, issuer=issuer(request))
    except auth.TokenExpired:
        refuse_credential(request.scope)
        code = "ExpiredToken" if family == "tad" else "TokenExpired"
        raise PactError(401, code, "The specified access token has expired") from None
    except auth.TokenInvalid:
        refuse_credential(request.scope)
        raise refused from None
    db = request.app.state.db
    recipient = await host.live_recipient(db, claims)
    if recipient is None:
        refuse_credential(request.scope)
        raise refused
    host.note_caller(recipient)
    return host.recipient_ctx(db, request.app.state.settings, recipient, request_id_of(request.scope)), recipient


def _guarded(family: Family, handler: Handler) -> Callable[[Request], Awaitable[Response]]:
    async def endpoint(request: Request) -> Response:
        try:
            ctx, recipient = await _caller(request, family)
            return await handler(request, ctx, recipient)
        except PactError as err:
            return _error(err)
        except DomainError as err:
            # Body limits and timeouts of the shared readers: their status, PACT's body.
            status = err.status if err.status in (408, 413) else 400
            return _error(PactError(status, "BadRequest", err.message))
        except Exception:
            log.exception("exchange request failed")
            return _error(PactError(500, "InternalError", "An internal or unexpected error has occurred"))

    endpoint.__doc__ = handler.__doc__
    return endpoint


def _page(request: Request, items: Sequence[Any]) -> tuple[list[Any], dict[str, str]]:
    """One page (``limit``, ``offset``) and, when more follow, an absolute ``Link: rel="next"``
    on the request's own host carrying every other parameter as given."""
    limit = host_filters.limit_of(request.query_params.get("limit"))
    offset = host_filters.offset_of(request.query_params.get("offset"))
    page = list(items[offset : offset + limit])
    headers: dict[str, str] = {}
    if offset + limit < len(items):
        params = [(k, v) for k, v in request.query_params.multi_items() if k not in ("limit", "offset")]
        params += [("limit", str(limit)), ("offset", str(offset + limit))]
        base = str(request.url.replace(query=""))
        headers["Link"] = f'<{base}?{urlencode(params, safe="$", quote_via=quote)}>; rel="next"'
    return page, headers


def _id_of(raw: str) -> uuid.UUID | None:
    try:
        return uuid.UUID(raw)
    except ValueError:
        return None


# ---- v2 ------------------------------------------------------------------------------------------


async def list_v2(request: Request, ctx: Ctx, recipient: Recipient) -> Response:
    """Action ListFootprints (PACT v2): the recipient's footprints, ``$filter`` and ``limit``."""
    statement = request.query_params.get("$filter")
    keep = host_filters.odata_filter(statement) if statement is not None else None
    items = [f.v2 for f in await host.footprints(ctx, recipient)]
    if keep is not None:
        items = [item for item in items if keep(item)]
    page, headers = _page(request, items)
    return JSONResponse({"data": page}, headers=headers)


async def get_v2(request: Request, ctx: Ctx, recipient: Recipient) -> Response:
    """Action GetFootprint (PACT v2)."""
    found = await _one(request, ctx, recipient)
    if found is None:
        raise PactError(404, "NoSuchFootprint", "The specified footprint does not exist.")
    return JSONResponse({"data": found.v2})


async def _one(request: Request, ctx: Ctx, recipient: Recipient) -> Footprint | None:
    footprint_id = _id_of(request.path_params["footprint_id"])
    return None if footprint_id is None else await host.footprint(ctx, recipient, footprint_id)


# ---- v3 ------------------------------------------------------------------------------------------


async def list_v3(request: Request, ctx: Ctx, recipient: Recipient) -> Response:
    """Action ListFootprints (PACT v3): the recipient's footprints, its criteria and ``limit``."""
    if "$filter" in request.query_params:
        raise host.not_implemented("PACT v3 deprecates $filter: use the criteria (productId, geography, …)")
    criteria = {name: request.query_params.getlist(name) for name in host_filters.V3_CRITERIA}
    keep = host_filters.v3_criteria(criteria)
    items = [f.v3 for f in await host.footprints(ctx, recipient) if keep(f.v3)]
    page, headers = _page(request, items)
    return JSONResponse({"data": page}, headers=headers)


async def get_v3(request: Request, ctx: Ctx, recipient: Recipient) -> Response:
    """Action GetFootprint (PACT v3)."""
    found = await _one(request, ctx, recipient)
    if found is None:
        raise PactError(404, "NotFound", "The specified footprint does not exist.")
    return JSONResponse({"data": found.v3})


# ---- events --------------------------------------------------------------------------------------


async def _event_body(request: Request) -> Any:
    media = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if media not in ("application/cloudevents+json", "application/json"):
        raise bad_request("events are CloudEvents in structured mode: Content-Type application/cloudevents+json")
    raw = await read_body(request, EVENT_BODY_LIMIT)
    return loads(raw)


async def events_v2(request: Request, ctx: Ctx, recipient: Recipient) -> Response:
    """Action Events (PACT v2): accepts the spec's four CloudEvents; 200 and an empty body."""
    await host_events.accept(ctx, recipient, "v2", await _event_body(request), f"{issuer(request)}/2/events")
    return Response(status_code=200)


async def events_v3(request: Request, ctx: Ctx, recipient: Recipient) -> Response:
    """Action Events (PACT v3): accepts the spec's four CloudEvents; 200 and an empty body."""
    await host_events.accept(ctx, recipient, "v3", await _event_body(request), f"{issuer(request)}/3/events")
    return Response(status_code=200)


# ---- iLEAP ---------------------------------------------------------------------------------------


async def tad(request: Request, ctx: Ctx, recipient: Recipient) -> Response:
    """Action TransportActivityData (iLEAP): the recipient's TAD, filter pairs and ``limit``."""
    pairs = [(k, v) for k, v in request.query_params.multi_items() if k not in ("limit", "offset")]
    keep = host_filters.tad_filter(pairs)
    items = [row for row in await host.activity(ctx, recipient) if keep(row)]
    page, headers = _page(request, items)
    return JSONResponse({"data": page}, headers=headers)


routes: list[BaseRoute] = [
    *auth_routes,
    Route("/2/footprints", _guarded("v2", list_v2), methods=["GET"]),
    Route("/2/footprints/{footprint_id}", _guarded("v2", get_v2), methods=["GET"]),
    Route("/2/events", _guarded("v2", events_v2), methods=["POST"]),
    Route("/2/ileap/tad", _guarded("tad", tad), methods=["GET"]),
    Route("/3/footprints", _guarded("v3", list_v3), methods=["GET"]),
    Route("/3/footprints/{footprint_id}", _guarded("v3", get_v3), methods=["GET"]),
    Route("/3/events", _guarded("v3", events_v3), methods=["POST"]),
]
