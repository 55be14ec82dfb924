"""The rule three leader-election timings must follow (docs/operator.md#leader-election).

Pure and of the standard library only: the settings check it at start-up, where a flag names
each value, and leader election checks it again for the timings it is built with.
"""

from __future__ import annotations

__all__ = ["timing_problem"]


def timing_problem(lease_duration: float, renew_deadline: float, retry_period: float,
                   names: tuple[str, str, str] = ("lease duration", "renew deadline", "retry period"),
                   shown: tuple[str, str, str] | None = None) -> str | None:
    """The rule a combination of lease settings breaks, or ``None`` when it can work.

    ``names`` are how the three settings are called in the message (their flags, at start-up);
    ``shown`` their values as given (default: seconds).
    """
    lease, renew, retry = names
    text = shown or tuple(f"{value:g}s" for value in (lease_duration, renew_deadline, retry_period))
    if lease_duration < 1:
        return f"{lease} ({text[0]}) must be at least 1s (a Lease counts whole seconds)"
    if renew_deadline <= 0 or retry_period <= 0:
        return f"{renew if renew_deadline <= 0 else retry} must be more than 0s"
    if renew_deadline >= lease_duration:
        return (f"{renew} ({text[1]}) must be less than {lease} ({text[0]}): the leader stops reconciling at the "
                f"renew deadline, and another instance may take the Lease over only after the lease duration")
    if retry_period >= renew_deadline:
        return (f"{retry} ({text[2]}) must be less than {renew} ({text[1]}): the leader renews every retry period "
                f"and must be able to retry before the renew deadline")
    return None
