"""The dependency graph between Applications: readiness, the gate, cycles and who to wake.

Pure: the operator feeds it every Application it watches (``node_from_object`` on each watch
event) and asks it questions; it never reads the cluster. Edges come from each Application's
``spec.policies`` (``app_dependency.declared_in_spec``), so the graph is complete before any
Application's first pass and after an operator restart, and an edited policy changes it at
once.

Decisions recorded here:

- **Ready** means ``status.state`` is ``Ready`` and ``status.observedGeneration`` equals
  ``metadata.generation`` (the operator applied the current spec), and the Application is not
  being deleted.
- **Wake-ups.** When an Application appears, disappears, or its readiness flips, the
  Applications that depend on it are woken — only those, once. When its own dependencies change
  (the policy was edited), the old and new dependencies and its dependants are woken as well, so
  a cycle that forms or breaks is seen by every member. Nothing else wakes anyone, so a
  dependency's progress messages cost its dependants nothing (no polling, no storm).
- **Cycles** are walked from the Application asking, following dependencies in sorted
  (namespace, name) order; the cycle found is printed from its smallest member, so every member
  of a simple cycle reports the same text: ``application cycle detected: a -> b -> a``. Names are
  ``name`` when every member shares one namespace, else ``namespace/name``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .app_dependency import AppRef, declared_in_spec

MISSING = "Missing"


@dataclass(frozen=True)
class AppNode:
    """What the graph knows of one Application."""

    ref: AppRef
    uid: str
    state: str
    generation: int
    observed_generation: int
    deleting: bool
    depends_on: tuple[AppRef, ...]

    @property
    def ready(self) -> bool:
        return self.state == "Ready" and self.observed_generation == self.generation and not self.deleting

    def describe(self) -> str:
        """The state shown to dependants: the state, ``Deleting``, or ``Ready at generation g of n``."""
        if self.deleting:
            return "Deleting"
        if self.state == "Ready" and not self.ready:
            return f"Ready at generation {self.observed_generation} of {self.generation}"
        return self.state or "Pending"


def node_from_object(obj: Mapping[str, Any], *, allow_cross_namespace: bool) -> AppNode:
    """The node of an Application object (the API's JSON); odd fields read as empty.

    References into other namespaces are left out unless the operator allows them (the
    Application then fails its pass with the refusal, and must not block anyone's deletion).
    """
    meta = obj.get("metadata") or {}
    status = obj.get("status") or {}
    spec = obj.get("spec") or {}
    ref = AppRef(str(meta.get("namespace", "")), str(meta.get("name", "")))
    deps = declared_in_spec(spec.get("policies") or (), ref.namespace)
    if not allow_cross_namespace:
        deps = tuple(d for d in deps if d.namespace == ref.namespace)
    return AppNode(
        ref=ref,
        uid=str(meta.get("uid", "")),
        state=str(status.get("state") or ""),
        generation=_int(meta.get("generation"), 1),
        observed_generation=_int(status.get("observedGeneration"), 0),
        deleting=bool(meta.get("deletionTimestamp")),
        depends_on=deps,
    )


def _int(value: Any, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


@dataclass(frozen=True)
class DependencyState:
    """One dependency as the gate saw it."""

    ref: AppRef
    state: str
    ready: bool

    def to_status(self) -> dict[str, Any]:
        return {"namespace": self.ref.namespace, "name": self.ref.name, "state": self.state, "ready": self.ready}


class AppGraph:
    """Nodes by reference plus the reverse edges (dependants). Not thread-safe: callers lock."""

    def __init__(self) -> None:
        self._nodes: dict[AppRef, AppNode] = {}
        self._dependants: dict[AppRef, set[AppRef]] = {}

    def __len__(self) -> int:
        return len(self._nodes)

    def node(self, ref: AppRef) -> AppNode | None:
        return self._nodes.get(ref)

    def dependants(self, ref: AppRef) -> list[AppRef]:
        """Existing Applications that depend on ``ref``, sorted."""
        return sorted(d for d in self._dependants.get(ref, ()) if d in self._nodes)

    def upsert(self, node: AppNode) -> set[str]:
        """Record ``node``; returns the UIDs to wake (see the module doc)."""
        old = self._nodes.get(node.ref)
        if old is not None and old.uid != node.uid:
            # The same name, recreated: the old one is gone first.
            self.remove(old.ref)
            old = None
        self._nodes[node.ref] = node
        old_deps = old.depends_on if old is not None else ()
        if old_deps != node.depends_on:
            for dep in old_deps:
                self._dependants.get(dep, set()).discard(node.ref)
            for dep in node.depends_on:
                self._dependants.setdefault(dep, set()).add(node.ref)
        refs: set[AppRef] = set()
        if old is None or old.ready != node.ready:
            refs.update(self.dependants(node.ref))
        if old is not None and old_deps != node.depends_on:
            refs.update(old_deps)
            refs.update(node.depends_on)
            refs.update(self.dependants(node.ref))
        return self._uids(refs - {node.ref})

    def remove(self, ref: AppRef) -> set[str]:
        """Forget ``ref`` (deleted); returns the UIDs of its dependants and dependencies to wake."""
        old = self._nodes.pop(ref, None)
        if old is None:
            return set()
        for dep in old.depends_on:
            self._dependants.get(dep, set()).discard(ref)
        # Dependencies may be waiting for this dependant to go (the reverse gate on deletion).
        return self._uids({*self.dependants(ref), *old.depends_on} - {ref})

    def _uids(self, refs: Iterable[AppRef]) -> set[str]:
        return {n.uid for r in refs if (n := self._nodes.get(r)) is not None and n.uid}

    # -- questions asked by a pass ------------------------------------------------------------

    def states(self, deps: Sequence[AppRef]) -> list[DependencyState]:
        """Each dependency's state, in the given order (``Missing`` when absent)."""
        result = []
        for ref in deps:
            node = self._nodes.get(ref)
            if node is None:
                result.append(DependencyState(ref, MISSING, False))
            else:
                result.append(DependencyState(ref, node.describe(), node.ready))
        return result

    def find_cycle(self, start: AppRef, deps: Sequence[AppRef]) -> list[AppRef] | None:
        """A cycle through ``start`` (whose dependencies are ``deps``), from its smallest member.

        Returns the members followed by the first one again, or ``None``.
        """
        parents: dict[AppRef, AppRef] = {}
        stack: list[tuple[AppRef, Iterator[AppRef]]] = [(start, iter(sorted(set(deps))))]
        visited = {start}
        while stack:
            current, children = stack[-1]
            child = next(children, None)
            if child is None:
                stack.pop()
                continue
            if child == start:
                path = [current]
                while path[-1] != start:
                    path.append(parents[path[-1]])
                cycle = list(reversed(path))
                low = cycle.index(min(cycle))
                rotated = cycle[low:] + cycle[:low]
                return [*rotated, rotated[0]]
            if child in visited:
                continue
            visited.add(child)
            parents[child] = current
            node = self._nodes.get(child)
            stack.append((child, iter(sorted(set(node.depends_on))) if node is not None else iter(())))
        return None

    def blocking_dependants(self, ref: AppRef) -> list[AppRef]:
        """Dependants that keep ``ref`` from being deleted: every existing one, except members of a
        cycle through ``ref`` (they could never go first)."""
        node = self._nodes.get(ref)
        upstream = self._reachable(node.depends_on) if node is not None else set()
        return [d for d in self.dependants(ref) if d not in upstream]

    def _reachable(self, roots: Iterable[AppRef]) -> set[AppRef]:
        seen: set[AppRef] = set()
        todo = list(roots)
        while todo:
            ref = todo.pop()
            if ref in seen:
                continue
            seen.add(ref)
            node = self._nodes.get(ref)
            if node is not None:
                todo.extend(node.depends_on)
        return seen


def cycle_message(cycle: Sequence[AppRef]) -> str:
    """``application cycle detected: a -> b -> a`` (``namespace/name`` when namespaces differ)."""
    namespaces = {ref.namespace for ref in cycle}
    names = [ref.name if len(namespaces) == 1 else str(ref) for ref in cycle]
    return "application cycle detected: " + " -> ".join(names)


def waiting_message(own_namespace: str, states: Sequence[DependencyState]) -> str:
    """``Waiting for Applications to be Ready: db (Processing), cache (Missing)``."""
    waiting = [f"{s.ref.display(own_namespace)} ({s.state})" for s in states if not s.ready]
    return "Waiting for Applications to be Ready: " + ", ".join(waiting)


def dependants_message(own_namespace: str, dependants: Sequence[AppRef], annotation: str) -> str:
    """The reverse gate's ``Deletion blocked`` message."""
    names = ", ".join(ref.display(own_namespace) for ref in dependants)
    return (
        f"Deletion blocked: Applications depend on it: {names} (delete them or remove their app-dependency on it; "
        f'the annotation {annotation}: "true" deletes it anyway)'
    )
