"""The pure rules of delivery to other clusters (docs/multicluster.md#refusals): the profile's
Secret reference, the namespace rule, the Secret's key and the kubeconfig's checks, each with its
exact message."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from oam_operator.controller.reconcile.delivery import (
    DeliveryRefused,
    SecretKey,
    for_transform,
    namespace_refusal,
    owner_cluster,
    parse_kubeconfig,
    secret_key_of,
    secret_value,
)

REF = SecretKey("oam-system", "spoke-a", "value")
WHERE = 'ClusterProfile spoke-a: Secret oam-system/spoke-a key "value"'


def kubeconfig(**changes: Any) -> dict[str, Any]:
    document: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "spoke", "cluster": {"server": "https://127.0.0.1:6443",
                                                   "certificate-authority-data": "Q0E="}}],
        "users": [{"name": "admin", "user": {"token": "t"}}],
        "contexts": [{"name": "spoke", "context": {"cluster": "spoke", "user": "admin"}}],
        "current-context": "spoke",
    }
    document.update(changes)
    return document


def refusal(data: bytes) -> str:
    with pytest.raises(DeliveryRefused) as caught:
        parse_kubeconfig("spoke-a", REF, data)
    return str(caught.value)


def test_a_valid_kubeconfig_gives_its_context_and_server() -> None:
    parsed = parse_kubeconfig("spoke-a", REF, json.dumps(kubeconfig()).encode())
    assert (parsed.context, parsed.server) == ("spoke", "https://127.0.0.1:6443")


def test_yaml_that_does_not_parse_is_refused_with_the_parser_message() -> None:
    message = refusal(b"clusters: [unclosed\n")
    assert message.startswith(f"{WHERE} is not a kubeconfig: while parsing a flow sequence")


@pytest.mark.parametrize(("data", "found"), [(b"", "nothing"), (b"- a\n", "list"), (b"just text", "str")])
def test_a_document_that_is_not_a_mapping_is_refused(data: bytes, found: str) -> None:
    assert refusal(data) == f"{WHERE} is not a kubeconfig: a YAML mapping was expected, found {found}"


def test_text_that_is_not_utf8_is_refused() -> None:
    assert refusal(b"\xff\xfe") == f"{WHERE} is not a kubeconfig: not UTF-8 text"


def test_no_current_context_is_refused() -> None:
    document = kubeconfig()
    del document["current-context"]
    assert refusal(json.dumps(document).encode()) == f"{WHERE}: the kubeconfig names no current-context"


def test_a_current_context_that_is_not_defined_is_refused() -> None:
    message = refusal(json.dumps(kubeconfig(**{"current-context": "other"})).encode())
    assert message == f'{WHERE}: the kubeconfig\'s current-context "other" is not one of its contexts'


def test_a_context_naming_a_missing_cluster_is_refused() -> None:
    message = refusal(json.dumps(kubeconfig(clusters=[])).encode())
    assert message == f'{WHERE}: context "spoke" names cluster "spoke", which the kubeconfig does not define'


def test_a_cluster_without_server_is_refused() -> None:
    message = refusal(json.dumps(kubeconfig(clusters=[{"name": "spoke", "cluster": {}}])).encode())
    assert message == f'{WHERE}: cluster "spoke" has no server'


def test_a_context_naming_a_missing_user_is_refused() -> None:
    message = refusal(json.dumps(kubeconfig(users=[])).encode())
    assert message == f'{WHERE}: context "spoke" names user "admin", which the kubeconfig does not define'


def test_an_exec_user_is_refused() -> None:
    users = [{"name": "admin", "user": {"exec": {"command": "aws"}}}]
    message = refusal(json.dumps(kubeconfig(users=users)).encode())
    assert message == (f'{WHERE}: user "admin" uses exec, which the operator does not run (a kubeconfig in a Secret '
                       "must carry its credentials)")


@pytest.mark.parametrize(("section", "field", "instead"), [
    ("user", "client-certificate", "client-certificate-data"),
    ("user", "tokenFile", "token"),
    ("cluster", "certificate-authority", "certificate-authority-data"),
])
def test_file_references_are_refused(section: str, field: str, instead: str) -> None:
    document = kubeconfig()
    entry = document["users"][0]["user"] if section == "user" else document["clusters"][0]["cluster"]
    entry[field] = "/etc/passwd"
    name = "admin" if section == "user" else "spoke"
    assert refusal(json.dumps(document).encode()) == (
        f'{WHERE}: {section} "{name}" reads the file {field}, which the operator does not read (use {instead})')


def test_the_secret_key_is_read_from_data() -> None:
    secret = {"data": {"value": base64.b64encode(b"kubeconfig").decode()}}
    assert secret_value("spoke-a", REF, secret) == b"kubeconfig"


def test_a_secret_without_the_key_is_refused_naming_its_keys() -> None:
    with pytest.raises(DeliveryRefused) as caught:
        secret_value("spoke-a", REF, {"data": {"config": "eA==", "ca.crt": "eA=="}})
    assert str(caught.value) == 'ClusterProfile spoke-a: Secret oam-system/spoke-a has no key "value" (its keys: ca.crt, config)'
    with pytest.raises(DeliveryRefused) as caught:
        secret_value("spoke-a", REF, {})
    assert str(caught.value) == 'ClusterProfile spoke-a: Secret oam-system/spoke-a has no key "value" (its keys: none)'


def test_the_secret_ref_defaults_to_the_operators_namespace_and_key_value() -> None:
    spec = {"kubeConfig": {"secretRef": {"name": "spoke-a"}}}
    assert secret_key_of("p", spec, "oam-system", ()) == SecretKey("oam-system", "spoke-a", "value")
    assert secret_key_of("p", {}, "oam-system", ()) is None


def test_a_secret_in_another_namespace_needs_the_setting() -> None:
    spec = {"kubeConfig": {"secretRef": {"name": "spoke-a", "namespace": "team-a", "key": "config"}}}
    with pytest.raises(DeliveryRefused) as caught:
        secret_key_of("p", spec, "oam-system", ())
    assert str(caught.value) == ("ClusterProfile p: the kubeconfig Secret team-a/spoke-a is outside the operator's "
                                 "namespace oam-system (--profile-secret-namespaces allows: none)")
    assert secret_key_of("p", spec, "oam-system", ("team-a",)) == SecretKey("team-a", "spoke-a", "config")


def test_an_unknown_operator_namespace_is_refused() -> None:
    with pytest.raises(DeliveryRefused) as caught:
        secret_key_of("p", {"kubeConfig": {"secretRef": {"name": "s"}}}, "", ())
    assert str(caught.value) == ("ClusterProfile p: the kubeconfig Secret s has no namespace and the operator's "
                                 "namespace is unknown (set POD_NAMESPACE or --operator-namespace)")


def test_allowed_namespaces() -> None:
    spec = {"allowedNamespaces": ["team-a", "team-c"]}
    assert namespace_refusal("p", spec, "team-a") is None
    assert namespace_refusal("p", {}, "team-b") is None
    assert namespace_refusal("p", spec, "team-b") == (
        "ClusterProfile p does not allow Applications of namespace team-b (allowedNamespaces: team-a, team-c)")
    assert namespace_refusal("p", {"allowedNamespaces": []}, "team-b") == (
        "ClusterProfile p does not allow Applications of namespace team-b (allowedNamespaces: none)")


def test_the_transform_never_sees_the_delivery_fields() -> None:
    profile = {"metadata": {"name": "p"}, "spec": {"capabilities": {}, "kubeConfig": {"secretRef": {"name": "s"}},
                                                   "allowedNamespaces": ["a"]}}
    assert for_transform(profile) == {"metadata": {"name": "p"}, "spec": {"capabilities": {}}}
    plain = {"spec": {"capabilities": {}}}
    assert for_transform(plain) is plain


def test_the_cluster_part_of_remote_owner_ids_names_the_remote_then_the_hub() -> None:
    assert owner_cluster("remote-uid", "hub-uid") == "remote-uid@hub-uid"
    assert owner_cluster("remote-uid", "") == "remote-uid"  # no hub id known: the remote's alone
