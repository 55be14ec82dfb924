"""PropertySchema checks and authored-property validation (docs/transform.md#properties-and-schemas)."""

from __future__ import annotations

from typing import Any

import pytest
from oamkit import cm, document, parse, place

from oam_operator.oam import PropertyError, PropertySchema, TransformContext, Transformer, new_builtin_transformer
from oam_operator.oam.catalog.manifests.passthrough import PassthroughHandler
from oam_operator.oam.document.schema import check_object, check_value
from oam_operator.oam.engine.handlers import ContractMetadata, Schema
from oam_operator.oam.errors import OamError, PlatformReservedError
from oam_operator.oam.policies import PlacementPolicy


@pytest.mark.parametrize(
    ("schema", "value", "message"),
    [
        (PropertySchema(type="string"), 5, "p: expected string, got int"),
        (PropertySchema(type="boolean"), "true", "p: expected boolean, got string"),
        (PropertySchema(type="integer"), "3", "p: expected integer, got string (3)"),
        (PropertySchema(type="integer"), 1.5, "p: expected integer, got float64 (1.5)"),
        (PropertySchema(type="integer"), True, "p: expected integer, got bool (true)"),
        (PropertySchema(type="number"), "1", "p: expected number, got string"),
        (PropertySchema(type="number"), False, "p: expected number, got bool"),
        (PropertySchema(type="array"), {}, "p: expected array, got map[string]interface {}"),
        (PropertySchema(type="array", items=PropertySchema(type="string")), ["a", 1], "p[1]: expected string, got int"),
        (PropertySchema(type="object"), [], "p: expected object, got []interface {}"),
        (PropertySchema(type="map"), 1, 'p: schema declares unsupported property type "map"'),
        (
            PropertySchema(type="string", enum=["infra", "apps"]),
            "edge",
            'p: unknown p "edge" (valid: infra, apps)',
        ),
        (PropertySchema(type="integer", enum=[80, 443]), 81, "p: unknown p 81 (valid: 80, 443)"),
        (
            PropertySchema(type="object", properties={"a": PropertySchema(type="string", required=True)}),
            {"a": None},
            'p: "a" is required',
        ),
        (
            PropertySchema(type="object", properties={"b": PropertySchema(), "a": PropertySchema()}),
            {"c": 1},
            'p: unsupported field "c" (allowed: a, b)',
        ),
        (PropertySchema(type="object"), {"c": 1}, 'p: unsupported field "c" (allowed: (none))'),
    ],
)
def test_check_value_messages(schema: PropertySchema, value: Any, message: str) -> None:
    with pytest.raises(PropertyError) as info:
        check_value(schema, value, "p")
    assert str(info.value) == message


@pytest.mark.parametrize(
    ("schema", "value"),
    [
        (PropertySchema(type="integer"), 3.0),
        (PropertySchema(type="integer", enum=[80]), 80.0),
        (PropertySchema(type="string", required=True), None),
        (PropertySchema(type=""), {"anything": [1]}),
        (PropertySchema(type="object", additional_properties=True), {"x": 1}),
        (PropertySchema(type="number"), 2),
    ],
)
def test_check_value_accepts(schema: PropertySchema, value: Any) -> None:
    assert check_value(schema, value, "p") == value


def test_object_check_reports_required_before_unknown_and_keys_in_sorted_order() -> None:
    fields = {"z": PropertySchema(type="string", required=True), "a": PropertySchema(type="string")}
    with pytest.raises(PropertyError, match=r'^p: "z" is required$'):
        check_object(fields, False, {"b": 1}, "p", True)
    with pytest.raises(PropertyError, match=r'^p: unsupported field "b" \(allowed: a, z\)$'):
        check_object(fields, False, {"c": 1, "b": 1}, "p", False)


def authored_error(text: str, transformer: Transformer | None = None) -> str:
    t = transformer or new_builtin_transformer()
    app = parse(text, t)
    with pytest.raises((PropertyError, PlatformReservedError)) as info:
        t.validate_authored_properties(app)
    return str(info.value)


