"""Application and ClusterProfile documents: decoding and validation (docs/transform.md#documents,
docs/transform.md#document-validation, docs/transform.md#the-clusterprofile-document).

Decoding is strict (an undeclared key is a parse error with its line) and validation runs the
docs/transform.md#document-validation checks in their stated order, so the first error is deterministic.

Decisions recorded here (the spec names only some decode causes): a list field holding
something else fails with ``expected a list, got <T>``, a string field holding a mapping or a
list with ``expected a string, got <T>``; any scalar in a string field is read as written (as
Go's yaml.v3 does), a null one as empty. An unknown top-level key is
``unknown field "<key>" in document``.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

from oam_operator.common.dns1123 import is_dns1123_subdomain
from oam_operator.oam.document.loader import LineIndex, load_one, parse_error
from oam_operator.oam.errors import ParseError, ValidationError
from oam_operator.oam.formatting.choices import unknown_value
from oam_operator.oam.formatting.gofmt import go_quote, go_type_name, go_value

API_VERSION = "oam-operator.dev/v1alpha1"
LAUNCHER_API_VERSION = "launcher.gokure.dev/v1alpha1"
DEFAULT_DOMAIN = "oam-operator.dev"
LAUNCHER_DOMAIN = "launcher.gokure.dev"

#: docs/transform.md#allow-lists — types a document may name even before a handler claims them.
COMPONENT_TYPES: tuple[str, ...] = (
    "crd", "cronjob", "daemonset", "helm", "helmchart", "manifests", "oci",
    "passthrough", "postgresql", "statefulset", "webservice", "worker",
)  # fmt: skip
TRAIT_TYPES: tuple[str, ...] = (
    "certificate", "cilium-networkpolicy", "configmap", "expose", "external-secret",
    "fluxcd-patches", "fluxcd-postbuild", "httproute", "ingress", "networkpolicy",
    "prune-protection", "pvc", "rbac", "scaler", "security-context", "volsync",
)  # fmt: skip
SCALER_COMPONENT_TYPES = ("webservice", "worker")

#: Standard ObjectMeta fields a custom resource may carry; the transform ignores all but four.
_STANDARD_METADATA = frozenset({
    "name", "namespace", "labels", "annotations", "uid", "resourceVersion", "generation",
    "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "finalizers",
    "ownerReferences", "managedFields", "generateName", "selfLink",
})  # fmt: skip
_LAUNCHER_METADATA = frozenset({"name", "namespace", "labels", "annotations"})


@dataclass
class Metadata:
    name: str
    namespace: str | None = None
    labels: dict[str, str] = field(default_factory=dict)
    annotations: dict[str, str] = field(default_factory=dict)


@dataclass
class Trait:
    """A trait; its identity is (component, type, index). ``sealed``: emitted by a lowering rule."""

    type: str
    properties: dict[str, Any] = field(default_factory=dict)
    sealed: bool = False


@dataclass
class Component:
    """A component. ``owner`` is the authored component a lowering rule emitted this one for.

    ``rule_order`` holds the names this component is applied after, as declared by a lowering
    rule through :meth:`order_after`; a document cannot author it (docs/transform.md#rule-order).
    """

    name: str
    type: str
    properties: dict[str, Any] = field(default_factory=dict)
    traits: list[Trait] = field(default_factory=list)
    annotations: dict[str, str] = field(default_factory=dict)
    owner: str | None = None
    rule_order: list[str] = field(default_factory=list)

    @property
    def owner_name(self) -> str:
        """The authored component that owns this one's objects (labels, docs/transform.md#the-component-label)."""
        return self.owner if self.owner is not None else self.name

    def order_after(self, *names: str) -> Component:
        """Declare that this component is applied after ``names`` (for lowering rules)."""
        for name in names:
            if name not in self.rule_order:
                self.rule_order.append(name)
        return self

    def derive(self, name: str, type: str, properties: dict[str, Any] | None = None) -> Component:
        """A component a lowering rule emits for this one: same traits, annotations and owner."""
        return Component(
            name=name,
            type=type,
            properties=dict(properties or {}),
            traits=list(self.traits),
            annotations=dict(self.annotations),
            owner=self.owner_name,
            rule_order=list(self.rule_order),
        )


@dataclass
class ApplicationPolicy:
    name: str
    type: str
    properties: dict[str, Any] = field(default_factory=dict)


@dataclass
class Application:
    api_version: str
    kind: str
    metadata: Metadata
    components: list[Component] = field(default_factory=list)
    policies: list[ApplicationPolicy] = field(default_factory=list)

    @property
    def default_domain(self) -> str:
        """The domain a document implies when none is configured (docs/transform.md#domain-and-namespace)."""
        return LAUNCHER_DOMAIN if self.api_version == LAUNCHER_API_VERSION else DEFAULT_DOMAIN


@dataclass
class CapabilityBinding:
    """What a ClusterProfile offers for one trait type (or ``<type>.<scope>``)."""

    rendering: dict[str, Any] = field(default_factory=dict)


@dataclass
class ClusterProfile:
    api_version: str
    kind: str
    name: str
    gitops_engine: str = ""
    capabilities: dict[str, CapabilityBinding] = field(default_factory=dict)


# --------------------------------------------------------------------------------------------
# Envelope decoding


class _Decoder:
    """Strict decoding of plain values, with lines when they came from YAML."""

    def __init__(self, kind: str, lines: LineIndex | None) -> None:
        self.kind = kind
        self.lines = lines

    def error(self, cause: str, line: int | None) -> ParseError:
        return parse_error(self.kind, cause, line)

    def _value_line(self, parent: Any, key: str | None, value: Any) -> int | None:
        if self.lines is None:
            return None
        if isinstance(value, dict | list):
            line = self.lines.line(value)
            if line is not None:
                return line
        if key is not None and parent is not None:
            return self.lines.value_line(parent, key)
        return None

    def mapping(self, parent: Any, key: str | None, value: Any) -> dict[str, Any]:
        """A mapping field; null reads as empty."""
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise self.error(f"expected a mapping, got {go_type_name(value)}", self._value_line(parent, key, value))
        return value

    def sequence(self, parent: Any, key: str, value: Any) -> list[Any]:
        if value is None:
            return []
        if not isinstance(value, list):
            raise self.error(f"expected a list, got {go_type_name(value)}", self._value_line(parent, key, value))
        return value

    def string(self, parent: dict[str, Any], key: str) -> str:
        value = parent.get(key)
        if value is None:
            return ""
        if isinstance(value, dict | list):
            raise self.error(f"expected a string, got {go_type_name(value)}", self._value_line(parent, key, value))
        if isinstance(value, str):
            return value
        raw = self.lines.raw_text(parent, key) if self.lines is not None else None
        return raw if raw is not None else go_value(value)

    def string_map(self, parent: dict[str, Any], key: str) -> dict[str, str]:
        mapping = self.mapping(parent, key, parent.get(key))
        return {k: self.string(mapping, k) for k in mapping}

    def known(self, mapping: dict[str, Any], allowed: Collection[str], where: str) -> None:
        for key in mapping:
            if key not in allowed:
                line = self.lines.key_line(mapping, key) if self.lines is not None else None
                raise self.error(f"unknown field {go_quote(key)} in {where}", line)


def _decode_metadata(dec: _Decoder, root: dict[str, Any], api_version: str, launcher_keys: Collection[str]) -> Any:
    meta = dec.mapping(root, "metadata", root.get("metadata"))
    allowed = launcher_keys if api_version == LAUNCHER_API_VERSION else _STANDARD_METADATA
    dec.known(meta, allowed, "metadata")
    return meta


def _decode_application(value: Any, dec: _Decoder) -> Application:
    root = dec.mapping(None, None, value)
    api_version = dec.string(root, "apiVersion")
    top = ("apiVersion", "kind", "metadata", "spec")
    dec.known(root, top if api_version == LAUNCHER_API_VERSION else (*top, "status"), "document")
    kind = dec.string(root, "kind")
    meta = _decode_metadata(dec, root, api_version, _LAUNCHER_METADATA)
    namespace = dec.string(meta, "namespace") if meta.get("namespace") is not None else None
    metadata = Metadata(
        name=dec.string(meta, "name"),
        namespace=namespace,
        labels=dec.string_map(meta, "labels"),
        annotations=dec.string_map(meta, "annotations"),
    )
    spec = dec.mapping(root, "spec", root.get("spec"))
    spec_keys = ("components", "policies")
    dec.known(spec, spec_keys if api_version == LAUNCHER_API_VERSION else (*spec_keys, "serviceAccountName"), "spec")
    if "serviceAccountName" in spec:
        dec.string(spec, "serviceAccountName")
    components: list[Component] = []
    for i, item in enumerate(dec.sequence(spec, "components", spec.get("components"))):
        where = f"spec.components[{i}]"
        raw = dec.mapping(None, None, item) if item is not None else {}
        dec.known(raw, ("name", "type", "annotations", "properties", "traits"), where)
        traits: list[Trait] = []
        for j, titem in enumerate(dec.sequence(raw, "traits", raw.get("traits"))):
            traw = dec.mapping(None, None, titem) if titem is not None else {}
            dec.known(traw, ("type", "properties"), f"{where}.traits[{j}]")
            traits.append(Trait(dec.string(traw, "type"), dec.mapping(traw, "properties", traw.get("properties"))))
        components.append(
            Component(
                name=dec.string(raw, "name"),
                type=dec.string(raw, "type"),
                properties=dec.mapping(raw, "properties", raw.get("properties")),
                traits=traits,
                annotations=dec.string_map(raw, "annotations"),
            )
        )
    policies: list[ApplicationPolicy] = []
    for i, item in enumerate(dec.sequence(spec, "policies", spec.get("policies"))):
        raw = dec.mapping(None, None, item) if item is not None else {}
        dec.known(raw, ("name", "type", "properties"), f"spec.policies[{i}]")
        policies.append(
            ApplicationPolicy(
                name=dec.string(raw, "name"),
                type=dec.string(raw, "type"),
                properties=dec.mapping(raw, "properties", raw.get("properties")),
            )
        )
    return Application(api_version, kind, metadata, components, policies)


# --------------------------------------------------------------------------------------------
# Validation


def _api_version_error(api_version: str) -> ValidationError:
    return ValidationError(
        f"unsupported apiVersion {go_quote(api_version)}, expected {go_quote(API_VERSION)} or "
        f"{go_quote(LAUNCHER_API_VERSION)}"
    )


def validate_application(
    app: Application,
    component_types: Collection[str] = (),
    trait_types: Collection[str] = (),
    open_types: bool = False,
) -> None:
    """The docs/transform.md#document-validation checks in order; ``*_types`` are extra types claimed by registered
    handlers; with ``open_types`` any type passes, for the transform to look up among definitions
    (docs/definitions.md#using-a-definition)."""
    if app.api_version not in (API_VERSION, LAUNCHER_API_VERSION):
        raise _api_version_error(app.api_version)
    if app.kind != "Application":
        raise ValidationError(f"expected kind Application, got {go_quote(app.kind)}")
    name = app.metadata.name
    if not name:
        raise ValidationError("metadata.name is required")
    if not is_dns1123_subdomain(name):
        raise ValidationError(f"metadata.name {go_quote(name)} is not a valid DNS-1123 subdomain")
    ns = app.metadata.namespace
    if ns and not is_dns1123_subdomain(ns):
        raise ValidationError(f"metadata.namespace {go_quote(ns)} is not a valid DNS-1123 subdomain")
    if not app.components:
        raise ValidationError("spec.components must contain at least one component")
    allowed_components = set(COMPONENT_TYPES) | set(component_types)
    allowed_traits = set(TRAIT_TYPES) | set(trait_types)
    seen: set[str] = set()
    for i, comp in enumerate(app.components):
        _validate_component(i, comp, seen, allowed_components, allowed_traits, open_types)
    seen_policies: set[str] = set()
    for i, pol in enumerate(app.policies):
        if not pol.name:
            raise ValidationError(f"spec.policies[{i}].name is required")
        if not is_dns1123_subdomain(pol.name):
            raise ValidationError(f"policy name {go_quote(pol.name)} is not a valid DNS-1123 subdomain")
        if pol.name in seen_policies:
            raise ValidationError(f"duplicate policy name {go_quote(pol.name)}")
        seen_policies.add(pol.name)
        if not pol.type:
            raise ValidationError(f"policy {go_quote(pol.name)} missing type")


def _enum_error(value: str, owner: str, allowed: Collection[str], noun: str) -> ValidationError:
    """``component "<c>": unknown type "<t>" (valid: …)`` (docs/transform.md#document-validation)."""
    return ValidationError(f"component {go_quote(owner)}: {unknown_value(noun, value, sorted(allowed))}")


def _validate_component(
    i: int, comp: Component, seen: set[str], allowed_components: set[str], allowed_traits: set[str],
    open_types: bool = False,
) -> None:
    if not comp.name:
        raise ValidationError(f"spec.components[{i}].name is required")
    quoted = go_quote(comp.name)
    if not is_dns1123_subdomain(comp.name):
        raise ValidationError(f"component name {quoted} is not a valid DNS-1123 subdomain")
    if comp.name in seen:
        raise ValidationError(f"duplicate component name {quoted}")
    seen.add(comp.name)
    if not comp.type:
        raise ValidationError(f"component {quoted} missing type")
    if comp.type not in allowed_components and not open_types:
        raise _enum_error(comp.type, comp.name, COMPONENT_TYPES, "type")
    for j, trait in enumerate(comp.traits):
        if not trait.type:
            raise ValidationError(f"component {quoted} trait[{j}] missing type")
        if trait.type not in allowed_traits and not open_types:
            raise _enum_error(trait.type, comp.name, TRAIT_TYPES, "trait type")
        if trait.type == "scaler" and comp.type not in SCALER_COMPONENT_TYPES:
            raise ValidationError(
                f'trait "scaler" is not supported on component type {go_quote(comp.type)} (component {quoted}); '
                f"supported types: {', '.join(SCALER_COMPONENT_TYPES)}"
            )


def decode_application(value: Any, lines: LineIndex | None = None) -> Application:
    """Strictly decode an already-loaded document (no validation)."""
    return _decode_application(value, _Decoder("Application", lines))


def parse_application(
    text: str, *, component_types: Collection[str] = (), trait_types: Collection[str] = ()
) -> Application:
    """Load, decode and validate an Application document (docs/transform.md#loading-yaml,
    docs/transform.md#document-validation)."""
    value, lines = load_one(text, "Application")
    app = decode_application(value, lines)
    validate_application(app, component_types, trait_types)
    return app


def application_from_object(
    obj: Mapping[str, Any], *, component_types: Collection[str] = (), trait_types: Collection[str] = (),
    open_types: bool = False,
) -> Application:
    """The controller's path: an Application custom resource (a dict) decoded and validated."""
    app = decode_application(dict(obj))
    validate_application(app, component_types, trait_types, open_types)
    return app


# --------------------------------------------------------------------------------------------
# ClusterProfile


def _decode_profile(value: Any, dec: _Decoder) -> ClusterProfile:
    root = dec.mapping(None, None, value)
    api_version = dec.string(root, "apiVersion")
    top = ("apiVersion", "kind", "metadata", "spec")
    dec.known(root, top if api_version == LAUNCHER_API_VERSION else (*top, "status"), "document")
    kind = dec.string(root, "kind")
    meta = _decode_metadata(dec, root, api_version, ("name",))
    spec = dec.mapping(root, "spec", root.get("spec"))
    dec.known(spec, ("gitopsEngine", "capabilities"), "spec")
    capabilities: dict[str, CapabilityBinding] = {}
    caps = dec.mapping(spec, "capabilities", spec.get("capabilities"))
    for key, raw in caps.items():
        binding = dec.mapping(caps, key, raw)
        dec.known(binding, ("rendering",), f"spec.capabilities.{key}")
        capabilities[key] = CapabilityBinding(dec.mapping(binding, "rendering", binding.get("rendering")))
    return ClusterProfile(api_version, kind, dec.string(meta, "name"), dec.string(spec, "gitopsEngine"), capabilities)


def validate_cluster_profile(profile: ClusterProfile) -> None:
    """The docs/transform.md#the-clusterprofile-document checks in order."""
    if profile.api_version not in (API_VERSION, LAUNCHER_API_VERSION):
        raise _api_version_error(profile.api_version)
    if profile.kind != "ClusterProfile":
        raise ValidationError(f"expected kind ClusterProfile, got {go_quote(profile.kind)}")
    if not profile.name:
        raise ValidationError("metadata.name is required")
    if not is_dns1123_subdomain(profile.name):
        raise ValidationError(f"metadata.name {go_quote(profile.name)} is not a valid DNS-1123 subdomain")
    if profile.gitops_engine not in ("", "fluxcd"):
        raise ValidationError(unknown_value("gitopsEngine", profile.gitops_engine, ["fluxcd"]))


def parse_cluster_profile(text: str) -> ClusterProfile:
    """Load, decode and validate a ClusterProfile document."""
    value, lines = load_one(text, "ClusterProfile")
    profile = _decode_profile(value, _Decoder("ClusterProfile", lines))
    validate_cluster_profile(profile)
    return profile


def cluster_profile_from_object(obj: Mapping[str, Any]) -> ClusterProfile:
    """The controller's path: a ClusterProfile custom resource decoded and validated."""
    profile = _decode_profile(dict(obj), _Decoder("ClusterProfile", None))
    validate_cluster_profile(profile)
    return profile
