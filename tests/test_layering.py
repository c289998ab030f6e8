"""The package's layering, read from the import graph (tests/import_graph.py).

A new import circle, a new function-level import or a transport leaning on the other fails
here, naming the modules. Deferred imports are allowed only where loading later saves a
stated cost; each entry of the allow-list says which.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.import_graph import PACKAGE, ImportGraph, build, room

P = PACKAGE + "."

# (importer, imported) -> why it is imported inside a function rather than at load.
DEFERRED_ALLOWED: dict[tuple[str, str], str] = {
    # Optional dependency: the 'otel' extra may be absent; tracing then logs once and stays off.
    **{
        (P + "web.observability.tracing", module): "optional dependency (the 'otel' extra)"
        for module in (
            "opentelemetry",
            "opentelemetry.instrumentation.asgi",
            "opentelemetry.util.http",
            "opentelemetry.sdk.resources",
            "opentelemetry.sdk.trace",
            "opentelemetry.sdk.trace.export",
            "opentelemetry.exporter.otlp.proto.http.trace_exporter",
            # Our modules that import OpenTelemetry at load.
            P + "web.observability.trace_scrub",
            P + "store.trace_sql",
        )
    },
    (P + "web.observability.graphql", P + "web.observability.graphql_tracing"): (
        "optional dependency (the 'otel' extra)"
    ),
    # The renderers load with the first pack, not with the app: reportlab (with Pillow) and
    # xlsxwriter, about 13 MB resident, and the others' 0.3 MB. One statement in specs() imports
    # them all; the import graph names it by one of them.
    (P + "artifacts", P + "artifacts.ileap"): "the renderers at the first pack (issue 29)",
    # SQLAlchemy's PostgreSQL dialect loads every PostgreSQL driver's module (about 2 MB resident):
    # a server on SQLite never needs it (issue 29).
    **{
        (P + "store.dialect_insert", module): "the PostgreSQL dialect on PostgreSQL only (issue 29)"
        for module in ("sqlalchemy.dialects.sqlite", "sqlalchemy.dialects.postgresql")
    },
    (P + "resolvers.seals", P + "resolvers.timestamps"): (
        "asn1crypto and cryptography's X.509 (about 5 MB resident) with a time-stamp authority only (issue 29)"
    ),
    # Alembic (about 10 MB resident) loads only when an existing schema changes: serving a
    # database at head reads the revision files as text and the version row directly, and an
    # empty one is built from the models and its head recorded without it (issue 29).
    **{
        (P + "store.migrate", module): "alembic only when the schema changes (issue 29)"
        for module in (
            "alembic",
            "alembic.config",
            "alembic.script",
            "alembic.script.revision",
        )
    },
    # rich (about 3 MB resident) draws the progress bars of commands run at a terminal; ``serve``
    # imports the same support module and draws none.
    **{
        (P + "cli.support", module): "rich only for a progress bar at a terminal"
        for module in ("rich.console", "rich.progress")
    },
    # The command line builds its parser from the standard library alone and loads a command's
    # module (the app, SQLAlchemy, Strawberry: about 3 s) only when that command runs.
    **{
        (P + "cli.main", P + "cli." + module): "fast --help/--version (issue 31)"
        for module in ("commands_serve", "commands_db", "commands_org", "commands_schema", "commands_verify", "errors")
    },
    # httpx (about 5 MB resident) loads with the first outgoing request: a webhook, a PACT event
    # to a recipient's host, a time-stamp; a target URL's check parses it too (issue 29).
    **{
        (P + module, "httpx"): "httpx at the first outgoing request (issue 29)"
        for module in ("exchange.outbound", "resolvers.timestamps", "webhooks.guard", "webhooks.sender")
    },
    # tarfile (about 0.3 MB) unpacks the pinned GraphiQL packages for `graphiql fetch` only.
    (P + "web.graphiql", "tarfile"): "tarfile only for `graphiql fetch` (issue 29)",
    # asyncpg (about 3 MB resident) on PostgreSQL only; SQLAlchemy's dialect loads it there first.
    (P + "store.db", "asyncpg"): "asyncpg on PostgreSQL only (issue 29)",
    (P + "store.notifications", "asyncpg"): "asyncpg on PostgreSQL only (issue 29)",
    # cryptography (about 7 MB resident): PACT's RS256 tokens and a supplied PEM signing key only;
    # Ed25519 signatures are PyNaCl's (proofs/notes.py).
    **{
        (P + importer, "cryptography." + module): "cryptography for RS256 tokens and PEM keys only (issue 29)"
        for importer, modules in (
            ("core.evidence_keys", ("exceptions",)),
            ("exchange.auth", ("exceptions", "hazmat.primitives", "hazmat.primitives.asymmetric")),
            ("proofs.notes", ("hazmat.primitives", "hazmat.primitives.asymmetric.ed25519")),
        )
        for module in modules
    },
}

# Circles that function-level imports still hold apart; each must shrink to nothing.
HIDDEN_CIRCLES_ALLOWED: list[list[str]] = []

# The rooms beneath the transports: they serve both and know neither, nor the HTTP stack.
TRANSPORT_FREE = ("resolvers", "models", "calculation", "artifacts")
TRANSPORTS = ("schema", "rest_compat")


@pytest.fixture(scope="module")
def graph() -> ImportGraph:
    return build()


def _short(module: str) -> str:
    return module.removeprefix(P)


def test_no_module_imports_itself_round_a_circle(graph: ImportGraph) -> None:
    circles = [" <-> ".join(map(_short, c)) for c in graph.circles()]
    assert circles == [], f"import circles at load: {circles}"


def test_function_level_imports_hide_no_new_circle(graph: ImportGraph) -> None:
    hidden = graph.circles(with_deferred=True)
    assert [c for c in hidden if c not in HIDDEN_CIRCLES_ALLOWED] == []
    stale = [c for c in HIDDEN_CIRCLES_ALLOWED if c not in hidden]
    assert stale == [], f"these circles are gone: remove them from HIDDEN_CIRCLES_ALLOWED: {stale}"


def test_function_level_imports_only_where_a_cost_is_saved(graph: ImportGraph) -> None:
    found = {(d.importer, d.imported) for d in graph.deferred}
    unexplained = sorted(
        f"{_short(d.importer)}:{d.line} imports {_short(d.imported)}"
        for d in graph.deferred
        if (d.importer, d.imported) not in DEFERRED_ALLOWED
    )
    assert unexplained == [], (
        "import these at the top of the module (or add them to DEFERRED_ALLOWED with the cost "
        f"that deferring saves): {unexplained}"
    )
    stale = sorted(f"{_short(i)} imports {_short(m)}" for i, m in DEFERRED_ALLOWED if (i, m) not in found)
    assert stale == [], f"no longer deferred: remove from DEFERRED_ALLOWED: {stale}"


@pytest.mark.parametrize(("one", "other"), [TRANSPORTS, TRANSPORTS[::-1]])
def test_the_transports_are_siblings(graph: ImportGraph, one: str, other: str) -> None:
    """GraphQL and REST share resolvers and the JSON response (json_response.py), never each other."""
    leaning = sorted(
        f"{_short(importer)} -> {_short(target)}"
        for edges in (graph.edges, graph.deferred_edges)
        for importer, targets in edges.items()
        for target in targets
        if room(importer) == one and room(target) == other
    )
    assert leaning == []


@pytest.mark.parametrize("lower", TRANSPORT_FREE)
def test_rooms_below_the_transports_do_not_import_them(graph: ImportGraph, lower: str) -> None:
    upward = sorted(
        f"{_short(importer)} -> {_short(target)}"
        for edges in (graph.edges, graph.deferred_edges)
        for importer, targets in edges.items()
        for target in targets
        if room(importer) == lower and (room(target) in (*TRANSPORTS, "app", "cli") or target == P + "web.graphiql")
    )
    frameworks = sorted(
        f"{_short(module)} imports {name}"
        for module, names in graph.external.items()
        for name in names & {"strawberry", "starlette", "graphql"}
        if room(module) == lower
    )
    assert upward == [] and frameworks == []


def test_the_graph_sees_what_python_sees(graph: ImportGraph) -> None:
    """A guard on the reader itself: known arrows are found, type-only imports are not."""
    assert P + "resolvers.keys" in graph.edges[P + "resolvers.organizations"]
    assert P + "calculation.engine" in graph.edges[P + "calculation.quality"]
    assert P + "web.json_response" in graph.edges[P + "web.graphiql"]
    assert "strawberry" in graph.external[P + "schema.packs"]
    assert all(room(m) != "schema" for m in graph.edges[P + "rest_compat.http"])


def test_the_package_root_holds_at_most_ten_modules() -> None:
    """The root shows the architecture: subpackages by role, a handful of modules beside them."""
    root = Path(__file__).resolve().parent.parent / PACKAGE
    modules = sorted(p.name for p in root.glob("*.py"))
    assert len(modules) <= 10, modules


def test_the_readme_layout_names_every_room_once(graph: ImportGraph) -> None:
    """README "Layout" says what each subpackage and top-level module holds: none missing, none stale."""
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text()
    block = readme.split("## Layout", 1)[1].split("```", 2)[1]
    package_part = block.split(f"{PACKAGE}/", 1)[1].split("\ntests/", 1)[0]
    # Each line names its rooms first ("db.py migrate.py seed.py"), then two spaces and what they hold.
    heads = [re.split(r"\s{2,}", line.strip(), maxsplit=1)[0] for line in package_part.splitlines()]
    listed = [
        m.group(1) for head in heads for token in head.split() if (m := re.fullmatch(r"([a-z_]+)(/|\.py)", token))
    ]
    rooms = {room(m) for m in graph.modules if m != PACKAGE}
    assert sorted(set(listed)) == sorted(rooms)
    assert len(listed) == len(set(listed)), "a room is listed twice"


MAX_MODULE_LINES = 400


def test_no_module_is_over_400_lines() -> None:
    """Small modules named for what they hold; a module passing 400 lines is split into a package.
    Migrations are history, written once and never read as code, so they do not count."""
    root = Path(__file__).resolve().parent.parent / PACKAGE
    sizes = {
        path.relative_to(root).as_posix(): len(path.read_text().splitlines())
        for path in root.rglob("*.py")
        if "migrations" not in path.relative_to(root).parts
    }
    over = sorted(f"{name} ({lines})" for name, lines in sizes.items() if lines > MAX_MODULE_LINES)
    assert over == [], "split these modules"
