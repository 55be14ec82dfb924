"""The operator's process-wide state and the synchronous work around a pass.

``Runtime`` holds what lives as long as the process: settings, the operator's API client
and its rate limiter and thread pool, the transform (``composition.py``), the per-Application
memory (status cache, backoff, Event deduplication), the ClusterProfiles seen, and the
metrics. Its ``run_apply`` and ``run_delete`` run one pass in a worker thread with a
``StatusWriter`` (``statuswriter.py``), which writes the status and posts the Events, and
then record metrics and the pass's log line. The kopf layer (``handlers.py``) schedules them.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any

from oam_operator import __version__
from oam_operator.api.conditions import ready_condition
from oam_operator.api.meta import application_path
from oam_operator.common.durations import parse_go_duration
from oam_operator.controller.reconcile.settings import Settings
from oam_operator.controller.service.metrics import OperatorMetrics
from oam_operator.oam.definitions.catalog import DefinitionCatalog
from oam_operator.reconciler.accounting import RequestAccounting
from oam_operator.reconciler.client import ClusterClient
from oam_operator.reconciler.errors import ApiError
from oam_operator.reconciler.events import event_manifest
from oam_operator.reconciler.flowcontrol import FlowControl
from oam_operator.reconciler.metrics import prometheus_metrics
from oam_operator.reconciler.ratelimit import RateLimiter
from oam_operator.reconciler.status import DefaultStatusAnalyzer

from ..reconcile.appindex import AppIndex
from ..reconcile.application import Application
from ..reconcile.composition import OperatorTransform
from ..reconcile.definitionuse import names_type, spec_types
from ..reconcile.delivery import DeliveryRefused
from ..reconcile.history import RevisionRecorder
from ..reconcile.inventory import access_of, delivery_view, is_standard
from ..reconcile.passes import apply_pass, delete_pass
from ..reconcile.quiet import Confirmed, FullReason, refusal
from ..reconcile.readiness import WATCHED, no_longer_progressing
from ..reconcile.seams import ApplicationGone, Environment, Event, Memory, PassResult
from ..reconcile.sharding import owned_selector, shard_selector
from ..reconcile.statuswriter import Aftermath, StatusWriter, ready_event, unverified
from ..reconcile.tenancy import TenantClients
from .bodies import plain
from .definitions import DefinitionWatch
from .fence import FencedRateLimiter
from .freshview import FreshView, still_there
from .grantwatch import GrantWatch
from .incluster import in_cluster
from .inventory import StandardProfiles
from .listedonce import ListedOnce
from .ownedwatch import ObjectKey, OwnedObjects, WatchedKind
from .profilestatus import ProfileStatus
from .readysince import not_ready_since
from .remotes import RemoteClusters
from .targets import TargetProfiles
from .tracing import RevisionTracer
from .urgency import Urgency
from .warmup import warm_up

log = logging.getLogger("oam_operator.controller")

#: Watched from the start: the workload kinds (readiness.py) and ConfigMaps, which nearly every
#: Application holds, so that even the first passes read them from the watch
#: (docs/operator.md#reads-from-the-watch); every other kind once an inventory holds it.
STARTED = (*WATCHED, WatchedKind("", "v1", "configmaps", "ConfigMap"))



class MeteredAccounting(RequestAccounting):
    """Request accounting that also feeds ``oam_operator_api_requests_total`` (``lease``:
    ``oam_operator_lease_requests_total``, leader election's own)."""

    def __init__(self, metrics: OperatorMetrics | None, *, lease: bool = False) -> None:
        super().__init__()
        self.metrics = metrics
        self.lease = lease

    def finished(self, verb: str, method: str, status: int) -> None:
        super().finished(verb, method, status)
        if self.metrics is not None:
            self.metrics.count_request(method, status or None, lease=self.lease)


#: seconds a pass waits at most, once, for kopf's first LIST of ClusterProfiles (listedonce.py)
PROFILES_LIST_WAIT = 10.0
CACHE_MEASURE_INTERVAL = 5.0  # seconds: the watch cache is walked at most this often, however often scraped


class MeasuredAtMost:
    """``measure()``, called at most once per ``interval`` seconds; the last result in between."""

    def __init__(self, measure: Callable[[], tuple[int, int]], interval: float,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.measure, self.interval, self.clock = measure, interval, clock
        self._at: float | None = None
        self._last = (0, 0)
        self._lock = threading.Lock()

    def __call__(self) -> tuple[int, int]:
        with self._lock:
            now = self.clock()
            if self._at is None or now - self._at >= self.interval:
                self._last, self._at = self.measure(), now
            return self._last


def _wakes_nothing(uid: str) -> None:
    """The waker of a runtime no Application loop runs on (tests, tools)."""


CLUSTER_ID_RETRY = (1.0, 30.0)  # seconds: the first and the longest wait between reads of the cluster id


def read_cluster_id(client: ClusterClient, sleep: Callable[[float], None] = time.sleep) -> str:
    """The uid of the kube-system Namespace: the cluster's id in the owner ids of every object the
    operator applies (docs/operator.md#running-on-kopf). Read before kopf starts; while the API
    server does not answer, or refuses, it is read again, each wait twice the last up to 30 s."""
    delay, longest = CLUSTER_ID_RETRY
    while True:
        try:
            namespace = client.request("read", "GET", "/api/v1/namespaces/kube-system")
            return str(namespace["metadata"]["uid"])
        except ApiError as error:
            log.warning("could not read the cluster id: %s", error, extra={"fields": {"retry_in": delay}})
        sleep(delay)
        delay = min(delay * 2, longest)


def _labels(profile: Mapping[str, Any] | None) -> Mapping[str, Any]:
    return ((profile or {}).get("metadata") or {}).get("labels") or {}


class Runtime:
    """What lives as long as the process, built complete before kopf runs: the clients, the memory
    of every Application, the watches (started by ``start``), the pass environment, and the run
    of one pass. ``waker`` wakes an Application's loop from any thread (wakeups.py)."""

    def __init__(self, settings: Settings, client: ClusterClient, metrics: OperatorMetrics | None, *,
                 pass_client: ClusterClient | None = None, lease_client: ClusterClient | None = None,
                 cluster_id: str = "", waker: Callable[[str], None] = _wakes_nothing) -> None:
        self.settings = settings
        self.client = client  # the operator's: watches, admission, start-up reads (never fenced)
        #: every request of a pass goes through this one, fenced by leader election (fence.py)
        self.pass_client = pass_client or client
        # The revision history is the operator's bookkeeping: its own identity, fenced (history.py).
        self.history = RevisionRecorder(self.pass_client, settings.domain)
        self.lease_client = lease_client  # leader election's own (leaseclient.py); None when it is off
        self.metrics = metrics
        self.memory: dict[str, Memory] = {}
        self.profiles: dict[str, dict[str, Any]] = {}  # the operator's own kind, by name
        #: The standard inventory's ClusterProfiles (inventory.py); ``None`` without --inventory-namespaces
        self.standard: StandardProfiles | None = None
        if settings.inventory_namespaces:
            self.standard = StandardProfiles(self.client, settings.inventory_namespaces, self._on_standard_change)
        #: Both kinds by name (targets.py)
        self.targets = TargetProfiles(self.profiles, self.standard)
        self.transform = OperatorTransform.from_settings(settings)
        catalog = self.transform.pipeline.transformer.definitions
        assert isinstance(catalog, DefinitionCatalog)  # from_settings attaches one
        self.definitions = DefinitionWatch(catalog, self.pass_client, self.client)
        self.apps = AppIndex(allow_cross_namespace=settings.allow_cross_namespace_dependencies)
        self.cluster_id = cluster_id or settings.cluster_id
        if not self.cluster_id:
            raise ValueError("the cluster id is needed: --cluster-id, or read by Runtime.create")
        self.pod_name = os.environ.get("POD_NAME", "")
        #: Wakes an Application's loop; called from the watches' threads.
        self.waker = waker
        self._lock = threading.Lock()
        self.analyzer = DefaultStatusAnalyzer(settings.domain)
        self._uids: dict[tuple[str, str], str] = {}  # (namespace, name) -> uid, for wake-ups
        self._granted: set[str] = set()  # uids refused by RBAC whose namespace's grants changed since
        self._passing = threading.Condition(self._lock)  # notified when a pass ends (``stand_down``)
        self._running = 0  # passes under way
        #: the urgent passes under way, which the owned objects' LISTs and kopf's handing on of the
        #: settled Applications step aside for (urgency.py)
        self.urgency = Urgency()
        self._generations: dict[str, tuple[int, datetime]] = {}  # uid -> (generation, first seen), saw_generation
        #: kopf's first LIST of the operator's ClusterProfiles, which passes wait for (listedonce.py)
        self.profiles_listed = ListedOnce("ClusterProfiles", PROFILES_LIST_WAIT, on_item=self._listed_profile)
        #: Whether kopf's copy of an Application may be acted on in this term (freshview.py)
        self.fresh = FreshView(self.pass_client, selector=shard_selector(settings), namespaces=settings.namespaces,
                               finalizer=settings.domain)
        #: The watches of owned objects (ownedwatch.py); ``None`` with ``--readiness-watch=off``
        self.owned: OwnedObjects | None = None
        if settings.readiness_watch:
            self.owned = OwnedObjects(self.client, domain=settings.domain, cluster_id=self.cluster_id,
                                      namespaces=settings.namespaces, on_change=self._on_change,
                                      on_state=self._on_watch_state, selector=owned_selector(settings),
                                      yielder=self.urgency.yielder)
        #: The watch of Roles and RoleBindings (grantwatch.py)
        self.grants = GrantWatch(self.client, settings.namespaces, self._on_grant)
        agent = f"oam-operator/{__version__}" + (f" ({self.pod_name})" if self.pod_name else "")
        #: The connections to other clusters (remotes.py)
        self.remotes = RemoteClusters(self.pass_client, settings, settings.lease_namespace(os.environ),
                                      user_agent=agent, watches=self._remote_watches,
                                      on_secret_change=self._on_secret_change,
                                      status=ProfileStatus(self.pass_client, self.profiles.get),
                                      hub_id=self.cluster_id, grants=self._remote_grants)
        #: Exports a revision's trace (tracing.py); ``None`` unless an OTLP endpoint is configured
        self.tracer = RevisionTracer.from_environment(os.environ)
        self.env = self._environment()
        if metrics is not None:
            metrics.count_states_when_scraped(self.states)

    def _environment(self) -> Environment:
        """What every pass works with (seams.Environment)."""
        metrics, owned = self.metrics, self.owned
        clients = TenantClients(self.pass_client, default_service_account=self.settings.default_service_account,
                                require_service_account=self.settings.require_service_account,
                                use_operator_identity=self.settings.use_operator_identity)
        return Environment(
            settings=self.settings, transform=self.transform, clients=clients, cluster_id=self.cluster_id,
            profiles=self.profile, all_profiles=self.all_profiles, on_transform=self._observe_transform,
            apps=self.apps,
            reconciler_metrics=prometheus_metrics(metrics.operations_total) if metrics is not None else None,
            watched=owned.watched if owned is not None else None,
            drift=owned.drift if owned is not None else None,
            unverified_drift=owned.unverified_drift if owned is not None else None,
            on_written=owned.written if owned is not None else None,
            cached_reads=owned, targets=self.remotes.target, tracing=self.tracer is not None,
            generation_seen=self.generation_seen,
        )

    @classmethod
    def create(cls, settings: Settings, kubeconfig: str | None = None, *,
               waker: Callable[[str], None] = _wakes_nothing) -> Runtime:
        """The clients of the operator and, unless ``--cluster-id`` names it, the cluster id read
        from the API server (waiting for it to answer: docs/operator.md#running-on-kopf)."""
        metrics = OperatorMetrics() if settings.metrics_port else None
        accounting = MeteredAccounting(metrics)
        limiter = RateLimiter(settings.kube_api_qps, settings.kube_api_burst)  # qps 0 disables limiting
        # An explicit --kube-api-qps always keeps the bucket; the default one lasts until the
        # server shows API Priority and Fairness (reconciler/flowcontrol.py).
        flow_control = FlowControl(limiter, adaptive=not settings.kube_api_qps_explicit)
        from concurrent.futures import ThreadPoolExecutor

        pool = ThreadPoolExecutor(settings.max_concurrent_reconciles * settings.apply_concurrency,
                                  thread_name_prefix="oam-apply")
        api = _api_client(kubeconfig, pool_size=settings.max_concurrent_reconciles * settings.apply_concurrency)
        # The Pod's name in the user agent tells the replicas apart in the API server's audit log.
        pod = os.environ.get("POD_NAME", "")
        agent = f"oam-operator/{__version__}" + (f" ({pod})" if pod else "")
        client = ClusterClient(api, rate_limiter=limiter, executor=pool, accounting=accounting,
                               user_agent=agent, flow_control=flow_control)
        # The passes' client shares the bucket, pool and accounting, and is fenced (fence.py).
        pass_client = ClusterClient(api, rate_limiter=FencedRateLimiter(limiter), executor=pool,
                                    accounting=accounting, user_agent=agent, flow_control=flow_control)
        lease_client = None
        if settings.elects:  # no bucket, requests within the renew deadline (leaseclient.py)
            _, renew, retry = settings.lease_timings
            lease_client = ClusterClient(api, rate_limiter=RateLimiter(0, 1),
                                         accounting=MeteredAccounting(metrics, lease=True),
                                         user_agent=agent, request_timeout=(retry, max(retry, renew - retry)))
        api.close()
        cluster_id = settings.cluster_id or read_cluster_id(client)
        return cls(settings, client, metrics, pass_client=pass_client, lease_client=lease_client,
                   cluster_id=cluster_id, waker=waker)

    def fence(self, leading: Callable[[], bool]) -> None:
        """From now on a pass request is sent only while ``leading()`` (docs/operator.md#leader-election)."""
        limiter = self.pass_client.rate_limiter
        if isinstance(limiter, FencedRateLimiter):
            limiter.fence = leading

    def start(self) -> None:
        """Start the watches (the startup handler's work: kopf is running)."""
        self.definitions.prime()  # before any pass (docs/definitions.md#the-operator)
        warm_up(self.pass_client, STARTED)  # what the first pass would load, loaded meanwhile (warmup.py)
        if self.owned is not None:
            self.owned.start(STARTED)
            if self.metrics is not None:  # measured when scraped: the walk over every entry costs no pass
                sizes = MeasuredAtMost(self.owned.sizes, CACHE_MEASURE_INTERVAL)
                self.metrics.watch_cache_objects.set_function(lambda: sizes()[0])
                self.metrics.watch_cache_bytes.set_function(lambda: sizes()[1])
        self.grants.start()
        if self.standard is not None:
            self.standard.start()
        if self.metrics is not None:
            self.metrics.build_info.labels(version=__version__).set(1)

    def wait_listed(self, timeout: float) -> bool:
        """Wait until the watches of owned objects have listed every kind once (at once without
        them); ``False`` after ``timeout`` seconds (docs/operator.md#a-quiet-restart)."""
        return self.owned is None or self.owned.wait_listed(timeout)

    def _remote_watches(self, client: ClusterClient, owner_cluster: str) -> OwnedObjects | None:
        """The watches of owned objects on a remote cluster (docs/multicluster.md#connections): the
        same kinds and selector as the operator's own; their changes wake Applications alike."""
        if not self.settings.readiness_watch:
            return None
        held: list[OwnedObjects] = []

        def on_change(namespace: str, name: str, key: ObjectKey, obj: Mapping[str, Any], deleted: bool) -> None:
            self._on_change(namespace, name, key, obj, deleted, held[0])

        owned = OwnedObjects(client, domain=self.settings.domain, cluster_id=owner_cluster,
                             namespaces=self.settings.namespaces, on_change=on_change,
                             selector=owned_selector(self.settings), yielder=self.urgency.yielder)
        held.append(owned)
        owned.start(STARTED)
        return owned

    def _remote_grants(self, client: ClusterClient, label: str) -> GrantWatch:
        """The watch of Roles and RoleBindings on a remote cluster: a grant there wakes the
        Applications of that namespace its RBAC refused, as on the operator's own cluster."""
        grants = GrantWatch(client, self.settings.namespaces, self._on_grant, where=label)
        grants.start()
        return grants

    def _observe_transform(self, seconds: float, ok: bool) -> None:
        if self.metrics is not None:
            self.metrics.transform_duration_seconds.labels(result="success" if ok else "error").observe(seconds)

    # -- per-Application memory -----------------------------------------------------------------

    def memory_of(self, uid: str, body: Mapping[str, Any]) -> Memory:
        with self._lock:
            memory = self.memory.get(uid)
            if memory is None:
                # Event deduplication starts from the persisted Ready condition: a restart
                # re-emits nothing.
                event = ready_event(body.get("status") or {})
                memory = Memory(last_event=(event.type, event.reason, event.message) if event else None)
                self.memory[uid] = memory
            return memory

    def stand_down(self) -> None:
        """After the Lease was lost (leadership.py): wait until every running pass has ended (the
        fence refuses their requests, so they end soon), then drop what another leader may have
        changed meanwhile — each Application's memory (its last written status, backoffs, Event
        deduplication) and the watch cache's record of what this instance wrote
        (``OwnedObjects.forget_writes``); a new term begins, so the next pass of each Application
        checks kopf's copy against the API server first (docs/operator.md#a-fresh-view)."""
        with self._passing:
            while self._running:
                self._passing.wait()
            self.fresh.new_term()
            self.memory.clear()
        if self.owned is not None:
            self.owned.forget_writes()

    def took_over(self) -> None:
        """This instance leads from now on (leadership.py): a new term, whose first passes check
        kopf's copies of the Applications against the API server (docs/operator.md#a-fresh-view),
        and, in a thread of its own (the election's must not wait for it), the finalizer added to
        each Application created while no instance led (``add_missing_finalizers``) — unless kopf
        has not listed them yet (a process that leads from its start): kopf, seeing them as the
        leader's, adds it itself."""
        if self.fresh.new_term():
            return  # kopf lists the Applications only now, as the leader's: it adds the finalizers itself
        threading.Thread(target=self.add_missing_finalizers, name="oam-takeover", daemon=True).start()

    def add_missing_finalizers(self) -> int:
        """Only the leader adds the finalizer (docs/operator.md#leader-election): an Application
        created while no instance led has none, and kopf, which adds it, sees it again only on its
        next event. So a new leader adds it to each one its term's LIST found without it (a JSON
        patch that tests the uid and the resourceVersion listed: one changed since gets it from
        kopf on that change). The patch is an event too: kopf then starts its loop. Returns how many
        were added."""
        try:
            missing = self.fresh.unfinalized()
        except ApiError as error:
            log.warning("could not list the Applications on taking over: %s", error)
            return 0
        added = 0
        domain = self.settings.domain
        for app in missing:
            path = application_path(app.namespace, app.name)
            operations: list[dict[str, Any]] = [
                {"op": "test", "path": "/metadata/uid", "value": app.uid},
                {"op": "test", "path": "/metadata/resourceVersion", "value": app.resource_version},
                {"op": "add", "path": "/metadata/finalizers/-", "value": domain} if app.has_finalizers
                else {"op": "add", "path": "/metadata/finalizers", "value": [domain]},
            ]
            try:
                self.pass_client.request("patch", "PATCH", path, body=operations,
                                         content_type="application/json-patch+json")
            except ApiError as error:
                if error.status == 422:
                    # A failed test: it changed since the LIST (kopf added the finalizer, most
                    # often, or a namesake replaced it), and kopf adds it on that change if missing.
                    log.debug("finalizer not added: changed since the term's LIST",
                              extra={"fields": {"namespace": app.namespace, "name": app.name}})
                else:
                    log.info("finalizer not added: %s", error,
                             extra={"fields": {"namespace": app.namespace, "name": app.name}})
                continue
            added += 1
            log.info("finalizer added on taking over", extra={"fields": {"namespace": app.namespace,
                                                                         "name": app.name}})
        return added

    def saw_generation(self, uid: str, generation: int) -> None:
        """An event showed ``generation`` of the Application ``uid``: its first sight is when the
        revision's timeline starts (docs/operator.md#the-timeline), not the first pass, which kopf
        may start up to 2 s later."""
        with self._lock:
            known = self._generations.get(uid)
            if known is None or known[0] != generation:
                self._generations[uid] = (generation, datetime.now(UTC))

    def generation_seen(self, uid: str, generation: int) -> datetime | None:
        """When an event first showed ``generation`` of ``uid`` to this process, if one did."""
        with self._lock:
            known = self._generations.get(uid)
        return known[1] if known is not None and known[0] == generation else None

    def forget(self, uid: str, namespace: str, name: str) -> None:
        self.fresh.forget(uid)
        self.transform.forget(namespace, name)  # its URL sources (a shard move, a deletion)
        with self._lock:
            self.memory.pop(uid, None)
            self._generations.pop(uid, None)
            if self._uids.get((namespace, name)) == uid:
                del self._uids[(namespace, name)]
        if self.owned is not None:
            self.owned.retain((namespace, name), ())
        if self.metrics is not None:
            self.metrics.remove_application(namespace, name)

    def _on_change(self, namespace: str, name: str, key: ObjectKey, obj: Mapping[str, Any], deleted: bool,
                   owned: OwnedObjects | None = None) -> None:
        """ownedwatch.py: an object of this Application changed (on the operator's cluster, or on
        the remote one whose watches are ``owned``). Wake it when it waits for the object and the
        object is no longer progressing (readiness), or when the object drifted or drift it
        reported may be resolved (drift.py)."""
        owned = owned or self.owned
        with self._lock:
            uid = self._uids.get((namespace, name))
            memory = self.memory.get(uid) if uid is not None else None
        if uid is None or memory is None or owned is None:
            return
        status = memory.status or {}
        drift = owned.drift(*key)
        judged = key[:2] in memory.health_kinds  # its pass applies the rule again (docs/health.md)
        if status.get("state") == "Ready":
            drifting = drift is not None or bool(status.get("drift"))
            if not drifting and not judged:
                return  # a change that takes nothing the Application sets (status, an HPA's replicas)
            if self.metrics is not None:
                (self.metrics.drift_wakeups_total if drifting else self.metrics.readiness_wakeups_total).inc()
        elif drift is None and not judged and not no_longer_progressing(obj, deleted, self.analyzer):
            return
        elif self.metrics is not None:
            self.metrics.readiness_wakeups_total.inc()
        self.waker(uid)

    def _on_grant(self, namespace: str) -> None:
        """grantwatch.py: a Role or RoleBinding of ``namespace`` changed. Its Applications whose
        passes end in a 403 run at once, and a 403 right after is retried quietly again (the
        API server's authorizer may be a moment behind the grant, forbidden.py)."""
        with self._lock:
            uids = [uid for (ns, _), uid in self._uids.items() if ns == namespace]
            refused = [(uid, self.memory[uid]) for uid in uids if uid in self.memory]
        for uid, memory in refused:
            if memory.forbidden.since is None:
                continue
            with self._lock:  # the woken pass's writer opens a new window (this thread never touches Memory)
                self._granted.add(uid)
            self.waker(uid)

    def _on_secret_change(self, namespace: str, name: str) -> None:
        """profilesecrets.py: a kubeconfig Secret changed (rotated, deleted, created): wake the
        Applications whose profile names it, so they reconnect at once."""
        operator_namespace, provider = self.remotes.operator_namespace, self.settings.inventory_access_provider
        profiles = {profile for profile, body in self.targets.all().items()
                    if _names_secret(body, operator_namespace, provider) == (namespace, name)}
        if not profiles:
            return
        with self._lock:
            woken = [uid for uid, memory in self.memory.items()
                     if {(memory.status or {}).get("profile") or "", memory.profile_name} & profiles]
        for uid in woken:
            self.waker(uid)

    def _on_watch_state(self, kind: WatchedKind, state: str) -> None:
        if self.metrics is not None:
            self.metrics.set_watch_state(kind.group, kind.kind, state)

    def dependency_wakeups(self, event_type: str | None, body: Mapping[str, Any]) -> set[str]:
        """Feed the Application index one watch event; the UIDs of the Applications to wake."""
        woken = self.apps.observe(event_type, body)
        if woken and self.metrics is not None:
            self.metrics.dependency_wakeups_total.inc(len(woken))
        return woken

    def profile_changed(self, name: str, body: dict[str, Any] | None) -> list[str]:
        """A ClusterProfile event (``body`` ``None``: deleted): keep it, and the uids of the
        Applications to wake — those using or asking for it when its spec changed, or it came
        or went, and those with a topology policy when its labels changed, or it came or went
        (docs/multicluster.md#topology)."""
        old, new = self.targets.own_changed(name, body)
        return self._woken_by(name, old, new)

    def _on_standard_change(self, key: tuple[str, str], old: Mapping[str, Any] | None,
                            new: Mapping[str, Any] | None) -> None:
        """inventory.py: a standard ClusterProfile changed; wake as for the operator's own kind
        (its access provider and ControlPlaneHealthy are part of what it delivers by)."""
        before, after = self.targets.standard_changed(key, old)
        for uid in self._woken_by(key[1], before, after):
            self.waker(uid)

    def _woken_by(self, name: str, old: Mapping[str, Any] | None, new: Mapping[str, Any] | None) -> list[str]:
        """The uids to wake when the profile called ``name`` was ``old`` and is ``new``."""
        provider = self.settings.inventory_access_provider
        came_or_went = (old is None) != (new is None)
        spec_changed = came_or_went or delivery_view(old, provider) != delivery_view(new, provider)
        labels_changed = came_or_went or _labels(old) != _labels(new)
        if not spec_changed and not labels_changed:
            return []
        woken = []
        with self._lock:
            for uid, memory in self.memory.items():
                status = memory.status or {}
                uses = name in (status.get("profile") or "", memory.profile_name)
                fleet = status.get("clusterSummary") is not None  # it has a topology policy
                if (spec_changed and uses) or (labels_changed and fleet):
                    woken.append(uid)
        return woken

    def definition_changed(self, kind: str, name: str, body: dict[str, Any] | None) -> list[str]:
        """A ComponentDefinition or TraitDefinition event (``body`` ``None``: deleted): load it
        (definitions.py), and the uids of the Applications naming its type, to wake."""
        types = self.definitions.changed(kind, name, body)
        with self._lock:
            return [uid for uid, memory in self.memory.items()
                    if any(names_type(memory.types, kind, type_name) for type_name in types)]

    def profile(self, name: str) -> Mapping[str, Any] | None:
        """The ClusterProfile called ``name``, of either kind (targets.py), once kopf has listed
        the operator's own kind (listedonce.py)."""
        self.profiles_listed.wait()
        return self.targets.get(name)

    def _listed_profile(self, item: Mapping[str, Any]) -> None:
        """A ClusterProfile of kopf's first LIST of them, kept before kopf's handler gets it
        (listedonce.py); the Applications its arrival concerns are woken as by the event."""
        name = str((item.get("metadata") or {}).get("name") or "")
        if name:
            for uid in self.profile_changed(name, plain(item)):
                self.waker(uid)

    def all_profiles(self) -> dict[str, Mapping[str, Any]]:
        """Every ClusterProfile, of either kind, once kopf has listed the operator's own kind."""
        self.profiles_listed.wait()
        return self.targets.all()

    # -- passes ---------------------------------------------------------------------------------

    def run_apply(self, uid: str, body: Mapping[str, Any], admission: Mapping[str, Any] | None = None,
                  routine: bool = False) -> PassResult:
        """One apply pass; ``admission``: how the pass left the queue (passlimiter.Admission), for its
        log line; ``routine``: nobody asked for it, so it is skipped when it cannot find anything (quiet.py)."""
        if routine:
            skipped = self._quiet(uid, body)
            if skipped is not None:
                return skipped
        return self._run("apply", uid, body, admission, urgent=not routine)

    def _quiet(self, uid: str, body: Mapping[str, Any]) -> PassResult | None:
        """The skipped routine pass's result (the confirming pass's status and delay), or ``None``:
        a full pass is due (docs/operator.md#quiet-routine-passes)."""
        owned = self.owned
        if owned is None:
            return None  # nothing watched: nothing confirms (the metric counts only what could)
        with self._lock:
            memory = self.memory.get(uid)
        if memory is None or memory.status is None or memory.confirmed is None:
            # why the last full pass confirmed nothing; none in this process yet: the first
            self._full_pass((memory.unconfirmed if memory is not None else "") or FullReason.FIRST)
            return None
        confirmed = memory.confirmed
        generation = int((body.get("metadata") or {}).get("generation") or 0)
        refused = refusal(confirmed, generation=generation, epoch=owned.epoch, now=time.monotonic())
        if refused is not None:
            self._full_pass(refused)
            return None
        if self.metrics is not None:
            self.metrics.quiet_passes_total.inc()
        return PassResult(status=memory.status, delay=confirmed.delay, outcome="quiet")

    def _full_pass(self, reason: str) -> None:
        """A routine pass runs in full for ``reason`` (quiet.FullReason): counted."""
        if self.metrics is not None:
            self.metrics.routine_full_passes_total.labels(reason).inc()

    def _confirm(self, memory: Memory, app: Application, epoch: int | None, result: PassResult) -> None:
        """Remember a full pass that confirmed the Application, as persisted (quiet.py); forget any other's."""
        memory.confirmed, memory.unconfirmed = None, result.unconfirmed or FullReason.UNWRITTEN
        if (epoch is not None and result.confirms is not None and not result.gone and result.delay
                and memory.persisted is not None and memory.persisted == result.status):
            memory.confirmed = Confirmed(app.generation, epoch, time.monotonic() + result.confirms, result.delay)
            memory.unconfirmed = ""

    def run_delete(self, uid: str, body: Mapping[str, Any], admission: Mapping[str, Any] | None = None) -> PassResult:
        return self._run("delete", uid, body, admission, urgent=True)

    def _run(self, branch: str, uid: str, body: Mapping[str, Any],
             admission: Mapping[str, Any] | None = None, *, urgent: bool = False) -> PassResult:
        with self._passing:
            self._running += 1
        if urgent:
            self.urgency.started()
        try:
            return self._counted(branch, uid, body, admission, urgent)
        finally:
            if urgent:
                self.urgency.ended()
            with self._passing:
                self._running -= 1
                self._passing.notify_all()

    def _counted(self, branch: str, uid: str, body: Mapping[str, Any],
                 admission: Mapping[str, Any] | None, urgent: bool) -> PassResult:
        started = time.monotonic()
        meta = body.get("metadata") or {}
        where = {"namespace": meta.get("namespace"), "name": meta.get("name"), "uid": uid, "branch": branch}
        try:
            # A pass somebody asked for reads its Application rather than wait for the term's LIST
            # (freshview.py, docs/operator.md#a-quiet-restart).
            fresh = self.fresh.body_for(uid, body, urgent=urgent)
        except ApiError as error:
            return self._unverified(uid, body, error, where)
        if fresh is None:
            return self._gone(uid, body, where)
        app = Application.of(fresh)  # the one view of the Application this pass carries
        memory = self.memory_of(uid, app.body)
        memory.types = spec_types(app.raw_spec)  # a changed definition of one of these wakes it
        with self._lock:
            self._uids[app.ref] = uid
            granted = uid in self._granted
            self._granted.discard(uid)

        def tell(result: PassResult) -> None:
            """The epilogue's last step: metrics, the watches of the inventory's kinds, the log line."""
            seconds = time.monotonic() - started
            self._observe(branch, app, result, seconds)
            self._track(app.ref, result)
            self._log_pass(branch, app, result, seconds, admission)

        aftermath = Aftermath(history=self.history.record if branch == "apply" else None, told=tell,
                              gone=lambda _: self._gone(uid, app.body, where))
        writer = self.status_writer(app, memory, aftermath, granted=granted)
        # The pass works on its own deep copy of the status (passes._Pass), so the cached
        # status is not mutated and needs no second copy here.
        if branch == "apply":
            epoch = self.owned.epoch if self.owned is not None else None  # before the pass reads the watches
            result = writer.conclude(apply_pass(app, memory, self.env, writer))
            self._confirm(memory, app, epoch, result)
            if self.tracer is not None and result.traced is not None:
                self.tracer.export(result.traced)  # after the status write (docs/operator.md#tracing)
            return result
        return writer.conclude(delete_pass(app, memory, self.env, writer))

    @staticmethod
    def _log_pass(branch: str, app: Application, result: PassResult, seconds: float,
                  admission: Mapping[str, Any] | None) -> None:
        fields: dict[str, Any] = {
            "namespace": app.namespace, "name": app.name, "generation": app.meta.get("generation"),
            "branch": branch, "outcome": result.outcome, "state": result.status.get("state"),
            "operations": result.operations, "seconds": round(seconds, 3),
            **(admission or {}),
        }
        failure = pass_failure(result)
        if failure is None:
            log.info("pass finished", extra={"fields": fields})
        else:
            # An error's log line carries its reason and text, not just outcome=error.
            level, reason, message = failure
            fields.update({"reason": reason, "error": message, "error_type": result.error_type})
            log.log(level, "pass failed", extra={"fields": fields})

    def _gone(self, uid: str, body: Mapping[str, Any], where: Mapping[str, Any]) -> PassResult:
        """The Application of ``uid`` no longer exists (deleted, or a namesake of another uid in its
        place): the pass acts on nothing, and it is forgotten (docs/operator.md#a-fresh-view)."""
        log.info("Application gone: nothing done", extra={"fields": dict(where)})
        self.forget(uid, str(where.get("namespace") or ""), str(where.get("name") or ""))
        return PassResult(status=dict(body.get("status") or {}), delay=None, outcome="gone", gone=True)

    def _unverified(self, uid: str, body: Mapping[str, Any], error: ApiError,
                    where: Mapping[str, Any]) -> PassResult:
        """Whether kopf's copy is fresh could not be told (the API server did not answer): the pass
        acts on nothing and runs again on the per-Application retry backoff (backoff.py)."""
        result = unverified(self.memory_of(uid, body), body, error)
        log.warning("could not read the Application afresh: %s", error,
                    extra={"fields": {**where, "retry_in": round(result.delay or 0.0, 3)}})
        return result

    def _track(self, owner: tuple[str, str], result: PassResult) -> None:
        """Watch the kinds the Application's inventory holds; forget what it no longer holds."""
        if self.owned is None:
            return
        if result.finished:
            self.owned.retain(owner, ())
            return
        if result.inventory is None:  # the pass did not get as far as the inventory: nothing changed
            return
        self.owned.ensure(result.inventory)
        self.owned.retain(owner, [item.identity() for item in result.inventory])

    def status_writer(self, body: Application | Mapping[str, Any], memory: Memory,
                      aftermath: Aftermath | None = None, *, granted: bool = False) -> StatusWriter:
        """The writer of one pass: its status patches go to the Application's status subresource."""
        app = Application.of(body)
        path, uid, meta = app.path("status"), app.uid, app.meta

        def send(patch: dict[str, Any]) -> None:
            # A JSON patch whose first operation tests the uid: a pass of an Application that was
            # deleted and created again under its name never writes into the namesake's status
            # (docs/operator.md#a-fresh-view).
            status = {key: value for key, value in (patch.get("status") or {}).items() if value is not None}
            operations = [{"op": "test", "path": "/metadata/uid", "value": uid},
                          {"op": "add", "path": "/status", "value": status}]
            try:
                self.pass_client.request("patch", "PATCH", path, body=operations,
                                         content_type="application/json-patch+json",
                                         query=[("fieldManager", self.settings.domain)])
            except ApiError as error:
                if error.status == 404 or (error.status == 422 and not still_there(self.pass_client, meta, uid)):
                    raise ApplicationGone(str(error)) from error
                raise

        return StatusWriter(app, memory, send=send, post=lambda event: self._post_event(app.body, event),
                            error_interval=self.settings.default_interval_duration.total_seconds(),
                            requested_at_key=f"{self.settings.domain}/requested-at", aftermath=aftermath,
                            granted=granted)

    def _post_event(self, body: Mapping[str, Any], event: Event) -> None:
        meta = body["metadata"]
        manifest = event_manifest(body, event.type, event.reason, event.message, component=self.settings.domain,
                                  now=datetime.now(UTC), instance=self.pod_name or "oam-operator")
        try:
            self.pass_client.request("create", "POST", f"/api/v1/namespaces/{meta['namespace']}/events",
                                     body=manifest)
        except ApiError as error:
            log.warning("posting an Event failed: %s", error)

    def _observe(self, branch: str, app: Application, result: PassResult, seconds: float) -> None:
        if self.metrics is None:
            return
        metrics = self.metrics
        metrics.observe_pass(branch, result.outcome, seconds)
        if result.error_type is not None:
            metrics.count_error(result.error_type)
        if result.drift_corrections:
            metrics.drift_corrections_total.inc(result.drift_corrections)
        if result.finished:
            metrics.remove_application(app.namespace, app.name)
        else:
            status = result.status
            metrics.set_application(app.namespace, app.name, int(status.get("objects") or 0),
                                    int(status.get("objects") or 0) - int(status.get("readyObjects") or 0))
            metrics.track_application(app.namespace, app.name, not_ready_since=not_ready_since(status),
                                      timeout_seconds=self._timeout_seconds(app.raw_spec),
                                      errors=int(result.error_type is not None),
                                      drift_corrections=result.drift_corrections,
                                      rolled_back=status.get("rolledBack") is not None)

    def _timeout_seconds(self, spec: Mapping[str, Any]) -> float:
        """The Application's timeout (spec.timeout, else --default-timeout); the default when unreadable
        (the pass refuses such a spec itself)."""
        timeout = spec.get("timeout")
        try:
            return parse_go_duration(str(timeout)).total_seconds() if timeout else self._default_timeout
        except ValueError:
            return self._default_timeout

    @property
    def _default_timeout(self) -> float:
        return self.settings.default_timeout_duration.total_seconds()

    def states(self) -> dict[str, int]:
        """Applications per state, for the gauge when it is scraped."""
        counts: dict[str, int] = {}
        with self._lock:
            for memory in self.memory.values():
                state = (memory.status or {}).get("state")
                if state:
                    counts[state] = counts.get(state, 0) + 1
        return counts

    def close(self) -> None:
        self.grants.stop()
        if self.standard is not None:
            self.standard.stop()
        if self.owned is not None:
            self.owned.stop()
        self.remotes.close()
        with contextlib.suppress(Exception):
            self.client.executor.shutdown(wait=True)
        for client in {id(c): c for c in (self.pass_client, self.lease_client, self.client) if c is not None}.values():
            client.close()


def _api_client(kubeconfig: str | None, pool_size: int) -> Any:
    """The operator's ``ApiClient``: in-cluster configuration when running in a Pod, else kubeconfig."""
    from kubernetes import client, config

    configuration = client.Configuration()
    if kubeconfig is None and in_cluster():
        config.load_incluster_config(client_configuration=configuration)  # type: ignore[no-untyped-call]
    else:
        config.load_kube_config(config_file=kubeconfig, client_configuration=configuration)  # type: ignore[no-untyped-call]
    # One pooled connection per worker thread: urllib3 opens a new connection (a TLS handshake,
    # costly on both ends) for every request beyond the pool and then throws it away, so a pool
    # smaller than the thread count made every burst of passes re-handshake.
    configuration.connection_pool_maxsize = max(pool_size, configuration.connection_pool_maxsize or 0)
    return client.ApiClient(configuration)


def pass_failure(result: PassResult) -> tuple[int, str, str] | None:
    """``(log level, reason, message)`` of a pass that failed, ``None`` for one that did not.

    An ``Error`` state logs at ERROR; a retried API failure (state Pending, an error type set)
    at WARNING: it is expected to clear by itself.
    """
    if result.outcome != "error" and result.error_type is None:
        return None
    ready = ready_condition(result.status) or {}
    level = logging.ERROR if result.outcome == "error" else logging.WARNING
    return level, str(ready.get("reason", "")), str(ready.get("message", ""))


def _names_secret(profile: Mapping[str, Any], operator_namespace: str, provider: str) -> tuple[str, str] | None:
    """(namespace, name) of the kubeconfig Secret a ClusterProfile names, or of the token Secret of
    a standard one (docs/multicluster.md#the-standard-cluster-inventory); ``None``: none."""
    if is_standard(profile):
        try:
            access = access_of(profile, provider, operator_namespace)
        except DeliveryRefused:
            return None
        return access.secret_namespace, access.secret_name
    spec = profile.get("spec")
    kube_config = spec.get("kubeConfig") if isinstance(spec, Mapping) else None
    ref = kube_config.get("secretRef") if isinstance(kube_config, Mapping) else None
    if not isinstance(ref, Mapping) or not ref.get("name"):
        return None
    return str(ref.get("namespace") or operator_namespace), str(ref["name"])
