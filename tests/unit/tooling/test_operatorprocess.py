"""The one operator-process harness (tools/operatorprocess.py), with a stand-in for ``oam-operator run``:
a small Python process that serves the same metrics and ``/healthz`` on the ports of its command
line and logs JSON lines among others."""

from __future__ import annotations

import signal
import socket
import sys
import textwrap
from pathlib import Path

import pytest

from tools import operatorprocess
from tools.operatorprocess import NotServing, OperatorProcess, free_port, run_command

STAND_IN = textwrap.dedent("""
    import http.server, json, os, sys, threading, time
    from prometheus_client import CollectorRegistry, Counter, Gauge, start_http_server
    argv = sys.argv[1:]
    assert argv[0] == "run", argv
    port = lambda flag: int(argv[argv.index(flag) + 1])
    registry = CollectorRegistry()
    Gauge("oam_operator_leader", "leading", ["instance"], registry=registry).labels("x").set(1)
    requests = Counter("oam_operator_api_requests", "requests", ["method"], registry=registry)
    requests.labels("GET").inc(5)
    requests.labels("PATCH").inc(2)
    start_http_server(port("--metrics-port"), addr="127.0.0.1", registry=registry)

    class Health(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            body = json.dumps({"leadership": {"role": "leader", "losses": 0}}).encode()
            self.send_response(200)
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = http.server.HTTPServer(("127.0.0.1", port("--health-port")), Health)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    print(json.dumps({"msg": "pass finished", "namespace": "a", "name": "one",
                      "leaked": sorted(k for k in os.environ if k.startswith("OAM_OPERATOR_")),
                      "pod": os.environ.get("POD_NAME")}), flush=True)
    print("a traceback, not JSON", flush=True)
    print("[1, 2]", flush=True)
    print(json.dumps({"msg": "pass failed", "namespace": "b", "name": "two"}), flush=True)
    if "--exit" in argv:
        sys.exit(3)
    while True:
        time.sleep(0.1)
""")


def test_the_run_command_line_is_spelled_in_one_order() -> None:
    assert run_command(kubeconfig="/k", metrics_port=1, health_port=2, namespaces=["a", "b"],
                       operator_namespace="a", extra=["--use-operator-identity"], launcher=["op"]) == [
        "op", "run", "--kubeconfig", "/k", "--namespace", "a", "--namespace", "b", "--operator-namespace", "a",
        "--metrics-port", "1", "--health-port", "2", "--log-format", "json", "--use-operator-identity"]
    default = run_command(kubeconfig="/k", metrics_port=1, health_port=2, log_format=None)
    assert default == [str(Path(sys.executable).parent / "oam-operator"), "run", "--kubeconfig", "/k",
                       "--metrics-port", "1", "--health-port", "2"]


def test_a_free_port_is_below_the_ephemeral_range_and_bindable_on_every_address() -> None:
    low = operatorprocess._ephemeral_range()[0]
    for _ in range(20):
        port = free_port()
        assert 20000 <= port < low
        with socket.socket() as sock:
            sock.bind(("0.0.0.0", port))


def test_without_room_below_the_ephemeral_range_the_kernel_picks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(operatorprocess, "_ephemeral_range", lambda: (1024, 65535))
    port = free_port()
    assert 1024 <= port <= 65535
    with socket.socket() as sock:
        sock.bind(("0.0.0.0", port))


def test_a_process_serves_logs_and_stops(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OAM_OPERATOR_NAMESPACE", "leaks")
    operator = OperatorProcess.start(tmp_path / "op.log", kubeconfig="/k", launcher=[sys.executable, "-c", STAND_IN],
                                     name="inst-a", cwd=tmp_path)
    try:
        operator.wait_serving(30)
        assert operator.leader_gauge() == 1.0 and operator.leads()
        assert operator.api_requests() == 7 and operator.write_requests() == 2
        assert operator.health()[0] == 200 and operator.leadership()["role"] == "leader"
        operator.wait_for(lambda: len(operator.logs()) == 2, 10, "the log")
        first = operator.logs()[0]
        assert first["leaked"] == [] and first["pod"] == "inst-a"
        assert [e["name"] for e in operator.passes()] == ["one", "two"]
        assert [e["name"] for e in operator.passes(namespace="b")] == ["two"]
        assert operator.rss_bytes() is not None
        operator.pause()
        assert operator.paused
        operator.resume()
    finally:
        assert operator.stop(signal.SIGTERM) != 0
    assert not operator.alive() and operator.rss_bytes() is None


def test_waiting_on_a_process_that_exits_says_so_with_its_log(tmp_path: Path) -> None:
    operator = OperatorProcess.start(tmp_path / "op.log", kubeconfig="/k", launcher=[sys.executable, "-c", STAND_IN],
                                     extra=["--exit"], cwd=tmp_path)
    with pytest.raises(NotServing, match=r"(?s)exited with 3:.*a traceback, not JSON"):
        operator.wait_for(lambda: False, 30, "nothing")
