"""The kurel oracle corpus (../shared/kurel-oracle): cases, an in-process build, and the verdict rules.

Each case folder holds ``app.yaml``, ``cluster.yaml`` and what ``kurel build app.yaml --profile
cluster.yaml`` did with them, run inside the folder: ``expected.yaml`` (stdout),
``expected.stderr`` and ``expected.rc``. A case is run the same way here — ``oam-operator build
app.yaml --profile cluster.yaml --no-component-label`` through click's runner with the case folder
as the working directory, so file names in messages are the same relative names — in-process, so
the whole corpus runs in seconds rather than spawning a process per case.

Shared by the corpus test (test_kurel_oracle.py) and the agreement report (bench/oracle_agreement.py).
"""

from __future__ import annotations

import contextlib
import re
from dataclasses import dataclass
from pathlib import Path

from click.testing import CliRunner

from oam_operator.cli import main
from oamkit import SHARED

ORACLE = SHARED / "kurel-oracle"

#: The prefixes of authored-property validation (docs/transform.md#validating-authored-properties),
#: after the CLI's step prefix.
_SCHEMA_PATH = (
    r'(component "[^"]*" \(type "[^"]*"\)|component "[^"]*": trait "[^"]*"|policy "[^"]*" \(type "[^"]*"\)): '
    r"properties"
)
#: The schema's value/object-check causes (docs/transform.md#checking-a-value):
#: an undeclared key, a mistyped value, an enum miss.
_SCHEMA_CAUSE = r'(unsupported field "|expected [a-z]+, got |unknown [A-Za-z]+ .* \(valid: |"[^"]*" is required$)'
SCHEMA_REFUSAL = re.compile(rf"^Error: transforming application: {_SCHEMA_PATH}[^:]*: {_SCHEMA_CAUSE}")


@dataclass(frozen=True)
class Case:
    """One corpus case: kurel's verdict on one generated Application."""

    path: Path

    @property
    def id(self) -> str:
        return self.path.name

    @property
    def rc(self) -> int:
        return int((self.path / "expected.rc").read_text(encoding="utf-8").strip())

    @property
    def stdout(self) -> str:
        return (self.path / "expected.yaml").read_text(encoding="utf-8")

    @property
    def stderr(self) -> str:
        return (self.path / "expected.stderr").read_text(encoding="utf-8")


@dataclass(frozen=True)
class Outcome:
    """What ``oam-operator build`` did with a case."""

    rc: int
    stdout: str
    stderr: str


def cases() -> list[Case]:
    """Every case of the corpus in name order; empty when the folder is missing."""
    if not ORACLE.is_dir():
        return []
    return [Case(p) for p in sorted(ORACLE.iterdir()) if (p / "app.yaml").is_file()]


def build(case: Case) -> Outcome:
    """``oam-operator build app.yaml --profile cluster.yaml --no-component-label`` inside the case folder."""
    with contextlib.chdir(case.path):
        result = CliRunner().invoke(
            main, ["build", "app.yaml", "--profile", "cluster.yaml", "--no-component-label"], catch_exceptions=False
        )
    return Outcome(result.exit_code, result.stdout, result.stderr)


def is_schema_refusal(stderr: str) -> bool:
    """Whether a refusal is the authored-property validation's message
    (docs/transform.md#validating-authored-properties)."""
    return SCHEMA_REFUSAL.match(stderr) is not None


