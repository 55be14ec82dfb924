"""The one duration parser and the one DNS-1123 check, shared by every room."""

from __future__ import annotations

import subprocess
import sys

import pytest

from oam_operator.common.dns1123 import dns1123_label_errors, is_dns1123_label, is_dns1123_subdomain
from oam_operator.common.durations import DurationMessages, parse_go_duration_ns
from oam_operator.oam.formatting.duration import DurationError, parse_duration


@pytest.mark.parametrize(
    ("text", "operator", "go"),
    [
        ("10", "invalid duration '10'", 'time: missing unit in duration "10"'),
        ("10x", "invalid duration '10x'", 'time: unknown unit "x" in duration "10x"'),
        ("abc", "invalid duration 'abc'", 'time: invalid duration "abc"'),
        ("9223372036854775808ns", "invalid duration '9223372036854775808ns'",
         'time: invalid duration "9223372036854775808ns"'),
    ],
)  # fmt: skip
def test_one_parser_two_wordings(text: str, operator: str, go: str) -> None:
    with pytest.raises(ValueError) as plain:
        parse_go_duration_ns(text)
    assert str(plain.value) == operator
    with pytest.raises(DurationError) as gostyle:
        parse_duration(text)
    assert str(gostyle.value) == go


def test_the_wording_and_the_exception_are_parameters() -> None:
    class Refused(Exception):
        pass

    messages = DurationMessages("bad {text}", "no unit in {text}", "unit {unit}?", quote=str, error=Refused)
    with pytest.raises(Refused, match=r"^unit x\?$"):
        parse_go_duration_ns("1x", messages)
    assert parse_go_duration_ns("-9223372036854775808ns", messages) == -(1 << 63)


@pytest.mark.parametrize("check", [is_dns1123_label, is_dns1123_subdomain])
def test_a_trailing_newline_is_not_a_name(check: object) -> None:
    assert callable(check)
    assert check("web")
    assert not check("web\n")


def test_label_errors_name_the_length_first() -> None:
    assert dns1123_label_errors("a" * 64)[0] == "must be no more than 63 characters"


def test_the_neutral_modules_load_no_cluster_client() -> None:
    code = (
        "import sys, oam_operator.common.dns1123, oam_operator.common.durations, oam_operator.oam.formatting.duration; "
        "print(sorted(m for m in ('kubernetes', 'kopf') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
    assert out.strip() == "[]"
