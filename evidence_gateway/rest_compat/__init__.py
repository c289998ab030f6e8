"""REST transport: /api/v2 (contract) and /api/v1 (legacy), thin over the resolvers."""

from starlette.routing import BaseRoute

from evidence_gateway.rest_compat import openapi, workspaces

routes: list[BaseRoute] = [*workspaces.routes, *openapi.routes]

__all__ = ["routes"]
