"""Reading and checking the properties of a ``helm``/``helmchart`` component (docs/transform.md#the-helm-component).

The checks run in the spec's order, so the first refusal is deterministic. Messages start with
the type as authored (``helm:`` or ``helmchart:``) so kurel documents keep their texts.

Decisions recorded here, where the spec is silent:

* an empty ``interval``, ``delivery`` or ``source.kind`` is unset (the default applies);
* ``driftDetection``, ``install`` and ``upgrade`` count as set when their ``mode``/``crds`` is
  a non-empty string: that is what is emitted and what ``delivery: template`` refuses;
* ``valuesFrom`` entries are checked whatever the delivery (template refuses a non-empty list);
* ``source.url``/``source.name`` are present when they are non-empty strings.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from oam_operator.oam.catalog.flux.flux_sources import HELM_CHART, HELM_REPOSITORY, OCI_REPOSITORY
from oam_operator.oam.catalog.shared.typed_props import Props
from oam_operator.oam.errors import ValidationError
from oam_operator.oam.formatting.choices import unknown_at
from oam_operator.oam.formatting.duration import DurationError, normalize_duration
from oam_operator.oam.formatting.gofmt import go_quote, go_type_name, go_value

NATIVE = "native"
FLUX = "flux"
TEMPLATE = "template"
DELIVERIES = (NATIVE, FLUX, TEMPLATE)
DEFAULT_INTERVAL = "60m"
DRIFT_MODES = ("enabled", "warn", "disabled")
CRDS_POLICIES = ("Skip", "Create", "CreateReplace")
VALUES_FROM_KINDS = ("ConfigMap", "Secret")
REFERENCE_KINDS = (HELM_REPOSITORY, OCI_REPOSITORY, HELM_CHART)
OCI_SCHEME = "oci://"


@dataclass
class HelmSource:
    """The chart source: inline (``url``) or a reference to an existing source (``name``)."""

    kind: str
    url: str = ""
    name: str = ""
    namespace: str = ""

    @property
    def inline(self) -> bool:
        return bool(self.url)


@dataclass
class HelmSettings:
    type_name: str
    delivery: str
    interval: str  # printed as a Go duration
    interval_set: bool
    source: HelmSource
    chart: str = ""
    version: str = ""
    release_name: str = ""
    target_namespace: str = ""
    values: dict[str, Any] = field(default_factory=dict)
    values_from: list[dict[str, str]] = field(default_factory=list)
    drift_mode: str = ""
    install_crds: str = ""
    upgrade_crds: str = ""

    @property
    def native(self) -> bool:
        return self.delivery != TEMPLATE


def read_settings(type_name: str, properties: dict[str, Any]) -> HelmSettings:
    """Parse and check, in the order of docs/transform.md#the-helm-component; raises ``ValidationError``."""
    prefix = f"{type_name}: "
    props = Props(properties, prefix)
    interval_text = props.string("interval")
    interval = _interval(prefix, interval_text or DEFAULT_INTERVAL)
    drift_mode = _choice(props.child("driftDetection"), "mode", DRIFT_MODES, f"{prefix}driftDetection.mode")
    install_crds = _choice(props.child("install"), "crds", CRDS_POLICIES, f"{prefix}install.crds")
    upgrade_crds = _choice(props.child("upgrade"), "crds", CRDS_POLICIES, f"{prefix}upgrade.crds")
    values_from = _values_from(props.sequence("valuesFrom") or [])
    delivery = props.string("delivery", NATIVE)
    if delivery not in DELIVERIES:
        raise ValidationError(f"{prefix}{unknown_at('delivery', delivery, DELIVERIES)}")
    chart = props.string("chart")
    source = _source(prefix, props.raw("source"), chart)
    settings = HelmSettings(
        type_name=type_name,
        delivery=delivery,
        interval=interval,
        interval_set=bool(interval_text),
        source=source,
        chart=chart,
        version=props.string("version"),
        release_name=props.string("releaseName"),
        target_namespace=props.string("targetNamespace"),
        values=dict(props.mapping("values") or {}),
        values_from=values_from,
        drift_mode=drift_mode,
        install_crds=install_crds,
        upgrade_crds=upgrade_crds,
    )
    if delivery == TEMPLATE:
        _check_template(prefix, settings)
    return settings


