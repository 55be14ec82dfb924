"""The import-direction check (tools/lint_imports.py) on made-up packages and on the real one."""

from __future__ import annotations

from pathlib import Path

from tools.lint_imports import Package, main, violations

REPO = Path(__file__).resolve().parents[3]


def _package(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "pkg"
    for name, text in {"__init__.py": "", "oam/__init__.py": "", "reconciler/__init__.py": "",
                       "controller/__init__.py": "", **files}.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def test_a_clean_package_has_no_violation(tmp_path: Path) -> None:
    root = _package(tmp_path, {
        "oam/a.py": "from . import b\nimport yaml\n",
        "oam/b.py": "from ..neutral import x\n",
        "neutral.py": "x = 1\n",
        "reconciler/r.py": "import kubernetes\nfrom pkg.neutral import x\n",
        "controller/c.py": "import kopf\nfrom ..oam import a\nfrom ..reconciler import r\n",
    })
    assert violations(Package.read(root)) == []


def test_oam_reaching_the_kubernetes_client_through_a_neutral_module_is_named_with_its_chain(tmp_path: Path) -> None:
    root = _package(tmp_path, {
        "oam/a.py": "def f():\n    from ..helpers import h\n",
        "helpers.py": "import kubernetes.client\n",
    })
    assert violations(Package.read(root)) == [
        "pkg.oam.a: oam must not reach kubernetes (pkg.oam.a -> pkg.helpers imports kubernetes)",
    ]


def test_reconciler_importing_oam_and_kopf_outside_controller_are_refused(tmp_path: Path) -> None:
    root = _package(tmp_path, {
        "oam/t.py": "",
        "reconciler/r.py": "from pkg.oam.t import *\n",
        "cli.py": "import kopf\n",
    })
    assert violations(Package.read(root)) == [
        "pkg.cli: only controller imports kopf",
        "pkg.reconciler.r: reconciler must not reach oam (pkg.reconciler.r -> pkg.oam.t)",
    ]


def test_importing_a_submodule_runs_its_package_init(tmp_path: Path) -> None:
    root = _package(tmp_path, {
        "oam/t.py": "from pkg.neutral.deep import d\n",
        "neutral/__init__.py": "from pkg.controller import c\n",
        "neutral/deep.py": "d = 1\n",
        "controller/c.py": "",
    })
    assert violations(Package.read(root)) == [
        "pkg.oam.t: oam must not reach controller (pkg.oam.t -> pkg.neutral -> pkg.controller)",
    ]


def test_the_operator_package_keeps_the_direction(capsys) -> None:  # type: ignore[no-untyped-def]
    assert main([str(REPO / "operator" / "oam_operator")]) == 0
    assert capsys.readouterr().out.startswith("import direction: clean")
