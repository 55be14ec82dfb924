"""The builders of the ClusterProfile capability tests (certificate, external-secret, volsync, expose).

Two ways in: the library (``transform`` with capabilities evaluated from a rendering map, for
exact handler messages) and the CLI (``oam-operator build --profile``, for the whole
docs/transform.md#order-of-validation
pipeline with its prefixes).
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from oam_operator.cli import main
from oam_operator.oam import (
    CapabilityBinding,
    ClusterProfile,
    OamError,
    TransformContext,
    TransformResult,
    new_builtin_transformer,
)
from oamkit import LAUNCHER, OURS, find, pod_spec, trait
from oamkit import kinds_of as kinds
from oamkit import run as transform

NS = "shop"
RESERVED = "is platform-reserved and may only be set via ClusterProfile capability rendering: oam: property is platform-reserved"
NOT_FOUND = "not found in ClusterProfile: oam: capability key not found in ClusterProfile"



def component(name: str, type_name: str, *traits: dict[str, Any], **props: Any) -> dict[str, Any]:
    return {"name": name, "type": type_name, "properties": props, "traits": list(traits)}


def webservice(name: str = "web", *traits: dict[str, Any], **props: Any) -> dict[str, Any]:
    return component(name, "webservice", *traits, **{"image": "nginx:1.25", "port": 8080, **props})


def document(*components: dict[str, Any], name: str = "app", namespace: str | None = NS) -> str:
    meta: dict[str, Any] = {"name": name}
    if namespace is not None:
        meta["namespace"] = namespace
    doc = {"apiVersion": OURS, "kind": "Application", "metadata": meta, "spec": {"components": list(components)}}
    return yaml.safe_dump(doc, sort_keys=False)


def capabilities(bindings: dict[str, dict[str, Any]]) -> dict[str, CapabilityBinding]:
    """Capabilities evaluated by the built-in transformer (renderings checked and defaulted)."""
    raw = {key: CapabilityBinding(copy.deepcopy(rendering)) for key, rendering in bindings.items()}
    profile = ClusterProfile(OURS, "ClusterProfile", "test", capabilities=raw)
    return new_builtin_transformer().evaluate_profile(profile).capabilities


def evaluation_error(bindings: dict[str, dict[str, Any]]) -> str:
    with pytest.raises(OamError) as info:
        capabilities(bindings)
    return str(info.value)


def run(
    text: str,
    bindings: dict[str, dict[str, Any]] | None = None,
    *,
    validate: bool = True,
    label: bool = False,
    evaluate: bool = True,
) -> TransformResult:
    raw = bindings or {}
    caps = capabilities(raw) if evaluate else {k: CapabilityBinding(copy.deepcopy(v)) for k, v in raw.items()}
    return transform(text, ctx=TransformContext(capabilities=caps, component_label=label), validate=validate)


def objects(text: str, bindings: dict[str, dict[str, Any]] | None = None, **kw: Any) -> list[dict[str, Any]]:
    return run(text, bindings, **kw).objects()




def error(text: str, bindings: dict[str, dict[str, Any]] | None = None, **kw: Any) -> str:
    """The first error of validation + transform (validation off with ``validate=False``)."""
    with pytest.raises(OamError) as info:
        run(text, bindings, **kw)
    return str(info.value)


def profile_yaml(bindings: dict[str, dict[str, Any]], api_version: str = LAUNCHER) -> str:
    spec = {"capabilities": {key: {"rendering": rendering} for key, rendering in bindings.items()}}
    doc = {"apiVersion": api_version, "kind": "ClusterProfile", "metadata": {"name": "prod"}, "spec": spec}
    return yaml.safe_dump(doc, sort_keys=False)


def build(
    tmp_path: Path, app_text: str, profile_text: str | None = None, *extra: str
) -> tuple[int, str, str, Path, Path]:
    """``oam-operator build app.yaml [--profile cluster.yaml]``: exit code, stdout, stderr and the two paths."""
    app = tmp_path / "app.yaml"
    app.write_text(app_text, encoding="utf-8")
    profile = tmp_path / "cluster.yaml"
    args = ["build", str(app), *extra]
    if profile_text is not None:
        profile.write_text(profile_text, encoding="utf-8")
        args += ["--profile", str(profile)]
    result = CliRunner().invoke(main, args)
    return result.exit_code, result.stdout, result.stderr, app, profile


def build_objects(tmp_path: Path, app_text: str, profile_text: str | None = None) -> list[dict[str, Any]]:
    code, out, err, _, _ = build(tmp_path, app_text, profile_text, "--no-component-label")
    assert (code, err) == (0, ""), err
    return list(yaml.safe_load_all(out))


__all__ = ["LAUNCHER", "NOT_FOUND", "NS", "OURS", "RESERVED", "build", "build_objects", "capabilities", "component", "document", "error", "evaluation_error", "find", "kinds", "objects", "pod_spec", "profile_yaml", "run", "trait", "webservice"]