def _interval(prefix: str, text: str) -> str:
    try:
        return normalize_duration(text)
    except DurationError:
        raise ValidationError(
            f"{prefix}interval {go_quote(text)} is invalid: must be a valid Go duration (e.g. 10m, 1h30m)"
        ) from None


def _choice(block: Props, key: str, allowed: tuple[str, ...], label: str) -> str:
    value = block.string(key)
    if value and value not in allowed:
        raise ValidationError(unknown_at(label, value, allowed))
    return value


def _values_from(entries: list[Any]) -> list[dict[str, str]]:
    out: list[dict[str, str]] = []
    for i, entry in enumerate(entries):
        where = f"valuesFrom[{i}]"
        if not isinstance(entry, dict):
            raise ValidationError(f"{where}: expected object, got {go_type_name(entry)}")
        kind = entry.get("kind")
        kind_text = kind if isinstance(kind, str) else ("" if kind is None else go_value(kind))
        if kind_text not in VALUES_FROM_KINDS:
            raise ValidationError(unknown_at(f"{where}.kind", kind_text, VALUES_FROM_KINDS))
        name = entry.get("name")
        if not isinstance(name, str) or not name:
            raise ValidationError(f"{where}: name is required")
        item = {"kind": kind_text, "name": name}
        for optional in ("valuesKey", "targetPath"):
            value = Props(entry, "", f"{where}.").string(optional)
            if value:
                item[optional] = value
        out.append(item)
    return out


def _source(prefix: str, raw: Any, chart: str) -> HelmSource:
    if not isinstance(raw, dict):
        raise ValidationError(f"{prefix}source is required")
    props = Props(raw, prefix, "source.")
    url, name, kind = props.string("url"), props.string("name"), props.string("kind")
    if url and name:
        raise ValidationError(f"{prefix}source.url and source.name are mutually exclusive")
    if not url and not name:
        raise ValidationError(f"{prefix}source requires either source.url (inline) or source.name (reference)")
    if url:
        return _inline(prefix, url, kind, chart)
    if not kind:
        raise ValidationError(f"{prefix}source.kind is required when source.name is set")
    if kind not in REFERENCE_KINDS:
        raise ValidationError(
            f"{prefix}source.kind {go_quote(kind)} is not valid for source reference; "
            "must be HelmRepository, OCIRepository, or HelmChart"
        )
    if kind == HELM_REPOSITORY and not chart:
        raise ValidationError(f"{prefix}source.kind HelmRepository requires chart to be specified")
    return HelmSource(kind, name=name, namespace=props.string("namespace"))


def _inline(prefix: str, url: str, kind: str, chart: str) -> HelmSource:
    kind = kind or (OCI_REPOSITORY if url.startswith(OCI_SCHEME) else HELM_REPOSITORY)
    if kind == HELM_REPOSITORY:
        if url.startswith(OCI_SCHEME):
            raise ValidationError(f"{prefix}source.kind HelmRepository is incompatible with oci:// URL")
        if not url.startswith(("https://", "http://")):
            raise ValidationError(f"{prefix}HelmRepository source.url must start with https:// or http://")
        if not chart:
            raise ValidationError(f"{prefix}source.kind HelmRepository requires chart to be specified")
    elif kind == OCI_REPOSITORY:
        if not url.startswith(OCI_SCHEME):
            raise ValidationError(f"{prefix}source.kind OCIRepository requires an oci:// URL")
    else:
        raise ValidationError(
            f"{prefix}source.kind {go_quote(kind)} is not valid for inline source; "
            "must be HelmRepository or OCIRepository"
        )
    return HelmSource(kind, url=url)


def _check_template(prefix: str, settings: HelmSettings) -> None:
    source = settings.source
    if not source.inline:
        raise ValidationError(f"{prefix}delivery: template requires an inline source URL; source.name is not supported")
    if source.kind == OCI_REPOSITORY and not settings.version:
        raise ValidationError(f"{prefix}delivery: template with OCIRepository requires version to be set")
    refused = (
        (bool(settings.values_from), "valuesFrom (cluster-side values are not resolvable at build time)"),
        (bool(settings.release_name), "releaseName"),
        (bool(settings.target_namespace), "targetNamespace"),
        (settings.interval_set, "interval"),
        (bool(settings.drift_mode), "driftDetection"),
        (bool(settings.install_crds or settings.upgrade_crds), "install.crds / upgrade.crds"),
    )
    for is_set, what in refused:
        if is_set:
            raise ValidationError(f"{prefix}delivery: template does not support {what}")
