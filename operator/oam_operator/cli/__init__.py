"""The ``oam-operator`` command line (docs/operator.md#the-command-line).

``commands`` declares the click group and every command's options; each command's body is a
module of its own, imported only when that command runs, so ``--help`` and ``build`` never load
pydantic, kopf or the Kubernetes client. Nothing outside this package imports it (``make lint``).
"""

from oam_operator.cli.commands import main

__all__ = ["main"]
