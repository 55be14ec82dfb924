"""How a command fails: one ``Error: <message>`` line on stderr and an exit code, never a traceback."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import NoReturn

import click

__all__ = ["fail", "guarded"]


def fail(message: str, code: int = 1) -> NoReturn:
    """Print ``Error: <message>`` on stderr and exit; no traceback ever reaches a user."""
    click.echo(f"Error: {message}", err=True)
    sys.exit(code)


def guarded(action: Callable[[], None]) -> None:
    """Run a command body; any failure becomes one ``Error:`` line and exit 1, never a traceback.

    The transform's ``OamError`` is recognised without importing the transform: a command that
    never loaded it (``status``) cannot have raised one, and importing it costs a third of a second.
    """
    try:
        action()
    except (click.exceptions.Exit, click.exceptions.Abort, SystemExit):
        raise
    except Exception as exc:
        transform_errors = sys.modules.get("oam_operator.oam.errors")
        if transform_errors is not None and isinstance(exc, transform_errors.OamError):
            fail(exc.message)
        fail(f"internal error: {type(exc).__name__}: {exc}")

