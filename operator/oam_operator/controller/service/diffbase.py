"""kopf's diff base, kept nowhere: the operator needs no diff, so it pays no write for one.

kopf's default diff base is the whole essence of the object (spec, labels, annotations),
JSON-encoded into the ``<domain>/last-handled-configuration`` annotation. That costs twice:
an Application whose spec is larger than the API server's 256 KiB limit on annotations makes
every kopf patch fail (the finalizer is never removed, ``kubectl delete`` hangs), and every
new Application pays one more write for the annotation, after the finalizer's — at a
thousand Applications, a thousand patches that nobody reads.

The operator's handlers need no diff: the apply loop is a daemon that reads the live body
each pass (the generation it has handled is ``status.observedGeneration``) and the delete
branch is a deletion handler, which kopf selects by ``deletionTimestamp`` and the finalizer,
not by a diff. So this storage reports every object as already handled in its current state
(``fetch`` is the current essence, which is only ``metadata.generation`` so that it is built
without copying or walking the spec) and stores nothing: kopf sees no creation or update
cause, runs no change handler (there is none) and writes no annotation. An annotation left
by an earlier version stays as it is and is ignored.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, cast

import kopf


class StatelessDiffBaseStorage(kopf.DiffBaseStorage):
    """A diff base that is always the object's current generation and is never written."""

    def build(self, *, body: kopf.Body, extra_fields: Iterable[Any] | None = None) -> kopf.BodyEssence:
        generation = int((body.get("metadata") or {}).get("generation") or 0)
        return cast(kopf.BodyEssence, {"generation": generation})

    def fetch(self, *, body: kopf.Body) -> kopf.BodyEssence | None:
        return self.build(body=body)

    def store(self, *, body: kopf.Body, patch: kopf.Patch, essence: kopf.BodyEssence) -> None:
        return None
