"""``evidence-gateway verify BUNDLE.zip`` (offline: no server, no database) and
``evidence-gateway log verify`` (the stored log against the rows it vouches for)."""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from evidence_gateway.cli.support import CliError, checked_database_url
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


def cmd_verify(args: argparse.Namespace) -> int:
    try:
        data = Path(args.bundle).read_bytes()
    except OSError as exc:
        raise CliError(f"cannot read {args.bundle}: {exc.strerror}") from None
    try:
        report = verify_bundle(data, _pinned(args.key))
    except VerificationError as exc:
        print(f"NOT VERIFIED: {exc}", file=sys.stderr)
        return 1
    print(f"pack {report.pack_id}, pack_hash {report.pack_hash}")
    for line in report.checks:
        print(f"  ok  {line}")
    print("VERIFIED")
    return 0


def cmd_log_verify(args: argparse.Namespace) -> int:
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


def cmd_log_rotate_key(args: argparse.Namespace) -> int:
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


def register(
    sub: Any,
    command: Callable[[Any, str, str], argparse.ArgumentParser],
    db_option: Callable[[argparse.ArgumentParser], None],
) -> None:
    """Adds ``verify`` and ``log verify`` to the command's parser."""
    key_help = "trust only this verifier key (<name>+<hash>+<base64>, from /.well-known/evidence-keys); repeatable"
    verify = command(sub, "verify", "check a pack's bundle offline: files, seal, pack_hash, log inclusion")
    verify.add_argument("bundle", metavar="BUNDLE.zip", help="the zip from GET /api/v2/packs/{id}/bundle")
    verify.add_argument("--key", action="append", metavar="VKEY", help=key_help)
    verify.set_defaults(func=cmd_verify)
    log = command(sub, "log", "the transparency log")
    actions = log.add_subparsers(dest="log_command", required=True, metavar="ACTION")
    about = "re-check the stored log against events, packs and approvals; exit 1 on a mismatch"
    check = command(actions, "verify", about)
    check.add_argument("--key", action="append", metavar="VKEY", help=key_help)
    db_option(check)
    check.set_defaults(func=cmd_log_verify)
    rotate = command(actions, "rotate-key", "sign with a new generated key from now on; print its key id")
    db_option(rotate)
    rotate.set_defaults(func=cmd_log_rotate_key)
