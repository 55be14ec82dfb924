"""Three costs of kopf, cut, and its LISTs and patches shown to whoever needs them. The costs:
its finalizer patches and the decoding of its lists and watch stream
(docs/operator.md#operator-cpu), and the memory of the bodies it holds (docs/operator.md#memory).

The bodies: kopf keeps each object's last body for its daemon and handlers. Every event it
lists or watches (``watching.infinite_watch``, the one stream both come through) has its
object's managed fields held as text first (``controller/reconcile/heldfields.py``), half of an
Application's memory.

The watch stream and the lists: kopf decodes every event line with the standard ``json`` module,
and every response of its GETs (the pages of its first LIST: 10,000 Applications at a restart)
with aiohttp's default, the same module; ``install`` points both at ``reconciler/jsoncodec.py``
(orjson with the standard decoder as fallback), which is 2.2 times as fast on an Application's
event.

The LISTs: ``observe_lists`` names, for a resource, who sees each LIST kopf makes of it as its
watch starts, page by page (``fetching.fetch_objs``): the fresh view takes kopf's first LIST of the
Applications as its term's when the term began before it (``freshview.py``), so a start lists them
once, not twice (docs/operator.md#a-quiet-restart). It may also say which objects go ``first``:
kopf hands a page's objects on before it fetches the next page, and in front of 10,000 settled
Applications the loop is so busy starting their loops that the last page came 7 s after the first
at 3,000; a new Application listed last waited for all of them. So the objects ``first`` picks are
handed on as their page arrives, the others held until the last page came (the LIST's objects all
held at once, not a page at a time: the held ones, their managed fields held as text at once, are
kopf's bodies a moment later anyway). Only kopf's first LIST of a resource and namespace is so
ordered: a later one (kopf's watch expired) comes while kopf holds every body already, and
holding them all again would double them for a moment. The held ones then go to kopf
``HELD_CHUNK`` at a time, with the resource's ``pace`` awaited between two chunks: kopf spends
about a millisecond of the loop on each (its daemon, its handlers), and 1,000 at once kept the
interpreter from a changed Application's pass for most of a second (urgency.py).

The finalizer patch:

kopf adds and removes its finalizer as a "transformation": it deep-copies the whole Application,
runs the transformation on the copy and diffs the two bodies with ``jsonpatch`` to find the ops.
For an Application with a dozen components, their managed fields and a status, that was 13 % of
the operator's Python time until all were Ready (1,000 × 10, profiled by sampling): one diff of
every field to find that one list under ``metadata`` grew.

``lean_json_patch`` gives the same ops for the transformations kopf 1.45 has (``block_deletion``,
``allow_deletion``, which only touch ``metadata.finalizers``): it copies ``metadata`` without its
``managedFields`` (shared, never written by a transformation), runs the transformations on that,
and diffs ``metadata`` alone. Anything else, a merge part or a transformation that replaced
another top-level field, goes to kopf's own method, so the result is never different, only
cheaper. ``install`` is idempotent; ``tests/unit/controller/test_kopftuning.py`` compares both
methods on real bodies.
"""

from __future__ import annotations

import copy
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from typing import Any, Protocol

import jsonpatch
from kopf._cogs.clients import api, fetching, patching, watching
from kopf._cogs.configs import configuration
from kopf._cogs.helpers import typedefs
from kopf._cogs.structs import patches

from oam_operator.reconciler import jsoncodec

from ..reconcile import heldfields

__all__ = ["FastJson", "ListObserver", "Pages", "install", "lean_get", "lean_json_patch", "lean_watch",
           "observe_lists", "observe_patches", "observed_fetch", "observed_patch"]

_KOPFS = patches.Patch.as_json_patch
_KOPFS_WATCH = watching.infinite_watch
_KOPFS_REQUEST = api.request
_KOPFS_FETCH = fetching.fetch_objs
_KOPFS_PATCH = patching.patch_obj
_SHARED = "managedFields"


def lean_json_patch(self: patches.Patch, body: Any = None) -> patches.JSONPatch:
    """``Patch.as_json_patch`` for a patch of transformations only (see the module docstring)."""
    base: Any = body if body is not None else self._original
    if not self:
        return []
    metadata = base.get("metadata") if base is not None else None
    if len(self) or not isinstance(metadata, Mapping):
        return _KOPFS(self, body)
    as_is = dict(base)
    meta_as_is = dict(metadata)
    meta_to_be = {k: (v if k == _SHARED else copy.deepcopy(v)) for k, v in meta_as_is.items()}
    to_be: dict[str, Any] = {**as_is, "metadata": meta_to_be}
    for fn in self.fns:
        fn(to_be)  # type: ignore[arg-type]
    others = (set(as_is) | set(to_be)) - {"metadata"}
    if any(to_be.get(key) is not as_is.get(key) for key in others) or "metadata" not in to_be \
            or to_be["metadata"] is not meta_to_be or meta_to_be.get(_SHARED) is not meta_as_is.get(_SHARED):
        return _KOPFS(self, body)
    before = {k: v for k, v in meta_as_is.items() if k != _SHARED}
    after = {k: v for k, v in meta_to_be.items() if k != _SHARED}
    ops: Any = jsonpatch.JsonPatch.from_diff({"metadata": before}, {"metadata": after}).patch
    return list(ops)


class FastJson:
    """What kopf's API module uses of ``json``: ``loads`` (the watch lines), and ``dumps`` as is."""

    loads = staticmethod(jsoncodec.loads)
    dumps = staticmethod(__import__("json").dumps)


