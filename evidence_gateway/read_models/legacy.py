"""Legacy v1 reports (DESIGN.md §10): the record, and the v1 body with its successor links."""

from __future__ import annotations

import uuid
from datetime import date, datetime
from typing import Any, Literal

from pydantic import ConfigDict, Field

from evidence_gateway.read_models.base import EXTENSION, ReadModel, Uri


class LegacyReportRecord(ReadModel):
    """A legacy report's own fields: what its events carry."""

    id: uuid.UUID
    org_id: uuid.UUID
    title: str
    reporting_period_start: date | None
    reporting_period_end: date | None
    status: Literal["draft", "final"]
    total_co2e_kg: float = Field(ge=0)
    shipment_count: int = Field(ge=0)
    created_at: datetime
    updated_at: datetime


class LegacySuccessor(ReadModel):
    """The v2 workspace/pack that used this report, where one did (links are null otherwise)."""

    workspace_id: uuid.UUID | None
    workspace_url: Uri | None
    report_pack_id: uuid.UUID | None
    report_pack_url: Uri | None


class LegacyReport(LegacyReportRecord):
    """Legacy v1 report (fields: DESIGN.md §10; the contract does not show them)."""

    model_config = ConfigDict(json_schema_extra=EXTENSION)

    successor: LegacySuccessor

    @classmethod
    def render_view(cls, view: Any, base_url: str) -> dict[str, Any]:
        base = base_url.rstrip("/")
        ws, pack = view.successor_workspace_id, view.successor_report_pack_id
        return {
            **LegacyReportRecord.render(view.report),
            "successor": {
                "workspace_id": ws,
                "workspace_url": f"{base}/api/v2/workspaces/{ws}" if ws else None,
                "report_pack_id": pack,
                "report_pack_url": f"{base}/api/v2/packs/{pack}" if pack else None,
            },
        }
