"""How ``--help`` reads (docs/operator.md#settings): ``run``'s options grouped by concern, and
command summaries that end at a sentence.

``run`` has some fifty options. click lists options alphabetically in one two-column table whose
help column is about 45 characters wide, so an environment variable such as
``OAM_OPERATOR_ALLOW_CROSS_NAMESPACE_DEPENDENCIES`` was broken mid-word. Here each option gets
its flag line and, below it, its help at the full width, wrapped between words only; the
options stand under the headings of ``settings.GROUPS``. click's command list cuts a summary at
about 45 characters with ``...``; ``SentenceGroup`` shows the first sentence whole, wrapped.
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterable, Mapping, Sequence

import click

__all__ = ["SentenceGroup", "format_grouped_options"]

_HELP_INDENT = 4  # the help under its flag line


class SentenceGroup(click.Group):
    """A group whose ``--help`` lists each command with its first sentence, never cut."""

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = []
        for name in self.list_commands(ctx):
            command = self.get_command(ctx, name)
            if command is None or command.hidden:
                continue
            rows.append((name, command.get_short_help_str(limit=10_000)))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


def _wrapped(text: str, width: int, indent: int) -> str:
    return textwrap.fill(text, width=max(width, indent + 20), initial_indent=" " * indent,
                         subsequent_indent=" " * indent, break_long_words=False, break_on_hyphens=False)


def format_grouped_options(ctx: click.Context, formatter: click.HelpFormatter, params: Sequence[click.Parameter],
                           groups: Mapping[str, Iterable[str]], first: str) -> None:
    """Write ``params`` under the headings of ``groups`` (heading -> parameter names), the ones no
    group names under ``first``, first. Each option is its flag line, then its help below it."""
    by_name = {param.name: param for param in params if param.name is not None}
    placed = {name for names in groups.values() for name in names}
    sections = [(first, [name for name in by_name if name not in placed]),
                *((heading, list(names)) for heading, names in groups.items())]
    for heading, names in sections:
        records = [record for name in names if name in by_name
                   for record in [by_name[name].get_help_record(ctx)] if record is not None]
        if not records:
            continue
        with formatter.section(heading):
            for flags, help_text in records:
                formatter.write(" " * formatter.current_indent + flags + "\n")
                if help_text:
                    indent = formatter.current_indent + _HELP_INDENT
                    formatter.write(_wrapped(help_text, formatter.width, indent) + "\n")
