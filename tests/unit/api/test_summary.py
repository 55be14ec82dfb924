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
