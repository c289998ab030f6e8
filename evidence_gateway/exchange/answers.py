"""Answers to a recipient's requests: which footprints a request asks for, the answer queued for
the recipient's host, and the CloudEvent that answers it (PACT v2 §6.6, v3 "Action Events");
and the ``Published`` notice of a pack newly published to a recipient whose host is known.

The answer is decided when it is sent, from the recipient's publications as they are then: a
``…Fulfilled`` event with every matching footprint, or a ``…Rejected`` one (``NoSuchFootprint``
in v2's words, ``NotFound`` in v3's) when none matches, and ``BadRequest`` when the request names
no criterion this host matches on. A request is answered once (the specifications' "a single
RequestFulfilled event ... per RequestCreated event"): the message is retried, not re-decided.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any, Literal

from evidence_gateway.core.context import Ctx
from evidence_gateway.core.timeutil import utcnow
from evidence_gateway.exchange import host_filters
from evidence_gateway.exchange.footprints import Footprint
from evidence_gateway.exchange.host import Recipient, bad_request
from evidence_gateway.models import DataRecipient, ExchangeMessage
from evidence_gateway.store.repositories import exchange_outbox

TYPES = {
    "2": {
        "fulfilled": "org.wbcsd.pathfinder.ProductFootprintRequest.Fulfilled.v1",
        "rejected": "org.wbcsd.pathfinder.ProductFootprintRequest.Rejected.v1",
        "published": "org.wbcsd.pathfinder.ProductFootprint.Published.v1",
    },
    "3": {
        "fulfilled": "org.wbcsd.pact.ProductFootprint.RequestFulfilledEvent.3",
        "rejected": "org.wbcsd.pact.ProductFootprint.RequestRejectedEvent.3",
        "published": "org.wbcsd.pact.ProductFootprint.PublishedEvent.3",
    },
}
NOT_FOUND = {"2": "NoSuchFootprint", "3": "NotFound"}

# The senders of this process (exchange/outbox.py), woken when an answer is queued here; other
# nodes' senders find it at their next poll.
_wakers: set[asyncio.Event] = set()


def register(waker: asyncio.Event) -> None:
    _wakers.add(waker)


def unregister(waker: asyncio.Event) -> None:
    _wakers.discard(waker)


def strings(data: Mapping[str, Any], name: str, *, required: bool) -> list[str]:
    value = data.get(name)
    if value is None and not required:
        return []
    if not isinstance(value, list) or not value or not all(isinstance(v, str) and v for v in value):
        raise bad_request(f"data.{name} must be a non-empty list of strings")
    return list(value)


Match = Callable[[Footprint], bool]


def request_filter(version: Literal["v2", "v3"], data: Mapping[str, Any]) -> Match | None:
    """Which footprints a request's criteria ask for; None when it names none this host matches
    on (answered with a rejection). PactError (400) when the criteria are malformed.

    v2: the ``pf`` fragment's ``productIds`` and ``companyIds`` (any shared value) and
    ``productCategoryCpc`` (equal), all that are given. v3: the ListFootprints criteria."""
    if version == "v2":
        fragment = data.get("pf")
        if not isinstance(fragment, dict):
            raise bad_request("data.pf must be a ProductFootprint fragment (an object)")
        products = set(strings(fragment, "productIds", required=False))
        companies = set(strings(fragment, "companyIds", required=False))
        cpc = fragment.get("productCategoryCpc")
        if cpc is not None and not isinstance(cpc, str):
            raise bad_request("data.pf.productCategoryCpc must be a string")
        if not (products or companies or cpc):
            return None

        def v2_match(f: Footprint) -> bool:
            pf = f.v2
            return (
                (not products or bool(products & set(pf.get("productIds") or [])))
                and (not companies or bool(companies & set(pf.get("companyIds") or [])))
                and (cpc is None or pf.get("productCategoryCpc") == cpc)
            )

        return v2_match
    criteria: dict[str, list[str]] = {}
    for name in host_filters.V3_CRITERIA:
        value = data.get(name)
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            if value:
                criteria[name] = list(value)
        elif isinstance(value, str):
            if value:
                criteria[name] = [value]
        elif value is not None:
            raise bad_request(f"data.{name} must be a string or a list of strings")
    if not criteria:
        return None
    keep = host_filters.v3_criteria(criteria)
    return lambda f: keep(f.v3)


async def enqueue(
    ctx: Ctx, recipient: Recipient, version: Literal["v2", "v3"], event_id: str, data: dict[str, Any], source: str
) -> None:
    """Queue the answer to a request; the sender decides and sends it. A request id the recipient
    sent before is not queued again."""
    message = ExchangeMessage(
        org_id=recipient.org_id,
        recipient_id=recipient.recipient_id,
        kind="request",
        major=version[1],
        request_event_id=event_id,
        request=data,
        reply_source=source,
        next_attempt_at=utcnow(),
    )
    if not await exchange_outbox.enqueue(ctx.db, message):
        return  # the same request again (its sender retried): answered once
    wake()


def wake() -> None:
    """Start this process's senders now (after a commit that queued a message)."""
    for waker in list(_wakers):
        waker.set()


