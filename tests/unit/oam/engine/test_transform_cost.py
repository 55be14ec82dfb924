"""The transform's two cost cuts (docs/transform.md#transform-cost): capabilities asked once per
class, and the cyclic collector paused while transforms run, never left off."""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from oam_operator.oam.engine import collection
from oam_operator.oam.engine.collection import collection_paused, without_collection
from oam_operator.oam.engine.handlers import ServicePortProvider, implements, service_port


@pytest.fixture(autouse=True)
def collector_on() -> Iterator[None]:
    was = gc.isenabled()
    gc.enable()
    yield
    assert collection._active == 0
    if not was:
        gc.disable()


def test_the_collector_is_off_inside_and_on_again_after() -> None:
    with collection_paused():
        assert not gc.isenabled()
    assert gc.isenabled()


def test_nested_pauses_resume_only_when_the_outermost_ends() -> None:
    with collection_paused():
        with collection_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()


def test_a_collector_that_was_off_stays_off() -> None:
    gc.disable()
    with collection_paused():
        assert not gc.isenabled()
    assert not gc.isenabled()
    gc.enable()


def test_an_exception_still_resumes_the_collector() -> None:
    @without_collection
    def fails() -> None:
        raise ValueError("boom")

    with pytest.raises(ValueError, match="boom"):
        fails()
    assert gc.isenabled()


def test_overlapping_transforms_in_threads_leave_it_on_when_the_last_one_ends() -> None:
    first_in, second_in, first_out = threading.Event(), threading.Event(), threading.Event()
    seen: dict[str, bool] = {}

    def first() -> None:
        with collection_paused():
            first_in.set()
            second_in.wait(5)
        first_out.set()

    def second() -> None:
        first_in.wait(5)
        with collection_paused():
            second_in.set()
            first_out.wait(5)
            seen["while the second still runs"] = gc.isenabled()

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert seen == {"while the second still runs": False}
    assert gc.isenabled()


class WithPort:
    def service_port(self) -> int:
        return 8080


class WithoutPort:
    pass


class Delegating:
    """As a trait-decorated config: its capabilities are its delegate's."""

    def __init__(self, inner: object) -> None:
        self.inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def test_a_capability_is_the_classs_and_a_delegating_config_asks_its_delegate_each_time() -> None:
    assert implements(WithPort(), ServicePortProvider) and not implements(WithoutPort(), ServicePortProvider)
    assert service_port(WithPort()) == 8080 and service_port(WithoutPort()) == 0
    assert service_port(Delegating(WithPort())) == 8080
    assert service_port(Delegating(WithoutPort())) == 0
    assert service_port(Delegating(WithPort())) == 8080
