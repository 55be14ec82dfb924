"""Operator settings (docs/operator.md#settings): every flag of ``oam-operator run``, from flags and environment.

Each setting ``x_y`` has the flag ``--x-y`` and the environment variable ``OAM_OPERATOR_X_Y``
(``namespaces`` is ``--namespace``, repeatable, and ``OAM_OPERATOR_NAMESPACE``, comma-separated);
a flag wins over the environment. A plain pydantic model rather than pydantic-settings: the
rules are few, and every invalid value must become one line naming the flag (``SettingsError``).

Decisions where the spec is silent:

- durations use Go's syntax (``common/durations.py``) and keep their authored text (messages print
  ``10m`` as written); ``--default-interval`` and ``--default-timeout`` obey the CRD minimums
  (30s, 10s) because they stand in for ``spec.interval``/``spec.timeout``; ``--reapply-interval``
  may be ``0`` (re-apply on every pass) but not negative;
- ``--kube-api-qps 0`` disables client-side rate limiting (as the reconciler's limiter does);
  when neither ``--kube-api-qps`` nor its variable is given, the bucket (50 qps, ``--kube-api-burst``)
  applies only until the API server shows it runs API Priority and Fairness (its response headers,
  ``reconciler/flowcontrol.py``), then the server's flow control and its 429 ``Retry-After`` pace
  the operator, as kpt does; an explicit value always keeps the bucket (``kube_api_qps_explicit``);
- ``--max-concurrent-reconciles`` is a cap: with ``--adaptive-concurrency`` (the default) the
  passes in flight start at 4 and follow what the API server shows, up to the cap
  (docs/operator.md#adaptive-concurrency); ``--no-adaptive-concurrency`` runs exactly the cap;
- ``--dependent-events`` is off by default: a reconcile posts Events on the Application (one per
  change of its Ready condition, docs/operator.md#events-on-the-application), not one per object it created or updated
  (what Flux does);
  ``--dependent-events`` turns the reconciler's per-object Events on again;
- ``--shard NAME`` makes the instance reconcile only Applications labelled
  ``<domain>/shard=NAME`` (a DNS-1123 label: it also names the shard's Deployment and peering);
  without it, only Applications without that label (Flux's sharding);
  with ``--peering``, each shard peers under ``<peering>-<shard>`` (``peering_name``), so the
  replicas of one shard pause each other and never another shard;
- ``--default-profile ""`` means "no default profile": Applications without ``spec.profile`` use
  the empty profile; ``--metrics-port 0`` disables metrics, the health port cannot be disabled;
- ``--dev`` sets the peering priority to 666 whatever ``--priority`` says (kopf's meaning) and
  does not by itself enable peering; it also keeps the instance out of leader election (``elects``);
- booleans accept true/false, 1/0, yes/no, on/off; enum values are matched case-insensitively;
- URL sources (``--url-sources``, on by default) may reach only public addresses unless a network
  is listed in ``--url-source-allowed-networks`` (comma-separated CIDRs or addresses), which also
  governs chart downloads; ``--helm-binary`` names the renderer of ``delivery: template`` charts
  (docs/operator.md#url-sources-and-charts).
- least privilege by default (docs/operator.md#identity-hostile-input-and-limits): an Application
  without ``spec.serviceAccountName`` acts as ``--default-service-account`` (``default``: the
  ServiceAccount every namespace has, with no rights until someone grants them) of its
  namespace; acting with the operator's own identity needs ``--use-operator-identity``;
  ``--default-service-account ""`` without it makes such Applications fail with
  ``NotPermitted`` (see ``controller/reconcile/tenancy.py``).
- the admission webhook (``--admission``, off by default; docs/admission.md) serves the pair in
  ``--admission-cert-dir`` (cert-manager's Secret, mounted) or, without it, issues its own
  certificate for ``--admission-hosts`` into the Secret ``--admission-secret`` (``NAMESPACE/NAME``)
  and keeps the CA of ``--admission-webhook-configuration`` current; ``run`` refuses
  ``--admission`` with neither the directory nor that Secret and those hosts.
- leader election (``--leader-election``, on by default as in Flux's controllers;
  docs/operator.md#leader-election): one Lease per shard, ``--leader-election-id`` or
  ``<id>-shard-<shard>`` (``lease_name``), in the operator's namespace: ``--operator-namespace``,
  else ``POD_NAMESPACE`` (the chart sets it from the downward API), else the namespace of the
  mounted ServiceAccount; ``run`` refuses to start without one. The three durations default to
  client-go's (15s, 10s, 2s) and must keep ``retry period < renew deadline < lease duration``
  (``common/leasetimings.timing_problem`` words the rule).
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable, Mapping
from datetime import timedelta
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, ValidationError

from oam_operator.common.dns1123 import DNS1123_LABEL_MAX, DNS1123_SUBDOMAIN_MAX, is_dns1123_label, is_dns1123_subdomain
from oam_operator.common.durations import format_seconds, parse_go_duration
from oam_operator.common.leasetimings import timing_problem
from oam_operator.oam.formatting.choices import unknown_value
from oam_operator.oam.remote.addresses import parse_networks
from oam_operator.persisted.objectpolicies import AdoptionPolicy, UpdatePolicy

__all__ = [
    "DESCRIPTIONS",
    "ENV_PREFIX",
    "GROUPS",
    "LogFormat",
    "LogLevel",
    "Settings",
    "SettingsError",
    "env_var",
    "flag_name",
    "metavar",
]

ENV_PREFIX = "OAM_OPERATOR_"
DEFAULT_QPS = 50.0
DEV_PRIORITY = 666
_FLAG_OVERRIDES = {"namespaces": "namespace"}
#: Where a Pod's ServiceAccount namespace is mounted (the last place the Lease's namespace is looked for).
SERVICE_ACCOUNT_NAMESPACE = Path("/var/run/secrets/kubernetes.io/serviceaccount/namespace")
_TRUE = frozenset({"true", "1", "yes", "on"})
_FALSE = frozenset({"false", "0", "no", "off"})


class LogFormat(StrEnum):
    JSON = "json"
    TEXT = "text"


class LogLevel(StrEnum):
    DEBUG = "debug"
    INFO = "info"
    WARNING = "warning"
    ERROR = "error"


class SettingsError(ValueError):
    """An invalid setting; ``str()`` is the one-line message printed at startup."""

    def __init__(self, setting: str, message: str) -> None:
        super().__init__(message)
        self.setting = setting


def flag_name(setting: str) -> str:
    """``max_concurrent_reconciles`` → ``--max-concurrent-reconciles``."""
    return "--" + _FLAG_OVERRIDES.get(setting, setting).replace("_", "-")


def env_var(setting: str) -> str:
    """``max_concurrent_reconciles`` → ``OAM_OPERATOR_MAX_CONCURRENT_RECONCILES``."""
    return ENV_PREFIX + _FLAG_OVERRIDES.get(setting, setting).upper()


# -- value parsers: each accepts the typed value (from a flag) or its text (from either source) --


def _integer(minimum: int | None = None, maximum: int | None = None) -> Callable[[Any], int]:
    def parse(value: Any) -> int:
        number: int
        if isinstance(value, int) and not isinstance(value, bool):
            number = value
        elif isinstance(value, str) and re.fullmatch(r"[+-]?[0-9]+", value.strip()):
            number = int(value.strip())
        else:
            raise ValueError("must be an integer")
        if minimum is not None and maximum is not None and not minimum <= number <= maximum:
            raise ValueError(f"must be between {minimum} and {maximum}")
        if minimum is not None and number < minimum:
            raise ValueError(f"must be at least {minimum}")
        return number

    return parse


def _number(value: Any) -> float:
    try:
        if isinstance(value, bool):
            raise ValueError
        number = float(value.strip() if isinstance(value, str) else value)
    except (TypeError, ValueError):
        raise ValueError("must be a number") from None
    if not number >= 0 or number == float("inf"):  # also refuses NaN
        raise ValueError("must be a number of at least 0")
    return number


def _boolean(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise ValueError("must be true or false")


def _duration(minimum: timedelta) -> Callable[[Any], str]:
    def parse(value: Any) -> str:
        text = value.strip() if isinstance(value, str) else None
        try:
            parsed = parse_go_duration(text) if text else None
        except ValueError:
            parsed = None
        if text is None or parsed is None:
            raise ValueError("must be a duration such as 30s, 10m or 1h30m")
        if parsed < minimum:
            raise ValueError(f"must be at least {format_seconds(minimum.total_seconds())}")
        return text

    return parse


def _choice(enum: type[StrEnum]) -> Callable[[Any], Any]:
    by_lower = {member.value.lower(): member for member in enum}

    def parse(value: Any) -> Any:
        member = by_lower.get(str(value).strip().lower())
        if member is None:  # "AdoptionPolicy" -> "adoption policy"
            noun = re.sub(r"(?<!^)(?=[A-Z])", " ", enum.__name__).lower()
            raise ValueError(unknown_value(noun, str(value).strip(), [m.value for m in enum]))
        return member

    return parse


_ALPHABET = {"label": "lower-case letters, digits and '-'", "subdomain": "lower-case letters, digits, '-' and '.'"}


def _name(kind: str, *, empty: bool) -> Callable[[Any], str]:
    valid, limit = (
        (is_dns1123_label, DNS1123_LABEL_MAX) if kind == "label" else (is_dns1123_subdomain, DNS1123_SUBDOMAIN_MAX)
    )

    def parse(value: Any) -> str:
        text = str(value).strip()
        if text == "" and empty:
            return ""
        if not valid(text):
            raise ValueError(f"must be a DNS-1123 {kind} ({_ALPHABET[kind]}; at most {limit} characters)")
        return text

    return parse


def _namespaces(value: Any) -> tuple[str, ...]:
    items = value.split(",") if isinstance(value, str) else list(value)
    check = _name("label", empty=False)
    result: list[str] = []
    for item in items:
        if not str(item).strip():
            continue
        try:
            name = check(item)
        except ValueError as error:
            raise ValueError(f'namespace "{str(item).strip()}" {error}') from None
        if name not in result:
            result.append(name)
    return tuple(result)


def _cluster_id(value: Any) -> str:
    text = str(value).strip()
    if "/" in text or any(c.isspace() for c in text):
        raise ValueError("must not contain '/' or whitespace")
    return text


def _networks(value: Any) -> tuple[str, ...]:
    items = value.split(",") if isinstance(value, str) else [str(item) for item in value]
    return tuple(str(network) for network in parse_networks(items))


def _program(value: Any) -> str:
    text = str(value).strip()
    if not text:
        raise ValueError("must name a program (a path or a name on PATH)")
    return text


def _peering(value: Any) -> str | None:
    if value is None or str(value).strip() == "":
        return None
    return _name("subdomain", empty=False)(value)


def _address(value: Any) -> str:
    text = str(value).strip()
    try:
        ipaddress.ip_address(text)
    except ValueError:
        raise ValueError("must be an IP address to listen on (0.0.0.0: every interface)") from None
    return text


def _text(value: Any) -> str:
    return str(value).strip()


def _secret_ref(value: Any) -> str:
    text = str(value).strip()
    if text == "":
        return ""
    namespace, slash, name = text.partition("/")
    try:
        if not slash:
            raise ValueError
        _name("label", empty=False)(namespace)
        _name("subdomain", empty=False)(name)
    except ValueError:
        raise ValueError("must be NAMESPACE/NAME of a Secret") from None
    return text


def _hosts(value: Any) -> tuple[str, ...]:
    items = value.split(",") if isinstance(value, str) else [str(item) for item in value]
    hosts: list[str] = []
    for item in (str(i).strip() for i in items):
        if not item:
            continue
        try:
            ipaddress.ip_address(item)
        except ValueError:
            if not is_dns1123_subdomain(item):
                raise ValueError(f'"{item}" is neither a DNS name nor an IP address') from None
        if item not in hosts:
            hosts.append(item)
    return tuple(hosts)


class Settings(BaseModel):
    """The operator's configuration; construct it with ``from_sources``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    domain: Annotated[str, BeforeValidator(_name("subdomain", empty=False))] = "oam-operator.dev"
    namespaces: Annotated[tuple[str, ...], BeforeValidator(_namespaces)] = ()
    max_concurrent_reconciles: Annotated[int, BeforeValidator(_integer(1))] = 10
    #: the limit of passes in flight adapts below the cap (controller/service/adaptive.py); off: it is the cap
    adaptive_concurrency: Annotated[bool, BeforeValidator(_boolean)] = True
    apply_concurrency: Annotated[int, BeforeValidator(_integer(1))] = 8
    kube_api_qps: Annotated[float, BeforeValidator(_number)] = DEFAULT_QPS
    kube_api_burst: Annotated[int, BeforeValidator(_integer(1))] = 100
    default_interval: Annotated[str, BeforeValidator(_duration(timedelta(seconds=30)))] = "10m"
    default_timeout: Annotated[str, BeforeValidator(_duration(timedelta(seconds=10)))] = "10m"
    reapply_interval: Annotated[str, BeforeValidator(_duration(timedelta(0)))] = "60m"
    default_adoption_policy: Annotated[AdoptionPolicy, BeforeValidator(_choice(AdoptionPolicy))] = (
        AdoptionPolicy.IF_UNOWNED
    )
    default_update_policy: Annotated[UpdatePolicy, BeforeValidator(_choice(UpdatePolicy))] = UpdatePolicy.SSA_MERGE
    default_profile: Annotated[str, BeforeValidator(_name("subdomain", empty=True))] = "default"
    cluster_id: Annotated[str, BeforeValidator(_cluster_id)] = ""
    require_service_account: Annotated[bool, BeforeValidator(_boolean)] = False
    default_service_account: Annotated[str, BeforeValidator(_name("subdomain", empty=True))] = "default"
    use_operator_identity: Annotated[bool, BeforeValidator(_boolean)] = False
    allow_cluster_scoped_objects: Annotated[bool, BeforeValidator(_boolean)] = False
    #: the most an existing cluster-scoped object is adopted, whatever the Application or the object asks
    cluster_scoped_adoption_policy: Annotated[AdoptionPolicy, BeforeValidator(_choice(AdoptionPolicy))] = (
        AdoptionPolicy.NEVER
    )
    allow_cross_namespace_objects: Annotated[bool, BeforeValidator(_boolean)] = False
    #: app-dependency and health-checks policies may name another namespace (operatorpolicies/resolve.py)
    allow_cross_namespace_dependencies: Annotated[bool, BeforeValidator(_boolean)] = False
    #: an app-dependency target missing this long gets a Warning Event (operatorpolicies/missing.py)
    missing_dependency_grace: Annotated[str, BeforeValidator(_duration(timedelta(0)))] = "1m"
    dependent_events: Annotated[bool, BeforeValidator(_boolean)] = False
    readiness_watch: Annotated[bool, BeforeValidator(_boolean)] = True
    url_sources: Annotated[bool, BeforeValidator(_boolean)] = True
    url_source_allowed_networks: Annotated[tuple[str, ...], BeforeValidator(_networks)] = ()
    notification_allowed_networks: Annotated[tuple[str, ...], BeforeValidator(_networks)] = ()
    helm_binary: Annotated[str, BeforeValidator(_program)] = "helm"
    metrics_port: Annotated[int, BeforeValidator(_integer(0, 65535))] = 8080
    health_port: Annotated[int, BeforeValidator(_integer(1, 65535))] = 8081
    log_format: Annotated[LogFormat, BeforeValidator(_choice(LogFormat))] = LogFormat.JSON
    log_level: Annotated[LogLevel, BeforeValidator(_choice(LogLevel))] = LogLevel.INFO
    shard: Annotated[str, BeforeValidator(_name("label", empty=True))] = ""
    peering: Annotated[str | None, BeforeValidator(_peering)] = None
    priority: Annotated[int, BeforeValidator(_integer())] = 100
    dev: Annotated[bool, BeforeValidator(_boolean)] = False
    admission: Annotated[bool, BeforeValidator(_boolean)] = False
    admission_address: Annotated[str, BeforeValidator(_address)] = "0.0.0.0"
    admission_port: Annotated[int, BeforeValidator(_integer(1, 65535))] = 9443
    admission_cert_dir: Annotated[str, BeforeValidator(_text)] = ""
    admission_secret: Annotated[str, BeforeValidator(_secret_ref)] = ""
    admission_hosts: Annotated[tuple[str, ...], BeforeValidator(_hosts)] = ()
    admission_webhook_configuration: Annotated[str, BeforeValidator(_name("subdomain", empty=True))] = ""
    leader_election: Annotated[bool, BeforeValidator(_boolean)] = True
    leader_election_id: Annotated[str, BeforeValidator(_name("subdomain", empty=False))] = "oam-operator"
    leader_election_lease_duration: Annotated[str, BeforeValidator(_duration(timedelta(0)))] = "15s"
    leader_election_renew_deadline: Annotated[str, BeforeValidator(_duration(timedelta(0)))] = "10s"
    leader_election_retry_period: Annotated[str, BeforeValidator(_duration(timedelta(0)))] = "2s"
    operator_namespace: Annotated[str, BeforeValidator(_name("label", empty=True))] = ""
    #: namespaces besides the operator's whose Secrets ClusterProfiles may name (docs/multicluster.md)
    profile_secret_namespaces: Annotated[tuple[str, ...], BeforeValidator(_namespaces)] = ()
    #: namespaces whose multicluster.x-k8s.io ClusterProfiles are targets too
    #: (docs/multicluster.md#the-standard-cluster-inventory)
    inventory_namespaces: Annotated[tuple[str, ...], BeforeValidator(_namespaces)] = ()
    #: the access provider of those ClusterProfiles the operator connects through
    inventory_access_provider: Annotated[str, BeforeValidator(_name("subdomain", empty=False))] = "secretreader"

    @classmethod
    def describe(cls, name: str) -> str:
        """The one-line meaning of setting ``name`` (``run --help``); ``DESCRIPTIONS`` holds them."""
        return DESCRIPTIONS.get(name, "")

    @classmethod
    def from_sources(cls, cli_flags: Mapping[str, Any], environ: Mapping[str, str]) -> Settings:
        """Flags (by setting name; ``None`` or an empty tuple = not given) over ``environ`` over defaults.

        Raises ``SettingsError`` for the first invalid value, in declaration order.
        """
        unknown = sorted(set(cli_flags) - set(cls.model_fields))
        if unknown:
            raise SettingsError(unknown[0], f"unknown setting {unknown[0]}")
        values: dict[str, Any] = {}
        sources: dict[str, str] = {}
        for name in cls.model_fields:
            flag = cli_flags.get(name)
            if flag is not None and flag != ():
                values[name], sources[name] = flag, flag_name(name)
            elif env_var(name) in environ:
                values[name] = environ[env_var(name)]
                sources[name] = f"{flag_name(name)} ({env_var(name)})"
        try:
            return cls.model_validate(values)
        except ValidationError as error:
            first = error.errors()[0]
            name = str(first["loc"][0])
            reason = str(first["msg"]).removeprefix("Value error, ")
            raw = values.get(name)
            shown = ",".join(map(str, raw)) if isinstance(raw, list | tuple) else str(raw)
            where = sources.get(name, flag_name(name))
            raise SettingsError(name, f'invalid value for {where}: "{shown}": {reason}') from None

    def combination_error(self, environ: Mapping[str, str] | None = None,
                          namespace_file: Path = SERVICE_ACCOUNT_NAMESPACE) -> SettingsError | None:
        """A setting that is valid alone but missing for another one, or settings that cannot work
        together (checked by ``run`` at startup; the Lease's namespace only when ``environ`` is given)."""
        if self.admission and not self.admission_cert_dir:
            for needed in ("admission_secret", "admission_hosts"):
                if not getattr(self, needed):
                    return SettingsError(needed, f"--admission without --admission-cert-dir needs {flag_name(needed)} "
                                                 "(the self-signed certificate's Secret and host names)")
        if self.elects:
            names = ("leader_election_lease_duration", "leader_election_renew_deadline", "leader_election_retry_period")
            flags = (flag_name(names[0]), flag_name(names[1]), flag_name(names[2]))
            problem = timing_problem(*self.lease_timings, names=flags, shown=(
                self.leader_election_lease_duration, self.leader_election_renew_deadline,
                self.leader_election_retry_period))
            if problem is not None:  # the setting the rule starts with
                first = min(range(3), key=lambda i: (problem.find(flags[i]) % (len(problem) + 1)))
                return SettingsError(names[first], problem)
            if environ is not None and not self.lease_namespace(environ, namespace_file):
                return SettingsError("operator_namespace", "--leader-election needs the operator's namespace for "
                                     "its Lease: set POD_NAMESPACE (the chart does) or --operator-namespace "
                                     "(OAM_OPERATOR_OPERATOR_NAMESPACE), or turn it off with --no-leader-election")
        return None

    def lease_namespace(self, environ: Mapping[str, str], namespace_file: Path = SERVICE_ACCOUNT_NAMESPACE) -> str:
        """The namespace of the Lease: ``--operator-namespace``, else ``POD_NAMESPACE``, else the
        mounted ServiceAccount's; ``""`` when none is known."""
        if self.operator_namespace:
            return self.operator_namespace
        if environ.get("POD_NAMESPACE", "").strip():
            return environ["POD_NAMESPACE"].strip()
        try:
            return namespace_file.read_text(encoding="utf-8").strip()
        except OSError:
            return ""

    @property
    def elects(self) -> bool:
        """Whether this instance takes part in leader election: ``--leader-election`` and not ``--dev``
        (a development instance pauses an installed one by kopf's peering; it must not wait for the
        installed one's Lease)."""
        return self.leader_election and not self.dev

    @property
    def lease_name(self) -> str:
        """The Lease of this instance's shard: ``--leader-election-id``, ``<id>-shard-<shard>`` on a shard."""
        return f"{self.leader_election_id}-shard-{self.shard}" if self.shard else self.leader_election_id

    @property
    def lease_timings(self) -> tuple[float, float, float]:
        """Lease duration, renew deadline and retry period in seconds."""
        return (parse_go_duration(self.leader_election_lease_duration).total_seconds(),
                parse_go_duration(self.leader_election_renew_deadline).total_seconds(),
                parse_go_duration(self.leader_election_retry_period).total_seconds())

    @property
    def default_interval_duration(self) -> timedelta:
        return parse_go_duration(self.default_interval)

    @property
    def default_timeout_duration(self) -> timedelta:
        return parse_go_duration(self.default_timeout)

    @property
    def reapply_interval_duration(self) -> timedelta:
        return parse_go_duration(self.reapply_interval)

    @property
    def missing_dependency_grace_duration(self) -> timedelta:
        return parse_go_duration(self.missing_dependency_grace)

    @property
    def kube_api_qps_explicit(self) -> bool:
        """Whether ``--kube-api-qps`` (or its variable) was given: then the bucket always applies."""
        return "kube_api_qps" in self.model_fields_set

    @property
    def shard_label(self) -> str:
        """The label that assigns an Application to a shard: ``<domain>/shard``."""
        return f"{self.domain}/shard"

    @property
    def peering_name(self) -> str | None:
        """kopf's peering object: ``--peering``, suffixed with ``-<shard>`` on a shard."""
        if self.peering is None:
            return None
        return f"{self.peering}-{self.shard}" if self.shard else self.peering

    @property
    def peering_priority(self) -> int:
        """kopf peering priority: 666 with ``--dev``, else ``--priority``."""
        return DEV_PRIORITY if self.dev else self.priority

    @property
    def cluster_wide(self) -> bool:
        """Whether every namespace is watched (no ``--namespace`` given)."""
        return not self.namespaces


