"""The chart's admission webhook (docs/admission.md): configuration, Service, certificates, RBAC, flags."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from tests.unit.helm.test_chart_deployment import settings_of
from tests.unit.unitkit import args, container, of_kind, one, rule_set

Render = Callable[..., list[dict[str, Any]]]
NAME = "oam-oam-operator-admission"
SERVICE_HOSTS = ("oam-oam-operator-webhook.oam-system.svc", "oam-oam-operator-webhook.oam-system.svc.cluster.local")


def test_off_by_default(render: Render) -> None:
    objects = render()
    assert of_kind(objects, "ValidatingWebhookConfiguration") == []
    assert not any(arg.startswith("--admission") for arg in args(objects))
    assert [s["metadata"]["name"] for s in of_kind(objects, "Service")] == ["oam-oam-operator-metrics"]


def test_self_signed_through_the_service(render: Render) -> None:
    objects = render({"admission": {"enabled": True}})
    configuration = one(objects, "ValidatingWebhookConfiguration", NAME)
    assert "annotations" not in configuration["metadata"]
    webhook, notifications = configuration["webhooks"]
    assert notifications == {
        "name": "validate.notifications.oam-operator.dev",
        "admissionReviewVersions": ["v1"], "sideEffects": "None", "failurePolicy": "Fail", "timeoutSeconds": 10,
        "matchPolicy": "Equivalent",
        "clientConfig": {"service": {"name": "oam-oam-operator-webhook", "namespace": "oam-system",
                                     "path": "/validate-notifications", "port": 443}},
        "rules": [{"apiGroups": ["oam-operator.dev"], "apiVersions": ["*"], "operations": ["CREATE", "UPDATE"],
                   "resources": ["notifications"], "scope": "Namespaced"}],
    }
    assert webhook == {
        "name": "validate.applications.oam-operator.dev",
        "admissionReviewVersions": ["v1"], "sideEffects": "None", "failurePolicy": "Fail", "timeoutSeconds": 10,
        "matchPolicy": "Equivalent",
        "clientConfig": {"service": {"name": "oam-oam-operator-webhook", "namespace": "oam-system",
                                     "path": "/validate-applications", "port": 443}},
        "rules": [{"apiGroups": ["oam-operator.dev"], "apiVersions": ["*"], "operations": ["CREATE", "UPDATE"],
                   "resources": ["applications"], "scope": "Namespaced"}],
    }
    service = one(objects, "Service", "oam-oam-operator-webhook")
    assert service["spec"]["ports"] == [{"name": "webhook", "port": 443, "targetPort": "webhook", "protocol": "TCP"}]
    deployment = one(objects, "Deployment")
    assert service["spec"]["selector"].items() <= deployment["spec"]["template"]["metadata"]["labels"].items()
    assert {"name": "webhook", "containerPort": 9443, "protocol": "TCP"} in container(objects)["ports"]
    settings = settings_of(args(objects))
    assert settings.admission and settings.admission_port == 9443 and settings.admission_cert_dir == ""
    assert settings.admission_secret == "oam-system/oam-oam-operator-webhook-tls"
    assert settings.admission_hosts == SERVICE_HOSTS
    assert settings.admission_webhook_configuration == NAME
    assert settings.combination_error() is None


def test_rbac_for_the_secret_and_the_configuration_only(render: Render) -> None:
    objects = render({"admission": {"enabled": True}, "rbac": {"mode": "leastPrivilege"}})
    role = one(objects, "Role", NAME, "oam-system")
    assert rule_set(role["rules"]) == {
        ("", "secrets", "", "create"),
        ("", "secrets", "oam-oam-operator-webhook-tls", "get"),
        ("", "secrets", "oam-oam-operator-webhook-tls", "update"),
    }
    assert rule_set(one(objects, "ClusterRole", NAME)["rules"]) == {
        ("admissionregistration.k8s.io", "validatingwebhookconfigurations", NAME, "get"),
        ("admissionregistration.k8s.io", "validatingwebhookconfigurations", NAME, "patch"),
    }
    for kind, role_kind in (("RoleBinding", "Role"), ("ClusterRoleBinding", "ClusterRole")):
        binding = one(objects, kind, NAME)
        assert binding["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": role_kind, "name": NAME}
        assert binding["subjects"] == [{"kind": "ServiceAccount", "name": "oam-oam-operator",
                                        "namespace": "oam-system"}]


def test_url_mode_issues_the_certificate_for_the_urls_host(render: Render) -> None:
    objects = render({"admission": {"enabled": True, "url": "https://127.0.0.1:9443/", "failurePolicy": "Ignore",
                                    "timeoutSeconds": 5}})
    webhook, notifications = one(objects, "ValidatingWebhookConfiguration", NAME)["webhooks"]
    assert webhook["clientConfig"] == {"url": "https://127.0.0.1:9443/validate-applications"}
    assert notifications["clientConfig"] == {"url": "https://127.0.0.1:9443/validate-notifications"}
    assert (webhook["failurePolicy"], webhook["timeoutSeconds"]) == ("Ignore", 5)
    assert [s["metadata"]["name"] for s in of_kind(objects, "Service")] == ["oam-oam-operator-metrics"]
    assert settings_of(args(objects)).admission_hosts == ("127.0.0.1",)


def test_cert_manager_issues_and_injects(render: Render) -> None:
    objects = render({"admission": {"enabled": True, "certManager": {"enabled": True}}})
    configuration = one(objects, "ValidatingWebhookConfiguration", NAME)
    assert configuration["metadata"]["annotations"] == {
        "cert-manager.io/inject-ca-from": "oam-system/oam-oam-operator-webhook-tls"}
    assert one(objects, "Issuer", NAME)["spec"] == {"selfSigned": {}}
    certificate = one(objects, "Certificate", "oam-oam-operator-webhook-tls")
    assert certificate["spec"] == {"secretName": "oam-oam-operator-webhook-tls", "dnsNames": list(SERVICE_HOSTS),
                                   "issuerRef": {"kind": "Issuer", "name": NAME}}
    settings = settings_of(args(objects))
    assert settings.admission_cert_dir == "/etc/oam-operator/webhook" and settings.admission_secret == ""
    assert {"name": "webhook-tls", "mountPath": "/etc/oam-operator/webhook", "readOnly": True} in (
        container(objects)["volumeMounts"])
    pod = one(objects, "Deployment")["spec"]["template"]["spec"]
    assert {"name": "webhook-tls", "secret": {"secretName": "oam-oam-operator-webhook-tls"}} in pod["volumes"]
    # cert-manager owns the Secret and the CA bundle: no Role but leader election's
    assert [r["metadata"]["name"] for r in of_kind(objects, "Role")] == ["oam-oam-operator-leader-election"]


def test_watched_namespaces_limit_what_is_validated(render: Render) -> None:
    objects = render({"admission": {"enabled": True}, "operator": {"watchNamespaces": ["a", "b"]}})
    for webhook in one(objects, "ValidatingWebhookConfiguration", NAME)["webhooks"]:
        assert webhook["namespaceSelector"] == {"matchExpressions": [
            {"key": "kubernetes.io/metadata.name", "operator": "In", "values": ["a", "b"]}]}


def test_every_shard_serves_the_one_webhook(render: Render) -> None:
    objects = render({"admission": {"enabled": True}, "sharding": {"shards": ["eu"]}})
    assert len(of_kind(objects, "ValidatingWebhookConfiguration")) == 1
    for deployment in of_kind(objects, "Deployment"):
        assert "--admission" in deployment["spec"]["template"]["spec"]["containers"][0]["args"]
    selector = one(objects, "Service", "oam-oam-operator-webhook")["spec"]["selector"]
    for deployment in of_kind(objects, "Deployment"):
        assert selector.items() <= deployment["spec"]["template"]["metadata"]["labels"].items()


@pytest.mark.parametrize(("values", "message"), [
    ({"admission": {"failurePolicy": "Sometimes"}}, "failurePolicy"),
    ({"admission": {"timeoutSeconds": 31}}, "timeoutSeconds"),
    ({"admission": {"url": "http://127.0.0.1:9443"}}, "url"),
    ({"admission": {"enabled": True, "url": "https://127.0.0.1:9443",
                    "certManager": {"enabled": True}}}, "admission.url and admission.certManager.enabled"),
])
def test_bad_values_are_refused(render: Render, values: dict[str, Any], message: str) -> None:
    with pytest.raises(Exception, match=message):
        render(values)
