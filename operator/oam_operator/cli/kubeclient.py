"""Cluster access of the ``status`` and ``reconcile`` commands (docs/operator.md#the-command-line).

A kubeconfig becomes an ``ApiClient`` the way kubectl reads it: ``--kubeconfig`` (else
``$KUBECONFIG``, colon-separated lists merged, else ``~/.kube/config``, else the in-cluster
ServiceAccount when running in a pod), ``--context`` (else the current context), and the
context's namespace as the default namespace (else ``default``). Proxies come from the usual
environment variables, as for kubectl.

Every failure becomes an :class:`ApiFailure` with one line for ``Error: <message>``; the exact
texts (lower-case start, like the other commands' errors):

- ``application "<name>" not found in namespace "<ns>"``;
- ``the server does not serve applications.oam-operator.dev/v1alpha1 (are the oam-operator CRDs
  installed? oam-operator crd | kubectl apply --server-side -f -)``;
- ``<action> application "<name>" in namespace "<ns>": <code> <reason>: <server message>``
  for any other API error (``<action>`` is ``reading`` or ``annotating``);
- ``cannot reach the API server at <url>: <cause>``;
- ``kubeconfig "<file>" does not exist``, ``no kubeconfig found (looked for <paths>); pass
  --kubeconfig FILE``,
  ``context "<ctx>" not found in the kubeconfig``, ``cannot load the kubeconfig: <cause>``.

Connection failures, 429 and 5xx are *transient*: ``status --wait`` polls through them. The
``reconcile`` annotation is a JSON merge patch with field manager ``oam-operator-cli`` (so
``managedFields`` tell it from the operator's own writes); requests time out after 30 s.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, cast

import urllib3
from kubernetes import client, config

from oam_operator import __version__
from oam_operator.cli.apifailure import GROUP, PLURAL, VERSION, ApiFailure, describe_http_error

__all__ = [
    "GROUP",
    "PLURAL",
    "VERSION",
    "ApiFailure",
    "Connection",
    "annotate_application",
    "connect",
    "describe_api_error",
    "get_application",
    "list_applications",
]

REQUEST_TIMEOUT = 30.0
FIELD_MANAGER = "oam-operator-cli"
_SA_NAMESPACE_FILE = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"


@dataclass
class Connection:
    """An API client and the namespace the kubeconfig context defaults to."""

    api: Any  # kubernetes.client.ApiClient (untyped library)
    namespace: str
    server: str

    def close(self) -> None:
        self.api.close()


def _any_exists(paths: str) -> bool:
    return any(os.path.exists(os.path.expanduser(p)) for p in paths.split(os.pathsep) if p)


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


def connect(kubeconfig: str | None = None, context: str | None = None) -> Connection:
    """An ``ApiClient`` for ``kubeconfig``/``context`` (see the module doc for the fallbacks)."""
    configuration = client.Configuration()
    namespace = "default"
    # Resolved now rather than by the library at import, so a changed $KUBECONFIG is honoured.
    paths = kubeconfig or os.environ.get("KUBECONFIG") or "~/.kube/config"
    try:
        if kubeconfig is not None and not os.path.exists(kubeconfig):
            raise ApiFailure(f'kubeconfig "{kubeconfig}" does not exist')
        if not _any_exists(paths):
            if context is not None or not os.environ.get("KUBERNETES_SERVICE_HOST"):
                raise ApiFailure(f"no kubeconfig found (looked for {paths}); pass --kubeconfig FILE")
            config.load_incluster_config(client_configuration=configuration)  # type: ignore[no-untyped-call]
            if os.path.exists(_SA_NAMESPACE_FILE):
                with open(_SA_NAMESPACE_FILE, encoding="utf-8") as handle:
                    namespace = handle.read().strip() or namespace
        else:
            contexts, current = config.list_kube_config_contexts(config_file=paths)  # type: ignore[no-untyped-call]
            chosen = current if context is None else next((c for c in contexts if c.get("name") == context), None)
            if chosen is None:
                raise ApiFailure(f'context "{context}" not found in the kubeconfig')
            namespace = (chosen.get("context") or {}).get("namespace") or namespace
            config.load_kube_config(  # type: ignore[no-untyped-call]
                config_file=paths, context=context, client_configuration=configuration, persist_config=False
            )
    except ApiFailure:
        raise
    except Exception as exc:  # ConfigException, YAML and I/O errors of the loader
        raise ApiFailure(f"cannot load the kubeconfig: {_first_line(exc)}") from exc
    api = client.ApiClient(configuration)
    api.user_agent = f"oam-operator/{__version__}"
    return Connection(api=api, namespace=namespace, server=str(configuration.host))


def describe_api_error(exc: Exception, action: str, namespace: str, name: str, server: str = "") -> ApiFailure:
    """The :class:`ApiFailure` for an exception of a call on Application ``namespace/name``."""
    if isinstance(exc, client.ApiException):
        return describe_http_error(exc.status or 0, exc.reason, exc.body, action, namespace, name)
    if isinstance(exc, urllib3.exceptions.HTTPError | OSError):
        cause = exc.reason if isinstance(exc, urllib3.exceptions.MaxRetryError) and exc.reason else exc
        text = _first_line(cause)
        if isinstance(cause, urllib3.exceptions.NewConnectionError):  # drop its "<connection>: " prefix
            text = text.removeprefix(f"{cause.conn}: ")
        return ApiFailure(f"cannot reach the API server at {server}: {text}", transient=True)
    raise exc


def get_application(conn: Connection, namespace: str, name: str) -> dict[str, Any]:
    """The Application as the API returns it (plain JSON)."""
    try:
        result = client.CustomObjectsApi(conn.api).get_namespaced_custom_object(
            GROUP, VERSION, namespace, PLURAL, name, _request_timeout=REQUEST_TIMEOUT
        )
    except Exception as exc:
        raise describe_api_error(exc, "reading", namespace, name, conn.server) from exc
    return cast(dict[str, Any], result)


def list_applications(conn: Connection, namespace: str, label_selector: str, of: str) -> list[dict[str, Any]]:
    """The Applications of ``namespace`` that ``label_selector`` selects: one list call; failures
    name the Application ``of`` they belong to (a fleet Application's cluster Applications)."""
    try:
        result = client.CustomObjectsApi(conn.api).list_namespaced_custom_object(
            GROUP, VERSION, namespace, PLURAL, label_selector=label_selector, _request_timeout=REQUEST_TIMEOUT
        )
    except Exception as exc:
        raise describe_api_error(exc, _LISTING, namespace, of, conn.server) from exc
    return [item for item in cast(dict[str, Any], result).get("items") or () if isinstance(item, dict)]


def annotate_application(conn: Connection, namespace: str, name: str, annotations: Mapping[str, str]) -> dict[str, Any]:
    """Set ``annotations`` on the Application with a JSON merge patch; returns the patched object.

    A merge patch, no resourceVersion: it touches only these keys, whatever else changed meanwhile.
    """
    return patch_application(conn, namespace, name, {"metadata": {"annotations": dict(annotations)}}, "annotating")


def patch_application(
    conn: Connection, namespace: str, name: str, body: dict[str, Any], action: str
) -> dict[str, Any]:
    """A JSON merge patch of the Application; ``action`` names it in errors ("suspending")."""
    try:
        result = client.CustomObjectsApi(conn.api).patch_namespaced_custom_object(
            GROUP, VERSION, namespace, PLURAL, name, body, field_manager=FIELD_MANAGER, _request_timeout=REQUEST_TIMEOUT
        )
    except Exception as exc:
        raise describe_api_error(exc, action, namespace, name, conn.server) from exc
    return cast(dict[str, Any], result)


_LISTING = "listing the cluster Applications of"  # ... application "<name>" in namespace "<ns>": <why>
