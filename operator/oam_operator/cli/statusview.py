"""What ``oam-operator status`` shows (docs/operator.md#the-command-line): a view of an Application's status, its
text and JSON renderings, the exit codes and the ``--wait`` loop. Pure: the cluster read and the
clock are passed in, so every rule here is unit-tested without a cluster.

The status is read from the raw JSON rather than through ``api.ApplicationStatus`` on purpose:
the CLI must show whatever a cluster holds, including a status written by a newer operator with
phases or states this version does not know, so reading never fails on a value.

Decisions where the spec is silent:

- **Bundle membership.** An item is *being pruned* when it is no longer desired (``digest`` is
  ``""``) and its phase is ``ScheduledForDeletion``, ``ScheduledForCompletion`` or ``Deleting``
  (docs/reconciler.md#phases-and-statuses, docs/reconciler.md#item-state-machine); its ``applyOrder`` is stale, so it
  belongs to no bundle. Every other
  item belongs to the first bundle whose ``waves`` range contains its ``applyOrder``. Items no
  bundle claims (a status without ``bundles``) are listed under ``(no bundle)``, before
  ``(pruning)``, and in JSON under the extra key ``"unassigned"`` (always present, usually ``[]``).
- **Item order.** Within a bundle, the order the reconciler applies them: ascending
  ``applyOrder``, then the kind's apply priority (docs/reconciler.md#kind-priorities), ties in inventory order.
  Pruned items keep inventory (deletion) order.
- **Columns.** Bundle lines: name padded to ``max(10, longest + 2)``, state to 10, ``ready/objects``
  to ``max(6, longest + 2)``. Item lines: ``Kind name`` padded to ``max(38, longest + 2)`` over the
  whole tree, phase to ``max(9, longest of its section) + 2``. These reproduce the example in
  docs/operator.md#the-command-line.
- **No status yet.** State ``<none>``, Ready ``Unknown``, revision 0 and a message saying the
  operator has not processed the Application (is it running?). JSON then has ``"state": null``.
- **Dependencies** (``status.dependencies``, app-dependency policies): a header line
  ``Depends on: db (Ready), infra/cache (Missing)``; with ``--tree`` also a first section
  ``(depends on)`` listing each as ``Application <name>`` with its state; in JSON the key
  ``"dependencies"`` (``[{namespace, name, state, ready}]``), present only when the status has them.
- **Drift** (``status.drift``, docs/operator.md#drift): one header line per drifted object,
  ``Drifted: Deployment web: spec.template.spec.containers[name=web].image`` (``deleted`` for a
  deleted one, ``; held until <time>`` while correction waits); in JSON the key ``"drift"`` as the
  status has it, present only when it names objects.
- **Hooks** (``status.hooks``, docs/operator.md#lifecycle-hooks): one header line per recorded
  run, ``Hook: PreApply Job migrate (run r2): Succeeded`` (``: Failed: <why>`` for a failed one,
  ``unknown`` for a run without a state);
  with ``--tree`` also a section ``(hooks)`` listing each object with its phase and state; in
  JSON the key ``"hooks"`` as the status has it, present only when it has runs.
- **Trace** (``status.timeline``, docs/operator.md#tracing): the last revision's trace id, when
  tracing recorded one, as a header line ``Trace: <32 hex digits>`` after the cluster line, and in
  JSON under ``"traceId"``, present only then.
- **Exit code.** 0 when ``status.state`` is ``Ready``, else 3. ``--wait`` is stricter: it stops on
  ``Ready`` or ``Error`` only once the status describes the current spec
  (``observedGeneration >= metadata.generation``), and on ``Ready`` only once a pending
  ``<domain>/requested-at`` was handled, so ``kubectl apply`` or ``oam-operator reconcile``
  followed by ``status --wait`` never returns on the previous pass's result.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import click

from oam_operator.api.compact_inventory import CompactInventoryError, read_status_inventory
from oam_operator.reconciler.priorities import apply_priority

__all__ = [
    "DEFAULT_DOMAIN",
    "EXIT_FAILURE",
    "EXIT_NOT_READY",
    "EXIT_READY",
    "EXIT_USAGE",
    "PRUNING_PHASES",
    "BundleView",
    "ItemView",
    "StatusView",
    "WaitResult",
    "build_view",
    "bundle_lines",
    "exit_code",
    "progress_line",
    "render_json",
    "render_text",
    "to_json",
    "wait_for",
    "wait_outcome",
]

DEFAULT_DOMAIN = "oam-operator.dev"

EXIT_READY = 0
EXIT_FAILURE = 1
EXIT_USAGE = 2
EXIT_NOT_READY = 3

PRUNING_PHASES = frozenset({"ScheduledForDeletion", "ScheduledForCompletion", "Deleting"})
READY_CONDITION = "Ready"  # api.conditions.ConditionType.READY, pinned by tests/unit/cli/test_cli_startup.py
NO_STATUS_MESSAGE = "No status yet: the operator has not processed this Application (is it running?)"

_GOOD = frozenset({"Ready", "True", "Current", "Completed", "Succeeded"})
_BAD = frozenset({"Error", "False", "Failed"})


@dataclass(frozen=True)
class ItemView:
    """One inventory item as the CLI shows it."""

    group: str
    version: str
    kind: str
    namespace: str
    name: str
    phase: str
    status: str
    apply_order: int
    digest: str

    @property
    def pruning(self) -> bool:
        """Not desired any more and on its way out: shown under ``(pruning)``, in no bundle."""
        return self.digest == "" and self.phase in PRUNING_PHASES

    def label(self, app_namespace: str) -> str:
        """``Kind name``; ``Kind ns/name`` outside the Application's namespace; cluster-scoped: the name."""
        if self.namespace and self.namespace != app_namespace:
            return f"{self.kind} {self.namespace}/{self.name}"
        return f"{self.kind} {self.name}"

    def to_json(self) -> dict[str, str]:
        return {
            "group": self.group,
            "version": self.version,
            "kind": self.kind,
            "namespace": self.namespace,
            "name": self.name,
            "phase": self.phase,
            "status": self.status,
        }


