"""Revision history and rollback on the local control plane (issue 25; docs/operator.md#revision-history).

Three generations, the third failing at apply (a ConfigMap key the API server refuses): the
history lists them with their outcomes and change causes; ``diff --revision 1`` previews the
prunes; ``rollback --to-revision 1 --wait`` reaches Ready with revision 1's objects, prunes
what 2 added and is recorded as revision 4, restoring 1. Refusals write nothing; suspend then
resume counts no revision. A second test: the limit prunes the oldest ControllerRevisions, the
API server refuses a limit above 100, and deleting the Application deletes its revisions.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml
from e2ekit import DOMAIN, GROUP, VERSION, Kube, condition, configmap_component
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from tools.devcluster.pytest_plugin import default_wait, wait_until

CAUSE = "kubernetes.io/change-cause"


def cli(kube: Kube, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("NO_PROXY", "no_proxy")}
    env["NO_PROXY"] = "127.0.0.1,localhost"
    return subprocess.run([str(Path(sys.executable).parent / "oam-operator"), *args, "-n", kube.namespace,
                           "--kubeconfig", kube.cluster.kubeconfig],
                          capture_output=True, text=True, timeout=300, check=False, env=env)


def revisions(kube: Kube, app: dict[str, Any]) -> dict[int, dict[str, Any]]:
    """The Application's ControllerRevisions by number, as the API returns them."""
    found = kube.apps.list_namespaced_controller_revision(
        kube.namespace, label_selector=f"{DOMAIN}/application-uid={app['metadata']['uid']}")
    return {item.revision: kube.api.sanitize_for_serialization(item) for item in found.items}


def outcome_of(kube: Kube, app: dict[str, Any], number: int) -> str | None:
    found = revisions(kube, app).get(number)
    return None if found is None else (found["metadata"].get("annotations") or {}).get(f"{DOMAIN}/outcome")


def wait_outcome(kube: Kube, name: str, number: int, outcome: str) -> None:
    wait_until(lambda: outcome_of(kube, kube.app(name), number) == outcome, default_wait(kube.cluster),
               f"revision {number} of {name} to be recorded {outcome}")


def test_history_and_rollback(start_operator: Any, kube: Kube) -> None:
    start_operator(kube.namespace)
    ns = kube.namespace
    kube.apply_app("shop", {"components": [configmap_component("alpha")]}, {CAUSE: "first"})
    first_spec = kube.wait_ready("shop")["spec"]
    wait_outcome(kube, "shop", 1, "Ready")
    kube.apply_app("shop", {"components": [configmap_component("alpha"), configmap_component("beta")]},
                   {CAUSE: "add beta"})
    second_spec = kube.wait_ready("shop")["spec"]
    assert kube.owned() == [("ConfigMap", "alpha"), ("ConfigMap", "beta")]
    wait_outcome(kube, "shop", 2, "Ready")
    broken = configmap_component("gamma", {"bad key": "x"})  # the API server refuses the key
    kube.apply_app("shop", {"components": [configmap_component("alpha"), configmap_component("beta"), broken]},
                   {CAUSE: "add gamma"})
    failed = kube.wait_state("shop", "Error")
    assert failed["status"]["revision"] == 3
    wait_outcome(kube, "shop", 3, "Error")

    table = cli(kube, "history", "shop")
    assert (table.returncode, table.stderr) == (0, "")
    rows = [line.split() for line in table.stdout.splitlines()]
    assert rows[0] == ["REVISION", "CREATED", "OUTCOME", "RESTORES", "CHANGE-CAUSE"]
    assert [(row[0], row[2], row[-1]) for row in rows[1:]] == [("1", "Ready", "first"), ("2", "Ready", "beta"),
                                                                ("3*", "Error", "gamma")]
    ready = condition(failed, "Ready")
    assert f"Error {ready['lastTransitionTime']} {ready['reason']}: " in table.stdout.splitlines()[3]
    one = cli(kube, "history", "shop", "--revision", "2", "-o", "yaml")
    assert (one.returncode, yaml.safe_load(one.stdout), one.stderr) == (0, second_spec, "")
    missing = cli(kube, "history", "shop", "--revision", "9")
    assert (missing.returncode, missing.stdout, missing.stderr) == (
        1, "", f"Error: Application {ns}/shop has no revision 9 (revisions: 1, 2, 3)\n")

    preview = cli(kube, "diff", "shop", "--revision", "1")
    assert (preview.returncode, preview.stderr) == (1, "")
    assert f"  prune ConfigMap {ns}/beta" in preview.stdout.splitlines()
    assert kube.owned() == [("ConfigMap", "alpha"), ("ConfigMap", "beta")]  # a preview only

    version = kube.app("shop")["metadata"]["resourceVersion"]
    refused = cli(kube, "rollback", "shop", "--to-revision", "9")
    assert (refused.returncode, refused.stdout, refused.stderr) == (
        1, "", f"Error: Application {ns}/shop has no revision 9 (revisions: 1, 2, 3)\n")
    not_a_number = cli(kube, "rollback", "shop", "--to-revision", "one")
    assert not_a_number.returncode == 2
    assert not_a_number.stderr.splitlines()[-1] == (
        "Error: Invalid value for '--to-revision': 'one' is not a revision number (a whole number from 1)")
    assert kube.app("shop")["metadata"]["resourceVersion"] == version  # nothing written

    rolled = cli(kube, "rollback", "shop", "--to-revision", "1", "--wait", "--timeout", "3m")
    assert (rolled.returncode, rolled.stdout) == (
        0, f"Application {ns}/shop rolled back to revision 1 (generation 4)\n"
           f"Application {ns}/shop is Ready: Applied revision 4: 1 objects ready\n"), rolled.stderr
    app = kube.app("shop")
    assert (app["spec"], app["metadata"]["annotations"][CAUSE]) == (first_spec, "first")
    assert kube.owned() == [("ConfigMap", "alpha")]  # what 2 and 3 added is pruned
    wait_outcome(kube, "shop", 4, "Ready")
    recorded = json.loads(cli(kube, "history", "shop", "-o", "json").stdout)
    assert [(r["revision"], r["outcome"]["state"], r.get("restores"), r.get("changeCause")) for r in recorded] == [
        (1, "Ready", None, "first"), (2, "Ready", None, "add beta"), (3, "Error", None, "add gamma"),
        (4, "Ready", 1, "first")]
    again = cli(kube, "rollback", "shop", "--to-revision", "1")
    assert (again.returncode, again.stderr) == (
        1, f"Error: Application {ns}/shop already applies revision 1; nothing to roll back\n")

    assert cli(kube, "suspend", "shop").returncode == 0
    kube.wait_state("shop", "Pending", "Suspended")
    version = kube.app("shop")["metadata"]["resourceVersion"]
    suspended = cli(kube, "rollback", "shop")
    assert (suspended.returncode, suspended.stderr) == (
        1, f"Error: Application {ns}/shop is suspended; resume it first (oam-operator resume shop -n {ns})\n")
    assert kube.app("shop")["metadata"]["resourceVersion"] == version
    assert cli(kube, "resume", "shop").returncode == 0
    resumed = kube.wait_ready("shop")
    assert resumed["status"]["revision"] == 4  # suspend then resume applies nothing new
    assert sorted(revisions(kube, resumed)) == [1, 2, 3, 4]

    default = cli(kube, "rollback", "shop", "--wait", "--timeout", "3m")  # to the one before 4: the failing 3
    assert default.returncode == 3
    assert default.stdout.splitlines()[0] == f"Application {ns}/shop rolled back to revision 3 (generation 7)"


