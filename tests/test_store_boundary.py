"""Persistence has one home (DESIGN.md §19): read from the source, with ``ast``.

Outside ``evidence_gateway/store/`` no module writes SQL text (``text(...)``, ``DDL(...)``,
``exec_driver_sql``, a string that is a statement), imports a database driver (asyncpg,
aiosqlite, sqlite3) or a dialect, or branches on the database (``is_sqlite``, ``.dialect``,
``dialect=``), nor builds or runs a statement (``select``, ``insert``, ``update``, ``delete``, a
condition of one, ``session.execute``, ``db.fetch``): resolvers, the pack pipeline, the worker and
the web platform call a repository, so each statement has one place. Inside the store, a
library's private attributes are reached from ``store/internals.py`` only. Each failure names the
file, the line and what was found.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from evidence_gateway.calculation import RowResult, ShipmentInput
from evidence_gateway.models import Shipment, ShipmentEmission
from evidence_gateway.models.base import table_of
from evidence_gateway.store import internals, shipment_results

PACKAGE = Path(__file__).resolve().parent.parent / "evidence_gateway"
STORE = PACKAGE / "store"

DRIVERS = {"asyncpg", "aiosqlite", "sqlite3"}
SQL_CALLS = {"text", "DDL", "exec_driver_sql", "literal_column"}
DIALECT_NAMES = {"is_sqlite", "dialect", "get_backend_name"}
PRIVATE = {*internals.AIOSQLITE_PRIVATE, *internals.SQLALCHEMY_PRIVATE, "_execute", "_cached_result_processor"}
# A statement: an upper-case SQL verb opening the string, then the word that makes it one.
STATEMENT = re.compile(
    r"^\s*(SELECT\b.*\bFROM|INSERT\s+INTO|UPDATE\s+\S+\s+SET|DELETE\s+FROM|WITH\s+\w+\s+AS|"
    r"(CREATE|ALTER|DROP)\s+(TABLE|INDEX)|PRAGMA\s|BEGIN\b)",
    re.S,
)

# The exceptions, each with its reason.
ALLOWED: dict[tuple[str, str], str] = {
    ("cli/support.py", "get_backend_name"): "checking a URL's backend before any driver loads",
}


@dataclass(frozen=True)
class Finding:
    path: str
    line: int
    what: str
    name: str = ""  # what was built or run (the key of an exception)

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.what}"


def _modules(root: Path) -> Iterator[tuple[str, ast.Module]]:
    for path in sorted(root.rglob("*.py")):
        yield path.relative_to(PACKAGE).as_posix(), ast.parse(path.read_text(encoding="utf-8"))


def _docstrings(tree: ast.Module) -> set[int]:
    """ids of the string constants that are docstrings (prose may name SQL)."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                out.add(id(first.value))
    return out


def _sqlalchemy_aliases(tree: ast.Module) -> set[str]:
    """Names a module binds to SQLAlchemy modules (``import sqlalchemy as sa``)."""
    return {
        alias.asname or alias.name.split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
        if alias.name.split(".")[0] == "sqlalchemy"
    }


def _called_name(node: ast.Call, modules: set[str]) -> str | None:
    """``text`` of ``text(...)`` or ``sa.text(...)``; a method of an object (``note.text()``) is not SQL."""
    func = node.func
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in modules:
        return func.attr
    return None


def _outside_store(path: str, tree: ast.Module) -> Iterator[Finding]:
    docstrings = _docstrings(tree)
    modules = _sqlalchemy_aliases(tree)
    for node in ast.walk(tree):
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.Import):
            for alias in node.names:
                top = alias.name.split(".")[0]
                if top in DRIVERS or alias.name.startswith("sqlalchemy.dialects"):
                    yield Finding(path, line, f"import {alias.name}")
        elif isinstance(node, ast.ImportFrom) and node.module:
            if node.module.split(".")[0] in DRIVERS or node.module.startswith("sqlalchemy.dialects"):
                yield Finding(path, line, f"from {node.module} import")
            elif node.module.startswith("sqlalchemy"):
                for alias in node.names:
                    if alias.name in SQL_CALLS:
                        yield Finding(path, line, f"imports SQL text constructor {alias.name}")
        elif isinstance(node, ast.Call):
            name = _called_name(node, modules)
            if name in SQL_CALLS:
                yield Finding(path, line, name)
            for keyword in node.keywords:
                if keyword.arg == "dialect":
                    yield Finding(path, line, "dialect=")
        elif isinstance(node, ast.Attribute) and node.attr in DIALECT_NAMES:
            yield Finding(path, line, node.attr)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            if STATEMENT.match(node.value):
                yield Finding(path, line, f"SQL text {node.value.strip()[:40]!r}")


def _private(path: str, tree: ast.Module) -> Iterator[Finding]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in PRIVATE:
            yield Finding(path, node.lineno, f"private attribute {node.attr}")


