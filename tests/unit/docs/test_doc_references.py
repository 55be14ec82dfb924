"""Every reference from the code to ``docs/`` resolves, and nothing points at specs outside the repository.

A docstring or comment names a section of the documentation as ``docs/<file>.md#<anchor>``, where
``<anchor>`` is the GitHub slug of a heading of that file (docs/README.md). This test scans every
``.py`` file under ``operator/``, ``tools/``, ``bench/`` and ``tests/``, and every file of the chart under
``deploy/`` (templates, values, schema, NOTES), and fails, naming ``file:line``,
on a ``§`` (the old references to specifications that are not in the repository), on a
``docs/<file>.md`` that does not exist and on an anchor that is no heading's slug. It skips one file,
itself: its made-up examples are wrong on purpose. It checks the Markdown links between
the files of ``docs/`` (and from the README into ``docs/``) the same way. The resolver is tested on a
small made-up tree first, so the scan cannot pass by resolving nothing.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
CODE_ROOTS = ("operator", "tools", "bench", "tests")
#: Scanned whatever the file type: YAML, Helm templates, JSON schema, NOTES.txt.
DEPLOY_ROOT = "deploy"
#: Left out of the scan: this file, whose made-up tree (below) holds bad references on purpose.
EXCLUDED = frozenset({Path(__file__).resolve()})

_CODE_REF = re.compile(r"docs/([A-Za-z0-9_.-]+\.md)(?:#([A-Za-z0-9_-]*))?")
_MD_LINK = re.compile(r"\]\(([^)\s]+)\)")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")


def slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower-case, spaces to '-', only letters, digits, '-', '_' kept."""
    text = heading.strip().lower()
    return "".join("-" if c == " " else c for c in text if c.isalnum() or c in "-_ ")


def anchors(markdown: str) -> set[str]:
    """The anchors of every heading outside fenced code; repeated slugs get ``-1``, ``-2``, … as on GitHub."""
    seen: dict[str, int] = {}
    result: set[str] = set()
    fenced = False
    for line in markdown.splitlines():
        if _FENCE.match(line):
            fenced = not fenced
            continue
        match = None if fenced else _HEADING.match(line)
        if match is None:
            continue
        base = slug(match.group(2))
        count = seen.get(base, 0)
        seen[base] = count + 1
        result.add(base if count == 0 else f"{base}-{count}")
    return result


class Resolver:
    """Resolves ``<file>.md`` and ``<file>.md#<anchor>`` against one docs directory (files read once)."""

    def __init__(self, docs: Path) -> None:
        self.docs = docs
        self._anchors: dict[str, set[str] | None] = {}

    def problem(self, file: str, anchor: str | None) -> str | None:
        """Why ``docs/<file>#<anchor>`` does not resolve, or ``None`` when it does."""
        if file not in self._anchors:
            path = self.docs / file
            self._anchors[file] = anchors(path.read_text(encoding="utf-8")) if path.is_file() else None
        known = self._anchors[file]
        if known is None:
            return f"docs/{file} does not exist"
        if anchor is not None and anchor not in known:
            return f"docs/{file} has no heading with the anchor #{anchor}"
        return None


def code_problems(files: Iterable[Path], resolver: Resolver, root: Path) -> list[str]:
    """``file:line: reason`` for every ``§`` and every unresolved ``docs/…`` reference in ``files``."""
    problems: list[str] = []
    for path in files:
        where = path.relative_to(root)
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if "§" in line:
                problems.append(f"{where}:{number}: a § reference (name a docs/<file>.md#<anchor> instead)")
            for match in _CODE_REF.finditer(line):
                reason = resolver.problem(match.group(1), match.group(2))
                if reason is not None:
                    problems.append(f"{where}:{number}: {reason}")
    return problems


def link_problems(markdown: Path, resolver: Resolver, root: Path, *, prefix: str = "") -> list[str]:
    """``file:line: reason`` for every relative link of ``markdown`` into the docs that does not resolve.

    ``prefix`` is the path from ``markdown``'s directory to the docs (``""`` inside docs/, ``"docs/"``
    for the README); links elsewhere (URLs, other directories, in-page ``#anchor`` links are checked
    against ``markdown`` itself when it is in the docs) are left alone.
    """
    problems: list[str] = []
    fenced = False
    for number, line in enumerate(markdown.read_text(encoding="utf-8").splitlines(), 1):
        if _FENCE.match(line):
            fenced = not fenced
            continue
        if fenced:
            continue
        for match in _MD_LINK.finditer(line):
            target = match.group(1)
            if "://" in target or target.startswith("mailto:"):
                continue
            path, _, anchor = target.partition("#")
            if not path and prefix == "":
                path = markdown.name
            if not path.startswith(prefix) or not path.endswith(".md") or "/" in path[len(prefix):]:
                continue
            reason = resolver.problem(path[len(prefix):], anchor if "#" in target else None)
            if reason is not None:
                problems.append(f"{markdown.relative_to(root)}:{number}: {reason}")
    return problems


