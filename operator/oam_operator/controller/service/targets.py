"""The targets by name: the operator's own ClusterProfiles and the standard inventory's together
(docs/multicluster.md#the-standard-cluster-inventory).

A pass asks for a profile by name (``spec.profile``, a topology's ``clusters``/``clusterSelector``),
whichever kind holds it: the operator's own kind wins a name both hold, and a name held in two
inventory namespaces is the one of the namespace ``--inventory-namespaces`` lists first. Each
standard profile so ignored is logged once, as a warning, while it is.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping
from typing import Any

from ..reconcile.inventory import merged
from .inventory import Key, StandardProfiles

__all__ = ["TargetProfiles"]

log = logging.getLogger("oam_operator.controller")


class TargetProfiles:
    """Both kinds of ClusterProfile by name; ``own`` is the operator's kind (name -> body), fed by kopf."""

    def __init__(self, own: dict[str, dict[str, Any]], standard: StandardProfiles | None) -> None:
        self.own = own
        self.standard = standard
        self._shadowed: set[str] = set()  # the warnings logged and still true
        self._lock = threading.Lock()

    def get(self, name: str) -> Mapping[str, Any] | None:
        """The profile called ``name``, ``None`` when neither kind holds it."""
        own = self.own.get(name)
        if own is not None or self.standard is None:
            return own
        for namespace in self.standard.namespaces:  # the first namespace holding the name
            found = self.standard.get((namespace, name))
            if found is not None:
                return found
        return None

    def all(self) -> dict[str, Mapping[str, Any]]:
        """Every profile by name (a topology selects among them)."""
        if self.standard is None:
            return dict(self.own)
        return merged(dict(self.own), self.standard.profiles(), self.standard.namespaces)[0]

    def own_changed(self, name: str, body: dict[str, Any] | None) -> tuple[Mapping[str, Any] | None,
                                                                           Mapping[str, Any] | None]:
        """An event of the operator's own kind: keep it; the profile of that name before and after."""
        old = self.get(name)
        if body is None:
            self.own.pop(name, None)
        else:
            self.own[name] = body
        self.warn_shadowed()
        return old, self.get(name)

    def standard_changed(self, key: Key, old: Mapping[str, Any] | None) -> tuple[Mapping[str, Any] | None,
                                                                                 Mapping[str, Any] | None]:
        """A standard profile changed (``old``: as it was; the store holds the new one): the
        profile of its name before and after."""
        name = key[1]
        if self.standard is None:
            return None, None
        now = self.standard.profiles()
        before = {k: v for k, v in now.items() if k != key}
        if old is not None:
            before[key] = old
        self.warn_shadowed()
        if name in self.own:
            return self.own[name], self.own[name]
        return self._standard_named(name, before), self._standard_named(name, now)

    def warn_shadowed(self) -> None:
        """Log each standard profile newly ignored for another holding its name."""
        if self.standard is None:
            return
        shadowed = {str(item) for item in merged(dict(self.own), self.standard.profiles(),
                                                  self.standard.namespaces)[1]}
        with self._lock:
            new = shadowed - self._shadowed
            self._shadowed = shadowed
        for line in sorted(new):
            log.warning(line)

    def _standard_named(self, name: str, profiles: Mapping[Key, Mapping[str, Any]]) -> Mapping[str, Any] | None:
        assert self.standard is not None
        for namespace in self.standard.namespaces:
            found = profiles.get((namespace, name))
            if found is not None:
                return found
        return None
