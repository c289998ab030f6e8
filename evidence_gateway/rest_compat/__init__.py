"""REST transport: /api/v2 (contract) and /api/v1 (legacy), thin over the resolvers."""

from starlette.routing import BaseRoute

from evidence_gateway.rest_compat import (
    calculations,
    events,
    evidence,
    legacy,
    openapi,
    packs,
    webhook_endpoints,
    webhooks,
    workspaces,
)
from evidence_gateway.rest_compat.routing import merge_methods

routes: list[BaseRoute] = [*workspaces.routes, *calculations.routes, *legacy.routes, *openapi.routes]
routes += [*evidence.routes, *webhooks.routes, *webhook_endpoints.routes, *packs.routes, *events.routes]
# One Route per path: a wrong method then gets 405 with an Allow header listing them all.
routes = merge_methods(routes)

__all__ = ["routes"]
