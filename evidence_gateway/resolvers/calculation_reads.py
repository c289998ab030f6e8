"""Reading calculation runs and quality assessments through their repositories: what both
transports and the DataLoaders ask."""

from __future__ import annotations

import logging
import uuid
from typing import Any

from evidence_gateway.core.context import Ctx
from evidence_gateway.errors import NotFound
from evidence_gateway.resolvers.list_queries import CALCULATION_RUNS, parse_list_query
from evidence_gateway.resolvers.pagination import Page, PageParams
from evidence_gateway.resolvers.validation import parse_id
from evidence_gateway.resolvers.workspaces import (
    get_workspace,
)
from evidence_gateway.store.record_types import CalculationRunRecord, DataQualityAssessmentRecord
from evidence_gateway.store.repositories.calculations import AssessmentRepository, CalculationRunRepository

log = logging.getLogger(__name__)


async def get_run(ctx: Ctx, run_id: Any) -> CalculationRunRecord:
    """One run of the caller's organisation (the Location of an accepted calculation)."""
    found = await CalculationRunRepository(ctx).get(parse_id(run_id, "calculation run"))
    if found is None:
        raise NotFound("calculation run not found", resource="calculation_run", id=str(run_id))
    return found


async def assessment_of_run(ctx: Ctx, run_id: uuid.UUID) -> DataQualityAssessmentRecord | None:
    return await AssessmentRepository(ctx).of_run(run_id)


# ---- reads ------------------------------------------------------------------------------------


async def list_calculation_runs(
    ctx: Ctx, params: PageParams, filters: Any = None, order: Any = None
) -> Page[CalculationRunRecord]:
    """Every run of the caller's workspaces, newest first (or in ``order``), narrowed by
    ``filters`` (list_queries.CALCULATION_RUNS)."""
    query = parse_list_query(CALCULATION_RUNS, filters, order)
    return await CalculationRunRepository(ctx).page(params, query)


async def get_quality(ctx: Ctx, workspace_id: Any) -> DataQualityAssessmentRecord:
    """Latest assessment of the workspace; 404 before the first completed run."""
    workspace = await get_workspace(ctx, workspace_id)
    found = await AssessmentRepository(ctx).latest_of_workspace(workspace.id)
    if found is None:
        raise NotFound("no quality assessment yet", resource="quality_assessment", workspace_id=str(workspace.id))
    return found


async def runs_by_ids(ctx: Ctx, ids: list[uuid.UUID]) -> dict[uuid.UUID, CalculationRunRecord]:
    return await CalculationRunRepository(ctx).get_many(ids)


async def runs_by_workspace_ids(ctx: Ctx, ids: list[uuid.UUID]) -> dict[uuid.UUID, list[CalculationRunRecord]]:
    """Every run of each workspace, newest first."""
    return await CalculationRunRepository(ctx).of_workspaces(ids)


async def assessments_by_run_ids(ctx: Ctx, ids: list[uuid.UUID]) -> dict[uuid.UUID, DataQualityAssessmentRecord]:
    return await AssessmentRepository(ctx).of_runs(ids)
