"""``status.timeline``: per revision, when each wave and the objects gating it became Ready, and
the critical path ``explain`` prints from it (docs/operator.md#the-timeline).

Kept compact so the status stays small at fleet scale: offsets are whole milliseconds since the
revision started, an object is ``Kind/name`` (``Kind/namespace/name`` outside the Application's
namespace), and every list is bounded (``MAX_REVISIONS``, ``MAX_WAVES``, ``MAX_GATES``).
"""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import Field

from .meta import ApiModel

__all__ = ["FIRST_PASS", "MAX_GATES", "MAX_REVISIONS", "MAX_WAVES", "Outcome", "Step", "TimelineEntry", "TimelineWave",
           "critical_path", "render_path"]

MAX_REVISIONS = 5
MAX_WAVES = 32
MAX_GATES = 3


class Outcome:
    """How a revision's timeline ended."""

    READY = "Ready"
    FAILED = "Failed"
    SUPERSEDED = "Superseded"


class TimelineWave(ApiModel):
    """One apply wave of a revision, once it became Ready."""

    wave: int = Field(description="The apply wave.")
    ready_ms: int = Field(description="When every object of the wave was Ready, in ms since the revision started.",
                          json_schema_extra={"format": "int64"})
    gates: list[str] | None = Field(
        default=None,
        description="The objects Ready last, which gated the wave (Kind/name; at most 3); absent when the wave "
        "was Ready in the pass that applied it.")


class TimelineEntry(ApiModel):
    """One revision: from the first pass that saw its input to Ready, a failure or the next revision."""

    revision: int | None = Field(default=None, description="status.revision of the revision.",
                                 json_schema_extra={"format": "int64"})
    key: str = Field(description="Digest of the revision's input (status.processingDigest).")
    started: str = Field(description="When the first pass saw the revision's input (RFC 3339, milliseconds).")
    ended_ms: int | None = Field(default=None, description="When it ended, in ms since it started; absent while open.",
                                 json_schema_extra={"format": "int64"})
    outcome: str | None = Field(default=None, description="Ready, Failed or Superseded; absent while open.")
    trace_id: str | None = Field(default=None, description="Its OpenTelemetry trace id, when tracing is on.")
    applied_ms: int | None = Field(default=None, description="When its first pass that applied began, in ms since "
                                   "it started.", json_schema_extra={"format": "int64"})
    waves: list[TimelineWave] | None = Field(default=None, description="The waves Ready so far (at most 32).")
    waiting: list[str] | None = Field(
        default=None, description="While open: the first not-Ready objects of the wave being applied (at most 3).")
    applying: int | None = Field(default=None, description="The wave being applied when it was last seen; absent "
                                 "once every wave was Ready.")


@dataclass(frozen=True)
class Step:
    """One step of a critical path: the object (or wave) that gated a wave, and for how long."""

    label: str
    seconds: float


#: The wait before the first pass that applied (kopf starts a new Application's first pass up to
#: 2 s after it is seen) is a step of its own once it shows as 0.1 s.
FIRST_PASS = "first pass"
SHOWN_MS = 50


def critical_path(entry: TimelineEntry) -> list[Step]:
    """Each wave of ``entry`` in order, named by its first gating object, with the time from the
    previous wave's readiness (the first pass that applied, for the first wave) to its own."""
    since = entry.applied_ms or 0
    steps = [Step(FIRST_PASS, since / 1000)] if since >= SHOWN_MS else []
    for wave in entry.waves or ():
        label = _label(wave.gates[0]) if wave.gates else f"wave {wave.wave}"
        steps.append(Step(label, (wave.ready_ms - since) / 1000))
        since = wave.ready_ms
    return steps


def render_path(steps: list[Step]) -> str:
    """``db StatefulSet 8.1 s → web Deployment 2.0 s``."""
    return " → ".join(f"{step.label} {step.seconds:.1f} s" for step in steps)


def _label(gate: str) -> str:
    """``StatefulSet/db`` → ``db StatefulSet``; ``Kind/ns/name`` → ``ns/name Kind``."""
    kind, _, where = gate.partition("/")
    return f"{where} {kind}"
