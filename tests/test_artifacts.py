"""Renderers alone: valid files of their type, byte-identical on a second render, rows streamed."""

from __future__ import annotations

import csv
import io
import json
import uuid
from collections.abc import Iterator
from datetime import UTC, date, datetime

import openpyxl
import pytest
from pypdf import PdfReader

from evidence_gateway.artifacts import SPECS, machine_json, pack_hash, slug
from evidence_gateway.artifacts.data import (
    SHIPMENT_COLUMNS,
    AuditEvent,
    EvidenceInfo,
    FactorInfo,
    MethodologyInfo,
    PackData,
    QualityInfo,
    RunInfo,
    ShipmentLine,
    WorkspaceInfo,
)
from evidence_gateway.models import ArtifactType

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
BATCH = uuid.UUID(int=7)


def sample(name: str = "Q1 freight — Nord/Süd 北京 & <co>") -> PackData:
    run_id = uuid.UUID(int=1)
    return PackData(
        workspace=WorkspaceInfo(uuid.UUID(int=2), name, "EXT|1", date(2026, 1, 1), date(2026, 3, 31)),
        run=RunInfo(
            id=run_id, status="completed", methodology_profile_id=uuid.UUID(int=3), factor_version_id=uuid.UUID(int=4),
            legacy_report_id=None, rerun_hash="ab" * 32, assumptions_snapshot={"load_factor": 0.7},
            created_at=T0, completed_at=T0, total_co2e_kg=1234.5, total_tonne_km=9876.0, shipment_count=3,
            totals_by_mode={"road": {"co2e_kg": 1000.0, "tonne_km": 8000.0, "shipment_count": 2},
                            "rail": {"co2e_kg": 234.5, "tonne_km": 1876.0, "shipment_count": 1}},
            api_key_id=uuid.UUID(int=5),
        ),
        quality=QualityInfo(
            id=uuid.UUID(int=6), coverage_score=75.0, primary_data_percent=33.33, secondary_data_percent=33.33,
            default_data_percent=33.34, modelled_data_percent=0.0, missing_required_fields_count=1,
            flagged_shipments_count=1,
            rules_triggered=[{"id": "missing_required_fields", "severity": "error", "count": 1, "message": "a|b"}],
            summary_text="Three of four rows usable.", assessed_at=T0,
        ),
        methodology=MethodologyInfo(
            profile_id=uuid.UUID(int=3), code="glec-wtw", name="GLEC WTW", description="Well-to-wheel.",
            boundary="WTW", factor_version_id=uuid.UUID(int=4), factor_version_code="fv1",
            factor_version_name="Factors 2025", factor_version_source="GLEC v3", factor_version_published_on=None,
            factors=[FactorInfo("mode", "road", "g/tkm", 100.0, 80.0, "GLEC", None)],
        ),
        legacy_report=None,
        evidence=[EvidenceInfo(
            id=uuid.UUID(int=8), evidence_type="fuel_receipt", title="Diesel, March", file_name="r.pdf",
            file_url="https://files.example/r.pdf", file_sha256=None, mime_type="application/pdf",
            issue_date=date(2026, 3, 2), valid_from=None, valid_to=None, source_system=None,
            verification_status="verified", attachment_scope="workspace", workspace_id=uuid.UUID(int=2),
            report_pack_id=None, shipment_id=None, notes="line\nbreak", uploaded_at=T0,
        )],
        audit=[AuditEvent(T0, "import_registered", uuid.UUID(int=5), "evk_abcdef", "import_batch", BATCH, "4 rows")],
    )  # fmt: skip


def lines(n: int) -> Iterator[ShipmentLine]:
    for i in range(n):
        missing = i % 4 == 3
        ok = not missing
        yield ShipmentLine(
            import_batch_id=BATCH, row_index=i, shipment_id=uuid.UUID(int=1000 + i), external_id=f"S-{i}",
            mode=None if missing else "road", origin="Rotterdam", destination="Köln", shipment_date=None,
            distance_km=420.5, distance_source="measured", distance_type=None, mass_tonnes=12.0, fuel_type=None,
            fuel_amount=None, vehicle_payload_tonnes=None, fuel_allocation_share=None,
            carrier_intensity_g_per_tkm=None, carrier_intensity_basis=None, carrier_intensity_distance_basis=None,
            carrier_intensity_category=None, loaded_distance_km=None, empty_distance_km=None,
            empty_running_share=None, electricity_country=None, included=ok,
            data_tier="default" if ok else None, data_category="secondary_default" if ok else None,
            distance_type_used="actual" if ok else None, activity_distance_km=420.5 if ok else None,
            tonne_km=5046.0 if ok else None, allocation_share=None, co2e_ttw_kg=409.6 if ok else None,
            co2e_wtt_kg=95.0 if ok else None, co2e_wtw_kg=504.6 if ok else None, co2e_kg=504.6 if ok else None,
            intensity_g_per_tkm=100.0 if ok else None, factor_id=None, estimated_co2e_ttw_kg=None,
            estimated_co2e_wtw_kg=None, flags=None if ok else "missing_required_fields", method_notes=None,
            actual_distance_km=420.5 if ok else None, emission_distance_km=420.5 if ok else None,
            emission_tonne_km=5046.0 if ok else None, distance_adjustment_factor=1.05 if ok else None,
            trip_fuel_amount=None,
        )  # fmt: skip


