"""The component digest (docs/operator.md#owner-id-and-component-digest): what "a new revision" means."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any


def component_digest(domain: str, generation: int, spec: Mapping[str, Any], profile_name: str,
                     profile_spec: Mapping[str, Any] | None) -> str:
    """Lower-case hex SHA-256 of the canonical JSON of the pass's inputs.

    Annotations are not part of it: kopf writes annotations, and the reconcile request
    annotation has its own handling.
    """
    document = {
        "domain": domain,
        "generation": generation,
        "spec": spec,
        "profile": {"name": profile_name, "spec": profile_spec},
    }
    canonical = json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()
