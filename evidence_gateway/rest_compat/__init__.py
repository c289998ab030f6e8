"""REST transport: /api/v2 (contract) and /api/v1 (legacy), thin over the resolvers."""

from starlette.routing import BaseRoute

from evidence_gateway.rest_compat import workspaces

routes: list[BaseRoute] = [*workspaces.routes]

__all__ = ["routes"]
