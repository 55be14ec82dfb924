"""Refusals of the kurel oracle corpus, end to end: the operator refuses them as ``build`` does.

A seeded sample of 20 cases kurel refuses in its transform (``transforming application`` or
``generating manifests``) and that ``oam-operator build`` refuses with kurel's very words
(tests/unit/oam/kurel/test_kurel_oracle.py checks the whole corpus offline). Each case's
``launcher.gokure.dev`` document becomes an ``oam-operator.dev/v1alpha1`` Application in the
test namespace — tier annotations moved to the operator's domain, its ClusterProfile created
as a cluster-scoped ``ClusterProfile`` of its own and named by ``spec.profile`` — and must end
in ``Error``/``TransformFailed`` with the Ready condition ``False`` and kurel's message without
the CLI's step prefix (docs/operator.md#states-reasons-and-messages: the transform's text verbatim;
docs/transform.md#errors-printed-by-build), an
empty inventory, a matching Warning Event, and no object created anywhere.

Cases are left out of the sample by rule, never by hand: a message naming the Application or
its namespace (the Application is renamed and lives in the test namespace), a ``url`` source
or a ``template`` delivery (they need a reader or a renderer the operator does not configure),
a multi-line message, a null value anywhere in the document (server-side apply treats a null
as "no opinion", so the stored Application cannot carry it).
"""

from __future__ import annotations

import functools
import os
import random
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest
import yaml
from e2ekit import DOMAIN, GROUP, VERSION, Kube, condition
from kubernetes import client

from tools.devcluster.pytest_plugin import default_wait, wait_until

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "unit" / "oam"))

from oamkit.kurel import ORACLE, Case, build, cases

SAMPLE_SIZE = 20
SEED = 17
LAUNCHER_DOMAIN = "launcher.gokure.dev"
STEP_PREFIXES = ("Error: transforming application: ", "Error: generating manifests: ")


def _document(case: Case) -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load((case.path / "app.yaml").read_text(encoding="utf-8"))
    return loaded


def _has_null(node: Any) -> bool:
    if node is None:
        return True
    if isinstance(node, dict):
        return any(_has_null(v) for v in node.values())
    if isinstance(node, list):
        return any(_has_null(v) for v in node)
    return False


def _eligible(case: Case) -> bool:
    if case.rc != 1 or not case.stderr.startswith(STEP_PREFIXES) or case.stderr.count("\n") != 1:
        return False
    text = (case.path / "app.yaml").read_text(encoding="utf-8")
    if "url:" in text or "delivery: template" in text:
        return False
    if _has_null(_document(case)):
        return False
    metadata = _document(case).get("metadata") or {}
    named = [metadata.get("name"), metadata.get("namespace") or "default"]
    return not any(f'"{n}' in case.stderr or f"{n}/" in case.stderr for n in named if n)


@functools.cache
def sample() -> list[Case]:
    """20 eligible cases in a seeded order, each refused by ``build`` with kurel's exact text."""
    pool = [c for c in cases() if _eligible(c)]
    random.Random(SEED).shuffle(pool)
    chosen: list[Case] = []
    for case in pool:
        ours = build(case)
        if ours.rc == 1 and ours.stderr == case.stderr:
            chosen.append(case)
        if len(chosen) == SAMPLE_SIZE:
            break
    return sorted(chosen, key=lambda c: c.id)


def expected_message(case: Case) -> str:
    """kurel's message as the operator shows it: no ``Error:`` and no CLI step prefix."""
    text = case.stderr.rstrip("\n")
    for prefix in STEP_PREFIXES:
        if text.startswith(prefix):
            return text[len(prefix) :]
    raise AssertionError(text)


def application_spec(case: Case, profile: str) -> dict[str, Any]:
    """The case's spec for our CRD: tier annotations under the operator's domain, its own profile."""
    spec: dict[str, Any] = dict(_document(case).get("spec") or {})
    for component in spec.get("components") or []:
        annotations = component.get("annotations")
        if isinstance(annotations, dict):
            component["annotations"] = {
                (DOMAIN + key[len(LAUNCHER_DOMAIN) :] if key.startswith(LAUNCHER_DOMAIN + "/") else key): value
                for key, value in annotations.items()
            }
    spec["profile"] = profile
    return spec


