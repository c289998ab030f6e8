"""Standard Webhooks signatures (https://www.standardwebhooks.com/), and the rotation of a secret.

``webhook-signature: v1,<base64(HMAC-SHA256(key, "{id}.{timestamp}.{body}"))>`` where the
key is the base64-decoded part of the organisation's or endpoint's ``whsec_...`` secret.

A rotated secret keeps signing beside its successor for ``ROTATION_OVERLAP`` (several
space-separated signatures are how the scheme rotates), so receivers switch without a gap. The
organisation's secret and each endpoint's rotate through the same two functions here.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

SECRET_PREFIX = "whsec_"
# Both secrets sign for this long after a rotation, so receivers can switch without a gap.
ROTATION_OVERLAP = timedelta(hours=24)


def secret_key_bytes(secret: str) -> bytes:
    """The HMAC key: base64 after the ``whsec_`` prefix."""
    encoded = secret.removeprefix(SECRET_PREFIX)
    try:
        return base64.b64decode(encoded, validate=True)
    except binascii.Error as exc:
        raise ValueError("webhook signing secret is not whsec_<base64>") from exc


def new_webhook_secret() -> str:
    """A new ``whsec_`` secret: 192 random bits, base64 as the scheme expects."""
    return SECRET_PREFIX + base64.b64encode(secrets.token_bytes(24)).decode()


def new_message_id() -> str:
    return "msg_" + secrets.token_urlsafe(18)


def sign(secret: str, msg_id: str, timestamp: int, body: bytes) -> str:
    """The ``webhook-signature`` header value for these exact body bytes."""
    signed = f"{msg_id}.{timestamp}.".encode() + body
    digest = hmac.new(secret_key_bytes(secret), signed, hashlib.sha256).digest()
    return "v1," + base64.b64encode(digest).decode()


def signature_headers(secrets: Sequence[str], msg_id: str, timestamp: int, body: bytes) -> dict[str, str]:
    """The three Standard Webhooks headers, with one signature per live secret."""
    return {
        "webhook-id": msg_id,
        "webhook-timestamp": str(timestamp),
        "webhook-signature": " ".join(sign(s, msg_id, timestamp, body) for s in secrets),
    }


@dataclass(frozen=True, slots=True)
class Rotation:
    """A new secret, and the one it replaces with the end of its overlap."""

    secret: str
    previous_secret: str
    previous_secret_expires_at: datetime


def rotate(current: str, now: datetime) -> Rotation:
    return Rotation(new_webhook_secret(), current, now + ROTATION_OVERLAP)


def live_secrets(current: str, previous: str | None, previous_expires_at: datetime | None, now: datetime) -> list[str]:
    """The current secret, and the previous one while its overlap after a rotation lasts."""
    if previous and previous_expires_at is not None and previous_expires_at > now:
        return [current, previous]
    return [current]


def verify(secret: str, msg_id: str, timestamp: str, body: bytes, signature_header: str) -> bool:
    """True when any ``v1,`` signature in the (space-separated) header matches; constant time."""
    expected = sign(secret, msg_id, int(timestamp), body).split(",", 1)[1]
    for candidate in signature_header.split():
        version, _, value = candidate.partition(",")
        if version == "v1" and hmac.compare_digest(value, expected):
            return True
    return False
