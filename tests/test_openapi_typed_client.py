"""A typed REST client generated from the served OpenAPI document (openapi-python-client) runs a
flow against a real server: its enums come back as enum members, and artifact downloads as the
exact bytes (a PDF, a CSV over a signed link, an XLSX), not text decoded from a binary file.

openapi-python-client is in the ``test`` extra; it runs as ``python -m openapi_python_client``
of this interpreter, reads the document from the running server, and writes the package into the
test's temporary folder under a name of its own (no formatter hooks: nothing but the generator
runs). The generated code needs httpx, attrs and python-dateutil, which the environment has.
"""

from __future__ import annotations

import asyncio
import enum
import hashlib
import importlib
import inspect
import json
import sys
import uuid
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from starlette.applications import Starlette

from tests.live_server import served

pytestmark = pytest.mark.slow


@pytest.fixture
async def base_url(app: Starlette) -> AsyncIterator[str]:
    """The app served by uvicorn on a free port: the generator and the client talk HTTP to it."""
    async with served(app) as host_port:
        yield f"http://{host_port}"


async def _generate(document_url: str, folder: Path, package: str) -> str:
    """Run the generator (asynchronously: the server answering it runs on this loop); its output."""
    config = folder / "openapi-python-client.json"
    config.write_text(json.dumps({"package_name_override": package, "post_hooks": []}))
    args = ["generate", "--url", document_url, "--meta", "none", "--fail-on-warning"]
    args += ["--config", str(config), "--output-path", str(folder / package)]
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "openapi_python_client",
        *args,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    output, _ = await asyncio.wait_for(proc.communicate(), 300)
    text = output.decode(errors="replace")
    assert proc.returncode == 0, f"openapi-python-client failed:\n{text}"
    return text


@pytest.fixture
def package_folder(tmp_path: Path) -> Iterator[tuple[Path, str]]:
    """Where the client goes and its (unique) package name; the import is undone afterwards."""
    package = f"evidence_rest_client_{uuid.uuid4().hex[:12]}"
    sys.path.insert(0, str(tmp_path))
    try:
        yield tmp_path, package
    finally:
        sys.path.remove(str(tmp_path))
        for name in [n for n in sys.modules if n == package or n.startswith(f"{package}.")]:
            del sys.modules[name]


async def generated_client(base_url: str, package_folder: tuple[Path, str]) -> ModuleType:
    folder, package = package_folder
    output = await _generate(f"{base_url}/api/openapi.json", folder, package)
    assert "warning" not in output.lower(), output
    return importlib.import_module(package)


def _enums(models: ModuleType) -> list[type[enum.Enum]]:
    return [c for _, c in inspect.getmembers(models, inspect.isclass) if issubclass(c, enum.Enum)]


