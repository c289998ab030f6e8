"""``db``: the schema's revision, upgrades and downgrades, and SQLite backups."""

from __future__ import annotations

import argparse
import asyncio

from evidence_gateway.cli.support import on_database, progress
from evidence_gateway.settings import get_settings
from evidence_gateway.store import backup as sqlite_backup
from evidence_gateway.store import migrate


def upgrade(args: argparse.Namespace) -> int:
    """Prints the revision reached alone on stdout, for deploy scripts."""
    print(asyncio.run(on_database(args, migrate.upgrade)))
    return 0


def downgrade(args: argparse.Namespace) -> int:
    """Prints what was undone; the older release's code is what should run on the result."""
    done: migrate.Downgrade = asyncio.run(on_database(args, lambda db: migrate.downgrade(db, args.revision)))
    print(done.describe())
    return 0


def current(args: argparse.Namespace) -> int:
    """Exit 0 only at head, so ``db current || db upgrade`` reads as intended."""
    found: migrate.Status = asyncio.run(on_database(args, migrate.status))
    print(found.describe())
    return 0 if found.state is migrate.State.CURRENT else 1


def backup(args: argparse.Namespace) -> int:
    """SQLite's online backup: a consistent copy while the server runs."""
    url = args.database_url or get_settings().database_url
    with progress("backing up") as advance:
        pages = sqlite_backup.sqlite_backup(url, args.file, progress=advance)
    print(f"backed up {pages} pages to {args.file}")
    return 0
