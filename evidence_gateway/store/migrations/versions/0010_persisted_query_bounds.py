"""Persisted queries bounded: the registering organisation and the last use of each document

Each organisation may hold so many registered documents (its least recently used make room)
and documents unused for a number of days are deleted; both need to know who registered a
document and when it last ran. Documents already stored count for no organisation and are
taken as last used when they were stored.

Revision ID: 0010_persisted_query_bounds
Revises: 0009_naming_convention
Create Date: 2026-11-26 15:00:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel.sql.sqltypes
from alembic import op

# revision identifiers, used by Alembic.
revision: str = "0010_persisted_query_bounds"
down_revision: str | Sequence[str] | None = "0009_naming_convention"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("persisted_query") as batch:
        batch.add_column(sa.Column("org_id", sa.Uuid(), nullable=True))
        batch.add_column(sa.Column("last_used_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=True))
    op.execute("UPDATE persisted_query SET last_used_at = created_at")
    with op.batch_alter_table("persisted_query") as batch:
        batch.alter_column("last_used_at", existing_type=sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False)
    op.create_index("ix_persisted_query_org_used", "persisted_query", ["org_id", "last_used_at"], unique=False)
    op.create_index("ix_persisted_query_last_used", "persisted_query", ["last_used_at"], unique=False)


def downgrade() -> None:
    op.drop_index("ix_persisted_query_last_used", table_name="persisted_query")
    op.drop_index("ix_persisted_query_org_used", table_name="persisted_query")
    with op.batch_alter_table("persisted_query") as batch:
        batch.drop_column("last_used_at")
        batch.drop_column("org_id")