@dataclass(frozen=True)
class BundleView:
    """One entry of ``status.bundles`` with the items it holds."""

    name: str
    depends_on: tuple[str, ...]
    objects: int
    ready: int
    state: str
    waves: tuple[int, int] | None
    items: tuple[ItemView, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "dependsOn": list(self.depends_on),
            "objects": self.objects,
            "ready": self.ready,
            "state": self.state,
            "waves": None if self.waves is None else {"first": self.waves[0], "last": self.waves[1]},
            "items": [item.to_json() for item in self.items],
        }


@dataclass(frozen=True)
class StatusView:
    """Everything ``status`` prints, read leniently from an Application object."""

    name: str
    namespace: str
    generation: int | None
    observed_generation: int | None
    state: str | None
    ready: str
    message: str
    revision: int
    objects: int
    ready_objects: int
    conditions: tuple[Mapping[str, Any], ...]
    bundles: tuple[BundleView, ...]
    pruning: tuple[ItemView, ...]
    unassigned: tuple[ItemView, ...]
    requested_at: str | None
    last_handled_reconcile_at: str | None
    dependencies: tuple[Mapping[str, Any], ...] = ()
    drift: tuple[Mapping[str, Any], ...] = ()
    #: the remote cluster holding the objects and the profile naming it (docs/multicluster.md)
    cluster: str | None = None
    profile: str = ""
    #: with a topology policy: each cluster's line (docs/multicluster.md#topology)
    clusters: tuple[Mapping[str, Any], ...] = ()
    rollout: Mapping[str, Any] | None = None
    #: the recorded runs of lifecycle hooks (docs/operator.md#lifecycle-hooks)
    hooks: tuple[Mapping[str, Any], ...] = ()
    #: the last revision's trace id when tracing recorded one (docs/operator.md#tracing)
    trace_id: str | None = None

    @property
    def current(self) -> bool:
        """The status describes the current spec (the operator saw this generation)."""
        if self.observed_generation is None:
            return False
        return self.generation is None or self.observed_generation >= self.generation


