"""A dependency that does not exist, told apart from one that is not Ready yet
(docs/app-dependencies.md#a-missing-application).

An ``app-dependency`` on an Application that does not exist is waited for: it may be created
later, as when a whole directory of Applications is applied at once. But a typo in its name
would look the same: a Normal ``Waiting`` for ever. So once a named Application has been missing
for the grace period (``--missing-dependency-grace``, 1m), the operator posts one Warning Event
``DependencyMissing`` naming it and goes on waiting. The Waiting pass, which otherwise has no
timed requeue, is requeued once at the grace's end while a missing one has not been warned of.

The grace is counted in the operator's memory from the first pass that found the dependency
missing: it starts again after a restart, and again for a dependency that appears and goes.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from .app_dependency import AppRef

__all__ = ["DEPENDENCY_MISSING", "MissingDependencies", "missing_message"]

DEPENDENCY_MISSING = "DependencyMissing"  # the Warning Event's reason


@dataclass
class MissingDependencies:
    """Since when each missing dependency of one Application is missing, and which were warned of."""

    since: dict[AppRef, datetime] = field(default_factory=dict)
    warned: set[AppRef] = field(default_factory=set)

    def observe(self, missing: Iterable[AppRef], now: datetime, grace: timedelta) -> tuple[list[AppRef], float | None]:
        """The pass found ``missing``: those missing for ``grace`` and not warned of yet (now
        counted as warned), and the seconds until the next one is due (``None``: none is)."""
        current = set(missing)
        for ref in [ref for ref in self.since if ref not in current]:  # it appeared
            del self.since[ref]
            self.warned.discard(ref)
        for ref in current:
            self.since.setdefault(ref, now)
        overdue = sorted(ref for ref in current if ref not in self.warned and now - self.since[ref] >= grace)
        self.warned.update(overdue)
        waiting = [self.since[ref] + grace - now for ref in current if ref not in self.warned]
        return overdue, (min(waiting).total_seconds() if waiting else None)

    def clear(self) -> None:
        self.since.clear()
        self.warned.clear()


def missing_message(own_namespace: str, overdue: Sequence[AppRef], grace: str) -> str:
    """``Application db named by app-dependency does not exist after 1m; still waiting for it
    (check its name, or create it)``."""
    names = ", ".join(ref.display(own_namespace) for ref in overdue)
    if len(overdue) == 1:
        return (f"Application {names} named by app-dependency does not exist after {grace}; still waiting for it "
                "(check its name, or create it)")
    return (f"Applications {names} named by app-dependency do not exist after {grace}; still waiting for them "
            "(check their names, or create them)")
