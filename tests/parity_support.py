"""What the parity tests share: an app on each database, one scripted scenario that writes every
resource through the public surfaces, GraphQL selections read from the schema itself, and the
normalisation of the documented differences between the transports (and nothing else).

The tests go through HTTP, GraphQL and the command line, and read stored rows with SQLAlchemy
Core ``select()`` on the tables the models declare: never through the store's or the resolvers'
own functions, which may be renamed or merged without the behaviour changing.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import httpx
import pytest
from graphql import GraphQLEnumType, GraphQLObjectType, GraphQLSchema, build_schema, get_named_type, is_leaf_type
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine
from sqlalchemy.pool import NullPool
from sqlmodel import SQLModel
from starlette.applications import Starlette

from evidence_gateway.app import create_app
from evidence_gateway.schema import schema as graphql_schema
from evidence_gateway.settings import Settings
from tests.conftest import PG_AVAILABLE, Api, seed_key

ORG = "parity-org"
DEAD_HOOK = "http://127.0.0.1:9/hook"  # nothing listens: every attempt fails at once, alike


@dataclass
class Running:
    api: Api
    app: Starlette
    url: str  # the database's URL

    @property
    def database(self) -> str:
        return "sqlite" if self.url.startswith("sqlite") else "postgresql"


@asynccontextmanager
async def engine_on(url: str) -> AsyncIterator[AsyncEngine]:
    """An engine of the test's own on the app's database (no pool: nothing stays open), so rows
    are read and written with Core alone, whatever the store's own executors are called."""
    engine = create_async_engine(url, poolclass=NullPool)
    try:
        yield engine
    finally:
        await engine.dispose()


def database_urls(settings: Settings, request: pytest.FixtureRequest) -> dict[str, str]:
    """The test's SQLite file, and the run's PostgreSQL database where it answers: for tests that
    run one script on both and compare (mark them ``parametrize("database_url", ["sqlite"],
    indirect=True)`` so they run once). Call it from a synchronous fixture: the PostgreSQL
    database is made with ``asyncio.run``."""
    urls = {"sqlite": settings.database_url}
    if PG_AVAILABLE:
        urls["postgresql"] = str(request.getfixturevalue("pg_database"))
    return urls


@asynccontextmanager
async def running(settings: Settings) -> AsyncIterator[Running]:
    """An app of its own on ``settings.database_url``, a key of ``ORG``, and on PostgreSQL the
    run's shared database emptied afterwards (as the ``app`` fixture does)."""
    url = settings.database_url
    application = create_app(settings)
    async with application.router.lifespan_context(application):
        try:
            key = await seed_key(application.state.db, ORG)
            transport = httpx.ASGITransport(app=application)
            async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as http:
                yield Running(Api(http, key), application, url)
        finally:
            if not url.startswith("sqlite"):
                # Nothing may hold row locks the TRUNCATE waits for.
                await application.state.dispatcher.stop(0)
                tables = ", ".join(f'"{t.name}"' for t in SQLModel.metadata.sorted_tables)
                async with engine_on(url) as engine, engine.begin() as conn:
                    await conn.execute(text(f"TRUNCATE {tables} CASCADE"))


# ---- GraphQL selections from the schema --------------------------------------------------------


@cache
def sdl() -> GraphQLSchema:
    return build_schema(graphql_schema.as_str())


def leaves(type_name: str) -> str:
    """Every field of the type that needs no argument and is a scalar or enum, plus ``__typename``
    (which the normaliser uses to know the enums): a new field is read without editing a query."""
    gql_type = sdl().get_type(type_name)
    assert isinstance(gql_type, GraphQLObjectType), type_name
    names = [name for name, f in gql_type.fields.items() if is_leaf_type(get_named_type(f.type)) and not f.args]
    return " ".join(["__typename", *names])


@cache
def _enum_fields(type_name: str) -> frozenset[str]:
    gql_type = sdl().get_type(type_name)
    assert isinstance(gql_type, GraphQLObjectType), type_name
    return frozenset(n for n, f in gql_type.fields.items() if isinstance(get_named_type(f.type), GraphQLEnumType))


def snake(name: str) -> str:
    return re.sub(r"(?<!^)([A-Z])", r"_\1", name).lower()


def from_graphql(record: dict[str, Any]) -> dict[str, Any]:
    """A GraphQL object as REST names it: snake_case keys, enum values in lowercase (the two
    documented naming differences); nested objects are left out (each is a record of its own)."""
    enums = _enum_fields(record["__typename"])
    out = {}
    for key, value in record.items():
        if key == "__typename" or key in TYPED_TWINS or isinstance(value, dict | list) and key not in JSON_VALUED:
            continue
        out[snake(key)] = value.lower() if key in enums and isinstance(value, str) else value
    return out


# Typed GraphQL twins of fields REST answers as strings (tests/test_typed_outputs.py compares them
# with their twins); REST has no field of these names.
TYPED_TWINS = {"reportStatus", "emissionBoundary", "kind"}

# GraphQL fields of the JSON scalar (free-form values, compared whole), by their GraphQL names.
JSON_VALUED = {
    "assumptionsSnapshotJson",
    "totalsByModeJson",
    "iso14083Json",
    "rulesTriggeredJson",
    "extractedMetadataJson",
    "data",
    "payload",
    "eventTypes",
}


def from_rest(record: dict[str, Any], nested: Iterable[str] = ()) -> dict[str, Any]:
    """A REST body without the related resources it embeds (each is compared as its own record)."""
    return {k: v for k, v in record.items() if k not in set(nested)}