# ------------------------------------------------------------------------------------------
# Reading


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _inventory(status: Mapping[str, Any]) -> list[Any]:
    """The inventory in c-o-r JSON shape: decoded from ``compactInventory``, else ``inventory``;
    an undecodable compact form reads as empty (the view never fails on odd input)."""
    try:
        return read_status_inventory(status)
    except CompactInventoryError:
        return []


def _mappings(value: Any) -> list[Mapping[str, Any]]:
    return [entry for entry in value if isinstance(entry, Mapping)] if isinstance(value, list) else []


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _int(value: Any, default: int = 0) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def _optional_int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _item(raw: Mapping[str, Any]) -> ItemView:
    return ItemView(
        group=_text(raw.get("group")),
        version=_text(raw.get("version")),
        kind=_text(raw.get("kind")),
        namespace=_text(raw.get("namespace")),
        name=_text(raw.get("name")),
        phase=_text(raw.get("phase")),
        status=_text(raw.get("status")),
        apply_order=_int(raw.get("applyOrder")),
        digest=_text(raw.get("digest")),
    )


def _waves(raw: Any) -> tuple[int, int] | None:
    waves = _mapping(raw)
    first, last = _optional_int(waves.get("first")), _optional_int(waves.get("last"))
    return None if first is None or last is None else (first, last)


def _apply_rank(item: ItemView) -> tuple[int, int]:
    group_kind = f"{item.kind}.{item.group}" if item.group else item.kind
    return item.apply_order, apply_priority(group_kind)


def build_view(app: Mapping[str, Any], domain: str = DEFAULT_DOMAIN) -> StatusView:
    """The view of an Application object (the API's JSON); missing or odd fields read as empty."""
    metadata = _mapping(app.get("metadata"))
    status = _mapping(app.get("status"))
    conditions = _mappings(status.get("conditions"))
    # Not api.conditions.ready_condition: that module loads pydantic, a third of status's start-up.
    ready = next((c for c in conditions if c.get("type") == READY_CONDITION), None)
    items = [_item(raw) for raw in _mappings(_inventory(status))]
    raw_bundles = _mappings(status.get("bundles"))
    bundle_waves = [_waves(raw.get("waves")) for raw in raw_bundles]
    members: list[list[ItemView]] = [[] for _ in raw_bundles]
    unassigned: list[ItemView] = []
    for item in items:
        if item.pruning:
            continue
        index = next(
            (k for k, w in enumerate(bundle_waves) if w is not None and w[0] <= item.apply_order <= w[1]), None
        )
        (unassigned if index is None else members[index]).append(item)
    bundles = tuple(
        BundleView(
            name=_text(raw.get("name")),
            depends_on=tuple(d for d in raw.get("dependsOn") or () if isinstance(d, str)),
            objects=_int(raw.get("objects")),
            ready=_int(raw.get("ready")),
            state=_text(raw.get("state")),
            waves=waves,
            items=tuple(sorted(held, key=_apply_rank)),
        )
        for raw, waves, held in zip(raw_bundles, bundle_waves, members, strict=True)
    )
    annotations = _mapping(metadata.get("annotations"))
    state = _text(status.get("state")) or None
    message = _text(ready.get("message")) if ready is not None else ""
    if state is None and not message:
        message = NO_STATUS_MESSAGE
    return StatusView(
        name=_text(metadata.get("name")),
        namespace=_text(metadata.get("namespace")),
        generation=_optional_int(metadata.get("generation")),
        observed_generation=_optional_int(status.get("observedGeneration")),
        state=state,
        ready=_text(ready.get("status")) if ready is not None else "Unknown",
        message=message,
        revision=_int(status.get("revision")),
        objects=_int(status.get("objects")),
        ready_objects=_int(status.get("readyObjects")),
        conditions=tuple(conditions),
        bundles=bundles,
        pruning=tuple(item for item in items if item.pruning),
        unassigned=tuple(sorted(unassigned, key=_apply_rank)),
        requested_at=annotations.get(f"{domain}/requested-at"),
        last_handled_reconcile_at=_text(status.get("lastHandledReconcileAt")) or None,
        dependencies=tuple(
            {"namespace": _text(d.get("namespace")), "name": _text(d.get("name")), "state": _text(d.get("state")),
             "ready": d.get("ready") is True}
            for d in _mappings(status.get("dependencies"))
        ),
        drift=tuple(dict(d) for d in _mappings(status.get("drift"))),
        cluster=_text(status.get("cluster")) or None,
        clusters=tuple(dict(c) for c in _mappings(status.get("clusters"))),
        rollout=dict(_mapping(status.get("rollout"))) or None,
        profile=_text(status.get("profile")),
        hooks=tuple(dict(h) for h in _mappings(status.get("hooks"))),
        trace_id=_last_trace_id(status),
    )


