"""The Applications of a run as the run means them: each name's incarnations (a re-created
Application is a new incarnation, a new uid), its spec revision, and the objects it should own.

Every object's name carries its Application's incarnation (``app-03-i1-c0``), so an object, or an
inventory entry, of a deleted incarnation is told apart from its namesake's by name alone.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

__all__ = ["DOMAIN", "AppModel", "Fleet", "retrying"]

DOMAIN = "oam-operator.dev"
VERSION = "v1alpha1"
HAND_VALUE = "edited by hand"
HAND_IMAGE = "registry.invalid/edited-by-hand:1"
T = TypeVar("T")


def retrying(action: Callable[[], T], what: str, timeout: float = 120.0) -> T:
    """``action`` retried while the API server is away (a restart); an answer other than a 5xx or
    a connection failure is the caller's."""
    from kubernetes.client.exceptions import ApiException

    deadline = time.monotonic() + timeout
    while True:
        try:
            return action()
        except ApiException as error:
            if error.status and error.status < 500 and error.status != 429:
                raise
            failure: Exception = error
        except OSError as error:
            failure = error
        except Exception as error:  # urllib3's protocol errors are not OSErrors
            if type(error).__module__.split(".")[0] != "urllib3":
                raise
            failure = error
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what}: no answer within {timeout:.0f} s ({failure})")
        time.sleep(0.5)


@dataclass
class AppModel:
    name: str
    configmaps: int
    deployment: bool
    incarnation: int = 0
    revision: int = 0
    uid: str = ""
    exists: bool = False
    #: (incarnation, uid, when its deletion completed: epoch seconds, None while it is going)
    past: list[list[Any]] = field(default_factory=list)

    def prefix(self, incarnation: int | None = None) -> str:
        return f"{self.name}-i{self.incarnation if incarnation is None else incarnation}-"

    def desired(self) -> dict[tuple[str, str], str]:
        """(kind, name) of every object the live incarnation should own, with the value a hand
        edit changes (a ConfigMap's ``value``, a Deployment's image)."""
        value = f"r{self.revision}"
        objects = {("ConfigMap", f"{self.prefix()}c{j}"): value for j in range(self.configmaps)}
        if self.revision % 2:  # an odd revision has one more object: an even one prunes it
            objects[("ConfigMap", f"{self.prefix()}extra")] = value
        if self.deployment:
            objects[("Deployment", f"{self.prefix()}web")] = f"registry.invalid/app:{value}"
        return objects

    def spec(self) -> dict[str, Any]:
        components = []
        for (kind, name), value in self.desired().items():
            if kind == "ConfigMap":
                obj: dict[str, Any] = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name},
                                       "data": {"value": value}}
            else:
                labels = {"app": name}
                obj = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
                       "spec": {"replicas": 1, "selector": {"matchLabels": labels},
                                "template": {"metadata": {"labels": labels},
                                             "spec": {"containers": [{"name": "main", "image": value}]}}}}
            components.append({"name": name.removeprefix(self.prefix()), "type": "passthrough",
                               "properties": {"object": obj}})
        return {"components": components}