# The one-line meaning of every setting, shown by ``oam-operator run --help`` next to its default
# and environment variable (a test requires one per field of ``Settings``).
DESCRIPTIONS: dict[str, str] = {
    "domain": "Prefix of the operator's labels, annotations, finalizer and field manager.",
    "namespaces": "Watch only this namespace (repeatable); all namespaces when none is given.",
    "max_concurrent_reconciles": "Most Applications reconciled at the same time (the cap of the adaptive limit).",
    "adaptive_concurrency": "Adapt the Applications reconciled at once to the API server (up to "
    "--max-concurrent-reconciles): grow while it answers fast, shrink on 429, Retry-After or rising latency.",
    "apply_concurrency": "Objects of one wave applied at the same time.",
    "kube_api_qps": "Client-side rate limit of API requests per second (0: no limit; unset: 50 until the "
    "server shows API Priority and Fairness, then none).",
    "kube_api_burst": "Requests allowed in a burst above --kube-api-qps.",
    "default_interval": "Reconcile interval of an Application without spec.interval (at least 30s).",
    "default_timeout": "Timeout of an Application without spec.timeout (at least 10s).",
    "reapply_interval": "Re-apply objects in sync this often to undo unseen drift (0: every pass).",
    "default_adoption_policy": "adoptionPolicy of an Application without one (Never, IfUnowned, Always).",
    "default_update_policy": "updatePolicy of an Application without one (Replace, SsaMerge, SsaOverride, Recreate).",
    "default_profile": 'ClusterProfile of an Application without spec.profile ("": none).',
    "cluster_id": "Cluster part of owner ids (default: the kube-system namespace's UID).",
    "require_service_account": "Refuse Applications without spec.serviceAccountName.",
    "default_service_account": "ServiceAccount impersonated for an Application without spec.serviceAccountName.",
    "use_operator_identity": "Let Applications without spec.serviceAccountName act with the operator's own identity.",
    "allow_cluster_scoped_objects": "Let Applications create cluster-scoped objects.",
    "cluster_scoped_adoption_policy": "The most an existing cluster-scoped object may be adopted (Never, IfUnowned, "
    "Always); an Application's or object's own adoption policy only narrows it.",
    "allow_cross_namespace_objects": "Let Applications create objects outside their own namespace.",
    "allow_cross_namespace_dependencies": "Let app-dependency and health-checks policies name other namespaces.",
    "missing_dependency_grace": "How long an Application named by an app-dependency may be missing before a "
    "Warning Event DependencyMissing says so (0: at once); the wait goes on.",
    "dependent_events": "Post an Event on each object created, updated or deleted.",
    "readiness_watch": "Watch workload kinds to wake an Application when an object it waits for is ready.",
    "url_sources": "Let components read manifests from URLs.",
    "url_source_allowed_networks": "Internal networks URL sources and charts may reach (comma-separated CIDRs).",
    "notification_allowed_networks": "Internal networks Notification providers may reach (comma-separated CIDRs).",
    "helm_binary": "The helm program that renders delivery: template charts.",
    "metrics_port": "Port of the Prometheus metrics endpoint (0: off).",
    "health_port": "Port of the liveness endpoint /healthz.",
    "log_format": "Log format: json (one object per line) or text.",
    "log_level": "Log level: debug, info, warning or error.",
    "shard": "Reconcile only Applications labelled <domain>/shard=NAME (unset: only unlabelled ones).",
    "peering": "kopf peering object for running several operators (none: no peering).",
    "priority": "kopf peering priority of this instance (the highest one runs).",
    "dev": "Development mode: peering priority 666, for a local operator next to an installed one.",
    "admission": "Serve the validating admission webhook of Applications (docs/admission.md).",
    "admission_address": "Address the admission webhook listens on.",
    "admission_port": "HTTPS port of the admission webhook.",
    "admission_cert_dir": "Directory with tls.crt and tls.key of the webhook (cert-manager); unset: self-signed.",
    "admission_secret": "NAMESPACE/NAME of the Secret keeping the self-signed webhook certificate.",
    "admission_hosts": "DNS names and IPs the self-signed webhook certificate is valid for (comma-separated).",
    "admission_webhook_configuration": "ValidatingWebhookConfiguration whose caBundle the operator keeps current.",
    "leader_election": "Elect one leader per shard on a Lease; only the leader reconciles (--no-leader-election: "
    "every instance reconciles).",
    "leader_election_id": "Name of the Lease (<id>-shard-<shard> on a shard).",
    "leader_election_lease_duration": "How long a standby waits, after it last saw the Lease renewed, before it "
    "takes it over.",
    "leader_election_renew_deadline": "How long the leader keeps reconciling without a successful renewal "
    "(less than the lease duration).",
    "leader_election_retry_period": "How often the Lease is renewed or tried (less than the renew deadline).",
    "operator_namespace": "Namespace of the Lease and of the ClusterProfiles' kubeconfig Secrets (default: "
    "POD_NAMESPACE, else the Pod's ServiceAccount namespace).",
    "profile_secret_namespaces": "Namespaces besides the operator's whose Secrets a ClusterProfile's "
    "kubeConfig.secretRef may name (comma-separated; default: none).",
    "inventory_namespaces": "Namespaces whose multicluster.x-k8s.io ClusterProfiles (the standard cluster inventory) "
    "are targets too (comma-separated; default: none, not read).",
    "inventory_access_provider": "The access provider of those ClusterProfiles the operator connects through; the "
    "token is key token of the Secret <operator namespace>/<clusterName>.",
}


