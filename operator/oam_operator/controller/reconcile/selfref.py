"""An Application that creates itself, or an Application that contains it
(docs/operator.md#identity-hostile-input-and-limits).

Such an Application can never become Ready: applying itself rewrites its own spec, nests its
own status message on every pass, and its deletion waits for itself, so it could only be
released with ``abandon``. The refusal comes after the transform and before ``apply()``,
so nothing is touched; ``InvalidObjects`` with the message of ``self_reference``.

Checked: every desired object of kind ``Application`` (group ``oam-operator.dev``, any
version) that is this Application, and every ``Application`` manifest found anywhere inside
another desired Application (a ``passthrough`` or ``manifests`` object nested in its spec)
that is this one — an embedded manifest without a namespace is in the namespace of the
Application that embeds it. The walk is iterative (specs can be deep).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from oam_operator.api.meta import GROUP


def _application(value: Any, default_namespace: str) -> tuple[str, str] | None:
    """``(namespace, name)`` when ``value`` is an Application manifest, else ``None``."""
    if not isinstance(value, Mapping) or value.get("kind") != "Application":
        return None
    api_version = value.get("apiVersion")
    if not isinstance(api_version, str) or api_version.split("/", 1)[0] != GROUP:
        return None
    meta = value.get("metadata")
    meta = meta if isinstance(meta, Mapping) else {}
    name, namespace = meta.get("name"), meta.get("namespace") or default_namespace
    if not isinstance(name, str) or not isinstance(namespace, str):
        return None
    return namespace, name


def _embedded(spec: Any, namespace: str) -> Iterator[tuple[str, str]]:
    """Every Application manifest inside ``spec`` (iteratively, in document order)."""
    stack: list[tuple[Any, str]] = [(spec, namespace)]
    while stack:
        value, ns = stack.pop()
        found = _application(value, ns)
        if found is not None:
            yield found
            ns = found[0]
        if isinstance(value, Mapping):
            stack.extend((child, ns) for child in reversed(list(value.values())))
        elif isinstance(value, list):
            stack.extend((child, ns) for child in reversed(value))


def self_reference(namespace: str, name: str, objects: Iterable[Mapping[str, Any]], label_key: str) -> str | None:
    """The refusal when the desired ``objects`` include or contain this Application, else ``None``."""
    me = (namespace, name)
    for obj in objects:
        found = _application(obj, namespace)
        if found is None:
            continue
        labels = (obj.get("metadata") or {}).get("labels") or {}
        component = labels.get(label_key)
        origin = f'component "{component}"' if isinstance(component, str) else "the Application"
        if found == me:
            return f"Application {namespace}/{name} includes itself: {origin} creates Application {namespace}/{name}"
        for inner in _embedded(obj.get("spec"), found[0]):
            if inner == me:
                return (f"Application {namespace}/{name} contains itself: {origin} creates Application "
                        f"{found[0]}/{found[1]}, which contains Application {namespace}/{name}")
    return None
