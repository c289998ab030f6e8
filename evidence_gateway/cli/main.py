"""The parser of the ``evidence-gateway`` command and its entry point.

Building the parser imports nothing beyond the standard library: ``--help`` and ``--version``
answer at once. A command's module (and with it the app, SQLAlchemy, Strawberry) is imported
only when that command runs (``_commands``).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from types import ModuleType
from typing import Any

from evidence_gateway.cli import version
from evidence_gateway.cli.arguments import HelpFormatter, duration, instant

DESCRIPTION = "Evidence Gateway: the GraphQL and REST API for transport-emissions evidence, and its operations."
EPILOG = (
    "`evidence-gateway COMMAND --help` lists a command's options. Settings come from EVIDENCE_* "
    "environment variables, then a .env file in the working directory (README, Configuration)."
)
# auth.Scope's values, narrowest first (tests/test_cli_help.py keeps them equal).
SCOPES = ("read", "write", "admin")


def _commands(family: str) -> ModuleType:
    """The module of one family of commands, imported when one of them runs."""
    if family == "serve":
        from evidence_gateway.cli import commands_serve

        return commands_serve
    if family == "db":
        from evidence_gateway.cli import commands_db

        return commands_db
    if family == "org":
        from evidence_gateway.cli import commands_org

        return commands_org
    if family == "verify":
        from evidence_gateway.cli import commands_verify

        return commands_verify
    from evidence_gateway.cli import commands_schema

    return commands_schema


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="evidence-gateway", description=DESCRIPTION, epilog=EPILOG, formatter_class=HelpFormatter
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {version.describe()}")
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
            help="sqlite:///PATH or postgresql://USER@HOST/DB (default: EVIDENCE_DATABASE_URL, "
            "else SQLite in ./evidence.db)",
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
        help="do not deliver webhooks nor PACT answers from this process (run `evidence-gateway worker` instead)",
    )
    db_option(serve)
    serve.set_defaults(run=("serve", "serve"))

    worker = command(sub, "worker", "run webhook delivery, PACT answers and background work without HTTP")
    db_option(worker)
    worker.set_defaults(run=("serve", "worker"))

    keys = command(sub, "keys", "API keys: create, list, revoke").add_subparsers(
        dest="keys_command", required=True, metavar="COMMAND"
    )
    create = command(keys, "create", "create an API key (and the organisation if new); prints the key alone")
    org_option(create, "the organisation's name (created if new)")
    create.add_argument(
        "--scope",
        choices=SCOPES,
        default="admin",
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
    create.set_defaults(run=("org", "keys_create"))
    listing = command(keys, "list", "list an organisation's keys: prefix, name, scope, dates (never the key)")
    org_option(listing)
    db_option(listing)
    listing.set_defaults(run=("org", "keys_list"))
    revoke = command(keys, "revoke", "revoke a key (every node refuses it within EVIDENCE_AUTH_CACHE_SECONDS)")
    revoke.add_argument(
        "key",
        metavar="PREFIX_OR_ID",
        help="the key's prefix (evk_1a2b3c) or id, from `keys list`, or the key_prefix of a log line (1a2b3c4d)",
    )
    revoke.add_argument("--org", default=None, metavar="NAME", help="only look among this organisation's keys")
    db_option(revoke)
    revoke.set_defaults(run=("org", "keys_revoke"))

    recipients = command(
        sub, "recipients", "data recipients of PACT / iLEAP sharing: create, list, revoke, publish, withdraw, host"
    ).add_subparsers(dest="recipients_command", required=True, metavar="COMMAND")
    made = command(
        recipients, "create", "create a data recipient; prints its client id and secret on one line (shown once)"
    )
    org_option(made, "the publishing organisation's name")
    made.add_argument("--name", required=True, help="the customer's name")
    db_option(made)
    made.set_defaults(run=("org", "recipients_create"))
    shown = command(recipients, "list", "list an organisation's recipients: id, client id, name, dates (no secret)")
    org_option(shown)
    db_option(shown)
    shown.set_defaults(run=("org", "recipients_list"))
    ended = command(recipients, "revoke", "revoke a recipient's credentials and the tokens issued to it")
    ended.add_argument("recipient", metavar="RECIPIENT_ID", help="the recipient's id, from `recipients list`")
    org_option(ended)
    db_option(ended)
    ended.set_defaults(run=("org", "recipients_revoke"))
    shared = command(recipients, "publish", "share a pack with a recipient; prints the publication's id")
    org_option(shared)
    shared.add_argument("--recipient", required=True, metavar="RECIPIENT_ID", help="the recipient's id")
    shared.add_argument("--pack", required=True, metavar="PACK_ID", help="the pack's id")
    db_option(shared)
    shared.set_defaults(run=("org", "recipients_publish"))
    taken = command(recipients, "withdraw", "withdraw a publication: the pack is gone for its recipient")
    taken.add_argument("publication", metavar="PUBLICATION_ID", help="from `recipients publish` or `publications`")
    org_option(taken)
    db_option(taken)
    taken.set_defaults(run=("org", "recipients_withdraw"))
    listed = command(recipients, "publications", "list an organisation's publications, withdrawn ones too")
    org_option(listed)
    listed.add_argument("--recipient", default=None, metavar="RECIPIENT_ID", help="only this recipient's")
    db_option(listed)
    listed.set_defaults(run=("org", "recipients_publications"))
    hosted = command(
        recipients,
        "host",
        "set (or --clear) the recipient's own PACT host, where answers to its requests go; the client secret "
        "is read from standard input, never from the command line",
    )
    hosted.add_argument("recipient", metavar="RECIPIENT_ID", help="the recipient's id, from `recipients list`")
    org_option(hosted)
    hosted.add_argument("--url", default=None, help="the host's base URL (its /2/events, /auth/token below it)")
    hosted.add_argument("--client-id", default=None, help="the client id the recipient's host issued to you")
    hosted.add_argument(
        "--pact-version", choices=("2", "3"), default="3", help="the PACT major the host speaks (Published notices)"
    )
    hosted.add_argument("--clear", action="store_true", help="forget the host and its credentials")
    db_option(hosted)
    hosted.set_defaults(run=("org", "recipients_host"))

    legacy = command(sub, "legacy", "legacy v1 reports").add_subparsers(
        dest="legacy_command", required=True, metavar="COMMAND"
    )
    legacy_import = command(legacy, "import", "load legacy v1 report records (JSON array) for an organisation")
    legacy_import.add_argument("file", metavar="FILE.json", help="a JSON array of v1 report records")
    org_option(legacy_import, "the organisation's name; it must exist unless --create-org")
    legacy_import.add_argument("--create-org", action="store_true", help="create the organisation if it is new")
    db_option(legacy_import)
    legacy_import.set_defaults(run=("org", "legacy_import"))

    webhooks = command(sub, "webhooks", "outgoing webhooks").add_subparsers(
        dest="webhooks_command", required=True, metavar="COMMAND"
    )
    secret = command(webhooks, "secret", "print an organisation's webhook signing secret")
    org_option(secret)
    secret.add_argument("--rotate", action="store_true", help="replace the secret with a new one, then print it")
    db_option(secret)
    secret.set_defaults(run=("org", "webhooks_secret"))

    db = command(sub, "db", "the database: schema upgrades, backups").add_subparsers(
        dest="db_command", required=True, metavar="COMMAND"
    )
    upgrade = command(db, "upgrade", "upgrade the schema to this version's head; print the revision")
    db_option(upgrade)
    upgrade.set_defaults(run=("db", "upgrade"))
    downgrade = command(
        db, "downgrade", "take the schema back to an earlier revision (base: no tables); print what was undone"
    )
    downgrade.add_argument(
        "revision", metavar="REVISION", help="the revision to go back to, e.g. 0007_keyset_indexes, or base"
    )
    db_option(downgrade)
    downgrade.set_defaults(run=("db", "downgrade"))
    current = command(db, "current", "print the schema's revision; exit 1 unless it is head")
    db_option(current)
    current.set_defaults(run=("db", "current"))
    backup = command(db, "backup", "copy a SQLite database while it runs (PostgreSQL: use pg_dump)")
    backup.add_argument("file", metavar="FILE", help="where to write the copy (must not exist; written mode 0600)")
    db_option(backup)
    backup.set_defaults(run=("db", "backup"))

    export = command(sub, "export-schema", "print the GraphQL SDL")
    export.set_defaults(run=("schema", "export_schema"))

    assets = command(sub, "graphiql-assets", "fetch GraphiQL's pinned scripts (npm pack) for offline use")
    assets.add_argument("--dir", default=None, help="default: EVIDENCE_GRAPHIQL_ASSETS_DIR, else ./.graphiql-assets")
    assets.set_defaults(run=("schema", "graphiql_assets"))

    docs = command(sub, "api-docs-assets", "fetch Redoc's pinned script (npm pack) for the REST reference at /api/docs")
    docs.add_argument("--dir", default=None, help="default: EVIDENCE_API_DOCS_ASSETS_DIR, else ./.api-docs-assets")
    docs.set_defaults(run=("schema", "api_docs_assets"))

    key_help = "trust only this verifier key (<name>+<hash>+<base64>, from /.well-known/evidence-keys); repeatable"
    verify = command(sub, "verify", "check a pack's bundle offline: files, seal, pack_hash, log inclusion")
    verify.add_argument("bundle", metavar="BUNDLE.zip", help="the zip from GET /api/v2/packs/{id}/bundle")
    verify.add_argument("--key", action="append", metavar="VKEY", help=key_help)
    verify.add_argument(
        "--tsa-ca",
        metavar="CA.pem",
        help="PEM root certificates (and intermediates) every time-stamp's authority must chain to, each"
        " certificate valid at the stamped time (e.g. the bundle's tsa-chain.pem); revocation is not checked",
    )
    verify.set_defaults(run=("verify", "verify"))
    log = command(sub, "log", "the transparency log")
    actions = log.add_subparsers(dest="log_command", required=True, metavar="ACTION")
    about = "re-check the stored log against events, packs and approvals; exit 1 on a mismatch"
    check = command(actions, "verify", about)
    check.add_argument("--key", action="append", metavar="VKEY", help=key_help)
    db_option(check)
    check.set_defaults(run=("verify", "log_verify"))
    rotate = command(actions, "rotate-key", "sign with a new generated key from now on; print its key id")
    db_option(rotate)
    rotate.set_defaults(run=("verify", "log_rotate_key"))
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Every failure the user can act on is one ``error:`` line on stderr and exit 1."""
    args = build_parser().parse_args(argv)
    family, name = args.run
    try:
        return int(getattr(_commands(family), name)(args))
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except Exception as exc:
        from evidence_gateway.cli.errors import describe

        print(f"error: {describe(exc)}", file=sys.stderr)
    return 1
