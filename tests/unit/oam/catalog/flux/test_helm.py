"""The ``helm`` component and its ``helmchart`` alias (docs/transform.md#the-helm-component)."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

import pytest
from oamkit.packages import comp, document, error, objects, run

from oam_operator.oam import GenerationError, OamError, TransformContext, new_builtin_transformer
from oam_operator.oam.catalog.flux.helm_renderer import HelmBinaryRenderer

URL = "https://charts.example.com"


def release(objs: list[dict[str, Any]]) -> dict[str, Any]:
    (found,) = [o for o in objs if o["kind"] == "HelmRelease"]
    return found


def test_inline_https_source_defaults() -> None:
    objs = objects(comp("metrics", "helm", source={"url": URL}, chart="kube-prometheus-stack", version="69.3.2"))
    assert objs == [
        {
            "apiVersion": "source.toolkit.fluxcd.io/v1",
            "kind": "HelmRepository",
            "metadata": {"name": "metrics", "namespace": "default"},
            "spec": {"url": URL, "interval": "1h0m0s"},
        },
        {
            "apiVersion": "helm.toolkit.fluxcd.io/v2",
            "kind": "HelmRelease",
            "metadata": {"name": "metrics", "namespace": "default"},
            "spec": {
                "interval": "1h0m0s",
                "chart": {
                    "spec": {
                        "chart": "kube-prometheus-stack",
                        "version": "69.3.2",
                        "sourceRef": {"kind": "HelmRepository", "name": "metrics"},
                    }
                },
            },
        },
    ]


def test_inline_oci_source_infers_the_kind_and_tags_the_version() -> None:
    objs = objects(comp("cm", "helmchart", source={"url": "oci://ghcr.io/x/cm"}, version="v1.17.2", interval="10m"))
    assert objs[0]["kind"] == "OCIRepository"
    assert objs[0]["spec"] == {"url": "oci://ghcr.io/x/cm", "interval": "10m0s", "ref": {"tag": "v1.17.2"}}
    assert objs[1]["spec"] == {"interval": "10m0s", "chartRef": {"kind": "OCIRepository", "name": "cm"}}


def test_inline_oci_source_without_version_has_no_ref() -> None:
    objs = objects(comp("cm", "helm", source={"url": "oci://ghcr.io/x/cm", "kind": "OCIRepository"}))
    assert objs[0]["spec"] == {"url": "oci://ghcr.io/x/cm", "interval": "1h0m0s"}


@pytest.mark.parametrize(
    ("source", "chart", "expected"),
    [
        (
            {"name": "bitnami", "kind": "HelmRepository", "namespace": "flux-system"},
            "redis",
            {
                "chart": {
                    "spec": {
                        "chart": "redis",
                        "sourceRef": {"kind": "HelmRepository", "name": "bitnami", "namespace": "flux-system"},
                    }
                }
            },
        ),
        ({"name": "repo", "kind": "OCIRepository"}, None, {"chartRef": {"kind": "OCIRepository", "name": "repo"}}),
        (
            {"name": "c", "kind": "HelmChart", "namespace": "n"},
            None,
            {"chartRef": {"kind": "HelmChart", "name": "c", "namespace": "n"}},
        ),
    ],
)
def test_reference_form_emits_only_the_release(
    source: dict[str, str], chart: str | None, expected: dict[str, Any]
) -> None:
    props: dict[str, Any] = {"source": source}
    if chart:
        props["chart"] = chart
    result = run(document([comp("r", "helm", **props)]))
    assert result.cluster.node.name == ""  # no generated source: a flat tree
    (obj,) = result.objects()
    assert obj["spec"] == {"interval": "1h0m0s", **expected}


def test_every_release_field() -> None:
    obj = release(
        objects(
            comp(
                "r",
                "helm",
                source={"url": URL},
                chart="app",
                delivery="flux",
                interval="90s",
                releaseName="rel",
                targetNamespace="apps",
                values={"a": {"b": 1}},
                valuesFrom=[
                    {"kind": "ConfigMap", "name": "v"},
                    {"kind": "Secret", "name": "s", "valuesKey": "k", "targetPath": "x.y"},
                ],
                driftDetection={"mode": "warn"},
                install={"crds": "Create"},
                upgrade={"crds": "CreateReplace"},
            )
        )
    )
    assert obj["spec"] == {
        "interval": "1m30s",
        "chart": {"spec": {"chart": "app", "sourceRef": {"kind": "HelmRepository", "name": "r"}}},
        "releaseName": "rel",
        "targetNamespace": "apps",
        "values": {"a": {"b": 1}},
        "valuesFrom": [
            {"kind": "ConfigMap", "name": "v"},
            {"kind": "Secret", "name": "s", "valuesKey": "k", "targetPath": "x.y"},
        ],
        "driftDetection": {"mode": "warn"},
        "install": {"crds": "Create"},
        "upgrade": {"crds": "CreateReplace"},
    }


def test_empty_values_and_unset_blocks_are_omitted() -> None:
    obj = release(objects(comp("r", "helm", source={"url": URL}, chart="a", values={}, driftDetection={}, install={})))
    assert set(obj["spec"]) == {"interval", "chart"}


def test_objects_carry_only_the_component_label() -> None:
    result = run(document([comp("r", "helm", source={"url": URL}, chart="a")]), TransformContext())
    assert [o["metadata"]["labels"] for o in result.objects()] == [{"oam-operator.dev/component": "r"}] * 2


HELM_REFUSALS = [
    ({"interval": "5 minutes"}, 'interval "5 minutes" is invalid: must be a valid Go duration (e.g. 10m, 1h30m)'),
    ({"driftDetection": {"mode": "on"}}, 'driftDetection.mode: unknown mode "on" (valid: enabled, warn, disabled)'),
    ({"install": {"crds": "Replace"}}, 'install.crds: unknown crds "Replace" (valid: Skip, Create, CreateReplace); did you mean "CreateReplace"?'),
    ({"upgrade": {"crds": "skip"}}, 'upgrade.crds: unknown crds "skip" (valid: Skip, Create, CreateReplace); did you mean "Skip"?'),
    ({"delivery": "argo"}, 'delivery: unknown delivery "argo" (valid: native, flux, template)'),
    ({"source": "x"}, "source is required"),
    ({"source": None}, "source is required"),
    ({"source": {"url": URL, "name": "n"}}, "source.url and source.name are mutually exclusive"),
    ({"source": {}}, "source requires either source.url (inline) or source.name (reference)"),
    (
        {"source": {"url": "oci://r/c", "kind": "HelmRepository"}},
        "source.kind HelmRepository is incompatible with oci:// URL",
    ),
    ({"source": {"url": "ftp://r/c"}}, "HelmRepository source.url must start with https:// or http://"),
    ({"source": {"url": URL}, "chart": None}, "source.kind HelmRepository requires chart to be specified"),
    ({"source": {"url": URL, "kind": "OCIRepository"}}, "source.kind OCIRepository requires an oci:// URL"),
    (
        {"source": {"url": URL, "kind": "GitRepository"}},
        'source.kind "GitRepository" is not valid for inline source; must be HelmRepository or OCIRepository',
    ),
    ({"source": {"name": "n"}}, "source.kind is required when source.name is set"),
    (
        {"source": {"name": "n", "kind": "Bucket"}},
        'source.kind "Bucket" is not valid for source reference; must be HelmRepository, OCIRepository, or HelmChart',
    ),
    (
        {"source": {"name": "n", "kind": "HelmRepository"}, "chart": None},
        "source.kind HelmRepository requires chart to be specified",
    ),
    (
        {"delivery": "template", "source": {"name": "n", "kind": "HelmChart"}},
        "delivery: template requires an inline source URL; source.name is not supported",
    ),
    (
        {"delivery": "template", "source": {"url": "oci://r/c"}},
        "delivery: template with OCIRepository requires version to be set",
    ),
    (
        {"delivery": "template", "valuesFrom": [{"kind": "Secret", "name": "s"}]},
        "delivery: template does not support valuesFrom (cluster-side values are not resolvable at build time)",
    ),
    ({"delivery": "template", "releaseName": "r"}, "delivery: template does not support releaseName"),
    ({"delivery": "template", "targetNamespace": "t"}, "delivery: template does not support targetNamespace"),
    ({"delivery": "template", "interval": "1h"}, "delivery: template does not support interval"),
    (
        {"delivery": "template", "driftDetection": {"mode": "enabled"}},
        "delivery: template does not support driftDetection",
    ),
    (
        {"delivery": "template", "install": {"crds": "Skip"}},
        "delivery: template does not support install.crds / upgrade.crds",
    ),
    (
        {"delivery": "template", "upgrade": {"crds": "Skip"}},
        "delivery: template does not support install.crds / upgrade.crds",
    ),
]


@pytest.mark.parametrize("type_name", ["helm", "helmchart"])
@pytest.mark.parametrize(("props", "message"), HELM_REFUSALS)
def test_refusals_start_with_the_type_as_authored(type_name: str, props: dict[str, Any], message: str) -> None:
    base: dict[str, Any] = {"source": {"url": URL}, "chart": "app"}
    base.update(props)
    base = {k: v for k, v in base.items() if v is not None or k == "source"}
    assert error(document([comp("r", type_name, **base)]), validate=False) == f'component "r": {type_name}: {message}'


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ("x", "valuesFrom[1]: expected object, got string"),
        ({"kind": "Secrets", "name": "a"}, 'valuesFrom[1].kind: unknown kind "Secrets" (valid: ConfigMap, Secret); did you mean "Secret"?'),
        ({"name": "a"}, 'valuesFrom[1].kind: unknown kind "" (valid: ConfigMap, Secret)'),
        ({"kind": "Secret"}, "valuesFrom[1]: name is required"),
    ],
)
def test_values_from_refusals_carry_no_type_prefix(entry: Any, message: str) -> None:
    props = {"source": {"url": URL}, "chart": "a", "valuesFrom": [{"kind": "ConfigMap", "name": "ok"}, entry]}
    assert error(document([comp("r", "helm", **props)]), validate=False) == f'component "r": {message}'


def test_check_order_interval_before_everything() -> None:
    props = {"interval": "x", "driftDetection": {"mode": "bad"}, "delivery": "bad", "source": None}
    assert error(document([comp("r", "helm", **props)]), validate=False) == (
        'component "r": helm: interval "x" is invalid: must be a valid Go duration (e.g. 10m, 1h30m)'
    )


@pytest.mark.parametrize(
    ("props", "message"),
    [
        (
            {"delivery": "argo"},
            'component "r" (type "helm"): properties.delivery: unknown delivery "argo" (valid: native, flux, template)',
        ),
        ({"chart": 5}, 'component "r" (type "helm"): properties.chart: expected string, got int'),
        (
            {"extra": 1},
            'component "r" (type "helm"): properties: unsupported field "extra" (allowed: chart, delivery, driftDetection, install, interval, releaseName, source, targetNamespace, upgrade, values, valuesFrom, version)',
        ),
        (
            {"valuesFrom": [{"kind": "Secret"}]},
            'component "r" (type "helm"): properties.valuesFrom[0]: "name" is required',
        ),
        ({"source": {"url": 5}}, 'component "r" (type "helm"): properties.source.url: expected string, got int'),
    ],
)
def test_authored_properties_are_checked_against_the_schema(props: dict[str, Any], message: str) -> None:
    base: dict[str, Any] = {"source": {"url": URL}, "chart": "app"}
    base.update(props)
    assert error(document([comp("r", "helm", **base)])) == message


def test_open_objects_accept_undeclared_keys() -> None:
    props = {"source": {"url": URL, "extra": 1}, "chart": "a", "driftDetection": {"mode": "warn", "ignore": []}}
    assert objects(comp("r", "helm", **props))[1]["spec"]["driftDetection"] == {"mode": "warn"}


def test_contract_family_and_schema_defaults() -> None:
    t = new_builtin_transformer()
    contracts = t.handler_contracts().components
    assert (contracts["helm"].family, contracts["helmchart"].family) == ("helm", "helm")
    schema = t.handler_schemas().components["helmchart"]
    assert schema == t.handler_schemas().components["helm"]
    assert (schema["delivery"].default, schema["interval"].default) == ("native", "60m")
    assert schema["delivery"].enum == ["native", "flux", "template"]
    assert schema["source"].required
    explicit = objects(comp("r", "helm", source={"url": URL}, chart="a", delivery="native", interval="60m"))
    assert explicit == objects(comp("r", "helm", source={"url": URL}, chart="a"))


# ---------------------------------------------------------------------------------------------
# Template delivery


class FakeRenderer:
    def __init__(self, output: str = "", fail: Exception | None = None) -> None:
        self.output, self.fail = output, fail
        self.calls: list[tuple[str, str, dict[str, Any]]] = []

    def render(self, chart_url: str, version: str, values: dict[str, Any]) -> str:
        self.calls.append((chart_url, version, values))
        if self.fail is not None:
            raise self.fail
        return self.output


RENDERED = """\
---
# Source: app/templates/sa.yaml
apiVersion: v1
kind: ServiceAccount
metadata:
  name: release-app
