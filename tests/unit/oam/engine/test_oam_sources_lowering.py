"""Generated sources (docs/transform.md#generated-sources) and the lowering engine (docs/transform.md#lowering-rules)
through test handlers.

The built-in helm/oci types land in a later issue; these tests drive the same machinery with
small handlers defined here.
"""

from __future__ import annotations

from typing import Any

import pytest
from oamkit import cm, dep, document, place, run, summary

from oam_operator.oam import (
    Component,
    OrderingError,
    PropertySchema,
    RegistrationError,
    Trait,
    Transformer,
    TransformError,
    TreeApplication,
    new_builtin_transformer,
)
from oam_operator.oam.document.names import digest
from oam_operator.oam.engine.handlers import ContractMetadata, LoweringContext, Schema, SourceSpec, TraitOutput


class _Source:
    def __init__(self, name: str, url: str, shared: bool) -> None:
        self.name, self.url, self.shared = name, url, shared

    def generate(self, app: TreeApplication) -> list[dict[str, Any]]:
        interval = "1h0m0s" if self.shared else "10m0s"
        return [
            {
                "apiVersion": "source.toolkit.fluxcd.io/v1",
                "kind": "HelmRepository",
                "metadata": {"name": self.name, "namespace": app.namespace},
                "spec": {"url": self.url, "interval": interval},
            }
        ]


class _Release:
    def __init__(self, name: str, url: str) -> None:
        self.name, self.url, self.source = name, url, ""

    def source_identity(self) -> SourceSpec:
        return SourceSpec(f"helm:{self.url}", "HelmRepository", False, lambda n, s: _Source(n, self.url, s))

    def bind_source(self, name: str, shared: bool) -> None:
        self.source = name

    def generate(self, app: TreeApplication) -> list[dict[str, Any]]:
        return [
            {
                "apiVersion": "helm.toolkit.fluxcd.io/v2",
                "kind": "HelmRelease",
                "metadata": {"name": self.name, "namespace": app.namespace},
                "spec": {"chart": {"spec": {"sourceRef": {"kind": "HelmRepository", "name": self.source}}}},
            }
        ]


class _Chart:
    """A helm-like component: its inline repository is a generated source."""

    def can_handle(self, component_type: str) -> bool:
        return component_type == "chart"

    def property_schema(self) -> Schema:
        return {"url": PropertySchema(type="string", description="u")}

    def contract(self) -> ContractMetadata:
        return ContractMetadata(family="chart")

    def build(self, component: Component, namespace: str, ctx: Any) -> _Release:
        return _Release(component.name, component.properties["url"])


def helm_transformer() -> Transformer:
    t = new_builtin_transformer()
    t.register_component("chart", _Chart())
    return t


def chart(name: str, url: str = "https://charts.example.com") -> dict[str, Any]:
    return {"name": name, "type": "chart", "properties": {"url": url}}


def test_single_consumer_source_orders_the_tree() -> None:
    result = run(document([chart("metrics")], name="monitoring"), helm_transformer())
    assert result.cluster.node.name == "monitoring"
    assert summary(result.cluster.node.bundle) == [
        ("monitoring", [], ["metrics"]),
        ("monitoring-00", [], ["metrics"]),
    ]
    kinds = [(o["kind"], o["metadata"]["name"], o["metadata"]["labels"]) for o in result.objects()]
    assert kinds == [
        ("HelmRepository", "metrics", {"oam-operator.dev/component": "metrics"}),
        ("HelmRelease", "metrics", {"oam-operator.dev/component": "metrics"}),
    ]


def test_shared_source_is_named_after_the_application_and_unlabelled() -> None:
    result = run(document([chart("a"), chart("b"), cm("web")], name="shop"), helm_transformer())
    shared = "shop-source-" + digest("helm:https://charts.example.com")[:10]
    assert shared == "shop-source-d3f34901c4"
    assert summary(result.cluster.node.bundle) == [("shop", [], [shared]), ("shop-00", [], ["a", "b", "web"])]
    source = result.objects()[0]
    assert source["metadata"] == {"name": shared, "namespace": "default"}
    assert source["spec"]["interval"] == "1h0m0s"
    releases = [o for o in result.objects() if o["kind"] == "HelmRelease"]
    assert [r["spec"]["chart"]["spec"]["sourceRef"]["name"] for r in releases] == [shared, shared]
    assert result.cluster.node.bundle.applications[0].owner is None


