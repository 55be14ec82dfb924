"""The operator's Deployment (docs/chart.md#the-helm-chart): one Recreate replica, restricted pod security,
liveness on the health port, a writable /tmp only, and arguments `oam-operator run` accepts."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from oam_operator.cli import main
from oam_operator.controller.reconcile.settings import Settings
from tests.unit.unitkit import args, container, of_kind, one

Render = Callable[..., list[dict[str, Any]]]


def settings_of(argv: list[str]) -> Settings:
    """Parse the container's arguments with the real CLI, as the container would."""
    assert argv[0] == "run"
    command = main.commands["run"]
    context = command.make_context("run", list(argv[1:]))
    flags = {key: value for key, value in context.params.items() if key != "kubeconfig"}
    return Settings.from_sources(flags, {})


def test_deployment_shape(render: Render) -> None:
    objects = render()
    deployment = one(objects, "Deployment")
    spec = deployment["spec"]
    # Two instances, one leading (test_chart_leader_election.py); rolled with one always running.
    assert spec["replicas"] == 2
    assert spec["strategy"] == {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 0, "maxSurge": 1}}
    pod = spec["template"]["spec"]
    assert pod["terminationGracePeriodSeconds"] == 60
    assert pod["serviceAccountName"] == "oam-oam-operator"
    assert spec["selector"]["matchLabels"].items() <= spec["template"]["metadata"]["labels"].items()
    main_container = container(objects)
    assert main_container["image"] == "ghcr.io/oam-operator/oam-operator:0.1.0"
    assert main_container["livenessProbe"] == {
        "httpGet": {"path": "/healthz", "port": "health"}, "initialDelaySeconds": 10, "periodSeconds": 20,
        "timeoutSeconds": 5, "failureThreshold": 3}
    assert main_container["readinessProbe"] == {
        "httpGet": {"path": "/healthz", "port": "health"}, "periodSeconds": 5, "timeoutSeconds": 5, "failureThreshold": 3}
    assert {p["name"]: p["containerPort"] for p in main_container["ports"]} == {"metrics": 8080, "health": 8081}
    assert {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}} in main_container["env"]
    assert {"name": "POD_UID", "valueFrom": {"fieldRef": {"fieldPath": "metadata.uid"}}} in main_container["env"]
    assert {"name": "POD_NAMESPACE", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}} in (
        main_container["env"])
    assert main_container["resources"] == {"requests": {"cpu": "100m", "memory": "256Mi"},
                                           "limits": {"memory": "1Gi"}}
    assert main_container["volumeMounts"] == [{"name": "tmp", "mountPath": "/tmp"}]
    assert pod["volumes"] == [{"name": "tmp", "emptyDir": {}}]


def test_restricted_pod_security(render: Render) -> None:
    objects = render()
    pod = one(objects, "Deployment")["spec"]["template"]["spec"]
    assert pod["securityContext"] == {"runAsNonRoot": True, "runAsUser": 65532, "runAsGroup": 65532,
                                      "fsGroup": 65532, "seccompProfile": {"type": "RuntimeDefault"}}
    security = container(objects)["securityContext"]
    assert security["allowPrivilegeEscalation"] is False
    assert security["readOnlyRootFilesystem"] is True
    assert security["capabilities"] == {"drop": ["ALL"]}
    assert security["seccompProfile"] == {"type": "RuntimeDefault"}


def test_default_arguments_are_the_documented_defaults(render: Render) -> None:
    argv = args(render())
    # the one difference: the Lease is named after the release (two releases in one namespace)
    assert settings_of(argv) == Settings.from_sources({"leader_election_id": "oam-oam-operator"}, {})
    # --kube-api-qps is not passed: the bucket lasts only until the server shows APF.
    assert not any(arg.startswith("--kube-api-qps") for arg in argv)
    assert not settings_of(argv).kube_api_qps_explicit
    assert "--no-dependent-events" in argv