# SQLite only: what this proves is the typed client made from the OpenAPI document (enum classes,
# exact bytes), and the document is the same whatever the database; the flow's REST answers are
# proven on PostgreSQL too by the packs, downloads and calculations tests. Generating the client
# costs seconds, so it is paid once.
@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
async def test_generated_rest_client_reads_enums_and_downloads_exact_bytes(
    base_url: str, package_folder: tuple[Path, str], key_a: str
) -> None:
    root = await generated_client(base_url, package_folder)
    name = root.__name__
    m: Any = importlib.import_module(f"{name}.models")
    workspaces: Any = importlib.import_module(f"{name}.api.workspaces")
    calculations: Any = importlib.import_module(f"{name}.api.calculations")
    packs: Any = importlib.import_module(f"{name}.api.packs")
    evidence: Any = importlib.import_module(f"{name}.api.evidence")
    for module in ("create_workspace", "register_import"):
        importlib.import_module(f"{name}.api.workspaces.{module}")
    for module in ("get_pack", "list_pack_artifacts", "generate_pack", "download_artifact", "record_approval"):
        importlib.import_module(f"{name}.api.packs.{module}")
    importlib.import_module(f"{name}.api.calculations.calculate_workspace")
    importlib.import_module(f"{name}.api.evidence.create_evidence_item")

    # One class per enum: an optional enum is Optional[that class], never a class per branch.
    values = Counter(frozenset(member.value for member in cls) for cls in _enums(m))
    assert [set(v) for v, n in values.items() if n > 1] == []
    assert {"TransportMode", "DistanceType", "FuelType", "VerificationStatus", "ArtifactType"} <= {
        c.__name__ for c in _enums(m)
    }
    assert [t.value for t in m.ArtifactType] == sorted(
        ["summary_pdf", "shipment_csv", "shipment_xlsx", "machine_json", "methodology_statement",
         "evidence_register", "quality_report", "audit_trail"]
    )  # fmt: skip

    client = root.AuthenticatedClient(base_url=f"{base_url}/api", token=key_a, raise_on_unexpected_status=True)
    async with client as c:
        ws = (await workspaces.create_workspace.asyncio(client=c, body=m.CreateWorkspaceBody(name="Typed REST"))).data
        assert ws.status is m.WorkspaceStatus.DRAFT and isinstance(ws.id, uuid.UUID)
        rows = [
            m.ShipmentRow(external_id="R-1", mode=m.TransportMode.ROAD, distance_km=420, mass_tonnes=12,
                          distance_type=m.DistanceType.ACTUAL),
            m.ShipmentRow(external_id="R-2", mode=m.TransportMode.RAIL, distance_km=900, mass_tonnes=30,
                          fuel_type=None, distance_source=m.DistanceSource.MODELLED),
        ]  # fmt: skip
        body = m.RegisterImportBody(source_row_count=2, source_filename="q1.csv", shipments=rows)
        batch = (await workspaces.register_import.asyncio(ws.id, client=c, body=body)).data
        assert batch.source_row_count == 2
        calc = (await calculations.calculate_workspace.asyncio(ws.id, client=c, body=m.CalculateWorkspaceBody())).data
        assert calc.calculation_run.status is m.RunStatus.COMPLETED
        created = await packs.generate_pack.asyncio_detailed(ws.id, client=c, body=m.GeneratePackBody())
        assert created.status_code == 201, created.content
        pack_id = created.parsed.data.id

        # The pack detail with its enums parsed: the contract's eight artifact types.
        pack = (await packs.get_pack.asyncio(pack_id, client=c)).data
        assert pack.status is m.PackStatus.GENERATED
        assert pack.calculation_run.status is m.RunStatus.COMPLETED
        assert all(isinstance(a.artifact_type, m.ArtifactType) for a in pack.artifacts) and len(pack.artifacts) == 8
        assert all(a.status is m.ArtifactStatus.GENERATED for a in pack.artifacts)
        listed = (await packs.list_pack_artifacts.asyncio(pack_id, client=c)).data
        assert [a.artifact_type for a in listed] == [a.artifact_type for a in pack.artifacts]
        assert len(pack.ileap_shipment_footprints_sha256) == 64

        step = m.RecordApprovalBody(action_type=m.ApprovalActionType.REQUESTED)
        approval = (await packs.record_approval.asyncio(pack_id, client=c, body=step)).data
        assert (approval.status_before, approval.status_after) == (m.PackStatus.GENERATED, m.PackStatus.IN_REVIEW)
        item = m.CreateEvidenceItemBody(
            evidence_type=m.EvidenceType.FUEL_RECEIPT,
            title="Diesel",
            file_name="d.pdf",
            file_url="https://files.example/d.pdf",
            workspace_id=ws.id,
            verification_status=m.VerificationStatus.VERIFIED,
        )
        stored = (await evidence.create_evidence_item.asyncio(client=c, body=item)).data
        assert (stored.verification_status, stored.attachment_scope) == (
            m.VerificationStatus.VERIFIED,
            m.AttachmentScope.WORKSPACE,
        )

        by_type = {a.artifact_type: a for a in listed}
        # Links carry the configured public base URL (http://testserver here): the path is what counts.
        plain = httpx.AsyncClient(base_url=base_url, headers={"Authorization": f"Bearer {key_a}"})
        async with plain:
            for kind in (m.ArtifactType.SUMMARY_PDF, m.ArtifactType.SHIPMENT_XLSX):
                artifact = by_type[kind]
                got = await packs.download_artifact.asyncio_detailed(artifact.id, client=c)
                await _same_bytes(plain, artifact, got)

            # A signed link needs no key: the generated client without a token, the link's parameters.
            csv_artifact = by_type[m.ArtifactType.SHIPMENT_CSV]
            query = parse_qs(urlsplit(csv_artifact.signed_download_url).query)
            async with root.Client(base_url=f"{base_url}/api") as anonymous:
                got = await packs.download_artifact.asyncio_detailed(
                    csv_artifact.id,
                    client=anonymous,
                    expires=int(query["expires"][0]),
                    signature=query["signature"][0],
                )
            await _same_bytes(plain, csv_artifact, got)


async def _same_bytes(plain: httpx.AsyncClient, artifact: Any, got: Any) -> None:
    """The typed client's download is the file: its bytes, their SHA-256, the plain HTTP download."""
    assert got.status_code == 200
    content = got.parsed.payload.read()
    assert isinstance(content, bytes)
    assert hashlib.sha256(content).hexdigest() == artifact.content_sha256
    assert len(content) == artifact.size_bytes
    direct = await plain.get(urlsplit(artifact.file_url).path)
    assert direct.status_code == 200 and direct.content == content
    assert got.headers["content-type"] == artifact.content_type == direct.headers["content-type"]
    if artifact.content_type == "application/pdf":
        assert content.startswith(b"%PDF-")
    if artifact.content_type.startswith("application/vnd.openxmlformats"):
        assert content.startswith(b"PK\x03\x04")
