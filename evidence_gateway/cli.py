"""``evidence-gateway`` command line (a contract: scripts and docs rely on it)."""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from evidence_gateway.db import Database
from evidence_gateway.resolvers import organizations
from evidence_gateway.settings import get_settings

DEMO_ORG = "demo"


def _with_db(args: argparse.Namespace) -> Database:
    url = args.database_url or get_settings().database_url
    return Database(url)


async def _prepared(args: argparse.Namespace, work: Callable[[Database], Awaitable[Any]]) -> Any:
    db = _with_db(args)
    try:
        await db.create_schema()
        return await work(db)
    finally:
        await db.dispose()


def cmd_serve(args: argparse.Namespace) -> int:
    import uvicorn

    if args.database_url:
        os.environ["EVIDENCE_DATABASE_URL"] = args.database_url
        get_settings.cache_clear()

    async def demo_key(db: Database) -> str | None:
        if await organizations.organization_count(db):
            return None
        return await organizations.create_api_key(db, DEMO_ORG)

    key = asyncio.run(_prepared(args, demo_key))
    if key:
        print(f"Created organisation '{DEMO_ORG}'. Its API key (shown once):\n{key}", flush=True)
    uvicorn.run(
        "evidence_gateway.app:create_app",
        factory=True,
        host=args.host,
        port=args.port,
        workers=args.workers,
        log_level=args.log_level,
    )
    return 0


def cmd_keys_create(args: argparse.Namespace) -> int:
    key = asyncio.run(_prepared(args, lambda db: organizations.create_api_key(db, args.org)))
    print(key)
    return 0


def cmd_export_schema(_args: argparse.Namespace) -> int:
    from evidence_gateway.schema import schema

    sys.stdout.write(schema.as_str() + "\n")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="evidence-gateway", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    def db_option(p: argparse.ArgumentParser) -> None:
        p.add_argument("--database-url", default=None, help="overrides EVIDENCE_DATABASE_URL")

    serve = sub.add_parser("serve", help="run the API with uvicorn")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8000)
    serve.add_argument("--workers", type=int, default=1)
    serve.add_argument("--log-level", default="info")
    db_option(serve)
    serve.set_defaults(func=cmd_serve)

    keys = sub.add_parser("keys", help="API keys").add_subparsers(dest="keys_command", required=True)
    create = keys.add_parser("create", help="create an API key (and the organisation if new)")
    create.add_argument("--org", required=True)
    db_option(create)
    create.set_defaults(func=cmd_keys_create)

    export = sub.add_parser("export-schema", help="print the GraphQL SDL")
    export.set_defaults(func=cmd_export_schema)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":
    raise SystemExit(main())
