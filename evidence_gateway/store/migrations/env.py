"""Alembic environment, shared by the app (which passes its own connection) and the ``alembic`` command.

All options come from ``evidence_gateway.store.migrate.context_options`` so that migrating,
autogenerating and the drift test see the database the same way.
"""

from __future__ import annotations

import asyncio
from logging.config import fileConfig

from alembic import context
from sqlalchemy import Connection

from evidence_gateway.settings import get_settings
from evidence_gateway.store import migrate
from evidence_gateway.store.db import normalise_url

config = context.config

if config.config_file_name is not None:
    # Only under the ``alembic`` command; the app keeps its own logging.
    fileConfig(config.config_file_name, disable_existing_loggers=False)


def _url() -> str:
    """``alembic -x url=...`` first, then EVIDENCE_DATABASE_URL, as the app would."""
    given = context.get_x_argument(as_dictionary=True).get("url") or config.get_main_option("sqlalchemy.url")
    return normalise_url(given or get_settings().database_url)


def run_migrations(connection: Connection) -> None:
    context.configure(connection=connection, **migrate.context_options(connection))
    # Inside the caller's transaction Alembic opens none of its own (it sees an external one).
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_offline() -> None:
    """``alembic upgrade --sql``: the DDL as text, for a DBA to review or apply."""
    url = _url()
    context.configure(
        url=url,
        target_metadata=migrate.load_models(),
        render_as_batch=url.startswith("sqlite"),
        literal_binds=True,
        dialect_opts={"paramstyle": "named"},
    )
    with context.begin_transaction():
        context.run_migrations()


if context.is_offline_mode():
    run_migrations_offline()
elif (connection := config.attributes.get("connection")) is not None:
    run_migrations(connection)
else:
    asyncio.run(migrate.run_in_schema_transaction(_url(), run_migrations))
