"""The kinds whose read the chart grants for the watch of owned objects under
``rbac.mode=leastPrivilege`` (``oam-operator.ownedKinds`` in templates/_common.tpl) are exactly the
kinds the built-in catalog writes, plus the Jobs the operator watches from the start, and never
Secrets (docs/chart.md#watches-of-owned-objects).

The kinds are not read off the catalog's source: one Application uses every built-in component
and trait type that writes kinds of its own, and the transform says what it writes. A new type,
or a type writing a new kind, fails here until the chart's list (and this test's table of the
kinds' resources) says how the operator may read it. No helm needed: the list is read from the
template.
"""

from __future__ import annotations

import copy
import re
from typing import Any

import yaml

from oam_operator.controller.reconcile.readiness import WATCHED
from oam_operator.controller.service.ownedwatch import EXCLUDED
from oam_operator.oam import (
    CapabilityBinding,
    ClusterProfile,
    TransformContext,
    new_builtin_transformer,
    parse_application,
)
from oam_operator.reconciler.identity import split_api_version
from tools.devcluster.helm import CHART

#: (group, kind) → (resource, namespaced): the API's names of the kinds the catalog writes.
RESOURCES = {
    ("", "ConfigMap"): ("configmaps", True),
    ("", "PersistentVolumeClaim"): ("persistentvolumeclaims", True),
    ("", "Service"): ("services", True),
    ("", "ServiceAccount"): ("serviceaccounts", True),
    ("apps", "DaemonSet"): ("daemonsets", True),
    ("apps", "Deployment"): ("deployments", True),
    ("apps", "StatefulSet"): ("statefulsets", True),
    ("autoscaling", "HorizontalPodAutoscaler"): ("horizontalpodautoscalers", True),
    ("barmancloud.cnpg.io", "ObjectStore"): ("objectstores", True),
    ("batch", "CronJob"): ("cronjobs", True),
    ("cert-manager.io", "Certificate"): ("certificates", True),
    ("cilium.io", "CiliumNetworkPolicy"): ("ciliumnetworkpolicies", True),
    ("external-secrets.io", "ExternalSecret"): ("externalsecrets", True),
    ("gateway.networking.k8s.io", "HTTPRoute"): ("httproutes", True),
    ("helm.toolkit.fluxcd.io", "HelmRelease"): ("helmreleases", True),
    ("kustomize.toolkit.fluxcd.io", "Kustomization"): ("kustomizations", True),
    ("networking.k8s.io", "Ingress"): ("ingresses", True),
    ("networking.k8s.io", "NetworkPolicy"): ("networkpolicies", True),
    ("policy", "PodDisruptionBudget"): ("poddisruptionbudgets", True),
    ("postgresql.cnpg.io", "Cluster"): ("clusters", True),
    ("postgresql.cnpg.io", "Database"): ("databases", True),
    ("postgresql.cnpg.io", "Pooler"): ("poolers", True),
    ("rbac.authorization.k8s.io", "Role"): ("roles", True),
    ("rbac.authorization.k8s.io", "RoleBinding"): ("rolebindings", True),
    ("source.toolkit.fluxcd.io", "HelmRepository"): ("helmrepositories", True),
    ("source.toolkit.fluxcd.io", "OCIRepository"): ("ocirepositories", True),
    ("volsync.backube", "ReplicationSource"): ("replicationsources", True),
    ("apiextensions.k8s.io", "CustomResourceDefinition"): ("customresourcedefinitions", False),
    ("rbac.authorization.k8s.io", "ClusterRole"): ("clusterroles", False),
    ("rbac.authorization.k8s.io", "ClusterRoleBinding"): ("clusterrolebindings", False),
}

#: Types that write whatever their author gives them: no kind of their own.
AS_WRITTEN = {"manifests", "passthrough"}

IMAGE = "ghcr.io/example/app:v1"
CRD = """apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  names: {kind: Widget, plural: widgets, singular: widget, listKind: WidgetList}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
"""
CAPABILITIES: dict[str, dict[str, Any]] = {
    "certificate": {"issuerRef": {"name": "letsencrypt", "kind": "ClusterIssuer"}},
    "external-secret": {"secretStoreRef": {"name": "vault", "kind": "ClusterSecretStore"}},
    "expose": {"controllerType": "ingress", "ingressClassName": "nginx"},
}


def component(name: str, type_name: str, *traits: dict[str, Any], **properties: Any) -> dict[str, Any]:
    return {"name": name, "type": type_name, "properties": properties, "traits": list(traits)}


def trait(type_name: str, **properties: Any) -> dict[str, Any]:
    return {"type": type_name, "properties": properties}