def published_notice(
    recipient: DataRecipient, publication_id: uuid.UUID, pack_id: uuid.UUID, base_url: str
) -> ExchangeMessage:
    """A Published notice of a pack newly published to a recipient with a host, in the major its
    host speaks (added to the publication's own transaction)."""
    major = recipient.host_pact_version or "3"
    return ExchangeMessage(
        org_id=recipient.org_id,
        recipient_id=recipient.id,
        kind="published",
        major=major,
        request_event_id=f"{publication_id}/{uuid.uuid4()}",  # a notice per (re)publication
        request={"pack_id": str(pack_id)},
        reply_source=f"{base_url.rstrip('/')}/{major}/events",
        next_attempt_at=utcnow(),
    )


def notice(message: ExchangeMessage, pf_ids: list[uuid.UUID]) -> dict[str, Any]:
    """The Published event of a queued notice: the ids of the pack's footprints."""
    return {
        "type": TYPES[message.major]["published"],
        "specversion": "1.0",
        "id": str(message.id),
        "source": message.reply_source,
        "time": _instant(utcnow()),
        "data": {"pfIds": [str(i) for i in pf_ids]},
    }


def _instant(when: datetime) -> str:
    return when.astimezone(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def answer(message: ExchangeMessage, footprints: list[Footprint]) -> tuple[str, dict[str, Any]]:
    """The CloudEvent answering a queued request, from the footprints the recipient may read now:
    ``(what, event)``, ``what`` being "fulfilled" or "rejected"."""
    major = message.major
    data: dict[str, Any] = {"requestEventId": message.request_event_id}
    try:
        match = request_filter("v2" if major == "2" else "v3", message.request)
    except Exception:  # checked when it was accepted; a rule changed since: the request is bad now
        match = None
    if match is None:
        what = "rejected"
        data["error"] = {"code": "BadRequest", "message": "The request names no criterion this host matches on "
                         "(v2: pf.productIds, pf.companyIds, pf.productCategoryCpc; v3: productId, companyId, "
                         "geography, classification, validOn, validAfter, validBefore, status)."}  # fmt: skip
    else:
        found = [(f.v2 if major == "2" else f.v3) for f in footprints if match(f)]
        if found:
            what, data["pfs"] = "fulfilled", found
        else:
            what = "rejected"
            data["error"] = {"code": NOT_FOUND[major], "message": "No footprint shared with you matches the request."}
    event = {
        "type": TYPES[major][what],
        "specversion": "1.0",
        "id": str(message.id),  # the same on every attempt: a receiver can drop repeats
        "source": message.reply_source,
        "time": _instant(utcnow()),
        "data": data,
    }
    return what, event
