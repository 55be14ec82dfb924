"""The one-line summary behind ``kubectl get oapp``'s STATUS column (docs/operator.md#printer-columns).

A printer column cannot shorten a value, so the operator writes ``status.summary`` next to the
Ready condition: its message on one line, cut at a word to ``SUMMARY_WIDTH`` characters with an ellipsis
(the full text stays in the condition and in ``-o wide``'s MESSAGE column). A suspended
Application reads ``Suspended``, like ``flux get``'s SUSPENDED column, instead of a bare Pending.
A ``NotPermitted`` message is long (every missing permission); its summary is the command that
prints the Role it needs, which a cut message would lose.

Before cutting, a dotted path of more than two names keeps its last two
(``…containers[name=web].image``) and a UID its first 8 characters (``e40278aa…``): a plain cut
loses the useful part of a long message, as a drifted field's path
(``spec.template.spec.containers[name=web].image``) fills the column before its last name and a
cluster's UID before the reason. The whole text stays in the condition (``-o wide``'s MESSAGE
and DRIFT columns).
"""

from __future__ import annotations

import re

__all__ = ["SUMMARY_WIDTH", "summary_of"]

SUMMARY_WIDTH = 80
#: Where every DriftDetected message's tail begins (controller/reconcile/drift.py); the column has no room for it.
DRIFT_TAIL = " changed by another field manager; left as it is"
_PATH = re.compile(r"(?<![\w/.-])(?:[\w\[\]=-]+\.){2,}([\w\[\]=-]+\.[\w\[\]=-]+)")
_UID = re.compile(r"\b([0-9a-f]{8})-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b")


def _shortened(line: str) -> str:
    """Long paths and UIDs shortened to the part that tells them apart."""
    return _UID.sub(r"\1…", _PATH.sub(r"…\1", line))


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
    if reason == "DriftDetected":
        line = line.partition(DRIFT_TAIL)[0]
    if len(line) <= SUMMARY_WIDTH:
        return line
    line = _shortened(line)
    if len(line) <= SUMMARY_WIDTH:
        return line
    cut = line[: SUMMARY_WIDTH - 1]
    words = cut.rsplit(" ", 1)[0] if " " in cut[SUMMARY_WIDTH * 2 // 3:] else cut  # at a word, if one is near
    return words.rstrip(" ,;:") + "…"
