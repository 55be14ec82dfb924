"""Who may talk to the UI: Host, Origin and token (docs/ui.md#security)."""

from __future__ import annotations

from oam_operator.ui.security import Guard

GUARD = Guard("127.0.0.1", 8080, "secret-token")
PAGE = {"Host": "127.0.0.1:8080", "Origin": "http://127.0.0.1:8080", "X-OAM-UI-Token": "secret-token"}


def test_reads_need_only_a_host_naming_the_ui() -> None:
    for host in ("127.0.0.1:8080", "localhost:8080", "[::1]:8080"):
        assert GUARD.refusal("GET", {"Host": host}) is None
    assert GUARD.refusal("GET", {"Host": "rebound.example:8080"}) == (
        "refused: Host 'rebound.example:8080' is not this UI's address (127.0.0.1:8080)")
    assert GUARD.refusal("GET", {"Host": "127.0.0.1:9090"}) == (
        "refused: Host '127.0.0.1:9090' is not this UI's address (127.0.0.1:8080)")


def test_a_change_needs_the_pages_origin_and_token() -> None:
    assert GUARD.refusal("POST", PAGE) is None
    assert GUARD.refusal("POST", {**PAGE, "Origin": "http://evil.example"}) == (
        "refused: a change must come from this UI's page (Origin 'http://evil.example', not 'http://127.0.0.1:8080')")
    without_origin = {k: v for k, v in PAGE.items() if k != "Origin"}
    assert GUARD.refusal("POST", without_origin) == (
        "refused: a change must come from this UI's page (Origin missing, not 'http://127.0.0.1:8080')")
    assert GUARD.refusal("POST", {**PAGE, "X-OAM-UI-Token": "guess"}) == (
        "refused: a change needs this UI's X-OAM-UI-Token header (reload the page)")
    assert GUARD.refusal("DELETE", {k: v for k, v in PAGE.items() if k != "X-OAM-UI-Token"}) == (
        "refused: a change needs this UI's X-OAM-UI-Token header (reload the page)")


def test_a_wildcard_address_accepts_any_host_but_still_checks_changes() -> None:
    guard = Guard("0.0.0.0", 8080, "t")
    assert guard.refusal("GET", {"Host": "laptop.lan:8080"}) is None
    assert guard.refusal("POST", {"Host": "laptop.lan:8080", "Origin": "http://laptop.lan:8080"}) == (
        "refused: a change needs this UI's X-OAM-UI-Token header (reload the page)")
