"""`helm template` in each RBAC mode (docs/chart.md#the-helm-chart) renders the documented objects."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.unit.unitkit import args, has_wildcard, of_kind, one, rule_set, rules

Render = Callable[..., list[dict[str, Any]]]

FULL = {("*", "*", "", "*")}
LEAST = {
    ("oam-operator.dev", "applications", "", verb)
    for verb in ("get", "list", "watch", "create", "patch", "update", "delete")  # delete, create: a topology's
} | {
    ("oam-operator.dev", "applications/status", "", verb) for verb in ("get", "patch", "update")
} | {
    ("oam-operator.dev", "applications/finalizers", "", "update"),
    ("", "serviceaccounts", "", "impersonate"),
} | {("apps", "controllerrevisions", "", verb) for verb in ("get", "list", "create", "patch", "delete")
} | {(group, "events", "", verb) for group in ("", "events.k8s.io") for verb in ("create", "patch")} | {
    # the watch of grants (controller/service/grantwatch.py): a granted Role wakes the namespace's Applications
    ("rbac.authorization.k8s.io", resource, "", verb) for resource in ("rolebindings", "roles")
    for verb in ("list", "watch")} | {
    # Notifications (docs/notifications.md#rbac): read, their status, get (only) of the Secrets they name
    ("oam-operator.dev", "notifications", "", verb) for verb in ("get", "list", "watch")} | {
    ("oam-operator.dev", "notifications/status", "", verb) for verb in ("get", "patch")} | {
    ("", "secrets", "", "get")}
CLUSTER_WIDE = {("oam-operator.dev", "clusterprofiles", "", verb) for verb in ("get", "list", "watch")} | {
    ("oam-operator.dev", "clusterprofiles/status", "", "patch")} | {
    ("apiextensions.k8s.io", "customresourcedefinitions", "", verb) for verb in ("list", "watch")}
# kopf lists and watches the Namespaces when it watches given namespaces.
NAMESPACE_OBSERVATION = {("", "namespaces", "", verb) for verb in ("list", "watch")}
KUBE_SYSTEM = {("", "namespaces", "kube-system", "get")}
# leastPrivilege's read of the kinds the catalog writes, for the watch of owned objects
# (docs/chart.md#watches-of-owned-objects): one rule per API group, get/list/watch only, no Secrets.
READ = ["get", "list", "watch"]
OWNED_RULES = [
    {"apiGroups": [""], "resources": ["configmaps", "persistentvolumeclaims", "serviceaccounts", "services"],
     "verbs": READ},
    {"apiGroups": ["apps"], "resources": ["daemonsets", "deployments", "statefulsets"], "verbs": READ},
    {"apiGroups": ["autoscaling"], "resources": ["horizontalpodautoscalers"], "verbs": READ},
    {"apiGroups": ["barmancloud.cnpg.io"], "resources": ["objectstores"], "verbs": READ},
    {"apiGroups": ["batch"], "resources": ["cronjobs", "jobs"], "verbs": READ},
    {"apiGroups": ["cert-manager.io"], "resources": ["certificates"], "verbs": READ},
    {"apiGroups": ["cilium.io"], "resources": ["ciliumnetworkpolicies"], "verbs": READ},
    {"apiGroups": ["external-secrets.io"], "resources": ["externalsecrets"], "verbs": READ},
    {"apiGroups": ["gateway.networking.k8s.io"], "resources": ["httproutes"], "verbs": READ},
    {"apiGroups": ["helm.toolkit.fluxcd.io"], "resources": ["helmreleases"], "verbs": READ},
    {"apiGroups": ["kustomize.toolkit.fluxcd.io"], "resources": ["kustomizations"], "verbs": READ},
    {"apiGroups": ["networking.k8s.io"], "resources": ["ingresses", "networkpolicies"], "verbs": READ},
    {"apiGroups": ["policy"], "resources": ["poddisruptionbudgets"], "verbs": READ},
    {"apiGroups": ["postgresql.cnpg.io"], "resources": ["clusters", "databases", "poolers"], "verbs": READ},
    {"apiGroups": ["rbac.authorization.k8s.io"], "resources": ["rolebindings", "roles"], "verbs": READ},
    {"apiGroups": ["source.toolkit.fluxcd.io"], "resources": ["helmrepositories", "ocirepositories"], "verbs": READ},
    {"apiGroups": ["volsync.backube"], "resources": ["replicationsources"], "verbs": READ},
]
# ... and, with operator.allowClusterScopedObjects, of the cluster-scoped ones.
OWNED_CLUSTER_RULES = [
    {"apiGroups": ["apiextensions.k8s.io"], "resources": ["customresourcedefinitions"], "verbs": READ},
    {"apiGroups": ["rbac.authorization.k8s.io"], "resources": ["clusterrolebindings", "clusterroles"], "verbs": READ},
]
OWNED = rule_set(OWNED_RULES)
OWNED_CLUSTER = rule_set(OWNED_CLUSTER_RULES)


def owned_rules_of(rule_list: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rules granting exactly get/list/watch, in order, but the ClusterProfiles' (the only other one)."""
    return [rule for rule in rule_list if rule["verbs"] == READ and rule["apiGroups"] != ["oam-operator.dev"]]