def render(kind: ArtifactType, data: PackData, n: int = 10) -> bytes:
    out = io.BytesIO()
    SPECS[kind].render(data, lines(n), out)
    return out.getvalue()


@pytest.mark.parametrize("kind", list(ArtifactType))
def test_every_renderer_is_deterministic(kind: ArtifactType) -> None:
    first, second = render(kind, sample()), render(kind, sample())
    assert first and first == second


@pytest.mark.parametrize("kind", list(ArtifactType))
def test_content_depends_on_the_input(kind: ArtifactType) -> None:
    changed = sample(name="Another workspace")
    if kind in (
        ArtifactType.evidence_register,
        ArtifactType.audit_trail,
        ArtifactType.shipment_csv,
        ArtifactType.ileap_shipment_footprints,
    ):
        changed = sample()
        changed.evidence.clear()
        changed.audit.clear()
        assert render(kind, sample(), 10) != render(kind, changed, 11)
        return  # these list records and rows, not the workspace name
    assert render(kind, sample()) != render(kind, changed)


def test_pdf_opens_and_reads() -> None:
    pdf = render(ArtifactType.summary_pdf, sample())
    assert pdf.startswith(b"%PDF")
    text = "".join(page.extract_text() for page in PdfReader(io.BytesIO(pdf)).pages)
    assert "Q1 freight" in text
    assert "road" in text and "rail" in text
    assert "Coverage score" in text


def test_csv_has_a_row_per_shipment() -> None:
    rows = list(csv.reader(io.StringIO(render(ArtifactType.shipment_csv, sample(), 25).decode())))
    assert rows[0] == list(SHIPMENT_COLUMNS)
    assert len(rows) == 26
    assert rows[1][SHIPMENT_COLUMNS.index("co2e_kg")] == "504.600000"  # computed: fixed 6 decimals
    assert rows[1][SHIPMENT_COLUMNS.index("distance_km")] == "420.5"  # input: as sent
    assert rows[4][SHIPMENT_COLUMNS.index("included")] == "false"
    assert rows[1][SHIPMENT_COLUMNS.index("destination")] == "Köln"


def test_xlsx_opens_with_both_sheets() -> None:
    book = openpyxl.load_workbook(io.BytesIO(render(ArtifactType.shipment_xlsx, sample(), 30)), read_only=True)
    assert book.sheetnames == ["Summary", "Shipments"]
    rows = list(book["Shipments"].iter_rows(values_only=True))
    assert list(rows[0]) == list(SHIPMENT_COLUMNS)
    assert len(rows) == 31
    assert rows[1][SHIPMENT_COLUMNS.index("co2e_kg")] == pytest.approx(504.6)
    assert book.properties.created == datetime(2026, 3, 1, 12, 0)


def test_machine_json_is_the_head_plus_rows() -> None:
    doc = json.loads(render(ArtifactType.machine_json, sample(), 12))
    assert doc["format"] == machine_json.FORMAT
    assert doc["workspace"]["name"].startswith("Q1 freight")
    assert doc["calculation_run"]["rerun_hash"] == "ab" * 32
    assert doc["quality_assessment"]["rules_triggered"][0]["id"] == "missing_required_fields"
    assert len(doc["shipments"]) == 12
    assert doc["shipments"][0]["co2e_kg"] == "504.600000"  # machine_json v2: decimal strings
    assert set(doc["shipments"][0]) == set(SHIPMENT_COLUMNS)
    empty = json.loads(render(ArtifactType.machine_json, sample(), 0))
    assert empty["shipments"] == []


def test_markdown_and_register_files() -> None:
    md = render(ArtifactType.methodology_statement, sample()).decode()
    assert md.startswith("# Methodology statement") and "GLEC v3" in md and '"load_factor": 0.7' in md
    quality = render(ArtifactType.quality_report, sample()).decode()
    assert "a\\|b" in quality  # pipes escaped inside the rules table
    register = list(csv.DictReader(io.StringIO(render(ArtifactType.evidence_register, sample()).decode())))
    assert register[0]["title"] == "Diesel, March" and register[0]["notes"] == "line\nbreak"
    audit = list(csv.DictReader(io.StringIO(render(ArtifactType.audit_trail, sample()).decode())))
    assert audit[0]["event"] == "import_registered" and audit[0]["occurred_at"] == "2026-03-01T12:00:00Z"


def test_rows_are_consumed_once_as_a_stream() -> None:
    consumed = 0

    def counting() -> Iterator[ShipmentLine]:
        nonlocal consumed
        for line in lines(1000):
            consumed += 1
            yield line

    for kind in (ArtifactType.shipment_csv, ArtifactType.shipment_xlsx, ArtifactType.machine_json):
        consumed = 0
        SPECS[kind].render(sample(), counting(), io.BytesIO())
        assert consumed == 1000


def test_pack_hash_and_names() -> None:
    digests = ["0" * 64, "f" * 64]
    assert pack_hash(digests) == pack_hash(list(digests))
    assert pack_hash(digests) != pack_hash(list(reversed(digests)))
    assert slug("Q1 freight — Nord/Süd") == "q1-freight-nord-s-d"
    assert slug("北京") == "workspace"
    assert SPECS[ArtifactType.summary_pdf].file_name("Q1", 3) == "q1-v3-summary.pdf"
