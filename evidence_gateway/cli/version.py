"""The release and the schema revision it needs, read without importing the app, Alembic or
SQLAlchemy, so ``--version`` answers at once (issue 31)."""

from __future__ import annotations

import ast
from functools import lru_cache
from pathlib import Path

from evidence_gateway import __version__

VERSIONS_DIR = Path(__file__).resolve().parent.parent / "store" / "migrations" / "versions"


def _assigned(tree: ast.Module, name: str) -> object:
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            target, value = node.target, node.value
        else:
            continue
        if isinstance(target, ast.Name) and target.id == name:
            return ast.literal_eval(value)
    return None


@lru_cache
def schema_head() -> str:
    """The revision no other revision revises: what Alembic calls the head (one, or several joined by '+')."""
    revisions: set[str] = set()
    revised: set[str] = set()
    for path in VERSIONS_DIR.glob("[0-9]*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        revision = _assigned(tree, "revision")
        if isinstance(revision, str):
            revisions.add(revision)
        down = _assigned(tree, "down_revision")
        if isinstance(down, str):
            revised.add(down)
        elif isinstance(down, tuple | list):
            revised.update(str(d) for d in down)
    return "+".join(sorted(revisions - revised)) or "unknown"


def describe() -> str:
    """``0.2.0 (schema 0010_persisted_query_bounds)``."""
    return f"{__version__} (schema {schema_head()})"
