"""A read-only standard-library path to the API server for ``status`` (docs/operator.md#the-command-line).

Importing the Kubernetes client costs ~0.4 s of CPU (it loads every API model), more than the
rest of ``status``. A kubeconfig this module fully understands is therefore served by
``http.client`` and ``ssl``; :func:`connect_plain` returns ``None`` for anything else, and the
caller falls back to ``kubeclient`` unchanged, so behaviour never regresses.

Understood, as kubectl reads it: ``--kubeconfig`` else ``$KUBECONFIG`` (several files merged,
the first file defining a name or ``current-context`` wins) else ``~/.kube/config``;
``--context`` else the current context, whose namespace is the default namespace; a cluster with
``server`` (http or https), ``certificate-authority[-data]``, ``insecure-skip-tls-verify``; a user
with ``client-certificate[-data]``, ``client-key[-data]``, ``token``, ``tokenFile``. Relative file
names are relative to the kubeconfig that names them. Fallback: any other cluster or user field
(exec, auth-provider, username/password, proxy-url, tls-server-name …), a file that is missing or
does not parse, an https server without a CA (the client uses certifi's bundle), a proxy from the
environment that applies to the server, or no kubeconfig at all (in-cluster). Errors are worded
by ``apifailure`` exactly as the client path words them.
"""

from __future__ import annotations

import base64
import http.client
import json
import os
import socket
import ssl
import tempfile
import urllib.parse
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import yaml

from oam_operator import __version__
from oam_operator.cli.apifailure import GROUP, PLURAL, VERSION, ApiFailure, describe_http_error

__all__ = ["PlainConnection", "PlainKubeconfig", "connect_plain", "get_application", "list_applications",
           "read_plain_kubeconfig"]

REQUEST_TIMEOUT = 30.0
_CLUSTER_KEYS = frozenset({"server", "certificate-authority", "certificate-authority-data",
                           "insecure-skip-tls-verify", "extensions"})
_USER_KEYS = frozenset({"client-certificate", "client-certificate-data", "client-key", "client-key-data",
                        "token", "tokenFile", "extensions"})


@dataclass(frozen=True)
class PlainKubeconfig:
    """What the chosen context needs to make requests: server, TLS material, token, namespace."""

    server: str
    namespace: str
    ca_data: str | None = None  # PEM
    insecure: bool = False
    cert_pem: bytes | None = None
    key_pem: bytes | None = None
    token: str | None = None


_Docs = list[tuple[str, Mapping[str, Any]]]  # (directory of the file, its content) in KUBECONFIG order


class _NotPlain(Exception):
    """The kubeconfig needs the Kubernetes client (the caller falls back)."""


