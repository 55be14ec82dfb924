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
    """Run a command body; any failure becomes one ``Error:`` line and exit 1, never a traceback."""
    from oam_operator.oam.errors import OamError

    try:
        action()
    except OamError as exc:
        fail(exc.message)
    except (click.exceptions.Exit, click.exceptions.Abort, SystemExit):
        raise
    except Exception as exc:
        fail(f"internal error: {type(exc).__name__}: {exc}")

