"""The transform pipeline and its adapters: address policy, guarded URL reader, chart fetching.

A real HTTP server on 127.0.0.1 stands in for a URL source; the guard's rule is exercised on
the addresses it actually connects to.
"""

from __future__ import annotations

import http.server
import ipaddress
import stat
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from oam_operator.oam import OamError, parse_application
from oam_operator.oam.catalog.flux.helm_renderer import FetchingChartRenderer, HelmBinaryRenderer
from oam_operator.oam.pipeline import DisabledUrlReader, PipelineOptions, build_pipeline
from oam_operator.oam.remote.addresses import AddressPolicy, address_class, parse_networks
from oam_operator.oam.remote.fetch import HttpUrlReader

BODY = b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: served\n"


class _Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        if self.path.startswith("/redirect"):
            self.send_response(302)
            self.send_header("Location", "http://127.0.0.2:9/elsewhere")
            self.end_headers()
            return
        self.send_response(200)
        self.send_header("Content-Length", str(len(BODY)))
        self.end_headers()
        self.wfile.write(BODY)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def served() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize(
    ("address", "kind"),
    [
        ("127.0.0.1", "loopback"),
        ("::1", "loopback"),
        ("::ffff:127.0.0.1", "loopback"),
        ("169.254.169.254", "link-local"),
        ("fe80::1", "link-local"),
        ("10.1.2.3", "private"),
        ("172.16.0.1", "private"),
        ("192.168.1.1", "private"),
        ("fd00::1", "private"),
        ("0.0.0.0", "unspecified"),
        ("224.0.0.1", "multicast"),
        ("100.64.0.1", "non-public"),
        ("8.8.8.8", None),
        ("2001:4860:4860::8888", None),
    ],
)
def test_address_class(address: str, kind: str | None) -> None:
    assert address_class(ipaddress.ip_address(address)) == kind


def test_parse_networks() -> None:
    assert [str(n) for n in parse_networks("127.0.0.1, 10.0.0.0/8,,10.0.0.0/8")] == ["127.0.0.1/32", "10.0.0.0/8"]
    assert [str(n) for n in parse_networks(["::1", "10.1.2.3/8"])] == ["::1/128", "10.0.0.0/8"]
    with pytest.raises(ValueError) as info:
        parse_networks("10.0.0.0/8,intranet")
    assert str(info.value) == '"intranet" is not an IP network such as 10.0.0.0/8 or 127.0.0.1'


def test_policy_refuses_internal_addresses_unless_allowed() -> None:
    policy = AddressPolicy(hint="ask the platform team")
    with pytest.raises(OamError) as info:
        policy.check("http://meta/x", "meta", "169.254.169.254")
    assert str(info.value) == (
        'reading "http://meta/x": refused to connect to meta (169.254.169.254): a link-local address'
        " (URL sources may reach only public addresses); ask the platform team"
    )
    AddressPolicy(allowed=parse_networks("169.254.0.0/16")).check("http://meta/x", "meta", "169.254.169.254")
    policy.check("http://public/x", "public", "8.8.8.8")


def test_policy_refuses_a_name_when_any_of_its_addresses_is_internal() -> None:
    with pytest.raises(OamError) as info:
        AddressPolicy().check_host("http://localhost/x", "localhost", 80)
    assert str(info.value).startswith('reading "http://localhost/x": refused to connect to localhost (')
    assert "a loopback address (URL sources may reach only public addresses)" in str(info.value)


def test_unguarded_reader_reads_loopback(served: str) -> None:
    assert HttpUrlReader().read(f"{served}/objects.yaml") == BODY


def test_guarded_reader_refuses_loopback_before_connecting(served: str) -> None:
    url = f"{served}/objects.yaml"
    with pytest.raises(OamError) as info:
        HttpUrlReader(policy=AddressPolicy(hint="allow it")).read(url)
    assert str(info.value) == (
        f'reading "{url}": refused to connect to 127.0.0.1: a loopback address'
        " (URL sources may reach only public addresses); allow it"
    )


def test_guarded_reader_reads_an_allowed_network(served: str) -> None:
    reader = HttpUrlReader(policy=AddressPolicy(allowed=parse_networks("127.0.0.1/32")))
    assert reader.read(f"{served}/objects.yaml") == BODY


def test_guarded_reader_checks_every_redirect(served: str) -> None:
    reader = HttpUrlReader(policy=AddressPolicy(allowed=parse_networks("127.0.0.1/32")))
    with pytest.raises(OamError) as info:
        reader.read(f"{served}/redirect")
    assert str(info.value) == (
        'reading "http://127.0.0.2:9/elsewhere": refused to connect to 127.0.0.2: a loopback address'
        " (URL sources may reach only public addresses)"
    )


