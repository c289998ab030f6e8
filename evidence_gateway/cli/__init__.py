"""``evidence-gateway`` command line (a contract: scripts and docs rely on it)."""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import signal
import sys
from collections.abc import Awaitable, Callable, Sequence
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from evidence_gateway.auth import Scope
from evidence_gateway.cli import verify
from evidence_gateway.cli.support import (
    CliError,
    HelpFormatter,
    checked_database_url,
    duration,
    instant,
    key_table,
    one_line,
    progress,
)
from evidence_gateway.core import instance_secrets, wakeups
from evidence_gateway.core.timeutil import utcnow
from evidence_gateway.errors import DomainError, InvalidInput
from evidence_gateway.resolvers import keys, organizations
from evidence_gateway.resolvers.keys import DEFAULT_SCOPE
from evidence_gateway.resolvers.legacy import import_legacy_reports
from evidence_gateway.resolvers.webhooks import signing_secret
from evidence_gateway.schema import schema
from evidence_gateway.schema.persisted import TrustedDocumentsError, load_trusted
from evidence_gateway.settings import DEFAULT_DATABASE_URL, get_settings
from evidence_gateway.store import backup, migrate
from evidence_gateway.store.db import Database
from evidence_gateway.store.migrate import SchemaError
from evidence_gateway.web import graphiql, serving
from evidence_gateway.web.connections import GuardedHttpToolsProtocol
from evidence_gateway.web.observability import logs, metrics, multiproc
from evidence_gateway.webhooks.dispatcher import Dispatcher
from evidence_gateway.worker import Worker

DEMO_ORG = "demo"
log = logging.getLogger(__name__)


def _with_db(args: argparse.Namespace) -> Database:
    url = args.database_url or get_settings().database_url
    return Database(checked_database_url(url))


async def _prepared(
    args: argparse.Namespace, work: Callable[[Database], Awaitable[Any]], *, allow_migrate: bool | None = None
) -> Any:
    """Run ``work`` once the schema is fit: SQLite is upgraded, PostgreSQL must be at head
    unless ``allow_migrate`` (None: EVIDENCE_MIGRATE) allows upgrading it, like ``serve``."""
    db = _with_db(args)
    try:
        await migrate.prepare(db, migrate=allow_migrate)
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
    # JSON lines on stderr from here on, in this process and (log_config below) in every worker.
    logs.configure(args.log_level)
    if args.database_url:
        os.environ["EVIDENCE_DATABASE_URL"] = args.database_url
    if "EVIDENCE_PUBLIC_BASE_URL" not in os.environ:
        # Links (signed downloads, file_url) must point at where this server listens.
        host = "127.0.0.1" if args.host in ("0.0.0.0", "::", "") else args.host
        os.environ["EVIDENCE_PUBLIC_BASE_URL"] = f"http://{host}:{args.port}"
    # The app knows where it listens: /metrics needs its token unless that is loopback alone.
    os.environ["EVIDENCE_LISTEN_HOST"] = args.host
    get_settings.cache_clear()
    settings = get_settings()
    if settings.metrics and not settings.metrics_token and not metrics.loopback_only(args.host):
        log.warning("GET /metrics answers 401 on %s: set EVIDENCE_METRICS_TOKEN to scrape it", args.host)
    if get_settings().graphql_trusted_documents:
        load_trusted(get_settings().graphql_trusted_documents)  # a wrong file stops here, in one line

    async def demo_key(db: Database) -> str | None:
        if await organizations.organization_count(db):
            return None
        return await organizations.create_api_key(db, DEMO_ORG)

    # Migrate here, once, before any worker exists; a refusal ends serve (main prints it).
    key = asyncio.run(_prepared(args, demo_key, allow_migrate=args.migrate or get_settings().migrate))
    # The schema is at head now: workers (and this process's app) only check it.
    os.environ["EVIDENCE_MIGRATE"] = "false"
    if args.no_dispatcher:
        os.environ["EVIDENCE_DISPATCHER"] = "false"
    if args.workers > 1:
        # Every worker process writes its metric samples where any of them can read all (/metrics).
        multiproc.prepare(os.environ)
    get_settings.cache_clear()
    settings = get_settings()
    if key:
        print(f"Created organisation '{DEMO_ORG}'. Its API key (shown once):\n{key}", flush=True)
    # uvicorn, with a shutdown that answers every request already received (serving.py).
    serving.run(
        "evidence_gateway.app:create_app",
        factory=True,
        host=args.host,
        port=args.port,
        workers=args.workers,
        log_level=args.log_level,
        log_config=logs.dict_config(args.log_level),
        # One JSON access line per request comes from observability/access.py instead; uvicorn's
        # own would print query strings, signed download links' signatures included.
        access_log=False,
        server_header=False,  # no "server: uvicorn" banner
        # A WebSocket message is held to the HTTP body ceiling by the server itself (1009 above it),
        # so no larger one is ever buffered (uvicorn's default is 16 MiB); the app checks it too.
        ws_max_size=settings.max_body_bytes,
        timeout_graceful_shutdown=args.graceful_timeout,
        timeout_worker_healthcheck=serving.WORKER_HEALTHCHECK_SECONDS,
        # Forwarding headers are read by the app, from EVIDENCE_TRUSTED_PROXIES only (proxies.py):
        # uvicorn's own reading trusts any loopback peer, so anything on the host could pose as any client.
        proxy_headers=False,
        forwarded_allow_ips="",
        # Slow clients (docs/operations.md): the header deadline and the per-address cap are in
        # the protocol (connections.py), the body deadline in the app (http_body.py).
        http=GuardedHttpToolsProtocol,
        timeout_keep_alive=settings.keep_alive_seconds,
        # uvicorn answers 503 once it holds this many, the asking connection included.
        limit_concurrency=settings.max_connections + 1,
    )
    return 0