def _mapping(value: Any) -> Mapping[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise _NotPlain
    return value


def _named(docs: _Docs, section: str, key: str, name: str) -> tuple[str, Mapping[str, Any]]:
    """The first entry ``name`` of ``section`` across the files, with the directory of its file."""
    for directory, doc in docs:
        entries = doc.get(section) or []
        if not isinstance(entries, list):
            raise _NotPlain
        for entry in entries:
            if isinstance(entry, Mapping) and entry.get("name") == name:
                return directory, _mapping(entry.get(key))
    raise _NotPlain


def _read(directory: str, path: str) -> bytes:
    with open(os.path.join(directory, os.path.expanduser(path)), "rb") as handle:
        return handle.read()


def _material(directory: str, entry: Mapping[str, Any], key: str) -> bytes | None:
    """``<key>-data`` (base64) wins over the file ``<key>``, as in kubectl."""
    data = entry.get(f"{key}-data")
    if data:
        return base64.b64decode(str(data), validate=True)
    path = entry.get(key)
    return _read(directory, str(path)) if path else None


def _proxied(server: str) -> bool:
    scheme, host = urllib.parse.urlsplit(server)[:2]
    proxies = urllib.request.getproxies_environment()
    return scheme in proxies and not urllib.request.proxy_bypass(host)


def read_plain_kubeconfig(kubeconfig: str | None = None, context: str | None = None) -> PlainKubeconfig | None:
    """The chosen context of a kubeconfig this module understands, else ``None`` (see module doc)."""
    paths = kubeconfig or os.environ.get("KUBECONFIG") or "~/.kube/config"
    try:
        docs: _Docs = []
        for path in (os.path.expanduser(p) for p in paths.split(os.pathsep) if p):
            if os.path.exists(path):
                with open(path, encoding="utf-8") as handle:
                    docs.append((os.path.dirname(os.path.abspath(path)), _mapping(yaml.safe_load(handle))))
        if not docs:
            return None
        chosen = context or next((str(d["current-context"]) for _, d in docs if d.get("current-context")), None)
        if not chosen:
            return None
        _, ctx = _named(docs, "contexts", "context", chosen)
        cluster_dir, cluster = _named(docs, "clusters", "cluster", str(ctx.get("cluster") or ""))
        user_dir, user = _named(docs, "users", "user", str(ctx["user"])) if ctx.get("user") else ("", {})
        server = str(cluster.get("server") or "").rstrip("/")
        insecure = cluster.get("insecure-skip-tls-verify") is True
        ca = _material(cluster_dir, cluster, "certificate-authority")
        if (set(cluster) - _CLUSTER_KEYS or set(user) - _USER_KEYS or not server.startswith(("https://", "http://"))
                or (server.startswith("https://") and ca is None and not insecure) or _proxied(server)):
            return None
        token = str(user["token"]) if user.get("token") else None
        if token is None and user.get("tokenFile"):
            token = _read(user_dir, str(user["tokenFile"])).decode().strip()
        return PlainKubeconfig(
            server=server,
            namespace=str(ctx.get("namespace") or "default"),
            ca_data=ca.decode() if ca is not None else None,
            insecure=insecure,
            cert_pem=_material(user_dir, user, "client-certificate"),
            key_pem=_material(user_dir, user, "client-key"),
            token=token,
        )
    except (_NotPlain, OSError, ValueError, UnicodeError, yaml.YAMLError, KeyError, TypeError):
        return None


def _tls_context(config: PlainKubeconfig) -> ssl.SSLContext:
    if config.insecure:
        context = ssl.create_default_context()
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    else:
        context = ssl.create_default_context(cadata=config.ca_data)
    if config.cert_pem is not None and config.key_pem is not None:
        # ssl loads a key pair from files only: a private directory, removed at once.
        with tempfile.TemporaryDirectory(prefix="oam-cli-") as directory:
            cert, key = os.path.join(directory, "cert.pem"), os.path.join(directory, "key.pem")
            for path, pem in ((cert, config.cert_pem), (key, config.key_pem)):
                with open(os.open(path, os.O_WRONLY | os.O_CREAT, 0o600), "wb") as handle:
                    handle.write(pem)
            context.load_cert_chain(cert, key)
    return context


@dataclass
class PlainConnection:
    """Like ``kubeclient.Connection`` for reads: a new HTTP connection per request (survives restarts)."""

    config: PlainKubeconfig
    namespace: str
    server: str
    tls: ssl.SSLContext | None = field(default=None, repr=False)

    def close(self) -> None:
        """Nothing stays open between requests."""


def connect_plain(kubeconfig: str | None = None, context: str | None = None) -> PlainConnection | None:
    """A :class:`PlainConnection`, or ``None`` when the kubeconfig needs the Kubernetes client."""
    config = read_plain_kubeconfig(kubeconfig, context)
    if config is None:
        return None
    try:
        tls = _tls_context(config) if config.server.startswith("https://") else None
    except (ssl.SSLError, OSError, ValueError):
        return None  # the client path reports bad TLS material in its own words
    return PlainConnection(config=config, namespace=config.namespace, server=config.server, tls=tls)


def _unreachable(conn: PlainConnection, exc: OSError, host: str) -> ApiFailure:
    """Worded as urllib3 words it, so both paths print the same line."""
    if isinstance(exc, socket.gaierror):
        cause = f"Failed to resolve '{host}' ({exc})"
    elif isinstance(exc, TimeoutError | socket.timeout):
        cause = f"Connection to {host} timed out. (connect timeout={REQUEST_TIMEOUT})"
    elif isinstance(exc, ssl.SSLError):
        cause = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    else:
        cause = f"Failed to establish a new connection: {exc}"
    return ApiFailure(f"cannot reach the API server at {conn.server}: {cause}", transient=True)


def _request(conn: PlainConnection, path: str) -> tuple[int, str, str]:
    url = urllib.parse.urlsplit(conn.config.server)
    host = url.hostname or ""
    client: http.client.HTTPConnection
    if conn.tls is not None:
        client = http.client.HTTPSConnection(host, url.port, timeout=REQUEST_TIMEOUT, context=conn.tls)
    else:
        client = http.client.HTTPConnection(host, url.port, timeout=REQUEST_TIMEOUT)
    headers = {"Accept": "application/json", "User-Agent": f"oam-operator/{__version__}"}
    if conn.config.token:
        headers["Authorization"] = f"Bearer {conn.config.token}"
    try:
        try:
            client.connect()
        except OSError as exc:
            raise _unreachable(conn, exc, host) from exc
        try:
            client.request("GET", url.path + path, headers=headers)
            response = client.getresponse()
            body = response.read().decode("utf-8", errors="replace")
        except (OSError, http.client.HTTPException) as exc:
            text = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            raise ApiFailure(f"cannot reach the API server at {conn.server}: {text}", transient=True) from exc
        return response.status, response.reason, body
    finally:
        client.close()


def get_application(conn: PlainConnection, namespace: str, name: str) -> dict[str, Any]:
    """The Application as the API returns it (plain JSON)."""
    quote = urllib.parse.quote
    code, reason, body = _request(
        conn, f"/apis/{GROUP}/{VERSION}/namespaces/{quote(namespace, safe='')}/{PLURAL}/{quote(name, safe='')}"
    )
    if code != 200:
        raise describe_http_error(code, reason, body, "reading", namespace, name)
    result = json.loads(body)
    if not isinstance(result, dict):
        raise ApiFailure(f'reading application "{name}" in namespace "{namespace}": the server sent no object')
    return result


def list_applications(conn: PlainConnection, namespace: str, label_selector: str, of: str) -> list[dict[str, Any]]:
    """The Applications of ``namespace`` that ``label_selector`` selects: one list call; failures
    name the Application ``of`` they belong to (a fleet Application's cluster Applications)."""
    quote = urllib.parse.quote
    code, reason, body = _request(
        conn, f"/apis/{GROUP}/{VERSION}/namespaces/{quote(namespace, safe='')}/{PLURAL}"
        f"?labelSelector={quote(label_selector, safe='')}"
    )
    if code != 200:
        raise describe_http_error(code, reason, body, _LISTING, namespace, of)
    result = json.loads(body)
    items = result.get("items") if isinstance(result, dict) else None
    return [item for item in items or () if isinstance(item, dict)]


_LISTING = "listing the cluster Applications of"  # ... application "<name>" in namespace "<ns>": <why>
