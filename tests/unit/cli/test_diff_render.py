"""``oam-operator diff`` output pieces (issue 14): the noise left out, the unified diff, the layout,
the shard whose label the objects carry."""

from __future__ import annotations

from oam_operator.cli.diff import WavePlan, bookkeeping, clean, render, shard_of, unified


def test_clean_drops_status_and_server_owned_metadata() -> None:
    live = {"apiVersion": "v1", "kind": "ConfigMap", "data": {"k": "v"}, "status": {"x": 1},
            "metadata": {"name": "c", "resourceVersion": "7", "uid": "u", "generation": 2,
                         "creationTimestamp": "t", "managedFields": [{}], "labels": {"a": "b"}}}
    assert clean(live) == {"apiVersion": "v1", "kind": "ConfigMap", "data": {"k": "v"},
                           "metadata": {"name": "c", "labels": {"a": "b"}}}


def test_unified_is_empty_when_equal_and_readable_otherwise() -> None:
    a = {"data": {"k": "v"}, "metadata": {"name": "c"}}
    assert unified(a, a, "ConfigMap/ns/c") == ""
    text = unified(a, {"data": {"k": "w"}, "metadata": {"name": "c"}}, "ConfigMap/ns/c")
    assert text.splitlines()[:2] == ["--- live/ConfigMap/ns/c", "+++ desired/ConfigMap/ns/c"]
    assert "-  k: v" in text.splitlines() and "+  k: w" in text.splitlines()


def test_render_lists_waves_then_prunes_and_says_no_changes() -> None:
    assert render([WavePlan("shop-00")], []) == "no changes\n"
    waves = [WavePlan("shop-00", creates=["ConfigMap shop/a"]), WavePlan("shop-01"),
             WavePlan("shop-02", changes=[("Deployment shop/web", "--- a\n+++ b\n")])]
    assert render(waves, ["Secret shop/old"]) == (
        "Wave shop-00:\n  create ConfigMap shop/a\n"
        "Wave shop-02:\n  change Deployment shop/web\n    --- a\n    +++ b\n"
        "Prune:\n  prune Secret shop/old\n"
    )


def test_the_shard_label_of_the_preview_is_the_files_else_the_live_applications() -> None:
    label = "oam-operator.dev/shard"

    def app(shard: str | None = None) -> dict[str, object]:
        return {"metadata": {"name": "a", "labels": {label: shard} if shard is not None else {"tier": "web"}}}

    assert shard_of(app(), None, label) == ""  # the unsharded instance's objects carry none
    assert shard_of(app("s1"), None, label) == "s1"
    assert shard_of(app(), app("s1"), label) == "s1"  # a FILE without the label: the live Application's
    assert shard_of(app("s2"), app("s1"), label) == "s2"  # a FILE that moves it: every object changes


def test_clean_hides_the_bookkeeping_annotations_it_is_given() -> None:
    hidden = bookkeeping("oam-operator.dev")
    assert hidden == {"oam-operator.dev/owner-id", "oam-operator.dev/digest"}
    live = {"metadata": {"name": "c", "annotations": {"oam-operator.dev/digest": "a", "team": "x"}}}
    assert clean(live, hidden) == {"metadata": {"name": "c", "annotations": {"team": "x"}}}
    only = {"metadata": {"name": "c", "annotations": {"oam-operator.dev/digest": "a",
                                                      "oam-operator.dev/owner-id": "o"}}}
    assert clean(only, hidden) == {"metadata": {"name": "c"}}
    assert clean(only) == only
