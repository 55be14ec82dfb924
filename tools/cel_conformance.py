"""Run google/cel-spec's simple conformance tests against the CEL runtime definitions use
(docs/definitions.md#the-cel-runtime).

The test files are read from a git checkout (bare or not) of github.com/google/cel-spec with
``git show``; nothing of cel-spec is copied into this repository. Its ``simple.proto`` and the
protos it imports are compiled with grpcio-tools' bundled protoc into a temporary directory so
the text protos parse with protobuf's own ``text_format``. Each test is compiled in an
environment of the same shape as a definition's (the standard library plus the ``strings``,
``math`` and ``optional`` extensions), its bindings converted to Python values, and its
result compared with the expected one. A test that needs a protobuf message type (a
container, a message binding or result) is counted as skipped: definitions evaluate over
JSON-shaped values only.

Run: ``python tools/cel_conformance.py CEL_SPEC_GIT_DIR [FILE ...]`` (default files: the ones
whose features definitions rely on); prints one line per file and the total pass count.
"""

from __future__ import annotations

import importlib
import math
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cel_expr_python import cel
from cel_expr_python.ext import ext_math, ext_optional, ext_strings

PROTOS = (
    "cel/expr/checked.proto",
    "cel/expr/eval.proto",
    "cel/expr/value.proto",
    "cel/expr/syntax.proto",
    "cel/expr/conformance/test/simple.proto",
    "cel/expr/conformance/proto2/test_all_types.proto",
    "cel/expr/conformance/proto2/test_all_types_extensions.proto",
    "cel/expr/conformance/proto3/test_all_types.proto",
)
DEFAULT_FILES = (
    "basic",
    "comparisons",
    "conversions",
    "fp_math",
    "integer_math",
    "lists",
    "logic",
    "macros",
    "math_ext",
    "optionals",
    "parse",
    "plumbing",
    "string",
    "string_ext",
)
PRIMITIVES = {
    1: cel.Type.BOOL, 2: cel.Type.INT, 3: cel.Type.UINT, 4: cel.Type.DOUBLE, 5: cel.Type.STRING, 6: cel.Type.BYTES,
}


class Skip(Exception):
    """The test needs something a definition never has (a protobuf message)."""


@dataclass
class Tally:
    passed: int = 0
    failed: int = 0
    skipped: int = 0


def git_show(repo: Path, path: str) -> str:
    return subprocess.run(["git", "-C", str(repo), "show", f"HEAD:{path}"], check=True, capture_output=True,
                          text=True).stdout


def compile_protos(repo: Path, out: Path) -> Any:
    from grpc_tools import protoc

    src = out / "src"
    for proto in PROTOS:
        target = src / proto
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(git_show(repo, f"proto/{proto}"))
    include = str(Path(protoc.__file__).parent / "_proto")
    code = protoc.main(["protoc", f"-I{src}", f"-I{include}", f"--python_out={out}", *(str(src / p) for p in PROTOS)])
    if code != 0:
        raise SystemExit(f"protoc failed ({code})")
    sys.path.insert(0, str(out))
    for module in ("proto2.test_all_types_pb2", "proto2.test_all_types_extensions_pb2", "proto3.test_all_types_pb2"):
        importlib.import_module(f"cel.expr.conformance.{module}")  # the messages the text protos quote
    return importlib.import_module("cel.expr.conformance.test.simple_pb2")


def cel_type(decl_type: Any) -> Any:
    kind = decl_type.WhichOneof("type_kind")
    if kind == "primitive":
        return PRIMITIVES.get(decl_type.primitive, cel.Type.DYN)
    if kind == "list_type":
        return cel.Type.List(cel_type(decl_type.list_type.elem_type))
    if kind == "map_type":
        return cel.Type.Map(cel_type(decl_type.map_type.key_type), cel_type(decl_type.map_type.value_type))
    if kind in ("message_type", "abstract_type", "wrapper"):
        raise Skip
    return cel.Type.DYN