def test_different_sources_are_not_shared_and_keep_first_consumer_order() -> None:
    text = document([chart("b", "https://two.example.com"), chart("a"), chart("c", "https://two.example.com")])
    result = run(text, helm_transformer())
    names = [a.name for a in result.cluster.node.bundle.applications]
    assert names == ["app-source-" + digest("helm:https://two.example.com")[:10], "a"]


@pytest.mark.parametrize(
    ("policies", "message"),
    [
        (
            [place("p", "shop-source-d3f34901c4", "infra")],
            'helmrepository "shop-source-d3f34901c4" cannot be placed in tier infra: a source a lowering rule '
            "generates is applied with the application bundle itself, before every group",
        ),
        (
            [dep("d", ("shop-source-d3f34901c4", ["web", "a"]))],
            'helmrepository "shop-source-d3f34901c4" cannot wait on web, a: a source a lowering rule generates is '
            "applied with the application bundle itself, before every group",
        ),
    ],
)
def test_shared_sources_refuse_tiers_and_dependencies(policies: list[dict[str, Any]], message: str) -> None:
    with pytest.raises(OrderingError) as info:
        run(document([chart("a"), chart("b"), cm("web")], policies, name="shop"), helm_transformer())
    assert str(info.value) == message


def test_a_dependency_on_a_shared_source_is_dropped() -> None:
    text = document([chart("a"), chart("b"), cm("web")], [dep("d", ("web", ["shop-source-d3f34901c4"]))], name="shop")
    result = run(text, helm_transformer())
    assert summary(result.cluster.node.bundle)[1:] == [("shop-00", [], ["a", "b", "web"])]


def test_shared_source_name_colliding_with_a_component() -> None:
    text = document([chart("a"), chart("b"), cm("shop-source-d3f34901c4")], name="shop")
    with pytest.raises(OrderingError) as info:
        run(text, helm_transformer())
    assert str(info.value) == (
        'generated source "shop-source-d3f34901c4" has the same name as component "shop-source-d3f34901c4"'
    )


# ---------------------------------------------------------------------------------------------
# Lowering


class _Bundle:
    """A component rule: ``bundle`` becomes ``<c>-crds`` then ``<c>`` (ordered after the CRDs)."""

    def __init__(self, emit_nothing: bool = False, target: str | None = None) -> None:
        self.emit_nothing = emit_nothing
        self.target = target

    def component_type(self) -> str:
        return "bundle"

    def lower_component(self, component: Component, lctx: LoweringContext) -> list[Component]:
        if self.emit_nothing:
            return []
        crds = component.derive(
            f"{component.name}-crds", "passthrough", {"object": {"apiVersion": "v1", "kind": "ConfigMap"}}
        )
        main = component.derive(component.name, "passthrough", {"object": {"apiVersion": "v1", "kind": "Secret"}})
        main.order_after(self.target or crds.name)
        return [crds, main]


def test_component_rule_order_makes_groups_and_keeps_the_owner() -> None:
    t = new_builtin_transformer()
    t.register_component_lowering(_Bundle())
    result = run(document([{"name": "x", "type": "bundle"}, cm("y")]), t, validate=False)
    assert summary(result.cluster.node.bundle)[1:] == [("app-00", [], ["x-crds", "y"]), ("app-01", ["app-00"], ["x"])]
    owners = {a.name: a.owner for a in result.cluster.applications()}
    assert owners == {"x-crds": "x", "y": "y", "x": "x"}
    labels = [o["metadata"]["labels"]["oam-operator.dev/component"] for o in result.objects()]
    assert labels == ["x", "y", "x"]


def test_rule_order_refusals() -> None:
    t = new_builtin_transformer()
    t.register_component_lowering(_Bundle(target="ghost"))
    with pytest.raises(OrderingError) as info:
        run(document([{"name": "x", "type": "bundle"}]), t, validate=False)
    assert str(info.value) == (
        'component "x" is ordered after "ghost" by its lowering rule, but the document has no component "ghost"'
    )
    t = new_builtin_transformer()
    t.register_component_lowering(_Bundle(target="x"))
    with pytest.raises(OrderingError) as info:
        run(document([{"name": "x", "type": "bundle"}]), t, validate=False)
    assert str(info.value) == 'component "x" is ordered after itself by its lowering rule'


