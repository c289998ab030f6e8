"""One signed POST with httpx: bounded timeouts, no redirects, a capped response excerpt."""

from __future__ import annotations

import asyncio
import codecs
import functools
import ssl
from dataclasses import dataclass
from typing import TYPE_CHECKING

from evidence_gateway.web.observability import tracing
from evidence_gateway.webhooks.guard import Target

# httpx (~5 MB resident) loads with the first outgoing request, not with the server.
if TYPE_CHECKING:
    import httpx

# The excerpt is for a human reading the result: 1 KiB is plenty, and we never read more.
EXCERPT_BYTES = 1024
# A host with many addresses: try a few (refused / unreachable only), not all of them.
MAX_ADDRESSES = 4
USER_AGENT = "evidence-gateway-webhooks/1"


@dataclass(frozen=True, slots=True)
class Outcome:
    delivered: bool
    http_status: int | None  # None: no HTTP answer at all
    response_excerpt: str
    error: str | None


@functools.cache
def default_tls() -> ssl.SSLContext:
    """httpx's default verifying context, built once: building it per client costs ~50 ms (CA bundle load)."""
    import httpx

    return httpx.create_ssl_context(trust_env=False)


def failed(error: str) -> Outcome:
    return Outcome(delivered=False, http_status=None, response_excerpt="", error=error)


def new_client(connect_timeout: float, read_timeout: float, verify: ssl.SSLContext | None = None) -> httpx.AsyncClient:
    """A client that follows no redirect and no proxy from the environment (which could reroute
    a vetted delivery). ``verify``: the TLS context (default: certifi's CAs, built once)."""
    import httpx

    timeout = httpx.Timeout(connect=connect_timeout, read=read_timeout, write=read_timeout, pool=connect_timeout)
    return httpx.AsyncClient(timeout=timeout, follow_redirects=False, trust_env=False, verify=verify or default_tls())


async def post(
    target: Target,
    body: bytes,
    headers: dict[str, str],
    *,
    connect_timeout: float,
    read_timeout: float,
    verify: ssl.SSLContext | None = None,
    client: httpx.AsyncClient | None = None,
) -> Outcome:
    """POST ``body`` to the vetted addresses of ``target`` in order; the first connection wins.

    ``client``: a pooled client to reuse (kept open); without one, a client for this call only.
    While tracing is on the POST is a client span, and its ``traceparent`` goes with it so that
    the receiver's work joins the trace.
    """
    attributes = {"http.request.method": "POST", "url.full": str(target.url), "server.address": target.host}
    with tracing.span("POST", kind="client", attributes=attributes) as span:
        if span is not None:
            headers = dict(headers)
            tracing.inject(headers)
        if client is not None:
            outcome = await _post(client, target, body, headers, connect_timeout, read_timeout)
        else:
            async with new_client(connect_timeout, read_timeout, verify) as own:
                outcome = await _post(own, target, body, headers, connect_timeout, read_timeout)
        if span is not None:
            tracing.note_outcome(span, outcome.http_status, outcome.error)
        return outcome


async def _post(
    client: httpx.AsyncClient,
    target: Target,
    body: bytes,
    headers: dict[str, str],
    connect_timeout: float,
    read_timeout: float,
) -> Outcome:
    import httpx

    error = "no address to connect to"
    for address in target.addresses[:MAX_ADDRESSES]:
        try:
            # Read timeouts are per read; this caps a target that trickles bytes forever.
            async with asyncio.timeout(connect_timeout + 2 * read_timeout):
                return await _attempt(client, target, address, body, headers)
        except httpx.ConnectTimeout:
            return failed(f"connect timed out after {connect_timeout:g}s ({address})")
        except httpx.ConnectError as exc:
            error = f"connection failed ({address}): {exc or type(exc).__name__}"
        except (httpx.TimeoutException, TimeoutError):
            return failed(f"timed out waiting for the response (read timeout {read_timeout:g}s)")
        except httpx.HTTPError as exc:
            return failed(f"{type(exc).__name__}: {exc}")
    return failed(error)


async def _attempt(
    client: httpx.AsyncClient, target: Target, address: str, body: bytes, headers: dict[str, str]
) -> Outcome:
    # Connect to the vetted address; Host and TLS (SNI + certificate check) keep the URL's name.
    request = client.build_request(
        "POST",
        target.url.copy_with(host=address),
        content=body,
        headers={
            **headers,
            "Host": target.url.netloc.decode("ascii"),
            "Content-Type": "application/json",
            "User-Agent": USER_AGENT,
            # Uncompressed, so the capped excerpt is readable text and no decompression bomb.
            "Accept-Encoding": "identity",
        },
        extensions={"sni_hostname": target.host} if target.url.scheme == "https" else {},
    )
    response = await client.send(request, stream=True)
    try:
        excerpt = await _read_excerpt(response)
    finally:
        await response.aclose()
    status = response.status_code
    delivered = 200 <= status < 300
    error = None
    if response.is_redirect:
        error = f"redirect not followed (status {status}, location {response.headers.get('location', '')!r})"
    elif not delivered:
        error = f"target answered HTTP {status}"
    return Outcome(delivered=delivered, http_status=status, response_excerpt=excerpt, error=error)


async def _read_excerpt(response: httpx.Response) -> str:
    """At most EXCERPT_BYTES of the body; a body that stalls after the status line is cut short."""
    import httpx

    data = bytearray()
    try:
        async for chunk in response.aiter_raw():
            data += chunk
            if len(data) >= EXCERPT_BYTES:
                break
    except httpx.HTTPError:
        pass
    # Incremental decoding drops a multi-byte character cut in half at the cap.
    text = codecs.getincrementaldecoder("utf-8")(errors="replace").decode(bytes(data[:EXCERPT_BYTES]), final=False)
    return text.replace("\x00", "\ufffd")  # PostgreSQL text cannot hold NUL
