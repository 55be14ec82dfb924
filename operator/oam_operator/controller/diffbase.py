"""kopf's diff base without the spec (issue 18, docs/operator.md#identity-hostile-input-and-limits).

kopf's default diff base is the whole essence of the object (spec, labels, annotations),
JSON-encoded into the ``<domain>/last-handled-configuration`` annotation. An Application
whose spec is larger than the API server's 256 KiB limit on annotations then makes every
kopf patch fail, so the finalizer is never removed and ``kubectl delete`` hangs; a deeply
nested spec makes kopf's deep copies and diffs recurse per level.

The operator's handlers need no diff: the apply loop is a daemon that reads the live body
each pass and the delete branch is a deletion handler. So the essence kept here is only
``metadata.generation`` — it changes exactly when the spec does, it is a few bytes, and it
is built without copying or walking the spec. kopf still sees "something changed" when the
generation moves and keeps its bookkeeping (``fully_handled_once``) as before. An old
spec-sized annotation left by an earlier version is simply replaced by the small one.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, cast

import kopf


class GenerationDiffBaseStorage(kopf.AnnotationsDiffBaseStorage):
    """An annotation diff base holding ``{"generation": N}`` only."""

    def build(self, *, body: kopf.Body, extra_fields: Iterable[Any] | None = None) -> kopf.BodyEssence:
        generation = int((body.get("metadata") or {}).get("generation") or 0)
        return cast(kopf.BodyEssence, {"generation": generation})

    def fetch(self, *, body: kopf.Body) -> kopf.BodyEssence | None:
        stored = super().fetch(body=body)
        if stored is None:
            return None
        if set(stored) != {"generation"}:  # a spec-sized base of an earlier version: replace it
            return cast(kopf.BodyEssence, {"generation": -1})
        return stored
