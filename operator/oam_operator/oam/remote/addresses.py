"""Which network addresses a URL source may reach (docs/operator.md#url-sources-and-charts).

An Application is written by a tenant, but the operator fetches its URL sources and charts
with the operator's own network position: inside the cluster, next to the API server, the
cloud metadata endpoint and every internal service. So, in the operator, a URL whose host
resolves to an address that is not globally routable (loopback, link-local, private, the
unspecified address, shared or reserved ranges, multicast) is refused unless the platform
team allowed its network explicitly. ``AddressPolicy`` is that rule; the guarded reader
(``fetch.py``) applies it to the address it actually connects to, so a host that resolves
differently between the check and the connection (DNS rebinding) gains nothing.

IPv4-mapped IPv6 addresses (``::ffff:127.0.0.1``) are judged as the IPv4 address they map.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from oam_operator.oam.errors import OamError
from oam_operator.oam.formatting.gofmt import go_quote

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network


def parse_networks(text: str | Iterable[str]) -> tuple[IPNetwork, ...]:
    """``"127.0.0.1/32, 10.0.0.0/8"`` (or a list of such) → networks; a bare address is its /32 or /128.

    Raises ``ValueError`` naming the first entry that is not a network.
    """
    items = text.split(",") if isinstance(text, str) else list(text)
    networks: list[IPNetwork] = []
    for item in items:
        entry = str(item).strip()
        if not entry:
            continue
        try:
            network = ipaddress.ip_network(entry, strict=False)
        except ValueError:
            raise ValueError(f'"{entry}" is not an IP network such as 10.0.0.0/8 or 127.0.0.1') from None
        if network not in networks:
            networks.append(network)
    return tuple(networks)


def address_class(address: IPAddress) -> str | None:
    """Why ``address`` is internal (``"loopback"``, ``"private"``, …), or ``None`` when it is public."""
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    if address.is_loopback:
        return "loopback"
    if address.is_link_local:
        return "link-local"
    if address.is_unspecified:
        return "unspecified"
    if address.is_multicast:
        return "multicast"
    if address.is_private:
        return "private"
    if not address.is_global:
        return "non-public"
    return None


@dataclass(frozen=True)
class AddressPolicy:
    """Refuses internal addresses outside ``allowed`` networks; ``hint`` says how to allow one."""

    allowed: tuple[IPNetwork, ...] = ()
    hint: str = ""
    #: how a refusal names the attempt and who is restricted (a notification provider's guard says its own)
    action: str = "reading"
    subject: str = "URL sources"

    def check(self, url: str, host: str, address_text: str) -> None:
        """Raise ``OamError`` when ``host`` (of ``url``), resolved to ``address_text``, may not be reached."""
        address = ipaddress.ip_address(address_text.split("%", 1)[0])
        kind = address_class(address)
        if kind is None or any(address in network for network in self.allowed):
            return
        shown = host if host == address_text else f"{host} ({address_text})"
        hint = f"; {self.hint}" if self.hint else ""
        raise OamError(
            f"{self.action} {go_quote(url)}: refused to connect to {shown}: a {kind} address"
            f" ({self.subject} may reach only public addresses){hint}"
        )

    def check_host(self, url: str, host: str, port: int) -> list[tuple[int, tuple[Any, ...]]]:
        """Resolve ``host`` and check every address; return ``(family, sockaddr)`` pairs to connect to.

        Every address must pass: a name that resolves to one public and one internal address is
        refused, so which one a connection would pick never matters.
        """
        try:
            infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except OSError as exc:
            raise OamError(f"{self.action} {go_quote(url)}: resolving {host}: {exc.strerror or exc}") from None
        resolved: list[tuple[int, tuple[Any, ...]]] = []
        for family, _, _, _, sockaddr in infos:
            self.check(url, host, str(sockaddr[0]))
            if (family, tuple(sockaddr)) not in resolved:
                resolved.append((family, tuple(sockaddr)))
        return resolved
