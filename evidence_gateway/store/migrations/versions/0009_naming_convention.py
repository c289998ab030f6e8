"""One name per constraint, one stored form per timestamp

Constraint names: a new database (built from the models) and a migrated one named their
constraints differently (PostgreSQL's defaults, SQLite's none, or a revision's own), so a
revision that drops a constraint by name failed on one of them (0003's downgrade did). The
models now carry a naming convention (models/base.py, NAMING_CONVENTION); this renames every
primary key, foreign key and unique constraint to the convention's name, whichever way the
database was made. PostgreSQL renames in place; SQLite, which cannot rename a constraint,
rebuilds each table whose names differ (batch mode).

Stored forms on SQLite: rows created by the driver-level insert of a create were stored with a
"+00:00" (and without ".000000" at a whole second), where SQLAlchemy stores
"YYYY-MM-DD HH:MM:SS.ffffff" in UTC; a revision's CURRENT_TIMESTAMP stored no fraction. Text
that is one instant must be one string for comparisons and sorting to be right: every such
value is rewritten in SQLAlchemy's form. JSON columns are now written in the API's one
encoding (compact, as the event log always was): older rows are rewritten so. PostgreSQL
stores timestamptz; its json values, compared as documents, are left as they are.

The downgrade gives back the names the earlier revisions expect (on SQLite, the two foreign
keys 0003 drops by name; its other constraints keep their names, which nothing before needs).
Timestamps stay in the one form, which the earlier code reads as well.

Revision ID: 0009_naming_convention
Revises: 0008_artifact_chunks
Create Date: 2026-11-26 15:00:00.000000
"""

import json
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any

import orjson
import sqlalchemy as sa
from alembic import op

revision: str = "0009_naming_convention"
down_revision: str | Sequence[str] | None = "0008_artifact_chunks"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Frozen here (the models may change later): the convention and the tables of revision 0008.
CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_N_name)s",
    "pk": "pk_%(table_name)s",
}
TABLES = (
    "api_key", "approval_action", "artifact_content", "artifact_content_chunk", "calculation_run",
    "data_quality_assessment", "emission_factor", "event", "event_counter", "evidence_item", "factor_version",
    "idempotency_record", "import_batch", "instance_secret", "legacy_report", "methodology_profile",
    "organization", "pack_artifact", "persisted_query", "report_pack", "shipment", "shipment_emission",
    "webhook_delivery", "webhook_endpoint", "webhook_message", "workspace",
)  # fmt: skip
# Unique constraints the models name themselves: the convention leaves them alone.
NAMED_UNIQUES = frozenset(
    {
        "uq_emission_factor_key",
        "uq_event_org_sequence",
        "uq_pack_artifact_type",
        "uq_report_pack_workspace_version",
        "uq_webhook_message_endpoint_event",
    }
)
# Foreign keys revision 0003 created with names of its own (and drops by them).
NAMED_BY_0003: dict[tuple[str, tuple[str, ...]], str] = {
    ("webhook_delivery", ("endpoint_id",)): "fk_webhook_delivery_endpoint",
    ("webhook_delivery", ("message_id",)): "fk_webhook_delivery_message",
}

# "YYYY-MM-DD HH:MM:SS.ffffff": what SQLAlchemy writes on SQLite.
_D = "[0-9]"
_CANONICAL_GLOB = f"{_D * 4}-{_D * 2}-{_D * 2} {_D * 2}:{_D * 2}:{_D * 2}.{_D * 6}"

Namer = Callable[[str, str, Sequence[str], str | None], str | None]


def _convention(table: str, kind: str, columns: Sequence[str], name: str | None) -> str | None:
    if kind == "uq" and name in NAMED_UNIQUES:
        return name
    if kind == "pk":
        return f"pk_{table}"
    return f"{kind}_{table}_{'_'.join(columns)}"


def _before(table: str, kind: str, columns: Sequence[str], name: str | None) -> str | None:
    """The names revisions 0001-0008 gave: PostgreSQL's defaults, unless a revision chose one."""
    if kind == "uq" and name in NAMED_UNIQUES:
        return name
    if kind == "fk" and (table, tuple(columns)) in NAMED_BY_0003:
        return NAMED_BY_0003[(table, tuple(columns))]
    if kind == "pk":
        return f"{table}_pkey"
    return f"{table}_{'_'.join(columns)}_{'fkey' if kind == 'fk' else 'key'}"


def _constraints(inspector: Any, table: str) -> list[tuple[str, list[str], str | None, dict[str, Any]]]:
    """(kind, columns, name, reflected entry) of the table's primary key, foreign keys and uniques."""
    found: list[tuple[str, list[str], str | None, dict[str, Any]]] = []
    pk = inspector.get_pk_constraint(table)
    if pk and pk.get("constrained_columns"):
        found.append(("pk", pk["constrained_columns"], pk.get("name"), pk))
    for fk in inspector.get_foreign_keys(table):
        found.append(("fk", fk["constrained_columns"], fk.get("name"), fk))
    for uq in inspector.get_unique_constraints(table):
        found.append(("uq", uq["column_names"], uq.get("name"), uq))
    return found


