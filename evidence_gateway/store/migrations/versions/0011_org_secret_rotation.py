"""The organisation's webhook signing secret rotates with an overlap, as an endpoint's does

After `webhooks secret --rotate` the previous secret keeps signing beside the new one until
`previous_webhook_signing_secret_expires_at`, so receivers switch without a gap.

Revision ID: 0011_org_secret_rotation
Revises: 0010_persisted_query_bounds
Create Date: 2026-11-26 18:00:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel.sql.sqltypes
from alembic import op

# revision identifiers, used by Alembic.
revision: str = "0011_org_secret_rotation"
down_revision: str | Sequence[str] | None = "0010_persisted_query_bounds"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("organization") as batch:
        batch.add_column(
            sa.Column("previous_webhook_signing_secret", sqlmodel.sql.sqltypes.AutoString(length=100), nullable=True)
        )
        batch.add_column(
            sa.Column("previous_webhook_signing_secret_expires_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=True)
        )


def downgrade() -> None:
    with op.batch_alter_table("organization") as batch:
        batch.drop_column("previous_webhook_signing_secret_expires_at")
        batch.drop_column("previous_webhook_signing_secret")
