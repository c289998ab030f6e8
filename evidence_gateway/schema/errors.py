"""GraphQL error shaping: domain errors keep their code, everything else is masked."""

from __future__ import annotations

import logging
from typing import Any

from graphql import GraphQLError

from evidence_gateway.errors import DomainError

log = logging.getLogger("evidence_gateway.graphql")

INTERNAL_MESSAGE = "Internal server error"


def format_error(error: GraphQLError) -> dict[str, Any]:
    """``errors[]`` entry with ``extensions.code``; internal details stay in the server log."""
    original = error.original_error
    formatted: dict[str, Any] = dict(error.formatted)
    if isinstance(original, DomainError):
        formatted["message"] = original.message
        formatted["extensions"] = {**original.details, "code": original.graphql_code}
    elif original is None or error.path is None:
        # Syntax, validation and variable-coercion errors: the document is at fault.
        formatted["extensions"] = {**(error.extensions or {}), "code": "BAD_USER_INPUT"}
    else:
        formatted["message"] = INTERNAL_MESSAGE
        formatted["extensions"] = {"code": "INTERNAL_SERVER_ERROR"}
    return formatted


def log_unexpected(errors: list[GraphQLError]) -> None:
    for error in errors:
        original = error.original_error
        if original is not None and error.path is not None and not isinstance(original, DomainError):
            log.error("GraphQL resolver failed at %s", error.path, exc_info=original)


def http_status_for(errors: list[dict[str, Any]]) -> int | None:
    """A request refused for its credentials answers 401, as on the REST side."""
    codes = {e.get("extensions", {}).get("code") for e in errors}
    return 401 if "UNAUTHENTICATED" in codes else None