COMPONENTS = [
    component(
        "web", "webservice",
        trait("ingress", rules=[{"host": "web.example.com", "paths": [{"path": "/"}]}]),
        trait("httproute", parentRefs=[{"name": "gateway"}],
              rules=[{"matches": [{"path": {"type": "PathPrefix", "value": "/"}}]}]),
        trait("scaler", minReplicas=2, maxReplicas=3, enablePDB=True),
        trait("configmap", name="web-config", data={"a": "b"}),
        trait("networkpolicy", ingress=[{"from": [{"podSelector": {}}]}]),
        trait("cilium-networkpolicy", name="web-cnp", endpointSelector={"matchLabels": {"app": "web"}},
              ingress=[{"fromEndpoints": [{"matchLabels": {"app": "client"}}]}]),
        trait("rbac", rules=[{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}], clusterWide=True),
        trait("certificate", secretName="web-tls", dnsNames=["web.example.com"]),
        trait("external-secret", secretName="web-credentials", data=[{"secretKey": "KEY", "remoteRef": {"key": "k"}}]),
        trait("pvc", name="web-data", size="1Gi"),
        trait("security-context", psaLevel="restricted"),
        trait("prune-protection"),
        image=IMAGE, port=8080,
    ),
    component("site", "webservice", trait("expose", rules=[{"host": "site.example.com", "paths": [{"path": "/"}]}]),
              image=IMAGE, port=8080),
    component("work", "worker", image=IMAGE),
    component("db", "statefulset", trait("volsync", sourcePVC="data", schedule="@daily"), image=IMAGE, port=5432,
              volumeClaimTemplates=[{"name": "data", "size": "1Gi", "mountPath": "/data"}]),
    component("agent", "daemonset", image=IMAGE, port=9100),
    component("nightly", "cronjob", image=IMAGE, schedule="0 0 * * *"),
    component("chart", "helm", source={"url": "https://charts.example.com"}, chart="app", version="1.0.0"),
    component("ocichart", "helmchart", source={"url": "oci://ghcr.io/example/charts/app"}, version="1.0.0"),
    component("bundle", "oci", source={"url": "oci://ghcr.io/example/bundle"}, version="1.0.0"),
    component("pg", "postgresql", pooler={"enabled": True}, databases=[{"name": "app", "owner": "app"}],
              objectStore={"destinationPath": "s3://backups/pg", "s3Credentials": {}}),
    component("widgets", "crd", inline=CRD),
]


def catalog_kinds() -> set[tuple[str, str]]:
    """(group, kind) of every object the transform writes for COMPONENTS."""
    transformer = new_builtin_transformer()
    raw = {key: CapabilityBinding(copy.deepcopy(rendering)) for key, rendering in CAPABILITIES.items()}
    profile = ClusterProfile("oam-operator.dev/v1alpha1", "ClusterProfile", "test", capabilities=raw)
    capabilities = transformer.evaluate_profile(profile).capabilities
    document = {"apiVersion": "oam-operator.dev/v1alpha1", "kind": "Application",
                "metadata": {"name": "everything", "namespace": "shop"}, "spec": {"components": COMPONENTS}}
    app = parse_application(yaml.safe_dump(document), component_types=transformer.component_types(),
                            trait_types=transformer.trait_types())
    transformer.validate_authored_properties(app)
    objects = transformer.transform(app, TransformContext(capabilities=capabilities)).objects()
    return {(split_api_version(obj["apiVersion"])[0], obj["kind"]) for obj in objects}


def chart_owned_kinds() -> dict[str, dict[str, list[str]]]:
    """The ``oam-operator.ownedKinds`` define of templates/_common.tpl, as YAML."""
    text = (CHART / "templates" / "_common.tpl").read_text()
    match = re.search(r'{{- define "oam-operator\.ownedKinds" -}}\n(.*?)\n{{- end }}', text, re.S)
    assert match, "no oam-operator.ownedKinds define in _common.tpl"
    loaded: dict[str, dict[str, list[str]]] = yaml.safe_load(match.group(1))
    return loaded


def granted(scope: str) -> set[tuple[str, str]]:
    return {(group, resource) for group, resources in chart_owned_kinds()[scope].items() for resource in resources}


def test_every_type_that_writes_kinds_of_its_own_is_used() -> None:
    transformer = new_builtin_transformer()
    used = {c["type"] for c in COMPONENTS} | {t["type"] for c in COMPONENTS for t in c["traits"]}
    assert used == (set(transformer.component_types()) | set(transformer.trait_types())) - AS_WRITTEN


def test_the_catalog_writes_exactly_the_kinds_of_the_table() -> None:
    assert catalog_kinds() == set(RESOURCES)


def test_the_chart_grants_the_catalog_kinds_and_the_watched_workloads() -> None:
    namespaced = {(group, resource) for (group, _), (resource, is_namespaced) in RESOURCES.items() if is_namespaced}
    cluster = {(group, resource) for (group, _), (resource, is_namespaced) in RESOURCES.items() if not is_namespaced}
    watched_from_the_start = {(kind.group, kind.plural) for kind in WATCHED}
    assert watched_from_the_start - namespaced == {("batch", "jobs")}  # no catalog type writes a plain Job
    assert granted("namespaced") == namespaced | watched_from_the_start
    assert granted("cluster") == cluster
    assert set(chart_owned_kinds()) == {"namespaced", "cluster"}


def test_what_the_operator_never_watches_is_never_granted() -> None:
    assert ("", "Secret") in EXCLUDED
    for scope in ("namespaced", "cluster"):
        assert not {(group, kind.lower() + "s") for group, kind in EXCLUDED} & granted(scope)  # Secret: secrets
        assert "secrets" not in {resource for _, resource in granted(scope)}
