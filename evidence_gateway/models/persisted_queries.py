"""GraphQL documents known by their SHA-256 (automatic persisted queries, docs/graphql.md)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Column, Text
from sqlmodel import Field, SQLModel

from evidence_gateway.models.base import created_field


class PersistedQuery(SQLModel, table=True):
    """One document, content-addressed: the same hash is the same text on every node and for every
    organisation (a document is program text; what it returns is scoped by the caller's key)."""

    __tablename__ = "persisted_query"

    # Lowercase hex SHA-256 of the UTF-8 document, as Apollo clients send it.
    sha256: str = Field(max_length=64, primary_key=True)
    document: str = Field(sa_column=Column(Text, nullable=False))
    created_at: datetime = created_field()