def _owned_objects(kube: Kube) -> list[str]:
    """Every object in the namespace, and every ClusterRole/Namespace, carrying an operator label."""
    selector = f"{DOMAIN}/owner-id"
    found: list[str] = []
    core, apps, batch = kube.core, kube.apps, client.BatchV1Api(kube.api)
    rbac = client.RbacAuthorizationV1Api(kube.api)
    namespaced = [
        core.list_namespaced_config_map, core.list_namespaced_secret, core.list_namespaced_service,
        core.list_namespaced_service_account, core.list_namespaced_persistent_volume_claim,
        apps.list_namespaced_deployment, apps.list_namespaced_stateful_set, apps.list_namespaced_daemon_set,
        batch.list_namespaced_cron_job, rbac.list_namespaced_role, rbac.list_namespaced_role_binding,
    ]
    for lister in namespaced:
        found += [f"{o.kind or lister.__name__} {o.metadata.name}"
                  for o in lister(kube.namespace, label_selector=selector).items]
    for cluster_lister in (rbac.list_cluster_role, core.list_namespace):
        found += [f"{o.metadata.name}" for o in cluster_lister(label_selector=selector).items]
    return found


def _require_corpus() -> None:
    """Fail without the corpus under ``OAM_REQUIRE_GOLDEN=1`` (as the unit tier does), else skip."""
    if not ORACLE.is_dir():
        message = f"kurel oracle corpus not found at {ORACLE}"
        if os.environ.get("OAM_REQUIRE_GOLDEN") == "1":
            pytest.fail(message)
        pytest.skip(message)


def test_the_sample_is_complete() -> None:
    _require_corpus()
    assert len(sample()) == SAMPLE_SIZE


def test_oracle_refusals_touch_nothing_and_show_kurels_message(start_operator: Any, kube: Kube) -> None:
    _require_corpus()
    chosen = sample()
    start_operator(kube.namespace)
    profiles = client.CustomObjectsApi(kube.api)
    suffix = uuid.uuid4().hex[:8]
    names = {case.id: f"case-{case.id}" for case in chosen}
    created: list[str] = []
    try:
        for case in chosen:
            profile = f"oracle-{case.id}-{suffix}"
            document = yaml.safe_load((case.path / "cluster.yaml").read_text(encoding="utf-8")) or {}
            body = {"apiVersion": f"{GROUP}/{VERSION}", "kind": "ClusterProfile", "metadata": {"name": profile},
                    "spec": document.get("spec") or {}}
            profiles.create_cluster_custom_object(GROUP, VERSION, "clusterprofiles", body)
            created.append(profile)
            kube.apply_app(names[case.id], application_spec(case, profile))
        mismatches: list[str] = []
        for case in chosen:
            app = kube.wait_state(names[case.id], "Error", "TransformFailed")
            ready = condition(app, "Ready") or {}
            expected = expected_message(case)
            if (ready.get("status"), ready.get("message")) != ("False", expected):
                mismatches.append(f"{case.id}: Ready {ready.get('status')} {ready.get('message')!r}\n"
                                  f"  expected False {expected!r}")
            if (app.get("status") or {}).get("inventory"):
                mismatches.append(f"{case.id}: inventory {app['status']['inventory']}")

            def warned(name: str = names[case.id], message: str = expected) -> bool:
                return any(e.type == "Warning" and e.reason == "TransformFailed" and e.message == message
                           for e in kube.events(name))

            wait_until(warned, default_wait(kube.cluster), f"the TransformFailed Event of {case.id}")
        assert mismatches == []
        assert _owned_objects(kube) == []
    finally:
        for profile in created:
            profiles.delete_cluster_custom_object(GROUP, VERSION, "clusterprofiles", profile)
