"""A loopback TCP proxy to the API server that can cut the instance behind it off.

While ``cut`` is set, nothing is forwarded in either direction and new connections are accepted
and never answered: to the client the API server hangs, as it does behind a partitioned network.
Cleared, new connections are forwarded again (the ones opened meanwhile stay dead, as after a real
partition; the client's timeouts end them).
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import urllib.parse
from pathlib import Path

import yaml

__all__ = ["Blackhole"]


class Blackhole:
    """Forwards ``127.0.0.1:<port>`` to the API server of ``server`` until ``cut`` is set."""

    def __init__(self, server: str) -> None:
        parsed = urllib.parse.urlsplit(server)
        self.target = (parsed.hostname or "127.0.0.1", int(parsed.port or 443))
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = int(self.listener.getsockname()[1])
        self.cut = threading.Event()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            if self.cut.is_set():
                continue  # accepted, never answered
            try:
                upstream = socket.create_connection(self.target)
            except OSError:  # the API server is down (a restart): the client sees a reset
                conn.close()
                continue
            for source, sink in ((conn, upstream), (upstream, conn)):
                threading.Thread(target=self._pipe, args=(source, sink), daemon=True).start()

    def _pipe(self, source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                if not self.cut.is_set():
                    sink.sendall(data)
        except OSError:
            pass
        finally:
            if not self.cut.is_set():  # a cut connection hangs rather than closes
                for end in (source, sink):
                    with contextlib.suppress(OSError):
                        end.shutdown(socket.SHUT_RDWR)

    def kubeconfig(self, original: str, path: Path) -> str:
        """A copy of ``original`` whose server is this proxy (TLS passes through: the API server's
        certificate is for 127.0.0.1, which the proxy is too)."""
        config = yaml.safe_load(Path(original).read_text())
        config["clusters"][0]["cluster"]["server"] = f"https://127.0.0.1:{self.port}"
        path.write_text(json.dumps(config))
        return str(path)

    def close(self) -> None:
        self.listener.close()
