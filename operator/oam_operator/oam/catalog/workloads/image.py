"""The container image check (docs/transform.md#shared-workload-properties ``image``).

An image must name an exact build: a digest, or a tag other than ``latest``; a floating
reference deploys whatever was pushed last. The reference is parsed as kurel parses it (the
weak validation of go-containerregistry's ``name.ParseReference``): first as a tag reference,
then as a digest reference; the registry is the first path element when it contains ``.`` or
``:`` and must be a valid URI authority; the repository uses ``[a-z0-9_./-]`` (2–255
characters); a tag ``[A-Za-z0-9_.-]`` (1–128); a digest is ``sha256:<64 lowercase hex>``.
"""

from __future__ import annotations

import string
from dataclasses import dataclass

from oam_operator.oam.errors import ValidationError
from oam_operator.oam.formatting.gofmt import go_quote

_TAG_CHARS = frozenset(string.ascii_letters + string.digits + "_.-")
_REPO_CHARS = frozenset(string.ascii_lowercase + string.digits + "_-./")
_HEX = frozenset("0123456789abcdef")
# Characters Go's url host parsing accepts unescaped (RFC 3986 unreserved and sub-delims, plus
# the few Go also lets through); anything else ASCII makes ``url.Parse`` fail or change the host.
_HOST_CHARS = frozenset(string.ascii_letters + string.digits + "-._~!$&'()*+,;=:[]<>\"")


@dataclass(frozen=True)
class ImageRef:
    """A parsed reference: its tag (``""`` when none was written) and whether it has a digest."""

    tag: str
    digest: bool


def _element_ok(value: str, allowed: frozenset[str], low: int, high: int) -> bool:
    return low <= len(value) <= high and all(ch in allowed for ch in value)


def _port_ok(text: str) -> bool:
    """Go's ``validOptionalPort``: empty, or ``:`` followed by digits only."""
    return text == "" or (text[0] == ":" and all(ch in string.digits for ch in text[1:]))


def _registry_ok(name: str) -> bool:
    """Whether ``url.Parse("//" + name).Host == name`` in Go."""
    for ch in name:
        if ord(ch) < 0x20 or ord(ch) == 0x7F:
            return False
        if ord(ch) < 0x80 and ch not in _HOST_CHARS:
            return False
    if name.startswith("["):
        end = name.rfind("]")
        return end >= 0 and _port_ok(name[end + 1 :])
    colon = name.rfind(":")
    return colon < 0 or _port_ok(name[colon:])


def _repository_ok(name: str) -> bool:
    if not name:
        return False
    parts = name.split("/", 1)
    repo = name
    if len(parts) == 2 and ("." in parts[0] or ":" in parts[0]):
        if not _registry_ok(parts[0]):
            return False
        repo = parts[1]
    return _element_ok(repo, _REPO_CHARS, 2, 255)


def _parse_tag(text: str) -> tuple[str, str] | None:
    """``name.NewTag``: (repository, tag) or ``None``."""
    base, tag = text, ""
    parts = text.split(":")
    if len(parts) > 1 and "/" not in parts[-1]:
        base, tag = ":".join(parts[:-1]), parts[-1]
        if tag == "":
            return None
    if tag and not _element_ok(tag, _TAG_CHARS, 1, 128):
        return None
    return (base, tag) if _repository_ok(base) else None


def _parse_digest(text: str) -> bool:
    """``name.NewDigest``: whether ``text`` is ``<repository>[:<tag>]@sha256:<hex>``."""
    parts = text.split("@")
    if len(parts) != 2:
        return False
    base, dig = parts
    if not dig.startswith("sha256:"):
        return False
    hexpart = dig[len("sha256:") :]
    if len(hexpart) != 64 or not set(hexpart) <= _HEX:
        return False
    tagged = _parse_tag(base)
    return _repository_ok(tagged[0] if tagged is not None else base)


def parse_image(text: str) -> ImageRef | None:
    """The reference, or ``None`` when ``name.ParseReference`` would refuse it."""
    tagged = _parse_tag(text)
    if tagged is not None:
        return ImageRef(tag=tagged[1], digest=False)
    if _parse_digest(text):
        return ImageRef(tag="", digest=True)
    return None


def check_image(image: str) -> None:
    """Refuse an unparseable image, ``:latest`` and an image without tag or digest."""
    ref = parse_image(image)
    quoted = go_quote(image)
    if ref is None:
        raise ValidationError(f"image {quoted} rejected: could not parse reference: {image}")
    if ref.digest:
        return
    if ref.tag == "latest":
        raise ValidationError(
            f"image {quoted} rejected: :latest tag not allowed; use an explicit version tag or digest"
        )
    if ref.tag == "":
        raise ValidationError(
            f"image {quoted} rejected: no tag or digest specified; use an explicit version tag or digest"
        )
