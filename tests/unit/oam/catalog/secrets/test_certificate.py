"""The ``certificate`` trait (docs/transform.md#certificates-secrets-and-configuration,
docs/transform.md#cluster-profiles-and-capabilities): capability-required, rendering, object, messages."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from oamkit.profiles import (
    NOT_FOUND,
    NS,
    build,
    capabilities,
    document,
    error,
    evaluation_error,
    find,
    kinds,
    objects,
    profile_yaml,
    run,
    trait,
    webservice,
)

from oam_operator.oam import GenerationError, new_builtin_transformer
from oam_operator.oam.document.schema import walk_schema

ISSUER = {"certificate": {"issuerRef": {"name": "letsencrypt-prod"}}}
MINIMAL = {"secretName": "web-tls", "dnsNames": ["web.example.com"]}


def certificate(bindings: dict[str, Any] | None = None, **props: Any) -> dict[str, Any]:
    text = document(webservice("web", trait("certificate", **props)))
    return find(objects(text, ISSUER if bindings is None else bindings), "Certificate")


def handler_error(bindings: dict[str, Any] | None = None, **props: Any) -> str:
    text = document(webservice("web", trait("certificate", **props)))
    return error(text, ISSUER if bindings is None else bindings, validate=False)


def test_object_with_defaults_follows_the_component() -> None:
    text = document(webservice("web", trait("certificate", **MINIMAL)))
    objs = objects(text, ISSUER)
    assert kinds(objs) == [
        ("Deployment", "web"),
        ("Service", "web"),
        ("ServiceAccount", "web"),
        ("Certificate", "web-tls"),
    ]
    assert objs[-1] == {
        "apiVersion": "cert-manager.io/v1",
        "kind": "Certificate",
        "metadata": {"name": "web-tls", "namespace": NS},
        "spec": {
            "secretName": "web-tls",
            "issuerRef": {"name": "letsencrypt-prod", "kind": "ClusterIssuer"},
            "dnsNames": ["web.example.com"],
            "duration": "2160h0m0s",
            "renewBefore": "360h0m0s",
        },
    }


def test_sub_application_name_and_component_label() -> None:
    text = document(webservice("web", trait("certificate", **MINIMAL)))
    result = run(text, ISSUER, label=True)
    apps = [a.name for a in result.cluster.applications()]
    assert apps == ["web", "web-certificate"]
    assert result.objects()[-1]["metadata"]["labels"] == {"oam-operator.dev/component": "web"}
    assert result.policy_result.consumed_capabilities == ["certificate"]


def test_durations_print_as_go_durations() -> None:
    spec = certificate(**MINIMAL, duration="90m", renewBefore="1.5h")["spec"]
    assert (spec["duration"], spec["renewBefore"]) == ("1h30m0s", "1h30m0s")
    spec = certificate(**MINIMAL, duration="", renewBefore=None)["spec"]
    assert (spec["duration"], spec["renewBefore"]) == ("2160h0m0s", "360h0m0s")


@pytest.mark.parametrize(
    ("props", "message"),
    [
        ({"duration": "90x"}, 'invalid duration "90x": time: unknown unit "x" in duration "90x"'),
        ({"renewBefore": "5"}, 'invalid renewBefore "5": time: missing unit in duration "5"'),
        ({"duration": "soon"}, 'invalid duration "soon": time: invalid duration "soon"'),
    ],
)
def test_bad_durations_are_generation_errors(props: dict[str, Any], message: str) -> None:
    text = document(webservice("web", trait("certificate", **MINIMAL, **props)))
    with pytest.raises(GenerationError) as info:
        run(text, ISSUER)
    assert str(info.value) == message


def test_bad_duration_through_the_cli_is_prefixed_generating_manifests(tmp_path: Path) -> None:
    text = document(webservice("web", trait("certificate", **MINIMAL, duration="90x")))
    code, out, err, _, _ = build(tmp_path, text, profile_yaml(ISSUER))
    assert (code, out) == (1, "")
    assert err == 'Error: generating manifests: invalid duration "90x": time: unknown unit "x" in duration "90x"\n'


def test_rendering_supplies_the_issuer_and_authored_keys_win_whole() -> None:
    rendering = {"certificate": {"issuerRef": {"name": "letsencrypt-prod", "kind": "ClusterIssuer"}}}
    spec = certificate(rendering, **MINIMAL, issuerRef={"name": "team-ca"})["spec"]
    # the authored issuerRef replaces the rendering's whole: its kind is the handler default, not merged
    assert spec["issuerRef"] == {"name": "team-ca", "kind": "ClusterIssuer"}
    rendering = {"certificate": {"issuerRef": {"name": "corp", "kind": "Issuer"}}}
    assert certificate(rendering, **MINIMAL)["spec"]["issuerRef"] == {"name": "corp", "kind": "Issuer"}
    assert certificate(rendering, **MINIMAL, issuerRef={"name": "x", "kind": "Issuer"})["spec"]["issuerRef"] == {
        "name": "x",
        "kind": "Issuer",
    }


def test_rendering_kind_defaults_to_cluster_issuer() -> None:
    assert capabilities({"certificate": {"issuerRef": {"name": "x"}}})["certificate"].rendering == {
        "issuerRef": {"name": "x", "kind": "ClusterIssuer"}
    }
    assert capabilities({"certificate": {}})["certificate"].rendering == {}


def test_capability_is_required() -> None:
    text = document(webservice("web", trait("certificate", **MINIMAL)))
    assert error(text, {}) == f'component "web" trait "certificate": capability "certificate" {NOT_FOUND}'
    scoped = document(webservice("web", trait("certificate", **MINIMAL, scope="public")))
    assert error(scoped, {}) == f'component "web" trait "certificate": capability "certificate.public" {NOT_FOUND}'
    assert error(scoped, {"ingress": {}}) == (
        f'component "web" trait "certificate": capability "certificate.public" {NOT_FOUND}'
    )


def test_scoped_binding_then_fallback_to_unscoped() -> None:
    bindings = {
        "certificate": {"issuerRef": {"name": "default-ca"}},
        "certificate.public": {"issuerRef": {"name": "letsencrypt"}},
    }
    public = document(webservice("web", trait("certificate", **MINIMAL, scope="public")))
    result = run(public, bindings)
    assert find(result.objects(), "Certificate")["spec"]["issuerRef"]["name"] == "letsencrypt"
    assert result.policy_result.consumed_capabilities == ["certificate.public"]
    internal = document(webservice("web", trait("certificate", **MINIMAL, scope="internal")))
    result = run(internal, bindings)
    assert find(result.objects(), "Certificate")["spec"]["issuerRef"]["name"] == "default-ca"
    assert result.policy_result.consumed_capabilities == ["certificate"]


@pytest.mark.parametrize(
    ("props", "message"),
    [
        ({"dnsNames": ["a"]}, "required property 'secretName' missing or not a string"),
        ({"secretName": "", "dnsNames": ["a"]}, "required property 'secretName' missing or not a string"),
        ({"secretName": 5, "dnsNames": ["a"]}, "required property 'secretName' missing or not a string"),
        ({**MINIMAL, "issuerRef": "ca"}, "required property 'issuerRef' missing or not a map"),
        ({**MINIMAL, "issuerRef": {"kind": "Issuer"}}, "required property 'issuerRef.name' missing or not a string"),
        ({**MINIMAL, "issuerRef": {"name": 3}}, "required property 'issuerRef.name' missing or not a string"),
        ({**MINIMAL, "issuerRef": {"name": "x", "kind": 3}}, "issuerRef.kind must be a string"),
        ({"secretName": "t"}, "required property 'dnsNames' missing or empty"),
        ({"secretName": "t", "dnsNames": []}, "required property 'dnsNames' missing or empty"),
        ({"secretName": "t", "dnsNames": "a.example.com"}, "required property 'dnsNames' missing or empty"),
        ({"secretName": "t", "dnsNames": ["a", 7]}, "dnsNames[1]: expected string, got int"),
        ({"secretName": "t", "dnsNames": [{"a": 1}]}, "dnsNames[0]: expected string, got map[string]interface {}"),
    ],
)
def test_messages(props: dict[str, Any], message: str) -> None:
    assert handler_error(**props) == f'component "web" trait "certificate": {message}'


def test_issuer_ref_is_required_without_rendering_issuer() -> None:
    assert handler_error({"certificate": {}}, **MINIMAL) == (
        'component "web" trait "certificate": required property \'issuerRef\' missing or not a map'
    )
    assert certificate({"certificate": {}}, **MINIMAL, issuerRef={"name": "own"})["spec"]["issuerRef"] == {
        "name": "own",
        "kind": "ClusterIssuer",
    }


@pytest.mark.parametrize(
    ("key", "expected"),
    [
        ({"algorithm": "RSA", "size": 4096}, {"algorithm": "RSA", "size": 4096}),
        ({"algorithm": "ECDSA", "size": 384.0}, {"algorithm": "ECDSA", "size": 384}),
        ({"algorithm": "Ed25519", "encoding": "PKCS8"}, {"algorithm": "Ed25519", "encoding": "PKCS8"}),
        ({"rotationPolicy": "Always", "encoding": "PKCS1"}, {"rotationPolicy": "Always", "encoding": "PKCS1"}),
        ({"algorithm": "RSA", "size": 2048, "encoding": "PKCS1", "rotationPolicy": "Never"}, None),
    ],
)
def test_private_key(key: dict[str, Any], expected: dict[str, Any] | None) -> None:
    assert certificate(**MINIMAL, privateKey=key)["spec"]["privateKey"] == (expected or key)


def test_empty_private_key_is_omitted() -> None:
    assert "privateKey" not in certificate(**MINIMAL, privateKey={})["spec"]
    # an empty algorithm is outside the schema's enum, so only a caller skipping validation gets here
    text = document(webservice("web", trait("certificate", **MINIMAL, privateKey={"algorithm": ""})))
    assert "privateKey" not in find(objects(text, ISSUER, validate=False), "Certificate")["spec"]


@pytest.mark.parametrize(
    ("key", "message"),
    [
        ({"algorithm": "RSA", "size": 2048.5}, "privateKey.size must be a whole number"),
        ({"algorithm": "RSA", "size": "2048"}, "privateKey.size must be a whole number"),
        ({"algorithm": "RSA", "size": 0}, "privateKey.size must be positive, got 0"),
        ({"algorithm": "RSA", "size": -256}, "privateKey.size must be positive, got -256"),
        ({"size": 2048}, "privateKey.size requires privateKey.algorithm to be set"),
        ({"algorithm": "RSA", "size": 1024}, "privateKey.size: unknown RSA key size 1024 (valid: 2048, 4096, 8192)"),
        ({"algorithm": "ECDSA", "size": 2048}, "privateKey.size: unknown ECDSA key size 2048 (valid: 256, 384, 521)"),
        ({"algorithm": "Ed25519", "size": 256}, "privateKey.size must not be set for Ed25519 (key size is fixed)"),
        ({"algorithm": "DSA"}, 'privateKey.algorithm: unknown algorithm "DSA" (valid: RSA, ECDSA, Ed25519); did you mean "ECDSA"?'),
        ({"encoding": "DER"}, 'privateKey.encoding: unknown encoding "DER" (valid: PKCS1, PKCS8)'),
        ({"rotationPolicy": True}, 'privateKey.rotationPolicy: unknown rotationPolicy "true" (valid: Never, Always)'),
    ],
)
def test_private_key_messages(key: dict[str, Any], message: str) -> None:
    assert handler_error(**MINIMAL, privateKey=key) == f'component "web" trait "certificate": {message}'
    assert handler_error(**MINIMAL, privateKey=[1]) == 'component "web" trait "certificate": privateKey must be a map'


@pytest.mark.parametrize(
    ("rendering", "message"),
    [
        ({"issuer": "x"}, 'certificate rendering: unsupported field "issuer" (allowed: issuerRef)'),
        ({"issuerRef": {"kind": "Issuer"}}, "certificate rendering: issuerRef.name is required"),
        ({"issuerRef": {"name": ""}}, "certificate rendering: issuerRef.name is required"),
        ({"issuerRef": "letsencrypt"}, "certificate rendering: issuerRef.name is required"),
        ({"issuerRef": {"name": "x", "kind": 1}}, "certificate rendering: issuerRef.kind must be a string"),
        (
            {"issuerRef": {"name": "x", "group": "cert-manager.io"}},
            'certificate rendering: issuerRef: unsupported field "group" (allowed: kind, name)',
        ),
    ],
)
def test_rendering_messages(rendering: dict[str, Any], message: str) -> None:
    assert evaluation_error({"certificate.public": rendering}) == f'capability "certificate.public": {message}'


def test_authored_schema_checks() -> None:
    text = document(webservice("web", trait("certificate", **MINIMAL, issuerRef={"kind": "Issuer"})))
    assert error(text, ISSUER) == 'component "web": trait "certificate": properties.issuerRef: "name" is required'
    text = document(webservice("web", trait("certificate", **MINIMAL, privateKey={"algorithm": "DSA"})))
    assert error(text, ISSUER) == (
        'component "web": trait "certificate": properties.privateKey.algorithm: unknown algorithm "DSA" '
        '(valid: RSA, ECDSA, Ed25519); did you mean "ECDSA"?'
    )
    text = document(webservice("web", trait("certificate", **MINIMAL, usages=["server auth"])))
    assert error(text, ISSUER) == (
        'component "web": trait "certificate": properties: unsupported field "usages" '
        "(allowed: dnsNames, duration, issuerRef, privateKey, renewBefore, scope, secretName)"
    )


def test_contract_schema_and_documented_defaults() -> None:
    t = new_builtin_transformer()
    contract = t.handler_contracts().traits["certificate"]
    assert (contract.family, contract.version, contract.required_capability_keys) == (
        "certificate",
        "v1alpha1",
        ["certificate"],
    )
    schema = t.handler_schemas().traits["certificate"]
    assert [p for p, node in walk_schema(schema) if not node.description] == []
    assert [k for k, v in schema.items() if v.required] == ["secretName", "dnsNames"]
    assert (schema["duration"].default, schema["renewBefore"].default) == ("2160h", "360h")
    issuer: Any = schema["issuerRef"].properties
    assert issuer["kind"].default == "ClusterIssuer"
    assert not any(node.platform_reserved for _, node in walk_schema(schema))
