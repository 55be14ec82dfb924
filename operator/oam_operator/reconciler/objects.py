"""Desired objects: validation and normalisation before anything is read or written
(docs/reconciler.md#steps-of-an-apply-call, docs/reconciler.md#deletion, docs/reconciler.md#target-confinement).

Everything here works on deep copies; the caller's manifests are never mutated. Errors are
``ObjectValidationError`` with the exact texts of the spec, raised in object order, step by
step (all objects pass step 1 before any is checked by step 2, and so on).
"""

from __future__ import annotations

import base64
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from oam_operator.common.treecopy import copy_tree

from .annotations import AnnotationDefaults, ObjectAnnotations, annotation_keys, parse_object_annotations
from .client import ClusterClient
from .discovery import ApiResource
from .errors import ApiError, ObjectValidationError
from .identity import group_kind_string, object_key, split_api_version
from .typeinfo import TypeVersionInfo

__all__ = [
    "API_SERVICE",
    "CRD",
    "DesiredObject",
    "ObjectRef",
    "is_type_provider",
    "prepare_objects",
]

CRD = ("apiextensions.k8s.io", "CustomResourceDefinition")
API_SERVICE = ("apiregistration.k8s.io", "APIService")
NAMESPACE = ("", "Namespace")


def is_type_provider(group: str, kind: str) -> bool:
    """CRDs and APIServices bring types and carry our finalizer."""
    return (group, kind) in (CRD, API_SERVICE)


@dataclass(frozen=True)
class ObjectRef:
    """Enough to address an object: its type, namespace, name and message key."""

    group: str
    version: str
    kind: str
    namespace: str
    name: str

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def key(self) -> str:
        return object_key(self.group, self.version, self.kind, self.namespace, self.name)

    @property
    def group_kind(self) -> str:
        return group_kind_string(self.group, self.kind)

    @property
    def is_type_provider(self) -> bool:
        return is_type_provider(self.group, self.kind)


@dataclass
class DesiredObject:
    """A normalised desired manifest with everything parsed from it."""

    index: int
    manifest: dict[str, Any]
    ref: ObjectRef
    annotations: ObjectAnnotations = field(init=False)
    resource: ApiResource | None = None
    namespaced: bool | None = None
    managed_types: list[TypeVersionInfo] = field(default_factory=list)
    digest: str = ""

    @property
    def key(self) -> str:
        return self.ref.key


def _raw_key(obj: Mapping[str, Any]) -> str:
    api_version = obj.get("apiVersion")
    kind = obj.get("kind")
    group, version = split_api_version(api_version) if isinstance(api_version, str) else ("", "")
    metadata = obj.get("metadata")
    metadata = metadata if isinstance(metadata, Mapping) else {}
    namespace = metadata.get("namespace")
    name = metadata.get("name")
    return object_key(
        group,
        version,
        kind if isinstance(kind, str) else "",
        namespace if isinstance(namespace, str) else "",
        name if isinstance(name, str) else "",
    )


def _ref(obj: Mapping[str, Any]) -> ObjectRef:
    group, version = split_api_version(str(obj["apiVersion"]))
    metadata = obj.get("metadata") or {}
    return ObjectRef(
        group, version, str(obj["kind"]), str(metadata.get("namespace") or ""), str(metadata.get("name") or "")
    )


def _string_map(value: Any) -> dict[str, str] | None:
    """A copy with ``None`` values read as ``""``; ``None`` when not a string map."""
    if not isinstance(value, Mapping):
        return None
    out: dict[str, str] = {}
    for k, v in value.items():
        if not isinstance(k, str) or not (v is None or isinstance(v, str)):
            return None
        out[k] = v or ""
    return out


def _normalise_error(detail: str, key: str) -> ObjectValidationError:
    return ObjectValidationError(f"error normalizing objects: {detail}", object_key=key)


