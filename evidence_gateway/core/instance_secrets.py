"""The signing secret of download links when ``EVIDENCE_SECRET_KEY`` is not set.

It is generated once and kept in the database, not in a file beside it: every uvicorn worker
and every node reads the same row, so a link signed by one verifies on all (a per-process or
per-host file would not), and ``serve --workers N`` needs no extra setup. Setting
``EVIDENCE_SECRET_KEY`` still wins (and lets a secret manager own it).
"""

from __future__ import annotations

import logging
import secrets
from pathlib import Path

from evidence_gateway.settings import Settings
from evidence_gateway.store.db import Database
from evidence_gateway.store.repositories import instance_secrets

log = logging.getLogger(__name__)

SIGNING_KEY = "download_signing_key"


async def signing_key(db: Database, settings: Settings) -> str:
    """``EVIDENCE_SECRET_KEY``, else the installation's generated secret (made on first use).

    Concurrent first starts (N workers at once) race on one primary key: the first insert
    wins, the others do nothing and read the winner's value.
    """
    if settings.secret_key:
        return settings.secret_key
    candidate = _earlier_dev_secret(settings.database_url) or secrets.token_hex(32)
    value, made = await instance_secrets.keep_first(db, SIGNING_KEY, candidate)
    if made:
        log.warning(
            "EVIDENCE_SECRET_KEY not set: generated a download-signing secret and kept it in the database "
            "(shared by every worker and node)"
        )
    return value


def _earlier_dev_secret(database_url: str) -> str | None:
    """Versions before 0.2 kept the dev secret in a file beside the SQLite database; adopting it
    keeps the links they signed valid. Nothing is written to files any more."""
    if database_url.startswith("sqlite") and ":///" in database_url:
        db_path = database_url.split(":///", 1)[1]
        if db_path and db_path != ":memory:":
            path = Path(db_path).with_suffix(".secret")
            if path.is_file():
                return path.read_text().strip() or None
    return None
