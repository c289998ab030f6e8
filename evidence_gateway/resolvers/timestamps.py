"""RFC 3161 time-stamps of packs' signed statements (seals and approvals' status statements) from
the configured authority (``EVIDENCE_TSA_URL``).

A time-stamp adds to a statement; it never holds one up: an authority that is down or answers
amiss leaves the statement without a token (logged), and the next request for the pack's bundle
asks again.
"""

from __future__ import annotations

import base64
import logging

import orjson

from evidence_gateway.models import SignedStatement
from evidence_gateway.proofs import timestamp
from evidence_gateway.settings import Settings
from evidence_gateway.store import seals as store
from evidence_gateway.store.db import Database

log = logging.getLogger(__name__)


def seal_signature(envelope: str) -> bytes:
    """The bytes stamped: the statement's (first) DSSE signature."""
    return base64.b64decode(orjson.loads(envelope)["signatures"][0]["sig"])


async def stamp(db: Database, settings: Settings, statement: SignedStatement) -> None:
    import httpx  # only with EVIDENCE_TSA_URL set; ~5 MB resident otherwise never loaded

    signature = seal_signature(statement.envelope)
    query, nonce = timestamp.request(signature)
    try:
        async with httpx.AsyncClient(timeout=settings.tsa_timeout_seconds) as client:
            answer = await client.post(
                settings.tsa_url, content=query, headers={"Content-Type": timestamp.CONTENT_TYPE}
            )
        answer.raise_for_status()
        when = timestamp.check_reply(answer.content, signature, nonce)
    except (httpx.HTTPError, timestamp.TimestampError) as exc:
        log.warning(
            "pack %s: no time-stamp for its %s statement of event %s: %s",
            statement.pack_id, statement.kind, statement.event_sequence, str(exc) or type(exc).__name__,
        )  # fmt: skip
        return
    await store.keep_timestamp(db, statement.id, answer.content)
    log.info(
        "pack %s: %s of event %s time-stamped at %s",
        statement.pack_id,
        statement.kind,
        statement.event_sequence,
        when.isoformat(),
    )
