"""Timestamps are aware UTC everywhere (SQLModel's UTCDateTime stores and returns them so)."""

from datetime import UTC, datetime
from typing import overload


def utcnow() -> datetime:
    return datetime.now(UTC)


@overload
def as_aware(value: datetime) -> datetime: ...
@overload
def as_aware(value: None) -> None: ...
@overload
def as_aware(value: datetime | None) -> datetime | None: ...


def as_aware(value: datetime | None) -> datetime | None:
    """Defensive: a naive value (e.g. from raw SQL on SQLite) is read as UTC."""
    if value is None:
        return None
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value
