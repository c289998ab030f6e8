"""SQLite's trigram indexes for the ``*Contains`` filters (store/sqlite_text_search.py): the same
rows with and without the index, on both transports and every indexed list; the index comes
with the schema either way to head, goes with its revision's downgrade, is filled from the rows
already there, and follows inserts, updates and deletes."""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette

from evidence_gateway.app import create_app
from evidence_gateway.settings import Settings
from evidence_gateway.store import migrate, sqlite_text_search
from evidence_gateway.store.db import Database
from tests.conftest import Api, create_workspace, seed_key
from tests.sqlcount import count_statements
from tests.test_legacy import load, record

pytestmark = pytest.mark.skipif(not sqlite_text_search.fts5_available(), reason="this SQLite has no FTS5")

NAMES = [
    "North depot", "north HUB 12", "South Depot 120", "Émile dépôt", "émile", "ÉMILE hub",
    "50% off_road", "50 percent offroad", "a_b/c depot", "ab/c", "Straße Nord", "STRASSE nord",
    "Ünïcode ÄÖÜ", "ünïcode äöü", "x", 'The "Quoted" OR (NEAR) hub*',
]  # fmt: skip
PATTERNS = [
    "depot", "DEPOT", "nOrTh", "hub 1", "th d", "émile", "ÉMILE", "Émile", "dépôt", "DÉPÔT", "50%", "0% o",
    "%", "_", "f_r", "off_road", "a_b/c", "/c", "b/c", "ß", "straße", "STRASSE", "ÄÖÜ", "äöü", "ünï",
    "no", "h", "12", "x", "zzz", "%%%", "___", "d%p", '"quoted"', 'ed" OR (', "NEAR)", "hub*", 'a"b', "*",
]  # fmt: skip

WORKSPACES = "query($f: WorkspaceFilter) { workspacesConnection(filter: $f, first: 100) { nodes { id } } }"
ITEMS = "query($f: EvidenceItemFilter) { evidenceItemsConnection(filter: $f, first: 100) { nodes { id } } }"
PACKS = "query($f: ReportPackFilter) { packsConnection(filter: $f, first: 100) { nodes { id } } }"
LEGACY = "query($f: LegacyReportFilter) { legacyReportsConnection(filter: $f, first: 100) { nodes { id } } }"
# (GraphQL document, its connection, its filter field, REST path, REST parameter, index)
LISTS = [
    (WORKSPACES, "workspacesConnection", "nameContains", "/api/v2/workspaces", "name_contains", "workspace_name_fts"),
    (ITEMS, "evidenceItemsConnection", "titleContains", "/api/v2/evidence-items", "title_contains",
     "evidence_item_title_fts"),
    (PACKS, "packsConnection", "titleContains", "/api/v2/packs", "title_contains", "report_pack_title_fts"),
    (LEGACY, "legacyReportsConnection", "titleContains", "/api/v1/reports", "title_contains",
     "legacy_report_title_fts"),
]  # fmt: skip


@pytest.fixture
def database_url(tmp_path: Path) -> str:
    """SQLite only: PostgreSQL has its own indexes (store/text_search.py)."""
    return f"sqlite+aiosqlite:///{tmp_path / 'evidence.db'}"


@asynccontextmanager
async def _serving(settings: Settings, key: str | None = None) -> AsyncIterator[tuple[Starlette, Api]]:
    """An application of its own on the database (a fresh engine: nothing compiled before)."""
    app = create_app(settings)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as http:
            yield app, Api(http, key or await seed_key(app.state.db, "org-a"))


async def _populate(api: Api, other: Api) -> None:
    from tests.test_packs import calculated_workspace, generated

    for name in NAMES:
        ws = await create_workspace(api, name=name)
        item = {"evidence_type": "telematics", "title": name, "file_name": "t.csv"}
        item |= {"file_url": "https://files.example.com/t.csv", "workspace_id": ws["id"]}
        assert (await api.post("/api/v2/evidence-items", item)).status_code == 201
        await create_workspace(other, name=name)  # another organisation's twins: never listed
    for name in ("North depot", "Émile dépôt", "50% off_road"):
        await generated(api, (await calculated_workspace(api, name=name))["id"])
    await load(api, "org-a", [record(title=name) for name in NAMES])
    await load(other, "org-b", [record(title=name) for name in NAMES])