def test_full_mode_is_the_default(render: Render) -> None:
    objects = render()
    assert rule_set(rules(objects, "ClusterRole")) == FULL
    binding = one(objects, "ClusterRoleBinding")
    assert binding["roleRef"]["name"] == one(objects, "ClusterRole")["metadata"]["name"]
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": "oam-oam-operator", "namespace": "oam-system"}]
    assert one(objects, "ServiceAccount")["metadata"]["name"] == "oam-oam-operator"
    assert [o["metadata"]["name"] for o in of_kind(objects, "Role") + of_kind(objects, "RoleBinding")] == [
        "oam-oam-operator-leader-election"] * 2  # only leader election's (test_chart_leader_election.py)
    assert "--no-require-service-account" in args(objects)
    assert "--readiness-watch" in args(objects)
    assert not [a for a in args(objects) if a.startswith("--namespace")]


def test_least_privilege_mode_has_no_wildcard_and_forces_service_accounts(render: Render) -> None:
    objects = render({"rbac": {"mode": "leastPrivilege"}})
    granted = rules(objects, "ClusterRole")
    assert not has_wildcard(granted)
    assert rule_set(granted) == LEAST | CLUSTER_WIDE | KUBE_SYSTEM | OWNED
    assert "--require-service-account" in args(objects)
    assert "--no-require-service-account" not in args(objects)


def test_least_privilege_reads_the_owned_kinds_and_watches_them(render: Render) -> None:
    objects = render({"rbac": {"mode": "leastPrivilege"}})
    granted = rules(objects, "ClusterRole")
    # cache.enabled (default): read-only rules, cluster-wide, on the catalog's kinds; no Secrets
    # beyond get of the ones Notifications name (never listed nor watched).
    assert owned_rules_of(granted) == OWNED_RULES
    assert [r for r in rule_set(granted) if r[1] == "secrets"] == [("", "secrets", "", "get")]
    assert "--readiness-watch" in args(objects)
    assert "--no-readiness-watch" not in args(objects)


def test_least_privilege_without_the_cache_reads_nothing_and_does_not_watch(render: Render) -> None:
    objects = render({"rbac": {"mode": "leastPrivilege"}, "cache": {"enabled": False}})
    granted = rules(objects, "ClusterRole")
    assert rule_set(granted) == LEAST | CLUSTER_WIDE | KUBE_SYSTEM
    assert owned_rules_of(granted) == []
    assert "--no-readiness-watch" in args(objects)
    assert "--readiness-watch" not in args(objects)


def test_least_privilege_with_the_readiness_watch_off_grants_no_read(render: Render) -> None:
    objects = render({"rbac": {"mode": "leastPrivilege"}, "operator": {"readinessWatch": False}})
    assert rule_set(rules(objects, "ClusterRole")) == LEAST | CLUSTER_WIDE | KUBE_SYSTEM
    assert "--no-readiness-watch" in args(objects)
    assert "--readiness-watch" not in args(objects)


