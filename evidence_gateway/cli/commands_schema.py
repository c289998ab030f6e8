"""The GraphQL schema's text, and the offline files of GraphiQL and the REST reference."""

from __future__ import annotations

import argparse
import sys

from evidence_gateway.cli.arguments import CliError
from evidence_gateway.schema import schema
from evidence_gateway.settings import get_settings
from evidence_gateway.web import api_docs, graphiql


def export_schema(_args: argparse.Namespace) -> int:
    sys.stdout.write(schema.as_str() + "\n")
    return 0


def graphiql_assets(args: argparse.Namespace) -> int:
    directory = graphiql.assets_dir(get_settings(), args.dir)
    try:
        stored = graphiql.fetch_assets(directory, log=lambda line: print(line, file=sys.stderr))
    except graphiql.AssetError as exc:
        raise CliError(str(exc)) from None
    print(f"stored {len(stored)} verified GraphiQL files in {directory.resolve()}")
    return 0


def api_docs_assets(args: argparse.Namespace) -> int:
    directory = api_docs.assets_dir(get_settings(), args.dir)
    try:
        stored = graphiql.fetch_assets(directory, lambda line: print(line, file=sys.stderr), api_docs.PACKAGES)
    except graphiql.AssetError as exc:
        raise CliError(str(exc)) from None
    print(f"stored {len(stored)} verified REST reference file(s) in {directory.resolve()}")
    return 0
