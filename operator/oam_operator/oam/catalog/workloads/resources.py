"""Container ``resources`` and their defaults (docs/transform.md#shared-workload-properties ``resources``).

Every container gets requests (``cpu: 100m``, ``memory: 128Mi`` when absent) and a memory
limit equal to its memory request when no limit is set, so no pod runs unbounded in memory;
no cpu limit is added (cpu limits throttle rather than protect). Values are printed as
canonical quantities.

Decisions recorded here (the spec only says "the request needs an equal limit"): for a
resource other than cpu, memory and ephemeral-storage a request without a limit fails with
``resources: <k>: request <q> requires a limit equal to it``, and one that differs from its
limit with ``resources: <k>: request <q> must equal limit <q>``. The checks run on the
authored values; the defaults are applied afterwards, as kurel's ``buildResources`` does.
"""

from __future__ import annotations

from typing import Any

from oam_operator.oam.document.names import qualified_name_errors
from oam_operator.oam.errors import ValidationError
from oam_operator.oam.formatting.gofmt import go_quote, go_type_name, go_value
from oam_operator.oam.formatting.quantity import Quantity, QuantityError, format_quantity, parse_quantity

PREFIX = "invalid resources configuration: "
DEFAULT_CPU_REQUEST = "100m"
DEFAULT_MEMORY_REQUEST = "128Mi"
OVERCOMMITTABLE = ("cpu", "memory", "ephemeral-storage")
_NAME_MESSAGE = (
    "must be a standard container resource (cpu, memory, ephemeral-storage), a hugepages-<size> name, "
    'or a fully qualified extended resource name (e.g. "example.com/foo")'
)

Object = dict[str, Any]


def _fail(message: str) -> ValidationError:
    return ValidationError(PREFIX + message)


def is_container_resource_name(name: str) -> bool:
    """Kubernetes' standard container resources, hugepages and extended resource names."""
    if name in OVERCOMMITTABLE or (name.startswith("hugepages-") and len(name) > len("hugepages-")):
        return True
    native = "/" not in name or "kubernetes.io/" in name
    if native or name.startswith("requests."):
        return False
    return not qualified_name_errors("requests." + name)


def _section(resources: Object, section: str) -> dict[str, Quantity]:
    raw = resources.get(section)
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise _fail(f"resources.{section}: must be an object, got {go_type_name(raw)}")
    parsed: dict[str, Quantity] = {}
    for key in sorted(raw):
        where = f"resources.{section}: {key}"
        if not is_container_resource_name(key):
            raise _fail(f"resources.{section}: {key}: {_NAME_MESSAGE}")
        value = raw[key]
        text = value if isinstance(value, str) else go_value(value)
        try:
            quantity = parse_quantity(value)
        except QuantityError as exc:
            raise _fail(f"{where}: invalid quantity {go_quote(text)}: {exc.message}") from exc
        if quantity.value < 0:
            raise _fail(f"{where}: quantity must not be negative, got {go_quote(text)}")
        parsed[key] = quantity
    return parsed


def build_resources(value: Any) -> Object:
    """Validated ``{limits, requests}`` with the defaults applied, quantities canonical."""
    if value is None:
        value = {}
    if not isinstance(value, dict):
        raise _fail(f"resources: must be an object, got {go_type_name(value)}")
    requests = _section(value, "requests")
    limits = _section(value, "limits")
    for key in sorted(requests):
        request, limit = requests[key], limits.get(key)
        if key in OVERCOMMITTABLE:
            if limit is not None and request.value > limit.value:
                shown = f"request {format_quantity(request)} must not exceed limit {format_quantity(limit)}"
                raise _fail(f"resources: {key}: {shown}")
        elif limit is None:
            raise _fail(f"resources: {key}: request {format_quantity(request)} requires a limit equal to it")
        elif request.value != limit.value:
            raise _fail(
                f"resources: {key}: request {format_quantity(request)} must equal limit {format_quantity(limit)}"
            )
    out_requests = {k: format_quantity(q) for k, q in requests.items()}
    out_limits = {k: format_quantity(q) for k, q in limits.items()}
    out_requests.setdefault("cpu", DEFAULT_CPU_REQUEST)
    out_requests.setdefault("memory", DEFAULT_MEMORY_REQUEST)
    out_limits.setdefault("memory", out_requests["memory"])
    return {"limits": out_limits, "requests": out_requests}


DEFAULT_RESOURCES: Object = {
    "limits": {"memory": DEFAULT_MEMORY_REQUEST},
    "requests": {"cpu": DEFAULT_CPU_REQUEST, "memory": DEFAULT_MEMORY_REQUEST},
}
