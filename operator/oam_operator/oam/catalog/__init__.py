"""The built-in component and trait types, by family.

Each family is a subpackage holding its types and the helpers only they use: ``workloads``
(webservice, worker, statefulset, daemonset, cronjob and the pod-spec building they share,
plus the ``scaler`` and ``configmap`` traits that decorate them), ``manifests`` (passthrough,
manifests, crd), ``flux`` (helm/helmchart and oci: Flux sources and their releases),
``postgresql`` (a CloudNativePG cluster), ``routing`` (ingress, httproute and the ``expose``
lowering rule), ``secrets`` (certificate, external-secret), ``storage`` (pvc, volsync),
``policy`` (networkpolicy, cilium-networkpolicy, the traffic-source NetworkPolicy synthesis,
rbac, security-context, prune-protection) and ``shared`` (building blocks several families use).
"""

from __future__ import annotations

from oam_operator.oam.engine.registry import Registrar, register_modules


def register_builtin_catalog(registrar: Registrar) -> None:
    register_modules(__name__, __path__, registrar)
