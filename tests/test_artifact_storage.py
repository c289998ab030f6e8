"""How pack files are kept on PostgreSQL: consecutive uncompressed slices (migration 0008), which
the migration fills from, and returns to, the one-value layout without changing a byte."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from typing import Any

import pytest
import sqlalchemy as sa
from alembic import command

from evidence_gateway.store import migrate
from tests.conftest import PG_AVAILABLE, Api
from tests.test_migrations import _fresh_pg, _on
from tests.test_packs import calculated_workspace, generated

BEFORE_SLICES = "0007_keyset_indexes"


@pytest.fixture(params=["migrated", "created"])
def database_url(request: pytest.FixtureRequest) -> Iterator[str]:
    """A PostgreSQL database of its own, built by replaying every revision or by create_all (what
    start-up does on an empty database): both must store slices the same way."""
    if not PG_AVAILABLE:
        pytest.skip("no PostgreSQL on 127.0.0.1:5432")
    fresh = _fresh_pg()
    url = next(fresh)
    try:
        _on(url, lambda db: migrate.upgrade(db, replay=request.param == "migrated"))
        yield url
    finally:
        fresh.close()  # drops it


async def downloads(api: Api, artifacts: list[dict[str, Any]]) -> dict[str, str]:
    out = {}
    for a in artifacts:
        resp = await api.get(a["file_url"])
        assert resp.status_code == 200, resp.text
        out[a["id"]] = hashlib.sha256(resp.content).hexdigest()
    return out


async def test_files_move_between_layouts_unchanged(api: Api, database_url: str) -> None:
    rows = [{"external_id": f"S-{i}", "mode": "road", "distance_km": 100 + i, "mass_tonnes": 2.5} for i in range(6000)]
    ws = await calculated_workspace(api, rows=rows)
    pack = (await generated(api, ws["id"]))["data"]
    artifacts = (await api.get(f"/api/v2/packs/{pack['id']}/artifacts")).json()["data"]
    assert max(a["size_bytes"] for a in artifacts) > 1024 * 1024  # several slices
    # The ninth file, the iLEAP export, is linked from the pack (REST lists the contract's eight types).
    ileap = pack["ileap_shipment_footprints_url"]
    ileap_id = ileap.split("/")[-2]  # …/artifacts/{id}/download
    artifacts.append({"id": ileap_id, "file_url": ileap, "content_sha256": pack["ileap_shipment_footprints_sha256"]})
    expected = {a["id"]: a["content_sha256"] for a in artifacts}
    assert await downloads(api, artifacts) == expected

    def layout(conn: sa.Connection) -> tuple[str, int, int]:
        storage = conn.execute(
            sa.text(
                "SELECT attstorage::text FROM pg_attribute "
                "WHERE attrelid = 'artifact_content_chunk'::regclass AND attname = 'data'"
            )
        ).scalar_one()
        whole = conn.execute(sa.text("SELECT count(*) FROM artifact_content")).scalar_one()
        sliced = conn.execute(sa.text("SELECT count(DISTINCT artifact_id) FROM artifact_content_chunk")).scalar_one()
        return storage, whole, sliced

    assert await migrate.run_in_schema_transaction(database_url, layout) == ("e", 0, 9)  # e: uncompressed

    def back_to_one_value(conn: sa.Connection) -> dict[str, str]:
        command.downgrade(migrate.alembic_config(conn), BEFORE_SLICES)
        found = conn.execute(sa.text("SELECT artifact_id, encode(sha256(content), 'hex') FROM artifact_content"))
        return {str(artifact_id): digest for artifact_id, digest in found}

    assert await migrate.run_in_schema_transaction(database_url, back_to_one_value) == expected

    def forward(conn: sa.Connection) -> None:
        command.upgrade(migrate.alembic_config(conn), "head")

    await migrate.run_in_schema_transaction(database_url, forward)
    assert await migrate.run_in_schema_transaction(database_url, layout) == ("e", 0, 9)
    assert await downloads(api, artifacts) == expected