---
---
- not a mapping
---
{}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: release-app
spec:
  replicas: 2
"""


def template(renderer: FakeRenderer | None, type_name: str = "helm", **props: Any) -> list[dict[str, Any]]:
    base: dict[str, Any] = {"source": {"url": URL + "/"}, "chart": "app", "delivery": "template"}
    base.update(props)
    return run(
        document([comp("r", type_name, **base)]), TransformContext(component_label=False, chart_renderer=renderer)
    ).objects()


def test_template_delivery_emits_the_rendered_mappings() -> None:
    renderer = FakeRenderer(RENDERED)
    objs = template(renderer, version="1.2.3", values={"replicas": 2})
    assert renderer.calls == [(URL + "/app", "1.2.3", {"replicas": 2})]
    assert [(o["kind"], o["metadata"]) for o in objs] == [
        ("ServiceAccount", {"name": "release-app"}),
        ("Deployment", {"name": "release-app"}),
    ]


def test_template_delivery_of_an_oci_chart_uses_the_url_and_has_no_source() -> None:
    renderer = FakeRenderer("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")
    result = run(
        document([comp("r", "helm", source={"url": "oci://r/c"}, version="1.0.0", delivery="template")]),
        TransformContext(chart_renderer=renderer),
    )
    assert renderer.calls == [("oci://r/c", "1.0.0", {})]
    assert result.cluster.node.name == ""  # no generated source
    assert result.objects()[0]["metadata"]["labels"] == {"oam-operator.dev/component": "r"}


@pytest.mark.parametrize(
    ("renderer", "message"),
    [
        (None, 'helmchart "r": rendering chart: no chart renderer is configured'),
        (FakeRenderer(fail=OamError("helm template: boom")), 'helmchart "r": rendering chart: helm template: boom'),
        (FakeRenderer(fail=RuntimeError("crash")), 'helmchart "r": rendering chart: crash'),
        (FakeRenderer("a: [\n"), 'helmchart "r": rendering chart: parsing rendered manifests: line 2: '),
        (
            FakeRenderer("kind: X\nmetadata: {name: a}\n"),
            "rendered document is missing apiVersion or kind: map[kind:X metadata:map[name:a]]",
        ),
    ],
)
def test_template_generation_errors(renderer: FakeRenderer | None, message: str) -> None:
    with pytest.raises(GenerationError) as info:
        template(renderer, "helmchart")
    assert str(info.value).startswith(message)


def fake_helm(tmp_path: Path, body: str) -> str:
    script = tmp_path / "helm"
    script.write_text("#!/bin/sh\n" + body)
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return str(script)


def test_default_renderer_runs_helm_template(tmp_path: Path) -> None:
    binary = fake_helm(tmp_path, 'echo "$@"\ncat "$9"\n')
    out = HelmBinaryRenderer(binary).render("https://c/app", "1.0.0", {"a": 1})
    args, values = out.split("\n", 1)
    assert args.split()[:8] == [
        "template",
        "release",
        "https://c/app",
        "--version",
        "1.0.0",
        "--namespace",
        "default",
        "-f",
    ]
    assert values == '{"a": 1}'
    assert not os.path.exists(args.split()[8])  # the values file is removed
    assert HelmBinaryRenderer(binary).command("oci://r/c", "", "v.yaml")[1:] == [
        "template",
        "release",
        "oci://r/c",
        "--namespace",
        "default",
        "-f",
        "v.yaml",
    ]


def test_default_renderer_failures(tmp_path: Path) -> None:
    with pytest.raises(OamError) as info:
        HelmBinaryRenderer(fake_helm(tmp_path, "echo 'Error: chart not found' >&2\nexit 1\n")).render("u", "", {})
    assert str(info.value) == "helm template: Error: chart not found"
    with pytest.raises(OamError) as info:
        HelmBinaryRenderer(str(tmp_path / "missing")).render("u", "", {})
    assert str(info.value) == (
        f"helm binary {str(tmp_path / 'missing')!r} not found: delivery: template renders charts with helm;"
        " put helm on the PATH (the operator image ships it; the operator's --helm-binary names another)"
    )