def _last_trace_id(status: Mapping[str, Any]) -> str | None:
    entries = _mappings(status.get("timeline"))
    return (_text(entries[-1].get("traceId")) or None) if entries else None


# ------------------------------------------------------------------------------------------
# Exit codes and waiting


def exit_code(view: StatusView) -> int:
    """0 when the Application is Ready, 3 otherwise (docs/operator.md#the-command-line)."""
    return EXIT_READY if view.state == "Ready" else EXIT_NOT_READY


def wait_outcome(view: StatusView) -> int | None:
    """The exit code that ends ``--wait`` now, or ``None`` to keep polling (see the module doc)."""
    if not view.current:
        return None
    if view.state == "Ready":
        handled = view.requested_at is None or view.requested_at == view.last_handled_reconcile_at
        return EXIT_READY if handled else None
    if view.state == "Error":
        return EXIT_NOT_READY
    return None


@dataclass(frozen=True)
class WaitResult:
    view: StatusView
    code: int
    timed_out: bool


def wait_for(
    read: Callable[[], StatusView],
    timeout: float,
    *,
    poll: float = 1.0,
    first_poll: float = 0.1,
    retry: Callable[[Exception], bool] = lambda exc: False,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
    on_view: Callable[[StatusView], None] | None = None,
) -> WaitResult:
    """Poll ``read`` until :func:`wait_outcome` decides or ``timeout`` seconds pass (exit 3).

    The polls start ``first_poll`` apart and double up to ``poll``: an unchanged Application is
    handled within a few hundred milliseconds, and a wait of that long should not cost a second.

    Failures for which ``retry`` is true (a restarting API server) are polled through until the
    deadline; at the deadline the last view is returned, or the failure raised if none was read.
    """
    deadline = clock() + timeout
    view: StatusView | None = None
    failure: Exception | None = None
    step = min(first_poll, poll)
    while True:
        try:
            view = read()
        except Exception as exc:
            if not retry(exc):
                raise
            failure = exc
        else:
            if on_view is not None:
                on_view(view)
            code = wait_outcome(view)
            if code is not None:
                return WaitResult(view, code, timed_out=False)
        now = clock()
        if now >= deadline:
            if view is None:
                assert failure is not None
                raise failure
            return WaitResult(view, EXIT_NOT_READY, timed_out=True)
        sleep(min(step, deadline - now))
        step = min(poll, step * 2)


def progress_line(view: StatusView) -> str:
    """One line of ``--wait`` progress: state, ready count and the first line of the message."""
    state = view.state or "<none>"
    if not view.current:
        state += " (not yet observed)"
    message = view.message.splitlines()[0] if view.message else ""
    line = f"{state}  {view.ready_objects}/{view.objects} ready"
    return f"{line}  {message}" if message else line


# ------------------------------------------------------------------------------------------
# Rendering


def _paint(text: str, color: bool) -> str:
    if not color or not text:
        return text
    colour = "green" if text in _GOOD else "red" if text in _BAD else "yellow"
    return click.style(text, fg=colour)


def _cell(text: str, width: int, color: bool) -> str:
    """``text`` left-aligned in ``width`` columns; only the word is coloured, never the padding."""
    return _paint(text, color) + " " * max(width - len(text), 0)


