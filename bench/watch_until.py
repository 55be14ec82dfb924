"""Wait until every object of a collection satisfies a predicate, by one LIST and a watch.

The fleet benchmarks used to LIST the whole collection every second: 1,000 Applications are
9.5 MB of JSON per LIST, so over a 200 s run the API server serialised about 2 GB for the
benchmark alone, on the same two cores as the operator and the control plane it measures. A
watch sends each change once (a few events per object), so the bench's own load no longer
depends on how long the run takes.

The watch resumes from the last resourceVersion it saw when the server ends it (its
``timeoutSeconds``), and starts again from a fresh LIST after ``410 Gone``. Nothing here
asserts; the caller prints what it measured.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from typing import Any

from tools.devcluster.devcluster import ApiServer

__all__ = ["watch_until"]

Key = tuple[str, str]  # (namespace, name)


def _key(obj: dict[str, Any]) -> Key:
    meta = obj.get("metadata") or {}
    return str(meta.get("namespace", "")), str(meta.get("name", ""))


def _list(api: ApiServer, path: str) -> tuple[dict[Key, dict[str, Any]], str]:
    while True:
        try:
            code, listed = api.get(path)
        except OSError:  # an overloaded API server: ask again
            time.sleep(1)
            continue
        if code == 200:
            return {_key(o): o for o in listed.get("items", [])}, str(listed["metadata"]["resourceVersion"])
        time.sleep(1)


def watch_until(
    api: ApiServer,
    path: str,
    expected: int,
    done: Callable[[dict[str, Any]], bool],
    deadline: float,
) -> dict[Key, dict[str, Any]]:
    """The objects at ``path`` (a collection, no query) as last seen, once ``expected`` of them
    satisfy ``done`` or at ``deadline`` (``time.monotonic()``), whichever comes first."""
    objects, version = _list(api, path)
    finished = {k for k, o in objects.items() if done(o)}
    opener = urllib.request.build_opener(urllib.request.HTTPSHandler(context=api.admin))
    while len(finished) < expected and time.monotonic() < deadline:
        left = max(1, int(deadline - time.monotonic()))
        query = urllib.parse.urlencode({"watch": "1", "resourceVersion": version,
                                        "allowWatchBookmarks": "true", "timeoutSeconds": str(min(left, 60))})
        try:
            with opener.open(f"{api.server}{path}?{query}", timeout=min(left, 60) + 10) as stream:
                for line in stream:
                    event = json.loads(line)
                    kind, obj = event.get("type"), event.get("object") or {}
                    if kind == "ERROR":
                        if obj.get("code") == 410:
                            objects, version = _list(api, path)
                            finished = {k for k, o in objects.items() if done(o)}
                        break
                    version = str((obj.get("metadata") or {}).get("resourceVersion", version))
                    key = _key(obj)
                    if kind == "DELETED":
                        objects.pop(key, None)
                        finished.discard(key)
                    elif kind in ("ADDED", "MODIFIED"):
                        objects[key] = obj
                        if done(obj):
                            finished.add(key)
                        else:
                            finished.discard(key)
                    if len(finished) >= expected:
                        break
        except urllib.error.HTTPError as error:
            if error.code == 410:
                objects, version = _list(api, path)
                finished = {k for k, o in objects.items() if done(o)}
            else:
                time.sleep(1)
        except OSError:
            time.sleep(1)
    return objects
