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


async def _prepared(
    args: argparse.Namespace, work: Callable[[Database], Awaitable[Any]], *, migrate: bool | None = None
) -> Any:
    """Run ``work`` once the schema is fit: SQLite is upgraded, PostgreSQL must be at head
    unless ``migrate`` (None: EVIDENCE_MIGRATE) allows upgrading it, like ``serve``."""
    db = _with_db(args)
    try:
        await db.create_schema(migrate=migrate)
        return await work(db)
    finally:
        await db.dispose()


async def _on_db(args: argparse.Namespace, work: Callable[[Database], Awaitable[Any]]) -> Any:
    db = _with_db(args)
    try:
        return await work(db)
    finally:
        await db.dispose()


def cmd_serve(args: argparse.Namespace) -> int:
    import uvicorn

    if args.database_url:
        os.environ["EVIDENCE_DATABASE_URL"] = args.database_url
    if "EVIDENCE_PUBLIC_BASE_URL" not in os.environ:
        # Links (signed downloads, file_url) must point at where this server listens.
        host = "127.0.0.1" if args.host in ("0.0.0.0", "::", "") else args.host
        os.environ["EVIDENCE_PUBLIC_BASE_URL"] = f"http://{host}:{args.port}"
    get_settings.cache_clear()
    if get_settings().graphql_trusted_documents:
        from evidence_gateway.schema.persisted import load_trusted

        load_trusted(get_settings().graphql_trusted_documents)  # a wrong file stops here, in one line

    async def demo_key(db: Database) -> str | None:
        if await organizations.organization_count(db):
            return None
        return await organizations.create_api_key(db, DEMO_ORG)

    # Migrate here, once, before any worker exists; a refusal ends serve (main prints it).
    key = asyncio.run(_prepared(args, demo_key, migrate=args.migrate or get_settings().migrate))
    # The schema is at head now: workers (and this process's app) only check it.
    os.environ["EVIDENCE_MIGRATE"] = "false"
    if args.no_dispatcher:
        os.environ["EVIDENCE_DISPATCHER"] = "false"
    get_settings.cache_clear()
    if key:
        print(f"Created organisation '{DEMO_ORG}'. Its API key (shown once):\n{key}", flush=True)
    uvicorn.run(
        "evidence_gateway.app:create_app",
        factory=True,
        host=args.host,
        port=args.port,
        workers=args.workers,
        log_level=args.log_level,
        timeout_graceful_shutdown=args.graceful_timeout,
    )
    return 0


def cmd_worker(args: argparse.Namespace) -> int:
    """Background work without HTTP: the webhook dispatcher, the sweeper and the queue of
    respond-async work, until SIGTERM or SIGINT. Pair it with ``serve --no-dispatcher``."""
    import signal

    from evidence_gateway import wakeups
    from evidence_gateway.webhooks.dispatcher import Dispatcher
    from evidence_gateway.worker import Worker

    if args.database_url:
        os.environ["EVIDENCE_DATABASE_URL"] = args.database_url
    get_settings.cache_clear()
    settings = get_settings()

    async def run(db: Database) -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop.set)
        listener = None if db.is_sqlite else wakeups.PgListener(db.url)
        worker, dispatcher = Worker(db, settings), Dispatcher(db, settings)
        if listener is not None:
            await listener.start()
        await worker.start()
        await dispatcher.start()
        print("worker running: webhook dispatcher, sweeper, queued work (Ctrl-C stops)", flush=True)
        try:
            await stop.wait()
        finally:
            await dispatcher.stop(settings.webhook_read_timeout_seconds)
            await worker.stop(settings.lease_seconds)
            if listener is not None:
                await listener.stop()

    asyncio.run(_prepared(args, run))
    return 0


def cmd_db_upgrade(args: argparse.Namespace) -> int:
    """Prints the revision reached alone on stdout, for deploy scripts."""
    from evidence_gateway import migrate

    print(asyncio.run(_on_db(args, migrate.upgrade)))
    return 0


def cmd_db_current(args: argparse.Namespace) -> int:
    """Exit 0 only at head, so ``db current || db upgrade`` reads as intended."""
    from evidence_gateway import migrate

    found: migrate.Status = asyncio.run(_on_db(args, migrate.status))
    print(found.describe())
    return 0 if found.state is migrate.State.CURRENT else 1


def cmd_keys_create(args: argparse.Namespace) -> int:
    key = asyncio.run(_prepared(args, lambda db: organizations.create_api_key(db, args.org)))
    print(key)
    return 0