# ``run --help`` lists the settings under these headings, in this order (a test requires each
# setting in exactly one group): a reader looks for a concern, not for a letter.
GROUPS: dict[str, tuple[str, ...]] = {
    "Scope": ("domain", "namespaces", "shard", "operator_namespace", "cluster_id"),
    "Reconciling": ("default_interval", "default_timeout", "reapply_interval", "default_adoption_policy",
                    "default_update_policy", "default_profile", "readiness_watch", "dependent_events",
                    "missing_dependency_grace"),
    "Tenancy": ("default_service_account", "use_operator_identity", "require_service_account",
                "allow_cross_namespace_objects", "allow_cross_namespace_dependencies", "allow_cluster_scoped_objects",
                "cluster_scoped_adoption_policy"),
    "Scale and API rate": ("max_concurrent_reconciles", "adaptive_concurrency", "apply_concurrency", "kube_api_qps",
                           "kube_api_burst"),
    "Leader election and peering": ("leader_election", "leader_election_id", "leader_election_lease_duration",
                                    "leader_election_renew_deadline", "leader_election_retry_period", "peering",
                                    "priority", "dev"),
    "Admission webhook": ("admission", "admission_address", "admission_port", "admission_cert_dir",
                          "admission_secret", "admission_hosts", "admission_webhook_configuration"),
    "Remote clusters": ("profile_secret_namespaces", "inventory_namespaces", "inventory_access_provider"),
    "URL sources and charts": ("url_sources", "url_source_allowed_networks", "helm_binary"),
    "Notifications": ("notification_allowed_networks",),
    "Metrics and logs": ("metrics_port", "health_port", "log_format", "log_level"),
}

