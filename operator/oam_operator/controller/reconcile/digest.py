"""The component digest (docs/operator.md#owner-id-and-component-digest): what "a new revision" means."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

#: Spec fields that steer the operator, not what it applies: a change of one is no new revision
#: (suspend then resume, a new interval, a new history limit, drift Correct or Report: the
#: objects applied are the same, only what the operator does about others' changes differs).
NOT_APPLIED = ("suspend", "interval", "timeout", "revisionHistoryLimit", "drift")
#: A ClusterProfile's fields that steer the operator, not what it applies: its change windows say
#: when a revision lands, not what it is (docs/operator.md#change-windows), and its health rules how
#: its objects are judged (docs/health.md#sources), so changing them is no new revision of every
#: Application using the profile.
PROFILE_NOT_APPLIED = ("changeWindows", "health")


def _sha256(document: Mapping[str, Any]) -> str:
    canonical = json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def applied_spec(spec: Mapping[str, Any]) -> dict[str, Any]:
    """The part of ``spec`` that decides what is applied (``spec`` without ``NOT_APPLIED``)."""
    return {key: value for key, value in spec.items() if key not in NOT_APPLIED}


def applied_profile_spec(profile: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
    """The part of a resolved profile's spec that decides what is applied (``None``: no profile)."""
    if profile is None:
        return None
    spec = profile.get("spec")
    if not isinstance(spec, Mapping) or not any(key in spec for key in PROFILE_NOT_APPLIED):
        return spec
    return {key: value for key, value in spec.items() if key not in PROFILE_NOT_APPLIED}


def component_digest(domain: str, spec: Mapping[str, Any], profile_name: str,
                     profile_spec: Mapping[str, Any] | None, definitions: Mapping[str, str] | None = None) -> str:
    """Lower-case hex SHA-256 of the canonical JSON of what a pass applies.

    Not part of it: the generation (a spec written back unchanged, or changed only in
    ``NOT_APPLIED``, applies the same objects), and annotations (kopf writes annotations,
    and the reconcile request annotation has its own handling). ``definitions``: the digests of
    the definitions the spec's types resolve to; absent, the digest is as before definitions.
    """
    document: dict[str, Any] = {"domain": domain, "spec": applied_spec(spec),
                                "profile": {"name": profile_name, "spec": profile_spec}}
    if definitions:  # only an Application using definitions (docs/definitions.md#changing-a-definition)
        document["definitions"] = dict(definitions)
    return _sha256(document)


def legacy_component_digest(domain: str, generation: int, spec: Mapping[str, Any], profile_name: str,
                            profile_spec: Mapping[str, Any] | None) -> str:
    """The digest operators before the revision history wrote (the generation and the whole
    spec in it): a status still carrying it is taken over without a new revision. The spec is
    taken without ``revisionHistoryLimit``, which the CRD defaults on read since it exists."""
    before = {key: value for key, value in spec.items() if key != "revisionHistoryLimit"}
    return _sha256({"domain": domain, "generation": generation, "spec": before,
                    "profile": {"name": profile_name, "spec": profile_spec}})
