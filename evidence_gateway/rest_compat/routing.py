"""One route per path, so a wrong method gets 405 with an Allow header naming EVERY method.

Domain modules register one Route per (path, method), e.g. GET and POST /v2/workspaces
separately. Starlette answers a wrong method from the first partial match, so DELETE
/v2/workspaces said ``Allow: HEAD, GET`` and forgot POST (RFC 9110 wants them all).
Merging the routes of a path into one dispatching Route fixes that for every module.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

Endpoint = Callable[[Request], Awaitable[Response]]


def _dispatcher(path: str, handlers: dict[str, Endpoint]) -> Endpoint:
    async def dispatch(request: Request) -> Response:
        return await handlers[request.method](request)

    dispatch.__name__ = "dispatch_" + "_".join(sorted(m.lower() for m in handlers))
    dispatch.__doc__ = f"{path}: " + ", ".join(sorted(handlers))
    return dispatch


def _merged(path: str, group: list[Route]) -> Route:
    handlers: dict[str, Endpoint] = {}
    for route in group:
        for method in route.methods or ():
            if method in handlers:
                raise ValueError(f"{method} {path} is registered twice")
            handlers[method] = route.endpoint
    return Route(path, _dispatcher(path, handlers), methods=sorted(handlers))


def merge_methods(routes: list[BaseRoute]) -> list[BaseRoute]:
    """Same routes, one per path, in the order each path first appears."""
    groups: dict[str, list[Route]] = {}
    for route in routes:
        if isinstance(route, Route):
            groups.setdefault(route.path, []).append(route)
    merged: list[BaseRoute] = []
    for route in routes:
        if not isinstance(route, Route):
            merged.append(route)
        elif groups[route.path][0] is route:
            group = groups[route.path]
            merged.append(route if len(group) == 1 else _merged(route.path, group))
    return merged
