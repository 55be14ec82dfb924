"""The handler interfaces of the transform (docs/transform.md#handlers-and-registries,
docs/transform.md#what-a-lowering-rule-is) and their shared types.

Handlers are small classes implementing these ``Protocol``s; a new component or trait type is
one module in a ``catalog`` family whose class implements one of them and declares its type
(``engine.registry``), without touching the engine. Optional capabilities (source identity, service port, capability
awareness, rendering validation) are runtime-checkable protocols below, so a handler implements
only what it needs and the engine asks for them by name.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, cast, runtime_checkable

from oam_operator.oam.document.schema import PropertySchema

if TYPE_CHECKING:
    from oam_operator.oam.document.document import Application, ApplicationPolicy, CapabilityBinding, Component, Trait
    from oam_operator.oam.engine.transformer import TransformContext
    from oam_operator.oam.engine.tree import TreeApplication
    from oam_operator.oam.policies.result import PolicyResult

Object = dict[str, Any]
Schema = dict[str, PropertySchema]

CONTRACT_VERSION = "v1alpha1"


@dataclass
class ContractMetadata:
    """What a handler promises: its family, version and the capability keys it needs
    (docs/transform.md#schemas-and-contracts)."""

    family: str
    version: str = CONTRACT_VERSION
    required_capability_keys: list[str] = field(default_factory=list)
    deprecated: bool = False
    deprecation_message: str = ""


@dataclass
class HandlerSchemaSet:
    components: dict[str, Schema] = field(default_factory=dict)
    traits: dict[str, Schema] = field(default_factory=dict)
    policies: dict[str, Schema] = field(default_factory=dict)


@dataclass
class HandlerContractSet:
    components: dict[str, ContractMetadata] = field(default_factory=dict)
    traits: dict[str, ContractMetadata] = field(default_factory=dict)
    policies: dict[str, ContractMetadata] = field(default_factory=dict)


class BuiltinType:
    """Base of the catalog's handler classes: the types a class claims are declared, not probed.

    ``TYPES`` is set by the registration decorator (``@component(...)``, ``@trait(...)``,
    ``@trait_lowering(...)`` in :mod:`oam_operator.oam.engine.registry`); ``can_handle`` — the
    engine's registration check, kept for handlers registered by hand — answers from it.
    A type whose contract is the default (family = its type name, version ``v1alpha1``, no
    capability keys) defines no ``contract()``: the engine supplies that default.
    """

    TYPES: ClassVar[tuple[str, ...]] = ()

    def can_handle(self, type_name: str) -> bool:
        return type_name in self.TYPES


class ComponentConfig(Protocol):
    """A built component: generates its objects once the tree is built.

    Optional methods read by traits and the engine: ``service_port() -> int`` (0 = none),
    ``backend_service_name() -> str`` ("" = the component name), ``source_identity() ->
    SourceSpec | None`` and ``bind_source(name, shared)`` (generated sources, docs/transform.md#generated-sources).
    """

    def generate(self, app: TreeApplication) -> list[Object]: ...


@dataclass(frozen=True)
class SourceSpec:
    """A component's source identity (docs/transform.md#generated-sources) and how to build the source when it is
    generated.

    ``identity`` groups consumers over the document; ``kind`` is the source's Kubernetes kind
    (its lower-case form names it in messages); ``shared_only`` means a single consumer keeps
    its source among its own objects (``oci``) instead of having it generated (``helm``).
    ``build_source(name, shared)`` returns the config that generates the source object.
    """

    identity: str
    kind: str
    shared_only: bool
    build_source: Callable[[str, bool], ComponentConfig]


class ComponentHandler(Protocol):
    def can_handle(self, component_type: str) -> bool: ...

    def property_schema(self) -> Schema: ...

    def contract(self) -> ContractMetadata: ...

    def build(self, component: Component, namespace: str, ctx: TransformContext) -> ComponentConfig: ...


class TraitOutput:
    """What a trait handler may add: sub-applications that follow the component's objects
    (docs/transform.md#order-of-objects)."""

    def __init__(
        self, component: str, namespace: str, ctx: TransformContext, sources: list[TreeApplication] | None = None
    ) -> None:
        self.component = component
        self.namespace = namespace
        self.ctx = ctx
        #: generated sources only this component uses (e.g. for ``prune-protection``)
        self.sources: list[TreeApplication] = list(sources or [])
        self.applications: list[TreeApplication] = []

    def add(self, app: TreeApplication) -> None:
        self.applications.append(app)


class TraitHandler(Protocol):
    def can_handle(self, trait_type: str) -> bool: ...

    def property_schema(self) -> Schema: ...

    def contract(self) -> ContractMetadata: ...

    def apply(self, trait: Trait, app: TreeApplication, out: TraitOutput) -> None: ...


class PolicyHandler(Protocol):
    """A policy type. ``contract()`` is optional (``HasContract``): without it the engine's default
    applies (family = the type name). The built-in policies are ``BuiltinType`` classes."""

    def can_handle(self, policy_type: str) -> bool: ...

    def property_schema(self) -> Schema: ...

    def apply(self, policy: ApplicationPolicy, components: list[str], result: PolicyResult) -> None: ...


@dataclass
class LoweringContext:
    document: Application
    component: Component
    capabilities: dict[str, CapabilityBinding]


class TraitLoweringRule(Protocol):
    def trait_type(self) -> str: ...

    def property_schema(self) -> Schema: ...

    def contract(self) -> ContractMetadata: ...

    def lower_trait(self, trait: Trait, lctx: LoweringContext) -> list[Trait]: ...


class ComponentLoweringRule(Protocol):
    def component_type(self) -> str: ...

    def lower_component(self, component: Component, lctx: LoweringContext) -> list[Component]: ...


class ChartRenderer(Protocol):
    def render(self, chart_url: str, version: str, values: dict[str, Any]) -> str: ...


class UrlReader(Protocol):
    def read(self, url: str) -> bytes: ...


# --------------------------------------------------------------------------------------------
# Optional interfaces. A handler or config declares one by defining its method; the engine asks
# with ``implements`` against these runtime-checkable protocols (Go's interface assertions), and
# falls back to the documented default when the interface is absent.

_answers: dict[tuple[type, type], bool] = {}


def implements(obj: object, protocol: type) -> bool:
    """``isinstance(obj, protocol)`` for a runtime-checkable protocol, answered once per class:
    ``isinstance`` against a protocol walks the protocol's members on every call (in 3.11 the
    largest single cost of a transform of many components). A handler declares an optional
    interface by defining its method on its class; a class that delegates by ``__getattr__``
    (a trait-decorated config) is asked each time, since its answer is its delegate's."""
    cls = type(obj)
    answer = _answers.get((cls, protocol))
    if answer is None:
        answer = isinstance(obj, protocol)
        if not hasattr(cls, "__getattr__"):
            _answers[(cls, protocol)] = answer
    return answer


@runtime_checkable
class ParsingUrlReader(Protocol):
    """A ``UrlReader`` that keeps what it parsed (docs/operator.md#url-sources-are-cached):
    ``read_parsed`` reads ``url`` and returns ``parse`` of its bytes, or a copy of the objects it
    parsed before when the source has not changed. ``parse`` raises for content it refuses."""

    def read_parsed(self, url: str, parse: Callable[[bytes], list[Object]]) -> list[Object]: ...


@runtime_checkable
class CapabilityAware(Protocol):
    """A trait handler or rule that reads platform capabilities (must also validate renderings)."""

    def capability_required(self) -> bool: ...


@runtime_checkable
class RenderingValidator(Protocol):
    """Checks and defaults a ClusterProfile capability rendering once per profile."""

    def validate_and_apply_defaults(self, rendering: dict[str, Any]) -> dict[str, Any]: ...


@runtime_checkable
class HasPropertySchema(Protocol):
    def property_schema(self) -> Schema: ...


@runtime_checkable
class HasContract(Protocol):
    def contract(self) -> ContractMetadata: ...


@runtime_checkable
class ServicePortProvider(Protocol):
    """A config with a Service: its port (0 = none), read by routing traits."""

    def service_port(self) -> int: ...


@runtime_checkable
class BackendServiceNamer(Protocol):
    """A config whose Service is not named after the component ("" = the component name)."""

    def backend_service_name(self) -> str: ...


@runtime_checkable
class SourceConsumer(Protocol):
    """A config with a source identity, bound to a generated source (docs/transform.md#generated-sources)."""

    def source_identity(self) -> SourceSpec | None: ...

    def bind_source(self, name: str, shared: bool) -> None: ...


def capability_required(handler: object) -> bool:
    """``CapabilityAware.capability_required()``, False when the handler is not capability-aware."""
    if not implements(handler, CapabilityAware):
        return False
    return bool(cast(CapabilityAware, handler).capability_required())


def is_capability_aware(handler: object) -> bool:
    return implements(handler, CapabilityAware)


def rendering_validator(handler: object) -> Callable[[dict[str, Any]], dict[str, Any]] | None:
    if not implements(handler, RenderingValidator):
        return None
    return cast(RenderingValidator, handler).validate_and_apply_defaults


def service_port(config: object) -> int:
    return int(cast(ServicePortProvider, config).service_port()) if implements(config, ServicePortProvider) else 0


def backend_service_name(config: object) -> str:
    if not implements(config, BackendServiceNamer):
        return ""
    return str(cast(BackendServiceNamer, config).backend_service_name())


def source_identity(config: object) -> SourceSpec | None:
    result = cast(SourceConsumer, config).source_identity() if implements(config, SourceConsumer) else None
    return result if isinstance(result, SourceSpec) else None


def bind_source(config: object, name: str, shared: bool) -> None:
    if implements(config, SourceConsumer):
        cast(SourceConsumer, config).bind_source(name, shared)


def schema_of(handler: object) -> Schema:
    return dict(cast(HasPropertySchema, handler).property_schema()) if implements(handler, HasPropertySchema) else {}


def contract_of(handler: object, type_name: str) -> ContractMetadata:
    result = cast(HasContract, handler).contract() if implements(handler, HasContract) else None
    return result if isinstance(result, ContractMetadata) else ContractMetadata(family=type_name)