async def lean_get(url: str, *, settings: configuration.OperatorSettings, payload: object | None = None,
                   headers: dict[str, str] | None = None, timeout: Any = None, logger: typedefs.Logger) -> Any:
    """kopf's ``api.get``, the response decoded by ``jsoncodec.loads`` (aiohttp's ``json`` takes a ``loads``)."""
    response = await _KOPFS_REQUEST(method="get", url=url, payload=payload, headers=headers, timeout=timeout,
                                    settings=settings, logger=logger)
    async with response:
        return await response.json(loads=jsoncodec.loads)


async def lean_watch(**kwargs: Any) -> AsyncIterator[Any]:
    """kopf's ``infinite_watch``, each event's object with its managed fields held as text."""
    async for event in _KOPFS_WATCH(**kwargs):
        if isinstance(event, dict):
            heldfields.compact(event.get("object"))
        yield event


class Pages(Protocol):
    """What sees one LIST of kopf's: each page's items, then the list's resourceVersion once all came."""

    def page(self, items: Sequence[Mapping[str, Any]]) -> None: ...

    def done(self, list_version: Any) -> None: ...


#: given the namespace listed (``None``: all) and the label selector, what sees this LIST, if any
ListObserver = Callable[[str | None, str], Pages | None]

#: whether a listed object goes to kopf before the LIST's others
FirstPick = Callable[[Mapping[str, Any]], bool]

#: a fresh pause per LIST, awaited between two chunks of the objects held back (urgency.py)
Pacing = Callable[[], Callable[[], Awaitable[None]]]

#: how many of the held-back objects go to kopf between two pauses: about 50 ms of the loop's time
HELD_CHUNK = 50

_OBSERVERS: dict[tuple[str, str], tuple[ListObserver, FirstPick | None, Pacing | None]] = {}
_LISTED_ONCE: set[tuple[str, str, Any]] = set()  # (group, plural, namespace) kopf has listed in full


def observe_lists(group: str, plural: str, observer: ListObserver | None, *, first: FirstPick | None = None,
                  pace: Pacing | None = None) -> None:
    """Let ``observer`` see each LIST kopf makes of ``group``/``plural`` from now on (``None``: nobody),
    and hand kopf the objects ``first`` picks before the others, the others ``HELD_CHUNK`` at a time
    with a ``pace`` between two chunks (see the module docstring)."""
    if observer is None:
        _OBSERVERS.pop((group, plural), None)
    else:
        _OBSERVERS[group, plural] = (observer, first, pace)


async def observed_fetch(*, settings: configuration.OperatorSettings, resource: Any, namespace: Any,
                         logger: typedefs.Logger) -> AsyncIterator[tuple[Any, str]]:
    """kopf's ``fetch_objs``, its pages shown to the resource's observer (``observe_lists``) and, in
    its first full LIST, the objects its ``first`` picks handed on before the others; a LIST cut
    short (an error, a cancellation) is not shown as done."""
    observer, first, pace = _OBSERVERS.get((resource.group, resource.plural), (None, None, None))
    selector = ",".join(sorted(set(settings.watching.label_selectors.collect(resource))))
    pages = observer(namespace, selector) if observer is not None else None
    scope = (resource.group, resource.plural, namespace)
    if scope in _LISTED_ONCE:
        first = None  # kopf holds these bodies already: holding them all again would double them
    held: list[Any] = []
    version = ""
    async for items, version in _KOPFS_FETCH(settings=settings, resource=resource, namespace=namespace,
                                             logger=logger):
        if pages is not None:
            pages.page(items)  # type: ignore[arg-type]
        if first is None:
            yield items, version
            continue
        now: list[Any] = []
        for item in items:
            if first(item):
                now.append(item)
            else:
                heldfields.compact(item)  # as kopf's stream would, now: it is held until the LIST ends
                held.append(item)
        if now:
            yield now, version
    _LISTED_ONCE.add(scope)
    if pages is not None:
        pages.done(version)
    pause = pace() if pace is not None else None
    for start in range(0, len(held), HELD_CHUNK):
        if start and pause is not None:
            await pause()
        yield held[start:start + HELD_CHUNK], version


_PATCH_OBSERVERS: dict[tuple[str, str], Callable[[Mapping[str, Any]], None]] = {}


def observe_patches(group: str, plural: str, observer: Callable[[Mapping[str, Any]], None] | None) -> None:
    """Show ``observer`` the body each patch of kopf's to ``group``/``plural`` returned (``None``: nobody)."""
    if observer is None:
        _PATCH_OBSERVERS.pop((group, plural), None)
    else:
        _PATCH_OBSERVERS[group, plural] = observer


async def observed_patch(**kwargs: Any) -> Any:
    """kopf's ``patch_obj``, the patched body shown to the resource's observer (``observe_patches``):
    a loop that waits for kopf's finalizer learns it is there when the API server answered, not
    when the watch brings the change (after kopf's whole LIST, at a start)."""
    patched, remaining = await _KOPFS_PATCH(**kwargs)
    resource = kwargs.get("resource")
    observer = _PATCH_OBSERVERS.get((getattr(resource, "group", ""), getattr(resource, "plural", "")))
    if observer is not None and isinstance(patched, Mapping):
        observer(patched)
    return patched, remaining


def install() -> None:
    """Make kopf build its finalizer patches with ``lean_json_patch``, decode its watch events
    and its GETs' responses with ``jsoncodec.loads``, hold its bodies' managed fields as text and
    show its LISTs and patches to their observers."""
    patches.Patch.as_json_patch = lean_json_patch  # type: ignore[method-assign]
    api.get = lean_get
    setattr(api, "json", FastJson)  # noqa: B010 (kopf exports no such name; it is its module's import)
    watching.infinite_watch = lean_watch
    fetching.fetch_objs = observed_fetch
    patching.patch_obj = observed_patch
