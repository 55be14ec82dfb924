"""Whether a transform read anything outside the cluster (docs/operator.md#quiet-routine-passes).

A URL source or a chart may change with no event the operator could see: an Application whose
transform reads one is checked at its interval by a full pass, never skipped. ``Noticed`` wraps a
pipeline's URL reader or chart renderer and marks every call made within ``noticing``; calls
outside it (the CLI, admission) pass through unmarked.
"""

from __future__ import annotations

import contextvars
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, TypeVar, cast

__all__ = ["Noticed", "Reads", "noticed", "noticing"]

T = TypeVar("T")


class Reads:
    """What one ``noticing`` block saw: ``outside`` once a URL or a chart was read."""

    def __init__(self) -> None:
        self.outside = False


_current: contextvars.ContextVar[Reads | None] = contextvars.ContextVar("oam_outside_reads", default=None)


@contextmanager
def noticing() -> Iterator[Reads]:
    """Within the block, reads through a ``Noticed`` adapter mark the ``Reads`` it yields."""
    reads = Reads()
    token = _current.set(reads)
    try:
        yield reads
    finally:
        _current.reset(token)


class Noticed:
    """``inner`` (a URL reader or a chart renderer) whose every method call is noticed."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def __getattr__(self, name: str) -> Any:
        found = getattr(self._inner, name)
        if not callable(found):
            return found

        def marked(*args: Any, **kwargs: Any) -> Any:
            reads = _current.get()
            if reads is not None:
                reads.outside = True
            return found(*args, **kwargs)

        return marked


def noticed(inner: T) -> T:
    """``inner`` wrapped in ``Noticed``, as its own type for its callers."""
    return cast(T, Noticed(inner))
