"""HTTPRoute filters and timeouts (docs/transform.md#routing-traits), checked before they reach the Gateway.

Each filter is ``{type, <lowerCamel type>: {…}}``; the configuration is validated field by
field against the Gateway API's rules and emitted with the fields the API defines, whole
numbers as integers, and zero values dropped where the API's field is ``omitempty``
(``forwardBody.maxSize: 0``). Messages are prefixed ``rules[<i>].filters[<j>] "<type>": ``.

Decisions where the spec is silent (a value outside a set reads
``statusCode: unknown statusCode 300 (valid: 301, 302, 303, 307, 308)``,
docs/transform.md#refusing-a-value-outside-a-set; nested fields are named by their path, e.g.
``path.type``, ``backendRef.port``, ``set[0].name``):

* a filter entry that is not a mapping: ``rules[<i>].filters[<j>]: expected object``; a key
  of the entry other than ``type`` and its own configuration key: ``unsupported field "<k>"``;
  a configuration block that is not a mapping: ``<block> must be an object``; an undefined
  field in it: ``<block>: unsupported field "<k>"``;
* ``<block> must set at least one of <fields>``, ``<field> is required``,
  ``<field> must be a string``, ``<field>: unknown <field> "<v>" (valid: <a>, <b>)``,
  ``<field> must be an integer``, ``<field> <n> must be between <lo> and <hi>``,
  ``<field> <n> must be >= <lo>``, ``<field> must be a bool``,
  ``<field> must be an array of strings``, ``<list> must be an array``;
* path modifiers: ``path.<field> is required when type is <type>`` and
  ``path.<other> is not allowed when type is <type>``;
* ``RequestMirror``: ``percent and fraction are mutually exclusive`` and
  ``fraction.numerator must not exceed fraction.denominator`` (both Gateway API rules; the
  denominator defaults to 100);
* ``ExternalAuth``: ``grpc is only valid when protocol is GRPC``,
  ``http is only valid when protocol is HTTP``;
* header values default to ``""`` (the API's ``value`` is not optional);
* timeouts: a non-string value is ``rules[<i>].timeouts.<f>: expected a duration string, got <T>``,
  a parse failure ``rules[<i>].timeouts.<f>: <Go error>``, a negative one
  ``rules[<i>].timeouts.<f>: must be >= 0, got <d>``, none set
  ``rules[<i>].timeouts: at least one of request or backendRequest must be set``, another key
  ``rules[<i>].timeouts: unsupported field "<k>"``; a request of ``0s`` means "no timeout" (as
  in the Gateway API), so it bounds no backendRequest.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from oam_operator.oam.catalog.shared.trait_kit import whole_number
from oam_operator.oam.engine.handlers import Object
from oam_operator.oam.errors import ValidationError
from oam_operator.oam.formatting.choices import unknown_at
from oam_operator.oam.formatting.duration import DurationError, format_duration, parse_duration
from oam_operator.oam.formatting.gofmt import go_quote, go_type_name, go_value

REDIRECT_STATUS = (301, 302, 303, 307, 308)


class _Block:
    """A configuration mapping being checked.

    ``name`` names the block itself in messages (``requestRedirect``, ``path``,
    ``backendRef``); ``prefix`` prefixes its field names (``""`` at the top of a filter,
    ``"path."`` inside one), so messages read ``scheme: unknown scheme "ftp" (valid: …)`` or
    ``path.type: unknown type "X" (valid: …)``.
    """

    def __init__(self, value: Any, name: str, prefix: str, fields: tuple[str, ...]) -> None:
        if not isinstance(value, dict):
            raise ValidationError(f"{name} must be an object")
        for key in sorted(value):
            if key not in fields:
                raise ValidationError(f"{name}: unsupported field {go_quote(key)}")
        self.value = value
        self.name = name
        self.prefix = prefix
        self.out: Object = {}

    def has(self, key: str) -> bool:
        return self.value.get(key) is not None

    def string(self, key: str, required: bool = False, choices: tuple[str, ...] = ()) -> str | None:
        value = self.value.get(key)
        if value is None or value == "":
            if required:
                raise ValidationError(f"{self.prefix}{key} is required")
            return None
        if not isinstance(value, str):
            raise ValidationError(f"{self.prefix}{key} must be a string")
        if choices and value not in choices:
            raise ValidationError(unknown_at(f"{self.prefix}{key}", value, choices))
        self.out[key] = value
        return value

    def integer(self, key: str, low: int, high: int | None = None, required: bool = False) -> int | None:
        raw = self.value.get(key)
        if raw is None:
            if required:
                raise ValidationError(f"{self.prefix}{key} is required")
            return None
        value = whole_number(raw)
        if value is None:
            raise ValidationError(f"{self.prefix}{key} must be an integer")
        if value < low or (high is not None and value > high):
            bound = f"between {low} and {high}" if high is not None else f">= {low}"
            raise ValidationError(f"{self.prefix}{key} {value} must be {bound}")
        self.out[key] = value
        return value

    def boolean(self, key: str) -> None:
        value = self.value.get(key)
        if value is None:
            return
        if not isinstance(value, bool):
            raise ValidationError(f"{self.prefix}{key} must be a bool")
        self.out[key] = value

    def strings(self, key: str) -> None:
        value = self.value.get(key)
        if value is None:
            return
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ValidationError(f"{self.prefix}{key} must be an array of strings")
        if value:
            self.out[key] = list(value)

    def block(self, key: str, fields: tuple[str, ...]) -> _Block | None:
        value = self.value.get(key)
        name = f"{self.prefix}{key}"
        return None if value is None else _Block(value, name, f"{name}.", fields)

    def at_least_one(self, fields: tuple[str, ...]) -> None:
        if not any(self.has(f) for f in fields):
            raise ValidationError(f"{self.name} must set at least one of {', '.join(fields)}")


def _path_modifier(parent: _Block) -> None:
    mod = parent.block("path", ("type", "replaceFullPath", "replacePrefixMatch"))
    if mod is None:
        return
    kind = mod.string("type", required=True, choices=("ReplaceFullPath", "ReplacePrefixMatch"))
    field = "replaceFullPath" if kind == "ReplaceFullPath" else "replacePrefixMatch"
    other = "replacePrefixMatch" if field == "replaceFullPath" else "replaceFullPath"
    if mod.has(other):
        raise ValidationError(f"{mod.prefix}{other} is not allowed when type is {kind}")
    value = mod.value.get(field)
    if not isinstance(value, str):
        raise ValidationError(f"{mod.prefix}{field} is required when type is {kind}")
    mod.out[field] = value
    parent.out["path"] = mod.out


def _backend_ref(parent: _Block) -> None:
    ref = parent.block("backendRef", ("name", "port"))
    if ref is None:
        raise ValidationError(f"{parent.prefix}backendRef is required")
    ref.string("name", required=True)
    ref.integer("port", 1, 65535, required=True)
    parent.out["backendRef"] = ref.out


def _redirect(b: _Block) -> None:
    fields = ("scheme", "hostname", "port", "statusCode", "path")
    b.at_least_one(fields)
    b.string("scheme", choices=("http", "https"))
    b.string("hostname")
    b.integer("port", 1, 65535)
    raw = b.value.get("statusCode")
    if raw is not None:
        code = whole_number(raw)
        if code is None:
            raise ValidationError("statusCode must be an integer")
        if code not in REDIRECT_STATUS:
            raise ValidationError(unknown_at("statusCode", code, REDIRECT_STATUS))
        b.out["statusCode"] = code
    _path_modifier(b)


def _rewrite(b: _Block) -> None:
    b.at_least_one(("hostname", "path"))
    b.string("hostname")
    _path_modifier(b)


def _headers(b: _Block) -> None:
    b.at_least_one(("set", "add", "remove"))
    for key in ("set", "add"):
        value = b.value.get(key)
        if value is None:
            continue
        if not isinstance(value, list):
            raise ValidationError(f"{key} must be an array")
        headers: list[Object] = []
        for k, entry in enumerate(value):
            header = _Block(entry, f"{key}[{k}]", f"{key}[{k}].", ("name", "value"))
            name = header.string("name", required=True)
            text = header.value.get("value")
            headers.append({"name": name, "value": "" if text is None else go_value(text)})
        if headers:
            b.out[key] = headers
    b.strings("remove")


def _mirror(b: _Block) -> None:
    _backend_ref(b)
    if b.has("percent") and b.has("fraction"):
        raise ValidationError("percent and fraction are mutually exclusive")
    b.integer("percent", 0, 100)
    fraction = b.block("fraction", ("numerator", "denominator"))
    if fraction is not None:
        numerator = fraction.integer("numerator", 0, required=True)
        denominator = fraction.integer("denominator", 1)
        if numerator is not None and numerator > (100 if denominator is None else denominator):
            raise ValidationError("fraction.numerator must not exceed fraction.denominator")
        b.out["fraction"] = fraction.out


def _cors(b: _Block) -> None:
    fields = ("allowOrigins", "allowMethods", "allowHeaders", "exposeHeaders", "allowCredentials", "maxAge")
    b.at_least_one(fields)
    for key in fields[:4]:
        b.strings(key)
    b.boolean("allowCredentials")
    b.integer("maxAge", 1)


def _external_auth(b: _Block) -> None:
    protocol = b.string("protocol", required=True, choices=("HTTP", "GRPC"))
    _backend_ref(b)
    grpc = b.block("grpc", ("allowedHeaders",))
    if grpc is not None:
        if protocol != "GRPC":
            raise ValidationError("grpc is only valid when protocol is GRPC")
        grpc.strings("allowedHeaders")
        b.out["grpc"] = grpc.out
    http = b.block("http", ("path", "allowedHeaders", "allowedResponseHeaders"))
    if http is not None:
        if protocol != "HTTP":
            raise ValidationError("http is only valid when protocol is HTTP")
        http.string("path")
        http.strings("allowedHeaders")
        http.strings("allowedResponseHeaders")
        b.out["http"] = http.out
    body = b.block("forwardBody", ("maxSize",))
    if body is not None:
        if not body.integer("maxSize", 0):
            body.out.pop("maxSize", None)  # the API's maxSize is omitempty: 0 is not printed
        b.out["forwardBody"] = body.out


#: filter type → (configuration key, its fields, checker)
FILTERS: dict[str, tuple[str, tuple[str, ...], Callable[[_Block], None]]] = {
    "RequestRedirect": ("requestRedirect", ("scheme", "hostname", "port", "statusCode", "path"), _redirect),
    "URLRewrite": ("urlRewrite", ("hostname", "path"), _rewrite),
    "RequestHeaderModifier": ("requestHeaderModifier", ("set", "add", "remove"), _headers),
    "ResponseHeaderModifier": ("responseHeaderModifier", ("set", "add", "remove"), _headers),
    "RequestMirror": ("requestMirror", ("backendRef", "percent", "fraction"), _mirror),
    "CORS": (
        "cors",
        ("allowOrigins", "allowMethods", "allowHeaders", "exposeHeaders", "allowCredentials", "maxAge"),
        _cors,
    ),
    "ExternalAuth": ("externalAuth", ("protocol", "backendRef", "grpc", "http", "forwardBody"), _external_auth),
}


def check_filter(value: Any, where: str) -> Object:
    """One filter at ``where`` (``rules[<i>].filters[<j>]``), as emitted."""
    if not isinstance(value, dict):
        raise ValidationError(f"{where}: expected object")
    kind = value.get("type")
    if not isinstance(kind, str) or not kind:
        raise ValidationError(f"{where}: type is required")
    prefix = f"{where} {go_quote(kind)}: "
    if kind == "ExtensionRef":
        raise ValidationError(f'{prefix}filter type "ExtensionRef" is not implemented')
    known = FILTERS.get(kind)
    if known is None:
        raise ValidationError(f"{prefix}unknown filter type {go_quote(kind)}")
    key, fields, checker = known
    try:
        for extra in sorted(value):
            if extra not in ("type", key):
                raise ValidationError(f"unsupported field {go_quote(extra)}")
        config = value.get(key)
        block = _Block({} if config is None else config, key, "", fields)
        checker(block)
    except ValidationError as exc:
        raise ValidationError(prefix + exc.message) from exc
    return {"type": kind, key: block.out}


def check_timeouts(value: Any, where: str) -> Object:
    """``timeouts`` at ``where`` (``rules[<i>].timeouts``), printed as Go durations."""
    if not isinstance(value, dict):
        raise ValidationError(f"{where}: expected object")
    for key in sorted(value):
        if key not in ("request", "backendRequest"):
            raise ValidationError(f"{where}: unsupported field {go_quote(key)}")
    parsed: dict[str, int] = {}
    for key in ("request", "backendRequest"):
        raw = value.get(key)
        if raw is None:
            continue
        if not isinstance(raw, str):
            raise ValidationError(f"{where}.{key}: expected a duration string, got {go_type_name(raw)}")
        try:
            ns = parse_duration(raw)
        except DurationError as exc:
            raise ValidationError(f"{where}.{key}: {exc.message}") from exc
        if ns < 0:
            raise ValidationError(f"{where}.{key}: must be >= 0, got {format_duration(ns)}")
        parsed[key] = ns
    if not parsed:
        raise ValidationError(f"{where}: at least one of request or backendRequest must be set")
    request, backend = parsed.get("request"), parsed.get("backendRequest")
    if request and backend is not None and backend > request:
        raise ValidationError(
            f"{where}: backendRequest ({format_duration(backend)}) must be <= request ({format_duration(request)})"
        )
    return {k: format_duration(v) for k, v in parsed.items()}
