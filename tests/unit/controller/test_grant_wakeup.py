"""A Role or RoleBinding change wakes the refused Applications of its namespace
(docs/operator.md#not-permitted-and-the-role-it-needs): which ones, and that their 403 grace reopens."""

from __future__ import annotations

from kubernetes.client import ApiClient, Configuration

from oam_operator.controller.reconcile.seams import Memory
from oam_operator.controller.reconcile.settings import Settings
from oam_operator.controller.service.runtime import Runtime
from oam_operator.reconciler.client import ClusterClient


def test_a_grant_wakes_only_its_namespaces_applications_that_end_in_a_403() -> None:
    configuration = Configuration()
    configuration.host = "http://127.0.0.1:9"
    woken: list[str] = []
    runtime = Runtime(Settings(cluster_id="c"), ClusterClient(ApiClient(configuration)), None, waker=woken.append)
    refused, fine, elsewhere = Memory(), Memory(), Memory()
    refused.forbidden.quiet(100.0)
    elsewhere.forbidden.quiet(100.0)
    runtime.memory.update({"u-refused": refused, "u-fine": fine, "u-elsewhere": elsewhere})
    runtime._uids.update({("team-a", "web"): "u-refused", ("team-a", "db"): "u-fine",
                          ("team-b", "web"): "u-elsewhere", ("team-a", "gone"): "u-forgotten"})
    runtime._on_grant("team-a")
    assert woken == ["u-refused"]
    # The watch thread only wakes: the woken pass's status writer reopens the grace, so the next
    # 403 is retried quietly again (the authorizer may lag behind the grant).
    assert refused.forbidden.since == 100.0 and runtime._granted == {"u-refused"}
    body = {"metadata": {"namespace": "team-a", "name": "web", "uid": "u-refused", "generation": 1}}
    runtime.status_writer(body, refused, granted="u-refused" in runtime._granted)
    assert refused.forbidden.since is None
    assert elsewhere.forbidden.since == 100.0
    runtime._on_grant("team-c")
    assert woken == ["u-refused"]
