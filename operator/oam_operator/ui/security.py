"""Who may talk to the UI (docs/ui.md#security): the UI acts with the user's kubeconfig, so a web
page elsewhere must neither read it nor make it act.

- **Host.** Every request must name the address the UI listens on (or ``localhost``/``127.0.0.1``
  /``[::1]`` with its port) in ``Host``: a DNS-rebinding page on another name is refused, reads
  included. Bound to a wildcard address (``0.0.0.0``, ``::``), any Host is accepted.
- **Changes.** A request other than GET/HEAD must come from the UI's own page: ``Origin`` equal to
  ``http://<Host>`` and the header ``X-OAM-UI-Token`` equal to the process's random token (in the
  page, never in a URL).
"""

from __future__ import annotations

import hmac
from collections.abc import Mapping
from dataclasses import dataclass

__all__ = ["TOKEN_HEADER", "Guard"]

TOKEN_HEADER = "X-OAM-UI-Token"
_WILDCARDS = frozenset({"0.0.0.0", "::", ""})
_SAFE_METHODS = frozenset({"GET", "HEAD"})


@dataclass(frozen=True)
class Guard:
    """The Host/Origin/token check of one UI process."""

    address: str
    port: int
    token: str

    def allowed_hosts(self) -> frozenset[str]:
        bound = f"[{self.address}]" if ":" in self.address else self.address
        names = {bound, "localhost", "127.0.0.1", "[::1]"}
        return frozenset(f"{name}:{self.port}" for name in names)

    def refusal(self, method: str, headers: Mapping[str, str]) -> str | None:
        """Why this request is refused (the exact text of the 403), or ``None`` to serve it."""
        host = headers.get("Host", "")
        if self.address not in _WILDCARDS and host not in self.allowed_hosts():
            return f"refused: Host {host!r} is not this UI's address ({self.address}:{self.port})"
        if method.upper() in _SAFE_METHODS:
            return None
        origin = headers.get("Origin")
        if origin != f"http://{host}":
            shown = repr(origin) if origin is not None else "missing"
            return f"refused: a change must come from this UI's page (Origin {shown}, not 'http://{host}')"
        if not hmac.compare_digest(headers.get(TOKEN_HEADER, ""), self.token):
            return f"refused: a change needs this UI's {TOKEN_HEADER} header (reload the page)"
        return None