def _rename_postgresql(namer: Namer) -> None:
    bind = op.get_bind()
    inspector = sa.inspect(bind)
    present = set(inspector.get_table_names())
    for table in TABLES:
        if table not in present:
            continue
        for kind, columns, name, _entry in _constraints(inspector, table):
            wanted = namer(table, kind, columns, name)
            if name is not None and wanted is not None and wanted != name:
                op.execute(f'ALTER TABLE "{table}" RENAME CONSTRAINT "{name}" TO "{wanted}"')


def _rename_sqlite() -> None:
    """Rebuild each table whose constraints are not named by the convention. Reflecting with the
    convention names what was unnamed; a foreign key with another name is dropped and made again."""
    inspector = sa.inspect(op.get_bind())
    present = set(inspector.get_table_names())
    for table in TABLES:
        if table not in present:
            continue
        found = _constraints(inspector, table)
        if all(name == _convention(table, kind, cols, name) for kind, cols, name, _ in found):
            continue
        with op.batch_alter_table(table, recreate="always", naming_convention=CONVENTION) as batch:
            for kind, columns, name, entry in found:
                wanted = _convention(table, kind, columns, name)
                if name is None or wanted is None or name == wanted:
                    continue  # named by the convention on reflection
                if kind == "fk":
                    batch.drop_constraint(name, type_="foreignkey")
                    batch.create_foreign_key(
                        wanted,
                        entry["referred_table"],
                        columns,
                        entry["referred_columns"],
                        ondelete=(entry.get("options") or {}).get("ondelete"),
                    )
                elif kind == "uq":
                    batch.drop_constraint(name, type_="unique")
                    batch.create_unique_constraint(wanted, columns)
        # A primary key is reflected without the convention's name: name it in the rebuilt table.
        if _sqlite_pk_name(table) != f"pk_{table}":
            _name_sqlite_pk(table)


def _sqlite_pk_name(table: str) -> str | None:
    name: str | None = sa.inspect(op.get_bind()).get_pk_constraint(table).get("name")
    return name


def _name_sqlite_pk(table: str) -> None:
    columns = sa.inspect(op.get_bind()).get_pk_constraint(table)["constrained_columns"]
    with op.batch_alter_table(table, recreate="always", naming_convention=CONVENTION) as batch:
        batch.create_primary_key(f"pk_{table}", columns)


def _normalise_sqlite_times() -> None:
    bind = op.get_bind()
    inspector = sa.inspect(bind)
    present = set(inspector.get_table_names())
    for table in TABLES:
        if table not in present:
            continue
        for column in inspector.get_columns(table):
            if not isinstance(column["type"], sa.DateTime):
                continue
            name = column["name"]
            odd = bind.exec_driver_sql(
                f'SELECT rowid, "{name}" FROM "{table}" WHERE "{name}" IS NOT NULL AND "{name}" NOT GLOB ?',
                (_CANONICAL_GLOB,),
            ).all()
            for rowid, value in odd:
                fixed = _canonical(value)
                if fixed is not None:
                    bind.exec_driver_sql(f'UPDATE "{table}" SET "{name}" = ? WHERE rowid = ?', (fixed, rowid))


def _normalise_sqlite_json() -> None:
    """JSON columns in the API's one encoding (compact, as orjson writes it), which every path
    now writes; rows written before kept json.dumps's spaces."""
    bind = op.get_bind()
    inspector = sa.inspect(bind)
    present = set(inspector.get_table_names())
    for table in TABLES:
        if table not in present:
            continue
        for column in inspector.get_columns(table):
            if not isinstance(column["type"], sa.JSON):
                continue
            name = column["name"]
            rows = bind.exec_driver_sql(f'SELECT rowid, "{name}" FROM "{table}" WHERE "{name}" IS NOT NULL').all()
            for rowid, value in rows:
                try:
                    compact = orjson.dumps(json.loads(value), option=orjson.OPT_NON_STR_KEYS).decode()
                except (TypeError, ValueError):
                    continue  # not ours to judge: left as it is
                if compact != value:
                    bind.exec_driver_sql(f'UPDATE "{table}" SET "{name}" = ? WHERE rowid = ?', (compact, rowid))


def _canonical(value: object) -> str | None:
    """SQLAlchemy's SQLite form of the instant ``value`` names (naive text is UTC); None if unreadable."""
    try:
        parsed = datetime.fromisoformat(str(value))
    except ValueError:
        return None
    if parsed.tzinfo is not None:
        parsed = parsed.astimezone(UTC).replace(tzinfo=None)
    return parsed.isoformat(sep=" ", timespec="microseconds")


def upgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        _normalise_sqlite_times()
        _normalise_sqlite_json()
        _rename_sqlite()
    else:
        _rename_postgresql(_convention)


def downgrade() -> None:
    if op.get_bind().dialect.name != "sqlite":
        _rename_postgresql(_before)
        return
    with op.batch_alter_table("webhook_delivery", naming_convention=CONVENTION) as batch:
        for (_table, (column, *_)), name in NAMED_BY_0003.items():
            referred = "webhook_endpoint" if column == "endpoint_id" else "webhook_message"
            batch.drop_constraint(f"fk_webhook_delivery_{column}", type_="foreignkey")
            batch.create_foreign_key(name, referred, [column], ["id"], ondelete="SET NULL")