def cmd_worker(args: argparse.Namespace) -> int:
    """Background work without HTTP: the webhook dispatcher, the sweeper and the queue of
    respond-async work, until SIGTERM or SIGINT. Pair it with ``serve --no-dispatcher``."""
    if args.database_url:
        os.environ["EVIDENCE_DATABASE_URL"] = args.database_url
    get_settings.cache_clear()
    settings = get_settings()
    logs.configure()

    async def run(db: Database) -> None:
        # Events of work done here carry signed download links, signed as the API nodes sign them.
        settings.secret_key = await instance_secrets.signing_key(db, settings)
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
    print(asyncio.run(_on_db(args, migrate.upgrade)))
    return 0


def cmd_db_downgrade(args: argparse.Namespace) -> int:
    """Prints what was undone; the older release's code is what should run on the result."""
    done: migrate.Downgrade = asyncio.run(_on_db(args, lambda db: migrate.downgrade(db, args.revision)))
    print(done.describe())
    return 0


def cmd_db_current(args: argparse.Namespace) -> int:
    """Exit 0 only at head, so ``db current || db upgrade`` reads as intended."""
    found: migrate.Status = asyncio.run(_on_db(args, migrate.status))
    print(found.describe())
    return 0 if found.state is migrate.State.CURRENT else 1


def cmd_keys_create(args: argparse.Namespace) -> int:
    """Prints the key alone on stdout (scripts capture it); it is not stored, so not shown again."""
    options: dict[str, Any] = {"scope": args.scope, "name": args.name}
    if args.expires_in is not None:
        options["expires_at"] = utcnow() + args.expires_in
    elif args.expires_at is not None:
        options["expires_at"] = args.expires_at
    key = asyncio.run(_prepared(args, lambda db: organizations.create_api_key(db, args.org, **options)))
    print(key)
    return 0


def cmd_keys_list(args: argparse.Namespace) -> int:
    rows = asyncio.run(_prepared(args, lambda db: keys.list_for_org(db, args.org)))
    sys.stdout.write(key_table(rows))
    return 0


def cmd_keys_revoke(args: argparse.Namespace) -> int:
    key = asyncio.run(_prepared(args, lambda db: keys.revoke_by_reference(db, args.key, args.org)))
    window = get_settings().auth_cache_seconds
    print(
        f"revoked {key.display_prefix} ({key.id}); every node refuses it within {window:g} s "
        "(EVIDENCE_AUTH_CACHE_SECONDS)"
    )
    return 0


