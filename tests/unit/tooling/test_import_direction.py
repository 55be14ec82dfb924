"""The import-direction check (tools/lint_imports.py) on made-up packages and on the real one."""

from __future__ import annotations

from pathlib import Path

from tools.lint_imports import Package, main, violations

REPO = Path(__file__).resolve().parents[3]


def _package(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "pkg"
    rooms = ("oam", "reconciler", "controller", "common", "persisted", "cli")
    for name, text in {"__init__.py": "", **{f"{room}/__init__.py": "" for room in rooms}, **files}.items():
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
        "controller/service/c.py": "import kopf\nfrom ...oam import a\nfrom ...reconciler import r\nfrom ..reconcile import p\n",
        "controller/service/__init__.py": "",
        "controller/reconcile/__init__.py": "",
        "controller/reconcile/p.py": "from . import seams\nfrom pkg.oam import a\n",
        "controller/reconcile/seams.py": "from pkg.reconciler import r\n",
        "common/text.py": "import re\nfrom dataclasses import dataclass\nfrom . import more\n",
        "common/more.py": "from __future__ import annotations\nimport enum\n",
        "persisted/model.py": "import pydantic\nfrom pydantic.alias_generators import to_camel\nfrom ..common import text\n",
        "cli/main.py": "import click\nfrom . import body\nfrom pkg.controller.service import c\nfrom pkg.persisted import model\n",
        "cli/body.py": "from ..oam import a\n",
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
        "neutral/__init__.py": "from pkg.controller.service import c\n",
        "neutral/deep.py": "d = 1\n",
        "controller/service/__init__.py": "",
        "controller/service/c.py": "",
    })
    assert violations(Package.read(root)) == [
        "pkg.oam.t: oam must not reach controller (pkg.oam.t -> pkg.neutral -> pkg.controller.service)",
    ]


def test_common_reaches_the_standard_library_only(tmp_path: Path) -> None:
    root = _package(tmp_path, {
        "common/a.py": "import json\nfrom . import b\n",
        "common/b.py": "def f():\n    import yaml\n",
        "common/c.py": "from ..helpers import h\n",
        "helpers.py": "h = 1\n",
        "common/d.py": "from pkg.oam import t\n",
        "oam/t.py": "",
    })
    assert violations(Package.read(root)) == [
        "pkg.common.a: common must not reach yaml (pkg.common.a -> pkg.common.b imports yaml)",
        "pkg.common.b: common must not reach yaml (pkg.common.b imports yaml)",
        "pkg.common.c: common must not reach helpers (pkg.common.c -> pkg.helpers)",
        "pkg.common.d: common must not reach oam (pkg.common.d -> pkg.oam)",
    ]


def test_persisted_reaches_only_pydantic_and_common(tmp_path: Path) -> None:
    root = _package(tmp_path, {
        "persisted/a.py": "import pydantic\nimport yaml\nfrom ..common import ok\n",
        "common/ok.py": "import re\n",
        "persisted/b.py": "from pkg.reconciler.r import x\n",
        "reconciler/r.py": "import kubernetes\n",
    })
    assert violations(Package.read(root)) == [
        "pkg.persisted.a: persisted must not reach yaml (pkg.persisted.a imports yaml)",
        "pkg.persisted.b: persisted must not reach kubernetes (pkg.persisted.b -> pkg.reconciler.r imports kubernetes)",
        "pkg.persisted.b: persisted must not reach reconciler (pkg.persisted.b -> pkg.reconciler.r)",
    ]


def test_nothing_outside_cli_imports_cli(tmp_path: Path) -> None:
    root = _package(tmp_path, {
        "cli/status.py": "from . import view\n",
        "cli/view.py": "from pkg.controller.service import c\n",
        "controller/service/__init__.py": "",
        "controller/service/c.py": "def f():\n    from ...cli.view import show\n",
        "settings.py": "from pkg import cli\n",
    })
    assert violations(Package.read(root)) == [
        "pkg.controller.service.c: only cli and ui import cli (pkg.controller.service.c imports pkg.cli.view)",
        "pkg.settings: only cli and ui import cli (pkg.settings imports pkg.cli)",
    ]


def test_only_cli_imports_ui_and_ui_may_import_cli(tmp_path: Path) -> None:
    root = _package(tmp_path, {
        "cli/ui.py": "from pkg.ui import server\n",
        "ui/server.py": "from pkg.cli.view import show\n",
        "cli/view.py": "import re\n",
        "controller/service/__init__.py": "",
        "controller/service/c.py": "def f():\n    from ...ui.server import app\n",
    })
    assert violations(Package.read(root)) == [
        "pkg.controller.service.c: only ui and cli import ui (pkg.controller.service.c imports pkg.ui.server)",
    ]


def test_the_pass_layer_reaches_neither_the_machinery_nor_kopf(tmp_path: Path) -> None:
    root = _package(tmp_path, {
        "controller/reconcile/__init__.py": "",
        "controller/reconcile/passes.py": "from . import rules\n",
        "controller/reconcile/rules.py": "def f():\n    from ..service.watches import w\n",
        "controller/reconcile/hooks.py": "import kopf\n",
        "controller/service/__init__.py": "",
        "controller/service/watches.py": "from ..reconcile import passes\nw = 1\n",
    })
    assert violations(Package.read(root)) == [
        "pkg.controller.reconcile.hooks: controller.reconcile must not reach kopf "
        "(pkg.controller.reconcile.hooks imports kopf)",
        "pkg.controller.reconcile.passes: controller.reconcile must not reach controller.service "
        "(pkg.controller.reconcile.passes -> pkg.controller.reconcile.rules -> pkg.controller.service.watches)",
        "pkg.controller.reconcile.rules: controller.reconcile must not reach controller.service "
        "(pkg.controller.reconcile.rules -> pkg.controller.service.watches)",
    ]


def test_every_controller_module_is_in_a_layer_and_the_seams_are_at_the_bottom(tmp_path: Path) -> None:
    root = _package(tmp_path, {
        "controller/loose.py": "",
        "controller/reconcile/__init__.py": "",
        "controller/reconcile/seams.py": "from . import memory\n",
        "controller/reconcile/memory.py": "from .passes import run\n",
        "controller/reconcile/passes.py": "from .seams import Memory\nrun = 1\n",
    })
    assert violations(Package.read(root)) == [
        "pkg.controller.loose: every module of controller is in controller.reconcile or controller.service",
        "pkg.controller.reconcile.seams: the bottom of its layer reaches pkg.controller.reconcile.memory, which "
        "reaches it back (pkg.controller.reconcile.seams -> pkg.controller.reconcile.memory)",
        "pkg.controller.reconcile.seams: the bottom of its layer reaches pkg.controller.reconcile.passes, which "
        "reaches it back (pkg.controller.reconcile.seams -> pkg.controller.reconcile.memory -> "
        "pkg.controller.reconcile.passes)",
    ]


def test_the_operator_package_keeps_the_direction(capsys) -> None:  # type: ignore[no-untyped-def]
    assert main([str(REPO / "operator" / "oam_operator")]) == 0
    assert capsys.readouterr().out.startswith("import direction: clean")
