"""What the API server refuses for the size of an Application (docs/operator.md#the-size-the-api-server-accepts).

Two limits stand between a large Application and the cluster:

- **The object limit.** etcd's default ``--max-request-bytes`` is 1,572,864 bytes (1.5 MiB): an
  object larger than that as stored is refused with ``etcdserver: request is too large``.
  kube-apiserver's own limit on a request body, 3 MiB (``Request entity too large: limit is
  3145728``), is larger, so etcd's is the one that counts: a 2.2 MB Application passes the API
  server's body limit and is refused by etcd. Managed clusters do not let either be raised.
- **Client-side apply's annotation.** ``kubectl apply`` without ``--server-side`` stores the
  whole object again in its ``kubectl.kubernetes.io/last-applied-configuration`` annotation,
  and an object's annotations may hold at most 262,144 bytes together: an Application of more
  than that fails client-side apply. ``kubectl apply --server-side`` keeps no such copy, and a
  URL source keeps the manifests out of the Application altogether.

The size is that of the Application as the API server stores it: compact JSON, UTF-8, without
``status``. ``build`` and ``diff`` warn; ``rbac`` and the admission webhook refuse what the
object limit refuses. Standard library only, so ``build`` loads nothing more for it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

__all__ = [
    "ANNOTATION_LIMIT",
    "API_BODY_LIMIT",
    "OBJECT_LIMIT",
    "annotation_warning",
    "application_bytes",
    "too_large",
]

#: etcd's default ``--max-request-bytes``: the largest object the API server can store.
OBJECT_LIMIT = 1_572_864
#: kube-apiserver's limit on a request body (``Request entity too large``): above OBJECT_LIMIT.
API_BODY_LIMIT = 3 * 1024 * 1024
#: The most an object's annotations may hold together; client-side apply's copy must fit.
ANNOTATION_LIMIT = 262_144


def application_bytes(application: Mapping[str, Any]) -> int:
    """The Application's size as the API server stores it: compact JSON without ``status``."""
    rest = {key: value for key, value in application.items() if key != "status"}
    return len(json.dumps(rest, separators=(",", ":"), ensure_ascii=False).encode())


def too_large(size: int) -> str | None:
    """The refusal of an Application of ``size`` bytes the API server cannot store, else ``None``."""
    if size <= OBJECT_LIMIT:
        return None
    return (f"The Application is {size} bytes as JSON; the API server stores at most {OBJECT_LIMIT} bytes in one "
            f"object (etcd's request limit, 1.5 MiB) and refuses it: split it into several Applications, or read "
            f"its manifests from a URL source")


def annotation_warning(size: int) -> str | None:
    """The warning for an Application client-side ``kubectl apply`` refuses, else ``None``."""
    if size <= ANNOTATION_LIMIT:
        return None
    return (f"The Application is {size} bytes as JSON; client-side `kubectl apply` refuses it (its "
            f"last-applied-configuration annotation may hold at most {ANNOTATION_LIMIT} bytes): apply it with "
            f"`kubectl apply --server-side`, or read its manifests from a URL source")
