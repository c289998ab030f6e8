"""GraphQL documents known by their SHA-256 (automatic persisted queries, docs/graphql.md)."""

from __future__ import annotations

import uuid
from datetime import datetime

from sqlalchemy import Column, Index, Text
from sqlmodel import Field, SQLModel

from evidence_gateway.core.timeutil import utcnow
from evidence_gateway.models.base import created_field


class PersistedQuery(SQLModel, table=True):
    """One document, content-addressed: the same hash is the same text on every node and for every
    organisation (a document is program text; what it returns is scoped by the caller's key).

    Bounded (resolvers/persisted_queries.py): each organisation holds at most so many documents
    it registered (its least recently used make room), and a document unused for a number of
    days is deleted."""

    __tablename__ = "persisted_query"
    __table_args__ = (
        # An organisation's documents, least recently used first: counting and making room.
        Index("ix_persisted_query_org_used", "org_id", "last_used_at"),
        # The purge of documents unused for too long.
        Index("ix_persisted_query_last_used", "last_used_at"),
    )

    # Lowercase hex SHA-256 of the UTF-8 document, as Apollo clients send it.
    sha256: str = Field(max_length=64, primary_key=True)
    document: str = Field(sa_column=Column(Text, nullable=False))
    created_at: datetime = created_field()
    # The organisation whose key registered it (its count); null for documents stored before the caps.
    org_id: uuid.UUID | None = Field(default=None, nullable=True)
    # Last run by hash, written at most once an hour per node (not on every request).
    last_used_at: datetime = Field(default_factory=utcnow, nullable=False)
