"""Calling a recipient's own PACT host: its token (PACT §6.3, as a data recipient does) and one
event POSTed to its ``/2/events`` or ``/3/events``.

The token endpoint is discovered at ``<base>/.well-known/openid-configuration`` and, when that
names none, is ``<base>/auth/token``; the credentials go by HTTP Basic (client credentials
grant). Every URL passes the webhooks' SSRF guard (resolved once, every address vetted, the
connection made to a vetted address), with their timeouts; no redirect is followed and no proxy
from the environment is used. The client secret and the token never appear in an error.
"""

from __future__ import annotations

import asyncio
import base64
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import orjson

from evidence_gateway.errors import InvalidInput
from evidence_gateway.settings import Settings
from evidence_gateway.webhooks import guard, sender

# httpx (~5 MB resident) loads with the first outgoing request, not with the server.
if TYPE_CHECKING:
    import httpx

# Discovery documents and token answers are small; an event answer is read for its excerpt.
READ_LIMIT = 64 * 1024
USER_AGENT = "evidence-gateway-pact/1"


@dataclass(frozen=True, slots=True)
class HostCredentials:
    base_url: str
    client_id: str
    client_secret: str

    def __repr__(self) -> str:  # never the secret, whoever prints it
        return f"HostCredentials(base_url={self.base_url!r}, client_id={self.client_id!r})"


class Failed(Exception):
    """An attempt that did not get through: why, and the HTTP status if one came."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.message, self.status = message, status


@dataclass(frozen=True, slots=True)
class Answer:
    status: int
    body: bytes


def events_url(base_url: str, major: str) -> str:
    return f"{base_url.rstrip('/')}/{major}/events"


async def _call(
    settings: Settings, client: httpx.AsyncClient, method: str, url: str, headers: dict[str, str], body: bytes = b""
) -> Answer:
    import httpx

    try:
        target = await guard.checked(guard.parse_target_url(url, "url"), settings, "url")
    except InvalidInput as exc:
        raise Failed("refused: " + "; ".join(exc.fields.values())) from None
    error = "no address to connect to"
    read = settings.webhook_read_timeout_seconds
    for address in target.addresses[: sender.MAX_ADDRESSES]:
        request = client.build_request(
            method,
            target.url.copy_with(host=address),
            content=body or None,
            headers={
                **headers,
                "Host": target.url.netloc.decode("ascii"),
                "User-Agent": USER_AGENT,
                "Accept-Encoding": "identity",
            },
            extensions={"sni_hostname": target.host} if target.url.scheme == "https" else {},
        )
        try:
            async with asyncio.timeout(settings.webhook_connect_timeout_seconds + 2 * read):
                response = await client.send(request, stream=True)
                try:
                    data = bytearray()
                    async for chunk in response.aiter_raw():
                        data += chunk
                        if len(data) >= READ_LIMIT:
                            break
                finally:
                    await response.aclose()
            return Answer(response.status_code, bytes(data[:READ_LIMIT]))
        except httpx.ConnectError as exc:
            error = f"connection failed ({address}): {type(exc).__name__}"
        except (httpx.TimeoutException, TimeoutError):
            raise Failed(f"{method} {target.url.path}: timed out") from None
        except httpx.HTTPError as exc:
            raise Failed(f"{method} {target.url.path}: {type(exc).__name__}") from None
    raise Failed(error)


def _json(answer: Answer) -> Any:
    try:
        return orjson.loads(answer.body)
    except orjson.JSONDecodeError:
        return None


async def token_endpoint(settings: Settings, client: httpx.AsyncClient, base_url: str) -> str:
    """The host's token endpoint: OpenID discovery's ``token_endpoint``, else ``<base>/auth/token``."""
    base = base_url.rstrip("/")
    try:
        found = await _call(settings, client, "GET", f"{base}/.well-known/openid-configuration", {})
    except Failed:
        found = None
    document = _json(found) if found is not None and found.status == 200 else None
    named = document.get("token_endpoint") if isinstance(document, dict) else None
    if isinstance(named, str) and named.startswith(("https://", "http://")):
        return named
    return f"{base}/auth/token"


async def access_token(settings: Settings, client: httpx.AsyncClient, host: HostCredentials) -> str:
    endpoint = await token_endpoint(settings, client, host.base_url)
    basic = base64.b64encode(f"{host.client_id}:{host.client_secret}".encode()).decode("ascii")
    headers = {
        "Authorization": f"Basic {basic}",
        "Content-Type": "application/x-www-form-urlencoded",
        "Accept": "application/json",
    }
    answer = await _call(settings, client, "POST", endpoint, headers, b"grant_type=client_credentials")
    if answer.status != 200:
        raise Failed(f"the recipient's token endpoint answered HTTP {answer.status}", answer.status)
    body = _json(answer)
    token = body.get("access_token") if isinstance(body, dict) else None
    if not isinstance(token, str) or not token:
        raise Failed("the recipient's token endpoint answered no access_token", answer.status)
    return token


async def send_event(
    settings: Settings, client: httpx.AsyncClient, host: HostCredentials, major: str, event: dict[str, Any]
) -> int:
    """Authenticate with the recipient's host and POST the event; its 2xx status, else Failed."""
    token = await access_token(settings, client, host)
    headers = {
        "Authorization": f"Bearer {token}",
        "Content-Type": "application/cloudevents+json; charset=UTF-8",
    }
    answer = await _call(settings, client, "POST", events_url(host.base_url, major), headers, orjson.dumps(event))
    if not 200 <= answer.status < 300:
        raise Failed(f"the recipient's /{major}/events answered HTTP {answer.status}", answer.status)
    return answer.status
