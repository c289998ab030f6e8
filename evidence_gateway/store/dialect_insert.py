"""``INSERT … ON CONFLICT`` in the serving database's dialect.

Importing SQLAlchemy's PostgreSQL dialect imports the module of every PostgreSQL driver it knows
(about 2 MB resident): a server on SQLite never needs it, so it loads with the first statement on
PostgreSQL, where the engine has loaded it already.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def insert_for(is_sqlite: bool) -> Callable[..., Any]:
    """The dialect's ``insert`` construct, which has ``on_conflict_do_nothing`` / ``_do_update``."""
    if is_sqlite:
        from sqlalchemy.dialects.sqlite import insert as sqlite_insert

        return sqlite_insert
    from sqlalchemy.dialects.postgresql import insert as postgresql_insert

    return postgresql_insert