class Fleet:
    """The run's Applications in ``namespace`` and the writes a user makes to them."""

    def __init__(self, api: Any, namespace: str, count: int, configmaps: int = 3, deployments: bool = False) -> None:
        from kubernetes import client

        self.namespace = namespace
        # the client's models are loosely typed: read them as data
        self.custom: Any = client.CustomObjectsApi(api)
        self.core: Any = client.CoreV1Api(api)
        self.apps_api: Any = client.AppsV1Api(api)
        self.apps = {f"app-{i:02d}": AppModel(f"app-{i:02d}", configmaps, deployments and i % 3 == 0)
                     for i in range(count)}
        #: uid -> (name, incarnation), every incarnation the run created
        self.uids: dict[str, tuple[str, int]] = {}

    # -- the user's writes -----------------------------------------------------------------------

    def create(self, app: AppModel) -> None:
        body = {"apiVersion": f"{DOMAIN}/{VERSION}", "kind": "Application",
                "metadata": {"name": app.name, "namespace": self.namespace}, "spec": app.spec()}
        created: dict[str, Any] = retrying(lambda: self.custom.create_namespaced_custom_object(
            DOMAIN, VERSION, self.namespace, "applications", body), f"create {app.name}")
        app.uid = str(created["metadata"]["uid"])
        app.exists = True
        self.uids[app.uid] = (app.name, app.incarnation)

    def delete(self, app: AppModel) -> None:
        from kubernetes.client.exceptions import ApiException

        try:
            retrying(lambda: self.custom.delete_namespaced_custom_object(
                DOMAIN, VERSION, self.namespace, "applications", app.name), f"delete {app.name}")
        except ApiException as error:
            if error.status != 404:
                raise
        app.past.append([app.incarnation, app.uid, None])
        app.exists = False
        app.incarnation += 1
        app.revision = 0

    def edit_spec(self, app: AppModel) -> None:
        app.revision += 1
        retrying(lambda: self.custom.patch_namespaced_custom_object(
            DOMAIN, VERSION, self.namespace, "applications", app.name, {"spec": app.spec()}), f"edit {app.name}")

    def hand_edit(self, app: AppModel, rng: random.Random) -> tuple[str, str]:
        """Change one owned object as a user would; the (kind, name) edited."""
        kind, name = rng.choice(sorted(app.desired()))
        if kind == "ConfigMap":
            retrying(lambda: self.core.patch_namespaced_config_map(
                name, self.namespace, {"data": {"value": HAND_VALUE}}, field_manager="chaos-hand"), f"edit {name}")
        else:
            patch = {"spec": {"template": {"spec": {"containers": [{"name": "main", "image": HAND_IMAGE}]}}}}
            retrying(lambda: self.apps_api.patch_namespaced_deployment(
                name, self.namespace, patch, field_manager="chaos-hand"), f"edit {name}")
        return kind, name

    # -- what the cluster has --------------------------------------------------------------------

    def gone(self, name: str) -> bool:
        """Whether no Application ``name`` exists (the last incarnation's finalizer is off)."""
        from kubernetes.client.exceptions import ApiException

        try:
            retrying(lambda: self.custom.get_namespaced_custom_object(
                DOMAIN, VERSION, self.namespace, "applications", name), f"read {name}")
        except ApiException as error:
            if error.status == 404:
                return True
            raise
        return False

    def value_of(self, kind: str, name: str) -> str | None:
        """The value a hand edit changes, as the cluster has it (None: no such object)."""
        from kubernetes.client.exceptions import ApiException

        try:
            if kind == "ConfigMap":
                found = retrying(lambda: self.core.read_namespaced_config_map(name, self.namespace), f"read {name}")
                return str((found.data or {}).get("value"))
            deployment: Any = retrying(lambda: self.apps_api.read_namespaced_deployment(name, self.namespace),
                                  f"read {name}")
            return str(deployment.spec.template.spec.containers[0].image)
        except ApiException as error:
            if error.status == 404:
                return None
            raise

    def applications(self) -> list[dict[str, Any]]:
        listed: dict[str, Any] = retrying(lambda: self.custom.list_namespaced_custom_object(
            DOMAIN, VERSION, self.namespace, "applications"), "list Applications")
        return list(listed.get("items") or [])

    def labelled(self) -> dict[tuple[str, str], str]:
        """(kind, name) -> value of every ConfigMap and Deployment carrying the owner label."""
        selector = f"{DOMAIN}/owner-id"
        found: dict[tuple[str, str], str] = {}
        for cm in retrying(lambda: self.core.list_namespaced_config_map(
                self.namespace, label_selector=selector), "list ConfigMaps").items:
            found[("ConfigMap", cm.metadata.name)] = str((cm.data or {}).get("value"))
        for d in retrying(lambda: self.apps_api.list_namespaced_deployment(
                self.namespace, label_selector=selector), "list Deployments").items:
            found[("Deployment", d.metadata.name)] = str(d.spec.template.spec.containers[0].image)
        return found

    def every_object(self) -> set[tuple[str, str]]:
        """(kind, name) of every ConfigMap and Deployment named for one of the run's Applications."""
        prefixes = tuple(f"{name}-i" for name in self.apps)
        found = {("ConfigMap", cm.metadata.name) for cm in retrying(
            lambda: self.core.list_namespaced_config_map(self.namespace), "list ConfigMaps").items}
        found |= {("Deployment", d.metadata.name) for d in retrying(
            lambda: self.apps_api.list_namespaced_deployment(self.namespace), "list Deployments").items}
        return {(kind, name) for kind, name in found if name.startswith(prefixes)}
