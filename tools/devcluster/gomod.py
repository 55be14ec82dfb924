"""Derive the replace directives a Kubernetes tools module needs
(docs/devcluster.md#the-kubernetes-module-and-its-staging-replaces).

``k8s.io/kubernetes`` pins every staging module to ``v0.0.0`` and maps it to
``./staging/src/...``, which only resolves inside its own repository. The staging modules
are published as ``v0.<minor>.<patch>``, so each directory replace becomes a version
replace. The list changes between releases, hence derived from the served go.mod, never
hand-written.

Usage: ``python3 gomod.py replaces <go mod edit -json output> <kubernetes version>``
prints one ``-replace=old=new@version`` argument per line, then ``-godebug=key=value``
lines for the upstream ``godebug`` directives.
"""

from __future__ import annotations

import json
import sys
from typing import Any

STAGING_PREFIX = "./staging/src/"


class GoModError(ValueError):
    """The go.mod cannot be turned into a usable replace set."""


def staging_version(kubernetes_version: str) -> str:
    """``1.37.2`` or ``v1.37.2`` → ``v0.37.2`` (the staging tag for that release)."""
    parts = kubernetes_version.lstrip("v").split(".")
    if len(parts) != 3 or parts[0] != "1" or not all(p.isdigit() for p in parts):
        raise GoModError(f"not a Kubernetes release version: {kubernetes_version!r}")
    return f"v0.{parts[1]}.{parts[2]}"


def derive_replaces(gomod: dict[str, Any], kubernetes_version: str) -> list[str]:
    """Return ``old=new@version`` edits for the replace directives of ``gomod``."""
    target = staging_version(kubernetes_version)
    edits: list[str] = []
    for index, replace in enumerate(gomod.get("Replace") or [], start=1):
        old = replace["Old"]["Path"]
        new = replace["New"]
        if new.get("Version"):
            edits.append(f"{old}={new['Path']}@{new['Version']}")
        elif new["Path"].startswith(STAGING_PREFIX):
            module = new["Path"][len(STAGING_PREFIX):]
            if module != old:
                raise GoModError(f"replace {index}: {old} => {new['Path']} names another module")
            edits.append(f"{old}={old}@{target}")
        else:
            raise GoModError(f"replace {index}: {old} => {new['Path']} is a local directory outside staging/src")
    if not edits:
        raise GoModError("the go.mod has no replace directives: not the k8s.io/kubernetes shape expected")
    return edits


def godebug_lines(gomod: dict[str, Any]) -> list[str]:
    """The go.mod's ``godebug`` directives as ``key=value``."""
    return [f"{item['Key']}={item['Value']}" for item in gomod.get("GoDebug") or []]


def main(argv: list[str]) -> int:
    if len(argv) != 4 or argv[1] != "replaces":
        print("usage: gomod.py replaces <go.mod JSON file> <kubernetes version>", file=sys.stderr)
        return 2
    with open(argv[2], encoding="utf-8") as handle:
        gomod = json.load(handle)
    try:
        edits = derive_replaces(gomod, argv[3])
    except GoModError as error:
        print(f"gomod.py: {error}", file=sys.stderr)
        return 1
    for edit in edits:
        print(f"-replace={edit}")
    for line in godebug_lines(gomod):
        print(f"-godebug={line}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
