"""``oam-operator schema TYPE``'s table (docs/operator.md#the-command-line): a type's properties
one per row, as ``vela show`` prints them, instead of 1,500 lines of JSON Schema.

Rows are the schema's nodes in path order, a nested property indented under its parent by its
own name (``env`` ``[]object``, then ``  name``); an array's element node is folded into its
row's type (``[]object``, ``[]string``). Enum values and platform-reserved marks go into the
description, which is wrapped to the terminal under its own column. ``--depth`` keeps the rows
of the first levels and says how many deeper ones it left out (the JSON Schema has them all).
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from oam_operator.oam.document.schema import PropertySchema, walk_schema

__all__ = ["Row", "render_table", "rows_of"]

HEADERS = ("NAME", "TYPE", "REQUIRED", "DEFAULT", "DESCRIPTION")
_MAX_DEFAULT = 16
_MIN_DESCRIPTION = 20


@dataclass(frozen=True)
class Row:
    name: str
    type: str
    required: str
    default: str
    description: str
    depth: int


def _type(node: PropertySchema) -> str:
    if node.type == "array":
        inner = node.items.type if node.items is not None and node.items.type else "any"
        return f"[]{inner}"
    if node.type == "object" and not node.properties:
        return "map" if node.additional_properties else "object"
    return node.type or "any"


def _default(value: Any) -> str:
    if value is None:
        return ""
    text = value if isinstance(value, str) else json.dumps(value, separators=(",", ":"))
    return text if len(text) <= _MAX_DEFAULT else text[: _MAX_DEFAULT - 1] + "…"


def _description(node: PropertySchema) -> str:
    parts = [node.description.strip()] if node.description.strip() else []
    if node.enum is not None:
        parts.append("Valid: " + ", ".join(str(v) for v in node.enum) + ".")
    if node.platform_reserved:
        parts.append("Platform-reserved: set by the ClusterProfile's capability rendering only.")
    return " ".join(parts)


def rows_of(fields: Mapping[str, PropertySchema]) -> list[Row]:
    """One row per property, nested ones under their parent's path."""
    rows = []
    for path, node in walk_schema(fields):
        if path.endswith("[]"):  # the element of an array: its type is in the array's row
            continue
        depth = path.replace("[]", "").count(".")
        name = "  " * depth + path.rsplit(".", 1)[-1]  # under its parent, indented
        rows.append(Row(name, _type(node), "yes" if node.required else "", _default(node.default),
                        _description(node), depth))
    return rows


def render_table(title: str, rows: list[Row], width: int, depth: int | None = None) -> str:
    """``title``, then the rows (those deeper than ``depth`` left out and counted) as a table
    whose DESCRIPTION column is wrapped to ``width``."""
    shown = [row for row in rows if depth is None or row.depth < depth]
    cells = [HEADERS, *((r.name, r.type, r.required, r.default) for r in shown)]
    widths = [max(len(cell[i]) for cell in cells) for i in range(4)]
    indent = sum(widths) + 2 * 4
    text_width = max(width - indent, _MIN_DESCRIPTION)
    lines = [title, ""]
    lines.append("  ".join(h.ljust(w) for h, w in zip(HEADERS, widths, strict=False)) + "  " + HEADERS[4])
    for row in shown:
        head = "  ".join(c.ljust(w) for c, w in zip((row.name, row.type, row.required, row.default), widths,
                                                    strict=True))
        wrapped = textwrap.wrap(row.description, text_width, break_long_words=False, break_on_hyphens=False) or [""]
        lines.append(f"{head}  {wrapped[0]}".rstrip())
        lines.extend(" " * indent + more for more in wrapped[1:])
    hidden = len(rows) - len(shown)
    if hidden:
        note = (f"{hidden} nested properties below level {depth} are not shown: --depth 0 shows every one, -o json "
                "the JSON Schema.")
        lines += ["", *textwrap.wrap(note, max(width, 40), break_long_words=False)]
    return "\n".join(lines) + "\n"