def test_the_limit_prunes_and_deleting_the_application_deletes_its_revisions(start_operator: Any,
                                                                             kube: Kube) -> None:
    start_operator(kube.namespace)
    for round_ in range(1, 4):
        kube.apply_app("shop", {"components": [configmap_component("alpha", {"round": str(round_)})],
                                "revisionHistoryLimit": 2})
        app = kube.wait_ready("shop")
        assert app["status"]["revision"] == round_
    wait_until(lambda: sorted(revisions(kube, kube.app("shop"))) == [2, 3], default_wait(kube.cluster),
               "the oldest revision to be pruned")

    generation = kube.app("shop")["metadata"]["generation"]
    try:
        kube.custom.patch_namespaced_custom_object(GROUP, VERSION, kube.namespace, "applications", "shop",
                                                   {"spec": {"revisionHistoryLimit": 101}})
        raise AssertionError("a limit of 101 was accepted")
    except ApiException as error:
        assert error.status == 422
        message = json.loads(error.body)["message"]
        assert "spec.revisionHistoryLimit: Invalid value: 101: spec.revisionHistoryLimit in body should be less " \
               "than or equal to 100" in message, message
    assert kube.app("shop")["metadata"]["generation"] == generation

    app = kube.app("shop")
    kube.custom.delete_namespaced_custom_object(GROUP, VERSION, kube.namespace, "applications", "shop")
    wait_until(lambda: kube.app_or_none("shop") is None, default_wait(kube.cluster), "the Application to be gone")
    wait_until(lambda: revisions(kube, app) == {}, default_wait(kube.cluster),
               "the garbage collector to delete the revisions")


def test_revisions_are_written_with_the_operators_identity(start_operator: Any, kube: Kube) -> None:
    """The Application acts as a ServiceAccount that may write ConfigMaps only: its history is
    the operator's bookkeeping, recorded all the same."""
    start_operator(kube.namespace)
    account = "deployer"
    kube.core.create_namespaced_service_account(kube.namespace, {"metadata": {"name": account}})
    rbac = client.RbacAuthorizationV1Api(kube.api)
    rbac.create_namespaced_role(kube.namespace, {
        "metadata": {"name": account},
        "rules": [{"apiGroups": [""], "resources": ["configmaps"],
                   "verbs": ["get", "list", "watch", "create", "update", "patch", "delete"]}]})
    rbac.create_namespaced_role_binding(kube.namespace, {
        "metadata": {"name": account},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": account},
        "subjects": [{"kind": "ServiceAccount", "name": account, "namespace": kube.namespace}]})
    kube.apply_app("tenant", {"serviceAccountName": account, "components": [configmap_component("cfg")]})
    kube.wait_ready("tenant")
    wait_outcome(kube, "tenant", 1, "Ready")
    review = client.AuthorizationV1Api(kube.api).create_subject_access_review({
        "spec": {"user": f"system:serviceaccount:{kube.namespace}:{account}",
                 "groups": ["system:serviceaccounts", f"system:serviceaccounts:{kube.namespace}"],
                 "resourceAttributes": {"namespace": kube.namespace, "verb": "create", "group": "apps",
                                        "resource": "controllerrevisions"}}})
    assert review.status.allowed is False