def test_rule_order_against_a_dependency_names_the_lowering_rule() -> None:
    t = new_builtin_transformer()
    t.register_component_lowering(_Bundle())
    with pytest.raises(OrderingError) as info:
        run(document([{"name": "x", "type": "bundle"}], [dep("d", ("x-crds", ["x"]))]), t, validate=False)
    assert str(info.value) == (
        'components cannot be ordered: "x-crds" is after "x" (dependency policy), "x" is after "x-crds" (lowering rule)'
    )


def test_component_rule_emitting_nothing() -> None:
    t = new_builtin_transformer()
    t.register_component_lowering(_Bundle(emit_nothing=True))
    with pytest.raises(TransformError) as info:
        run(document([{"name": "x", "type": "bundle"}]), t, validate=False)
    assert str(info.value) == 'component "x": lowering rule emitted nothing'


class _Loop:
    def component_type(self) -> str:
        return "loop"

    def lower_component(self, component: Component, lctx: LoweringContext) -> list[Component]:
        return [component.derive(component.name, "loop")]


def test_lowering_depth_is_bounded() -> None:
    t = new_builtin_transformer()
    t.register_component_lowering(_Loop())
    with pytest.raises(TransformError) as info:
        run(document([{"name": "x", "type": "loop"}], name="doc"), t, validate=False)
    assert str(info.value) == 'lowering component "x" in document "doc": oam: lowering exceeded max recursion depth'


class _Note:
    """A terminal trait that adds a ConfigMap sub-application."""

    def can_handle(self, trait_type: str) -> bool:
        return trait_type == "note"

    def property_schema(self) -> Schema:
        return {
            "text": PropertySchema(type="string", required=True, description="t"),
            "colour": PropertySchema(type="string", description="c"),
        }

    def contract(self) -> ContractMetadata:
        return ContractMetadata(family="note")

    def apply(self, trait: Trait, app: TreeApplication, out: TraitOutput) -> None:
        name = f"{out.component}-note"
        obj = {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": out.namespace},
            "data": dict(trait.properties),
        }

        class _Cfg:
            def generate(self, app: TreeApplication) -> list[dict[str, Any]]:
                return [obj]

        out.add(TreeApplication(name, out.namespace, _Cfg(), owner=out.component))


class _Shout:
    """A capability-aware trait rule lowering ``shout`` into ``note``."""

    def __init__(self, emit: list[dict[str, Any]] | None = None) -> None:
        self.emit = emit

    def trait_type(self) -> str:
        return "shout"

    def property_schema(self) -> Schema:
        return {
            "text": PropertySchema(type="string", description="t"),
            "colour": PropertySchema(type="string", description="c", platform_reserved=True),
        }

    def contract(self) -> ContractMetadata:
        return ContractMetadata(family="shout", required_capability_keys=["shout"])

    def capability_required(self) -> bool:
        return True

    def validate_and_apply_defaults(self, rendering: dict[str, Any]) -> dict[str, Any]:
        return {"colour": "red", **rendering}

    def lower_trait(self, trait: Trait, lctx: LoweringContext) -> list[Trait]:
        if self.emit is not None:
            return [Trait("note", p) for p in self.emit]
        return [
            Trait("note", {"text": str(trait.properties.get("text", "")).upper(), "colour": trait.properties["colour"]})
        ]


def _shout_transformer(rule: _Shout | None = None) -> Transformer:
    t = new_builtin_transformer()
    t.register_trait("note", _Note())
    t.register_trait_lowering(rule or _Shout())
    return t


def test_trait_rule_with_capability_emits_sealed_terminal_traits_after_the_component() -> None:
    from oam_operator.oam import CapabilityBinding, TransformContext

    t = _shout_transformer()
    profile_caps = {"shout": CapabilityBinding({})}
    from oam_operator.oam import ClusterProfile

    caps = t.evaluate_profile(ClusterProfile("x", "ClusterProfile", "p", "", profile_caps)).capabilities
    assert caps["shout"].rendering == {"colour": "red"}
    text = document([cm("web", traits=[{"type": "shout", "properties": {"text": "hi"}}])])
    result = run(text, t, ctx=TransformContext(capabilities=caps))
    assert [(a.name, a.owner) for a in result.cluster.applications()] == [("web", "web"), ("web-note", "web")]
    assert result.objects()[1]["data"] == {"text": "HI", "colour": "red"}
    assert result.policy_result.consumed_capabilities == ["shout"]


