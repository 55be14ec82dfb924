"""``FreshView`` (controller/service/freshview.py, docs/operator.md#a-fresh-view): kopf's copy of an
Application is acted on only when it is known fresh in this term; a gone Application is told."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from oam_operator.controller.service.freshview import FreshView
from oam_operator.reconciler.errors import PermanentApiError, TransientApiError

LIST = "/apis/oam-operator.dev/v1alpha1/applications"
ONE = "/apis/oam-operator.dev/v1alpha1/namespaces/shop/applications/web"


def application(uid: str, version: int, name: str = "web") -> dict[str, Any]:
    return {"metadata": {"namespace": "shop", "name": name, "uid": uid, "resourceVersion": str(version)}}


class Server:
    """The API server's Applications; records each request as (verb, path, query)."""

    def __init__(self, *bodies: dict[str, Any], list_version: int = 100) -> None:
        self.bodies = list(bodies)
        self.list_version = list_version
        self.requests: list[tuple[str, str, dict[str, str]]] = []
        self.down = False
        self.page = 500

    def request(self, verb: str, method: str, path: str, *, query: Any = (), **_: Any) -> dict[str, Any]:
        asked = dict(query)
        self.requests.append((verb, path, asked))
        if self.down:
            raise TransientApiError("connection refused", status=0, reason="ConnectionError", verb=verb)
        if verb == "list":
            start = int(asked.get("continue") or 0)
            items = self.bodies[start:start + self.page]
            more = start + self.page < len(self.bodies)
            return {"metadata": {"resourceVersion": str(self.list_version),
                                 "continue": str(start + self.page) if more else ""}, "items": items}
        for body in self.bodies:
            if path.endswith("/" + body["metadata"]["name"]):
                return body
        raise PermanentApiError('404 Not Found: applications "web" not found', status=404, reason="NotFound",
                                verb=verb)


def view(server: Server) -> FreshView:
    return FreshView(server, selector="!oam-operator.dev/shard", namespaces=())  # type: ignore[arg-type]


def test_a_copy_as_new_as_the_terms_list_is_acted_on_after_one_list_for_all() -> None:
    server = Server(application("u1", 50), application("u2", 60, name="db"))
    fresh = view(server)
    copy = application("u1", 50)
    assert fresh.body_for("u1", copy) is copy
    assert fresh.body_for("u2", application("u2", 61, name="db"))["metadata"]["uid"] == "u2"
    assert fresh.body_for("u1", copy) is copy  # found fresh in this term: no further request
    assert server.requests == [("list", LIST, {"labelSelector": "!oam-operator.dev/shard", "limit": "500"})]


def test_a_copy_the_previous_leader_deleted_is_gone_without_a_write() -> None:
    """The resurrection of issue 36: kopf still holds x, the API server does not."""
    server = Server(application("other", 80, name="db"))
    fresh = view(server)
    assert fresh.body_for("u1", application("u1", 50)) is None
    assert [verb for verb, _, _ in server.requests] == ["list", "read"]


def test_a_namesake_of_another_uid_means_the_copys_application_is_gone() -> None:
    server = Server(application("u2", 90))
    assert view(server).body_for("u1", application("u1", 50)) is None


def test_an_older_copy_is_replaced_by_the_api_servers() -> None:
    newer = application("u1", 70)
    newer["status"] = {"state": "Ready"}
    server = Server(newer)
    assert view(server).body_for("u1", application("u1", 50)) is newer


def test_an_application_created_after_the_list_is_acted_on_from_kopfs_copy() -> None:
    server = Server(list_version=100)
    copy = application("u3", 101)
    assert view(server).body_for("u3", copy) is copy
    assert [verb for verb, _, _ in server.requests] == ["list"]


