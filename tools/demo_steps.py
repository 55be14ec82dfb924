"""What ``make demo`` prints for a newcomer to try next, and the shell lines those steps need
(``python -m tools.demo env``).

Each printed step must work as printed (issue 44): after the printed ``eval``, kubectl, the
virtual environment's ``oam-operator`` and its ``kubectl-oam`` plugin are on ``PATH``, and
``OAM_OPERATOR_OPERATOR_NAMESPACE`` names where the spoke's kubeconfig Secret is, which
``oam-operator diff`` of a spoke's Application needs (docs/multicluster.md#make-demo-multi).
"""

from __future__ import annotations

import shlex
from pathlib import Path

from tools import demo_spoke

__all__ = ["ALIGNED", "ENV_COMMAND", "env_lines", "next_steps"]


def env_lines(kubeconfig: str, kubectl_dir: Path | None, venv_bin: Path) -> list[str]:
    """The shell lines of ``python -m tools.demo env``: what the printed next steps need."""
    path = [str(venv_bin)] + ([str(kubectl_dir)] if kubectl_dir is not None else [])
    return [
        f"export KUBECONFIG={shlex.quote(kubeconfig)}",
        f"export PATH={shlex.quote(':'.join(path))}:$PATH",  # kubectl, oam-operator and kubectl-oam
        f"export OAM_OPERATOR_OPERATOR_NAMESPACE={demo_spoke.OPERATOR_NAMESPACE}",  # diff of a spoke's Application
    ]


ENV_COMMAND = 'eval "$(.venv/bin/python -m tools.demo env)"'
ALIGNED = 50  # commands up to this long get their comments in one column


def next_steps(namespace: str, names: list[str], spoke_kubeconfig: str | None) -> list[str]:
    """The commands printed after ``up``, each with what it shows; each works as printed after the
    first (``ENV_COMMAND``), from the checkout's directory."""
    steps = [(ENV_COMMAND, "kubectl, oam-operator and kubectl oam on PATH"),
             (f"kubectl get oapp -n {namespace}", "READY, STATUS, AGE (-o wide: more)")]
    for name in names:
        steps += [(f"kubectl oam status {name} -n {namespace} --tree", "bundles, objects, phases"),
                  (f"kubectl oam reconcile {name} -n {namespace} --wait", "re-apply once, print the outcome"),
                  (f"kubectl oam history {name} -n {namespace}", "the revisions applied"),
                  (f"oam-operator diff {name} -n {namespace}", "what applying it again would change")]
    steps.append((f"oam-operator ui -n {namespace} --open", "the same in a browser"))
    if spoke_kubeconfig is not None:
        steps += [(f"kubectl --kubeconfig {spoke_kubeconfig} get all -n {namespace}", "the objects, on the spoke"),
                  (f"kubectl describe clusterprofiles.oam-operator.dev {demo_spoke.PROFILE}",
                   "the connection, on the hub")]
    width = max(len(command) for command, _ in steps if len(command) <= ALIGNED)  # a long one is not padded to
    return [f"  {command:<{width}}  # {comment}" for command, comment in steps]
