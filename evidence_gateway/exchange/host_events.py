"""Action Events: the CloudEvents a host accepts (PACT v2 §6.6, v3 "Action Events").

Each specification's four event types are validated (structured-mode CloudEvent 1.0: ``specversion``,
``id``, ``source``, ``type``, an object ``data``) and accepted with 200; anything malformed is 400
``BadRequest``, an event type neither specification defines 400 ``NotImplemented``.

What an accepted event does:
- a request (``ProductFootprintRequest.Created`` / ``RequestCreatedEvent``) whose criteria are
  well-formed is queued for an answer: a ``…Fulfilled`` event with the recipient's footprints
  that match, or a ``…Rejected`` one when none does (or the request names no criterion this host
  matches on), sent later to the recipient's own host (exchange/outbox.py), never inside the
  request. A recipient whose host the data owner has not registered is not answered (logged);
  it pulls the matches with ``GET /2/footprints`` / ``/3/footprints`` and the same criteria;
- ``Published``, ``Fulfilled`` and ``Rejected`` events are acknowledged: this host is the data
  owner's, so they carry nothing it has to store.
Error codes inside a rejection may use either spelling of the expired-token code
(``TokenExpired``, ``ExpiredToken``): both are accepted.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Mapping
from typing import Any, Literal

from evidence_gateway.core.context import Ctx
from evidence_gateway.exchange import answers
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


async def accept(ctx: Ctx, recipient: Recipient, version: Literal["v2", "v3"], event: Any, reply_source: str) -> None:
    """Validate one event and act on it; PactError when it is not accepted. ``reply_source``:
    this host's events URL, the ``source`` of an answer."""
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
        for pf_id in answers.strings(data, "pfIds", required=True):
            try:
                uuid.UUID(pf_id)
            except ValueError:
                raise bad_request("data.pfIds: ProductFootprint ids are UUIDs") from None
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
        answers.request_filter(version, data)  # malformed criteria are refused now, with 400
        if len(event_id) > 500:
            raise bad_request("id: at most 500 characters")
        if recipient.host_url is None:
            log.warning("footprint request %s from recipient %s not answered: the data owner has not registered "
                        "the recipient's host", event_id[:100], recipient.client_id)  # fmt: skip
            return
        await answers.enqueue(ctx, recipient, version, event_id, data, reply_source)
