"""The size limit of an Application against the real API server and etcd
(docs/operator.md#identity-hostile-input-and-limits, ``controller/reconcile/limits.py``).

The operator refuses an Application whose status would not fit beside its spec and metadata.
Here, without an operator, the limit it computes is shown to be on the safe side of etcd's: a
status exactly as large as the limit is stored beside the spec and metadata, and one that takes
the Application 1 KiB past etcd's request limit is refused by etcd itself, with the error the
operator's check exists to avoid.
"""

from __future__ import annotations

from typing import Any

import pytest
from kubernetes.client.exceptions import ApiException

from oam_operator.controller.reconcile.limits import ETCD_REQUEST_LIMIT, REQUEST_RESERVE, json_bytes
from tests.integration.api.test_crds import GROUP, VERSION, crds, custom

__all__ = ["crds", "custom"]  # the fixtures, imported for pytest


def _patch_status(custom: Any, namespace: str, name: str, status: dict[str, Any]) -> dict[str, Any]:
    result: dict[str, Any] = custom.patch_namespaced_custom_object_status(
        GROUP, VERSION, namespace, "applications", name, {"status": status})
    return result


def test_a_status_as_large_as_the_limit_fits_and_one_past_etcds_limit_does_not(custom: Any, namespace: str) -> None:
    body = {"apiVersion": f"{GROUP}/{VERSION}", "kind": "Application", "metadata": {"name": "large"},
            "spec": {"components": [{"name": "big", "type": "manifests", "properties": {"inline": "x" * 1_000_000}}]}}
    created = custom.create_namespaced_custom_object(GROUP, VERSION, namespace, "applications", body)
    rest = json_bytes({key: value for key, value in created.items() if key != "status"})
    limit = ETCD_REQUEST_LIMIT - REQUEST_RESERVE - rest
    empty = json_bytes({"summary": ""})

    stored = _patch_status(custom, namespace, "large", {"summary": "s" * (limit - empty)})
    assert json_bytes(stored["status"]) == limit

    with pytest.raises(ApiException) as refused:
        _patch_status(custom, namespace, "large", {"summary": "s" * (ETCD_REQUEST_LIMIT - rest + 1_024 - empty)})
    assert "etcdserver: request is too large" in str(refused.value.body)
