"""Container ``probes`` and ``lifecycle`` hooks (docs/transform.md#shared-workload-properties).

Both are Kubernetes handlers written as in a pod spec; they are checked here so a mistake is
refused with a message instead of an object the API server rejects. No defaults are added.
A named port must be a name the main container itself declares: the kubelet resolves a named
port only against the container's own ports.

Decisions recorded here (the spec gives only some messages): a probe without a handler fails
with ``<kind> probe: probe must specify exactly one handler, but none was provided``; port
messages name the handler as kurel's do (``readiness probe: httpGet handler: port 0 out of
valid range 1-65535``, ``lifecycle.preStop: httpGet handler: named port "x" …``), a handler's
other checks under its key
(``readiness probe: httpGet: port is required``, ``readiness probe: httpGet: unrecognized key
"x"``); an unknown key of a hook is ``lifecycle.<hook>: unrecognized key "<k>"``; a ``grpc``
port must be a number (``port: must be an integer, got <T>``); the timing fields must be
integers (zeros of the int32 fields are omitted, as the typed ``Probe`` serialises).
"""

from __future__ import annotations

from typing import Any

from oam_operator.oam.catalog.workloads.values import ABSENT, as_int
from oam_operator.oam.errors import ValidationError
from oam_operator.oam.formatting.gofmt import go_quote, go_type_name

PROBE_PREFIX = "invalid probe configuration: "
LIFECYCLE_PREFIX = "invalid lifecycle configuration: "
PROBE_KINDS = {"readiness": "readinessProbe", "liveness": "livenessProbe", "startup": "startupProbe"}
PROBE_HANDLERS = ("exec", "grpc", "httpGet", "tcpSocket")
PROBE_INT32 = ("failureThreshold", "initialDelaySeconds", "periodSeconds", "successThreshold", "timeoutSeconds")
PROBE_INT64 = ("terminationGracePeriodSeconds",)
LIFECYCLE_HOOKS = ("postStart", "preStop")
LIFECYCLE_HANDLERS = ("exec", "httpGet", "sleep")

Object = dict[str, Any]


class _Invalid(Exception):
    """A handler problem; the caller adds the probe or hook context."""


def _keys(raw: Object, allowed: tuple[str, ...], where: str) -> None:
    for key in sorted(raw):
        if key not in allowed:
            raise _Invalid(f"{where}unrecognized key {go_quote(key)}")


def _port(value: Any, port_name: str | None, numeric_only: bool = False) -> int | str:
    if isinstance(value, str) and not numeric_only:
        if port_name is None:
            raise _Invalid(
                f"named port {go_quote(value)} is not supported here: this component declares no container ports "
                "for the kubelet to resolve the name against — use a numeric port instead"
            )
        if value != port_name:
            raise _Invalid(
                f"named port {go_quote(value)} does not match this component's declared container port "
                f"{go_quote(port_name)}: the kubelet resolves a named port only against a name the container itself "
                "declares"
            )
        return value
    try:
        number = as_int(value, "port")
    except ValidationError as exc:
        raise _Invalid(exc.message) from exc
    if not 1 <= number <= 65535:
        raise _Invalid(f"port {number} out of valid range 1-65535")
    return number


def _handler_port(handler: str, value: Any, port_name: str | None) -> int | str:
    """A handler's port; a refusal names the handler (``httpGet handler: port 0 out of …``)."""
    try:
        return _port(value, port_name)
    except _Invalid as exc:
        raise _Invalid(f"{handler} handler: {exc}") from exc


def _mapping(raw: Any, where: str) -> Object:
    if not isinstance(raw, dict):
        raise _Invalid(f"{where}expected object, got {go_type_name(raw)}")
    return raw


def _strings(raw: Object, key: str, where: str) -> list[str] | None:
    value = raw.get(key)
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise _Invalid(f"{where}{key} must be a list of strings")
    return list(value)


def _optional_strings(raw: Object, out: Object, keys: tuple[str, ...], where: str) -> None:
    for key in keys:
        value = raw.get(key)
        if value is None or value == "":
            continue
        if not isinstance(value, str):
            raise _Invalid(f"{where}{key}: must be a string, got {go_type_name(value)}")
        out[key] = value


def _http_get(raw: Any, port_name: str | None) -> Object:
    where = "httpGet: "
    spec = _mapping(raw, where)
    _keys(spec, ("host", "httpHeaders", "path", "port", "scheme"), where)
    if spec.get("port") is None:
        raise _Invalid(f"{where}port is required")
    out: Object = {"port": _handler_port("httpGet", spec["port"], port_name)}
    _optional_strings(spec, out, ("path", "host", "scheme"), where)
    headers = spec.get("httpHeaders")
    if headers is not None:
        if not isinstance(headers, list):
            raise _Invalid(f"{where}httpHeaders: must be an array, got {go_type_name(headers)}")
        out_headers: list[Object] = []
        for i, header in enumerate(headers):
            h = _mapping(header, f"{where}httpHeaders[{i}]: ")
            _keys(h, ("name", "value"), f"{where}httpHeaders[{i}]: ")
            name, value = h.get("name"), h.get("value", "")
            if not isinstance(name, str) or not name:
                raise _Invalid(f"{where}httpHeaders[{i}]: name is required")
            if not isinstance(value, str):
                raise _Invalid(f"{where}httpHeaders[{i}]: value: must be a string, got {go_type_name(value)}")
            out_headers.append({"name": name, "value": value})
        if out_headers:
            out["httpHeaders"] = out_headers
    return out


