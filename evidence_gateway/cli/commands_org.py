"""An organisation's keys, legacy reports and webhook signing secret."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import Any

from evidence_gateway.cli.arguments import CliError
from evidence_gateway.cli.support import key_table, prepared, progress
from evidence_gateway.core.timeutil import utcnow
from evidence_gateway.resolvers import keys, organizations
from evidence_gateway.resolvers.legacy import import_legacy_reports
from evidence_gateway.resolvers.webhooks import signing_secret
from evidence_gateway.settings import get_settings


def keys_create(args: argparse.Namespace) -> int:
    """Prints the key alone on stdout (scripts capture it); it is not stored, so not shown again."""
    options: dict[str, Any] = {"scope": args.scope, "name": args.name}
    if args.expires_in is not None:
        options["expires_at"] = utcnow() + args.expires_in
    elif args.expires_at is not None:
        options["expires_at"] = args.expires_at
    key = asyncio.run(prepared(args, lambda db: organizations.create_api_key(db, args.org, **options)))
    print(key)
    return 0


def keys_list(args: argparse.Namespace) -> int:
    rows = asyncio.run(prepared(args, lambda db: keys.list_for_org(db, args.org)))
    sys.stdout.write(key_table(rows))
    return 0


def keys_revoke(args: argparse.Namespace) -> int:
    key = asyncio.run(prepared(args, lambda db: keys.revoke_by_reference(db, args.key, args.org)))
    window = get_settings().auth_cache_seconds
    print(
        f"revoked {key.display_prefix} ({key.id}); every node refuses it within {window:g} s "
        "(EVIDENCE_AUTH_CACHE_SECONDS)"
    )
    return 0


def legacy_import(args: argparse.Namespace) -> int:
    """Prints the stored ids one a line; a bad file or record imports nothing and exits 1."""
    try:
        with open(args.file, encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CliError(f"cannot read {args.file}: {exc}") from None
    with progress("importing legacy reports", finishing="committing the import") as advance:
        ids = asyncio.run(
            prepared(
                args,
                lambda db: import_legacy_reports(db, args.org, data, create_org=args.create_org, progress=advance),
            )
        )
    sys.stdout.write("".join(f"{i}\n" for i in ids))
    return 0


def webhooks_secret(args: argparse.Namespace) -> int:
    """Prints the organisation's webhook signing secret; --rotate replaces it first."""
    print(asyncio.run(prepared(args, lambda db: signing_secret(db, args.org, rotate=args.rotate))))
    return 0
