"""The default ``ChartRenderer`` (transform.md §5.7, §9.7): the ``helm`` binary.

The transform never runs processes itself; the CLI and the operator inject this renderer so a
``delivery: template`` chart can be rendered when objects are generated. It runs
``helm template release <chart_url> [--version <v>] --namespace default -f <values file>``
(release name and namespace fixed, as kurel renders).

Decisions recorded here: ``--version`` is left out when no version is set (helm then takes
the latest chart); the values file is JSON (a YAML subset); a run is bounded by
``timeout`` seconds; failures raise ``OamError`` with helm's own stderr.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from typing import Any

from oam_operator.oam.errors import OamError

DEFAULT_TIMEOUT_SECONDS = 300.0


class HelmBinaryRenderer:
    def __init__(self, binary: str = "helm", timeout: float = DEFAULT_TIMEOUT_SECONDS) -> None:
        self.binary = binary
        self.timeout = timeout

    def command(self, chart_url: str, version: str, values_file: str) -> list[str]:
        args = [self.binary, "template", "release", chart_url]
        if version:
            args += ["--version", version]
        return [*args, "--namespace", "default", "-f", values_file]

    def render(self, chart_url: str, version: str, values: dict[str, Any]) -> str:
        handle, path = tempfile.mkstemp(prefix="oam-values-", suffix=".yaml")
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as out:
                json.dump(values, out)
            try:
                done = subprocess.run(
                    self.command(chart_url, version, path),
                    capture_output=True,
                    text=True,
                    timeout=self.timeout,
                    check=False,
                )
            except FileNotFoundError:
                raise OamError(f"helm binary {self.binary!r} not found") from None
            except subprocess.TimeoutExpired:
                raise OamError(f"helm template timed out after {self.timeout:g}s") from None
            if done.returncode != 0:
                detail = done.stderr.strip() or f"exit status {done.returncode}"
                raise OamError(f"helm template: {detail}")
            return done.stdout
        finally:
            os.unlink(path)
