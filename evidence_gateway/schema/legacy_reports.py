"""GraphQL reads of the deprecated legacy v1 reports (their types live with the calculations that
use them, schema/calculations.py)."""

from __future__ import annotations

import uuid
from typing import Annotated

import strawberry
from strawberry.types import Info

from evidence_gateway.resolvers import connections, legacy
from evidence_gateway.resolvers.pagination import page_params
from evidence_gateway.schema.calculations import (
    LEGACY_DEPRECATION,
    LegacyReportPage,
    LegacyReportType,
    legacy_report_type,
)
from evidence_gateway.schema.common import LOOKUP_RULE, PageArg, PaginationMeta, PerPageArg, or_null
from evidence_gateway.schema.context import GraphQLContext
from evidence_gateway.schema.list_inputs import (
    FILTER_HELP,
    ORDER_HELP,
    LegacyReportFilter,
    LegacyReportOrder,
    filters_of,
    order_of,
)
from evidence_gateway.schema.relay import After, Before, Connection, First, Last, connection

GqlInfo = Info[GraphQLContext, None]


@strawberry.type
class Query:
    @strawberry.field(
        description=f"DEPRECATED: legacy v1 reports, newest first (or in orderBy's order), narrowed by filter, "
        f"by cursor. {LEGACY_DEPRECATION}",
        deprecation_reason=LEGACY_DEPRECATION,
    )
    async def legacy_reports_connection(
        self,
        info: GqlInfo,
        first: First = None,
        after: After = None,
        last: Last = None,
        before: Before = None,
        filter: Annotated[LegacyReportFilter | None, strawberry.argument(description=FILTER_HELP)] = None,
        order_by: Annotated[LegacyReportOrder | None, strawberry.argument(description=ORDER_HELP)] = None,
    ) -> Connection[LegacyReportType]:
        found = await connections.legacy_reports(
            info.context.ctx,
            filters_of(filter),
            order_of(order_by),
            first=first,
            after=after,
            last=last,
            before=before,
        )
        return connection(found, legacy_report_type)

    @strawberry.field(
        description=f"DEPRECATED: legacy v1 reports, newest first. {LEGACY_DEPRECATION}",
        deprecation_reason=LEGACY_DEPRECATION,
    )
    async def legacy_reports(self, info: GqlInfo, page: PageArg = 1, per_page: PerPageArg = 20) -> LegacyReportPage:
        result = await legacy.list_legacy_reports(info.context.ctx, page_params(page, per_page))
        items = [legacy_report_type(v) for v in result.items]
        return LegacyReportPage(items=items, pagination=PaginationMeta.of(result))

    @strawberry.field(
        description=f"One legacy v1 report; {LOOKUP_RULE}. {LEGACY_DEPRECATION}",
        deprecation_reason=LEGACY_DEPRECATION,
    )
    async def legacy_report(
        self, info: GqlInfo, id: Annotated[uuid.UUID, strawberry.argument(description="Legacy report id.")]
    ) -> LegacyReportType | None:
        found = await or_null(legacy.get_legacy_report(info.context.ctx, id))
        return None if found is None else legacy_report_type(found)


@strawberry.type
class Mutation:
    """Reads only (legacy reports are imported by the CLI)."""