def test_every_operator_value_reaches_its_flag(render: Render) -> None:
    values = {
        "operator": {
            "domain": "ops.example.com", "watchNamespaces": ["a", "b"], "maxConcurrentReconciles": 3,
            "adaptiveConcurrency": False, "applyConcurrency": 2, "kubeApiQps": 12.5, "kubeApiBurst": 30, "defaultInterval": "5m",
            "defaultTimeout": "20m", "reapplyInterval": "0", "defaultUpdatePolicy": "Replace",
            "defaultAdoptionPolicy": "Never", "defaultProfile": "", "clusterId": "prod-1",
            "requireServiceAccount": True, "defaultServiceAccount": "deployer", "useOperatorIdentity": True,
            "allowClusterScopedObjects": True, "clusterScopedAdoptionPolicy": "IfUnowned",
            "allowCrossNamespaceObjects": True, "allowCrossNamespaceDependencies": True, "dependentEvents": True,
            "readinessWatch": False,
            "logFormat": "text", "logLevel": "debug",
            "urlSources": {"enabled": False, "allowedNetworks": ["10.0.0.0/8", "127.0.0.1"]},
            "notifications": {"allowedNetworks": ["10.1.0.0/16"]},
            "extraArgs": ["--no-url-sources"],
            "extraEnv": [{"name": "EXTRA", "value": "1"}],
        },
        "metrics": {"port": 9090}, "health": {"port": 9091}, "peering": {"enabled": True, "name": "ops",
                                                                        "priority": 7},
        "replicas": 1,  # kopf peering pauses instances of equal priority: one instance
        "leaderElection": {"enabled": False},
        "clusterProfiles": {"secretNamespaces": ["team-x", "team-y"],
                            "inventory": {"namespaces": ["fleet"], "accessProvider": "token-reader"}},
    }
    objects = render(values)
    settings = settings_of(args(objects))
    assert settings.model_dump(mode="json") == {
        "domain": "ops.example.com", "namespaces": ["a", "b"], "max_concurrent_reconciles": 3, "adaptive_concurrency": False,
        "apply_concurrency": 2,
        "kube_api_qps": 12.5, "kube_api_burst": 30, "default_interval": "5m", "default_timeout": "20m",
        "reapply_interval": "0", "default_adoption_policy": "Never", "default_update_policy": "Replace",
        "default_profile": "", "cluster_id": "prod-1", "require_service_account": True,
        "default_service_account": "deployer", "use_operator_identity": True, "allow_cluster_scoped_objects": True,
        "cluster_scoped_adoption_policy": "IfUnowned",
        "allow_cross_namespace_objects": True, "allow_cross_namespace_dependencies": True,
        "missing_dependency_grace": "1m",  # no chart value: the operator's default (extraArgs sets it)
        "dependent_events": True, "readiness_watch": False, "url_sources": False,
        "url_source_allowed_networks": ["10.0.0.0/8", "127.0.0.1/32"],
        "notification_allowed_networks": ["10.1.0.0/16"], "helm_binary": "helm", "metrics_port": 9090, "health_port": 9091,
        "log_format": "text", "log_level": "debug", "shard": "", "peering": "ops", "priority": 7, "dev": False,
        # admission is off by default (tests/unit/helm/test_chart_admission.py covers its values)
        "admission": False, "admission_address": "0.0.0.0", "admission_port": 9443, "admission_cert_dir": "",
        "admission_secret": "", "admission_hosts": [], "admission_webhook_configuration": "",
        "leader_election": False, "leader_election_id": "oam-operator", "leader_election_lease_duration": "15s",
        "leader_election_renew_deadline": "10s", "leader_election_retry_period": "2s", "operator_namespace": "",
        "profile_secret_namespaces": ["team-x", "team-y"],
        "inventory_namespaces": ["fleet"], "inventory_access_provider": "token-reader",
    }
    assert settings_of(args(objects)).kube_api_qps_explicit
    env = container(objects)["env"]
    assert {"name": "EXTRA", "value": "1"} in env
    ports = {p["name"]: p["containerPort"] for p in container(objects)["ports"]}
    assert ports == {"metrics": 9090, "health": 9091}
    assert one(objects, "Service")["spec"]["ports"][0]["port"] == 9090


def test_metrics_disabled(render: Render) -> None:
    objects = render({"metrics": {"enabled": False}})
    assert "--metrics-port=0" in args(objects)
    assert not of_kind(objects, "Service")
    assert [p["name"] for p in container(objects)["ports"]] == ["health"]


def test_image_and_scheduling_values(render: Render) -> None:
    objects = render({
        "image": {"repository": "registry.example.com/oam", "tag": "1.2.3", "pullPolicy": "Always"},
        "imagePullSecrets": [{"name": "pull"}], "nodeSelector": {"pool": "ops"},
        "tolerations": [{"key": "ops", "operator": "Exists"}], "priorityClassName": "system-cluster-critical",
        "podAnnotations": {"a": "1"}, "podLabels": {"team": "ops"},
        "serviceAccount": {"annotations": {"iam": "role"}},
    })
    template = one(objects, "Deployment")["spec"]["template"]
    assert container(objects)["image"] == "registry.example.com/oam:1.2.3"
    assert container(objects)["imagePullPolicy"] == "Always"
    assert template["spec"]["imagePullSecrets"] == [{"name": "pull"}]
    assert template["spec"]["nodeSelector"] == {"pool": "ops"}
    assert template["spec"]["tolerations"] == [{"key": "ops", "operator": "Exists"}]
    assert template["spec"]["priorityClassName"] == "system-cluster-critical"
    assert template["metadata"]["annotations"] == {"a": "1"}
    assert template["metadata"]["labels"]["team"] == "ops"
    assert one(objects, "ServiceAccount")["metadata"]["annotations"] == {"iam": "role"}


def test_cli_rejects_a_bad_flag_so_the_parser_is_real() -> None:
    try:
        settings_of(["run", "--no-such-flag"])
    except click.UsageError:
        return
    raise AssertionError("an unknown flag was accepted")