def test_least_privilege_reads_cluster_scoped_owned_kinds_only_when_they_may_be_owned(render: Render) -> None:
    objects = render({"rbac": {"mode": "leastPrivilege"}, "operator": {"allowClusterScopedObjects": True}})
    granted = rules(objects, "ClusterRole")
    assert rule_set(granted) == LEAST | CLUSTER_WIDE | KUBE_SYSTEM | OWNED | OWNED_CLUSTER
    assert owned_rules_of(granted) == OWNED_RULES + OWNED_CLUSTER_RULES
    assert "--allow-cluster-scoped-objects" in args(objects)
    assert "--readiness-watch" in args(objects)


def test_full_mode_without_the_cache_keeps_its_rules_and_does_not_watch(render: Render) -> None:
    objects = render({"cache": {"enabled": False}})
    assert rules(objects, "ClusterRole") == [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}]
    assert "--no-readiness-watch" in args(objects)
    assert "--readiness-watch" not in args(objects)
    # the cache does not outrank the user's own choice either way
    assert "--no-readiness-watch" in args(render({"operator": {"readinessWatch": False}}))
    assert "--readiness-watch" in args(render({"cache": {"enabled": True}}))


def test_least_privilege_with_a_cluster_id_and_peering_and_extra_rules(render: Render) -> None:
    extra = {"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"]}
    objects = render({"rbac": {"mode": "leastPrivilege", "extraRules": [extra]}, "operator": {"clusterId": "c1"},
                      "peering": {"enabled": True}, "replicas": 1})
    granted = rules(objects, "ClusterRole")
    assert not has_wildcard(granted)
    peering = {("kopf.dev", "clusterkopfpeerings", "", verb) for verb in ("get", "list", "watch", "patch")}
    assert rule_set(granted) == LEAST | CLUSTER_WIDE | peering | OWNED | {("", "secrets", "", "get")}
    assert "--cluster-id=c1" in args(objects)


def test_namespace_scoped_mode_renders_a_role_per_namespace(render: Render) -> None:
    objects = render({"rbac": {"namespaced": True}, "operator": {"watchNamespaces": ["team-a", "team-b"]}})
    assert rule_set(rules(objects, "ClusterRole")) == CLUSTER_WIDE | KUBE_SYSTEM | NAMESPACE_OBSERVATION
    for namespace in ("team-a", "team-b"):
        assert rule_set(rules(objects, "Role", namespace)) == FULL
        binding = one(objects, "RoleBinding", namespace=namespace)
        assert binding["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role",
                                      "name": "oam-oam-operator"}
        assert binding["subjects"][0]["namespace"] == "oam-system"
    assert len(of_kind(objects, "Role")) == 3 and len(of_kind(objects, "RoleBinding")) == 3  # + leader election
    assert [a for a in args(objects) if a.startswith("--namespace")] == ["--namespace=team-a", "--namespace=team-b"]


def test_namespace_scoped_least_privilege(render: Render) -> None:
    objects = render({"rbac": {"namespaced": True, "mode": "leastPrivilege"},
                      "operator": {"watchNamespaces": ["team-a"], "clusterId": "c1"}, "peering": {"enabled": True},
                      "replicas": 1})
    assert rule_set(rules(objects, "ClusterRole")) == CLUSTER_WIDE | NAMESPACE_OBSERVATION
    peering = {("kopf.dev", "kopfpeerings", "", verb) for verb in ("get", "list", "watch", "patch")}
    # the owned kinds are read in the watched namespace only, where the operator watches them
    assert rule_set(rules(objects, "Role", "team-a")) == LEAST | peering | OWNED
    assert owned_rules_of(rules(objects, "Role", "team-a")) == OWNED_RULES
    assert "--readiness-watch" in args(objects)
    assert not any(has_wildcard(o["rules"]) for o in of_kind(objects, "Role") + of_kind(objects, "ClusterRole"))
    peering_object = one(objects, "KopfPeering", namespace="team-a")
    assert peering_object["metadata"]["annotations"]["helm.sh/hook"] == "post-install,post-upgrade"