def cmd_legacy_import(args: argparse.Namespace) -> int:
    """Prints the stored ids one a line; a bad file or record imports nothing and exits 1."""
    try:
        with open(args.file, encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CliError(f"cannot read {args.file}: {exc}") from None
    with progress("importing legacy reports", finishing="committing the import") as advance:
        ids = asyncio.run(
            _prepared(
                args,
                lambda db: import_legacy_reports(db, args.org, data, create_org=args.create_org, progress=advance),
            )
        )
    sys.stdout.write("".join(f"{i}\n" for i in ids))
    return 0


def cmd_webhooks_secret(args: argparse.Namespace) -> int:
    """Prints the organisation's webhook signing secret; --rotate replaces it first."""
    print(asyncio.run(_prepared(args, lambda db: signing_secret(db, args.org, rotate=args.rotate))))
    return 0


def cmd_db_backup(args: argparse.Namespace) -> int:
    """SQLite's online backup: a consistent copy while the server runs."""
    url = args.database_url or get_settings().database_url
    with progress("backing up") as advance:
        pages = backup.sqlite_backup(url, args.file, progress=advance)
    print(f"backed up {pages} pages to {args.file}")
    return 0


def cmd_export_schema(_args: argparse.Namespace) -> int:
    sys.stdout.write(schema.as_str() + "\n")
    return 0


def cmd_graphiql_assets(args: argparse.Namespace) -> int:
    directory = graphiql.assets_dir(get_settings(), args.dir)
    try:
        stored = graphiql.fetch_assets(directory, log=lambda line: print(line, file=sys.stderr))
    except graphiql.AssetError as exc:
        raise CliError(str(exc)) from None
    print(f"stored {len(stored)} verified GraphiQL files in {directory.resolve()}")
    return 0


def _version() -> str:
    try:
        return version("evidence-gateway")
    except PackageNotFoundError:
        return "unknown (not installed)"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="evidence-gateway", description=__doc__, formatter_class=HelpFormatter)
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def command(group: Any, name: str, about: str) -> argparse.ArgumentParser:
        made: argparse.ArgumentParser = group.add_parser(
            name, help=about, description=about, formatter_class=HelpFormatter
        )
        return made

    def db_option(p: argparse.ArgumentParser) -> None:
        p.add_argument(
            "--database-url",
            default=None,
            metavar="URL",
            help=f"sqlite:///PATH or postgresql://USER@HOST/DB (default: EVIDENCE_DATABASE_URL, "
            f"else {DEFAULT_DATABASE_URL})",
        )

    def org_option(p: argparse.ArgumentParser, about: str = "the organisation's name") -> None:
        p.add_argument("--org", required=True, metavar="NAME", help=about)

    serve = command(sub, "serve", "run the API with uvicorn")
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on")
    serve.add_argument("--port", type=int, default=8000, help="TCP port to listen on")
    serve.add_argument(
        "--workers",
        type=int,
        default=1,
        metavar="N",
        help="uvicorn worker processes (more than 1: PostgreSQL, or SQLite with care)",
    )
    serve.add_argument("--log-level", default="info", help="uvicorn's log level (debug, info, warning, error)")
    serve.add_argument(
        "--migrate",
        action="store_true",
        help="PostgreSQL: upgrade the schema before starting (one node only; also EVIDENCE_MIGRATE=true)",
    )
    serve.add_argument(
        "--graceful-timeout",
        type=int,
        default=30,
        metavar="SECONDS",
        help="on shutdown, wait this long for requests in flight before closing them",
    )
    serve.add_argument(
        "--no-dispatcher",
        action="store_true",
        help="do not deliver webhooks from this process (run `evidence-gateway worker` instead)",
    )
    db_option(serve)
    serve.set_defaults(func=cmd_serve)

    worker = command(sub, "worker", "run webhook delivery and background work without HTTP")
    db_option(worker)
    worker.set_defaults(func=cmd_worker)

    keys = command(sub, "keys", "API keys: create, list, revoke").add_subparsers(
        dest="keys_command", required=True, metavar="COMMAND"
    )
    create = command(keys, "create", "create an API key (and the organisation if new); prints the key alone")
    org_option(create, "the organisation's name (created if new)")
    create.add_argument(
        "--scope",
        choices=[s.value for s in Scope],
        default=DEFAULT_SCOPE.value,
        help="read: no changes; write: data; admin: also webhook secrets, endpoints and keys",
    )
    create.add_argument("--name", default=None, help="a label for people, shown by `keys list`")
    expiry = create.add_mutually_exclusive_group()
    expiry.add_argument(
        "--expires-in", type=duration, default=None, metavar="DURATION", help="e.g. 90d, 12h, 30m (default: never)"
    )
    expiry.add_argument(
        "--expires-at",
        type=instant,
        default=None,
        metavar="WHEN",
        help="ISO 8601, UTC unless a zone is given, e.g. 2027-01-31T18:00Z (default: never)",
    )
    db_option(create)
    create.set_defaults(func=cmd_keys_create)
    listing = command(keys, "list", "list an organisation's keys: prefix, name, scope, dates (never the key)")
    org_option(listing)
    db_option(listing)
    listing.set_defaults(func=cmd_keys_list)
    revoke = command(keys, "revoke", "revoke a key (every node refuses it within EVIDENCE_AUTH_CACHE_SECONDS)")
    revoke.add_argument(
        "key",
        metavar="PREFIX_OR_ID",
        help="the key's prefix (evk_1a2b3c) or id, from `keys list`, or the key_prefix of a log line (1a2b3c4d)",
    )
    revoke.add_argument("--org", default=None, metavar="NAME", help="only look among this organisation's keys")
    db_option(revoke)
    revoke.set_defaults(func=cmd_keys_revoke)

    legacy = command(sub, "legacy", "legacy v1 reports").add_subparsers(
        dest="legacy_command", required=True, metavar="COMMAND"
    )
    legacy_import = command(legacy, "import", "load legacy v1 report records (JSON array) for an organisation")
    legacy_import.add_argument("file", metavar="FILE.json", help="a JSON array of v1 report records")
    org_option(legacy_import, "the organisation's name; it must exist unless --create-org")
    legacy_import.add_argument("--create-org", action="store_true", help="create the organisation if it is new")
    db_option(legacy_import)
    legacy_import.set_defaults(func=cmd_legacy_import)

    webhooks = command(sub, "webhooks", "outgoing webhooks").add_subparsers(
        dest="webhooks_command", required=True, metavar="COMMAND"
    )
    secret = command(webhooks, "secret", "print an organisation's webhook signing secret")
    org_option(secret)
    secret.add_argument("--rotate", action="store_true", help="replace the secret with a new one, then print it")
    db_option(secret)
    secret.set_defaults(func=cmd_webhooks_secret)

    db = command(sub, "db", "the database: schema upgrades, backups").add_subparsers(
        dest="db_command", required=True, metavar="COMMAND"
    )
    upgrade = command(db, "upgrade", "upgrade the schema to this version's head; print the revision")
    db_option(upgrade)
    upgrade.set_defaults(func=cmd_db_upgrade)
    downgrade = command(
        db, "downgrade", "take the schema back to an earlier revision (base: no tables); print what was undone"
    )
    downgrade.add_argument(
        "revision", metavar="REVISION", help="the revision to go back to, e.g. 0007_keyset_indexes, or base"
    )
    db_option(downgrade)
    downgrade.set_defaults(func=cmd_db_downgrade)
    current = command(db, "current", "print the schema's revision; exit 1 unless it is head")
    db_option(current)
    current.set_defaults(func=cmd_db_current)
    backup = command(db, "backup", "copy a SQLite database while it runs (PostgreSQL: use pg_dump)")
    backup.add_argument("file", metavar="FILE", help="where to write the copy (must not exist; written mode 0600)")
    db_option(backup)
    backup.set_defaults(func=cmd_db_backup)

    export = command(sub, "export-schema", "print the GraphQL SDL")
    export.set_defaults(func=cmd_export_schema)

    assets = command(sub, "graphiql-assets", "fetch GraphiQL's pinned scripts (npm pack) for offline use")
    assets.add_argument("--dir", default=None, help="default: EVIDENCE_GRAPHIQL_ASSETS_DIR, else ./.graphiql-assets")
    assets.set_defaults(func=cmd_graphiql_assets)

    verify.register(sub, command, db_option)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Every failure the user can act on is one ``error:`` line on stderr and exit 1; a
    traceback would bury the one thing to fix."""
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args))
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except (SchemaError, CliError, TrustedDocumentsError, backup.BackupError) as exc:
        print(f"error: {exc}", file=sys.stderr)
    except InvalidInput as exc:
        where = "; ".join(f"{k}: {v}" for k, v in list(exc.fields.items())[:5])
        more = f" (and {len(exc.fields) - 5} more)" if len(exc.fields) > 5 else ""
        print(f"error: {exc.message}: {where}{more}; nothing changed", file=sys.stderr)
    except DomainError as exc:
        print(f"error: {exc.message}", file=sys.stderr)
    except Exception as exc:
        print(f"error: {one_line(exc)}", file=sys.stderr)
    return 1


if __name__ == "__main__":
    raise SystemExit(main())