def python_files(root: Path) -> list[Path]:
    files: list[Path] = []
    for name in CODE_ROOTS:
        files.extend(
            p for p in sorted((root / name).rglob("*.py")) if ".venv" not in p.parts and p.resolve() not in EXCLUDED
        )
    return files


def deploy_files(root: Path) -> list[Path]:
    return [p for p in sorted((root / DEPLOY_ROOT).rglob("*")) if p.is_file()]


# -- the resolver itself, on a made-up tree --------------------------------------------------------


def test_slug_follows_github() -> None:
    assert slug("Output order of `oam-operator build`") == "output-order-of-oam-operator-build"
    assert slug("Fleet scale: requests, flow control, shards") == "fleet-scale-requests-flow-control-shards"
    assert slug("apply, delete and is_deletion_allowed") == "apply-delete-and-is_deletion_allowed"
    assert slug("Resolving a trait's properties") == "resolving-a-traits-properties"


def test_anchors_skip_code_and_number_repeats() -> None:
    text = "# Title\n\n## Same\n\n```sh\n# not a heading\n```\n\n## Same\n"
    assert anchors(text) == {"title", "same", "same-1"}


def test_resolver_finds_good_and_bad_references(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "guide.md").write_text("# Guide\n\n## Waves and `orders`\n\nSee [there](other.md#nowhere).\n")
    (docs / "other.md").write_text("# Other\n\nBack to [the waves](guide.md#waves-and-orders).\n")
    package = tmp_path / "operator"
    package.mkdir()
    module = package / "mod.py"
    module.write_text(
        '"""Good: docs/guide.md#waves-and-orders and docs/guide.md."""\n'
        "# bad anchor: docs/guide.md#waves\n"
        "# bad file: docs/missing.md#waves-and-orders\n"
        "# old style: transform.md §8.4\n"
    )
    resolver = Resolver(docs)
    assert code_problems([module], resolver, tmp_path) == [
        "operator/mod.py:2: docs/guide.md has no heading with the anchor #waves",
        "operator/mod.py:3: docs/missing.md does not exist",
        "operator/mod.py:4: a § reference (name a docs/<file>.md#<anchor> instead)",
    ]
    assert link_problems(docs / "guide.md", resolver, tmp_path) == [
        "docs/guide.md:5: docs/other.md has no heading with the anchor #nowhere"
    ]
    assert link_problems(docs / "other.md", resolver, tmp_path) == []


# -- the repository ------------------------------------------------------------------------------


def test_every_code_reference_resolves() -> None:
    files = python_files(ROOT)
    assert len(files) > 100, "the scan found almost no Python files; is ROOT right?"
    assert {p.relative_to(ROOT).parts[0] for p in files} == set(CODE_ROOTS)
    assert ROOT / "tests" / "conftest.py" in files and Path(__file__).resolve() not in files
    problems = code_problems(files, Resolver(ROOT / "docs"), ROOT)
    assert problems == [], "\n".join(problems)


def test_code_references_docs_at_all() -> None:
    """The scan is not vacuous: the code does point into docs/."""
    hits = sum(len(_CODE_REF.findall(p.read_text(encoding="utf-8"))) for p in python_files(ROOT))
    assert hits > 100


def test_every_deploy_reference_resolves() -> None:
    files = deploy_files(ROOT)
    chart = ROOT / DEPLOY_ROOT / "helm" / "oam-operator"
    assert {chart / "values.yaml", chart / "templates" / "_common.tpl", chart / "templates" / "NOTES.txt"} <= set(files)
    problems = code_problems(files, Resolver(ROOT / "docs"), ROOT)
    assert problems == [], "\n".join(problems)


def test_deploy_references_docs_at_all() -> None:
    """The deploy scan is not vacuous: the chart does point into docs/."""
    hits = sum(len(_CODE_REF.findall(p.read_text(encoding="utf-8"))) for p in deploy_files(ROOT))
    assert hits > 5


@pytest.mark.parametrize("page", sorted((ROOT / "docs").glob("*.md")), ids=lambda p: p.name)
def test_links_between_docs_resolve(page: Path) -> None:
    problems = link_problems(page, Resolver(ROOT / "docs"), ROOT)
    assert problems == [], "\n".join(problems)


def test_readme_links_into_docs_resolve() -> None:
    readme = ROOT / "README.md"
    assert "docs/README.md" in readme.read_text(encoding="utf-8")
    problems = link_problems(readme, Resolver(ROOT / "docs"), ROOT, prefix="docs/")
    assert problems == [], "\n".join(problems)