def _allowed(finding: Finding) -> bool:
    what = finding.what.split()[-1] if finding.what.startswith("imports") else finding.what
    return (finding.path, what) in ALLOWED


def _all_outside() -> list[Finding]:
    return [f for path, tree in _modules(PACKAGE) if not path.startswith("store/") for f in _outside_store(path, tree)]


def test_sql_drivers_and_dialect_branches_live_in_the_store() -> None:
    found = [str(f) for f in _all_outside() if not _allowed(f)]
    assert found == [], "move these into evidence_gateway/store/ (a repository method or a store module):\n" + (
        "\n".join(found)
    )


def test_every_exception_is_still_needed() -> None:
    seen = {(f.path, f.what.split()[-1] if f.what.startswith("imports") else f.what) for f in _all_outside()}
    stale = sorted(f"{path}: {what}" for path, what in ALLOWED if (path, what) not in seen)
    assert stale == [], f"no longer found: remove from ALLOWED: {stale}"


def test_private_internals_are_reached_from_one_module() -> None:
    found = [str(f) for path, tree in _modules(PACKAGE) if path != "store/internals.py" for f in _private(path, tree)]
    assert found == [], "reach private attributes through store/internals.py only:\n" + "\n".join(found)


@pytest.mark.parametrize(
    ("source", "what"),
    [
        ("import asyncpg\n", "import asyncpg"),
        ("from aiosqlite import connect\n", "from aiosqlite import"),
        ("from sqlalchemy import text\n", "imports SQL text constructor text"),
        ("x = db.is_sqlite\n", "is_sqlite"),
        ("y = engine.dialect.name\n", "dialect"),
        ("q = 'SELECT id FROM workspace'\n", "SQL text 'SELECT id FROM workspace'"),
        ("q = 'INSERT INTO event (id) VALUES (?)'\n", "SQL text 'INSERT INTO event (id) VALUES (?)'"),
        ("ddl.execute_if(dialect='postgresql')\n", "dialect="),
    ],
)
def test_the_guard_sees_what_it_looks_for(source: str, what: str) -> None:
    found = [f.what for f in _outside_store("resolvers/x.py", ast.parse(source))]
    assert what in found


def test_prose_naming_sql_is_not_sql() -> None:
    source = '"""SELECT rows FROM the log, as docs say."""\nmessage = "select the workspace from the list"\n'
    assert list(_outside_store("resolvers/x.py", ast.parse(source))) == []


# ---- columns bound by name ------------------------------------------------------------------------


def test_the_calculation_reads_shipment_columns_by_the_engine_s_names() -> None:
    assert set(ShipmentInput._fields) <= set(table_of(Shipment).c.keys())
    assert shipment_results.SHIPMENT_COLUMNS == ShipmentInput._fields


def test_every_stored_result_column_is_one_the_engine_names_or_the_store_adds() -> None:
    columns = set(table_of(ShipmentEmission).c.keys())
    assert set(shipment_results.EMISSION_COLUMNS) == columns, (
        "shipment_emission's columns and RowResult's fields (plus the ids the store adds) differ: "
        f"{sorted(columns ^ set(shipment_results.EMISSION_COLUMNS))}"
    )
    assert len(shipment_results.EMISSION_COLUMNS) == len(set(shipment_results.EMISSION_COLUMNS))
    assert not set(shipment_results.EMISSION_IDS) & set(RowResult._fields)


# ---- statements are built and run in the store only -----------------------------------------------

# What builds a statement or a condition of one (imported from SQLAlchemy or SQLModel), and what runs one.
STATEMENT_BUILDERS = {
    "select",
    "insert",
    "update",
    "delete",
    "union",
    "union_all",
    "exists",
    "literal",
    "func",
    "col",
    "and_",
    "or_",
    "not_",
    "bindparam",
    "tuple_",
    "case",
    "cast",
}
SESSION_CALLS = {"get", "get_one", "exec", "execute", "scalar", "scalars", "stream", "stream_scalars", "merge"}
# The executors beside the session: code outside the store hands them no statement of its own.
EXECUTORS = {"rows", "rows_many", "readable", "keyset_slice", "fetch", "fetch_one", "fetch_many"}

# The exceptions, each with its reason.
STATEMENT_ALLOWED: dict[tuple[str, str], str] = {
    ("core/scoping.py", "bindparam"): "the organisation's bound parameter, the scoping rule every repository stands on",
}


