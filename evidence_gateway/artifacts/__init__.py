"""Artifact renderers: one module per artifact family, pure functions from plain data to bytes.

Each module exports ``render(data, rows, out)`` (writes into a binary sink), ``CONTENT_TYPE``,
``SUFFIX`` (file name ending) and ``NEEDS_ROWS`` (whether it reads the shipment rows, which
the caller streams from the database for that artifact alone).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cache
from types import ModuleType
from typing import BinaryIO

from evidence_gateway.artifacts.data import PackData, Rows
from evidence_gateway.models import ArtifactType

Renderer = Callable[[PackData, Rows, BinaryIO], None]


@dataclass(frozen=True, slots=True)
class ArtifactSpec:
    artifact_type: ArtifactType
    content_type: str
    suffix: str
    needs_rows: bool
    render: Renderer

    def file_name(self, workspace_name: str, version_number: int) -> str:
        return f"{slug(workspace_name)}-v{version_number}-{self.suffix}"


def _spec(kind: ArtifactType, module: ModuleType) -> ArtifactSpec:
    return ArtifactSpec(kind, module.CONTENT_TYPE, module.SUFFIX, module.NEEDS_ROWS, module.render)


@cache
def specs() -> dict[ArtifactType, ArtifactSpec]:
    """Every renderer, in ArtifactType declaration order (the order of pack_hash); one dict,
    built at the first pack. The PDF and XLSX renderers load reportlab (with Pillow) and
    xlsxwriter, about 13 MB resident that a process answering reads and writes never needs; the
    others (the iLEAP and ISO report code among them) about 0.3 MB more."""
    from evidence_gateway.artifacts import (
        audit_trail,
        evidence_register,
        ileap,
        machine_json,
        methodology_statement,
        quality_report,
        shipments_csv,
        shipments_xlsx,
        summary_pdf,
    )

    built = {
        ArtifactType.summary_pdf: _spec(ArtifactType.summary_pdf, summary_pdf),
        ArtifactType.shipment_csv: _spec(ArtifactType.shipment_csv, shipments_csv),
        ArtifactType.shipment_xlsx: _spec(ArtifactType.shipment_xlsx, shipments_xlsx),
        ArtifactType.machine_json: _spec(ArtifactType.machine_json, machine_json),
        ArtifactType.methodology_statement: _spec(ArtifactType.methodology_statement, methodology_statement),
        ArtifactType.evidence_register: _spec(ArtifactType.evidence_register, evidence_register),
        ArtifactType.quality_report: _spec(ArtifactType.quality_report, quality_report),
        ArtifactType.audit_trail: _spec(ArtifactType.audit_trail, audit_trail),
        ArtifactType.ileap_shipment_footprints: _spec(ArtifactType.ileap_shipment_footprints, ileap),
    }
    assert list(built) == list(ArtifactType)
    return built


def __getattr__(name: str) -> dict[ArtifactType, ArtifactSpec]:
    """``SPECS``: ``specs()`` under the name it had when it was built at import."""
    if name == "SPECS":
        return specs()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def slug(name: str) -> str:
    """ASCII file-name stem from a workspace name (Content-Disposition stays plain)."""
    cleaned = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")[:60].strip("-")
    return cleaned or "workspace"


def pack_hash(content_hashes: Iterable[str]) -> str:
    """SHA-256 over the artifacts' SHA-256 hex digests, concatenated in ArtifactType order."""
    return hashlib.sha256("".join(content_hashes).encode("ascii")).hexdigest()


__all__ = ["ArtifactSpec", "PackData", "Rows", "pack_hash", "slug", "specs"]
