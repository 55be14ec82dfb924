"""The import-direction check of `make lint` (docs/architecture.md#rooms-and-dependency-direction).

The package has three rooms with a one-way dependency: `controller` drives `reconciler` and
`oam`; `reconciler` never imports `oam` or kopf; `oam` imports nothing that talks to a cluster.
Below them sit `persisted` (the stored types, pydantic only) and `common` (standard library
only); beside them `cli`, which nothing else imports. Review alone does not keep that true: one
convenient import inside a function is enough to make `oam` load the kubernetes client. This
check reads every module's imports with `ast` (top-level and function-local alike, relative ones
resolved) and follows them through the package, so a rule also catches a neutral module in
between that pulls in what a room must not reach.

Rules:
- `oam`: no module it reaches imports `kubernetes` or `kopf`, and it reaches no module of
  `reconciler` or `controller`.
- `reconciler`: it reaches no module of `oam` or `controller`, and nothing that imports `kopf`.
- `common`: it reaches the standard library only: no third-party library, no other room.
- `persisted`: it reaches the standard library, `pydantic` and `common`, nothing else.
- `kopf` is imported only by modules of `controller`.
- `cli` is imported only by modules of `cli` and `ui` (the web view reuses the CLI's cluster access
  and view models).
- `ui` is imported only by modules of `cli` (the `ui` command) and of `ui`.

Layers inside a room (docs/architecture.md#the-two-layers-of-controller):
- `controller` holds two layers and no module of its own: `controller.service`, the machinery
  that outlives a pass, and `controller.reconcile`, the pass and its rules.
- `controller.reconcile` reaches no module of `controller.service`, and nothing that imports `kopf`.
- `controller.reconcile.seams`, the types a pass exchanges, is at the bottom of its layer: it
  reaches no module that imports it back.

Run: `python tools/lint_imports.py [PACKAGE_DIR]` (default `operator/oam_operator`); exit 1 and
one line per violation, naming the import chain.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

CLUSTER_LIBRARIES = ("kubernetes", "kopf")


STANDARD_LIBRARY = frozenset(sys.stdlib_module_names)


@dataclass(frozen=True)
class Rule:
    """A room (a subpackage) and what it must never reach through imports.

    ``only_rooms``/``only_libraries``, when given, turn the rule into an allow-list: every other
    room of the package (the package's own ``__init__`` aside), resp. every library outside the
    standard library, is forbidden.
    """

    room: str
    forbidden_rooms: tuple[str, ...] = ()
    forbidden_libraries: tuple[str, ...] = ()
    only_rooms: tuple[str, ...] | None = None
    only_libraries: tuple[str, ...] | None = None

    def forbids_room(self, room: str | None) -> bool:
        if room is None or room == self.room:
            return False
        return room in self.forbidden_rooms or (self.only_rooms is not None and room not in self.only_rooms)

    def forbidden_of(self, libraries: set[str]) -> set[str]:
        found = libraries & set(self.forbidden_libraries)
        if self.only_libraries is not None:
            found |= libraries - STANDARD_LIBRARY - set(self.only_libraries)
        return found


RULES = (
    Rule("oam", forbidden_rooms=("reconciler", "controller"), forbidden_libraries=CLUSTER_LIBRARIES),
    Rule("reconciler", forbidden_rooms=("oam", "controller"), forbidden_libraries=("kopf",)),
    Rule("common", only_rooms=(), only_libraries=()),
    Rule("persisted", only_rooms=("common",), only_libraries=("pydantic",)),
)
#: Rooms made of layers: every module of the room is in one of them (its ``__init__`` aside).
LAYERED_ROOMS = {"controller": ("reconcile", "service")}


@dataclass(frozen=True)
class LayerRule:
    """A layer of a room and the layers of the same room and the libraries it must never reach."""

    room: str
    layer: str
    forbidden_layers: tuple[str, ...] = ()
    forbidden_libraries: tuple[str, ...] = ()


LAYER_RULES = (LayerRule("controller", "reconcile", forbidden_layers=("service",), forbidden_libraries=("kopf",)),)
#: Modules at the bottom of their layer: they reach no module that imports them back.
BOTTOMS = ("controller.reconcile.seams",)
KOPF_ROOM = "controller"
CLI_ROOM = "cli"
UI_ROOM = "ui"
IMPORTERS = {CLI_ROOM: (CLI_ROOM, UI_ROOM), UI_ROOM: (UI_ROOM, CLI_ROOM)}


def module_name(package_dir: Path, path: Path) -> str:
    """The dotted name of a file below the package directory (`pkg/a/__init__.py` → `pkg.a`)."""
    parts = list(path.relative_to(package_dir.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_of(tree: ast.AST, module: str, is_package: bool) -> set[str]:
    """Every module name an import statement of this module names, relative ones made absolute."""
    names: set[str] = set()
    base = module.split(".") if is_package else module.split(".")[:-1]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                anchor = base[: len(base) - (node.level - 1)] if node.level > 1 else base
                prefix = ".".join(anchor)
                target = f"{prefix}.{node.module}" if node.module else prefix
            else:
                target = node.module or ""
            names.add(target)
            # `from pkg import sub` may name a submodule: keep both; unknown names are ignored later.
            names.update(f"{target}.{alias.name}" for alias in node.names)
    return names


@dataclass
class Package:
    """The modules of one package and the imports each of them names."""

    name: str
    imports: dict[str, set[str]]

    @classmethod
    def read(cls, package_dir: Path) -> Package:
        imports: dict[str, set[str]] = {}
        for path in sorted(package_dir.rglob("*.py")):
            module = module_name(package_dir, path)
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
            imports[module] = imports_of(tree, module, path.name == "__init__.py")
        return cls(package_dir.name, imports)

    def local(self, name: str) -> str | None:
        """The package's module that an imported name refers to (its longest known prefix)."""
        parts = name.split(".")
        while parts:
            candidate = ".".join(parts)
            if candidate in self.imports:
                return candidate
            parts.pop()
        return None

    def room_of(self, module: str) -> str | None:
        parts = module.split(".")
        return parts[1] if len(parts) > 1 and parts[0] == self.name else None

    def layer_of(self, module: str) -> str | None:
        """``room.layer`` of a module inside a layered room (``None`` elsewhere, and for the room's ``__init__``)."""
        parts = module.split(".")
        if len(parts) > 2 and parts[0] == self.name and parts[1] in LAYERED_ROOMS:
            return f"{parts[1]}.{parts[2]}"
        return None

    def external(self, module: str) -> set[str]:
        """Top-level names of the libraries a module imports directly."""
        return {
            name.split(".")[0] for name in self.imports[module]
            if not name.startswith(self.name + ".") and name != self.name
        }

    def chains_from(self, start: str) -> dict[str, list[str]]:
        """Every package module reachable from `start`, each with one import chain leading to it."""
        chains = {start: [start]}
        queue = [start]
        while queue:
            current = queue.pop(0)
            for name in sorted(self.imports[current]):
                target = self.local(name)
                if target is None or target in chains:
                    continue
                chains[target] = chains[current] + [target]
                queue.append(target)
                # Importing `pkg.a.b` runs `pkg/__init__` and `pkg/a/__init__` too.
                parent = target
                while "." in parent:
                    parent = parent.rsplit(".", 1)[0]
                    if parent in self.imports and parent not in chains:
                        chains[parent] = chains[current] + [parent]
                        queue.append(parent)
        return chains


def violations(package: Package) -> list[str]:
    """One line per broken rule, deterministic order."""
    found: set[str] = set()
    for rule in RULES:
        for module in package.imports:
            if package.room_of(module) != rule.room:
                continue
            named: set[str] = set()  # one line per forbidden target, with its shortest chain
            for reached, chain in package.chains_from(module).items():
                path = " -> ".join(chain)
                room = package.room_of(reached)
                if room is not None and rule.forbids_room(room) and room not in named:
                    named.add(room)
                    found.add(f"{module}: {rule.room} must not reach {room} ({path})")
                for library in sorted(rule.forbidden_of(package.external(reached)) - named):
                    named.add(library)
                    found.add(f"{module}: {rule.room} must not reach {library} ({path} imports {library})")
    found.update(layer_violations(package))
    for module in package.imports:
        room = package.room_of(module)
        if "kopf" in package.external(module) and room != KOPF_ROOM:
            found.add(f"{module}: only {KOPF_ROOM} imports kopf")
        for guarded_room, importers in IMPORTERS.items():
            if room in importers:
                continue
            targets = sorted(
                target for target in filter(None, map(package.local, package.imports[module]))
                if package.room_of(target) == guarded_room
            )
            if targets:
                who = " and ".join(importers)
                found.add(f"{module}: only {who} import {guarded_room} ({module} imports {targets[0]})")
    return sorted(found)


def layer_violations(package: Package) -> set[str]:
    """The rules of the layers inside a room (``LAYERED_ROOMS``, ``LAYER_RULES``, ``BOTTOMS``)."""
    found: set[str] = set()
    for module in package.imports:
        parts = module.split(".")
        room = package.room_of(module)
        if room in LAYERED_ROOMS and len(parts) > 2 and package.layer_of(module) not in {
                f"{room}.{layer}" for layer in LAYERED_ROOMS[room]}:
            layers = " or ".join(f"{room}.{layer}" for layer in LAYERED_ROOMS[room])
            found.add(f"{module}: every module of {room} is in {layers}")
    for rule in LAYER_RULES:
        own = f"{rule.room}.{rule.layer}"
        for module in package.imports:
            if package.layer_of(module) != own:
                continue
            named: set[str] = set()
            for reached, chain in package.chains_from(module).items():
                path = " -> ".join(chain)
                layer = package.layer_of(reached)
                if layer is not None and layer.split(".")[1] in rule.forbidden_layers and layer not in named:
                    named.add(layer)
                    found.add(f"{module}: {own} must not reach {layer} ({path})")
                for library in sorted(set(rule.forbidden_libraries) & package.external(reached) - named):
                    named.add(library)
                    found.add(f"{module}: {own} must not reach {library} ({path} imports {library})")
    for bottom in BOTTOMS:
        module = f"{package.name}.{bottom}"
        if module not in package.imports:
            continue
        for reached, chain in package.chains_from(module).items():
            if reached != module and module in package.chains_from(reached):
                found.add(f"{module}: the bottom of its layer reaches {reached}, which reaches it back "
                          f"({' -> '.join(chain)})")
    return found


def main(argv: Iterable[str]) -> int:
    args = list(argv)
    package_dir = Path(args[0] if args else "operator/oam_operator")
    problems = violations(Package.read(package_dir))
    for line in problems:
        print(line)
    if problems:
        print(f"import direction: {len(problems)} violation(s)", file=sys.stderr)
        return 1
    print(f"import direction: clean ({package_dir})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
