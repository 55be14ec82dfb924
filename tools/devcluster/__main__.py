"""CLI: ``python -m tools.devcluster up|down|env|kubeconfig|status|logs|build``
(docs/devcluster.md#the-devcluster-command).

Messages go to stderr; only ``env``, ``kubeconfig`` and ``status --json`` write to stdout.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

from . import devcluster as dc


def say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def running_plane(name: str) -> dc.ControlPlane | None:
    try:
        plane = dc.attach(name)
    except dc.DevclusterError:
        return None
    return plane if any(dc.component_alive(c) for c in plane.components) else None


def cmd_up(args: argparse.Namespace) -> int:
    if running_plane(args.name) is not None:
        say(f"devcluster: cluster {args.name!r} is already running; "
            f"`python -m tools.devcluster down --name {args.name}` first")
        return 1
    run = dc.cli_run_dir(args.name)
    if run.exists():
        with contextlib.suppress(dc.DevclusterError):
            dc.plane_from_state(run).stop()
        import shutil

        shutil.rmtree(run, ignore_errors=True)
    run.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    try:
        plane = dc.start(args.profile, name=args.name, nodes=args.nodes, run_dir=run, timeout=args.timeout,
                         audit=args.audit, detached=not args.foreground)
    except dc.DevclusterError as error:
        say(str(error))
        return 1
    name_flag = "" if args.name == "default" else f" --name {args.name}"
    env_hint = f'eval "$(python -m tools.devcluster env{name_flag})"'
    say(f"devcluster: {args.profile} cluster {args.name!r} is up; logs in {run / 'logs'}")
    say(f"devcluster: kubeconfig {plane.handle.kubeconfig}")
    say(f"devcluster: {env_hint}")
    if not args.foreground:
        return 0
    say("devcluster: running in the foreground; Ctrl-C stops it")
    with contextlib.suppress(KeyboardInterrupt):
        signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
        while True:
            time.sleep(1)
    plane.stop()
    return 0


def cmd_down(args: argparse.Namespace) -> int:
    if args.stale:
        for run in dc.reap_stale():
            say(f"devcluster: reaped stale run {run}")
        return 0
    planes = dc.all_runs() if args.all else []
    if not args.all:
        try:
            planes = [dc.attach(args.name)]
        except dc.DevclusterError as error:
            say(f"devcluster: {error}")
            return 1
    status = 0
    for plane in planes:
        try:
            plane.stop(keep=args.keep)
            say(f"devcluster: stopped {plane.handle.name} ({plane.handle.run_dir})")
        except dc.DevclusterError as error:
            say(f"devcluster: {error}")
            status = 1
    return status


def cmd_env(args: argparse.Namespace) -> int:
    plane = running_plane(args.name)
    if plane is None:
        say(f"devcluster: cluster {args.name!r} is not running")
        return 1
    print(f"export KUBECONFIG={shlex.quote(plane.handle.kubeconfig)}")
    kubectl = dc.find_binaries().kubectl
    if kubectl is not None:
        print(f"export PATH={shlex.quote(str(kubectl.parent))}:$PATH")
    return 0


def cmd_kubeconfig(args: argparse.Namespace) -> int:
    plane = running_plane(args.name)
    if plane is None:
        say(f"devcluster: cluster {args.name!r} is not running")
        return 1
    print(plane.handle.kubeconfig)
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    try:
        plane = dc.attach(args.name)
    except dc.DevclusterError:
        plane = None
    if plane is None:
        report: dict[str, object] = {"name": args.name, "running": False}
        code = 1
    else:
        alive = {c.name: dc.component_alive(c) for c in plane.components}
        ready = False
        nodes: dict[str, bool] = {}
        if any(alive.values()):
            with contextlib.suppress(OSError, ValueError):
                ready = plane.api().request("/readyz", anonymous=True)[0] == 200
                nodes = {n: dc.node_ready(plane.api(), n) for n in plane.handle.fake_nodes}
        report = {
            "name": plane.handle.name, "running": any(alive.values()), "profile": plane.handle.profile,
            "versions": plane.handle.versions, "server": plane.handle.server,
            "kubeconfig": plane.handle.kubeconfig, "components": alive, "readyz": ready, "nodes_ready": nodes,
        }
        if not any(alive.values()):
            code = 1
        elif all(alive.values()) and ready and all(nodes.values()):
            code = 0
        else:
            code = 2
    if args.json:
        print(json.dumps(report, indent=2, sort_keys=True))
    else:
        for key, value in report.items():
            say(f"{key}: {value}")
    return code


def cmd_logs(args: argparse.Namespace) -> int:
    try:
        plane = dc.attach(args.name)
    except dc.DevclusterError as error:
        say(f"devcluster: {error}")
        return 1
    components = [args.component] if args.component else list(plane.handle.log_paths)
    for component in components:
        if component not in plane.handle.log_paths:
            say(f"devcluster: no component {component!r}; have {', '.join(plane.handle.log_paths)}")
            return 1
        say(f"--- {component} ---")
        for line in plane.tail(component, args.lines):
            say(line)
    return 0


def cmd_build(extra: list[str]) -> int:
    script = Path(__file__).resolve().parent / "build.sh"
    return subprocess.call(["bash", str(script), *extra])


def parser() -> argparse.ArgumentParser:
    root = argparse.ArgumentParser(prog="python -m tools.devcluster", description="local Kubernetes control plane")
    sub = root.add_subparsers(dest="command", required=True)
    up = sub.add_parser("up", help="start a named cluster")
    up.add_argument("--profile", choices=dc.PROFILES, default="minimal")
    up.add_argument("--name", default="default")
    up.add_argument("--nodes", type=int, default=1)
    up.add_argument("--timeout", type=float, default=None)
    up.add_argument("--audit", action="store_true")
    up.add_argument("--foreground", action="store_true")
    down = sub.add_parser("down", help="stop a cluster")
    which = down.add_mutually_exclusive_group()
    which.add_argument("--name", default="default")
    which.add_argument("--all", action="store_true")
    which.add_argument("--stale", action="store_true")
    down.add_argument("--keep", action="store_true")
    for command in ("env", "kubeconfig"):
        p = sub.add_parser(command)
        p.add_argument("--name", default="default")
    status = sub.add_parser("status")
    status.add_argument("--name", default="default")
    status.add_argument("--json", action="store_true")
    logs = sub.add_parser("logs")
    logs.add_argument("--name", default="default")
    logs.add_argument("component", nargs="?")
    logs.add_argument("-n", dest="lines", type=int, default=50)
    sub.add_parser("build", help="run tools/devcluster/build.sh (options are passed through)")
    return root


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["build"]:
        return cmd_build(argv[1:])
    args = parser().parse_args(argv)
    handlers = {"up": cmd_up, "down": cmd_down, "env": cmd_env, "kubeconfig": cmd_kubeconfig,
                "status": cmd_status, "logs": cmd_logs}
    return handlers[args.command](args)


if __name__ == "__main__":
    os.umask(0o077)
    sys.exit(main())
