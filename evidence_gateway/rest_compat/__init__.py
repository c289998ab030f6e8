"""REST transport: /api/v2 (contract) and /api/v1 (legacy), thin over the resolvers."""

from starlette.routing import BaseRoute

from evidence_gateway.rest_compat import (
    calculations,
    events,
    evidence,
    legacy,
    openapi,
    packs,
    sharing,
    tlog,
    webhook_endpoints,
    webhooks,
    workspaces,
)
from evidence_gateway.rest_compat.routing import merge_methods

routes: list[BaseRoute] = [*workspaces.routes, *calculations.routes, *legacy.routes, *openapi.routes]
routes += [*evidence.routes, *webhooks.routes, *webhook_endpoints.routes, *packs.routes, *events.routes]
routes += [*tlog.routes, *sharing.routes]
# One Route per path: a wrong method then gets 405 with an Allow header listing them all.
routes = merge_methods(routes)

# Outside /api: the instance's public keys (docs/verification.md).
well_known: list[BaseRoute] = list(tlog.well_known)

__all__ = ["routes", "well_known"]
