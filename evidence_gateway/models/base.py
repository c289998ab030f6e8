"""Shared column helpers for every table family."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import JSON, BigInteger, Column, Table
from sqlmodel import Field, SQLModel

from evidence_gateway.core.timeutil import utcnow

#: Every constraint's name, on both databases, whichever way the table was made: ``create_all``
#: on a new database and the revisions on an old one name them alike (migration 0009), so a
#: revision can drop or alter a constraint by name. Indexes keep SQLAlchemy's default. Names
#: stay under PostgreSQL's 63 characters (tests/test_migrations.py checks).
NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_N_name)s",
    "pk": "pk_%(table_name)s",
}
# Before any table is declared: a constraint takes its name when it joins its table.
SQLModel.metadata.naming_convention = NAMING_CONVENTION


def id_field() -> Any:
    return Field(default_factory=uuid.uuid4, primary_key=True)


def created_field() -> Any:
    return Field(default_factory=utcnow, nullable=False)


def json_field(default_factory: Any = dict) -> Any:
    return Field(default_factory=default_factory, sa_column=Column(JSON, nullable=False))


def org_fk() -> Any:
    return Field(foreign_key="organization.id", nullable=False, index=False)


def counter_field(start: int = 0, *, big: bool = False) -> Any:
    """A NOT NULL integer with a server default, so adding it to a table with rows migrates."""
    if big:
        return Field(default=start, sa_column=Column(BigInteger, nullable=False, server_default=str(start)))
    return Field(default=start, nullable=False, sa_column_kwargs={"server_default": str(start)})


def table_of(model: type[SQLModel] | Table) -> Table:
    """The Core table of a table model (a table is its own), for statements that bypass the ORM:
    built-once reads, bulk inserts, upserts.

    SQLAlchemy sets ``__table__`` on the class itself; SQLModel's types do not declare it.
    """
    if isinstance(model, Table):
        return model
    table: Table = vars(model)["__table__"]
    return table


__all__ = [
    "NAMING_CONVENTION",
    "counter_field",
    "created_field",
    "datetime",
    "id_field",
    "json_field",
    "org_fk",
    "table_of",
]
