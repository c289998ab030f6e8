"""The transparency log's signed checkpoints (its leaves are the events' ``leaf_hash``), the
instance's signing keys and the signed statements of packs (docs/verification.md)."""

from __future__ import annotations

import uuid
from datetime import datetime

from sqlalchemy import BigInteger, Column, Index, LargeBinary, SmallInteger, Text, UniqueConstraint
from sqlmodel import Field, SQLModel

from evidence_gateway.models.base import created_field, id_field, org_fk


class TlogCheckpoint(SQLModel, table=True):
    """A signed checkpoint (C2SP tlog-checkpoint as a signed note) of the tree at ``size``; all kept."""

    __tablename__ = "tlog_checkpoint"

    org_id: uuid.UUID = Field(foreign_key="organization.id", primary_key=True)
    size: int = Field(sa_column=Column(BigInteger, primary_key=True, autoincrement=False))
    root: bytes = Field(sa_column=Column(LargeBinary, nullable=False))
    # The complete subtrees' hashes at this size (32 bytes each, largest first): the next
    # checkpoint hashes only the leaves added since (merkle.extend), never the whole log.
    frontier: bytes = Field(sa_column=Column(LargeBinary, nullable=False))
    key_id: str = Field(max_length=16, nullable=False)
    note: str = Field(sa_column=Column(Text, nullable=False))
    issued_at: datetime = created_field()


class TlogSubtree(SQLModel, table=True):
    """The hash of a complete, aligned subtree of an organisation's log: leaves ``first_leaf`` ..
    ``first_leaf + 2**level - 1``. A cache (core/subtrees.py): proofs read these instead of every
    leaf; written as checkpoints complete them or when a proof first needs one, never changed."""

    __tablename__ = "tlog_subtree"

    org_id: uuid.UUID = Field(foreign_key="organization.id", primary_key=True)
    level: int = Field(sa_column=Column(SmallInteger, primary_key=True, autoincrement=False))
    first_leaf: int = Field(sa_column=Column(BigInteger, primary_key=True, autoincrement=False))
    hash: bytes = Field(sa_column=Column(LargeBinary, nullable=False))


class EvidenceKey(SQLModel, table=True):
    """An instance signing key's public half, kept after rotation so what it signed still verifies.

    ``private_seed`` is set only for a key the instance generated itself; a key supplied from
    outside (EVIDENCE_SIGNING_KEY_FILE / EVIDENCE_SIGNING_KEY) never reaches the database.
    """

    __tablename__ = "evidence_key"

    key_id: str = Field(primary_key=True, max_length=16)
    name: str = Field(max_length=200, nullable=False)
    public_key: bytes = Field(sa_column=Column(LargeBinary, nullable=False))
    private_seed: str | None = Field(default=None, max_length=100)
    created_at: datetime = created_field()
    retired_at: datetime | None = None


class SignedStatement(SQLModel, table=True):
    """A DSSE envelope signed for one event of a pack: its seal (``pack.generated``) or an
    approval statement (``pack.status_changed``)."""

    __tablename__ = "signed_statement"
    __table_args__ = (
        UniqueConstraint("org_id", "event_sequence", name="uq_signed_statement_org_event_sequence"),
        Index("ix_signed_statement_org_pack", "org_id", "pack_id"),
    )

    id: uuid.UUID = id_field()
    org_id: uuid.UUID = org_fk()
    pack_id: uuid.UUID = Field(nullable=False)
    kind: str = Field(max_length=16, nullable=False)
    event_sequence: int = Field(sa_column=Column(BigInteger, nullable=False))
    key_id: str = Field(max_length=16, nullable=False)
    envelope: str = Field(sa_column=Column(Text, nullable=False))
    created_at: datetime = created_field()
    # The statement's RFC 3161 TimeStampResp (DER) over its signature, when an authority is configured.
    timestamp: bytes | None = Field(default=None, sa_column=Column(LargeBinary, nullable=True))
