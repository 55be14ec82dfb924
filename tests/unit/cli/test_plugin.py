"""``kubectl oam`` and shell completion (cli/plugin.py, docs/operator.md#kubectl-plugin). kubectl
itself runs the plugin in tests/integration/cli/test_kubectl_plugin.py."""

from __future__ import annotations

from click.testing import CliRunner

from oam_operator.cli.commands import main as oam_operator
from oam_operator.cli.plugin import PLUGIN_COMMANDS, completion_script, completions, kubectl_oam


def plugin(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(kubectl_oam, list(args), prog_name="kubectl oam")
    return result.exit_code, result.output


def test_the_plugin_has_the_users_commands_and_not_the_operators() -> None:
    code, output = plugin("--help")
    assert code == 0
    assert output.startswith("Usage: kubectl oam [OPTIONS] COMMAND [ARGS]...\n")
    listed = [line.split()[0] for line in output.split("Commands:\n")[1].splitlines() if line.startswith("  ")
              and not line.startswith("   ")]
    assert listed == sorted(PLUGIN_COMMANDS)


def test_kubectls_flags_before_the_command_are_its_defaults() -> None:
    assert plugin("-n", "shop", "--kubeconfig", "/nonexistent", "status", "web") == (
        1, 'Error: kubeconfig "/nonexistent" does not exist\n')


def test_the_commands_own_flag_wins_over_one_before_it() -> None:
    assert plugin("--kubeconfig", "/first", "status", "web", "--kubeconfig", "/second") == (
        1, 'Error: kubeconfig "/second" does not exist\n')


def test_completions_of_commands_flags_and_flags_before_the_command() -> None:
    assert [value for value, _ in completions(["st"])] == ["status"]
    assert [value for value, _ in completions(["re"])] == ["reconcile", "resume"]
    assert completions(["status", "web", "--cont"]) == [("--context", "Kubeconfig context (default: the current one).")]
    assert [value for value, _ in completions(["-n", "shop", "su"])] == ["suspend"]
    assert [value for value, _ in completions([])] == sorted(PLUGIN_COMMANDS)


def test_oam_operator_prints_a_completion_script_per_shell() -> None:
    for shell, line in (("bash", "complete -o nosort -F _oam_operator_completion oam-operator"),
                        ("zsh", "#compdef oam-operator"),
                        ("fish", "complete --no-files --command oam-operator --arguments")):
        result = CliRunner().invoke(oam_operator, ["completion", shell], prog_name="oam-operator")
        assert result.exit_code == 0
        assert result.output == completion_script(shell)
        assert line in result.output, shell


def test_an_unknown_shell_is_refused_with_the_choices() -> None:
    result = CliRunner().invoke(oam_operator, ["completion", "tcsh"], prog_name="oam-operator")
    assert result.exit_code == 2
    assert result.output.splitlines()[-1] == (
        "Error: Invalid value for '{bash|zsh|fish}': 'tcsh' is not one of 'bash', 'zsh', 'fish'.")


def test_the_bash_script_s_protocol_completes_oam_operator_commands() -> None:
    """What the sourced bash script asks the program (COMP_WORDS, COMP_CWORD, the variable)."""
    result = CliRunner().invoke(oam_operator, [], prog_name="oam-operator", env={
        "_OAM_OPERATOR_COMPLETE": "bash_complete", "COMP_WORDS": "oam-operator comp", "COMP_CWORD": "1"})
    assert result.exit_code == 0
    assert result.output.splitlines() == ["plain,completion"]
