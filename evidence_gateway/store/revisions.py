"""The schema's revisions without Alembic: what this code's head is, which revisions it knows,
which one a database records, and recording the head in a database just built at it. Judging a
database at head (every start) and building an empty one (the first start) need nothing more,
so Alembic (about 10 MB resident, kept by the serving process once loaded) loads only when an
existing schema changes (store/migrate.py)."""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

from sqlalchemy import Column, Connection, MetaData, PrimaryKeyConstraint, String, Table, inspect, text

VERSIONS_DIR = Path(__file__).with_name("migrations") / "versions"
VERSION_TABLE = "alembic_version"

_REVISION = re.compile(r'^revision: str = "([^"]+)"$', re.M)
_DOWN_REVISION = re.compile(r"^down_revision\b.*$", re.M)


@lru_cache
def _revisions() -> dict[str, tuple[str, ...]]:
    """Each revision and the ones it revises, read from the revision files as text: the module
    variables Alembic reads (tests/test_start_memory.py checks that both agree)."""
    found: dict[str, tuple[str, ...]] = {}
    for path in sorted(VERSIONS_DIR.glob("*.py")):
        source = path.read_text(encoding="utf-8")
        revision, down = _REVISION.search(source), _DOWN_REVISION.search(source)
        if revision is not None:
            found[revision.group(1)] = tuple(re.findall(r'"([^"]+)"', down.group(0))) if down else ()
    return found


def head() -> str:
    """The revision this code expects; one head only, so a forgotten merge fails loudly."""
    revised = {down for downs in _revisions().values() for down in downs}
    heads = sorted(set(_revisions()) - revised)
    if len(heads) != 1:
        raise RuntimeError(f"migrations have {len(heads)} heads ({', '.join(heads)}): merge them with `alembic merge`")
    return heads[0]


def known_revisions() -> frozenset[str]:
    return frozenset(_revisions())


def recorded_revisions(conn: Connection) -> list[str]:
    """The revisions the version table records (one, or none), as Alembic reads them."""
    if not inspect(conn).has_table(VERSION_TABLE):
        return []
    return sorted(str(row[0]) for row in conn.execute(text(f"SELECT version_num FROM {VERSION_TABLE}")))


def _version_table() -> Table:
    # Alembic's own (``DefaultImpl.version_table_impl``): a 32-character, non-null revision and
    # its primary key, named as Alembic names it; tests/test_start_memory.py compares the two.
    return Table(
        VERSION_TABLE,
        MetaData(),
        Column("version_num", String(32), nullable=False),
        PrimaryKeyConstraint("version_num", name=f"{VERSION_TABLE}_pkc"),
    )


def stamp_empty(conn: Connection, revision: str) -> None:
    """Record ``revision`` in a database that records none yet, as ``alembic stamp`` would:
    the version table if it is missing, and its one row."""
    table = _version_table()
    table.create(conn, checkfirst=True)
    conn.execute(table.insert().values(version_num=revision))
