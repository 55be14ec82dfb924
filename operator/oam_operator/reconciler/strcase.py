"""The ``strcase`` kebab conversion (docs/reconciler.md#policy-annotations), shared by policy annotations and
status hints. Only ASCII letters and digits are classified; separators become ``-`` without
collapsing runs; anything else is copied unchanged. Standard library only, so the status
analyzer keeps its no-dependency import.
"""

from __future__ import annotations

_SEPARATORS = frozenset(" _-.")


def kebab(value: str) -> str:
    """``SSAMerge`` → ``ssa-merge``, ``IfUnowned`` → ``if-unowned``, `` if_unowned `` → ``if-unowned``."""
    s = value.strip()
    out: list[str] = []
    for i, ch in enumerate(s):
        is_upper = "A" <= ch <= "Z"
        is_lower = "a" <= ch <= "z"
        is_digit = "0" <= ch <= "9"
        lowered = ch.lower() if is_upper else ch
        if i + 1 < len(s):
            nxt = s[i + 1]
            next_upper = "A" <= nxt <= "Z"
            next_lower = "a" <= nxt <= "z"
            next_digit = "0" <= nxt <= "9"
            if (
                (is_upper and (next_lower or next_digit))
                or (is_lower and (next_upper or next_digit))
                or (is_digit and (next_upper or next_lower))
            ):
                if is_upper and next_lower and i > 0 and "A" <= s[i - 1] <= "Z":
                    out.append("-")  # end of an acronym: SSAMerge -> ssa-merge
                out.append(lowered)
                if is_lower or is_digit or next_digit:
                    out.append("-")
                continue
        out.append("-" if ch in _SEPARATORS else lowered)
    return "".join(out)