#: kurel's context for a refusal inside a trait lowering rule (``expose``).
_KUREL_LOWERING = re.compile(
    r'lowering document "(?P<a>[^"]*)" in document "(?P=a)" \(kind "Application"\): '
    r'trait "(?P<t>[^"]*)" on component "(?P<c>[^"]*)" in document "(?P=a)" \(kind "Application"\): '
)
#: kurel's trace of the lowering rounds after a lowering refusal (docs/transform.md#emitted-elements
#: states the message without it).
_ROUNDS = re.compile(r"(\n  round \d+: [^\n]*)+(?=\n$)")
_PLATFORM_RESERVED = re.compile(
    r'^Error: transforming application: component "[^"]*" trait "[^"]*": properties: "[^"]*" is platform-reserved '
)
_HELM_FLUX = re.compile(r': helm(chart)?: unsupported delivery "flux"; supported values: native, template\n$')
_KUREL_NO_PORT = re.compile(
    r'(trait "httproute": rules\[\d+\]: )component ("[^"]*") has no service port; configure a service port or '
    r"specify an explicit backend name \(for helmchart components, set servicePort and optionally serviceName on "
    r"the trait\)\n$"
)
_OUR_NO_PORT = (
    r"\1cannot determine backend port for component \2 — configure the component port or specify backendRefs[].port\n"
)
_PARSE_LINE = re.compile(r'^(Error: parsing application file "[^"]*": parse error in Application at line \d+: )')
_API_VERSION = 'expected "launcher.gokure.dev/v1alpha1"\n'
_OUR_API_VERSION = 'expected "oam-operator.dev/v1alpha1" or "launcher.gokure.dev/v1alpha1"\n'
#: kurel's wordings of a value outside a set, and ours (docs/transform.md#refusing-a-value-outside-a-set; the
#: component allow-list includes helm, docs/transform.md#allow-lists):
#: ``(kurel's pattern, our text as a regular expression of its groups)``. Ours may add a suggestion.
_KUREL_ENUMS = (
    (re.compile(r'invalid value "(?P<t>[^"]*)" for "type" in "(?P<n>[^"]*)"; must be one of: (?P<list>certificate, [^\n]*)'),
     lambda m: rf'component "{re.escape(m["n"])}": unknown trait type "{re.escape(m["t"])}" '
               rf'\(valid: {re.escape(m["list"])}\)'),
    (re.compile(r'invalid value "(?P<t>[^"]*)" for "type" in "(?P<n>[^"]*)"; must be one of: (?P<list>crd, [^\n]*)'),
     lambda m: rf'component "{re.escape(m["n"])}": unknown type "{re.escape(m["t"])}" '
               rf'\(valid: {re.escape(m["list"].replace("daemonset, helmchart", "daemonset, helm, helmchart"))}\)'),
    (re.compile(r'component "(?P<c>[^"]*)": invalid tier annotation "(?P<v>[^"]*)" on component "(?P=c)": '
                r"must be one of (?P<list>infra, services, apps)"),
     lambda m: rf'component "{re.escape(m["c"])}": annotation [a-z0-9.-]+/tier: unknown tier "{re.escape(m["v"])}" '
               rf'\(valid: {m["list"]}\)'),
    (re.compile(r"privateKey\.size (?P<n>[0-9]+) is invalid for (?P<alg>RSA|ECDSA) \(allowed: (?P<list>[0-9, ]+)\)"),
     lambda m: rf"privateKey\.size: unknown {m['alg']} key size {m['n']} \(valid: {m['list']}\)"),
)
_SUGGESTION = r'(; did you mean "[^"]*"\?)?'


def spec_stated_refusal(kurel: str, ours: str) -> str | None:
    """Why our refusal text differs from kurel's by the transform spec's own words, or None.

    Each rule names the section that states our text. The rules compare whole messages after
    replacing only the part the section gives differently, so any other difference still fails.
    """
    later = kurel.startswith(("Error: transforming application: ", "Error: generating manifests: "))
    if later and is_schema_refusal(ours):
        return (
            "docs/transform.md#order-of-validation, docs/transform.md#validating-authored-properties: "
            "authored properties are checked against the schema before any handler runs, "
            "so the schema's message comes first"
        )
    if later and _PLATFORM_RESERVED.match(ours):
        return (
            "docs/transform.md#platform-reserved-properties: the platform-reserved check runs on every trait "
            "before the transform"
        )
    if _HELM_FLUX.search(kurel):
        return "docs/transform.md#the-helm-component: helm delivery flux is a synonym of native"
    if _KUREL_NO_PORT.sub(_OUR_NO_PORT, kurel) == ours != kurel:
        return (
            "docs/transform.md#routing-traits: an httproute rule without backendRefs and no service port has the "
            "rule-level message"
        )
    lowered = _KUREL_LOWERING.sub(lambda m: f'component "{m["c"]}" trait "{m["t"]}": ', _ROUNDS.sub("", kurel))
    if lowered != kurel and lowered == ours:
        return (
            "docs/transform.md#what-a-lowering-rule-is, docs/transform.md#emitted-elements: "
            'a lowering rule\'s refusal has the context component "<c>" trait "<t>"'
        )
    if kurel.replace(_API_VERSION, _OUR_API_VERSION) == ours != kurel:
        return "docs/transform.md#document-validation: the apiVersion message names both accepted apiVersions"
    if _enum_reworded(kurel, ours):
        return (
            "docs/transform.md#refusing-a-value-outside-a-set: a value outside a set reads unknown <noun> "
            '"<value>" (valid: …), with a suggestion when one is close'
        )
    prefix = _PARSE_LINE.match(kurel)
    if prefix and ours.startswith(prefix[1]) and "\n" not in ours.rstrip("\n"):
        return (
            "docs/transform.md#loading-yaml: a parse error's cause cannot be byte-identical to Go's yaml "
            "library; the prefix is"
        )
    return None


def _enum_reworded(kurel: str, ours: str) -> bool:
    """Whether ``ours`` is ``kurel`` with its one enum refusal in our wording (``_KUREL_ENUMS``),
    every other character the same."""
    for pattern, reworded in _KUREL_ENUMS:
        found = pattern.search(kurel)
        if found is None:
            continue
        expected = re.escape(kurel[:found.start()]) + reworded(found) + _SUGGESTION + re.escape(kurel[found.end():])
        return re.fullmatch(expected, ours) is not None
    return False


