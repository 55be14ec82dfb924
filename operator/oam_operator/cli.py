"""The ``oam-operator`` command line (operator.md §11).

Commands whose issue has not landed yet exit 1 with a one-line ``not implemented yet``:
nothing here pretends to work.
"""

from __future__ import annotations

import sys
from typing import NoReturn

import click

from oam_operator import __version__


def fail(message: str, code: int = 1) -> NoReturn:
    """Print ``Error: <message>`` on stderr and exit; no traceback ever reaches a user."""
    click.echo(f"Error: {message}", err=True)
    sys.exit(code)


def not_implemented(command: str) -> NoReturn:
    fail(f"oam-operator {command}: not implemented yet")


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="oam-operator")
def main() -> None:
    """oam-operator: deploy OAM-style Applications onto Kubernetes in ordered waves."""


@main.command(context_settings={"ignore_unknown_options": True, "allow_extra_args": True})
def build() -> None:
    """Print the objects an Application generates (offline)."""
    not_implemented("build")


@main.command(context_settings={"ignore_unknown_options": True, "allow_extra_args": True})
def run() -> None:
    """Run the operator."""
    not_implemented("run")


@main.command(context_settings={"ignore_unknown_options": True, "allow_extra_args": True})
def schema() -> None:
    """Print the property schemas of the built-in types as JSON Schema."""
    not_implemented("schema")


@main.command(context_settings={"ignore_unknown_options": True, "allow_extra_args": True})
def crd() -> None:
    """Print the CRD manifests."""
    not_implemented("crd")


@main.command(context_settings={"ignore_unknown_options": True, "allow_extra_args": True})
def status() -> None:
    """Print an Application's state and bundle tree."""
    not_implemented("status")


@main.command(context_settings={"ignore_unknown_options": True, "allow_extra_args": True})
def reconcile() -> None:
    """Request an immediate reconcile of an Application."""
    not_implemented("reconcile")
