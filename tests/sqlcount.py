"""Counting SQL statements per request (SQLAlchemy event hook), for N+1 tests."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from sqlalchemy import event

from evidence_gateway.store.db import Database


class StatementLog:
    def __init__(self) -> None:
        self.statements: list[str] = []

    @property
    def count(self) -> int:
        return len(self.statements)


@contextmanager
def count_statements(db: Database) -> Iterator[StatementLog]:
    """Every statement the database runs, on each of its engines (SQLite reads have their own)
    and on the driver itself (PostgreSQL's hot reads)."""
    log = StatementLog()

    def on_execute(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        # BEGIN/COMMIT/ROLLBACK are transaction plumbing, not queries.
        if statement.strip().split(" ", 1)[0].upper() not in {"BEGIN", "COMMIT", "ROLLBACK", "PRAGMA"}:
            log.statements.append(statement)

    for engine in db.sync_engines:
        event.listen(engine, "before_cursor_execute", on_execute)
    db.statement_listeners.append(log.statements.append)  # reads on the driver itself
    try:
        yield log
    finally:
        db.statement_listeners.remove(log.statements.append)
        for engine in db.sync_engines:
            event.remove(engine, "before_cursor_execute", on_execute)