def test_a_pass_somebody_asked_for_reads_its_application_while_the_terms_list_is_not_made() -> None:
    """A new or changed Application's first pass after a start does not wait for the LIST of all
    of them: one GET; once the LIST is made, urgent or not, it is used."""
    server = Server(application("u1", 50), application("u2", 60, name="db"))
    fresh = view(server)
    listing = threading.Event()
    answer = server.request

    def slow_list(verb: str, *args: Any, **kwargs: Any) -> dict[str, Any]:
        if verb == "list":
            listing.wait(5)  # the LIST takes long: the passes meanwhile do not wait for it
        return answer(verb, *args, **kwargs)

    server.request = slow_list  # type: ignore[method-assign]
    newer = application("u1", 50)
    assert fresh.body_for("u1", application("u1", 40), urgent=True) == newer  # kopf's copy was older
    assert fresh.body_for("u1", application("u1", 40), urgent=True) is not None  # fresh in this term now
    assert fresh.body_for("u9", application("u9", 30, name="gone"), urgent=True) is None  # deleted meanwhile
    assert sorted(verb for verb, _, _ in server.requests) == ["read", "read"]  # the LIST is still on its way
    listing.set()  # the LIST the first urgent pass started in a thread of its own ends ...
    for _ in range(100):
        if [verb for verb, _, _ in server.requests].count("list") == 1 and fresh._list is not None:
            break
        time.sleep(0.02)
    copy = application("u2", 60, name="db")
    assert fresh.body_for("u2", copy, urgent=True) is copy  # ... and the passes after it use it: no read
    assert sorted(verb for verb, _, _ in server.requests) == ["list", "read", "read"]
    assert fresh.body_for("u2", copy) is copy


def test_a_new_term_checks_every_copy_again() -> None:
    server = Server(application("u1", 50))
    fresh = view(server)
    copy = application("u1", 50)
    fresh.body_for("u1", copy)
    fresh.new_term()
    server.bodies = []
    assert fresh.body_for("u1", copy) is None


def test_an_unanswered_list_raises_and_marks_nothing() -> None:
    server = Server(application("u1", 50))
    fresh = view(server)
    server.down = True
    with pytest.raises(TransientApiError):
        fresh.body_for("u1", application("u1", 50))
    server.down = False
    assert fresh.body_for("u1", application("u1", 50)) is not None


def test_the_list_is_paged_and_every_page_counts() -> None:
    server = Server(*(application(f"u{i}", 10 + i, name=f"a{i}") for i in range(5)))
    server.page = 2
    fresh = view(server)
    assert fresh.body_for("u4", application("u4", 14, name="a4")) is not None
    assert [asked.get("continue") for _, _, asked in server.requests] == [None, "2", "4"]


def test_namespaces_are_listed_each() -> None:
    server = Server(application("u1", 50))
    fresh = FreshView(server, selector="s", namespaces=("shop", "blog"))  # type: ignore[arg-type]
    fresh.body_for("u1", application("u1", 50))
    assert [path for _, path, _ in server.requests] == [
        "/apis/oam-operator.dev/v1alpha1/namespaces/shop/applications",
        "/apis/oam-operator.dev/v1alpha1/namespaces/blog/applications"]


def test_the_terms_list_names_the_applications_without_the_finalizer() -> None:
    plain = application("u1", 50)
    other = application("u2", 51, name="db")
    other["metadata"]["finalizers"] = ["example.com/keep"]
    done = application("u3", 52, name="ok")
    done["metadata"]["finalizers"] = ["oam-operator.dev"]
    going = application("u4", 53, name="going")
    going["metadata"]["deletionTimestamp"] = "2026-12-06T00:00:00Z"
    fresh = FreshView(Server(plain, other, done, going), selector="s", namespaces=(),  # type: ignore[arg-type]
                      finalizer="oam-operator.dev")
    assert [(u.name, u.uid, u.resource_version, u.has_finalizers) for u in fresh.unfinalized()] == [
        ("web", "u1", "50", False), ("db", "u2", "51", True)]


@pytest.mark.parametrize(("uid", "expected"), [("u1", True), ("u2", False)])
def test_still_there_compares_the_uid(uid: str, expected: bool) -> None:
    from oam_operator.controller.service.freshview import still_there

    assert still_there(Server(application("u1", 50)), {"namespace": "shop", "name": "web"},  # type: ignore[arg-type]
                       uid) is expected


def test_still_there_says_gone_only_on_a_404() -> None:
    from oam_operator.controller.service.freshview import still_there

    assert still_there(Server(), {"namespace": "shop", "name": "web"}, "u1") is False  # type: ignore[arg-type]
    server = Server()
    server.down = True
    assert still_there(server, {"namespace": "shop", "name": "web"}, "u1") is True  # type: ignore[arg-type]


# -- kopf's LIST as the term's (a start lists the Applications once) ---------------------------------

SELECTOR = "!oam-operator.dev/shard"


