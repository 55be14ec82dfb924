"""POSTs to notification providers through the URL sources' address guard
(docs/notifications.md#addresses-the-operator-may-reach).

A tenant names the address, the operator connects from inside the cluster: the same
``AddressPolicy`` as URL sources (oam/remote/addresses.py) decides, with its own allowed
networks (``--notification-allowed-networks``). The host is checked before the request (an
address literal never reaches a resolver) and, for a name, again by the resolver aiohttp
connects through, so the socket goes to exactly a checked address (no DNS rebinding). Redirects
are not followed, so none can lead past the guard: a 3xx is a failed delivery. Proxies from the
environment are not used (``trust_env=False``): the address checked must be the one connected to.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from typing import Any
from urllib.parse import urlsplit

import aiohttp
from aiohttp.abc import AbstractResolver, ResolveResult

from oam_operator.oam.errors import OamError
from oam_operator.oam.remote.addresses import AddressPolicy

__all__ = ["ALLOW_HINT", "DeliveryError", "RefusedAddress", "address_problem", "literal_refusal", "notification_policy",
           "post"]

ALLOW_HINT = "the operator allows internal networks listed in --notification-allowed-networks"
TIMEOUT_SECONDS = 10.0


class DeliveryError(Exception):
    """The provider did not take the message (connection, timeout, a status other than 2xx)."""


class RefusedAddress(DeliveryError):
    """The address guard refused the provider's address."""


def notification_policy(allowed: Any) -> AddressPolicy:
    """The guard for provider addresses, allowing ``allowed`` (parsed networks)."""
    return AddressPolicy(allowed=tuple(allowed), hint=ALLOW_HINT, action="posting to", subject="notifications")


def address_problem(url: str) -> str | None:
    """Why ``url`` cannot be a provider address (``None``: it can), as status and admission say it."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as error:
        return f"provider address {url!r} does not parse: {error}"
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return f"provider address {url!r} is not an http(s) URL with a host"
    del port
    return None


def literal_refusal(policy: AddressPolicy, url: str) -> str | None:
    """The guard's refusal of ``url`` when its host is an address literal (known without a
    lookup, so said in the status before any message is owed); ``None`` otherwise."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return None
    try:
        policy.check(url, host, host)
    except OamError as error:
        return str(error)
    return None


class _GuardedResolver(AbstractResolver):
    """Resolves a name and returns only addresses the policy lets through (all must pass)."""

    def __init__(self, policy: AddressPolicy, url: str) -> None:
        self.policy = policy
        self.url = url

    async def resolve(self, host: str, port: int = 0,
                      family: socket.AddressFamily = socket.AF_INET) -> list[ResolveResult]:
        pairs = await asyncio.get_running_loop().run_in_executor(None, self.policy.check_host, self.url, host, port)
        return [ResolveResult(hostname=host, host=str(sockaddr[0]), port=int(sockaddr[1]), family=fam, proto=0,
                              flags=socket.AI_NUMERICHOST) for fam, sockaddr in pairs]

    async def close(self) -> None:
        return None


def _refusal(error: BaseException) -> OamError | None:
    seen: BaseException | None = error
    while seen is not None:
        if isinstance(seen, OamError):
            return seen
        seen = seen.__cause__ or seen.__context__
    return None


async def post(policy: AddressPolicy, url: str, body: bytes, headers: dict[str, str],
               timeout: float = TIMEOUT_SECONDS) -> None:
    """POST ``body`` to ``url``; ``RefusedAddress`` or ``DeliveryError`` with the exact reason."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        await asyncio.get_running_loop().run_in_executor(None, policy.check_host, url, host, port)
    except OamError as error:
        raise RefusedAddress(str(error)) from None
    connector = aiohttp.TCPConnector(resolver=_GuardedResolver(policy, url), use_dns_cache=False)
    try:
        async with (aiohttp.ClientSession(connector=connector, trust_env=False,
                                          timeout=aiohttp.ClientTimeout(total=timeout)) as session,
                    session.post(url, data=body, headers=headers, allow_redirects=False) as response):
            if not 200 <= response.status < 300:
                raise DeliveryError(f"posting to {url!r}: unexpected status {response.status}"
                                    + (" (redirects are not followed)" if 300 <= response.status < 400 else ""))
    except DeliveryError:
        raise
    except Exception as error:
        refusal = _refusal(error)
        if refusal is not None:
            raise RefusedAddress(str(refusal)) from None
        if isinstance(error, asyncio.TimeoutError):
            raise DeliveryError(f"posting to {url!r}: no answer within {timeout:g}s") from None
        raise DeliveryError(f"posting to {url!r}: {error}") from None