def test_trait_rule_without_binding_fails_with_the_capability_message() -> None:
    text = document([cm("web", traits=[{"type": "shout", "properties": {"text": "hi"}}])])
    with pytest.raises(TransformError) as info:
        run(text, _shout_transformer(), validate=False)
    assert str(info.value) == (
        'component "web" trait "shout": capability "shout" not found in ClusterProfile: '
        "oam: capability key not found in ClusterProfile"
    )


def test_emitted_trait_is_checked_with_required_fields() -> None:
    from oam_operator.oam import CapabilityBinding, TransformContext

    text = document([cm("web", traits=[{"type": "shout", "properties": {"scope": "loud"}}])])
    ctx = TransformContext(capabilities={"shout.loud": CapabilityBinding({"colour": "blue"})})
    with pytest.raises(TransformError) as info:
        run(text, _shout_transformer(_Shout(emit=[{"colour": "x"}])), ctx=ctx)
    assert str(info.value) == 'component "web" trait "shout": emitted trait "note": properties: "text" is required'
    with pytest.raises(TransformError) as info:
        run(text, _shout_transformer(_Shout(emit=[])), ctx=ctx)
    assert str(info.value) == 'component "web" trait "shout": lowering rule emitted nothing'


def test_registration_collisions() -> None:
    t = _shout_transformer()
    with pytest.raises(RegistrationError) as info:
        t.register_trait_lowering(_Shout())
    assert str(info.value) == "oam: trait lowering rule already registered for type shout"

    class _ShoutHandler(_Note):
        def can_handle(self, trait_type: str) -> bool:
            return trait_type == "shout"

    with pytest.raises(RegistrationError) as info:
        t.register_trait("shout", _ShoutHandler())
    assert str(info.value) == (
        "oam: type shout is already registered via register_trait_lowering; a lowerable type must not also be a "
        "dispatchable trait handler"
    )

    class _Aware(_Note):
        def capability_required(self) -> bool:
            return False

    with pytest.raises(RegistrationError) as info:
        new_builtin_transformer().register_trait("note", _Aware())
    assert (
        str(info.value)
        == "oam: trait handler for type note implements CapabilityAware but not ValidateAndApplyDefaults"
    )
    t2 = new_builtin_transformer()
    t2.register_trait("note", _Note())

    class _NoteRule(_Shout):
        def trait_type(self) -> str:
            return "note"

    with pytest.raises(RegistrationError) as info:
        t2.register_trait_lowering(_NoteRule())
    assert str(info.value).startswith("oam: type note is already registered via register_trait;")
    with pytest.raises(RegistrationError) as info:
        new_builtin_transformer().register_component("passthrough", _Chart())
    assert str(info.value) == "oam: component handler already registered for type passthrough"
    with pytest.raises(RegistrationError) as info:
        new_builtin_transformer().register_component("helmish", _Chart())
    assert str(info.value) == "oam: component handler does not claim type helmish"


def test_schemas_and_contracts_include_rules() -> None:
    # Only the test trait and rule are registered, so the list does not depend on the built-in catalog.
    bare = Transformer()
    bare.register_trait("note", _Note())
    bare.register_trait_lowering(_Shout())
    assert list(bare.handler_schemas().traits) == ["note", "shout"]
    assert list(bare.handler_contracts().traits) == ["note", "shout"]
    t = _shout_transformer()
    assert list(t.handler_schemas().traits) == sorted([*new_builtin_transformer().trait_types(), "note", "shout"])
    assert t.handler_contracts().traits["shout"].required_capability_keys == ["shout"]
    assert "scope" in t.handler_schemas().traits["shout"]


def test_profile_evaluation_failure_names_the_capability() -> None:
    from oam_operator.oam import CapabilityBinding, CapabilityError, ClusterProfile, ValidationError

    class _Strict(_Shout):
        def validate_and_apply_defaults(self, rendering: dict[str, Any]) -> dict[str, Any]:
            for key in sorted(rendering):
                raise ValidationError(f'shout rendering: unsupported field "{key}" (allowed: (none))')
            return rendering

    t = new_builtin_transformer()
    t.register_trait("note", _Note())
    t.register_trait_lowering(_Strict())
    profile = ClusterProfile(
        "x",
        "ClusterProfile",
        "p",
        "",
        {"shout.loud": CapabilityBinding({"x": 1}), "other": CapabilityBinding({"y": 2})},
    )
    with pytest.raises(CapabilityError) as info:
        t.evaluate_profile(profile)
    assert str(info.value) == 'capability "shout.loud": shout rendering: unsupported field "x" (allowed: (none))'
