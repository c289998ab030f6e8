"""GraphQL error shaping: domain errors keep their code, everything else is masked."""

from __future__ import annotations

import logging
import re
from typing import Any, Final

from graphql import GraphQLError, GraphQLSyntaxError

from evidence_gateway.core.jsoncodec import dumps
from evidence_gateway.errors import DomainError

log = logging.getLogger("evidence_gateway.graphql")

INTERNAL_MESSAGE = "Internal server error"

# A document that is not GraphQL, one that does not fit the schema, and one over a limit are
# the client's program at fault; BAD_USER_INPUT is kept for values (variables, arguments) a
# user may have typed. Clients branch on the difference.
PARSE_FAILED: Final = "GRAPHQL_PARSE_FAILED"
VALIDATION_FAILED: Final = "GRAPHQL_VALIDATION_FAILED"
TOO_COMPLEX: Final = "QUERY_TOO_COMPLEX"

# graphql-core's parser refuses an over-long or over-nested document as a syntax error; those are limits.
_PARSER_LIMITS = ("tokens. Parsing aborted", "nested too deeply")
_SUGGESTION = re.compile(r" ?Did you mean [^?]*\?")
# A document error's message quotes the literal it refuses (graphql-core prints the whole value):
# over this many characters, only its start and end are kept, so a large or deeply nested literal
# is never echoed back whole, once per error.
MAX_MESSAGE_CHARS = 300
_HEAD, _TAIL = 200, 80


def format_error(error: GraphQLError, *, before_execution: bool = False, suggestions: bool = True) -> dict[str, Any]:
    """``errors[]`` entry with ``extensions.code``; internal details stay in the server log.

    ``before_execution``: the error came from parsing or validating the document (the view
    knows; an error object does not). ``suggestions`` off drops "Did you mean ...?", which
    would otherwise spell out the schema when introspection is switched off.
    """
    original = error.original_error
    formatted: dict[str, Any] = dict(error.formatted)
    if isinstance(original, DomainError):
        formatted["message"] = original.message
        formatted["extensions"] = {**original.details, "code": original.graphql_code}
    elif original is None or error.path is None:
        formatted["extensions"] = {**(error.extensions or {}), "code": _document_code(error, before_execution)}
        formatted["message"] = excerpt(formatted["message"])
    else:
        formatted["message"] = INTERNAL_MESSAGE
        formatted["extensions"] = {"code": "INTERNAL_SERVER_ERROR"}
    if not suggestions:
        formatted["message"] = _SUGGESTION.sub("", formatted["message"])
    return formatted


def excerpt(message: str) -> str:
    """The message, or its start and end with the middle elided when it is long."""
    if len(message) <= MAX_MESSAGE_CHARS:
        return message
    return f"{message[:_HEAD]} … ({len(message) - _HEAD - _TAIL} characters elided) … {message[-_TAIL:]}"


def within_budget(errors: list[dict[str, Any]], budget: int, extra_per_error: int = 0) -> list[dict[str, Any]]:
    """The first errors whose JSON fits ``budget`` bytes (each counted with ``extra_per_error``,
    what is added to it later: the request id), and one more saying how many were left out."""
    kept: list[dict[str, Any]] = []
    spent = 0
    for error in errors:
        spent += len(dumps(error)) + 1 + extra_per_error
        if spent > budget and kept:
            omitted = len(errors) - len(kept)
            kept.append(
                {
                    "message": f"{omitted} further errors omitted: the answer to a request is kept near its size.",
                    "extensions": {"code": kept[-1].get("extensions", {}).get("code", VALIDATION_FAILED)},
                }
            )
            break
        kept.append(error)
    return kept


def _document_code(error: GraphQLError, before_execution: bool) -> str:
    """Parse, validation, limit or (during execution) variable-coercion error."""
    if isinstance(error, GraphQLSyntaxError):
        return TOO_COMPLEX if any(limit in error.message for limit in _PARSER_LIMITS) else PARSE_FAILED
    tagged = (error.extensions or {}).get("code")
    if isinstance(tagged, str):
        return tagged
    return VALIDATION_FAILED if before_execution else "BAD_USER_INPUT"


def log_unexpected(errors: list[GraphQLError]) -> None:
    for error in errors:
        original = error.original_error
        if original is not None and error.path is not None and not isinstance(original, DomainError):
            log.error("GraphQL resolver failed at %s", error.path, exc_info=original)


def unauthenticated(errors: list[dict[str, Any]]) -> bool:
    """Some field was refused for want of a valid key (the view adds ``WWW-Authenticate``)."""
    return any(e.get("extensions", {}).get("code") == "UNAUTHENTICATED" for e in errors)