def unsigned(record: dict[str, Any]) -> dict[str, Any]:
    """A signed download link expires a while after it is made, to the second, and signs its
    expiry: two reads a second apart differ there alone. The link is compared up to its query's
    names."""
    link = record.get("signed_download_url")
    if link:
        record = {**record, "signed_download_url": re.sub(r"=[^&]*", "=…", link)}
    return record


# ---- comparing records -------------------------------------------------------------------------


def spelled(value: Any) -> str:
    """The JSON text of a value: 12 and 12.0, "1" and 1 are different answers."""
    return json.dumps(value, sort_keys=True)


@dataclass
class Views:
    """One resource as each read path shows it: path name -> records."""

    resource: str
    # Fields the canonical (first) path has that a path leaves out on purpose, by path name prefix.
    absent: dict[str, set[str]] = field(default_factory=dict)
    paths: dict[str, list[dict[str, Any]]] = field(default_factory=dict)

    def add(self, path: str, records: Iterable[dict[str, Any] | None]) -> None:
        self.paths.setdefault(path, []).extend(r for r in records if r is not None)

    def problems(self) -> list[str]:
        """Each difference as one line: the field, the two paths and their two spellings."""
        found: list[str] = []
        reference: dict[str, dict[str, tuple[str, Any]]] = {}  # id -> field -> (path, value)
        canonical_keys: set[str] | None = None
        orders: dict[str, tuple[str, list[str]]] = {}  # id -> the first REST path and its key order
        for path, records in self.paths.items():
            if not records:
                found.append(f"{self.resource}: {path} showed nothing")
            for record in records:
                if canonical_keys is None:
                    canonical_keys = set(record)
                allowed = next((v for k, v in self.absent.items() if path.startswith(k)), set())
                missing = canonical_keys - set(record) - allowed
                if missing:
                    found.append(f"{self.resource}: {path} lacks {sorted(missing)}")
                # The same REST model writes its fields in one order (another model, such as the
                # webhook test's outcome, has its own).
                if path.startswith("rest") and not allowed:
                    order = orders.setdefault(str(record["id"]), (path, list(record)))
                    mine, theirs = [k for k in record if k in order[1]], [k for k in order[1] if k in record]
                    if mine != theirs:
                        found.append(f"{self.resource}: {path} orders its fields {mine}, {order[0]} {theirs}")
                seen = reference.setdefault(str(record["id"]), {})
                for key, value in record.items():
                    if key not in seen:
                        seen[key] = (path, value)
                    elif spelled(seen[key][1]) != spelled(value):
                        first, was = seen[key]
                        found.append(f"{self.resource}.{key}: {first} {spelled(was)} != {path} {spelled(value)}")
        return found


# ---- comparing two databases' answers ----------------------------------------------------------

UUID_TEXT = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
INSTANT = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)")
HEX64 = re.compile(r"\b[0-9a-f]{64}\b")
# Values of the moment or of randomness, under any spelling of their key: their presence and
# type are compared, never their value (a key's prefix, a request id, how long an attempt took,
# a file's size: the files name the record ids, and compressed files vary in length with them).
OWN_VALUES = re.compile(
    r"(display_?prefix|request_?id|webhook_?id|duration_?ms|size_?bytes|cursor|end_?cursor|start_?cursor"
    r"|next_?cursor|signature|expires)$",
    re.IGNORECASE,
)


class Anonymiser:
    """Ids become ``<id 1>``, ``<id 2>``… in order of first appearance (so two answers that
    name the same records alike match), instants become their FORMAT (``<instant Z .6>``: the
    zone and the number of fraction digits), SHA-256 digests ``<sha256>``: what two databases must
    answer alike for one script is everything else, and these formats."""

    def __init__(self) -> None:
        self.seen: dict[str, int] = {}

    def _id(self, match: re.Match[str]) -> str:
        return f"<id {self.seen.setdefault(match.group(0), len(self.seen) + 1)}>"

    def text(self, value: str) -> str:
        value = UUID_TEXT.sub(self._id, value)
        value = INSTANT.sub(lambda m: f"<instant {m.group(2)} .{len((m.group(1) or '.')[1:])}>", value)
        value = HEX64.sub("<sha256>", value)
        return re.sub(r"(signature|expires|exp|sig)=[^&\s\"]+", r"\1=<signed>", value)

    def __call__(self, value: Any, key: str = "") -> Any:
        if isinstance(value, dict):
            return {k: self(v, k) for k, v in value.items()}
        if isinstance(value, list):
            return [self(v, key) for v in value]
        if OWN_VALUES.search(key) and value is not None:
            return f"<{type(value).__name__}>"
        if isinstance(value, str):
            return self.text(value)
        return value


def first_difference(a: Any, b: Any, where: str = "") -> str | None:
    """Where two answers part, as a path and the two spellings (keys in another order too: the
    order of an object's keys is part of how it is written)."""
    if isinstance(a, dict) and isinstance(b, dict):
        for k in list(a) + [k for k in b if k not in a]:
            if k not in a or k not in b:
                return f"{where}.{k}: only in {'first' if k in a else 'second'}"
            found = first_difference(a[k], b[k], f"{where}.{k}")
            if found:
                return found
        return None if list(a) == list(b) else f"{where}: keys in the order {list(a)} != {list(b)}"
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return f"{where}: {len(a)} items != {len(b)} items"
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            found = first_difference(x, y, f"{where}[{i}]")
            if found:
                return found
        return None
    return None if spelled(a) == spelled(b) else f"{where}: {spelled(a)} != {spelled(b)}"