async def _answers(api: Api) -> dict[tuple[str, str, str], list[str]]:
    """Every list's rows for every pattern, over GraphQL and REST."""
    found: dict[tuple[str, str, str], list[str]] = {}
    for document, field, argument, path, param, _index in LISTS:
        for pattern in PATTERNS:
            body = await api.gql(document, {"f": {argument: pattern}})
            assert "errors" not in body, body
            found[(field, pattern, "graphql")] = sorted(n["id"] for n in body["data"][field]["nodes"])
            resp = await api.get(path, params={f"filter[{param}]": pattern, "per_page": 100})
            assert resp.status_code == 200, resp.text
            found[(field, pattern, "rest")] = sorted(row["id"] for row in resp.json()["data"])
    return found


async def test_the_index_answers_the_same_rows_as_the_plain_condition(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with _serving(settings) as (app, api):
        other = Api(api.http, await seed_key(app.state.db, "org-b"))
        await _populate(api, other)
        with count_statements(app.state.db) as log:
            indexed = await _answers(api)
        key = api.key
    for _document, field, _argument, _path, _param, index in LISTS:
        # Each list reads its index for a text with a trigram, and the plain condition alone otherwise.
        assert any(index in s and "'%' || lower(" in s for s in log.statements), field

    # A text with COMMON candidates or more is filtered without its index (the ordered walk).
    monkeypatch.setattr(sqlite_text_search, "COMMON", 3)
    async with _serving(settings, key) as (app, api):
        with count_statements(app.state.db) as common_log:
            chosen = await _answers(api)
    assert any("LIMIT" in s and "MATCH" in s and "count(" in s for s in common_log.statements)  # the probe

    def through_index(statements: list[str]) -> int:
        return sum("'%' || lower(" in s and " IN (SELECT id FROM " in s for s in statements)

    assert 0 < through_index(common_log.statements) < through_index(log.statements)

    monkeypatch.setattr(sqlite_text_search, "fts5_available", lambda: False)  # an SQLite without FTS5
    async with _serving(settings, key) as (app, api):
        with count_statements(app.state.db) as log:
            plain = await _answers(api)
    assert not any("_fts" in s for s in log.statements)

    assert indexed == plain == chosen
    names = {row["id"]: row["name"] for row in (await _rest_names(settings, key))}
    workspaces = {p: [names[i] for i in indexed[("workspacesConnection", p, "graphql")]] for p in PATTERNS}
    # SQLite's case folding is ASCII's: "É" and "é" stay apart; % and _ are the text itself.
    assert sorted(workspaces["DEPOT"]) == ["North depot", "North depot", "South Depot 120", "a_b/c depot"]
    assert workspaces["émile"] == ["émile"]
    assert sorted(workspaces["Émile"]) == ["ÉMILE hub", "Émile dépôt", "Émile dépôt"]
    assert sorted(workspaces["ÉMILE"]) == ["ÉMILE hub", "Émile dépôt", "Émile dépôt"]
    assert workspaces["STRASSE"] == ["STRASSE nord"]
    assert sorted(workspaces["off_road"]) == ["50% off_road", "50% off_road"]
    assert workspaces["%%%"] == [] and workspaces["___"] == [] and workspaces["d%p"] == []
    # FTS5's query syntax in the text is text: quotes, operators, parentheses, a star.
    quoted = ['The "Quoted" OR (NEAR) hub*']
    assert workspaces['"quoted"'] == workspaces['ed" OR ('] == workspaces["NEAR)"] == workspaces["hub*"] == quoted
    assert indexed[("packsConnection", "dépôt", "rest")] and indexed[("legacyReportsConnection", "ünï", "graphql")]


async def _rest_names(settings: Settings, key: str) -> list[dict[str, Any]]:
    async with _serving(settings, key) as (_app, api):
        resp = await api.get("/api/v2/workspaces", params={"per_page": 100})
        rows: list[dict[str, Any]] = resp.json()["data"]
        return rows


def _fts_objects(path: Path) -> set[str]:
    with sqlite3.connect(path) as conn:
        rows = conn.execute("SELECT name FROM sqlite_master WHERE name LIKE '%\\_fts%' ESCAPE '\\'").fetchall()
    return {name for (name,) in rows}


def _check(path: Path) -> None:
    """FTS5's own check of each index, and the index holds exactly its table's (id, text) pairs."""
    with sqlite3.connect(path) as conn:
        for table, column in sqlite_text_search.FTS_COLUMNS:
            fts = sqlite_text_search.index_name(table, column)
            conn.execute(f"INSERT INTO {fts}({fts}) VALUES ('integrity-check')")
            indexed = sorted(conn.execute(f"SELECT id, {column} FROM {fts}").fetchall())
            assert indexed == sorted(conn.execute(f"SELECT id, {column} FROM {table}").fetchall())


async def _on(url: str, work: Any) -> Any:
    db = Database(url)
    try:
        return await work(db)
    finally:
        await db.dispose()


async def test_the_index_comes_and_goes_with_its_revision(settings: Settings, tmp_path: Path) -> None:
    path = tmp_path / "evidence.db"
    triggers = {f"{name}_{t}" for name in sqlite_text_search.INDEX_NAMES for t in ("ai", "ad", "au")}
    expected = sqlite_text_search.FTS_NAMES | triggers
    async with _serving(settings) as (_app, api):  # built from the models
        await create_workspace(api, name="Zebra crossing")
        key = api.key
    assert _fts_objects(path) == expected
    _check(path)

    await _on(settings.database_url, lambda db: migrate.downgrade(db, "0021_list_filters_more"))
    assert _fts_objects(path) == set()
    await _on(settings.database_url, migrate.upgrade)  # by the revision, over rows already there
    assert _fts_objects(path) == expected
    _check(path)

    async with _serving(settings, key) as (_app, api):

        async def names(text: str) -> list[str]:
            resp = await api.get("/api/v2/workspaces", params={"filter[name_contains]": text})
            return [w["name"] for w in resp.json()["data"]]

        assert await names("zebra") == ["Zebra crossing"]  # the revision filled the index
        await create_workspace(api, name="Okapi trail")
        assert await names("okapi") == ["Okapi trail"]
        with sqlite3.connect(path) as conn:  # the triggers: an update of the column, a delete
            conn.execute("UPDATE workspace SET name = 'Quagga lane' WHERE name = 'Zebra crossing'")
        _check(path)
        assert await names("zebra") == [] and await names("quagga") == ["Quagga lane"]
        with sqlite3.connect(path) as conn:
            conn.execute("DELETE FROM workspace WHERE name = 'Okapi trail'")
        _check(path)
        assert await names("okapi") == []

        # VACUUM may renumber these tables' rowids; the index is keyed by id, so no row is lost.
        animals = [f"Gnu {i:02d}" for i in range(12)]
        for name in animals:
            await create_workspace(api, name=name)
        with sqlite3.connect(path) as conn:
            conn.execute("DELETE FROM workspace WHERE name IN ('Gnu 00', 'Gnu 05')")
        with sqlite3.connect(path) as conn:
            conn.execute("VACUUM")
        _check(path)
        for name in animals[1:5] + animals[6:]:
            assert await names(name.lower()) == [name]
        assert sorted(await names("gnu")) == animals[1:5] + animals[6:]
        assert await names("quagga") == ["Quagga lane"]


async def test_without_fts5_the_schema_reaches_head_and_filters_answer(
    settings: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sqlite_text_search, "fts5_available", lambda: False)
    async with _serving(settings) as (_app, api):
        await create_workspace(api, name="Zebra crossing")
        resp = await api.get("/api/v2/workspaces", params={"filter[name_contains]": "ZEBRA"})
        assert [w["name"] for w in resp.json()["data"]] == ["Zebra crossing"]
    assert _fts_objects(tmp_path / "evidence.db") == set()


@pytest.mark.parametrize("replay", [True, False], ids=["revisions", "models"])
async def test_every_index_has_its_triggers_at_head(database_url: str, tmp_path: Path, replay: bool) -> None:
    """A migration that rebuilds a base table (batch mode copies it) drops its triggers: the
    index would then miss every later row. At head, by either road, each index has all three."""
    await _on(database_url, lambda db: migrate.upgrade(db, replay=replay))
    with sqlite3.connect(tmp_path / "evidence.db") as conn:
        found = {name: (table, sql) for name, table, sql in conn.execute(
            "SELECT name, tbl_name, sql FROM sqlite_master WHERE type = 'trigger'"
        )}  # fmt: skip
    for table, column in sqlite_text_search.FTS_COLUMNS:
        fts = sqlite_text_search.index_name(table, column)
        expected = {
            "ai": (f"AFTER INSERT ON {table}", [f"INSERT INTO {fts}"]),
            "ad": (f"AFTER DELETE ON {table}", [f"DELETE FROM {fts}"]),
            "au": (f"AFTER UPDATE OF {column} ON {table}", [f"DELETE FROM {fts}", f"INSERT INTO {fts}"]),
        }
        for suffix, (event, bodies) in expected.items():
            name = f"{fts}_{suffix}"
            assert name in found, f"{name} missing: {table} rows would be left out of {column} searches"
            on, sql = found[name]
            assert on == table and event in sql and all(body in sql for body in bodies), sql
