"""URL sources are read again only when they changed, and parsed again only when their content
did (docs/operator.md#url-sources-are-cached).

The operator transforms an Application on every pass. Downloading and parsing a ``manifests``
URL source each time would cost, for a 4.5 MB bundle, 2.2–2.5 s and about a CPU-second per pass
even of an Application that is Ready all along, and the parses' garbage would keep the process's
memory high. ``CachingUrlReader`` keeps, per URL, the response's validators (``ETag``,
``Last-Modified``) and the objects parsed from it:

- A source with a validator is read with a conditional GET; ``304 Not Modified`` costs neither
  the download nor the parse.
- A source without one is downloaded, and parsed only when the SHA-256 of its content changed.
- The objects are kept as compressed compact JSON (a few hundred KB for a 4.5 MB bundle of CRDs)
  and handed out as a fresh copy each time: the transform changes the objects it is given.
  Content that does not survive JSON unchanged (a non-string key) is parsed every time instead.
- The cache holds at most ``max_bytes`` of that JSON, least recently used first out; a source
  larger than that is never kept.
- Each entry knows which Applications read it: what an Application's transform no longer reads
  is released when that transform succeeds (``settle``), everything at its deletion
  (``forget``); an entry no Application uses is dropped at once.

Who reads is told by ``reading_for``, around one Application's transform, through a context
variable: readers are called from deep inside the transform, which knows no Application.
Passes run in several threads at once; one lock guards the table, never held during a read.
"""

from __future__ import annotations

import contextvars
import hashlib
import json
import threading
import zlib
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from oam_operator.oam.remote.fetch import HttpUrlReader

__all__ = ["CachingUrlReader", "SourceCache"]

Objects = list[dict[str, Any]]

_reading: contextvars.ContextVar[set[str] | None] = contextvars.ContextVar("oam_url_sources_read", default=None)
_user: contextvars.ContextVar[str] = contextvars.ContextVar("oam_url_source_user", default="")


@dataclass
class _Entry:
    etag: str
    last_modified: str
    digest: str
    packed: bytes  # zlib of the objects' compact JSON
    users: set[str] = field(default_factory=set)

    def objects(self) -> Objects:
        value: Objects = json.loads(zlib.decompress(self.packed))
        return value


def _pack(objects: Objects) -> bytes | None:
    """The objects as compressed JSON; ``None`` when JSON does not give them back unchanged."""
    text = json.dumps(objects, separators=(",", ":"), ensure_ascii=False)
    if json.loads(text) != objects:
        return None
    return zlib.compress(text.encode(), 1)


class SourceCache:
    """The table of kept sources (module docstring); counts its hits for the benchmark and tests."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self._entries: OrderedDict[str, _Entry] = OrderedDict()
        self._lock = threading.Lock()
        self.parses = 0  # sources parsed
        self.unchanged = 0  # reads answered without a parse (304, or the same content)

    @property
    def size(self) -> int:
        """Bytes kept."""
        with self._lock:
            return sum(len(entry.packed) for entry in self._entries.values())

    def urls(self) -> list[str]:
        with self._lock:
            return list(self._entries)

    @contextmanager
    def reading_for(self, user: str) -> Iterator[None]:
        """Reads within are ``user``'s (an Application's ``namespace/name``); when the block ends
        without an error, what ``user`` did not read in it is released."""
        read: set[str] = set()
        user_token, read_token = _user.set(user), _reading.set(read)
        try:
            yield
        finally:
            _user.reset(user_token)
            _reading.reset(read_token)
        self.settle(user, read)

    def settle(self, user: str, read: set[str]) -> None:
        """``user`` reads exactly ``read`` now: release the rest."""
        with self._lock:
            for url, entry in list(self._entries.items()):
                if url not in read and user in entry.users:
                    entry.users.discard(user)
                    if not entry.users:
                        del self._entries[url]

    def forget(self, user: str) -> None:
        """``user`` is gone: it reads nothing any more."""
        self.settle(user, set())

    def note(self, url: str) -> None:
        """``url`` is read in the current block of ``reading_for``."""
        read = _reading.get()
        if read is not None:
            read.add(url)

    def lookup(self, url: str) -> _Entry | None:
        with self._lock:
            entry = self._entries.get(url)
            if entry is not None:
                self._entries.move_to_end(url)
            return entry

    def keep(self, url: str, entry: _Entry) -> None:
        """Keep ``entry`` for ``url``, for the current user, within the bound."""
        user = _user.get()
        with self._lock:
            old = self._entries.pop(url, None)
            if old is not None:
                entry.users |= old.users
            if user:
                entry.users.add(user)
            if len(entry.packed) > self.max_bytes:
                return
            self._entries[url] = entry
            total = sum(len(e.packed) for e in self._entries.values())
            while total > self.max_bytes:
                _, evicted = self._entries.popitem(last=False)
                total -= len(evicted.packed)

    def used(self, url: str, entry: _Entry) -> None:
        """The current user read ``entry`` again."""
        user = _user.get()
        with self._lock:
            if user and self._entries.get(url) is entry:
                entry.users.add(user)


class CachingUrlReader:
    """A ``ParsingUrlReader`` over ``HttpUrlReader`` with a ``SourceCache`` (module docstring)."""

    def __init__(self, reader: HttpUrlReader, cache: SourceCache) -> None:
        self.reader = reader
        self.cache = cache

    def read(self, url: str) -> bytes:
        return self.reader.read(url)

    def read_parsed(self, url: str, parse: Callable[[bytes], Objects]) -> Objects:
        cache = self.cache
        cache.note(url)
        entry = cache.lookup(url)
        fetched = self.reader.fetch(url, entry.etag, entry.last_modified) if entry else self.reader.fetch(url)
        if fetched.data is None:  # 304: the entry (which sent the validators) is still right
            assert entry is not None
            cache.unchanged += 1
            cache.used(url, entry)
            return entry.objects()
        digest = hashlib.sha256(fetched.data).hexdigest()
        if entry is not None and entry.digest == digest:
            cache.unchanged += 1
            cache.keep(url, _Entry(fetched.etag, fetched.last_modified, digest, entry.packed))
            return entry.objects()
        objects = parse(fetched.data)
        cache.parses += 1
        packed = _pack(objects)
        if packed is not None:
            cache.keep(url, _Entry(fetched.etag, fetched.last_modified, digest, packed))
        return objects
