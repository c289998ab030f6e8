"""Signed artifact download links (DESIGN.md §7): HMAC-SHA256 over method, path and expiry.

The path signed is the canonical API path of the artifact (``/api/v2/artifacts/{id}/download``),
so a signature only ever opens the artifact it was made for, whatever prefix a proxy adds.
"""

from __future__ import annotations

import hashlib
import hmac
import time
import uuid

from evidence_gateway.errors import Forbidden
from evidence_gateway.settings import Settings


def download_path(artifact_id: uuid.UUID | str) -> str:
    return f"/api/v2/artifacts/{artifact_id}/download"


def file_url(settings: Settings, artifact_id: uuid.UUID | str) -> str:
    """The stable link: needs the Bearer key of the artifact's organisation."""
    return settings.public_base_url.rstrip("/") + download_path(artifact_id)


def signature(secret: str, method: str, path: str, expires: int) -> str:
    message = f"{method.upper()}\n{path}\n{expires}".encode()
    return hmac.new(secret.encode(), message, hashlib.sha256).hexdigest()


def signed_download_url(settings: Settings, artifact_id: uuid.UUID | str, *, now: float | None = None) -> str:
    """Time-limited link that needs no key: ``?expires=<unix>&signature=<hex>``."""
    expires = int(now if now is not None else time.time()) + settings.signed_url_ttl_seconds
    sig = signature(settings.secret_key, "GET", download_path(artifact_id), expires)
    return f"{file_url(settings, artifact_id)}?expires={expires}&signature={sig}"


def verify(
    settings: Settings,
    method: str,
    artifact_id: uuid.UUID | str,
    expires: str | None,
    sig: str | None,
    *,
    now: float | None = None,
) -> None:
    """Raise Forbidden unless the link is intact and unexpired (constant-time comparison)."""
    if not expires or not sig or not expires.isdigit() or len(expires) > 12:
        raise Forbidden("invalid download signature", reason="malformed")
    # HEAD is a GET without the body: the same link serves both.
    verb = "GET" if method.upper() == "HEAD" else method.upper()
    expected = signature(settings.secret_key, verb, download_path(artifact_id), int(expires))
    if not hmac.compare_digest(expected.encode(), sig.lower().encode("utf-8", "replace")):
        raise Forbidden("invalid download signature", reason="signature_mismatch")
    if int(expires) < int(now if now is not None else time.time()):
        raise Forbidden("download link expired", reason="expired", expired_at=int(expires))
