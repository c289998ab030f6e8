"""``db backup``: SQLite's online backup API, which copies a consistent snapshot page by page
while writers carry on (a plain file copy of a WAL database can be torn)."""

from __future__ import annotations

import os
import sqlite3
import tempfile
from collections.abc import Callable
from pathlib import Path

from sqlalchemy.engine import make_url

from evidence_gateway.store.db import normalise_url


class BackupError(Exception):
    """A copy that cannot be made as asked (printed by the CLI as one error line)."""


# Pages per step: small enough that writers are not held up for long, big enough to be quick.
PAGES_PER_STEP = 1024


def sqlite_backup(url: str, target: str, progress: Callable[[int, int], None] | None = None) -> int:
    """Copy the database at ``url`` to ``target`` (which must not exist); returns the page count.

    The copy is written beside ``target`` with mode 0600 (it holds key hashes and signing
    secrets) and renamed into place, so a failure leaves no partial file behind.
    """
    parsed = make_url(normalise_url(url))
    if not parsed.get_backend_name().startswith("sqlite"):
        raise BackupError("db backup copies SQLite databases; for PostgreSQL use pg_dump (e.g. pg_dump -Fc -f FILE DB)")
    source = parsed.database
    if not source or source == ":memory:" or not Path(source).is_file():
        raise BackupError(f"no SQLite database at {source or '(none)'}")
    destination = Path(target)
    if destination.exists():
        raise BackupError(f"{target} exists; give a new file name")
    fd, tmp = tempfile.mkstemp(prefix=f".{destination.name}.", suffix=".partial", dir=destination.parent or ".")
    os.close(fd)  # mkstemp made it 0600; sqlite3 opens it again by name
    total = 0
    try:
        src = sqlite3.connect(f"file:{source}?mode=ro", uri=True)
        dst = sqlite3.connect(tmp)
        try:

            def step(_status: int, remaining: int, pages: int) -> None:
                nonlocal total
                total = pages
                if progress is not None:
                    progress(pages - remaining, pages)

            src.backup(dst, pages=PAGES_PER_STEP, progress=step)
        finally:
            dst.close()
            src.close()
        os.chmod(tmp, 0o600)
        os.replace(tmp, destination)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return total