def python_value(value: Any) -> Any:
    kind = value.WhichOneof("kind")
    if kind in ("object_value", "enum_value", "type_value"):
        raise Skip
    if kind == "null_value":
        return None
    if kind == "list_value":
        return [python_value(v) for v in value.list_value.values]
    if kind == "map_value":
        return {python_value(e.key): python_value(e.value) for e in value.map_value.entries}
    return getattr(value, kind)


def same(expected: Any, actual: Any) -> bool:
    if isinstance(actual, bytearray):
        actual = bytes(actual)
    if isinstance(expected, bool) or isinstance(actual, bool):
        return type(expected) is type(actual) and expected == actual
    if isinstance(expected, float) and isinstance(actual, float):
        return (math.isnan(expected) and math.isnan(actual)) or expected == actual
    if isinstance(expected, list) and isinstance(actual, list):
        return len(expected) == len(actual) and all(same(e, a) for e, a in zip(expected, actual, strict=True))
    if isinstance(expected, dict) and isinstance(actual, dict):
        return expected.keys() == actual.keys() and all(same(expected[k], actual[k]) for k in expected)
    return type(expected) is type(actual) and expected == actual


def run_test(test: Any) -> bool:
    if test.container or test.disable_macros:
        raise Skip
    variables = {d.name: cel_type(d.ident.type) for d in test.type_env if d.HasField("ident")}
    if any(d.HasField("function") for d in test.type_env):
        raise Skip
    bindings = {name: python_value(v.value) for name, v in test.bindings.items()}
    for name in bindings:
        variables.setdefault(name, cel.Type.DYN)
    env = cel.NewEnv(variables=variables,
                     extensions=[ext_strings.ExtStrings(), ext_math.ExtMath(), ext_optional.ExtOptional()])
    matcher = test.WhichOneof("result_matcher")
    if matcher in ("unknown", "any_unknowns", "typed_result"):
        raise Skip
    try:
        expression = env.compile(test.expr, disable_check=test.disable_check)
        if test.check_only:
            return True
        result = expression.eval(data=bindings)
    except Exception:
        return matcher in ("eval_error", "any_eval_errors")
    if result.type().name() == "ERROR":  # an evaluation error is a value of type error
        return matcher in ("eval_error", "any_eval_errors")
    if matcher in ("eval_error", "any_eval_errors"):
        return False
    actual = result.plain_value()
    expected = python_value(test.value) if matcher == "value" else True
    return same(expected, actual)


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__)
        return 2
    repo, files = Path(argv[0]), argv[1:] or list(DEFAULT_FILES)
    from google.protobuf import text_format

    total = Tally()
    with tempfile.TemporaryDirectory() as tmp:
        simple_pb2 = compile_protos(repo, Path(tmp))
        for name in files:
            parsed = simple_pb2.SimpleTestFile()
            text_format.Parse(git_show(repo, f"tests/simple/testdata/{name}.textproto"), parsed,
                              allow_unknown_extension=True)
            tally = Tally()
            failures: list[str] = []
            for section in parsed.section:
                for test in section.test:
                    try:
                        ok = run_test(test)
                    except Skip:
                        tally.skipped += 1
                        continue
                    if ok:
                        tally.passed += 1
                    else:
                        tally.failed += 1
                        failures.append(f"{section.name}/{test.name}")
            shown = f" (failed: {', '.join(failures[:6])}{' …' if len(failures) > 6 else ''})" if failures else ""
            print(f"{name}: {tally.passed} passed, {tally.failed} failed, {tally.skipped} skipped{shown}")
            total.passed += tally.passed
            total.failed += tally.failed
            total.skipped += tally.skipped
    run = total.passed + total.failed
    print(f"total: {total.passed}/{run} passed ({total.skipped} skipped: protobuf messages, unknowns, types)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
