"""The one-line summary behind ``kubectl get oapp``'s STATUS column (issue 14).

A printer column cannot shorten a value, so the operator writes ``status.summary`` next to the
Ready condition: its message on one line, cut to ``SUMMARY_WIDTH`` characters with an ellipsis
(the full text stays in the condition and in ``-o wide``'s MESSAGE column). A suspended
Application reads ``Suspended``, like ``flux get``'s SUSPENDED column, instead of a bare Pending.
A ``NotPermitted`` message is long (every missing permission); its summary is the command that
prints the Role it needs, which a cut message would lose.
"""

from __future__ import annotations

__all__ = ["SUMMARY_WIDTH", "summary_of"]

SUMMARY_WIDTH = 60


def summary_of(reason: str, message: str) -> str:
    """The STATUS column for a Ready condition with ``reason`` and ``message``."""
    if reason == "Suspended":
        return "Suspended"
    if reason == "NotPermitted":
        _, found, rest = message.partition("`oam-operator rbac ")
        command, closed, _ = rest.partition("`")
        if found and closed:
            message = f"Not permitted; see: oam-operator rbac {command}"
    line = " ".join(message.split())
    if len(line) <= SUMMARY_WIDTH:
        return line
    return line[: SUMMARY_WIDTH - 1].rstrip() + "…"
