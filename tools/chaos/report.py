"""The soak's report in Markdown (bench/results/SOAK.md): what was injected, what held, how fast
the fleet came back."""

from __future__ import annotations

from .engine import Outcome
from .invariants import INVARIANTS

__all__ = ["markdown"]


def markdown(outcome: Outcome, commit: str, profile: str) -> str:
    config = outcome.config
    lines = [
        "# Chaos soak", "",
        f"Seed {config.seed}, {config.duration / 60:.0f} min of faults, {config.apps} Applications "
        f"({config.configmaps} ConfigMaps each" + (", a Deployment in every third" if config.deployments else "")
        + f"), two leader-elected instances (one behind a proxy that cuts it off), the {profile} control plane; "
        f"commit `{commit}`; {outcome.wall / 60:.1f} min wall. Made by `make soak` (docs/chaos.md#the-soak).", "",
        "## Faults by kind", "", "| fault | injected | skipped (no target) |", "|---|---:|---:|",
    ]
    for kind in sorted(set(outcome.faults) | set(outcome.skipped)):
        lines.append(f"| {kind} | {outcome.faults[kind]} | {outcome.skipped[kind]} |")
    lines += ["", "## Violations by invariant", "", "| invariant | violations |", "|---|---:|"]
    for invariant in INVARIANTS:
        lines.append(f"| {invariant} | {len(outcome.violations_of(invariant))} |")
    examples = outcome.violations[:20]
    if examples:
        lines += ["", "First violations:", ""] + [f"- {v}" for v in examples]
    converged = "not within the bound" if outcome.convergence is None else f"{outcome.convergence:.1f} s"
    quantiles = outcome.drift_quantiles()
    drift = "no hand edit was corrected" if quantiles is None else (
        f"p50 {quantiles[0]:.1f} s, p90 {quantiles[1]:.1f} s over {len(outcome.drift)} corrected hand edits "
        f"({outcome.superseded_edits} superseded by a spec edit or deletion first)")
    lines += ["", "## Convergence and drift", "",
              f"- Convergence after the last fault (all Ready, every object as its spec says): {converged}.",
              f"- Hand edit to corrected: {drift}.",
              f"- Successful writes by the instances (audit log): {outcome.writes}; writes naming the uid of a "
              f"deleted incarnation, refused by the API server: {outcome.refused}.", "",
              "## Operator RSS over time", "", "| instance | samples | first MiB | max MiB | last MiB |",
              "|---|---:|---:|---:|---:|"]
    for name, samples in outcome.rss.items():
        if samples:
            values = [v / 2**20 for _, v in samples]
            lines.append(f"| {name} | {len(values)} | {values[0]:.0f} | {max(values):.0f} | {values[-1]:.0f} |")
    lines += rss_by_minute(outcome)
    lines += ["", "## Error log lines by message", ""]
    if outcome.errors:
        lines += ["| message | lines |", "|---|---:|"]
        lines += [f"| {message.replace('|', '/')} | {count} |" for message, count in outcome.errors.most_common()]
    else:
        lines.append("None.")
    return "\n".join(lines) + "\n"


def rss_by_minute(outcome: Outcome) -> list[str]:
    """The largest RSS each slot's instance (``a``, ``b``: restarts included) had in each minute."""
    samples = [(at, name[0], value) for name, series in outcome.rss.items() for at, value in series]
    if not samples:
        return []
    start = min(at for at, _, _ in samples)
    table: dict[int, dict[str, int]] = {}
    for at, slot, value in samples:
        row = table.setdefault(int((at - start) // 60), {})
        row[slot] = max(row.get(slot, 0), value)
    slots = sorted({slot for _, slot, _ in samples})
    lines = ["", "| minute | " + " | ".join(f"{slot} MiB" for slot in slots) + " |",
             "|---:|" + "---:|" * len(slots)]
    for minute, row in sorted(table.items()):
        cells = " | ".join(f"{row[slot] / 2**20:.0f}" if slot in row else "-" for slot in slots)
        lines.append(f"| {minute} | {cells} |")
    return lines
