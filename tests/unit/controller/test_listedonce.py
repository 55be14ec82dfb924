"""``ListedOnce`` (controller/service/listedonce.py, docs/multicluster.md#refusals): a pass looks a
ClusterProfile up only once kopf's first LIST of them ended, so a start does not refuse an
Application for a profile kopf has not listed yet."""

from __future__ import annotations

import logging
import threading
import time

import pytest

from oam_operator.controller.service.listedonce import ListedOnce


def test_nobody_expecting_a_list_waits_for_none() -> None:
    started = time.monotonic()
    ListedOnce("ClusterProfiles", 30).wait()
    assert time.monotonic() - started < 1


def test_a_pass_waits_until_kopfs_first_list_ended_and_later_lists_are_not_watched() -> None:
    listed = ListedOnce("ClusterProfiles", 30)
    listed.expect()
    done: list[float] = []
    waiter = threading.Thread(target=lambda: (listed.wait(), done.append(time.monotonic())))
    waiter.start()
    time.sleep(0.1)
    pages = listed.pages(None, "")
    assert pages is listed and done == []
    pages.page([{"metadata": {"name": "eu-1"}}])
    time.sleep(0.05)
    assert done == []  # a page is not the end of the LIST
    ended = time.monotonic()
    pages.done("42")
    waiter.join(5)
    assert len(done) == 1 and done[0] >= ended
    assert listed.pages(None, "") is None  # a later LIST (kopf's watch expired) changes nothing
    listed.wait()  # at once


def test_a_list_that_never_ends_is_given_up_on_once_with_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    listed = ListedOnce("ClusterProfiles", 0.2)
    listed.expect()
    with caplog.at_level(logging.WARNING, logger="oam_operator.controller"):
        started = time.monotonic()
        listed.wait()
        assert 0.2 <= time.monotonic() - started < 5
        started = time.monotonic()
        listed.wait()  # given up on: no second wait
        assert time.monotonic() - started < 0.1
    assert [record.getMessage() for record in caplog.records] == [
        "kopf did not list the ClusterProfiles within 0.2 s; passes go on with what its events brought"]


def test_each_listed_object_is_given_on_as_its_page_comes_before_the_list_is_done() -> None:
    """kopf's handlers get the listed objects after its LIST ended: a pass released by the end of
    the LIST must find them known already."""
    known: list[str] = []
    listed = ListedOnce("ClusterProfiles", 30, on_item=lambda item: known.append(item["metadata"]["name"]))
    listed.expect()
    pages = listed.pages(None, "")
    assert pages is not None
    pages.page([{"metadata": {"name": "eu-1"}}, {"metadata": {"name": "eu-2"}}])
    assert known == ["eu-1", "eu-2"]
    pages.page([{"metadata": {"name": "us-1"}}])
    pages.done("7")
    listed.wait()
    assert known == ["eu-1", "eu-2", "us-1"]


def test_the_runtime_knows_a_listed_profile_before_kopfs_handler_ran() -> None:
    from types import SimpleNamespace

    from oam_operator.controller.service.runtime import Runtime
    from oam_operator.controller.service.targets import TargetProfiles

    woken: list[str] = []
    runtime = SimpleNamespace(targets=TargetProfiles({}, None), memory={}, waker=woken.append)
    runtime.profile_changed = lambda name, body: Runtime.profile_changed(runtime, name, body)  # type: ignore[arg-type]
    runtime._woken_by = lambda name, old, new: []
    Runtime._listed_profile(runtime, {"metadata": {"name": "eu-1"}, "spec": {"x": 1}})  # type: ignore[arg-type]
    assert runtime.targets.get("eu-1") == {"metadata": {"name": "eu-1"}, "spec": {"x": 1}}