def cmd_legacy_import(args: argparse.Namespace) -> int:
    """Prints the stored ids one a line; a bad file or record imports nothing and exits 1."""
    import json

    from evidence_gateway.errors import InvalidInput
    from evidence_gateway.resolvers.legacy import import_legacy_reports

    try:
        with open(args.file, encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        print(f"error: cannot read {args.file}: {exc}", file=sys.stderr)
        return 1
    try:
        ids = asyncio.run(_prepared(args, lambda db: import_legacy_reports(db, args.org, data)))
    except InvalidInput as exc:
        print(f"error: {exc.message}; nothing imported", file=sys.stderr)
        for where, why in exc.fields.items():
            print(f"  {where}: {why}", file=sys.stderr)
        return 1
    sys.stdout.write("".join(f"{i}\n" for i in ids))
    return 0


def cmd_webhooks_secret(args: argparse.Namespace) -> int:
    """Prints the organisation's webhook signing secret; --rotate replaces it first."""
    from evidence_gateway.errors import NotFound
    from evidence_gateway.resolvers.webhooks import signing_secret

    try:
        secret = asyncio.run(_prepared(args, lambda db: signing_secret(db, args.org, rotate=args.rotate)))
    except NotFound as exc:
        print(f"error: {exc.message}", file=sys.stderr)
        return 1
    print(secret)
    return 0


def cmd_export_schema(_args: argparse.Namespace) -> int:
    from evidence_gateway.schema import schema

    sys.stdout.write(schema.as_str() + "\n")
    return 0


def cmd_graphiql_assets(args: argparse.Namespace) -> int:
    from evidence_gateway import graphiql

    directory = graphiql.assets_dir(get_settings(), args.dir)
    try:
        stored = graphiql.fetch_assets(directory, log=lambda line: print(line, file=sys.stderr))
    except graphiql.AssetError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"stored {len(stored)} verified GraphiQL files in {directory.resolve()}")
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
    serve.add_argument(
        "--migrate",
        action="store_true",
        help="PostgreSQL: upgrade the schema before starting (one node only; default EVIDENCE_MIGRATE)",
    )
    serve.add_argument(
        "--graceful-timeout",
        type=int,
        default=30,
        metavar="SECONDS",
        help="on shutdown, wait this long for requests in flight before closing them (default 30)",
    )
    serve.add_argument(
        "--no-dispatcher",
        action="store_true",
        help="do not deliver webhooks from this process (run `evidence-gateway worker` instead)",
    )
    db_option(serve)
    serve.set_defaults(func=cmd_serve)

    worker = sub.add_parser("worker", help="run webhook delivery and background work without HTTP")
    db_option(worker)
    worker.set_defaults(func=cmd_worker)

    keys = sub.add_parser("keys", help="API keys").add_subparsers(dest="keys_command", required=True)
    create = keys.add_parser("create", help="create an API key (and the organisation if new)")
    create.add_argument("--org", required=True)
    db_option(create)
    create.set_defaults(func=cmd_keys_create)

    legacy = sub.add_parser("legacy", help="legacy v1 reports").add_subparsers(dest="legacy_command", required=True)
    legacy_import = legacy.add_parser("import", help="load legacy v1 report records (JSON array) for an organisation")
    legacy_import.add_argument("file", metavar="FILE.json")
    legacy_import.add_argument("--org", required=True)
    db_option(legacy_import)
    legacy_import.set_defaults(func=cmd_legacy_import)

    webhooks = sub.add_parser("webhooks", help="outgoing webhooks").add_subparsers(
        dest="webhooks_command", required=True
    )
    secret = webhooks.add_parser("secret", help="print an organisation's webhook signing secret")
    secret.add_argument("--org", required=True)
    secret.add_argument("--rotate", action="store_true", help="replace the secret with a new one, then print it")
    db_option(secret)
    secret.set_defaults(func=cmd_webhooks_secret)

    db = sub.add_parser("db", help="the database schema").add_subparsers(dest="db_command", required=True)
    upgrade = db.add_parser("upgrade", help="upgrade the schema to this version's head; print the revision")
    db_option(upgrade)
    upgrade.set_defaults(func=cmd_db_upgrade)
    current = db.add_parser("current", help="print the schema's revision; exit 1 unless it is head")
    db_option(current)
    current.set_defaults(func=cmd_db_current)

    export = sub.add_parser("export-schema", help="print the GraphQL SDL")
    export.set_defaults(func=cmd_export_schema)

    assets = sub.add_parser("graphiql-assets", help="fetch GraphiQL's pinned scripts (npm pack) for offline use")
    assets.add_argument("--dir", default=None, help="default: EVIDENCE_GRAPHIQL_ASSETS_DIR or ./.graphiql-assets")
    assets.set_defaults(func=cmd_graphiql_assets)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    from evidence_gateway.migrate import SchemaError
    from evidence_gateway.schema.persisted import TrustedDocumentsError

    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args))
    except (SchemaError, TrustedDocumentsError) as exc:
        # Written for an operator: one line that says what to run, no traceback.
        print(f"error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    raise SystemExit(main())