@pytest.mark.parametrize(
    ("props", "message"),
    [
        (
            {"component": "a", "teir": "infra"},
            'policy "cache-in-infra" (type "placement"): properties: unsupported field "teir" (allowed: component, tier); did you mean "tier"?',
        ),
        (
            {"component": 5, "tier": "infra"},
            'policy "cache-in-infra" (type "placement"): properties.component: expected string, got int',
        ),
        (
            {"component": "a", "tier": "edge"},
            'policy "cache-in-infra" (type "placement"): properties.tier: unknown tier "edge" '
            "(valid: infra, services, apps)",
        ),
    ],
)
def test_policy_properties(props: dict[str, Any], message: str) -> None:
    text = document([cm("a")], [{"name": "cache-in-infra", "type": "placement", "properties": props}])
    assert authored_error(text) == message


@pytest.mark.parametrize(
    ("components", "policies", "message"),
    [
        ([cm("a")], [{"name": "p", "type": "placement"}], "policy \"p\": missing required property 'component'"),
        ([cm("a")], [{"name": "p", "type": "dependency"}], "policy \"p\": missing required property 'rules'"),
        (
            [cm("a", traits=[{"type": "pvc", "properties": {"size": "1Gi"}}])],
            None,
            "component \"a\" trait \"pvc\": required property 'name' missing or not a string",
        ),
    ],
)
def test_missing_required_top_level_property_is_left_to_the_handler(
    components: list[dict[str, Any]], policies: list[dict[str, Any]] | None, message: str
) -> None:
    t = new_builtin_transformer()
    app = parse(document(components, policies), t)
    t.validate_authored_properties(app)  # the schema lets the missing property through …
    with pytest.raises(OamError) as info:
        t.transform(app, TransformContext())
    assert str(info.value) == message  # … and the handler refuses it with its own words


def test_nested_required_is_checked_as_written() -> None:
    text = document([cm("a")], [{"name": "o", "type": "dependency", "properties": {"rules": [{"component": "a"}]}}])
    assert authored_error(text) == 'policy "o" (type "dependency"): properties.rules[0]: "dependsOn" is required'


def test_component_properties_are_checked_with_their_type() -> None:
    text = document([{"name": "a", "type": "passthrough", "properties": {"object": {}, "objekt": 1}}])
    assert authored_error(text) == (
        'component "a" (type "passthrough"): properties: unsupported field "objekt" (allowed: clusterScoped, object); did you mean "object"?'
    )
    text = document([{"name": "a", "type": "passthrough", "properties": {"object": {}, "clusterScoped": "yes"}}])
    assert (
        authored_error(text)
        == 'component "a" (type "passthrough"): properties.clusterScoped: expected boolean, got string'
    )


@pytest.mark.parametrize(
    ("text", "registered_refusal"),
    [
        (
            document([{"name": "web", "type": "webservice", "properties": {"anything": 1}}]),
            'component "web" (type "webservice"): properties: unsupported field "anything" (allowed: affinity, args, '
            "command, env, envFrom, image, initContainers, lifecycle, port, probes, replicas, resources, "
            "securityContext, sidecars, topologySpread, volumes, workingDir)",
        ),
        (
            document([cm("a", traits=[{"type": "pvc", "properties": {"z": 1}}])]),
            'component "a": trait "pvc": properties: unsupported field "z" (allowed: accessModes, name, scope, size, '
            "storageClassName)",
        ),
        (
            document([cm("a")], [{"name": "x", "type": "placement", "properties": {"z": 1}}]),
            'policy "x" (type "placement"): properties: unsupported field "z" (allowed: component, tier)',
        ),
    ],
)
def test_unregistered_types_are_skipped(text: str, registered_refusal: str) -> None:
    assert authored_error(text) == registered_refusal  # with the built-in handlers the properties are refused
    t = Transformer()  # nothing registered: every type of the document is skipped
    t.validate_authored_properties(parse(text, t))


