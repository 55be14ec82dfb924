"""The change windows that decide a pass: its ClusterProfile's and its Application's (docs/operator.md#change-windows).

A ClusterProfile's ``spec.changeWindows`` has the change-window policy's properties (``windows``,
``driftWhileClosed``) and is read by the same rules (``change_window.for_profile``); both owners'
windows apply (``combine``), so an Application's can only narrow its profile's. A profile whose
windows cannot be read refuses every Application using it, naming the profile, as a profile
the transform cannot read does (docs/transform.md#the-clusterprofile-document).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from oam_operator.oam.errors import PolicyError
from oam_operator.oam.formatting.gofmt import go_quote
from oam_operator.operatorpolicies import ChangeWindows, Windows, combine
from oam_operator.operatorpolicies.change_window import for_profile

__all__ = ["PROFILE_FIELD", "ProfileWindowsRefused", "change_windows"]

PROFILE_FIELD = "changeWindows"


class ProfileWindowsRefused(Exception):
    """A ClusterProfile's ``spec.changeWindows`` cannot be read; ``str()`` is the status message."""


def profile_windows(profile_name: str, profile: Mapping[str, Any] | None) -> Windows | None:
    """The profile's windows, ``None`` without any; raises ``ProfileWindowsRefused``."""
    spec = (profile or {}).get("spec")
    raw = spec.get(PROFILE_FIELD) if isinstance(spec, Mapping) else None
    if raw is None:
        return None
    if not isinstance(raw, Mapping):
        raise ProfileWindowsRefused(f"ClusterProfile {go_quote(profile_name)}: spec.{PROFILE_FIELD} must be an object "
                                    "with windows (and driftWhileClosed)")
    try:
        return for_profile(profile_name, raw)
    except PolicyError as error:
        text = str(error)  # a property's path (``windows[0].schedule …``), else a sentence
        said = f".{text}" if text.startswith(("windows[", "driftWhileClosed")) else f": {text}"
        raise ProfileWindowsRefused(f"ClusterProfile {go_quote(profile_name)}: spec.{PROFILE_FIELD}{said}") from None


def change_windows(profile_name: str, profile: Mapping[str, Any] | None,
                   application: Windows | None) -> ChangeWindows | None:
    """The windows deciding this Application's changes, ``None`` when no owner sets any."""
    windows = combine(profile_windows(profile_name, profile), application)
    return windows if windows.owners else None
