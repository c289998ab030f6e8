"""A calculation's bulk rows: the shipments it reads and the one result per shipment it stores.

Both go through the driver directly, on the session's own connection (so in the run's
transaction): SQLAlchemy's per-value bind processing cost ~1.6 s per 50,000 rows on SQLite;
sqlite3 executemany / asyncpg COPY take a tenth of that.

Columns are bound by name to the engine's records: the shipment columns read are
``ShipmentInput``'s fields, the result columns written are ``RowResult``'s fields after the
ids this module adds (``tests/test_store_boundary.py`` ties both to the tables).
"""

from __future__ import annotations

import uuid
from datetime import date

from sqlalchemy.ext.asyncio import AsyncSession

from evidence_gateway.calculation import RowResult, ShipmentInput
from evidence_gateway.store.db import Database, driver_connection

INSERT_CHUNK = 5_000

SHIPMENT_COLUMNS: tuple[str, ...] = ShipmentInput._fields
# The ids each stored result gets here, then the engine's result fields by name.
EMISSION_IDS: tuple[str, ...] = ("id", "calculation_run_id", "org_id")
EMISSION_COLUMNS: tuple[str, ...] = (*EMISSION_IDS, *RowResult._fields)

_ROW_SQL = (
    f"SELECT {', '.join('s.' + name for name in SHIPMENT_COLUMNS)} FROM shipment s "
    "JOIN import_batch b ON b.id = s.import_batch_id "
    "WHERE s.workspace_id = {p1} AND s.org_id = {p2} ORDER BY b.created_at, b.id, s.row_index"
)
_SQLITE_ROWS = _ROW_SQL.format(p1="?", p2="?")
_POSTGRES_ROWS = _ROW_SQL.format(p1="$1", p2="$2")
_SQLITE_INSERT = (
    f"INSERT INTO shipment_emission ({', '.join(EMISSION_COLUMNS)}) VALUES ({', '.join('?' * len(EMISSION_COLUMNS))})"
)
# sqlite3 binds uuids as the hex text SQLAlchemy stores: the factor's id is the engine's
# uuid.UUID (a shipment's id is read back as hex text already, see read_shipments).
_DATE_AT = SHIPMENT_COLUMNS.index("shipment_date")
_FACTOR_AT = RowResult._fields.index("factor_id")


async def read_shipments(
    db: Database, session: AsyncSession, org_id: uuid.UUID, workspace_id: uuid.UUID
) -> list[ShipmentInput]:
    """The workspace's shipment rows in import order (ids stay in the driver's form: hex text on
    SQLite), in the session's transaction."""
    driver = await driver_connection(session)
    if db.is_sqlite:
        cursor = await driver.execute(_SQLITE_ROWS, (workspace_id.hex, org_id.hex))
        fetched = await cursor.fetchall()
        await cursor.close()
        # sqlite3 hands back the DATE column as text; the engine compares dates.
        at = _DATE_AT
        return [
            ShipmentInput._make((*r[:at], date.fromisoformat(r[at]) if r[at] else None, *r[at + 1 :])) for r in fetched
        ]
    return [ShipmentInput._make(r) for r in await driver.fetch(_POSTGRES_ROWS, workspace_id, org_id)]


async def insert_results(
    db: Database, session: AsyncSession, org_id: uuid.UUID, run_id: uuid.UUID, rows: list[RowResult]
) -> None:
    """One stored result per shipment row, in chunks, in the session's transaction."""
    driver = await driver_connection(session)
    if db.is_sqlite:
        run_hex, org_hex, at = run_id.hex, org_id.hex, _FACTOR_AT
        for start in range(0, len(rows), INSERT_CHUNK):
            await driver.executemany(
                _SQLITE_INSERT,
                [
                    (uuid.uuid4().hex, run_hex, org_hex, *r[:at], _hex(r.factor_id), *r[at + 1 :])
                    for r in rows[start : start + INSERT_CHUNK]
                ],
            )
        return
    for start in range(0, len(rows), INSERT_CHUNK):
        await driver.copy_records_to_table(
            "shipment_emission",
            records=[(uuid.uuid4(), run_id, org_id, *r) for r in rows[start : start + INSERT_CHUNK]],
            columns=EMISSION_COLUMNS,
        )


def _hex(value: uuid.UUID | None) -> str | None:
    return value.hex if value is not None else None
