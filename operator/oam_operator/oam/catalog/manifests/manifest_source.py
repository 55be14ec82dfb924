"""The manifest source shared by ``crd`` and ``manifests``
(docs/transform.md#raw-objects-passthrough-crd-and-manifests).

Exactly one of ``inline`` (multi-document YAML) or ``url`` (http/https). An inline source is
parsed and checked when the config is built; a URL source is read through the injected
``UrlReader`` when objects are generated, so the transform itself never does I/O.

Decisions recorded here (the spec leaves these causes open): documents are numbered from 1
among the non-empty ones, so a cause reads ``document 2: missing apiVersion or kind``; a YAML
syntax error reads ``yaml: line <N>: <problem>``; a ``*List`` expands into its items in both
component types; a null ``inline``/``url`` counts as absent.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import Any, TypeVar, cast
from urllib.parse import urlsplit

from oam_operator.oam.document.loader import YamlSyntaxError, load_all
from oam_operator.oam.document.schema import PropertySchema
from oam_operator.oam.engine.handlers import Object, ParsingUrlReader, UrlReader, implements
from oam_operator.oam.errors import OamError
from oam_operator.oam.formatting.gofmt import go_quote, go_type_name

MAX_RESPONSE_BYTES = 5 * 1024 * 1024
_T = TypeVar("_T")


class SourceError(Exception):
    """A manifest-source failure; the handler turns it into its own prefixed error."""


@dataclass
class ManifestSource:
    inline: str | None = None
    url: str | None = None


def source_schema() -> dict[str, PropertySchema]:
    return {
        "inline": PropertySchema(type="string", description="Multi-document YAML of the objects, written inline."),
        "url": PropertySchema(type="string", description="An http(s) URL serving the multi-document YAML."),
    }


def parse_source(props: dict[str, Any], extra: Collection[str] = ()) -> ManifestSource:
    for key in sorted(props):
        if key == "chart":
            raise SourceError('manifest source: "chart" source is not yet supported (designed, not implemented)')
        if key not in ("inline", "url") and key not in extra:
            raise SourceError(f"manifest source: unknown property {go_quote(key)}")
    inline, url = props.get("inline"), props.get("url")
    given = ("inline" in props) + ("url" in props)
    if given != 1:
        raise SourceError(f"manifest source: exactly one of inline/url is required (got {given})")
    if "inline" in props:
        if not isinstance(inline, str):
            raise SourceError('manifest source: property "inline" must be a YAML string')
        return ManifestSource(inline=inline)
    if not isinstance(url, str):
        raise SourceError('manifest source: property "url" must be a string')
    scheme = urlsplit(url).scheme.lower()
    if scheme == "oci":
        raise SourceError("manifest source: oci:// urls are not yet supported (designed, not implemented)")
    if scheme not in ("http", "https"):
        raise SourceError(f"manifest source: unsupported url scheme {go_quote(scheme)} (only http/https)")
    return ManifestSource(url=url)


def _checked(doc: Any, where: str) -> Object:
    if not isinstance(doc, dict):
        raise SourceError(f"manifest source: parse manifests: {where}: expected a mapping, got {go_type_name(doc)}")
    for key in ("apiVersion", "kind"):
        value = doc.get(key)
        if not isinstance(value, str) or not value:
            raise SourceError(f"manifest source: parse manifests: {where}: missing apiVersion or kind")
    return doc


def parse_documents(text: str) -> list[Object]:
    """Every object of a YAML stream, in source order, ``*List`` kinds expanded."""
    try:
        documents = load_all(text)
    except YamlSyntaxError as exc:
        where = f"line {exc.line}: " if exc.line is not None else ""
        raise SourceError(f"manifest source: parse manifests: yaml: {where}{exc.cause}") from exc
    objects: list[Object] = []
    for n, (doc, _) in enumerate(documents, start=1):
        obj = _checked(doc, f"document {n}")
        items = obj.get("items")
        if str(obj["kind"]).endswith("List") and isinstance(items, list):
            objects.extend(_checked(item, f"document {n} items[{i}]") for i, item in enumerate(items))
        else:
            objects.append(obj)
    return objects


def read_documents(url: str, reader: UrlReader | None) -> list[Object]:
    """The objects of a URL source. A reader that keeps parsed sources (the operator's,
    ``ParsingUrlReader``) parses a source only when its content changed."""
    if reader is not None and implements(reader, ParsingUrlReader):
        parsing = cast(ParsingUrlReader, reader)
        return _reading(url, lambda: parsing.read_parsed(url, lambda data: parse_documents(_text(url, data))))
    return parse_documents(read_url(url, reader))


def _reading(url: str, read: Callable[[], _T]) -> _T:
    """``read()``, its failures worded as the manifest source's."""
    try:
        return read()
    except SourceError:
        raise
    except OamError as exc:
        raise SourceError(f"manifest source: {exc.message}") from exc
    except Exception as exc:
        raise SourceError(f"manifest source: reading {go_quote(url)}: {exc}") from exc


def read_url(url: str, reader: UrlReader | None) -> str:
    if reader is None:
        raise SourceError(f"manifest source: reading {go_quote(url)}: no URL reader is configured")
    return _text(url, _reading(url, lambda: reader.read(url)))


def _text(url: str, data: bytes) -> str:
    if len(data) > MAX_RESPONSE_BYTES:
        raise SourceError(f"manifest source: {go_quote(url)} response exceeds max size {MAX_RESPONSE_BYTES} bytes")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SourceError(f"manifest source: reading {go_quote(url)}: response is not UTF-8 text") from exc


def object_label(obj: Object) -> str:
    """``<Kind> "<name>"`` for messages."""
    meta = obj.get("metadata")
    name = meta.get("name", "") if isinstance(meta, dict) else ""
    return f"{obj.get('kind', '')} {go_quote(str(name or ''))}"