def fake_helm(tmp_path: Path) -> str:
    """A helm that prints its chart argument's content: the chart file the renderer handed it."""
    script = tmp_path / "helm"
    script.write_text('#!/bin/sh\necho "chart=$3"\ncat "$3"\n')
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return str(script)


def test_fetching_renderer_downloads_the_chart_and_renders_the_local_copy(served: str, tmp_path: Path) -> None:
    policy = AddressPolicy(allowed=parse_networks("127.0.0.0/8"))
    renderer = FetchingChartRenderer(HelmBinaryRenderer(fake_helm(tmp_path)), HttpUrlReader(policy=policy),
                                     policy.check_host)
    out = renderer.render(f"{served}/charts/demo", "1.0.0", {})
    first, rest = out.split("\n", 1)
    assert first.startswith("chart=") and first.endswith(".tgz") and "oam-chart-" in first
    assert rest.encode() == BODY
    assert not Path(first.removeprefix("chart=")).exists()  # the downloaded copy is removed


def test_fetching_renderer_refuses_before_running_helm(served: str, tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    script = tmp_path / "helm"
    script.write_text(f"#!/bin/sh\ntouch {marker}\n")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    policy = AddressPolicy()
    renderer = FetchingChartRenderer(HelmBinaryRenderer(str(script)), HttpUrlReader(policy=policy), policy.check_host)
    with pytest.raises(OamError) as info:
        renderer.render(f"{served}/charts/demo", "1.0.0", {})
    assert "refused to connect to 127.0.0.1: a loopback address" in str(info.value)
    with pytest.raises(OamError) as info:
        renderer.render("oci://127.0.0.1:5000/charts/demo", "1.0.0", {})
    assert str(info.value).startswith(
        'reading "oci://127.0.0.1:5000/charts/demo": refused to connect to 127.0.0.1: a loopback address'
    )
    assert not marker.exists()


MANIFESTS_APP = """\
apiVersion: oam-operator.dev/v1alpha1
kind: Application
metadata: {name: shop, namespace: shop}
spec:
  components:
    - name: extra
      type: manifests
      properties:
        url: "URL"
"""


def transform(pipeline_options: PipelineOptions, url: str) -> list[dict[str, object]]:
    pipeline = build_pipeline(pipeline_options)
    transformer = pipeline.transformer
    app = parse_application(MANIFESTS_APP.replace("URL", url), component_types=transformer.component_types(),
                            trait_types=transformer.trait_types())
    result = transformer.transform(app, pipeline.context(namespace="shop", domain="oam-operator.dev"))
    return result.objects()


def test_cli_pipeline_reads_url_sources_from_any_address(served: str) -> None:
    objects = transform(PipelineOptions(), f"{served}/objects.yaml")
    assert [(o["kind"], o["metadata"]["name"]) for o in objects] == [("ConfigMap", "served")]  # type: ignore[index]


def test_guarded_pipeline_refuses_with_the_component_named(served: str) -> None:
    url = f"{served}/objects.yaml"
    with pytest.raises(OamError) as info:
        transform(PipelineOptions(address_policy=AddressPolicy(hint="allow it")), url)
    assert str(info.value) == (
        f'manifests component "extra": manifest source: reading "{url}": refused to connect to 127.0.0.1: a loopback address'
        " (URL sources may reach only public addresses); allow it"
    )


def test_disabled_url_sources_say_why(served: str) -> None:
    url = f"{served}/objects.yaml"
    with pytest.raises(OamError) as info:
        transform(PipelineOptions(url_sources=False, url_sources_disabled_hint="inline them"), url)
    assert str(info.value) == f'manifests component "extra": manifest source: reading "{url}": URL sources are disabled; inline them'
    with pytest.raises(OamError) as info:
        DisabledUrlReader().read("http://x")
    assert str(info.value) == 'reading "http://x": URL sources are disabled'


def test_guarded_pipeline_fetches_charts_itself() -> None:
    plain = build_pipeline()
    guarded = build_pipeline(PipelineOptions(address_policy=AddressPolicy()))
    assert isinstance(plain.chart_renderer, HelmBinaryRenderer)
    assert isinstance(guarded.chart_renderer, FetchingChartRenderer)
    assert guarded.context(namespace="a", domain=None).url_reader is guarded.url_reader
