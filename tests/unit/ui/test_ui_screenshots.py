"""docs/ui/*.png are written by `make docs-screenshots` only (docs/ui.md#screenshots): the browser
tests write into $OAM_UI_SCREENSHOTS when it is set, and `make test` does not set it."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def _recipe(target: str) -> str:
    """The recipe lines of ``target`` in the Makefile."""
    text = (ROOT / "Makefile").read_text()
    found = re.search(rf"^{re.escape(target)}:[^\n]*\n((?:\t[^\n]*\n)+)", text, re.M)
    assert found is not None, f"no target {target!r} in the Makefile"
    return found.group(1)


def test_make_docs_screenshots_runs_the_ui_browser_tests_into_docs_ui() -> None:
    assert _recipe("docs-screenshots").strip() == (
        "OAM_REQUIRE_CLUSTER=1 OAM_UI_SCREENSHOTS=$(CURDIR)/docs/ui $(PY) -m pytest tests/e2e/test_ui_e2e.py "
        "$(PYTEST_ARGS)")


def test_no_other_target_and_no_test_names_docs_ui_as_where_screenshots_go() -> None:
    makefile = (ROOT / "Makefile").read_text()
    assert makefile.count("OAM_UI_SCREENSHOTS") == 1
    assert "OAM_UI_SCREENSHOTS" not in _recipe("test")
    tests = (ROOT / "tests" / "e2e" / "test_ui_e2e.py").read_text()
    assert '"docs" / "ui"' not in tests and re.search(r"[\"']docs/ui", tests) is None  # no path to docs/ui
    assert tests.count(".screenshot(") == 1  # the one in the `shoot` fixture, which honours the variable
