"""How the operator process runs Python's cyclic garbage collector (docs/operator.md#operator-cpu).

Measured at 1,000 Applications × 10 objects, the collector's own accounting (``gc.callbacks``)
took about a sixth of the operator's CPU to Ready with Python's defaults: every pass, watch event
and response allocates thousands of short-lived containers, so the youngest generation was
collected every 700 of them and its survivors promoted often enough that full collections,
each walking the whole heap (everything imported and built at the start included), came every
few seconds. Reference counting frees nearly all of it; the collector is only needed for cycles.

``tune_collector()``, called once the process has built what it keeps for its life (before
kopf starts), moves everything allocated until then out of the collector's reach
(``gc.freeze``: it is never garbage) and collects the youngest generation after
``YOUNG_THRESHOLD`` allocations instead of 700, so short-lived objects are mostly freed before
a collection sees them and few reach the older generations.
"""

from __future__ import annotations

import gc

__all__ = ["MIDDLE_THRESHOLD", "OLD_THRESHOLD", "YOUNG_THRESHOLD", "tune_collector"]

YOUNG_THRESHOLD = 50_000
MIDDLE_THRESHOLD = 10  # Python's: a middle collection every 10 young ones
OLD_THRESHOLD = 10  # Python's, and a full one only once the survivors grew by a quarter


def tune_collector() -> None:
    """Freeze what exists now and raise the youngest generation's threshold (see the module)."""
    gc.collect()  # what the start left as garbage is not frozen with the rest
    gc.freeze()
    gc.set_threshold(YOUNG_THRESHOLD, MIDDLE_THRESHOLD, OLD_THRESHOLD)
