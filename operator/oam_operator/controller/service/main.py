"""``oam-operator run``: settings → logging → metrics → kopf (docs/operator.md#running-on-kopf,
docs/operator.md#settings)."""

from __future__ import annotations

import logging

import kopf

from oam_operator.controller.reconcile.settings import Settings
from oam_operator.controller.service.logs import configure

from ..reconcile.depth import prepare_process
from .handlers import register
from .runtime import Runtime

log = logging.getLogger("oam_operator.controller")


def run_operator(settings: Settings, kubeconfig: str | None = None) -> None:
    configure(settings.log_format.value, settings.log_level.value)
    prepare_process()  # before any thread starts: deep objects must not fail the watch (depth.py)
    runtime = Runtime.create(settings, kubeconfig)
    if runtime.metrics is not None:
        runtime.metrics.serve(settings.metrics_port)
    registry = kopf.OperatorRegistry()
    register(registry, runtime, settings)
    kwargs: dict[str, object] = {}
    if settings.peering:
        kwargs.update(standalone=False, peering_name=settings.peering_name, priority=settings.peering_priority)
    else:
        kwargs.update(standalone=True)
    if settings.cluster_wide:
        kwargs["clusterwide"] = True
    else:
        kwargs["namespaces"] = list(settings.namespaces)
    log.info("starting", extra={"fields": {"domain": settings.domain, "namespaces": list(settings.namespaces),
                                           "shard": settings.shard or None}})
    kopf.run(registry=registry, liveness_endpoint=f"http://0.0.0.0:{settings.health_port}/healthz",
             **kwargs)  # type: ignore[arg-type]
