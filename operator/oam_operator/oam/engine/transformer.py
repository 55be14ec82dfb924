"""The transform: registries, dispatch and ``transform()`` (docs/transform.md#order-of-validation,
docs/transform.md#handlers-and-registries, docs/transform.md#policies,
docs/transform.md#ordering-components-into-groups).

Unimplemented built-in types: a type of the allow-lists (docs/transform.md#allow-lists) that no handler claims passes
document validation (it is a built-in type) and is refused by ``transform()`` with the spec's
no-handler message followed by ``: this built-in type is not implemented yet``, e.g.
``no handler for component type "webservice" (component "web"): this built-in type is not
implemented yet``. The component and trait catalog lands module by module in the families
of ``catalog/``; the message disappears as each type is declared there.

Decision recorded here: a ``TransformContext.namespace`` (``build --namespace``) must be a
DNS-1123 subdomain like ``metadata.namespace``, else ``invalid namespace "<ns>": <errors>``.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field, replace
from typing import Any

from oam_operator.common.dns1123 import dns1123_subdomain_errors
from oam_operator.oam.catalog.security.traffic_sources import NetpolComponent, synthesize_network_policies
from oam_operator.oam.document.document import (
    COMPONENT_TYPES,
    TRAIT_TYPES,
    Application,
    CapabilityBinding,
    ClusterProfile,
    Component,
)
from oam_operator.oam.document.schema import check_object, check_platform_reserved, scope_schema
from oam_operator.oam.engine.capabilities import resolve_trait
from oam_operator.oam.engine.collection import without_collection
from oam_operator.oam.engine.handlers import (
    ChartRenderer,
    ComponentConfig,
    ComponentHandler,
    ComponentLoweringRule,
    HandlerContractSet,
    HandlerSchemaSet,
    Object,
    PolicyHandler,
    Schema,
    TraitHandler,
    TraitLoweringRule,
    TraitOutput,
    UrlReader,
    capability_required,
    contract_of,
    is_capability_aware,
    rendering_validator,
    schema_of,
)
from oam_operator.oam.engine.labels import stamp_component_label
from oam_operator.oam.engine.lowering import LoweringRules, lower_document
from oam_operator.oam.engine.object_names import check_object_names
from oam_operator.oam.engine.ordering import Entry, order
from oam_operator.oam.engine.sources import GeneratedSource, SourceConsumerEntry, collect_sources
from oam_operator.oam.engine.tree import Bundle, Cluster, Node, TreeApplication
from oam_operator.oam.errors import (
    CapabilityError,
    EffectiveValueError,
    GenerationError,
    OamError,
    RegistrationError,
    TransformError,
)
from oam_operator.oam.formatting.choices import unknown_value
from oam_operator.oam.formatting.gofmt import go_quote
from oam_operator.oam.policies.result import TIER_ORDER, ComponentNames, PolicyResult

DELIVERY_HINT = (
    "it configures delivery, which the transform leaves to the consumer that delivers the application; "
    "a consumer that delivers through Flux registers its own handler"
)
DELIVERY_POLICY_TYPES = ("reconciliation", "health-checks")
DELIVERY_TRAIT_TYPES = ("fluxcd-patches", "fluxcd-postbuild")
NOT_IMPLEMENTED = "this built-in type is not implemented yet"


@dataclass
class TransformContext:
    """The inputs of one transform besides the document (docs/transform.md#transform-context-and-result)."""

    cluster_id: str = "local"
    namespace: str | None = None
    domain: str | None = None
    capabilities: dict[str, CapabilityBinding] = field(default_factory=dict)
    component_label: bool = True
    chart_renderer: ChartRenderer | None = None
    url_reader: UrlReader | None = None


@dataclass
class TransformResult:
    cluster: Cluster
    policy_result: PolicyResult

    def objects(self) -> list[Object]:
        """Every generated object, in tree order (docs/transform.md#order-of-objects)."""
        return self.cluster.objects()


@dataclass
class _Built:
    component: Component
    config: ComponentConfig
    tier: str | None


def no_component_handler_message(component_type: str, component: str) -> str:
    message = f"no handler for component type {go_quote(component_type)} (component {go_quote(component)})"
    return f"{message}: {NOT_IMPLEMENTED}" if component_type in COMPONENT_TYPES else message


def no_trait_handler_message(trait_type: str, component: str) -> str:
    message = f"no handler for trait type {go_quote(trait_type)} (on component {go_quote(component)})"
    if trait_type in DELIVERY_TRAIT_TYPES:
        return f"{message}: {DELIVERY_HINT}"
    return f"{message}: {NOT_IMPLEMENTED}" if trait_type in TRAIT_TYPES else message


def no_policy_handler_message(policy_type: str, policy: str) -> str:
    message = f"no handler for policy type {go_quote(policy_type)} (policy {go_quote(policy)})"
    return f"{message}: {DELIVERY_HINT}" if policy_type in DELIVERY_POLICY_TYPES else message


def _normalise(obj: Object) -> Object:
    """Drop ``metadata.creationTimestamp: null`` and an empty top-level ``status``
    (docs/transform.md#output-stream-and-object-content)."""
    meta = obj.get("metadata")
    if isinstance(meta, dict) and "creationTimestamp" in meta and meta["creationTimestamp"] is None:
        del meta["creationTimestamp"]
    if "status" in obj and obj["status"] in (None, {}):
        del obj["status"]
    return obj


class Transformer:
    """Registries of handlers and lowering rules, and the transform itself."""

    def __init__(self) -> None:
        self._components: dict[str, ComponentHandler] = {}
        self._traits: dict[str, TraitHandler] = {}
        self._policies: dict[str, PolicyHandler] = {}
        self._component_rules: dict[str, ComponentLoweringRule] = {}
        self._trait_rules: dict[str, TraitLoweringRule] = {}

    # ---------------------------------------------------------------------------------------
    # Registration (docs/transform.md#the-transformer)

    def register_component(self, type_name: str, handler: ComponentHandler) -> None:
        self._check_handler("component", type_name, handler, self._components, self._component_rules)
        self._components[type_name] = handler

    def register_trait(self, type_name: str, handler: TraitHandler) -> None:
        self._check_handler("trait", type_name, handler, self._traits, self._trait_rules)
        if is_capability_aware(handler) and rendering_validator(handler) is None:
            raise RegistrationError(
                f"oam: trait handler for type {type_name} implements CapabilityAware but not ValidateAndApplyDefaults"
            )
        self._traits[type_name] = handler

    def register_policy(self, type_name: str, handler: PolicyHandler) -> None:
        self._check_handler("policy", type_name, handler, self._policies, {})
        self._policies[type_name] = handler

    def register_trait_lowering(self, rule: TraitLoweringRule) -> None:
        type_name = rule.trait_type()
        self._check_rule("trait", type_name, self._trait_rules, self._traits)
        if is_capability_aware(rule) and rendering_validator(rule) is None:
            raise RegistrationError(
                f"oam: trait lowering rule for type {type_name} implements CapabilityAware but not "
                "ValidateAndApplyDefaults"
            )
        self._trait_rules[type_name] = rule

    def register_component_lowering(self, rule: ComponentLoweringRule) -> None:
        type_name = rule.component_type()
        self._check_rule("component", type_name, self._component_rules, self._components)
        self._component_rules[type_name] = rule

    @staticmethod
    def _check_handler(
        position: str, type_name: str, handler: Any, handlers: dict[str, Any], rules: dict[str, Any]
    ) -> None:
        if type_name in handlers:
            raise RegistrationError(f"oam: {position} handler already registered for type {type_name}")
        if not handler.can_handle(type_name):
            raise RegistrationError(f"oam: {position} handler does not claim type {type_name}")
        if type_name in rules:
            raise RegistrationError(
                f"oam: type {type_name} is already registered via register_{position}_lowering; a lowerable type "
                f"must not also be a dispatchable {position} handler"
            )

    @staticmethod
    def _check_rule(position: str, type_name: str, rules: dict[str, Any], handlers: dict[str, Any]) -> None:
        if type_name in rules:
            raise RegistrationError(f"oam: {position} lowering rule already registered for type {type_name}")
        if type_name in handlers:
            raise RegistrationError(
                f"oam: type {type_name} is already registered via register_{position}; a dispatchable {position} "
                "handler type must not also be lowerable"
            )

    def component_types(self) -> list[str]:
        """Types claimed by a registered component handler or rule (document validation,
        docs/transform.md#document-validation)."""
        return sorted({*self._components, *self._component_rules})

    def trait_types(self) -> list[str]:
        return sorted({*self._traits, *self._trait_rules})

    def policy_types(self) -> list[str]:
        return sorted(self._policies)

    # ---------------------------------------------------------------------------------------
    # Schemas (docs/transform.md#properties-and-schemas, docs/transform.md#schemas-and-contracts)

    def _component_schema(self, type_name: str) -> Schema | None:
        owner: Any = self._components.get(type_name) or self._component_rules.get(type_name)
        return schema_of(owner) if owner is not None else None

    def _trait_schema(self, type_name: str) -> Schema | None:
        owner: Any = self._traits.get(type_name) or self._trait_rules.get(type_name)
        if owner is None:
            return None
        schema = schema_of(owner)
        schema.setdefault("scope", scope_schema(type_name))
        return schema

    def handler_schemas(self) -> HandlerSchemaSet:
        return HandlerSchemaSet(
            components={t: self._component_schema(t) or {} for t in self.component_types()},
            traits={t: self._trait_schema(t) or {} for t in self.trait_types()},
            policies={t: schema_of(self._policies[t]) for t in self.policy_types()},
        )

    def handler_contracts(self) -> HandlerContractSet:
        def contract(owner: Any, type_name: str) -> Any:
            return contract_of(owner, type_name)

        return HandlerContractSet(
            components={
                t: contract(self._components.get(t) or self._component_rules.get(t), t) for t in self.component_types()
            },
            traits={t: contract(self._traits.get(t) or self._trait_rules.get(t), t) for t in self.trait_types()},
            policies={t: contract(self._policies[t], t) for t in self.policy_types()},
        )

    # ---------------------------------------------------------------------------------------
    # Profile (docs/transform.md#evaluating-a-profile)

    def evaluate_profile(self, profile: ClusterProfile) -> ClusterProfile:
        """Validate and default every rendering whose trait type validates renderings."""
        capabilities: dict[str, CapabilityBinding] = {}
        for key in sorted(profile.capabilities):
            binding = profile.capabilities[key]
            trait_type = key.split(".", 1)[0]
            owner: Any = self._traits.get(trait_type) or self._trait_rules.get(trait_type)
            validator = rendering_validator(owner) if owner is not None else None
            if validator is None:
                capabilities[key] = binding
                continue
            try:
                rendering = validator(copy.deepcopy(binding.rendering))
            except OamError as exc:
                raise CapabilityError(f"capability {go_quote(key)}: {exc.message}") from exc
            capabilities[key] = CapabilityBinding(rendering)
        return replace(profile, capabilities=capabilities)

    # ---------------------------------------------------------------------------------------
    # Authored properties (docs/transform.md#validating-authored-properties)

    @without_collection
    def validate_authored_properties(self, app: Application) -> None:
        """Check every authored component, trait and policy against its consumer's schema."""
        for comp in app.components:
            schema = self._component_schema(comp.type)
            if schema is not None:
                check_platform_reserved(schema, comp.properties, f"component {go_quote(comp.name)}")
        for comp in app.components:
            for trait in comp.traits:
                schema = self._trait_schema(trait.type)
                if schema is not None:
                    context = f"component {go_quote(comp.name)} trait {go_quote(trait.type)}"
                    check_platform_reserved(schema, trait.properties, context)
        for comp in app.components:
            schema = self._component_schema(comp.type)
            if schema is not None:
                path = f"component {go_quote(comp.name)} (type {go_quote(comp.type)}): properties"
                check_object(schema, False, comp.properties, path, False)
            for trait in comp.traits:
                schema = self._trait_schema(trait.type)
                if schema is not None:
                    path = f"component {go_quote(comp.name)}: trait {go_quote(trait.type)}: properties"
                    check_object(schema, False, trait.properties, path, False)
        for policy in app.policies:
            handler = self._policies.get(policy.type)
            if handler is not None:
                path = f"policy {go_quote(policy.name)} (type {go_quote(policy.type)}): properties"
                check_object(schema_of(handler), False, policy.properties, path, False)

    # ---------------------------------------------------------------------------------------
    # The transform (docs/transform.md#order-of-validation)

    @without_collection
    def transform(self, app: Application, ctx: TransformContext) -> TransformResult:
        """Document → bundle tree with every object generated, or the first error."""
        domain = ctx.domain or app.default_domain
        errors = dns1123_subdomain_errors(domain)
        if errors:
            raise TransformError(f"invalid domain {go_quote(domain)}: {'; '.join(errors)}")
        if ctx.namespace:
            errors = dns1123_subdomain_errors(ctx.namespace)
            if errors:
                raise TransformError(f"invalid namespace {go_quote(ctx.namespace)}: {'; '.join(errors)}")
        namespace = ctx.namespace or app.metadata.namespace or "default"
        rctx = replace(ctx, domain=domain, namespace=namespace)
        result = PolicyResult()
        consumed: set[str] = set()

        rules = LoweringRules(self._component_rules, self._trait_rules, self._emitted_trait_schema, ctx.capabilities)
        components = lower_document(app, rules, consumed)
        self._check_claimed(components)
        built = self._build(components, namespace, rctx)
        sources = collect_sources(
            app.metadata.name,
            [SourceConsumerEntry(b.component.name, b.component.owner_name, b.config) for b in built],
        )
        self._dispatch_policies(app, built, sources, result)

        entries = [
            Entry(b.component.name, result.tier_overrides.get(b.component.name) or b.tier, b.component.rule_order)
            for b in built
        ]
        ordering = order(app.metadata.name, entries, sources, result)

        source_apps = [TreeApplication(s.name, namespace, s.config, s.owner) for s in sources]
        group_bundles: list[Bundle] = []
        placed: dict[str, Bundle] = {}
        for k, group in enumerate(ordering.groups):
            bundle = Bundle(ordering.names[k], depends_on=[ordering.names[k - 1]] if k > 0 else [])
            for i in group:
                placed[built[i].component.name] = bundle
                bundle.applications.extend(
                    self._apply_traits(built[i], namespace, rctx, sources, source_apps, consumed)
                )
            group_bundles.append(bundle)
        synthesize_network_policies(
            [
                NetpolComponent(b.component.name, b.component.owner_name, b.config, placed[b.component.name])
                for b in built
                if b.component.name in placed
            ],
            namespace,
            domain,
        )
        name = app.metadata.name
        if ordering.ordered:
            node = Node(name, Bundle(name, applications=source_apps, children=group_bundles))
        else:
            node = Node("", Bundle(name, applications=[a for b in group_bundles for a in b.applications]))
        cluster = Cluster(ctx.cluster_id, node)
        result.record_capabilities(consumed)
        self._generate(cluster, f"{domain}/component" if ctx.component_label else None)
        return TransformResult(cluster, result)

    def _emitted_trait_schema(self, type_name: str) -> Schema | None:
        handler = self._traits.get(type_name)
        if handler is None:
            return None
        schema = schema_of(handler)
        schema.setdefault("scope", scope_schema(type_name))
        return schema

    def _check_claimed(self, components: list[Component]) -> None:
        """After lowering, every component and trait type must have a handler
        (docs/transform.md#types-refused-at-transform-time)."""
        for comp in components:
            if comp.type not in self._components:
                raise TransformError(no_component_handler_message(comp.type, comp.name))
            for trait in comp.traits:
                if trait.type not in self._traits:
                    raise TransformError(no_trait_handler_message(trait.type, comp.name))

    def _build(self, components: list[Component], namespace: str, ctx: TransformContext) -> list[_Built]:
        tier_key = f"{ctx.domain}/tier"
        built: list[_Built] = []
        for comp in components:
            handler = self._components[comp.type]
            try:
                config = handler.build(comp, namespace, ctx)
            except OamError as exc:
                raise TransformError(f"component {go_quote(comp.name)}", exc) from exc
            tier = comp.annotations.get(tier_key)
            if tier is not None and tier not in TIER_ORDER:
                raise TransformError(
                    f"component {go_quote(comp.name)}: annotation {tier_key}: {unknown_value('tier', tier, TIER_ORDER)}"
                )
            built.append(_Built(comp, config, tier))
        return built

    def _dispatch_policies(
        self, app: Application, built: list[_Built], sources: list[GeneratedSource], result: PolicyResult
    ) -> None:
        names = ComponentNames([b.component.name for b in built] + [s.name for s in sources if s.shared])
        for policy in app.policies:
            handler = self._policies.get(policy.type)
            if handler is None:
                raise TransformError(no_policy_handler_message(policy.type, policy.name))
            try:
                handler.apply(policy, names, result)
            except OamError as exc:
                raise TransformError(f"policy {go_quote(policy.name)}", exc) from exc

    def _apply_traits(
        self,
        item: _Built,
        namespace: str,
        ctx: TransformContext,
        sources: list[GeneratedSource],
        source_apps: list[TreeApplication],
        consumed: set[str],
    ) -> list[TreeApplication]:
        comp = item.component
        app = TreeApplication(comp.name, namespace, item.config, comp.owner_name)
        owned = [a for s, a in zip(sources, source_apps, strict=True) if not s.shared and s.consumers == [comp.name]]
        sub_apps: list[TreeApplication] = []
        for trait in comp.traits:
            handler = self._traits[trait.type]
            if not trait.sealed:
                trait = resolve_trait(
                    trait, comp.name, schema_of(handler), capability_required(handler), ctx.capabilities, consumed
                )
            out = TraitOutput(comp.name, namespace, ctx, owned)
            try:
                handler.apply(trait, app, out)
            except EffectiveValueError as exc:
                raise TransformError(f"component {go_quote(comp.name)}", exc) from exc
            except OamError as exc:
                raise TransformError(f"component {go_quote(comp.name)} trait {go_quote(trait.type)}", exc) from exc
            for added in out.applications:
                added.trait = trait.type
            sub_apps.extend(out.applications)
        return [app, *sub_apps]

    @staticmethod
    def _generate(cluster: Cluster, label_key: str | None) -> None:
        for app in cluster.applications():
            try:
                objects = app.config.generate(app)
            except GenerationError:
                raise
            except OamError as exc:
                raise GenerationError(exc.message) from exc
            for obj in objects:
                _normalise(obj)
                if label_key is not None and app.owner is not None:
                    stamp_component_label(obj, label_key, app.owner)
            check_object_names(app.owner, app.name, objects)  # names the API server would refuse
            app.objects = objects


def new_builtin_transformer() -> Transformer:
    """A transformer with every built-in handler this build ships, plus both policies."""
    from oam_operator.oam.catalog import register_builtin_catalog
    from oam_operator.oam.policies import DependencyPolicy, PlacementPolicy

    transformer = Transformer()
    register_builtin_catalog(transformer)
    transformer.register_policy("dependency", DependencyPolicy())
    transformer.register_policy("placement", PlacementPolicy())
    return transformer