def test_namespace_scoped_least_privilege_splits_the_owned_kinds_by_scope(render: Render) -> None:
    values = {"rbac": {"namespaced": True, "mode": "leastPrivilege"},
              "operator": {"watchNamespaces": ["team-a", "team-b"], "allowClusterScopedObjects": True}}
    objects = render(values)
    cluster_role = rules(objects, "ClusterRole")
    assert rule_set(cluster_role) == CLUSTER_WIDE | KUBE_SYSTEM | NAMESPACE_OBSERVATION | OWNED_CLUSTER
    assert owned_rules_of(cluster_role) == OWNED_CLUSTER_RULES
    for namespace in ("team-a", "team-b"):
        assert rule_set(rules(objects, "Role", namespace)) == LEAST | OWNED
    assert "--readiness-watch" in args(objects)

    values["cache"] = {"enabled": False}
    objects = render(values)
    assert rule_set(rules(objects, "ClusterRole")) == CLUSTER_WIDE | KUBE_SYSTEM | NAMESPACE_OBSERVATION
    for namespace in ("team-a", "team-b"):
        assert rule_set(rules(objects, "Role", namespace)) == LEAST
    assert "--no-readiness-watch" in args(objects)
    assert "--readiness-watch" not in args(objects)


def test_watching_namespaces_without_namespaced_rbac_keeps_the_cluster_role(render: Render) -> None:
    objects = render({"operator": {"watchNamespaces": ["team-a"]}})
    assert rule_set(rules(objects, "ClusterRole")) == FULL
    assert [role["metadata"]["namespace"] for role in of_kind(objects, "Role")] == ["oam-system"]  # the Lease's
    assert "--namespace=team-a" in args(objects)


def test_rbac_create_false_renders_no_rbac(render: Render) -> None:
    objects = render({"rbac": {"create": False}, "serviceAccount": {"create": False, "name": "ops"}})
    assert not [o for o in objects if o["kind"] in ("ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding")]
    assert not of_kind(objects, "ServiceAccount")
    assert one(objects, "Deployment")["spec"]["template"]["spec"]["serviceAccountName"] == "ops"


def test_service_monitor(render: Render) -> None:
    assert not of_kind(render(), "ServiceMonitor")
    objects = render({"metrics": {"serviceMonitor": {"enabled": True, "interval": "15s", "labels": {"team": "x"}}}})
    monitor = one(objects, "ServiceMonitor")
    assert monitor["apiVersion"] == "monitoring.coreos.com/v1"
    assert monitor["metadata"]["labels"]["team"] == "x"
    service = one(objects, "Service")
    assert monitor["spec"]["selector"]["matchLabels"].items() <= service["metadata"]["labels"].items()
    assert monitor["spec"]["namespaceSelector"] == {"matchNames": ["oam-system"]}
    assert monitor["spec"]["endpoints"] == [{"port": "metrics", "path": "/metrics", "interval": "15s",
                                             "scrapeTimeout": "10s"}]


def test_peering_objects(render: Render) -> None:
    assert not [o for o in render() if o["apiVersion"].startswith("kopf.dev")]
    objects = render({"peering": {"enabled": True, "priority": 50}, "replicas": 1})
    crds = {o["metadata"]["name"] for o in of_kind(objects, "CustomResourceDefinition")}
    assert {"clusterkopfpeerings.kopf.dev", "kopfpeerings.kopf.dev"} <= crds
    assert one(objects, "ClusterKopfPeering")["metadata"]["name"] == "oam-oam-operator"
    assert {"--peering=oam-oam-operator", "--priority=50"} <= set(args(objects))


def test_invalid_combinations_fail_with_a_message(helm_home: Path, helm: Path) -> None:
    from tools.devcluster.helm import HelmError, template

    cases: list[tuple[dict[str, Any], str]] = [
        ({"rbac": {"namespaced": True}}, "rbac.namespaced=true needs operator.watchNamespaces"),
        ({"metrics": {"enabled": False, "serviceMonitor": {"enabled": True}}},
         "metrics.serviceMonitor.enabled=true needs metrics.enabled=true"),
        ({"metrics": {"port": 9000}, "health": {"port": 9000}}, "metrics.port and health.port must differ"),
        ({"serviceAccount": {"create": False}}, "serviceAccount.name is required when serviceAccount.create is false"),
    ]
    for values, message in cases:
        try:
            template(helm, helm_home, values=values)
        except HelmError as error:
            assert message in str(error)
        else:
            raise AssertionError(f"{values} rendered")