def _session_names(tree: ast.Module) -> set[str]:
    """Names bound by ``async with <db>.read()/write()/snapshot() as NAME``."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.AsyncWith | ast.With):
            for item in node.items:
                call = item.context_expr
                if (
                    isinstance(call, ast.Call)
                    and isinstance(call.func, ast.Attribute)
                    and call.func.attr in {"read", "write", "snapshot"}
                    and isinstance(item.optional_vars, ast.Name)
                ):
                    names.add(item.optional_vars.id)
    return names


def _is_session(node: ast.expr, sessions: set[str]) -> bool:
    if isinstance(node, ast.Name):
        return "session" in node.id or node.id in sessions
    return isinstance(node, ast.Attribute) and node.attr == "session"  # uow.session


def _is_database(node: ast.expr) -> bool:
    """``db``, ``ctx.db``, ``self.db``: the database a statement would be handed to."""
    if isinstance(node, ast.Name):
        return node.id == "db"
    return isinstance(node, ast.Attribute) and node.attr == "db"


def _statements(path: str, tree: ast.Module) -> Iterator[Finding]:
    """Statements (and their conditions) built, and statements run, in a module outside the store."""
    imported: set[str] = set()
    modules = _sqlalchemy_aliases(tree) | {"sqlmodel"}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            top = node.module.split(".")[0]
            for alias in node.names:
                if top in {"sqlalchemy", "sqlmodel"} and alias.name in STATEMENT_BUILDERS:
                    yield Finding(path, node.lineno, f"imports statement builder {alias.name}", alias.name)
                    imported.add(alias.asname or alias.name)
                elif node.module.startswith("evidence_gateway.") and alias.name in EXECUTORS:
                    yield Finding(path, node.lineno, f"imports executor {alias.name}", alias.name)
    sessions = _session_names(tree)
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Name) and func.id in imported:
            yield Finding(path, node.lineno, f"builds a statement: {func.id}(...)", func.id)
        elif isinstance(func, ast.Attribute):
            if isinstance(func.value, ast.Name) and func.value.id in modules and func.attr in STATEMENT_BUILDERS:
                yield Finding(path, node.lineno, f"builds a statement: {func.value.id}.{func.attr}(...)", func.attr)
            elif func.attr in SESSION_CALLS and _is_session(func.value, sessions):
                yield Finding(path, node.lineno, f"runs a statement on a session: .{func.attr}(...)", func.attr)
            elif func.attr in EXECUTORS and _is_database(func.value):
                yield Finding(path, node.lineno, f"runs a statement on the database: .{func.attr}(...)", func.attr)


def _all_statements_outside() -> list[Finding]:
    return [f for path, tree in _modules(PACKAGE) if not path.startswith("store/") for f in _statements(path, tree)]


def test_statements_are_built_and_run_in_the_store_only() -> None:
    """Resolvers, the pack pipeline, the worker, the web platform: each calls a repository (or a
    store module), never builds or runs a statement itself, so each statement has one place."""
    found = [
        str(f)
        for f in sorted(_all_statements_outside(), key=lambda f: (f.path, f.line))
        if (f.path, f.name) not in STATEMENT_ALLOWED
    ]
    assert found == [], "build and run statements in evidence_gateway/store/ (the resource's repository):\n" + (
        "\n".join(found)
    )


def test_every_statement_exception_is_still_needed() -> None:
    seen = {(f.path, f.name) for f in _all_statements_outside()}
    stale = sorted(f"{path}: {name}" for path, name in STATEMENT_ALLOWED if (path, name) not in seen)
    assert stale == [], f"no longer found: remove from STATEMENT_ALLOWED: {stale}"


@pytest.mark.parametrize(
    ("source", "what"),
    [
        ("from sqlalchemy import select\nq = select(A)\n", "builds a statement: select(...)"),
        ("from sqlmodel import select\n", "imports statement builder select"),
        ("import sqlalchemy as sa\nq = sa.update(A)\n", "builds a statement: sa.update(...)"),
        ("from sqlalchemy import func\n", "imports statement builder func"),
        ("from sqlmodel import col\nw = col(A.kind).in_(kinds)\n", "builds a statement: col(...)"),
        ("async def f(session):\n    await session.get(A, 1)\n", "runs a statement on a session: .get(...)"),
        ("async def f(uow):\n    await uow.session.execute(q)\n", "runs a statement on a session: .execute(...)"),
        (
            "async def f(db):\n    async with db.read() as read:\n        await read.scalar(q)\n",
            "runs a statement on a session: .scalar(...)",
        ),
        ("from evidence_gateway.core.scoping import rows\n", "imports executor rows"),
        ("async def f(ctx):\n    await ctx.db.fetch(q)\n", "runs a statement on the database: .fetch(...)"),
        ("async def f(db):\n    await db.fetch(q, {})\n", "runs a statement on the database: .fetch(...)"),
    ],
)
def test_the_statement_guard_sees_what_it_looks_for(source: str, what: str) -> None:
    for path in ("resolvers/x.py", "web/observability/x.py", "packs/x.py", "core/x.py"):
        assert what in [f.what for f in _statements(path, ast.parse(source))]


def test_code_outside_the_store_may_hand_a_session_to_a_repository() -> None:
    source = (
        "async def f(ctx, row_id):\n"
        "    async with ctx.db.read() as session:\n"
        "        found = await Repo(ctx).load(session, row_id)\n"
        "    totals = {}\n"
        "    totals.update(found=found)\n"
        "    return {}.get('x')\n"
    )
    assert list(_statements("resolvers/x.py", ast.parse(source))) == []