# The value each flag takes, as ``run --help`` shows it; enums list their values (``_ENUMS``).
_METAVARS: dict[str, str] = {
    "domain": "DOMAIN", "namespaces": "NS", "shard": "NAME", "operator_namespace": "NS", "cluster_id": "ID",
    "default_interval": "DURATION", "default_timeout": "DURATION", "reapply_interval": "DURATION",
    "missing_dependency_grace": "DURATION",
    "default_profile": "NAME", "default_service_account": "NAME", "max_concurrent_reconciles": "INT",
    "apply_concurrency": "INT", "kube_api_qps": "NUMBER", "kube_api_burst": "INT", "leader_election_id": "NAME",
    "leader_election_lease_duration": "DURATION", "leader_election_renew_deadline": "DURATION",
    "leader_election_retry_period": "DURATION", "peering": "NAME", "priority": "INT", "admission_address": "IP",
    "admission_port": "PORT", "admission_cert_dir": "DIR", "admission_secret": "NAMESPACE/NAME",
    "admission_hosts": "HOSTS", "admission_webhook_configuration": "NAME", "profile_secret_namespaces": "NAMESPACES",
    "inventory_namespaces": "NAMESPACES", "inventory_access_provider": "NAME",
    "url_source_allowed_networks": "CIDRS", "notification_allowed_networks": "CIDRS",
    "helm_binary": "PROGRAM", "metrics_port": "PORT", "health_port": "PORT",
}
_ENUMS: dict[str, type[StrEnum]] = {
    "default_adoption_policy": AdoptionPolicy, "default_update_policy": UpdatePolicy,
    "cluster_scoped_adoption_policy": AdoptionPolicy, "log_format": LogFormat, "log_level": LogLevel,
}


def metavar(setting: str) -> str | None:
    """What ``--<setting>`` takes in ``run --help`` (``DURATION``, ``INT``, ``json|text``, …);
    ``None`` for a boolean, which is a ``--x/--no-x`` pair."""
    if setting in _ENUMS:
        return "|".join(member.value for member in _ENUMS[setting])
    return _METAVARS.get(setting)
