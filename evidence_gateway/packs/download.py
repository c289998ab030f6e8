"""Who may read an artifact's bytes, and the bytes themselves.

Two kinds of caller reach a download: a key (``Ctx``, its organisation's artifacts) and a signed
link (``SignedLink``, the one artifact it was signed for, whoever's it is). The link is verified
when the caller is built, as a key is authenticated when a ``Ctx`` is, so the operation receives
a caller like every other one and never the raw database.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass

from evidence_gateway.core import signing
from evidence_gateway.models import PackArtifact
from evidence_gateway.settings import Settings
from evidence_gateway.store import artifact_files as store
from evidence_gateway.store.db import Database


@dataclass(frozen=True, slots=True)
class SignedLink:
    """The caller of a verified signed download link."""

    db: Database
    settings: Settings
    # The artifact id as it appears in the signed path: the only one this caller may read.
    artifact_id: str
    request_id: str | None = None

    @classmethod
    def verify(
        cls,
        db: Database,
        settings: Settings,
        method: str,
        artifact_id: str,
        expires: str | None,
        signature: str | None,
        request_id: str | None = None,
    ) -> SignedLink:
        """Forbidden (403) unless the link is intact and unexpired (DESIGN.md §7)."""
        signing.verify(settings, method, artifact_id, expires, signature)
        return cls(db, settings, artifact_id, request_id)


@dataclass(frozen=True, slots=True)
class Download:
    """A generated artifact and its bytes, read only when asked for."""

    artifact: PackArtifact
    db: Database

    @property
    def small(self) -> bool:
        return (self.artifact.size_bytes or 0) <= store.WHOLE_BYTES

    async def whole(self) -> bytes:
        """The file in one piece (only for small files)."""
        return await store.read_whole(self.db, self.artifact) if self.artifact.size_bytes else b""

    def slices(self) -> AsyncIterator[bytes]:
        """The file a slice at a time: memory stays flat however large it is."""
        return store.read_slices(self.db, self.artifact)
