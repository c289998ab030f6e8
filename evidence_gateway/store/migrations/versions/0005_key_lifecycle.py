"""API key lifecycle: name, scope, expiry, last use; the installation's generated secrets

Keys made before this revision could do everything, so they become ``admin`` (the column's
server default); they have no name, no expiry and no recorded use. ``instance_secret`` keeps
the download-signing secret generated when EVIDENCE_SECRET_KEY is unset, so every worker and
node shares it (it used to be a file beside the SQLite database).

Revision ID: 0005_key_lifecycle
Revises: 0004_method
Create Date: 2026-11-25 16:40:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel.sql.sqltypes
from alembic import op

# revision identifiers, used by Alembic.
revision: str = "0005_key_lifecycle"
down_revision: str | Sequence[str] | None = "0004_method"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "instance_secret",
        sa.Column("name", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
        sa.Column("value", sqlmodel.sql.sqltypes.AutoString(length=200), nullable=False),
        sa.Column("created_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("name"),
    )
    with op.batch_alter_table("api_key", schema=None) as batch_op:
        batch_op.add_column(sa.Column("name", sqlmodel.sql.sqltypes.AutoString(length=200), nullable=True))
        batch_op.add_column(
            sa.Column("scope", sqlmodel.sql.sqltypes.AutoString(length=8), nullable=False, server_default="admin")
        )
        batch_op.add_column(sa.Column("expires_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=True))
        batch_op.add_column(sa.Column("last_used_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("api_key", schema=None) as batch_op:
        batch_op.drop_column("last_used_at")
        batch_op.drop_column("expires_at")
        batch_op.drop_column("scope")
        batch_op.drop_column("name")
    op.drop_table("instance_secret")
