"""``evidence-gateway verify BUNDLE.zip`` (offline: no server, no database) and
``evidence-gateway log verify`` (the stored log against the rows it vouches for)."""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

from evidence_gateway.cli.arguments import CliError
from evidence_gateway.cli.support import checked_database_url
from evidence_gateway.core import evidence_keys
from evidence_gateway.proofs.bundle import VerificationError, verify_bundle
from evidence_gateway.proofs.notes import NoteError, PublicKey
from evidence_gateway.resolvers import log_audit
from evidence_gateway.settings import get_settings
from evidence_gateway.store import migrate
from evidence_gateway.store.db import Database


def _pinned(values: list[str] | None) -> list[PublicKey] | None:
    if not values:
        return None
    try:
        return [PublicKey.from_vkey(v) for v in values]
    except NoteError as exc:
        raise CliError(f"--key: {exc}") from None


def _tsa_ca(path: str | None) -> bytes | None:
    if path is None:
        return None
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise CliError(f"--tsa-ca: cannot read {path}: {exc.strerror}") from None


def verify(args: argparse.Namespace) -> int:
    try:
        data = Path(args.bundle).read_bytes()
    except OSError as exc:
        raise CliError(f"cannot read {args.bundle}: {exc.strerror}") from None
    try:
        report = verify_bundle(data, _pinned(args.key), _tsa_ca(args.tsa_ca))
    except VerificationError as exc:
        print(f"NOT VERIFIED: {exc}", file=sys.stderr)
        return 1
    print(f"pack {report.pack_id}, pack_hash {report.pack_hash}")
    for line in report.checks:
        print(f"  ok  {line}")
    print("VERIFIED")
    return 0


def log_verify(args: argparse.Namespace) -> int:
    db = Database(checked_database_url(args.database_url or get_settings().database_url))

    async def run() -> log_audit.Audit:
        try:
            await migrate.prepare(db, migrate=False)
            return await log_audit.audit(db, _pinned(args.key))
        finally:
            await db.dispose()

    result = asyncio.run(run())
    for line in result.checked:
        print(f"  checked  {line}")
    for problem in result.problems:
        print(f"PROBLEM: {problem}", file=sys.stderr)
    if result.problems:
        print(f"NOT CONSISTENT: {len(result.problems)} problem(s)", file=sys.stderr)
        return 1
    print("CONSISTENT")
    return 0


def log_rotate_key(args: argparse.Namespace) -> int:
    settings = get_settings()
    if settings.signing_key_file or settings.signing_key.get_secret_value():
        raise CliError("the signing key comes from EVIDENCE_SIGNING_KEY(_FILE): replace it there and restart")
    db = Database(checked_database_url(args.database_url or settings.database_url))

    async def run() -> str:
        try:
            await migrate.prepare(db, migrate=False)
            return (await evidence_keys.rotate(db, settings)).key_id
        finally:
            await db.dispose()

    print(asyncio.run(run()))
    return 0
