"""write path: event log, idempotency records, leases, data and row versions

Revision ID: 0002_write_path
Revises: 0001_initial
Create Date: 2026-11-23 14:11:12.163734
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel.sql.sqltypes  # noqa: F401  (autogenerate writes sqlmodel.sql.sqltypes.AutoString)
from alembic import op

# revision identifiers, used by Alembic.
revision: str = "0002_write_path"
down_revision: str | Sequence[str] | None = "0001_initial"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "event_counter",
        sa.Column("org_id", sa.Uuid(), nullable=False),
        sa.Column("last_sequence", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(
            ["org_id"],
            ["organization.id"],
        ),
        sa.PrimaryKeyConstraint("org_id"),
    )
    op.create_table(
        "idempotency_record",
        sa.Column("org_id", sa.Uuid(), nullable=False),
        sa.Column("key", sqlmodel.sql.sqltypes.AutoString(length=255), nullable=False),
        sa.Column("fingerprint", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
        sa.Column("completed", sa.Boolean(), nullable=False),
        sa.Column("locked_until", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=True),
        sa.Column("response_status", sa.Integer(), nullable=True),
        sa.Column("response_headers", sa.JSON(), nullable=False),
        sa.Column("response_body", sa.LargeBinary(), nullable=True),
        sa.Column("created_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
        sa.Column("expires_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["org_id"],
            ["organization.id"],
        ),
        sa.PrimaryKeyConstraint("org_id", "key"),
    )
    with op.batch_alter_table("idempotency_record", schema=None) as batch_op:
        batch_op.create_index("ix_idempotency_record_expires", ["expires_at"], unique=False)

    op.create_table(
        "event",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("org_id", sa.Uuid(), nullable=False),
        sa.Column("sequence", sa.BigInteger(), nullable=False),
        sa.Column("type", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
        sa.Column("occurred_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
        sa.Column("actor", sa.Uuid(), nullable=True),
        sa.Column("request_id", sqlmodel.sql.sqltypes.AutoString(length=200), nullable=True),
        sa.Column("subject_type", sqlmodel.sql.sqltypes.AutoString(length=32), nullable=False),
        sa.Column("subject_id", sa.Uuid(), nullable=False),
        sa.Column("workspace_id", sa.Uuid(), nullable=True),
        sa.Column("data", sa.JSON(), nullable=False),
        sa.ForeignKeyConstraint(
            ["actor"],
            ["api_key.id"],
        ),
        sa.ForeignKeyConstraint(
            ["org_id"],
            ["organization.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("org_id", "sequence", name="uq_event_org_sequence"),
    )
    with op.batch_alter_table("event", schema=None) as batch_op:
        batch_op.create_index("ix_event_org_workspace_sequence", ["org_id", "workspace_id", "sequence"], unique=False)

    with op.batch_alter_table("calculation_run", schema=None) as batch_op:
        batch_op.add_column(sa.Column("data_version", sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column("superseded", sa.Boolean(), server_default=sa.false(), nullable=False))
        batch_op.add_column(sa.Column("lease_owner", sqlmodel.sql.sqltypes.AutoString(length=100), nullable=True))
        batch_op.add_column(sa.Column("lease_expires_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=True))
        batch_op.create_index("ix_calculation_run_status_lease", ["status", "lease_expires_at"], unique=False)

    with op.batch_alter_table("report_pack", schema=None) as batch_op:
        batch_op.add_column(sa.Column("row_version", sa.Integer(), server_default="1", nullable=False))
        batch_op.add_column(sa.Column("audit_sequence", sa.BigInteger(), nullable=True))
        batch_op.add_column(sa.Column("lease_owner", sqlmodel.sql.sqltypes.AutoString(length=100), nullable=True))
        batch_op.add_column(sa.Column("lease_expires_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=True))
        batch_op.create_index("ix_report_pack_status_lease", ["status", "lease_expires_at"], unique=False)

    with op.batch_alter_table("workspace", schema=None) as batch_op:
        batch_op.add_column(sa.Column("data_version", sa.Integer(), server_default="0", nullable=False))
        batch_op.add_column(sa.Column("row_version", sa.Integer(), server_default="1", nullable=False))

    _fail_work_left_by_0_1_0()


def _fail_work_left_by_0_1_0() -> None:
    """0.1.0 had no leases: a run still ``running`` or a pack still being generated (``draft``
    without a hash) was left by a process that died, and would otherwise stay so forever. No
    0.1.0 process may run during the upgrade, so none of them is still at work."""
    message = "interrupted: left unfinished by a process of an earlier release"
    op.execute(
        sa.text(
            "UPDATE calculation_run SET status = 'failed', error_message = :message, completed_at = CURRENT_TIMESTAMP "
            "WHERE status = 'running'"
        ).bindparams(message=message)
    )
    stuck = "SELECT id FROM report_pack WHERE status = 'draft' AND pack_hash IS NULL"
    op.execute(
        sa.text(
            "DELETE FROM artifact_content WHERE artifact_id IN "
            f"(SELECT id FROM pack_artifact WHERE report_pack_id IN ({stuck}))"
        )
    )
    op.execute(
        sa.text(
            "UPDATE pack_artifact SET status = 'failed', error_message = :message, generated_at = NULL "
            f"WHERE report_pack_id IN ({stuck})"
        ).bindparams(message=message)
    )
    op.execute(sa.text("UPDATE report_pack SET status = 'failed' WHERE status = 'draft' AND pack_hash IS NULL"))


def downgrade() -> None:
    with op.batch_alter_table("workspace", schema=None) as batch_op:
        batch_op.drop_column("row_version")
        batch_op.drop_column("data_version")

    with op.batch_alter_table("report_pack", schema=None) as batch_op:
        batch_op.drop_index("ix_report_pack_status_lease")
        batch_op.drop_column("lease_expires_at")
        batch_op.drop_column("lease_owner")
        batch_op.drop_column("audit_sequence")
        batch_op.drop_column("row_version")

    with op.batch_alter_table("calculation_run", schema=None) as batch_op:
        batch_op.drop_index("ix_calculation_run_status_lease")
        batch_op.drop_column("lease_expires_at")
        batch_op.drop_column("lease_owner")
        batch_op.drop_column("superseded")
        batch_op.drop_column("data_version")

    with op.batch_alter_table("event", schema=None) as batch_op:
        batch_op.drop_index("ix_event_org_workspace_sequence")

    op.drop_table("event")
    with op.batch_alter_table("idempotency_record", schema=None) as batch_op:
        batch_op.drop_index("ix_idempotency_record_expires")

    op.drop_table("idempotency_record")
    op.drop_table("event_counter")
