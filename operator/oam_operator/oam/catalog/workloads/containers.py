"""``initContainers`` and ``sidecars`` (docs/transform.md#shared-workload-properties).

Extra containers follow the main container's rules: the image must be pinned, resources get
the same defaults and ``imagePullPolicy`` is ``IfNotPresent``.

Decisions recorded here: every message about an extra container is prefixed with
``<list>[<i>] "<name>": `` (e.g. ``sidecars[0] "proxy": image "envoy" rejected: …``,
``initContainers[0] "migrate": volumeMounts[0]: mountPath is required``); a sidecar port needs
``containerPort`` in 1–65535 (``ports[<j>]: containerPort is required``,
``ports[<j>]: containerPort <n> out of valid range 1-65535``).
"""

from __future__ import annotations

from typing import Any

from oam_operator.oam.catalog.workloads.env import build_env
from oam_operator.oam.catalog.workloads.image import check_image
from oam_operator.oam.catalog.workloads.resources import build_resources
from oam_operator.oam.catalog.workloads.values import as_int, opt_list, strings
from oam_operator.oam.errors import ValidationError
from oam_operator.oam.formatting.gofmt import go_quote, go_type_name

Object = dict[str, Any]
PULL_POLICY = "IfNotPresent"


def _mounts(value: Any) -> list[Object]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise ValidationError(f"volumeMounts: must be an array, got {go_type_name(value)}")
    mounts: list[Object] = []
    for j, raw in enumerate(value):
        where = f"volumeMounts[{j}]: "
        if not isinstance(raw, dict):
            raise ValidationError(f"{where}expected object, got {go_type_name(raw)}")
        mount: Object = {}
        for key in ("name", "mountPath"):
            item = raw.get(key)
            if not isinstance(item, str) or not item:
                raise ValidationError(f"{where}{key} is required")
            mount[key] = item
        if raw.get("readOnly") is True:
            mount["readOnly"] = True
        sub_path = raw.get("subPath")
        if isinstance(sub_path, str) and sub_path:
            mount["subPath"] = sub_path
        mounts.append(mount)
    return mounts


def _ports(value: Any) -> list[Object]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise ValidationError(f"ports: must be an array, got {go_type_name(value)}")
    ports: list[Object] = []
    for j, raw in enumerate(value):
        where = f"ports[{j}]: "
        if not isinstance(raw, dict):
            raise ValidationError(f"{where}expected object, got {go_type_name(raw)}")
        if raw.get("containerPort") is None:
            raise ValidationError(f"{where}containerPort is required")
        number = as_int(raw["containerPort"], f"ports[{j}].containerPort")
        if not 1 <= number <= 65535:
            raise ValidationError(f"{where}containerPort {number} out of valid range 1-65535")
        port: Object = {"containerPort": number, "protocol": raw.get("protocol") or "TCP"}
        name = raw.get("name")
        if isinstance(name, str) and name:
            port["name"] = name
        ports.append(port)
    return ports


def _container(raw: Object, with_ports: bool) -> Object:
    image = raw.get("image")
    if not isinstance(image, str) or not image:
        raise ValidationError("image is required")
    check_image(image)
    container: Object = {"name": raw["name"], "image": image, "imagePullPolicy": PULL_POLICY}
    command = strings(opt_list(raw, "command"))
    if command:
        container["command"] = command
    args = strings(opt_list(raw, "args"))
    if args:
        container["args"] = args
    env = build_env(opt_list(raw, "env"))
    if env:
        container["env"] = env
    container["resources"] = build_resources(raw.get("resources"))
    mounts = _mounts(raw.get("volumeMounts"))
    if mounts:
        container["volumeMounts"] = mounts
    if with_ports:
        ports = _ports(raw.get("ports"))
        if ports:
            container["ports"] = ports
    return container


def build_containers(value: Any, what: str, with_ports: bool = False) -> list[Object]:
    """Containers of ``initContainers`` or ``sidecars`` (``what``), in authored order."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise ValidationError(f"{what}: must be an array, got {go_type_name(value)}")
    containers: list[Object] = []
    for i, raw in enumerate(value):
        if not isinstance(raw, dict):
            raise ValidationError(f"{what}[{i}]: expected object, got {go_type_name(raw)}")
        name = raw.get("name")
        if not isinstance(name, str) or not name:
            raise ValidationError(f"{what}[{i}]: name is required")
        try:
            containers.append(_container(raw, with_ports))
        except ValidationError as exc:
            raise ValidationError(f"{what}[{i}] {go_quote(name)}: {exc.message}") from exc
    return containers
