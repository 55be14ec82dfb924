"""A control plane of the chaos runs' own, with an audit log that records what each write to an
Application said and answered.

The devcluster's audit policy records metadata only; these runs need the request and the response
of Application writes (docs/chaos.md#what-the-audit-log-must-show): the response's uid and
generation say which Application a write landed on, the request's status says which pass wrote it,
its ``metadata.uid`` whether it was bound to its Application. A later ``--audit-policy-file`` wins
over the devcluster's.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from tools.devcluster import devcluster as dc

__all__ = ["POLICY", "ChaosPlane", "api_client", "start_plane"]

ROOT = Path(__file__).resolve().parents[2]

POLICY = """apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
omitManagedFields: true
rules:
- level: RequestResponse
  verbs: ["create", "update", "patch", "delete"]
  resources:
  - group: oam-operator.dev
    resources: ["applications", "applications/status"]
- level: Metadata
"""


@dataclass
class ChaosPlane:
    control: dc.ControlPlane
    audit_log: Path
    api: Any  # kubernetes.client.ApiClient

    @property
    def handle(self) -> dc.ClusterHandle:
        return self.control.handle

    def stop(self) -> None:
        self.api.close()
        self.control.stop()


def api_client(kubeconfig: str) -> Any:
    """A ``kubernetes.client.ApiClient`` for ``kubeconfig`` that ignores proxy settings."""
    from kubernetes import client, config

    configuration = client.Configuration()
    config.load_kube_config(config_file=kubeconfig, client_configuration=configuration)  # type: ignore[no-untyped-call]
    configuration.proxy = None
    return client.ApiClient(configuration)


def start_plane(run_dir: Path, profile: str = "minimal") -> ChaosPlane:
    """Start ``profile`` under ``run_dir`` with the audit policy above and the repository's CRDs."""
    from kubernetes import client

    run_dir.mkdir(parents=True, exist_ok=True)
    policy = run_dir / "chaos-audit-policy.yaml"
    policy.write_text(POLICY)
    control = dc.start(profile, run_dir=run_dir / "run", audit=True,
                       extra_flags={"kube-apiserver": [f"--audit-policy-file={policy}"]})
    api = api_client(control.handle.kubeconfig)
    extensions: Any = client.ApiextensionsV1Api(api)
    for path in sorted((ROOT / "crds").glob("*.yaml")):
        extensions.create_custom_resource_definition(yaml.safe_load(path.read_text()))
    deadline = time.monotonic() + 60
    names = ("applications.oam-operator.dev", "clusterprofiles.oam-operator.dev")
    while not all(any(c.type == "Established" and c.status == "True"
                      for c in (extensions.read_custom_resource_definition(n).status.conditions or []))
                  for n in names):
        if time.monotonic() > deadline:
            control.stop()
            raise dc.DevclusterError("the CRDs were not Established within 60 s")
        time.sleep(0.25)
    return ChaosPlane(control, run_dir / "run" / "logs" / "audit.log", api)