def _check_type_provider(obj: dict[str, Any], ref: ObjectRef) -> None:
    """CRDs and APIServices are read by the reconciler itself, so their shape must be right."""
    if (ref.group, ref.kind) not in (CRD, API_SERVICE):
        return
    if ref.version != "v1":
        raise _normalise_error(f"scheme does not recognize type of object {ref.key}", ref.key)
    spec = obj.get("spec")
    spec = spec if isinstance(spec, Mapping) else {}
    problem = ""
    if (ref.group, ref.kind) == CRD:
        names = spec.get("names")
        if not isinstance(spec.get("group"), str):
            problem = "spec.group must be a string"
        elif not isinstance(names, Mapping) or not isinstance(names.get("kind"), str):
            problem = "spec.names.kind must be a string"
        elif spec.get("scope") not in ("Namespaced", "Cluster"):
            problem = "spec.scope must be Namespaced or Cluster"
        elif not isinstance(spec.get("versions"), list):
            problem = "spec.versions must be a list"
    else:
        if not isinstance(spec.get("group"), str):
            problem = "spec.group must be a string"
        elif not isinstance(spec.get("version"), str):
            problem = "spec.version must be a string"
    if problem:
        raise _normalise_error(f"object {ref.key} is not a valid {ref.kind}: {problem}", ref.key)


def _managed_types(obj: Mapping[str, Any], ref: ObjectRef) -> list[TypeVersionInfo]:
    spec = obj.get("spec") or {}
    if (ref.group, ref.kind) == CRD:
        return [TypeVersionInfo(group=spec["group"], version="*", kind=spec["names"]["kind"])]
    if (ref.group, ref.kind) == API_SERVICE:
        return [TypeVersionInfo(group=spec["group"], version=spec["version"], kind="*")]
    return []


