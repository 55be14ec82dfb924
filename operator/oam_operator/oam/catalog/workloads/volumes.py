"""Pod ``volumes``, their mounts and the PersistentVolumeClaims they generate
(docs/transform.md#shared-workload-properties, docs/transform.md#pvc-names).

A volume entry is flat: ``{name, mountPath, type, readOnly}`` plus the keys of its type
(``hostPath``: ``path``; ``emptyDir``: ``sizeLimit``; ``pvc``: ``size``, ``storageClass``,
``accessModes``; ``configMap``: ``configMapName``; ``secret``: ``secretName``). A ``pvc``
volume generates its claim, named ``esc(C)-esc(volume)`` (every ``-`` doubled) so that two
components can never produce the same claim name.

Decisions recorded here: ``type`` is required — a volume without one is refused as kurel
refuses it (``volume "<n>": unrecognized type ""``), since guessing a volume source would hide
a mistake; a present ``volumes: null`` is ``volumes: must be an array, got <nil>``; a missing
type-specific required key fails with ``volume "<n>": <type>.<key> is required``; a missing mount path with
``volume "<n>": mountPath is required``; an empty ``accessModes`` list means the default;
``ReadWriteOncePod`` with another mode fails with ``volume "<n>": accessMode ReadWriteOncePod
cannot be combined with other access modes``; a bad ``sizeLimit`` with
``volume "<n>": invalid sizeLimit "<s>": <cause>``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from oam_operator.common.dns1123 import dns1123_label_errors, dns1123_subdomain_errors
from oam_operator.oam.catalog.workloads.values import ABSENT
from oam_operator.oam.errors import GenerationError, ValidationError
from oam_operator.oam.formatting.choices import unknown_value
from oam_operator.oam.formatting.gofmt import go_quote, go_type_name, go_value
from oam_operator.oam.formatting.quantity import QuantityError, canonical_quantity

Object = dict[str, Any]

ACCESS_MODES = ("ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany", "ReadWriteOncePod")
DEFAULT_ACCESS_MODES = ("ReadWriteOnce",)
#: access modes that bind a claim to one node: a Deployment using one cannot roll pods side by side.
SINGLE_NODE_MODES = ("ReadWriteOnce", "ReadWriteOncePod")
COMMON_KEYS = ("mountPath", "name", "readOnly", "type")
TYPE_KEYS: dict[str, tuple[str, ...]] = {
    "hostPath": ("path",),
    "emptyDir": ("sizeLimit",),
    "pvc": ("accessModes", "size", "storageClass"),
    "configMap": ("configMapName",),
    "secret": ("secretName",),
}


@dataclass
class Claim:
    """A claim to generate: its qualified name and spec."""

    name: str
    size: str
    access_modes: list[str]
    storage_class: str | None


@dataclass
class Volumes:
    volumes: list[Object] = field(default_factory=list)
    mounts: list[Object] = field(default_factory=list)
    claims: list[Claim] = field(default_factory=list)

    def single_node_claim(self) -> bool:
        """Whether some claim can be mounted by one node only (ReadWriteOnce/ReadWriteOncePod)."""
        return any(mode in SINGLE_NODE_MODES for claim in self.claims for mode in claim.access_modes)


def escape(name: str) -> str:
    """Double every ``-`` so that ``esc(a) + "-" + esc(b)`` is unambiguous."""
    return name.replace("-", "--")


def claim_name(component: str, volume: str) -> str:
    return f"{escape(component)}-{escape(volume)}"


def access_modes(value: Any, where: str) -> list[str]:
    """Validated access modes; ``[ReadWriteOnce]`` when absent or empty."""
    if value is None:
        return list(DEFAULT_ACCESS_MODES)
    if not isinstance(value, list):
        raise ValidationError(f"{where}accessModes: must be an array, got {go_type_name(value)}")
    if not value:
        return list(DEFAULT_ACCESS_MODES)
    modes: list[str] = []
    for mode in value:
        if mode not in ACCESS_MODES:
            shown = mode if isinstance(mode, str) else go_value(mode)
            raise ValidationError(f"{where}accessModes: {unknown_value('accessMode', shown, ACCESS_MODES)}")
        modes.append(mode)
    if "ReadWriteOncePod" in modes and len(modes) > 1:
        raise ValidationError(f"{where}accessMode ReadWriteOncePod cannot be combined with other access modes")
    return modes


def _string(entry: Object, key: str, where: str, required: bool) -> str | None:
    value = entry.get(key)
    if value is None or value == "":
        if required:
            raise ValidationError(f"{where}{key} is required")
        return None if value is None else ""
    if not isinstance(value, str):
        raise ValidationError(f"{where}{key}: must be a string, got {go_type_name(value)}")
    return value


def _quantity(value: Any, where: str, what: str) -> str:
    try:
        return canonical_quantity(value)
    except QuantityError as exc:
        text = value if isinstance(value, str) else go_value(value)
        raise ValidationError(f"{where}invalid {what} {go_quote(text)}: {exc.message}") from exc


def _source(component: str, name: str, kind: str, entry: Object, read_only: bool, out: Volumes) -> Object:
    where = f"volume {go_quote(name)}: "
    if kind == "hostPath":
        path = _string(entry, "path", f"{where}hostPath.", True) or ""
        if not path.startswith("/"):
            raise ValidationError(f"{where}hostPath.path must be absolute, got {go_quote(path)}")
        return {"hostPath": {"path": path, "type": ""}}
    if kind == "emptyDir":
        size_limit = entry.get("sizeLimit")
        if size_limit is None:
            return {"emptyDir": {}}
        return {"emptyDir": {"sizeLimit": _quantity(size_limit, where, "sizeLimit")}}
    if kind == "pvc":
        size = entry.get("size")
        if size is None or size == "":
            raise ValidationError(f"{where}pvc.size is required")
        claim = Claim(
            name=claim_name(component, name),
            size=_quantity(size, where, "PVC size"),
            access_modes=access_modes(entry.get("accessModes"), where),
            storage_class=_string(entry, "storageClass", f"{where}pvc.", False),
        )
        out.claims.append(claim)
        source: Object = {"claimName": claim.name}
        if read_only:
            source["readOnly"] = True
        return {"persistentVolumeClaim": source}
    if kind == "configMap":
        return {"configMap": {"name": _string(entry, "configMapName", f"{where}configMap.", True)}}
    return {"secret": {"secretName": _string(entry, "secretName", f"{where}secret.", True)}}


def build_volumes(component: str, value: Any) -> Volumes:
    """Pod volumes, main-container mounts and claims, in authored order."""
    out = Volumes()
    if value is ABSENT:
        return out
    if not isinstance(value, list):
        raise ValidationError(f"volumes: must be an array, got {go_type_name(value)}")
    names: set[str] = set()
    paths: set[str] = set()
    for i, entry in enumerate(value):
        if not isinstance(entry, dict):
            raise ValidationError(f"volumes[{i}]: expected object, got {go_type_name(entry)}")
        raw_name = entry.get("name")
        name = raw_name if isinstance(raw_name, str) else ("" if raw_name is None else go_value(raw_name))
        errors = dns1123_label_errors(name) if isinstance(raw_name, str | None) else ["must be a string"]
        if errors:
            raise ValidationError(f"volume: invalid name {go_quote(name)}: {'; '.join(errors)}")
        if name in names:
            raise ValidationError(f"volume: duplicate name {go_quote(name)}")
        names.add(name)
        where = f"volume {go_quote(name)}: "
        mount_path = _string(entry, "mountPath", where, True) or ""
        if mount_path in paths:
            raise ValidationError(f"volume {go_quote(name)}: duplicate mountPath {go_quote(mount_path)}")
        paths.add(mount_path)
        kind = entry.get("type")
        if kind is None:
            kind = ""
        if not isinstance(kind, str) or kind not in TYPE_KEYS:
            shown = kind if isinstance(kind, str) else go_value(kind)
            raise ValidationError(f"volume {go_quote(name)}: unrecognized type {go_quote(shown)}")
        for key in sorted(entry):
            if key not in COMMON_KEYS and key not in TYPE_KEYS[kind]:
                raise ValidationError(f"volume {go_quote(name)}: {kind}: unrecognized key {go_quote(key)}")
        read_only = entry.get("readOnly")
        if read_only is not None and not isinstance(read_only, bool):
            raise ValidationError(f"{where}readOnly: must be a bool, got {go_type_name(read_only)}")
        out.volumes.append({"name": name, **_source(component, name, kind, entry, bool(read_only), out)})
        mount: Object = {"name": name, "mountPath": mount_path}
        if read_only:
            mount["readOnly"] = True
        out.mounts.append(mount)
    return out


def claim_object(claim: Claim, namespace: str, labels: dict[str, str]) -> Object:
    """The ``PersistentVolumeClaim`` of a ``pvc`` volume; its name is checked here (generation)."""
    errors = dns1123_subdomain_errors(claim.name)
    if errors:
        raise GenerationError(f"PVC name {go_quote(claim.name)} is not a valid DNS-1123 subdomain: {'; '.join(errors)}")
    spec: Object = {"accessModes": list(claim.access_modes), "resources": {"requests": {"storage": claim.size}}}
    if claim.storage_class is not None:
        spec["storageClassName"] = claim.storage_class
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"labels": dict(labels), "name": claim.name, "namespace": namespace},
        "spec": spec,
    }