#: Where the deliberate differences are documented, with their reasons.
DIFFERENCES_DOC = "docs/transform.md#deliberate-differences-from-kurel"


@dataclass(frozen=True)
class Difference:
    """A case where ours disagrees with kurel on purpose: the verdict it gives, and why."""

    verdict: str
    reason: str


#: Every case ours disagrees with kurel on, on purpose (DIFFERENCES_DOC): the verdict it must give
#: and the reason. Shared by the corpus test, which fails when a case stops giving its verdict, and
#: by bench/oracle_agreement.py, which prints them apart from the unexplained ones.
DOCUMENTED_DIFFERENCES: dict[str, Difference] = {
    "2-00030": Difference(
        "accepted-but-kurel-refused",
        "docs/transform.md#the-helm-component: helm delivery flux is a synonym of native "
        "(kurel's release knows only native and template)",
    ),
    "2-00425": Difference(
        "refused-different-text",
        "docs/transform.md#order-of-validation, docs/transform.md#tiers: kurel applies traits tier by tier with "
        "its default tiers (postgresql in services), so it reaches component jobs' ingress first; ours applies "
        "them in document order and first refuses component db's networkpolicy",
    ),
    "2-01191": Difference(
        "built-differs",
        "docs/transform.md#network-policies: a cilium-networkpolicy endpointSelector is passed through as "
        "written; kurel's typed decoding drops the unknown key bogusNested",
    ),
    "2-01874": Difference(
        "accepted-but-kurel-refused",
        "docs/transform.md#scaling-and-storage, docs/transform.md#durations-and-quantities: a pvc size is a "
        "quantity, and a bare number (size: 123) is read as its decimal text; kurel reads it as missing",
    ),
    "2-02310": Difference(
        "refused-different-text",
        "docs/transform.md#order-of-validation, docs/transform.md#tiers: kurel applies traits tier by tier, "
        "component db in services by its annotation and the workers in kurel's default apps tier, so it reaches "
        "component db's ingress first; ours applies them in document order and first refuses component worker's "
        "security-context",
    ),
    **{case_id: Difference(
        "built-differs",
        "docs/transform.md#raw-objects-passthrough-crd-and-manifests: a manifests Namespace is emitted as "
        "written; kurel's typed decoding adds spec: {} (issue 37)",
    ) for case_id in (
        "2-00130", "2-00281", "2-00472", "2-00526", "2-00588", "2-00641", "2-00795", "2-00860", "2-00917",
        "2-00919", "2-01356", "2-01409", "2-01584", "2-01600", "2-01850", "2-01923", "2-01926", "2-02083",
        "2-02126", "2-02208", "2-02226", "2-02229", "2-02296",
    )},
}

#: Verdict names, in report order.
VERDICTS = (
    "built-identical",
    "built-differs",
    "refused-by-schema",
    "refused-same-text",
    "refused-spec-text",
    "refused-different-text",
    "accepted-but-kurel-refused",
    "refused-but-kurel-built",
)


#: The verdicts that are a disagreement with kurel: each case giving one must be a documented difference.
DISAGREEMENTS = frozenset(
    {"built-differs", "refused-different-text", "accepted-but-kurel-refused", "refused-but-kurel-built"}
)


def unexplained(verdicts: dict[str, str]) -> list[str]:
    """The cases (by id) that disagree with kurel without a documented difference for that verdict."""
    return sorted(
        case_id
        for case_id, name in verdicts.items()
        if name in DISAGREEMENTS
        and (case_id not in DOCUMENTED_DIFFERENCES or DOCUMENTED_DIFFERENCES[case_id].verdict != name)
    )


def no_longer_occurring(verdicts: dict[str, str]) -> list[str]:
    """The documented differences (by id) whose case was run and no longer gives the documented verdict."""
    return sorted(
        case_id
        for case_id, difference in DOCUMENTED_DIFFERENCES.items()
        if case_id in verdicts and verdicts[case_id] != difference.verdict
    )


def verdict(case: Case, ours: Outcome) -> str:
    """Compare our outcome with kurel's.

    ``refused-by-schema``: kurel built the case, ours refuses it with the schema's message
    because the Application carries an authored property the schema does not declare or types
    differently (kurel ignores those;
    docs/transform.md#validating-authored-properties refuses them by design).
    """
    if case.rc == 0:
        if ours.rc == 0:
            return "built-identical" if ours.stdout == case.stdout else "built-differs"
        return "refused-by-schema" if is_schema_refusal(ours.stderr) else "refused-but-kurel-built"
    if ours.rc == 0:
        return "accepted-but-kurel-refused"
    if ours.stderr == case.stderr:
        return "refused-same-text"
    return "refused-spec-text" if spec_stated_refusal(case.stderr, ours.stderr) else "refused-different-text"


