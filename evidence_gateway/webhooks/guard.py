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
from typing import TYPE_CHECKING, Protocol

from evidence_gateway.errors import InvalidInput

# httpx (~5 MB resident) loads with the first outgoing request, not with the server.
if TYPE_CHECKING:
    import httpx

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

MAX_URL_LENGTH = 2000


class GuardSettings(Protocol):
    webhook_connect_timeout_seconds: float
    webhook_allow_private_targets: bool


# Every refused target gets this one answer: a name that does not resolve, one that resolves to a
# private address and a private address literal are told apart by nobody who registers endpoints
# (telling them apart would map the internal network and its DNS).
REFUSED = "must be a host that resolves to public internet addresses only"

_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_6TO4 = ipaddress.ip_network("2002::/16")
# IPv6's global unicast space; everything outside it (::/8 with its IPv4-mapped and -compatible
# forms, 100::/64 discard, fc00::/7 ULA, fe80::/10 link-local, fec0::/10 site-local, ff00::/8
# multicast, 5f00::/16 SRv6, 64:ff9b:1::/48 local NAT64 …) is refused outright.
_GLOBAL_UNICAST = ipaddress.ip_network("2000::/3")
# Special-purpose blocks (IANA registries, RFC 6890 and successors), whatever this Python's
# ``is_global`` table says (it changed between releases).
_REFUSED_V4 = tuple(
    ipaddress.ip_network(n)
    for n in (
        "0.0.0.0/8",  # "this network"
        "10.0.0.0/8",
        "100.64.0.0/10",  # shared address space (carrier-grade NAT)
        "127.0.0.0/8",
        "169.254.0.0/16",  # link-local, cloud metadata
        "172.16.0.0/12",
        "192.0.0.0/24",  # IETF protocol assignments
        "192.0.2.0/24",  # TEST-NET-1
        "192.88.99.0/24",  # 6to4 relay anycast (deprecated)
        "192.168.0.0/16",
        "198.18.0.0/15",  # benchmarking
        "198.51.100.0/24",  # TEST-NET-2
        "203.0.113.0/24",  # TEST-NET-3
        "224.0.0.0/4",  # multicast
        "240.0.0.0/4",  # reserved, and 255.255.255.255 broadcast
    )
)
_REFUSED_V6 = tuple(
    ipaddress.ip_network(n)
    for n in (
        "2001::/23",  # IETF protocol assignments: Teredo, benchmarking, ORCHID …
        "2001:db8::/32",  # documentation
        "3fff::/20",  # documentation (RFC 9637)
    )
)


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
    import httpx

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
    """Why an address is not a public internet host, or None when it is (for logs and tests:
    the caller is only ever told ``REFUSED``)."""
    if isinstance(ip, ipaddress.IPv4Address):
        if any(ip in net for net in _REFUSED_V4):
            return "special-purpose IPv4"
        return None if ip.is_global else "non-public IPv4"
    if ip in _NAT64 or ip in _6TO4:
        # A translator or a tunnel to the IPv4 address it carries: judged by that address.
        inner = embedded_ipv4(ip)
        assert inner is not None
        reason = forbidden_reason(inner)
        return f"{'NAT64' if ip in _NAT64 else '6to4'} of {reason}" if reason else None
    if ip not in _GLOBAL_UNICAST:
        return "outside IPv6 global unicast"
    if any(ip in net for net in _REFUSED_V6):
        return "special-purpose IPv6"
    return None


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
    if not allow_private and any(forbidden_reason(ipaddress.ip_address(a)) for a in addresses):
        raise _refuse(REFUSED, field)
    return Target(url=target.url, host=target.host, port=target.port, addresses=addresses)


async def checked(url: httpx.URL, settings: GuardSettings, field: str) -> Target:
    """Resolve once and vet: the target a delivery connects to, or InvalidInput naming ``field``.
    A name that does not resolve is refused as a private one is, in the same words."""
    target = target_of(url)
    try:
        addresses = await resolve(target, settings.webhook_connect_timeout_seconds)
    except ResolutionFailed as exc:
        raise _refuse(str(exc) if settings.webhook_allow_private_targets else REFUSED, field) from None
    return vet(target, addresses, allow_private=settings.webhook_allow_private_targets, field=field)


def _refuse(reason: str, field: str = "target_url", **details: str) -> InvalidInput:
    return InvalidInput("invalid webhook target", fields={field: reason}, **details)
