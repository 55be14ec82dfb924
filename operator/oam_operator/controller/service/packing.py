"""Compression of what the watch of owned objects keeps per object (docs/operator.md#reads-from-the-watch).

Raw deflate with a 2 KiB window and a small compressor state: an object's JSON (a copy, a field
set) is a few KiB whose repeats are close together, so the ratio is that of ``zlib.compress``,
while compressing costs about a sixth of it (``zlib.compress`` sets up a 256 KiB state on every
call, and every watch event and every write response is compressed). The output is deterministic,
so two packed values are equal exactly when their inputs are.
"""

from __future__ import annotations

import zlib

__all__ = ["pack", "unpack"]

_WINDOW_BITS = -11  # raw deflate (no header), 2 KiB window
_MEMORY_LEVEL = 5


def pack(data: bytes) -> bytes:
    compressor = zlib.compressobj(6, zlib.DEFLATED, _WINDOW_BITS, _MEMORY_LEVEL)
    return compressor.compress(data) + compressor.flush()


def unpack(packed: bytes) -> bytes:
    return zlib.decompress(packed, _WINDOW_BITS)