def prepare_objects(
    objects: Sequence[Mapping[str, Any]],
    *,
    name: str,
    namespace: str,
    client: ClusterClient,
    defaults: AnnotationDefaults,
    allowed_namespaces: frozenset[str] | None,
    allow_cluster_scoped: bool,
    extra_labels: Mapping[str, str | None] | None = None,
) -> list[DesiredObject]:
    """Steps 1–7 and the confinement check; returns the normalised objects in input order.

    ``extra_labels`` (the option, docs/reconciler.md#keys-written-onto-objects) are set in step 4,
    over authored values (a ``None`` value removes the label), so they are part of the digest."""
    keys = annotation_keys(name)

    # Step 1: generated names cannot be tracked by an inventory.
    for obj in objects:
        metadata = obj.get("metadata")
        if isinstance(metadata, Mapping) and metadata.get("generateName"):
            key = _raw_key(obj)
            raise ObjectValidationError(
                f"object {key} specifies metadata.generateName (but dependent objects are not allowed to do so)",
                object_key=key,
            )

    # Step 2: type information, string maps, and the shape of CRDs and APIServices.
    copies: list[dict[str, Any]] = []
    for obj in objects:
        key = _raw_key(obj)
        api_version, kind = obj.get("apiVersion"), obj.get("kind")
        if not isinstance(api_version, str) or not api_version or not isinstance(kind, str) or not kind:
            raise _normalise_error(f"unstructured object {key} is missing type information", key)
        work = copy_tree(dict(obj))
        metadata = work.get("metadata")
        if metadata is None:
            metadata = work["metadata"] = {}
        elif not isinstance(metadata, dict):
            raise _normalise_error(f"unstructured object {key} has invalid metadata", key)
        for field_name, what in (("labels", "label"), ("annotations", "annotation")):
            if field_name in metadata and metadata[field_name] is not None:
                converted = _string_map(metadata[field_name])
                if converted is None:
                    raise _normalise_error(
                        f"unstructured object {key} has invalid {field_name} "
                        f"(probably because of non-string {what} values)",
                        key,
                    )
                metadata[field_name] = converted
            elif field_name in metadata:
                del metadata[field_name]
        _check_type_provider(work, _ref(work))
        copies.append(work)

    # Step 3: fold Secret stringData into data (stable digests; SSA handles stringData badly).
    for work in copies:
        if work["apiVersion"] == "v1" and work["kind"] == "Secret" and isinstance(work.get("stringData"), Mapping):
            existing = work.get("data")
            data: dict[str, Any] = dict(existing) if isinstance(existing, Mapping) else {}
            for k, v in work["stringData"].items():
                data[k] = base64.b64encode(str(v if v is not None else "").encode("utf-8")).decode("ascii")
            work["data"] = data
            del work["stringData"]

    # Step 4: a generator cannot forge ownership, nor set or drop the caller's extra labels.
    for work in copies:
        metadata = work["metadata"]
        labels = metadata.get("labels")
        if labels is not None:
            labels.pop(keys["owner-id"], None)
        for label, value in (extra_labels or {}).items():
            if value is not None:
                labels = metadata.setdefault("labels", {})
                labels[label] = value
            elif labels is not None:
                labels.pop(label, None)
        annotations = metadata.get("annotations")
        if annotations is not None:
            annotations.pop(keys["owner-id"], None)
            annotations.pop(keys["digest"], None)

    # Step 5: scope from discovery or from a CRD/APIService of the same set; default namespaces.
    crd_scopes: dict[tuple[str, str], str] = {}
    api_services: set[tuple[str, str]] = set()
    for work in copies:
        ref = _ref(work)
        if (ref.group, ref.kind) == CRD:
            crd_scopes.setdefault((work["spec"]["group"], work["spec"]["names"]["kind"]), work["spec"]["scope"])
        elif (ref.group, ref.kind) == API_SERVICE:
            api_services.add((work["spec"]["group"], work["spec"]["version"]))
    mappings: dict[tuple[str, str], ApiResource | None] = {}
    desired: list[DesiredObject] = []
    for index, work in enumerate(copies):
        ref = _ref(work)
        type_key = (work["apiVersion"], ref.kind)
        if type_key not in mappings:
            try:
                mappings[type_key] = client.resource_for(*type_key)
            except ApiError as exc:
                raise exc.with_context(f"error getting rest mapping for object {ref.key}", ref.key) from None
        resource = mappings[type_key]
        namespaced: bool | None = resource.namespaced if resource is not None else None
        crd_scope = crd_scopes.get((ref.group, ref.kind))
        if crd_scope is not None:
            namespaced = crd_scope == "Namespaced"
        elif resource is None and (ref.group, ref.version) not in api_services:
            raise ObjectValidationError(
                f"error getting rest mapping for object {ref.key}: "
                f'no matches for kind "{ref.kind}" in version "{work["apiVersion"]}"',
                object_key=ref.key,
            )
        metadata = work["metadata"]
        if namespaced is True and not metadata.get("namespace"):
            metadata["namespace"] = namespace
        elif namespaced is False and "namespace" in metadata:
            del metadata["namespace"]
        desired.append(
            DesiredObject(index=index, manifest=work, ref=_ref(work), resource=resource, namespaced=namespaced)
        )

    # docs/reconciler.md#target-confinement: confinement, before anything is read or written.
    for d in desired:
        ns = d.ref.namespace
        if not allow_cluster_scoped and (d.namespaced is False or (d.namespaced is None and not ns)):
            raise ObjectValidationError(
                f"object {d.key} is cluster-scoped; cluster-scoped objects are not allowed", object_key=d.key
            )
        if allowed_namespaces is not None and ns and d.namespaced is not False and ns not in allowed_namespaces:
            raise ObjectValidationError(
                f"object {d.key} is in namespace {ns}; only objects in namespace(s) "
                f"{','.join(sorted(allowed_namespaces))} are allowed",
                object_key=d.key,
            )

    # Step 6: duplicates (the version is not part of an object's identity).
    seen: set[str] = set()
    for d in desired:
        dup = (
            f"{d.ref.group_kind} {d.ref.namespace}/{d.ref.name}"
            if d.ref.namespace
            else f"{d.ref.group_kind} {d.ref.name}"
        )
        if dup in seen:
            raise ObjectValidationError(f"duplicate object {dup}", object_key=d.key)
        seen.add(dup)

    # Step 7: annotations, then purge orders on kinds that must never be purged.
    for d in desired:
        d.annotations = parse_object_annotations(d.manifest["metadata"].get("annotations") or {}, d.key, name, defaults)
    forbidden_purge = {
        NAMESPACE: "namespaces",
        CRD: "custom resource definitions",
        API_SERVICE: "api services",
    }
    for d in desired:
        plural = forbidden_purge.get((d.ref.group, d.ref.kind))
        if plural is not None and d.annotations.has_purge_order:
            raise ObjectValidationError(
                f"error validating object {d.key}: {plural} must not define a purge order", object_key=d.key
            )
        d.managed_types = _managed_types(d.manifest, d.ref)
    return desired
