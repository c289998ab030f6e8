"""An organisation's keys, data recipients and publications, legacy reports and webhook signing secret."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import Any

from evidence_gateway.cli.arguments import CliError
from evidence_gateway.cli.support import key_table, prepared, progress
from evidence_gateway.core.timeutil import utcnow
from evidence_gateway.resolvers import keys, organizations, sharing
from evidence_gateway.resolvers.legacy import import_legacy_reports
from evidence_gateway.resolvers.webhooks import signing_secret
from evidence_gateway.settings import get_settings
from evidence_gateway.store.db import Database


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


def recipients_create(args: argparse.Namespace) -> int:
    """Prints ``<client id> <client secret>`` alone on one line (scripts read both); the secret is
    not stored, so not shown again."""

    async def create(db: Database) -> sharing.CreatedRecipient:
        return await sharing.create_recipient(await sharing.operator(db, args.org), {"name": args.name})

    created = asyncio.run(prepared(args, create))
    print(f"{created.recipient.client_id} {created.client_secret}")
    return 0


def _when(value: Any) -> str:
    return value.strftime("%Y-%m-%dT%H:%MZ") if value is not None else "-"


def recipients_list(args: argparse.Namespace) -> int:
    async def listed(db: Database) -> list[Any]:
        return await sharing.list_recipients(await sharing.operator(db, args.org))

    rows = asyncio.run(prepared(args, listed))
    lines = ["id\tclient_id\tcreated\trevoked\tname"]
    lines += [f"{r.id}\t{r.client_id}\t{_when(r.created_at)}\t{_when(r.revoked_at)}\t{r.name}" for r in rows]
    sys.stdout.write("".join(line + "\n" for line in lines))
    return 0


def recipients_revoke(args: argparse.Namespace) -> int:
    async def revoke(db: Database) -> Any:
        return await sharing.revoke_recipient(await sharing.operator(db, args.org), args.recipient)

    recipient = asyncio.run(prepared(args, revoke))
    print(f"revoked {recipient.client_id} ({recipient.id}): no new token, and its tokens are refused")
    return 0


def recipients_publish(args: argparse.Namespace) -> int:
    async def publish(db: Database) -> Any:
        ctx = await sharing.operator(db, args.org)
        return await sharing.publish(ctx, {"recipient_id": args.recipient, "pack_id": args.pack})

    print(asyncio.run(prepared(args, publish)).id)
    return 0


def recipients_withdraw(args: argparse.Namespace) -> int:
    async def withdraw(db: Database) -> Any:
        return await sharing.withdraw(await sharing.operator(db, args.org), args.publication)

    publication = asyncio.run(prepared(args, withdraw))
    print(f"withdrew {publication.id}: pack {publication.report_pack_id} is gone for its recipient")
    return 0


def recipients_publications(args: argparse.Namespace) -> int:
    async def listed(db: Database) -> list[Any]:
        return await sharing.list_publications(await sharing.operator(db, args.org), args.recipient)

    rows = asyncio.run(prepared(args, listed))
    lines = ["id\trecipient_id\tpack_id\tpublished\twithdrawn"]
    lines += [
        f"{p.id}\t{p.recipient_id}\t{p.report_pack_id}\t{_when(p.created_at)}\t{_when(p.withdrawn_at)}" for p in rows
    ]
    sys.stdout.write("".join(line + "\n" for line in lines))
    return 0


def recipients_host(args: argparse.Namespace) -> int:
    """``--url`` and ``--client-id`` with the secret on standard input (a line), or ``--clear``."""
    if args.clear:
        if args.url or args.client_id:
            raise CliError("--clear takes no --url or --client-id")

        async def clear(db: Database) -> Any:
            return await sharing.clear_recipient_host(await sharing.operator(db, args.org), args.recipient)

        recipient = asyncio.run(prepared(args, clear))
        print(f"cleared the host of {recipient.client_id} ({recipient.id}): its requests are not answered")
        return 0
    if not (args.url and args.client_id):
        raise CliError("give --url and --client-id (and the client secret on standard input), or --clear")
    secret = sys.stdin.readline().strip()
    if not secret:
        raise CliError("no client secret on standard input")
    data = {"url": args.url, "client_id": args.client_id, "client_secret": secret, "pact_version": args.pact_version}

    async def set_host(db: Database) -> Any:
        return await sharing.set_recipient_host(await sharing.operator(db, args.org), args.recipient, data)

    recipient = asyncio.run(prepared(args, set_host))
    print(f"answers to {recipient.client_id} ({recipient.id}) go to {recipient.host_url}")
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