def following(server: Server, namespaces: tuple[str, ...] = ()) -> FreshView:
    fresh = FreshView(server, selector=SELECTOR, namespaces=namespaces,  # type: ignore[arg-type]
                      finalizer="oam-operator.dev")
    fresh.follow_lists()
    return fresh


def test_a_term_begun_before_kopf_lists_waits_for_kopfs_list_and_makes_none_of_its_own() -> None:
    server = Server(application("u1", 50))
    fresh = following(server)
    assert fresh.new_term() is True  # kopf has not listed: its LIST will be this term's
    answers: list[Any] = []
    waiting = threading.Thread(target=lambda: answers.append(fresh.body_for("u1", application("u1", 50))))
    waiting.start()
    time.sleep(0.1)
    assert answers == [] and server.requests == []  # the routine pass waits for kopf's LIST
    capture = fresh.listing(None, SELECTOR)
    assert capture is not None
    plain = application("u2", 51, name="db")
    capture.page([application("u1", 50), plain])
    capture.page([])
    capture.done("120")
    waiting.join(5)
    assert answers == [application("u1", 50)]
    copy = application("u3", 121, name="new")
    assert fresh.body_for("u3", copy) is copy  # created after kopf's LIST: kopf saw it live
    assert [(u.name, u.has_finalizers) for u in fresh.unfinalized()] == [("web", False), ("db", False)]
    assert server.requests == []
    assert fresh.new_term() is False  # kopf listed already: a later term lists itself
    assert fresh.body_for("u1", application("u1", 50)) is not None
    assert [verb for verb, _, _ in server.requests] == ["list"]


def test_an_urgent_pass_reads_its_application_while_kopfs_list_is_awaited_and_starts_no_list() -> None:
    server = Server(application("u1", 50))
    fresh = following(server)
    fresh.new_term()
    assert fresh.body_for("u1", application("u1", 40), urgent=True) == application("u1", 50)
    time.sleep(0.1)
    assert [verb for verb, _, _ in server.requests] == ["read"]


def test_a_list_begun_in_an_earlier_term_is_not_the_terms() -> None:
    """A standby's LIST (or one begun before a loss of the Lease) may miss what the previous
    leader did since: a new term does not take it."""
    server = Server(application("other", 80, name="db"))
    fresh = following(server)
    capture = fresh.listing(None, SELECTOR)
    assert capture is not None
    capture.page([application("u1", 50)])
    fresh.new_term()  # begun while kopf's LIST was on its way
    capture.done("60")
    assert fresh.body_for("u1", application("u1", 50)) is None  # the term's own LIST: it is gone
    assert [verb for verb, _, _ in server.requests] == ["list", "read"]


def test_kopfs_list_of_another_selector_or_namespace_is_not_taken() -> None:
    server = Server(application("u1", 50))
    fresh = following(server, namespaces=("shop",))
    assert fresh.listing("shop", "oam-operator.dev/shard=a") is None
    assert fresh.listing("blog", SELECTOR) is None
    assert fresh.listing("shop", SELECTOR) is not None


def test_a_term_over_several_namespaces_is_made_of_kopfs_list_of_each() -> None:
    server = Server()
    fresh = following(server, namespaces=("shop", "blog"))
    shop, blog = fresh.listing("shop", SELECTOR), fresh.listing("blog", SELECTOR)
    assert shop is not None and blog is not None
    shop.page([application("u1", 50)])
    shop.done("90")
    assert fresh._list is None  # the blog's is not in yet
    blog.page([application("u2", 70, name="db")])
    blog.done("80")
    assert fresh._list is not None
    assert dict(fresh._list.versions) == {"u1": 50, "u2": 70} and fresh._list.list_version == 80
    assert server.requests == []


def test_kopfs_list_that_never_ends_is_waited_for_only_so_long(monkeypatch: pytest.MonkeyPatch) -> None:
    from oam_operator.controller.service import freshview

    monkeypatch.setattr(freshview, "KOPF_LIST_WAIT", 0.2)
    server = Server(application("u1", 50))
    fresh = following(server)
    fresh.listing(None, SELECTOR)  # begun, and cut short: no done()
    started = time.monotonic()
    assert fresh.body_for("u1", application("u1", 50)) is not None
    assert 0.2 <= time.monotonic() - started < 5
    assert [verb for verb, _, _ in server.requests] == ["list"]