#: The type of the test trait below: no real handler uses it, so registering it never collides.
FAKE_TRAIT = "test-ingress"


class _Trait:
    """A test trait with a platform-reserved field and a nested object."""

    def can_handle(self, trait_type: str) -> bool:
        return trait_type == FAKE_TRAIT

    def property_schema(self) -> Schema:
        return {
            "rules": PropertySchema(
                type="array",
                description="r",
                items=PropertySchema(
                    type="object",
                    description="r",
                    properties={"host": PropertySchema(type="string", required=True, description="h")},
                ),
            ),
            "allowedHostnameWildcard": PropertySchema(type="string", platform_reserved=True, description="w"),
            "tls": PropertySchema(
                type="object",
                description="t",
                properties={"issuer": PropertySchema(type="string", platform_reserved=True, description="i")},
            ),
        }

    def contract(self) -> ContractMetadata:
        return ContractMetadata(family=FAKE_TRAIT)

    def apply(self, trait: Any, app: Any, out: Any) -> None:
        return None


def _with_trait() -> Transformer:
    """The test trait, plus the built-ins these tests use: the passthrough component and placement policy."""
    t = Transformer()
    t.register_component("passthrough", PassthroughHandler())
    t.register_policy("placement", PlacementPolicy())
    t.register_trait(FAKE_TRAIT, _Trait())
    return t


def _trait_doc(props: dict[str, Any], component_props: dict[str, Any] | None = None) -> str:
    comp = cm("web", traits=[{"type": FAKE_TRAIT, "properties": props}])
    if component_props is not None:
        comp["properties"] = component_props
    return document([comp])


def test_trait_paths_and_nested_required() -> None:
    message = authored_error(_trait_doc({"rules": [{"path": "/"}]}), _with_trait())
    assert message == 'component "web": trait "test-ingress": properties.rules[0]: "host" is required'


def test_platform_reserved_even_null_and_nested() -> None:
    expected = (
        'component "web" trait "test-ingress": properties: "allowedHostnameWildcard" is platform-reserved and may '
        "only be set via ClusterProfile capability rendering: oam: property is platform-reserved"
    )
    assert authored_error(_trait_doc({"allowedHostnameWildcard": None}), _with_trait()) == expected
    nested = authored_error(_trait_doc({"tls": {"issuer": "x"}}), _with_trait())
    assert nested.startswith('component "web" trait "test-ingress": properties.tls: "issuer" is platform-reserved')


def test_scope_is_accepted_on_every_trait_and_must_be_a_string() -> None:
    t = _with_trait()
    t.validate_authored_properties(parse(_trait_doc({"scope": "public"}), t))
    assert authored_error(_trait_doc({"scope": 5}), _with_trait()) == (
        'component "web": trait "test-ingress": properties.scope: expected string, got int'
    )


def test_order_reserved_first_then_components_then_traits_then_policies() -> None:
    t = _with_trait()
    comp_bad = {"object": {}, "bad": 1}
    text = document(
        [
            {"name": "a", "type": "passthrough", "properties": comp_bad},
            cm("web", traits=[{"type": FAKE_TRAIT, "properties": {"allowedHostnameWildcard": "x"}}]),
        ],
        [place("p", "a", "edge")],
    )
    assert "platform-reserved" in authored_error(text, t)
    text = document(
        [
            cm("a", traits=[{"type": FAKE_TRAIT, "properties": {"nope": 1}}]),
            {"name": "b", "type": "passthrough", "properties": comp_bad},
        ],
        [place("p", "a", "edge")],
    )
    assert authored_error(text, t).startswith('component "a": trait "test-ingress"')
    text = document([{"name": "b", "type": "passthrough", "properties": comp_bad}], [place("p", "b", "edge")])
    assert authored_error(text, t).startswith('component "b" (type "passthrough")')
