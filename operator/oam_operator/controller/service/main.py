"""``oam-operator run``: settings → logging → metrics → kopf (docs/operator.md#running-on-kopf,
docs/operator.md#settings)."""

from __future__ import annotations

import asyncio
import logging

import kopf

from oam_operator.api.meta import GROUP
from oam_operator.controller.reconcile.application import listed_first
from oam_operator.controller.reconcile.settings import Settings
from oam_operator.controller.service.logs import configure

from ..reconcile.depth import prepare_process
from . import kopftuning
from .collector import tune_collector
from .controller import Controller
from .handlers import register

log = logging.getLogger("oam_operator.controller")


def run_operator(settings: Settings, kubeconfig: str | None = None) -> None:
    configure(settings.log_format.value, settings.log_level.value)
    prepare_process()  # before any thread starts: deep objects must not fail the watch (depth.py)
    kopftuning.install()  # kopf's finalizer patches without a diff of the whole body (kopftuning.py)
    loop = asyncio.new_event_loop()  # kopf's: the controller is built in its terms (controller.py)
    asyncio.set_event_loop(loop)
    controller = Controller.build(settings, loop, kubeconfig)
    # kopf's LIST of the Applications is the term's when it began in the term (freshview.py), and
    # a new, changed or deleted one goes to kopf before the settled ones, which step aside for
    # urgent passes (kopftuning.py, urgency.py)
    requested_at = f"{settings.domain}/requested-at"
    kopftuning.observe_lists(GROUP, "applications", controller.runtime.fresh.listing,
                             first=lambda body: listed_first(body, requested_at),
                             pace=controller.runtime.urgency.pacer)
    # a pass looks a ClusterProfile up once kopf has listed them (listedonce.py)
    controller.runtime.profiles_listed.expect()
    kopftuning.observe_lists(GROUP, "clusterprofiles", controller.runtime.profiles_listed.pages)
    controller.runtime.fresh.follow_lists()
    metrics = controller.runtime.metrics
    if metrics is not None:
        metrics.serve(settings.metrics_port)
    registry = kopf.OperatorRegistry()
    register(registry, controller, settings)
    kwargs: dict[str, object] = {}
    if settings.peering:
        kwargs.update(standalone=False, peering_name=settings.peering_name, priority=settings.peering_priority)
    else:
        kwargs.update(standalone=True)
    if settings.cluster_wide:
        kwargs["clusterwide"] = True
    else:
        kwargs["namespaces"] = list(settings.namespaces)
    tune_collector()  # what the process keeps is built: out of the collector's way (collector.py)
    log.info("starting", extra={"fields": {"domain": settings.domain, "namespaces": list(settings.namespaces),
                                           "shard": settings.shard or None}})
    kopf.run(loop=loop, registry=registry, liveness_endpoint=f"http://0.0.0.0:{settings.health_port}/healthz",
             **kwargs)  # type: ignore[arg-type]
