"""Deeply nested Applications (docs/operator.md#identity-hostile-input-and-limits): no single object can fail
the watch or a pass.

The API server accepts any nesting its JSON decoder accepts: up to 10,000 levels (Go's
``encoding/json`` limit, which also bounds what it ever sends back). Python's default
recursion limit of 1,000 is far below that: kopf's watch stream decoding (``json.loads``),
its deep copies and diffs, and our own snapshot of the body all recurse once or more per
level, so without the measures below one Application nested 1,000 deep would crash the watcher
and, restarted, crash it again for every Application in the cluster.

Two measures, both needed:

- ``prepare_process()`` raises the recursion limit to ``RECURSION_LIMIT`` (enough for ten
  Python frames per level of the deepest object the API server can hold) and sets the stack
  of every thread started afterwards to ``THREAD_STACK_BYTES`` so C-level recursion (the
  ``json`` scanner, ``repr``) has room for it: measured, 8 MiB (the usual default) holds about
  20,000 levels of C recursion, so 16 MiB holds four times what the API server can send. The
  main thread keeps the process's stack (8 MiB by default), which holds the watch decoding of
  10,000 levels. The stack is reserved address space (twice the usual per thread); only the
  pages a deep object touches are used.
- ``depth_refusal(spec)`` measures the spec's nesting without recursion at the start of
  each apply pass and refuses a spec deeper than ``MAX_SPEC_DEPTH`` with one exact message,
  before the transform, so no component type ever walks such a document.
"""

from __future__ import annotations

import sys
import threading
from typing import Any

RECURSION_LIMIT = 120_000
THREAD_STACK_BYTES = 16 * 1024 * 1024
MAX_SPEC_DEPTH = 100  # real Applications stay far below (a passthrough Deployment's env: ~14)


def prepare_process() -> None:
    """Raise the recursion limit and the stack size of threads started from now on."""
    if sys.getrecursionlimit() < RECURSION_LIMIT:
        sys.setrecursionlimit(RECURSION_LIMIT)
    threading.stack_size(THREAD_STACK_BYTES)


def nesting_depth(value: Any, stop_after: int | None = None) -> int:
    """Levels of mappings and lists in ``value`` (a scalar is 0, ``{}``/``[]`` are 1), iteratively.

    With ``stop_after``, the walk ends as soon as that depth is exceeded (the result is then
    ``stop_after + 1``), so measuring a hostile document costs no more than its first levels.
    """
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        deepest = max(deepest, level)
        if stop_after is not None and deepest > stop_after:
            return stop_after + 1
        stack.extend((child, level + 1) for child in children if isinstance(child, dict | list))
    return deepest


def depth_refusal(spec: Any) -> str | None:
    """The refusal of a spec nested deeper than ``MAX_SPEC_DEPTH``, else ``None``.

    The message names the first top-level field (or the list entry of ``components`` or
    ``policies``) that goes too deep, in the spec's key order.
    """
    if not isinstance(spec, dict) or nesting_depth(spec, stop_after=MAX_SPEC_DEPTH) <= MAX_SPEC_DEPTH:
        return None
    for key, value in spec.items():
        if key in ("components", "policies") and isinstance(value, list):
            for index, entry in enumerate(value):
                if nesting_depth(entry, stop_after=MAX_SPEC_DEPTH - 2) > MAX_SPEC_DEPTH - 2:
                    return _message(f"spec.{key}[{index}]")
        elif nesting_depth(value, stop_after=MAX_SPEC_DEPTH - 1) > MAX_SPEC_DEPTH - 1:
            return _message(f"spec.{key}")
    return _message("spec")  # not reached: some field holds the depth


def _message(where: str) -> str:
    limit = MAX_SPEC_DEPTH
    return f"{where} nests more than {limit} levels below spec; an Application may nest at most {limit}"
