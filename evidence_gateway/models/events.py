"""The append-only event log and the stored answers of idempotent requests."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import BigInteger, Column, Index, LargeBinary, UniqueConstraint
from sqlmodel import Field, SQLModel

from evidence_gateway.models.base import created_field, id_field, json_field, org_fk


class Event(SQLModel, table=True):
    """Everything that happened to an organisation's data, in commit order (DESIGN.md §13)."""

    __tablename__ = "event"
    __table_args__ = (
        UniqueConstraint("org_id", "sequence", name="uq_event_org_sequence"),
        # The audit trail reads one workspace's events up to a sequence.
        Index("ix_event_org_workspace_sequence", "org_id", "workspace_id", "sequence"),
        # Events of some types, in log order (list_queries.EVENTS); 0017_list_indexes.
        Index("ix_event_org_type_sequence", "org_id", "type", "sequence"),
    )

    id: uuid.UUID = id_field()
    org_id: uuid.UUID = org_fk()
    sequence: int = Field(sa_column=Column(BigInteger, nullable=False))
    type: str = Field(max_length=64, nullable=False)
    occurred_at: datetime = created_field()
    # The acting API key (None for the CLI and for the sweeper).
    actor: uuid.UUID | None = Field(default=None, foreign_key="api_key.id")
    request_id: str | None = Field(default=None, max_length=200)
    subject_type: str = Field(max_length=32, nullable=False)
    subject_id: uuid.UUID = Field(nullable=False)
    workspace_id: uuid.UUID | None = None
    data: dict[str, Any] = json_field()
    # SHA-256(0x00 || the event's canonical bytes): leaf ``sequence - 1`` of the organisation's
    # transparency log (core/tlog.py, docs/verification.md), written by the append itself. On the
    # row rather than in a table of its own: an append then writes no second row or index entry.
    leaf_hash: bytes | None = Field(default=None, sa_column=Column(LargeBinary, nullable=True))


class EventCounter(SQLModel, table=True):
    """PostgreSQL's per-organisation event counter, bumped under its row lock by each committing
    unit of work so sequences commit in order and without gaps (DESIGN.md §13).

    A table of its own, not a column of ``organization``: every org-scoped row's foreign key
    locks the organisation row for its check, and a row updated on every write carries a chain
    of dead versions those checks would walk. SQLite needs no counter (one writer at a time).
    """

    __tablename__ = "event_counter"

    org_id: uuid.UUID = Field(foreign_key="organization.id", primary_key=True)
    last_sequence: int = Field(sa_column=Column(BigInteger, nullable=False))


class ListCount(SQLModel, table=True):
    """How many rows of a list an organisation has: the exact ``pagination.total`` of its
    unfiltered REST list without counting them (store/list_counts.py keeps it, in the transaction
    of every insert and delete of a counted table's rows)."""

    __tablename__ = "list_count"

    org_id: uuid.UUID = Field(foreign_key="organization.id", primary_key=True)
    # The counted table's name (store/list_counts.py COUNTED).
    list_name: str = Field(max_length=64, primary_key=True)
    row_count: int = Field(sa_column=Column(BigInteger, nullable=False))


class IdempotencyRecord(SQLModel, table=True):
    """One Idempotency-Key of an organisation: in progress, or completed with its stored answer."""

    __tablename__ = "idempotency_record"
    __table_args__ = (Index("ix_idempotency_record_expires", "expires_at"),)

    org_id: uuid.UUID = Field(foreign_key="organization.id", primary_key=True)
    key: str = Field(max_length=255, primary_key=True)
    # method + path + SHA-256 of the body, hashed.
    fingerprint: str = Field(max_length=64, nullable=False)
    completed: bool = Field(default=False, nullable=False)
    # While in progress: the holder renews this; past it, a retry may take the key over.
    locked_until: datetime | None = None
    response_status: int | None = None
    response_headers: dict[str, Any] = json_field()
    response_body: bytes | None = Field(default=None, sa_column=Column(LargeBinary, nullable=True))
    created_at: datetime = created_field()
    expires_at: datetime = Field(nullable=False)