def _header(view: StatusView, color: bool) -> list[str]:
    state = view.state or "<none>"
    lines = [
        f"Application {view.namespace}/{view.name}  State: {_paint(state, color)}  "
        f"Ready: {_paint(view.ready, color)}  Revision: {view.revision}  "
        f"Objects: {view.ready_objects}/{view.objects} ready"
    ]
    if view.cluster:
        lines.append(f"Cluster: {view.cluster} (ClusterProfile {view.profile})")
    if view.trace_id:
        lines.append(f"Trace: {view.trace_id}")
    if view.message:
        lines.append("Message: " + view.message.replace("\n", "\n" + " " * len("Message: ")))
    if view.dependencies:
        shown = [f"{_dependency_name(d, view.namespace)} ({_paint(d['state'], color)})" for d in view.dependencies]
        lines.append("Depends on: " + ", ".join(shown))
    lines.extend(_drift_line(d, view.namespace, color) for d in view.drift)
    lines.extend(_hook_line(h, view.namespace, color) for h in view.hooks)
    lines.extend(_cluster_lines(view, color))
    return lines


def _cluster_lines(view: StatusView, color: bool) -> list[str]:
    """A topology's clusters: ``Clusters: <ready>/<selected>`` (and the rollout), then one line each."""
    if not view.clusters:
        return []
    ready = sum(1 for c in view.clusters if c.get("state") == "Ready")
    head = f"Clusters: {ready}/{len(view.clusters)} ready"
    rollout = view.rollout or {}
    if rollout:
        head += f"  Rollout: revision {_int(rollout.get('revision'))} in {_int(rollout.get('groups'))} groups"
        if rollout.get("halted"):
            head += f", halted by {_text(rollout.get('halted'))}"
    lines = [head]
    width = max(len(_text(c.get("name"))) for c in view.clusters) + 2
    state_width = max(len(_text(c.get("state"))) for c in view.clusters) + 2
    for line in view.clusters:
        carries = f"r{_int(line.get('fleetRevision'))}" if line.get("fleetRevision") is not None else "-"
        text = ("  " + _text(line.get("name")).ljust(width) + _cell(_text(line.get("state")), state_width, color)
                + carries.ljust(6) + _text(line.get("message")))
        lines.append(text.rstrip())
    return lines


def _drift_line(drift: Mapping[str, Any], app_namespace: str, color: bool) -> str:
    namespace, name = _text(drift.get("namespace")), _text(drift.get("name"))
    where = name if not namespace or namespace == app_namespace else f"{namespace}/{name}"
    fields = [_text(f) for f in drift.get("fields") or [] if isinstance(f, str)]
    what = "deleted" if drift.get("deleted") is True else ", ".join(fields)
    held = f"; held until {_text(drift.get('heldUntil'))}" if drift.get("heldUntil") else ""
    return f"{_paint('Drifted', color)}: {_text(drift.get('kind'))} {where}: {what}{held}"


def _hook_line(hook: Mapping[str, Any], app_namespace: str, color: bool) -> str:
    """``Hook: <phase> <Kind name> (run <run>): <state>[: <why>]``."""
    label = _hook_item(hook).label(app_namespace)
    state, why, run = _text(hook.get("state")) or "unknown", _text(hook.get("message")), _text(hook.get("run"))
    return (f"Hook: {_text(hook.get('phase'))} {label}{f' (run {run})' if run else ''}: {_paint(state, color)}"
            + (f": {why}" if why else ""))


def _hook_item(hook: Mapping[str, Any]) -> ItemView:
    """A hook's run as a tree line: its object, its phase, its state."""
    api_version = _text(hook.get("apiVersion"))
    group, _, version = api_version.rpartition("/")
    return ItemView(group=group, version=version, kind=_text(hook.get("kind")), namespace=_text(hook.get("namespace")),
                    name=_text(hook.get("name")), phase=_text(hook.get("phase")), status=_text(hook.get("state")),
                    apply_order=0, digest="")


def _dependency_name(dependency: Mapping[str, Any], app_namespace: str) -> str:
    name, namespace = dependency["name"], dependency["namespace"]
    return name if not namespace or namespace == app_namespace else f"{namespace}/{name}"


