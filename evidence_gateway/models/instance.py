"""Secrets of the installation itself (not of an organisation)."""

from __future__ import annotations

from datetime import datetime

from sqlmodel import Field, SQLModel

from evidence_gateway.models.base import created_field


class InstanceSecret(SQLModel, table=True):
    """A generated secret every process of the installation must share (instance_secrets.py)."""

    __tablename__ = "instance_secret"

    name: str = Field(primary_key=True, max_length=64)
    value: str = Field(max_length=200, nullable=False)
    created_at: datetime = created_field()
