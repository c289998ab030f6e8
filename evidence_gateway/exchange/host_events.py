"""Action Events: the CloudEvents a host accepts (PACT v2 §6.6, v3 "Action Events").

Each specification's four event types are validated (structured-mode CloudEvent 1.0: ``specversion``,
``id``, ``source``, ``type``, an object ``data``) and accepted with 200; anything malformed is 400
``BadRequest``, an event type neither specification defines 400 ``NotImplemented``.

What an accepted event does:
- a request (``ProductFootprintRequest.Created`` / ``RequestCreatedEvent``) is matched against the
  recipient's published footprints and logged with what it matched; the answering event
  (``…Fulfilled`` or ``…Rejected``) is not sent back to ``source`` by this version — a recipient
  pulls the matches with ``GET /2/footprints`` / ``/3/footprints`` and the same criteria
  (docs/ileap.md, "Not supported");
- ``Published``, ``Fulfilled`` and ``Rejected`` events are acknowledged: this host is the data
  owner's, so they carry nothing it has to store.
Error codes inside a rejection may use either spelling of the expired-token code
(``TokenExpired``, ``ExpiredToken``): both are accepted.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any, Literal

from evidence_gateway.core.context import Ctx
from evidence_gateway.exchange import host, host_filters
from evidence_gateway.exchange.host import Recipient, bad_request, not_implemented

log = logging.getLogger(__name__)

V2_TYPES = {
    "org.wbcsd.pathfinder.ProductFootprint.Published.v1": "published",
    "org.wbcsd.pathfinder.ProductFootprintRequest.Created.v1": "created",
    "org.wbcsd.pathfinder.ProductFootprintRequest.Fulfilled.v1": "fulfilled",
    "org.wbcsd.pathfinder.ProductFootprintRequest.Rejected.v1": "rejected",
}
V3_TYPES = {
    "org.wbcsd.pact.ProductFootprint.PublishedEvent.3": "published",
    "org.wbcsd.pact.ProductFootprint.RequestCreatedEvent.3": "created",
    "org.wbcsd.pact.ProductFootprint.RequestFulfilledEvent.3": "fulfilled",
    "org.wbcsd.pact.ProductFootprint.RequestRejectedEvent.3": "rejected",
}
ERROR_CODES = frozenset(
    {"AccessDenied", "BadRequest", "NoSuchFootprint", "NotFound", "NotImplemented", "TokenExpired", "ExpiredToken",
     "InternalError"}
)  # fmt: skip


def _text(event: Mapping[str, Any], name: str) -> str:
    value = event.get(name)
    if not isinstance(value, str) or not value.strip():
        raise bad_request(f"CloudEvent attribute {name!r} must be a non-empty string")
    return value


def _strings(data: Mapping[str, Any], name: str, *, required: bool) -> list[str]:
    value = data.get(name)
    if value is None and not required:
        return []
    if not isinstance(value, list) or not value or not all(isinstance(v, str) and v for v in value):
        raise bad_request(f"data.{name} must be a non-empty list of strings")
    return list(value)


async def accept(ctx: Ctx, recipient: Recipient, version: Literal["v2", "v3"], event: Any) -> None:
    """Validate one event and act on it; PactError when it is not accepted."""
    if not isinstance(event, dict):
        raise bad_request("the body must be a CloudEvent JSON object")
    if event.get("specversion") != "1.0":
        raise bad_request('specversion must be "1.0"')
    event_id, _source, kind = _text(event, "id"), _text(event, "source"), _text(event, "type")
    known = (V2_TYPES if version == "v2" else V3_TYPES).get(kind)
    if known is None:
        raise not_implemented(f"event type {kind!r} is not one this host accepts on /{version[1]}/events")
    data = event.get("data")
    if not isinstance(data, dict):
        raise bad_request("data must be a JSON object")
    if known == "published":
        _strings(data, "pfIds", required=True)
    elif known == "fulfilled":
        _text(data, "requestEventId")
        if not isinstance(data.get("pfs"), list):
            raise bad_request("data.pfs must be a list of ProductFootprints")
    elif known == "rejected":
        _text(data, "requestEventId")
        error = data.get("error")
        if (
            not isinstance(error, dict)
            or error.get("code") not in ERROR_CODES
            or not isinstance(error.get("message"), str)
        ):
            raise bad_request("data.error must be an error response: {code, message}")
    else:
        matched = await _requested(ctx, recipient, version, data)
        log.info("footprint request %s from recipient %s matched %d footprints", event_id[:100], recipient.client_id,
                 matched)  # fmt: skip


async def _requested(ctx: Ctx, recipient: Recipient, version: Literal["v2", "v3"], data: Mapping[str, Any]) -> int:
    """How many of the recipient's footprints a request's criteria match."""
    if version == "v2":
        fragment = data.get("pf")
        if not isinstance(fragment, dict):
            raise bad_request("data.pf must be a ProductFootprint fragment (an object)")
        wanted = set(_strings(fragment, "productIds", required=False))
        found = await host.footprints(ctx, recipient)
        return sum(1 for f in found if not wanted or wanted & set(f.v2.get("productIds") or []))
    criteria: dict[str, list[str]] = {}
    for name in host_filters.V3_CRITERIA:
        value = data.get(name)
        if isinstance(value, list):
            criteria[name] = [str(v) for v in value]
        elif isinstance(value, str):
            criteria[name] = [value]
        elif value is not None:
            raise bad_request(f"data.{name} must be a string or a list of strings")
    keep = host_filters.v3_criteria(criteria)
    return sum(1 for f in await host.footprints(ctx, recipient) if keep(f.v3))
