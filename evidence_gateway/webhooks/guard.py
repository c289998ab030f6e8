"""SSRF guard: which URLs a webhook may target and which addresses it may reach.

The host is resolved once here; the sender then connects to exactly these vetted
addresses (the URL keeps its name for ``Host`` and TLS SNI/verification), so a DNS
answer that changes between the check and the connection cannot redirect the request.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from dataclasses import dataclass
from typing import Protocol

import httpx

from evidence_gateway.errors import InvalidInput

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

MAX_URL_LENGTH = 2000


class GuardSettings(Protocol):
    webhook_connect_timeout_seconds: float
    webhook_allow_private_targets: bool


_NAT64 = ipaddress.ip_network("64:ff9b::/96")


class ResolutionFailed(Exception):
    """The host name did not resolve: a delivery failure (502), not bad input."""


@dataclass(frozen=True, slots=True)
class Target:
    url: httpx.URL
    host: str  # ASCII (IDNA) host as written in the URL
    port: int
    addresses: tuple[str, ...] = ()


def parse_target_url(raw: str, field: str = "target_url") -> httpx.URL:
    """An absolute http(s) URL with a host, or InvalidInput naming ``field``."""
    if len(raw) > MAX_URL_LENGTH:
        raise _refuse(f"must be at most {MAX_URL_LENGTH} characters", field)
    if any(ch.isspace() or ord(ch) < 0x20 for ch in raw):
        raise _refuse("must be an absolute http or https URL without whitespace", field)
    try:
        url = httpx.URL(raw)
    except (httpx.InvalidURL, ValueError):
        raise _refuse("must be an absolute http or https URL", field) from None
    if url.scheme not in ("http", "https"):
        raise _refuse("only http and https URLs are allowed", field)
    if not url.raw_host:
        raise _refuse("must be an absolute http or https URL with a host", field)
    return url


def target_of(url: httpx.URL) -> Target:
    port = url.port or (443 if url.scheme == "https" else 80)
    return Target(url=url, host=url.raw_host.decode("ascii"), port=port)


def embedded_ipv4(ip: IPAddress) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 address carries (mapped, 6to4, Teredo, NAT64), if any."""
    if not isinstance(ip, ipaddress.IPv6Address):
        return None
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip.sixtofour is not None:
        return ip.sixtofour
    if ip.teredo is not None:
        return ip.teredo[1]
    if ip in _NAT64:
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return None


def forbidden_reason(ip: IPAddress) -> str | None:
    """Why an address is not a public internet host, or None when it is."""
    inner = embedded_ipv4(ip)
    if inner is not None:
        reason = forbidden_reason(inner)
        # An IPv4-mapped address IS its IPv4 address (::ffff:0:0/96 itself counts as reserved).
        if reason or (isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None):
            return reason
    checks = (
        ("loopback", ip.is_loopback),
        ("unspecified", ip.is_unspecified),
        ("link-local", ip.is_link_local),
        ("multicast", ip.is_multicast),
        ("private", ip.is_private),
        ("reserved", ip.is_reserved),
    )
    for name, hit in checks:
        if hit:
            return name
    # Shared (100.64/10), documentation, benchmarking … are not global either.
    return None if ip.is_global else "non-public"


async def resolve(target: Target, time_limit: float) -> tuple[str, ...]:
    """Every address the host resolves to (IP literals resolve to themselves)."""
    literal = _ip_literal(target.host)
    if literal is not None:
        return (literal,)
    loop = asyncio.get_running_loop()
    try:
        async with asyncio.timeout(time_limit):
            infos = await loop.getaddrinfo(target.host, target.port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError, TimeoutError) as exc:
        raise ResolutionFailed(f"could not resolve host {target.host!r}: {exc or 'timed out'}") from None
    out: list[str] = []
    for _family, _type, _proto, _canon, sockaddr in infos:
        address = str(sockaddr[0]).split("%", 1)[0]  # drop an IPv6 zone id
        if address not in out:
            out.append(address)
    if not out:
        raise ResolutionFailed(f"could not resolve host {target.host!r}")
    return tuple(out)


def _ip_literal(host: str) -> str | None:
    """The address itself when the host is one (no resolver round trip for it)."""
    try:
        return str(ipaddress.ip_address(host.strip("[]").split("%", 1)[0]))
    except ValueError:
        return None


def vet(target: Target, addresses: tuple[str, ...], *, allow_private: bool, field: str = "target_url") -> Target:
    """Refuse (422) when ANY resolved address is non-public, unless private targets are allowed."""
    if not allow_private:
        for address in addresses:
            reason = forbidden_reason(ipaddress.ip_address(address))
            if reason:
                # The rule, never the address: naming what an internal name resolves to would map
                # the private network for whoever registers endpoints.
                raise _refuse(f"resolves to a {reason} address; webhook targets must be public hosts", field)
    return Target(url=target.url, host=target.host, port=target.port, addresses=addresses)


async def checked(url: httpx.URL, settings: GuardSettings, field: str) -> Target:
    """Resolve once and vet: the target a delivery connects to, or InvalidInput naming ``field``."""
    target = target_of(url)
    try:
        addresses = await resolve(target, settings.webhook_connect_timeout_seconds)
    except ResolutionFailed as exc:
        raise _refuse(str(exc), field) from None
    return vet(target, addresses, allow_private=settings.webhook_allow_private_targets, field=field)


def _refuse(reason: str, field: str = "target_url", **details: str) -> InvalidInput:
    return InvalidInput("invalid webhook target", fields={field: reason}, **details)