def _tcp_socket(raw: Any, port_name: str | None) -> Object:
    where = "tcpSocket: "
    spec = _mapping(raw, where)
    _keys(spec, ("host", "port"), where)
    if spec.get("port") is None:
        raise _Invalid(f"{where}port is required")
    out: Object = {"port": _handler_port("tcpSocket", spec["port"], port_name)}
    _optional_strings(spec, out, ("host",), where)
    return out


def _exec(raw: Any) -> Object:
    where = "exec: "
    spec = _mapping(raw, where)
    _keys(spec, ("command",), where)
    command = _strings(spec, "command", where)
    return {"command": command} if command else {}


def _grpc(raw: Any) -> Object:
    where = "grpc: "
    spec = _mapping(raw, where)
    _keys(spec, ("port", "service"), where)
    if spec.get("port") is None:
        raise _Invalid(f"{where}port is required")
    out: Object = {"port": _port(spec["port"], None, numeric_only=True)}
    service = spec.get("service")
    if service is not None:
        if not isinstance(service, str):
            raise _Invalid(f"{where}service: must be a string, got {go_type_name(service)}")
        out["service"] = service
    return out


def _sleep(raw: Any) -> Object:
    where = "sleep: "
    spec = _mapping(raw, where)
    _keys(spec, ("seconds",), where)
    if spec.get("seconds") is None:
        raise _Invalid(f"{where}seconds is required")
    try:
        return {"seconds": as_int(spec["seconds"], "seconds")}
    except ValidationError as exc:
        raise _Invalid(f"{where}{exc.message}") from exc


def _probe(raw: Any, port_name: str | None) -> Object:
    spec = _mapping(raw, "probe: ")
    _keys(spec, (*PROBE_HANDLERS, *PROBE_INT32, *PROBE_INT64), "probe: ")
    handlers = [k for k in PROBE_HANDLERS if spec.get(k) is not None]
    if len(handlers) > 1:
        raise _Invalid("probe must specify exactly one handler, but multiple were provided")
    if not handlers:
        raise _Invalid("probe must specify exactly one handler, but none was provided")
    kind = handlers[0]
    out: Object = {}
    if kind == "httpGet":
        out[kind] = _http_get(spec[kind], port_name)
    elif kind == "tcpSocket":
        out[kind] = _tcp_socket(spec[kind], port_name)
    elif kind == "exec":
        out[kind] = _exec(spec[kind])
    else:
        out[kind] = _grpc(spec[kind])
    for key in (*PROBE_INT32, *PROBE_INT64):
        value = spec.get(key)
        if value is None:
            continue
        try:
            number = as_int(value, key)
        except ValidationError as exc:
            raise _Invalid(exc.message) from exc
        if number != 0 or key in PROBE_INT64:
            out[key] = number
    return out


def build_probes(value: Any, port_name: str | None) -> Object:
    """``{livenessProbe?, readinessProbe?, startupProbe?}`` for the main container.

    Checked as kurel checks them: presence before type (a written ``null`` is refused), the
    probes in the order readiness, liveness, startup.
    """
    if value is ABSENT:
        return {}
    if not isinstance(value, dict):
        raise ValidationError(f"{PROBE_PREFIX}probes: must be an object, got {go_type_name(value)}")
    for key in sorted(value):
        if key not in PROBE_KINDS:
            raise ValidationError(f"{PROBE_PREFIX}probes: unrecognized key {go_quote(key)}")
    out: Object = {}
    for key in PROBE_KINDS:
        if key not in value:
            continue
        if not isinstance(value[key], dict):
            raise ValidationError(f"{PROBE_PREFIX}probes.{key}: must be an object, got {go_type_name(value[key])}")
        try:
            out[PROBE_KINDS[key]] = _probe(value[key], port_name)
        except _Invalid as exc:
            raise ValidationError(f"{PROBE_PREFIX}{key} probe: {exc}") from exc
    return out


def _hook(raw: Any, port_name: str | None) -> Object:
    spec = _mapping(raw, "")
    _keys(spec, (*LIFECYCLE_HANDLERS, "tcpSocket"), "")
    if spec.get("tcpSocket") is not None:
        raise _Invalid("tcpSocket is not supported as a lifecycle handler")
    handlers = [k for k in LIFECYCLE_HANDLERS if spec.get(k) is not None]
    if len(handlers) != 1:
        raise _Invalid("must specify exactly one of httpGet, exec, or sleep")
    kind = handlers[0]
    if kind == "httpGet":
        return {kind: _http_get(spec[kind], port_name)}
    if kind == "exec":
        return {kind: _exec(spec[kind])}
    return {kind: _sleep(spec[kind])}


def build_lifecycle(value: Any, port_name: str | None) -> Object | None:
    """The container ``lifecycle``, or ``None`` when no hook is set (a written ``null`` is refused)."""
    if value is ABSENT:
        return None
    if not isinstance(value, dict):
        raise ValidationError(f"{LIFECYCLE_PREFIX}lifecycle: must be an object, got {go_type_name(value)}")
    for key in sorted(value):
        if key not in LIFECYCLE_HOOKS:
            raise ValidationError(f"{LIFECYCLE_PREFIX}lifecycle: unrecognized key {go_quote(key)}")
    out: Object = {}
    for key in LIFECYCLE_HOOKS:
        if key not in value:
            continue
        if not isinstance(value[key], dict):
            raise ValidationError(
                f"{LIFECYCLE_PREFIX}lifecycle.{key}: must be an object, got {go_type_name(value[key])}"
            )
        try:
            out[key] = _hook(value[key], port_name)
        except _Invalid as exc:
            raise ValidationError(f"{LIFECYCLE_PREFIX}lifecycle.{key}: {exc}") from exc
    return out or None
