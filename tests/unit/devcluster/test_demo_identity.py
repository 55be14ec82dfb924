"""``make demo`` belongs to its checkout (issue 14): its cluster name and the operator's code identity."""

from __future__ import annotations

from pathlib import Path

from tools.demo import NAME, ROOT, checkout_name, code_fingerprint


def test_each_checkout_has_its_own_demo_name() -> None:
    assert checkout_name(ROOT) == NAME
    assert NAME.startswith("demo-") and len(NAME) == len("demo-") + 8
    assert checkout_name(Path("/work/a")) != checkout_name(Path("/work/b"))
    assert checkout_name(Path("/work/a")) == checkout_name(Path("/work/a"))


def test_the_code_fingerprint_follows_the_operators_sources(tmp_path: Path) -> None:
    (tmp_path / "operator" / "pkg").mkdir(parents=True)
    (tmp_path / "pyproject.toml").write_text("[project]\n")
    module = tmp_path / "operator" / "pkg" / "mod.py"
    module.write_text("x = 1\n")
    first = code_fingerprint(tmp_path)
    assert code_fingerprint(tmp_path) == first
    module.write_text("x = 2\n")
    assert code_fingerprint(tmp_path) != first
    (tmp_path / "operator" / "pkg" / "notes.txt").write_text("not code")
    assert code_fingerprint(tmp_path) == code_fingerprint(tmp_path)
