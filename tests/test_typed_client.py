"""A typed client generated from schema.graphql (ariadne-codegen) runs the README flow against
a real server: create, import, calculate, pack, approve, then read back through a connection.

ariadne-codegen pins graphql-core below 3.3, which Strawberry needs, so it cannot live in our
environment: it runs from its own virtual environment under .typed-client/ (git-ignored,
created on first use, kept between runs). The generated package only needs httpx and
pydantic, which we have, and is imported from there.
"""

from __future__ import annotations

import fcntl
import importlib
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, date, datetime
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from starlette.applications import Starlette

from tests.live_server import served

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / ".typed-client"
CONFIG = "tests/typed_client/ariadne-codegen.toml"
CODEGEN = "ariadne-codegen==0.19.0"

pytestmark = pytest.mark.slow


def _generate() -> None:
    venv = OUT / "codegen-venv"
    generator = venv / "bin" / "ariadne-codegen"
    if not generator.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(venv / "bin" / "pip"), "install", "-q", CODEGEN], check=True)
    subprocess.run([str(generator), "--config", CONFIG, "client"], cwd=ROOT, check=True, capture_output=True)


@pytest.fixture(scope="session")
def evidence_client() -> Iterator[ModuleType]:
    """The client package, generated afresh from the committed schema.graphql."""
    OUT.mkdir(exist_ok=True)
    # pytest-xdist workers share the folder: one generates at a time.
    with (OUT / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        _generate()
        sys.path.insert(0, str(OUT))
        try:
            yield importlib.import_module("evidence_client")
        finally:
            sys.path.remove(str(OUT))


@pytest.fixture
async def server_url(app: Starlette) -> AsyncIterator[str]:
    """The app served by uvicorn on a free port: the client talks HTTP over a real socket."""
    async with served(app) as host_port:
        yield f"http://{host_port}/graphql"


async def test_generated_client_runs_the_readme_flow(
    evidence_client: ModuleType, server_url: str, key_a: str, key_b: str
) -> None:
    ec: Any = evidence_client
    headers = {"Authorization": f"Bearer {key_a}"}
    async with ec.EvidenceClient(url=server_url, headers=headers) as client:
        await _readme_flow(ec, client, server_url, key_b)


async def _readme_flow(ec: Any, client: Any, server_url: str, key_b: str) -> None:
    created = (
        await client.create_workspace(
            ec.CreateWorkspaceInput(name="EU road 2025", reporting_period_start=date(2025, 1, 1))
        )
    ).create_workspace
    # The documented scalar mappings: UUID -> uuid.UUID, Date -> date, DateTime -> aware datetime.
    assert isinstance(created.id, uuid.UUID) and created.reporting_period_start == date(2025, 1, 1)
    assert isinstance(created.created_at, datetime) and created.created_at.utcoffset() == UTC.utcoffset(None)
    assert created.status is ec.WorkspaceStatus.DRAFT

    rows = [
        ec.ShipmentRowInput(external_id="S-1", mode=ec.TransportMode.ROAD, distance_km=420, mass_tonnes=12),
        ec.ShipmentRowInput(
            external_id="S-2",
            mode=ec.TransportMode.RAIL,
            distance_km=900,
            mass_tonnes=30,
            distance_source=ec.DistanceSource.MODELLED,
        ),
    ]
    batch = (
        await client.register_import(
            created.id, ec.RegisterImportInput(source_row_count=2, source_filename="q1.csv", shipments=rows)
        )
    ).register_import
    assert (batch.workspace_id, batch.shipment_count) == (created.id, 2)

    calc = (
        await client.calculate_workspace(created.id, ec.CalculateWorkspaceInput(assumptions_snapshot={"note": "Q1"}))
    ).calculate_workspace
    assert calc.status is ec.WorkspaceStatus.CALCULATED
    assert (
        calc.calculation_run.status is ec.RunStatus.COMPLETED and calc.calculation_run.total_co_2_e_kg > 0
    )  # the generator splits digits: totalCo2eKg
    assert calc.calculation_run.assumptions_snapshot_json == {"note": "Q1"}

    generated = (await client.generate_pack(created.id)).generate_pack
    pack = generated.pack
    assert pack.status is ec.PackStatus.GENERATED and len(pack.artifacts) == generated.artifact_count == 9
    assert {a.status for a in pack.artifacts} == {ec.ArtifactStatus.GENERATED}

    steps = [(ec.ApprovalActionType.REQUESTED, ec.PackStatus.IN_REVIEW), (ec.ApprovalActionType.APPROVED,
             ec.PackStatus.APPROVED)]  # fmt: skip
    for action, after in steps:
        result = (await client.record_approval(pack.id, ec.RecordApprovalInput(action_type=action))).record_approval
        assert (result.report_pack_id, result.status_after) == (pack.id, after)

    page = (await client.workspaces_page(first=10)).workspaces_connection
    assert page.total_count == 1 and page.page_info.has_next_page is False
    (edge,) = page.edges
    assert edge.cursor == page.page_info.end_cursor
    assert (edge.node.id, edge.node.status) == (created.id, ec.WorkspaceStatus.APPROVED)
    assert edge.node.latest_pack.status is ec.PackStatus.APPROVED
    assert isinstance(edge.node.latest_pack.approved_at, datetime)
    read = (await client.pack_by_id(pack.id)).pack
    assert [a.action_type for a in read.approvals] == [step[0] for step in steps]

    # Another organisation's client sees nothing: a null lookup, an empty connection.
    async with ec.EvidenceClient(url=server_url, headers={"Authorization": f"Bearer {key_b}"}) as other:
        assert (await other.pack_by_id(pack.id)).pack is None
        assert (await other.workspaces_page(first=10)).workspaces_connection.total_count == 0
    # Refusals arrive as the client's GraphQL error, carrying our code and GraphQL's field path.
    with pytest.raises(ec.GraphQLClientGraphQLMultiError) as refused:
        await client.workspaces_page(first=101)
    (error,) = refused.value.errors
    assert error.extensions is not None and error.extensions.pop("request_id")  # tests/test_request_ids.py
    assert error.extensions == {"code": "BAD_USER_INPUT", "fields": {"first": "must be a whole number from 0 to 100"}}
