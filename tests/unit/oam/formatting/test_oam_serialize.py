"""Output serialisation (docs/transform.md#output), Go formatting helpers and generated-name rules."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from oamkit import SHARED

from oam_operator.oam.document.loader import load_all
from oam_operator.oam.document.names import digest, shorten, shorten_with_suffix
from oam_operator.oam.formatting.duration import DurationError, normalize_duration
from oam_operator.oam.formatting.gofmt import format_float, go_quote, go_value
from oam_operator.oam.formatting.quantity import ERR_FORMAT, QuantityError, canonical_quantity
from oam_operator.oam.formatting.serialize import dump_document, dump_objects, go_plain_kind, needs_double_quotes

GOLDEN = SHARED / "kurel-golden"


@pytest.mark.parametrize(
    ("value", "line"),
    [
        ("true", 'v: "true"'),
        ("yes", 'v: "yes"'),
        ("on", 'v: "on"'),
        ("off", 'v: "off"'),
        ("y", 'v: "y"'),
        ("null", 'v: "null"'),
        ("~", 'v: "~"'),
        ("", 'v: ""'),
        ("200", 'v: "200"'),
        ("1", 'v: "1"'),
        ("1.5", 'v: "1.5"'),
        ("0x1F", 'v: "0x1F"'),
        ("1_000", 'v: "1_000"'),
        (".inf", 'v: ".inf"'),
        ("2024-01-01", 'v: "2024-01-01"'),
        ("1:20", 'v: "1:20"'),
        ("@daily", "v: '@daily'"),
        ("*", "v: '*'"),
        ("- x", "v: '- x'"),
        ("a: b", "v: 'a: b'"),
        ("a #b", "v: 'a #b'"),
        (" lead", "v: ' lead'"),
        ("0 2 * * *", "v: 0 2 * * *"),
        ("ghcr.io/example/api:v1.0.0", "v: ghcr.io/example/api:v1.0.0"),
        ("2024-13-01", "v: 2024-13-01"),
        ("1.2.3", "v: 1.2.3"),
        ("<<", "v: <<"),
        ("héllo", "v: héllo"),
    ],
)
def test_string_quoting(value: str, line: str) -> None:
    assert dump_document({"v": value}) == line + "\n"


@pytest.mark.parametrize(
    ("text", "kind"),
    [("1.5", "float"), (".5", "float"), ("2024-01-01", "timestamp"), ("2024-01-01T10:00:00Z", "timestamp")],
)
def test_a_trailing_newline_makes_a_scalar_a_string(text: str, kind: str) -> None:
    # go-yaml's resolver uses Go regexps, whose "$" is the end of the text: "1.5\n" is no float
    assert go_plain_kind(text) == kind
    assert go_plain_kind(text + "\n") == "str"


def test_a_trailing_newline_is_not_base_60() -> None:
    assert needs_double_quotes("1:20")
    assert not needs_double_quotes("1:20\n")


def test_block_scalars_and_numbers() -> None:
    assert dump_document({"v": "a\nb\n"}) == "v: |\n  a\n  b\n"
    assert dump_document({"v": "a\nb"}) == "v: |-\n  a\n  b\n"
    # keep-chomped last scalar: the stream is open-ended, libyaml and go-yaml both close it with "..."
    assert dump_document({"v": "a\n\n"}) == "v: |+\n  a\n\n...\n"
    assert dump_document({"v": "a\n\n", "w": 1}) == "v: |+\n  a\n\nw: 1\n"
    assert dump_document({"i": 5, "f": 0.5, "g": 1e21, "h": 2.0, "b": False, "n": None}) == (
        'b: false\nf: 0.5\ng: 1e+21\nh: 2\ni: 5\n"n": null\n'  # "n" reads as a YAML 1.1 bool
    )
    assert dump_document({"e": {}, "l": [], "s": [{"a": 1, "b": [1, 2]}]}) == (
        "e: {}\nl: []\ns:\n- a: 1\n  b:\n  - 1\n  - 2\n"
    )


def test_keys_sorted_by_code_point_at_every_depth() -> None:
    assert dump_document({"b": {"z": 1, "A": 2, "_": 3}, "a": 1}) == "a: 1\nb:\n  A: 2\n  _: 3\n  z: 1\n"


def test_long_plain_scalars_fold_at_80_columns() -> None:
    text = " ".join(["word"] * 30)
    out = dump_document({"description": text})
    assert out.splitlines()[0] == "description: " + " ".join(["word"] * 14)  # breaks at the first space past 80
    assert out.splitlines()[1].startswith("  word")
    assert load_all(out)[0][0] == {"description": text}


def test_stream_has_separators_and_no_leading_one() -> None:
    assert dump_objects([{"a": 1}, {"b": 2}]) == "a: 1\n---\nb: 2\n"
    assert dump_objects([]) == ""


def _golden_cases() -> list[Path]:
    if not GOLDEN.is_dir():
        if os.environ.get("OAM_REQUIRE_GOLDEN") == "1":
            raise AssertionError(f"kurel golden folder missing: {GOLDEN}")
        return []
    return sorted(p for p in GOLDEN.iterdir() if (p / "expected.yaml").is_file())


@pytest.mark.parametrize("case", _golden_cases(), ids=lambda p: p.name)
def test_emitter_reproduces_kurels_bytes(case: Path) -> None:
    """Loading kurel's output and emitting it again gives kurel's exact bytes (style, order, quoting)."""
    text = (case / "expected.yaml").read_text()
    objects = [value for value, _ in load_all(text)]
    assert dump_objects(objects).strip() == text.strip()


@pytest.mark.parametrize(
    ("text", "expected"),
    [("60m", "1h0m0s"), ("1h", "1h0m0s"), ("2160h", "2160h0m0s"), ("90s", "1m30s"), ("10m", "10m0s"),
     ("600s", "10m0s"), ("1.5s", "1.5s"), ("1.5ms", "1.5ms"), ("0", "0s"), ("1h30m", "1h30m0s"),
     ("-5s", "-5s"), ("250us", "250µs"), ("42ns", "42ns"), ("0.5h", "30m0s")],
)  # fmt: skip
def test_durations(text: str, expected: str) -> None:
    assert normalize_duration(text) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", 'time: invalid duration ""'),
        ("abc", 'time: invalid duration "abc"'),
        ("10", 'time: missing unit in duration "10"'),
        ("10x", 'time: unknown unit "x" in duration "10x"'),
        (".s", 'time: invalid duration ".s"'),
    ],
)
def test_duration_errors(text: str, message: str) -> None:
    with pytest.raises(DurationError) as info:
        normalize_duration(text)
    assert str(info.value) == message


@pytest.mark.parametrize(
    ("value", "expected"),
    [("0.5", "500m"), ("1000m", "1"), ("1500", "1500"), ("2000", "2k"), ("1536Mi", "1536Mi"), ("2048Mi", "2Gi"),
     ("128Mi", "128Mi"), ("1e3", "1e3"), (0.5, "500m"), (2, "2"), ("0.0001", "1m"), ("512", "512"),
     ("0.5Ki", "512"), ("1.5Gi", "1536Mi"), ("100Ki", "100Ki"), ("1000Mi", "1000Mi"), ("0", "0")],
)  # fmt: skip
def test_quantities(value: Any, expected: str) -> None:
    assert canonical_quantity(value) == expected


@pytest.mark.parametrize("value", ["abc", "1.5.5", "", "5Q"])
def test_quantity_errors(value: str) -> None:
    with pytest.raises(QuantityError) as info:
        canonical_quantity(value)
    assert str(info.value) in (ERR_FORMAT, "unable to parse quantity's suffix")


def test_quantity_that_looks_like_a_number_is_double_quoted() -> None:
    assert dump_document({"cpu": canonical_quantity("1000m")}) == 'cpu: "1"\n'


def test_go_formatting() -> None:
    assert go_quote('a"b\\c\n\x00é') == '"a\\"b\\\\c\\n\\x00é"'
    assert go_value({"b": [1, "x", None], "a": True}) == "map[a:true b:[1 x <nil>]]"
    assert [format_float(f, 21) for f in (0.5, 1e21, 1e20, 1e-5, 100.0)] == [
        "0.5",
        "1e+21",
        "100000000000000000000",
        "1e-05",
        "100",
    ]
    assert format_float(1234567.5, 6) == "1.2345675e+06"


def test_names() -> None:
    assert shorten("short", 63) == "short"
    long = "x" * 70
    assert shorten(long, 63) == "x" * 52 + "-" + digest(long)[:10]
    assert shorten("-" * 70, 63) == digest("-" * 70)[:10]
    assert shorten_with_suffix("app", "-00", 253) == "app-00"
    assert shorten_with_suffix("a" * 20, "-" + "s" * 10, 25) == "aaa-" + digest("a" * 20)[:10] + "-" + "s" * 10
    suffix = "-" + "s" * 16  # room < 10: the whole name is shortened
    assert shorten_with_suffix("a" * 20, suffix, 25) == shorten("a" * 20 + suffix, 25)


def test_kubernetes_name_check_texts() -> None:
    from oam_operator.common.dns1123 import dns1123_label_errors, dns1123_subdomain_errors

    assert dns1123_subdomain_errors("ok.example") == []
    assert dns1123_subdomain_errors("A" * 254) == [
        "must be no more than 253 characters",
        "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must "
        "start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
        "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
    ]
    assert dns1123_label_errors("a.b") == [
        "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and "
        "end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
        "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
    ]
