"""Checks on a GraphQL document's text before the lexer sees it: byte size, bracket nesting and
token count, decided from the text alone (never from white space or the server's stack depth).

graphql-core's pure-Python lexer and parser take ~10 ms to reach their own token limit and
recurse per nesting level, so these run first, for HTTP requests and WebSocket ``subscribe``
messages alike.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Iterator
from itertools import islice

from graphql import GraphQLError
from strawberry.extensions import SchemaExtension
from strawberry.types.execution import PreExecutionError

from evidence_gateway.schema.errors import TOO_COMPLEX

MAX_TOKENS = 2_000
# Braces, brackets and parentheses nested in one document: the standard introspection query
# needs 14, a data query at the depth limit with nested input objects about 20, and a JSON
# literal may nest as deep as a REST body's value (63 levels, jsoncodec.MAX_JSON_DEPTH) inside
# the few levels of its mutation. Checked before parsing, because graphql-core's parser and
# validation recurse per level (RecursionError well above this, in a request's stack).
MAX_NESTING = 80
# EVIDENCE_GRAPHQL_MAX_DOCUMENT_BYTES: a document is program text; the largest real one is a
# few kilobytes, and longer ones cost the lexer time in proportion before anything is refused.
DEFAULT_MAX_DOCUMENT_BYTES = 64 * 1024

# GraphQL's lexical tokens, found by the regex engine in one left-to-right pass as the lexer
# would: block strings, strings and comments first (a comment is not a token, and what is inside
# a string is one), then names, numbers and punctuators. Commas and white space are skipped.
_TOKEN = re.compile(
    r'"""(?:\\"""|[^"]|"(?!""))*"""'
    r'|"(?:[^"\\\n\r]|\\.)*"'
    r"|(?P<comment>#[^\n\r]*)"
    r"|[_A-Za-z][_0-9A-Za-z]*"
    r"|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?"
    r"|\.\.\."
    r"|[!$&()\[\]{}:=@|]"
)


def over_token_limit(document: str, limit: int = MAX_TOKENS) -> bool:
    """True when the document has more than ``limit`` tokens, decided from at most ``limit + 1``
    of them: graphql-core's pure-Python lexer and parser take ~10 ms to reach its own limit."""
    tokens = (m for m in _TOKEN.finditer(document) if m.lastgroup != "comment")
    return next(islice(tokens, limit, None), None) is not None


_OPENING = frozenset("{[(")
_CLOSING = frozenset("}])")


def nesting_depth(document: str, limit: int = MAX_NESTING) -> int:
    """How deeply braces, brackets and parentheses nest (outside strings and comments), counted
    up to ``limit + 1`` and over at most ``MAX_TOKENS + 1`` tokens: enough to tell whether the
    document is over either limit, without the parser's recursion."""
    depth = deepest = 0
    tokens = (m.group() for m in _TOKEN.finditer(document) if m.lastgroup != "comment")
    for token in islice(tokens, MAX_TOKENS + 1):
        if token in _OPENING:
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > limit:
                    break
        elif token in _CLOSING:
            depth -= 1
    return deepest


def document_refusal(document: str | None, max_bytes: int = DEFAULT_MAX_DOCUMENT_BYTES) -> GraphQLError | None:
    """Why a document is refused before the lexer sees it, or None: over the byte size, nested too
    deeply, or over the token ceiling. Both transports pass here (the ``DocumentGuard`` extension
    runs first for HTTP requests and WebSocket ``subscribe`` messages alike), and the answer
    depends on the text alone, never on white space or on how deep the server's stack happens to be.

    Costs what it must: the size from the length (UTF-8 is at most 4 bytes a character), the
    token scan only for a document that has enough brackets or characters to be over a limit.
    """
    if not document:
        return None
    if len(document) > max_bytes or (4 * len(document) > max_bytes and len(document.encode()) > max_bytes):
        return GraphQLError(
            f"Document is larger than {max_bytes} bytes (EVIDENCE_GRAPHQL_MAX_DOCUMENT_BYTES). Parsing aborted.",
            extensions={"code": TOO_COMPLEX, "limit_bytes": max_bytes},
        )
    brackets = document.count("{") + document.count("[") + document.count("(")
    if brackets > MAX_NESTING and nesting_depth(document) > MAX_NESTING:
        return GraphQLError(
            f"Document nests braces, brackets and parentheses more than {MAX_NESTING} levels deep. Parsing aborted.",
            extensions={"code": TOO_COMPLEX},
        )
    if len(document) > MAX_TOKENS and over_token_limit(document):
        return GraphQLError(
            f"Document contains more than {MAX_TOKENS} tokens. Parsing aborted.", extensions={"code": TOO_COMPLEX}
        )
    return None


def settings_refusal(document: str | None, context: object) -> GraphQLError | None:
    """``document_refusal`` with the byte size the request's settings give (the context's)."""
    settings = getattr(context, "settings", None)
    return document_refusal(document, getattr(settings, "graphql_max_document_bytes", DEFAULT_MAX_DOCUMENT_BYTES))


async def refused_stream(refusal: GraphQLError) -> AsyncIterator[PreExecutionError]:
    """A refused WebSocket ``subscribe`` as the socket handler expects a stream's first result:
    the client gets an ``error`` message for the operation, and the socket stays open."""
    yield PreExecutionError(data=None, errors=[refusal])


class DocumentGuard(SchemaExtension):
    """Refuses a document over the byte size, nesting or token ceiling before the parser starts on
    it (first of the extensions: ahead of the parser cache, which would hash the whole text).
    ``MaxTokensLimiter`` stays as the exact token rule behind it. The WebSocket handler checks
    before it streams (an exception from this hook would end its task instead of answering)."""

    def on_parse(self) -> Iterator[None]:
        context = self.execution_context
        if context.graphql_document is None:
            refusal = settings_refusal(context.query, context.context)
            if refusal is not None:
                raise refusal  # HTTP: Strawberry's execute answers it as a request error
        yield
