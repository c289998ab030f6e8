"""Who the client is: the TCP peer, or what a trusted reverse proxy says it forwarded.

Forwarding headers are anyone's to write, so they are read only from a peer listed in
``EVIDENCE_TRUSTED_PROXIES`` (none by default; uvicorn's own reading, which trusts any loopback
peer, is off in ``serve``). The header named by ``EVIDENCE_TRUSTED_PROXY_HEADER`` is read from
the right: each proxy appends the address it received the request from, so the first address
that is not itself a trusted proxy is the client; anything left of it was written by the client
and is ignored. Only that one header is read: a proxy that appends to one passes the other
through as the client wrote it.

The answer replaces the ASGI scope's ``client`` (and ``scheme`` from ``X-Forwarded-Proto`` or
``proto=``), so rate limits, the access log and every transport see the same address.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable

from starlette.types import ASGIApp, Receive, Scope, Send

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
HEADERS = ("x-forwarded-for", "forwarded")


def parse_networks(value: str) -> tuple[Network, ...]:
    """Comma-separated addresses or CIDRs; ValueError naming the bad one."""
    networks: list[Network] = []
    for part in (p.strip() for p in value.split(",")):
        if not part:
            continue
        try:
            networks.append(ipaddress.ip_network(part, strict=False))
        except ValueError:
            raise ValueError(f"{part!r} is not an IP address or CIDR block") from None
    return tuple(networks)


def _address(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    text = text.strip().strip('"')
    if text.startswith("["):  # [v6] or [v6]:port
        text = text[1 : text.find("]")] if "]" in text else ""
    elif text.count(":") == 1:  # v4:port
        text = text.split(":", 1)[0]
    try:
        return ipaddress.ip_address(text.split("%", 1)[0])
    except ValueError:
        return None


def _hops(header: str, value: str) -> list[str]:
    """The addresses a header lists, oldest (leftmost) first; '' where one is not an address."""
    if header == "x-forwarded-for":
        return [part.strip() for part in value.split(",")]
    hops = []
    for element in value.split(","):
        found = ""
        for pair in element.split(";"):
            name, _, raw = pair.partition("=")
            if name.strip().lower() == "for":
                found = raw.strip()
        hops.append(found)
    return hops


def joined(headers: Iterable[tuple[bytes, bytes]], name: str) -> str | None:
    """Every value of a header, in order, as one comma-separated list (RFC 9110 §5.3)."""
    values = [value.decode("latin-1") for key, value in headers if key == name.encode()]
    return ", ".join(values) if values else None


def _forwarded_proto(headers: list[tuple[bytes, bytes]], header: str) -> str | None:
    if header == "x-forwarded-for":
        raw = (joined(headers, "x-forwarded-proto") or "").split(",")[-1]
    else:
        raw = ""
        last = (joined(headers, "forwarded") or "").split(",")[-1]
        for pair in last.split(";"):
            name, _, value = pair.partition("=")
            if name.strip().lower() == "proto":
                raw = value
    proto = raw.strip().strip('"').lower()
    return proto if proto in ("http", "https") else None


class ClientAddress:
    """Decides each request's client address once, at the edge."""

    def __init__(self, networks: Iterable[Network], header: str = "x-forwarded-for") -> None:
        self.networks = tuple(networks)
        self.header = header.lower()
        if self.header not in HEADERS:
            raise ValueError(f"forwarding header must be one of {', '.join(HEADERS)}")

    def trusted(self, host: str | None) -> bool:
        ip = _address(host or "")
        return ip is not None and any(ip in net for net in self.networks)

    def client_of(self, peer: str | None, headers: list[tuple[bytes, bytes]]) -> str | None:
        """The client's address: the peer unless it is a trusted proxy that forwarded one."""
        if not self.networks or not self.trusted(peer):
            return peer
        raw = joined(headers, self.header)
        if raw is None:
            return peer
        client = peer
        for hop in reversed(_hops(self.header, raw)):
            ip = _address(hop)
            if ip is None:
                break  # "unknown" or an obfuscated name: nothing left of it can be trusted
            client = str(ip)
            if not any(ip in net for net in self.networks):
                break
        return client


class ClientAddressMiddleware:
    def __init__(self, app: ASGIApp, addresses: ClientAddress) -> None:
        self.app = app
        self.addresses = addresses

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket") and self.addresses.networks:
            peer = scope.get("client")
            if peer and self.addresses.trusted(peer[0]):
                headers = list(scope.get("headers") or ())
                client = self.addresses.client_of(peer[0], headers)
                scope = dict(scope)
                if client != peer[0]:
                    scope["client"] = (client, 0)
                proto = _forwarded_proto(headers, self.addresses.header)
                if proto is not None:
                    scope["scheme"] = proto if scope["type"] == "http" else {"http": "ws", "https": "wss"}[proto]
        await self.app(scope, receive, send)
