"""URL sources are kept parsed (docs/operator.md#url-sources-are-cached): by URL and validator
(ETag, Last-Modified) or content digest, bounded in bytes, released when no Application reads
them; through the operator's transform, on a local HTTP server that counts its answers."""

from __future__ import annotations

import hashlib
import http.server
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from oam_operator.controller.reconcile.composition import OperatorTransform
from oam_operator.controller.reconcile.settings import Settings
from oam_operator.oam.errors import OamError
from oam_operator.oam.remote.fetch import HttpUrlReader
from oam_operator.oam.remote.sourcecache import CachingUrlReader, SourceCache


@dataclass
class Site:
    """What the server serves, per path, and what it answered."""

    bodies: dict[str, bytes] = field(default_factory=dict)
    validators: str = "etag"  # "etag", "last-modified" or "none"
    answers: list[tuple[str, int]] = field(default_factory=list)


def manifest(name: str, key: str = "value") -> bytes:
    return f"apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: {name}}}\ndata: {{key: {key}}}\n".encode()


@pytest.fixture
def site() -> Iterator[tuple[Site, str]]:
    state = Site()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = state.bodies[self.path]
            etag = '"' + hashlib.sha256(body).hexdigest()[:16] + '"'
            modified = f"Sun, 06 Dec 2026 04:{len(body) % 60:02d}:00 GMT"
            fresh = ((state.validators == "etag" and self.headers.get("If-None-Match") == etag)
                     or (state.validators == "last-modified" and self.headers.get("If-Modified-Since") == modified))
            status = 304 if fresh else 200
            state.answers.append((self.path, status))
            self.send_response(status)
            if state.validators == "etag":
                self.send_header("ETag", etag)
            if state.validators == "last-modified":
                self.send_header("Last-Modified", modified)
            self.send_header("Content-Length", "0" if fresh else str(len(body)))
            self.end_headers()
            if not fresh:
                self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield state, f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def application(name: str, *urls: str) -> dict[str, Any]:
    return {"apiVersion": "oam-operator.dev/v1alpha1", "kind": "Application",
            "metadata": {"name": name, "namespace": "team-a"},
            "spec": {"components": [{"name": f"m{i}", "type": "manifests", "properties": {"url": url}}
                                    for i, url in enumerate(urls)]}}


def operator_transform() -> OperatorTransform:
    return OperatorTransform.from_settings(Settings(url_source_allowed_networks="127.0.0.0/8"))


def names(transform: OperatorTransform, body: dict[str, Any]) -> list[str]:
    encoded, _ = transform.transform(body, cluster_id="c", domain="oam-operator.dev", profile=None)
    return [str(obj["metadata"]["name"]) for obj in encoded.objects]


@pytest.mark.parametrize("validators", ["etag", "last-modified"])
def test_an_unchanged_source_is_neither_downloaded_nor_parsed_again(site: tuple[Site, str], validators: str) -> None:
    state, base = site
    state.validators = validators
    state.bodies["/a.yaml"] = manifest("a")
    transform = operator_transform()
    cache = transform.pipeline.sources
    assert cache is not None
    body = application("one", f"{base}/a.yaml")
    for _ in range(3):
        assert names(transform, body) == ["a"]
    assert state.answers == [("/a.yaml", 200), ("/a.yaml", 304), ("/a.yaml", 304)]
    assert (cache.parses, cache.unchanged) == (1, 2)
    state.bodies["/a.yaml"] = manifest("a", "changed")  # a new validator: downloaded and parsed again
    encoded, _ = transform.transform(body, cluster_id="c", domain="oam-operator.dev", profile=None)
    assert encoded.objects[0]["data"] == {"key": "changed"}
    assert state.answers[-1] == ("/a.yaml", 200) and cache.parses == 2


def test_without_validators_the_content_digest_decides(site: tuple[Site, str]) -> None:
    state, base = site
    state.validators = "none"
    state.bodies["/a.yaml"] = manifest("a")
    transform = operator_transform()
    cache = transform.pipeline.sources
    assert cache is not None
    body = application("one", f"{base}/a.yaml")
    for _ in range(3):
        assert names(transform, body) == ["a"]
    assert [status for _, status in state.answers] == [200, 200, 200]  # downloaded each time
    assert (cache.parses, cache.unchanged) == (1, 2)  # parsed once


def test_each_pass_gets_its_own_copy(site: tuple[Site, str]) -> None:
    """The transform places objects into the namespace (it changes what it is given): a kept
    source must come back as it was parsed, not as the last pass left it."""
    state, base = site
    state.bodies["/a.yaml"] = manifest("a")
    transform = operator_transform()
    first, _ = transform.transform(application("one", f"{base}/a.yaml"), cluster_id="c", domain="d", profile=None)
    other = {**application("two", f"{base}/a.yaml"), "metadata": {"name": "two", "namespace": "team-b"}}
    second, _ = transform.transform(other, cluster_id="c", domain="d", profile=None)
    assert first.objects[0]["metadata"]["namespace"] == "team-a"
    assert second.objects[0]["metadata"]["namespace"] == "team-b"


def test_a_source_no_application_reads_is_dropped(site: tuple[Site, str]) -> None:
    state, base = site
    state.bodies.update({"/a.yaml": manifest("a"), "/b.yaml": manifest("b")})
    transform = operator_transform()
    cache = transform.pipeline.sources
    assert cache is not None
    names(transform, application("one", f"{base}/a.yaml", f"{base}/b.yaml"))
    names(transform, application("two", f"{base}/b.yaml"))
    assert sorted(cache.urls()) == [f"{base}/a.yaml", f"{base}/b.yaml"]
    names(transform, application("one", f"{base}/b.yaml"))  # one no longer reads a.yaml
    assert cache.urls() == [f"{base}/b.yaml"]
    transform.forget("team-a", "one")
    assert cache.urls() == [f"{base}/b.yaml"]  # two still reads it
    transform.forget("team-a", "two")
    assert cache.urls() == [] and cache.size == 0


def test_a_failed_transform_releases_nothing_and_a_refused_source_is_not_kept(site: tuple[Site, str]) -> None:
    state, base = site
    state.bodies.update({"/a.yaml": manifest("a"), "/bad.yaml": b"apiVersion: v1\nmetadata: {}\n"})
    transform = operator_transform()
    cache = transform.pipeline.sources
    assert cache is not None
    names(transform, application("one", f"{base}/a.yaml"))
    with pytest.raises(OamError, match="missing apiVersion or kind"):
        names(transform, application("one", f"{base}/bad.yaml"))
    assert cache.urls() == [f"{base}/a.yaml"]


def test_the_cache_is_bounded_in_bytes_least_recently_used_first(site: tuple[Site, str]) -> None:
    state, base = site
    for name in "abc":
        state.bodies[f"/{name}.yaml"] = manifest(name, name * 2000)
    reader = HttpUrlReader()
    probe = SourceCache(10**9)
    CachingUrlReader(reader, probe).read_parsed(f"{base}/a.yaml", lambda data: [{"data": data.decode()}])
    one = probe.size
    cache = SourceCache(2 * one + one // 2)
    caching = CachingUrlReader(reader, cache)
    for name in "abc":
        caching.read_parsed(f"{base}/{name}.yaml", lambda data: [{"data": data.decode()}])
    assert cache.urls() == [f"{base}/b.yaml", f"{base}/c.yaml"] and cache.size <= cache.max_bytes
    tiny = SourceCache(one - 1)
    CachingUrlReader(reader, tiny).read_parsed(f"{base}/a.yaml", lambda data: [{"data": data.decode()}])
    assert tiny.urls() == []  # larger than the bound: never kept
