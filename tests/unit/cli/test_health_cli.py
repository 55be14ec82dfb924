"""``oam-operator health test`` and ``health list`` (docs/health.md#health-test)."""

from __future__ import annotations

from pathlib import Path

import yaml
from click.testing import CliRunner

from oam_operator.cli.commands import main
from oam_operator.oam.health.library import library_rules

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "health"
FAILED = FIXTURES / "cert-manager.io" / "Certificate"


def failed_fixture() -> Path:
    return next(p for p in sorted(FAILED.glob("*.yaml")) if p.read_text().startswith("# expect: Failed"))


def test_a_library_verdict_is_printed_as_the_operator_gives_it() -> None:
    fixture = failed_fixture()
    result = CliRunner().invoke(main, ["health", "test", "Certificate.cert-manager.io", str(fixture),
                                       "--expect", "Failed"])
    assert result.exit_code == 0, result.output
    name = yaml.safe_load(fixture.read_text())["metadata"]["name"]
    lines = result.output.splitlines()
    assert lines[0] == f"Certificate {name}: Failed"
    assert lines[1].startswith("  health expression failed (library) is true: ")
    assert lines[-1] == "rule: library (cert-manager.io/v1 Certificate)"


def test_an_unmet_expectation_exits_1_and_own_rules_win(tmp_path: Path) -> None:
    rules = tmp_path / "rules.yaml"
    rules.write_text(yaml.safe_dump([{"apiVersion": "cert-manager.io/v1", "kind": "Certificate", "current": "true"}]))
    result = CliRunner().invoke(main, ["health", "test", "Certificate", str(failed_fixture()), "--rules", str(rules),
                                       "--expect", "Failed"])
    assert result.exit_code == 1
    assert result.output.splitlines()[1:] == [
        f'  health expression current (file "{rules}") is true: true', "  expected Failed",
        f'rule: file "{rules}" (cert-manager.io/v1 Certificate)']


def test_usage_errors_exit_2(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["health", "test", "Nothing", str(failed_fixture())])
    assert result.exit_code == 2
    assert result.output.startswith("Error: no health rule for 'Nothing'; rules exist for: ")
    ambiguous = CliRunner().invoke(main, ["health", "test", "Cluster", str(failed_fixture())])
    assert (ambiguous.exit_code, ambiguous.output) == (
        2, "Error: 'Cluster' is ambiguous: Cluster.cluster.x-k8s.io, Cluster.postgresql.cnpg.io\n")
    other = CliRunner().invoke(main, ["health", "test", "Issuer", str(failed_fixture())])
    assert other.exit_code == 2 and "is not of the kind the rule judges: Issuer (group \"cert-manager.io\")" in other.output


def test_the_list_has_one_line_per_library_kind() -> None:
    result = CliRunner().invoke(main, ["health", "list"])
    assert result.exit_code == 0
    assert len(result.output.splitlines()) == len(library_rules()) >= 24
    assert "Certificate.cert-manager.io\tcert-manager.io/v1\tcurrent, inProgress, failed" in result.output
