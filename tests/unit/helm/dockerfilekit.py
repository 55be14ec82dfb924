"""A minimal Dockerfile reader for the image tests: instructions with continuations joined,
comments dropped, grouped by stage."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Stage:
    base: str
    name: str
    instructions: list[tuple[str, str]] = field(default_factory=list)

    def all(self, keyword: str) -> list[str]:
        return [rest for key, rest in self.instructions if key == keyword]


@dataclass
class Dockerfile:
    global_args: dict[str, str]
    stages: list[Stage]

    def stage(self, name: str) -> Stage:
        return next(s for s in self.stages if s.name == name)


def parse(path: Path) -> Dockerfile:
    logical: list[str] = []
    pending = ""
    for raw in path.read_text().splitlines():
        line = raw.strip()
        if not pending and (not line or line.startswith("#")):
            continue
        if line.startswith("#"):
            continue
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        logical.append(pending + line)
        pending = ""
    global_args: dict[str, str] = {}
    stages: list[Stage] = []
    for line in logical:
        keyword, _, rest = line.partition(" ")
        keyword = keyword.upper()
        if keyword == "FROM":
            match = re.fullmatch(r"(\S+)(?:\s+AS\s+(\S+))?", rest.strip(), re.IGNORECASE)
            assert match, line
            stages.append(Stage(base=match.group(1), name=match.group(2) or str(len(stages))))
        elif not stages:
            assert keyword == "ARG", f"only ARG may precede FROM: {line}"
            name, _, default = rest.partition("=")
            global_args[name.strip()] = default.strip()
        else:
            stages[-1].instructions.append((keyword, re.sub(r"\s+", " ", rest.strip())))
    return Dockerfile(global_args, stages)
