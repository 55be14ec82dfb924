"""The STATUS column of ``kubectl get oapp`` (issue 14): the Ready message on one short line."""

from __future__ import annotations

from oam_operator.api.summary import SUMMARY_WIDTH, summary_of


def test_a_short_message_is_kept() -> None:
    assert summary_of("Ready", "Applied revision 1: 3 objects ready") == "Applied revision 1: 3 objects ready"


def test_a_long_message_is_cut_with_an_ellipsis_on_one_line() -> None:
    message = "spec.components[0].properties: image is required\nand more text " + "x" * 80
    text = summary_of("TransformFailed", message)
    assert len(text) == SUMMARY_WIDTH
    assert text.startswith("spec.components[0].properties: image is required and more")
    assert text.endswith("…") and "\n" not in text


def test_suspended_reads_suspended() -> None:
    assert summary_of("Suspended", "Reconciliation is suspended") == "Suspended"


def test_not_permitted_reads_the_command_that_prints_the_role() -> None:
    message = ("ServiceAccount team-a/default may not get, list deployments.apps in namespace team-a; the "
               "Application's objects need it. `oam-operator rbac shop -n team-a` prints a Role and RoleBinding")
    assert summary_of("NotPermitted", message) == "Not permitted; see: oam-operator rbac shop -n team-a"
    required = "spec.serviceAccountName is required (the operator runs with --require-service-account)"
    assert summary_of("NotPermitted", required) == summary_of("Error", required)
