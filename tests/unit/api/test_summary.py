"""The STATUS column of ``kubectl get oapp`` (issue 14): the Ready message on one short line."""

from __future__ import annotations

from oam_operator.api.summary import SUMMARY_WIDTH, summary_of


def test_a_short_message_is_kept() -> None:
    assert summary_of("Ready", "Applied revision 1: 3 objects ready") == "Applied revision 1: 3 objects ready"


def test_a_long_message_is_cut_with_an_ellipsis_on_one_line() -> None:
    message = "spec.components[0].properties: image is required\nand more text " + "x" * 80
    text = summary_of("TransformFailed", message)
    assert text == "spec.components[0].properties: image is required and more text…"  # not into the x's
    assert len(summary_of("Error", "x" * 200)) == SUMMARY_WIDTH


def test_a_long_message_is_cut_at_a_word() -> None:
    message = ('component "web": image "nginx" rejected: no tag or digest specified; use an explicit version tag '
               "or digest")
    assert summary_of("TransformFailed", message) == (
        'component "web": image "nginx" rejected: no tag or digest specified; use an…')


def test_a_drifted_fields_name_is_not_cut_away() -> None:
    """Issue 44: the path filled the column and the drifted field's name was cut off."""
    drift = ("Drifted: Deployment web (spec.template.spec.containers[name=web].image) changed by another field "
             "manager; left as it is (spec.drift: Report)")
    assert summary_of("DriftDetected", drift) == "Drifted: Deployment web (spec.template.spec.containers[name=web].image)"
    two = ("Drifted: Deployment web (spec.template.spec.containers[name=web].image); Deployment api "
           "(spec.template.spec.containers[name=api].image) changed by another field manager; left as it is "
           "(spec.drift: Report)")
    assert summary_of("DriftDetected", two) == "Drifted: Deployment web (…containers[name=web].image); Deployment api…"


def test_a_uid_gives_way_to_the_reason() -> None:
    message = ("ClusterProfile demo-spoke now delivers to cluster e40278aa-1234-4bcd-9abc-0123456789ab, but this "
               "Application's objects are on the operator's own cluster: point the profile back, or delete it")
    assert summary_of("ClusterSwitched", message) == (
        "ClusterProfile demo-spoke now delivers to cluster e40278aa…, but this…")


def test_suspended_reads_suspended() -> None:
    assert summary_of("Suspended", "Reconciliation is suspended") == "Suspended"


def test_not_permitted_reads_the_command_that_prints_the_role() -> None:
    message = ("ServiceAccount team-a/default may not get, list deployments.apps in namespace team-a; the "
               "Application's objects need it. `oam-operator rbac shop -n team-a` prints a Role and RoleBinding")
    assert summary_of("NotPermitted", message) == "Not permitted; see: oam-operator rbac shop -n team-a"
    required = "spec.serviceAccountName is required (the operator runs with --require-service-account)"
    assert summary_of("NotPermitted", required) == summary_of("Error", required)
