"""``--help`` reads well on an 80-column terminal (issue 44): ``run``'s settings are grouped by
concern with typed metavars and whole environment variable names, and the command lists show
each summary to the end of its first sentence."""

from __future__ import annotations

import re

import click
import pytest
from click.testing import CliRunner

from oam_operator.cli import main
from oam_operator.cli.plugin import kubectl_oam
from oam_operator.controller.reconcile.settings import GROUPS, Settings, env_var, flag_name, metavar

HEADINGS = ["General", "Scope", "Reconciling", "Tenancy", "Scale and API rate", "Leader election and peering",
            "Admission webhook", "Remote clusters", "URL sources and charts", "Notifications", "Metrics and logs"]


def run_help() -> str:
    result = CliRunner().invoke(main, ["run", "--help"], terminal_width=80)
    assert result.exit_code == 0, result.output
    return result.stdout


def sections(text: str) -> dict[str, str]:
    """Heading -> the text under it."""
    parts = re.split(r"^([A-Z][A-Za-z ]+):\n", text, flags=re.M)
    return dict(zip(parts[1::2], parts[2::2], strict=True))


def test_every_setting_is_in_exactly_one_group() -> None:
    grouped = [name for names in GROUPS.values() for name in names]
    assert sorted(grouped) == sorted(Settings.model_fields)


def test_run_help_groups_the_flags_by_concern() -> None:
    found = sections(run_help())
    assert list(found) == HEADINGS
    assert "--kubeconfig FILE" in found["General"]
    for heading, names in GROUPS.items():
        flags = re.findall(r"^  (--[a-z-]+)", found[heading], flags=re.M)
        assert flags == [flag_name(name) for name in names], heading


def test_run_help_names_what_each_flag_takes() -> None:
    text = run_help()
    assert "VALUE" not in text
    for line in ("  --reapply-interval DURATION\n", "  --max-concurrent-reconciles INT\n",
                 "  --url-source-allowed-networks CIDRS\n", "  --log-format json|text\n",
                 "  --admission-secret NAMESPACE/NAME\n", "  --metrics-port PORT\n",
                 "  --default-adoption-policy Never|IfUnowned|Always\n",
                 "  --allow-cross-namespace-dependencies / --no-allow-cross-namespace-dependencies\n"):
        assert line in text, line
    for name in Settings.model_fields:
        shown = metavar(name)
        flag = flag_name(name)
        flags = f"{flag} / --no-{flag[2:]}" if shown is None else f"{flag} {shown}"
        assert f"  {flags}\n" in text, name


def test_run_help_never_breaks_an_environment_variable() -> None:
    lines = run_help().splitlines()
    assert max(map(len, lines)) <= 80
    for name in Settings.model_fields:
        assert any(re.search(rf"\b{env_var(name)}\]", line) for line in lines), env_var(name)
    assert not [line for line in lines if re.search(r"OAM_OPERATOR_[A-Z_]*$", line) and not line.endswith("]")]


@pytest.mark.parametrize("group", [main, kubectl_oam], ids=["oam-operator", "kubectl-oam"])
def test_command_summaries_end_at_a_sentence(group: click.Group) -> None:
    result = CliRunner().invoke(group, ["--help"], terminal_width=80)
    listing = sections(result.stdout)["Commands"]
    summaries = re.split(r"\n  (?=[a-z])", "\n" + listing.rstrip())[1:]
    assert len(summaries) == len(group.commands)
    for summary in summaries:
        name, text = summary.split(maxsplit=1)
        text = " ".join(text.split())
        assert text.endswith(".") and "..." not in text, (name, text)