def _dependency_items(view: StatusView) -> tuple[ItemView, ...]:
    """The dependencies as tree lines: ``Application <name>`` and the state."""
    return tuple(
        ItemView(group="", version="", kind="Application", namespace=d["namespace"], name=d["name"],
                 phase=d["state"], status="", apply_order=0, digest="")
        for d in view.dependencies
    )


def _bundle_lines(bundles: Sequence[BundleView], color: bool) -> list[str]:
    counts = [f"{b.ready}/{b.objects}" for b in bundles]
    name_width = max([10, *(len(b.name) + 2 for b in bundles)])
    state_width = max([10, *(len(b.state) + 2 for b in bundles)])
    count_width = max([6, *(len(c) + 2 for c in counts)])
    lines = []
    for bundle, count in zip(bundles, counts, strict=True):
        line = bundle.name.ljust(name_width) + _cell(bundle.state, state_width, color) + count.ljust(count_width)
        if bundle.depends_on:
            line += "depends on " + ", ".join(bundle.depends_on)
        lines.append(line.rstrip())
    return lines


def _item_lines(items: Sequence[ItemView], app_namespace: str, label_width: int, color: bool) -> list[str]:
    phase_width = max([9, *(len(item.phase) for item in items)]) + 2
    lines = []
    for index, item in enumerate(items):
        connector = "└── " if index == len(items) - 1 else "├── "
        label = item.label(app_namespace).ljust(label_width)
        lines.append((connector + label + item.phase.ljust(phase_width) + _paint(item.status, color)).rstrip())
    return lines


def render_text(view: StatusView, tree: bool = False, color: bool = False) -> str:
    """The text of docs/operator.md#the-command-line: header, message, bundle lines and, with ``tree``, their items."""
    lines = _header(view, color)
    body = bundle_lines(view, tree, color)
    if body:
        lines.append("")
    return "\n".join(lines + body) + "\n"


def bundle_lines(view: StatusView, tree: bool = False, color: bool = False) -> list[str]:
    """The lines under the header: each bundle and, with ``tree``, its items (also under each
    cluster of a fleet Application's tree, ``cli/fleetstatus.py``)."""
    lines: list[str] = []
    sections: list[tuple[str, Sequence[ItemView]]] = [
        (line, bundle.items if tree else ())
        for line, bundle in zip(_bundle_lines(view.bundles, color), view.bundles, strict=True)
    ]
    if tree and view.dependencies:
        sections.insert(0, ("(depends on)", _dependency_items(view)))
    if tree:
        hooks = tuple(_hook_item(hook) for hook in view.hooks)
        sections += [
            (title, items) for title, items in (("(no bundle)", view.unassigned), ("(pruning)", view.pruning),
                                                ("(hooks)", hooks)) if items
        ]
    every_item = [item for _, items in sections for item in items]
    label_width = max([36, *(len(item.label(view.namespace)) for item in every_item)]) + 2
    for title, items in sections:
        lines.append(title)
        lines.extend(_item_lines(items, view.namespace, label_width, color))
    return lines


def to_json(view: StatusView) -> dict[str, Any]:
    """The ``-o json`` document (docs/operator.md#the-command-line), plus ``"unassigned"`` (see the module doc)."""
    return {
        "name": view.name,
        "namespace": view.namespace,
        "state": view.state,
        "conditions": [dict(c) for c in view.conditions],
        "revision": view.revision,
        "bundles": [bundle.to_json() for bundle in view.bundles],
        "pruning": [item.to_json() for item in view.pruning],
        "unassigned": [item.to_json() for item in view.unassigned],
    } | ({"cluster": view.cluster} if view.cluster else {}) | (
        {"dependencies": [dict(d) for d in view.dependencies]} if view.dependencies else {}) | (
        {"drift": [dict(d) for d in view.drift]} if view.drift else {}) | (
        {"clusters": [dict(c) for c in view.clusters]} if view.clusters else {}) | (
        {"rollout": dict(view.rollout)} if view.rollout else {}) | (
        {"hooks": [dict(h) for h in view.hooks]} if view.hooks else {}) | (
        {"traceId": view.trace_id} if view.trace_id else {})


def render_json(view: StatusView) -> str:
    return json.dumps(to_json(view), indent=2) + "\n"
