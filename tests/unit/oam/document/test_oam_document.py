"""Document loading, decoding and validation (docs/transform.md#loading-yaml, docs/transform.md#document-validation,
docs/transform.md#the-clusterprofile-document)."""

from __future__ import annotations

import pytest
from oamkit import LAUNCHER, OURS, cm, document, parse

from oam_operator.oam import ParseError, ValidationError, parse_cluster_profile
from oam_operator.oam.document.document import application_from_object

ENUM_COMPONENTS = (
    "crd, cronjob, daemonset, helm, helmchart, manifests, oci, passthrough, postgresql, statefulset, webservice, worker"
)
ENUM_TRAITS = (
    "certificate, cilium-networkpolicy, configmap, expose, external-secret, fluxcd-patches, fluxcd-postbuild, "
    "httproute, ingress, networkpolicy, prune-protection, pvc, rbac, scaler, security-context, volsync"
)


def error_of(text: str) -> str:
    with pytest.raises((ParseError, ValidationError)) as info:
        parse(text)
    return str(info.value)


MINIMAL = """\
apiVersion: oam-operator.dev/v1alpha1
kind: Application
metadata:
  name: app
spec:
  components:
    - name: a
      type: passthrough
      properties:
        object: {apiVersion: v1, kind: ConfigMap, data: {x: yes, y: on, z: 0x1F, w: 010, n: ~}}
"""


def test_core_schema_scalars_stay_strings_like_yaml_v3() -> None:
    app = parse(MINIMAL)
    data = app.components[0].properties["object"]["data"]
    assert data == {"x": "yes", "y": "on", "z": 31, "w": 10, "n": None}


def test_both_api_versions_parse_and_imply_their_domain() -> None:
    assert parse(document([cm("a")], api_version=LAUNCHER)).default_domain == "launcher.gokure.dev"
    assert parse(document([cm("a")], api_version=OURS)).default_domain == "oam-operator.dev"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "parse error in Application: no documents found"),
        ("---\n---\n", "parse error in Application: no documents found"),
        (MINIMAL + "---\n" + MINIMAL, "parse error in Application: expected one document, found 2"),
        ("- a\n- b\n", "parse error in Application at line 1: expected a mapping, got []interface {}"),
        ("just text\n", "parse error in Application: expected a mapping, got string"),
        (
            "apiVersion: v1\napiVersion: v2\n",
            'parse error in Application at line 2: mapping key "apiVersion" already defined',
        ),
        (
            MINIMAL.replace("      properties:", "      propertes:"),
            'parse error in Application at line 9: unknown field "propertes" in spec.components[0]',
        ),
        (
            MINIMAL.replace("spec:\n", "spec:\n  extra: 1\n"),
            'parse error in Application at line 6: unknown field "extra" in spec',
        ),
        (
            MINIMAL.replace("kind: Application\n", "kind: Application\nbogus: 1\n"),
            'parse error in Application at line 3: unknown field "bogus" in document',
        ),
        (
            MINIMAL.replace("  components:", "  components: {a: 1}\n  x:").split("  x:")[0],
            "parse error in Application at line 6: expected a list, got map[string]interface {}",
        ),
        (
            MINIMAL.replace("    - name: a", "    - name: [a]"),
            "parse error in Application at line 7: expected a string, got []interface {}",
        ),
        (
            MINIMAL.replace("      properties:\n", "      properties: 5\n      x:\n"),
            'parse error in Application at line 10: unknown field "x" in spec.components[0]',
        ),
        (
            MINIMAL.replace("      type: passthrough\n", "      type: passthrough\n      traits:\n        - typo: x\n"),
            'parse error in Application at line 10: unknown field "typo" in spec.components[0].traits[0]',
        ),
        (
            MINIMAL + "  policies:\n    - name: p\n      type: dependency\n      rules: []\n",
            'parse error in Application at line 14: unknown field "rules" in spec.policies[0]',
        ),
        ("a: [1, 2\n", "parse error in Application at line 2: did not find expected ',' or ']'"),
    ],
)
def test_parse_errors(text: str, message: str) -> None:
    assert error_of(text) == message


def test_properties_must_be_a_mapping() -> None:
    text = MINIMAL.replace("      properties:\n        object:", "      properties: 5\n      annotations:\n        o:")
    assert error_of(text) == "parse error in Application at line 9: expected a mapping, got int"


def test_launcher_metadata_is_strict_ours_accepts_standard_fields_and_status() -> None:
    launcher = MINIMAL.replace(OURS, LAUNCHER).replace("  name: app\n", "  name: app\n  uid: x\n")
    assert error_of(launcher) == 'parse error in Application at line 5: unknown field "uid" in metadata'
    ours = MINIMAL.replace("  name: app\n", "  name: app\n  uid: x\n  generation: 3\n") + "status: {phase: x}\n"
    assert parse(ours).metadata.name == "app"
    assert error_of(ours.replace("  uid: x", "  colour: x")) == (
        'parse error in Application at line 5: unknown field "colour" in metadata'
    )
    service_account = MINIMAL.replace("spec:\n", "spec:\n  serviceAccountName: deployer\n")
    assert parse(service_account).components[0].name == "a"
    assert error_of(service_account.replace(OURS, LAUNCHER)) == (
        'parse error in Application at line 6: unknown field "serviceAccountName" in spec'
    )
    assert error_of(launcher.replace("  uid: x\n", "") + "status: {}\n") == (
        'parse error in Application at line 11: unknown field "status" in document'
    )


def test_scalar_in_string_field_is_read_as_written() -> None:
    app = parse(MINIMAL.replace("    - name: a", "    - name: 0123"))
    assert app.components[0].name == "0123"


def _components(*comps: str) -> str:
    return (
        "apiVersion: oam-operator.dev/v1alpha1\nkind: Application\nmetadata: {name: app}\nspec:\n  components:\n"
        + "".join(comps)
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            document([cm("a")]).replace(OURS, "apps/v1"),
            'unsupported apiVersion "apps/v1", expected "oam-operator.dev/v1alpha1" or "launcher.gokure.dev/v1alpha1"',
        ),
        (document([cm("a")]).replace("kind: Application", "kind: App"), 'expected kind Application, got "App"'),
        (document([cm("a")], name=""), "metadata.name is required"),
        (document([cm("a")], name="Bad_Name"), 'metadata.name "Bad_Name" is not a valid DNS-1123 subdomain'),
        (document([cm("a")], namespace="NS"), 'metadata.namespace "NS" is not a valid DNS-1123 subdomain'),
        (document([]), "spec.components must contain at least one component"),
        (_components("    - type: passthrough\n"), "spec.components[0].name is required"),
        (document([cm("a"), cm("Web")]), 'component name "Web" is not a valid DNS-1123 subdomain'),
        (document([cm("a"), cm("b"), cm("a")]), 'duplicate component name "a"'),
        (_components("    - name: a\n"), 'component "a" missing type'),
        (
            _components("    - name: a\n      type: deployment\n"),
            f'component "a": unknown type "deployment" (valid: {ENUM_COMPONENTS})',
        ),
        (
            _components("    - name: a\n      type: passthrough\n      traits: [{properties: {}}]\n"),
            'component "a" trait[0] missing type',
        ),
        (
            _components("    - name: a\n      type: passthrough\n      traits: [{type: ingres}]\n"),
            f'component "a": unknown trait type "ingres" (valid: {ENUM_TRAITS}); did you mean "ingress"?',
        ),
        (
            _components("    - name: db\n      type: statefulset\n      traits: [{type: scaler}]\n"),
            'trait "scaler" is not supported on component type "statefulset" (component "db"); '
            "supported types: webservice, worker",
        ),
        (document([cm("a")], [{"type": "dependency"}]), "spec.policies[0].name is required"),
        (document([cm("a")], [{"name": "P", "type": "x"}]), 'policy name "P" is not a valid DNS-1123 subdomain'),
        (
            document([cm("a")], [{"name": "p", "type": "x"}, {"name": "p", "type": "y"}]),
            'duplicate policy name "p"',
        ),
        (document([cm("a")], [{"name": "p"}]), 'policy "p" missing type'),
    ],
)
def test_validation_messages(text: str, message: str) -> None:
    assert error_of(text) == message


def test_validation_order_components_before_policies_and_first_failure_wins() -> None:
    text = document([cm("a"), cm("a")], [{"name": "P", "type": "x"}])
    assert error_of(text) == 'duplicate component name "a"'
    # name is checked before type in one component, the first component before the second
    text = _components("    - name: B\n    - name: c\n      type: nope\n")
    assert error_of(text) == 'component name "B" is not a valid DNS-1123 subdomain'


def test_unknown_policy_type_passes_validation() -> None:
    app = parse(document([cm("a")], [{"name": "p", "type": "whatever"}]))
    assert app.policies[0].type == "whatever"


def test_application_from_object_decodes_a_custom_resource() -> None:
    obj = {
        "apiVersion": OURS,
        "kind": "Application",
        "metadata": {"name": "shop", "namespace": "shop", "uid": "123", "generation": 4},
        "spec": {"serviceAccountName": "x", "components": [cm("web")]},
        "status": {"conditions": []},
    }
    app = application_from_object(obj)
    assert (app.metadata.name, app.metadata.namespace, app.components[0].type) == ("shop", "shop", "passthrough")
    with pytest.raises(ParseError, match=r'^parse error in Application: unknown field "x" in spec$'):
        application_from_object({**obj, "spec": {"components": [], "x": 1}})


PROFILE = """\
apiVersion: launcher.gokure.dev/v1alpha1
kind: ClusterProfile
metadata:
  name: prod
spec:
  gitopsEngine: fluxcd
  capabilities:
    certificate:
      rendering:
        issuerRef: {name: letsencrypt-prod}
"""


def test_cluster_profile_parses() -> None:
    profile = parse_cluster_profile(PROFILE)
    assert profile.name == "prod"
    assert profile.capabilities["certificate"].rendering == {"issuerRef": {"name": "letsencrypt-prod"}}
    assert parse_cluster_profile(PROFILE.replace("  gitopsEngine: fluxcd\n", "").split("  capabilities")[0]).name


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (PROFILE.replace("gitopsEngine", "gitops"), 'parse error in ClusterProfile at line 6: unknown field "gitops" in spec'),
        (PROFILE.replace("fluxcd", "argo"), 'unknown gitopsEngine "argo" (valid: fluxcd)'),
        (PROFILE.replace("kind: ClusterProfile", "kind: Profile"), 'expected kind ClusterProfile, got "Profile"'),
        (PROFILE.replace("  name: prod\n", "  name: prod\n  labels: {}\n"), 'parse error in ClusterProfile at line 5: unknown field "labels" in metadata'),
        (PROFILE.replace("  name: prod", "  name: ''"), "metadata.name is required"),
        (PROFILE.replace("      rendering:", "      render:"), 'parse error in ClusterProfile at line 9: unknown field "render" in spec.capabilities.certificate'),
    ],
)  # fmt: skip
def test_cluster_profile_errors(text: str, message: str) -> None:
    with pytest.raises((ParseError, ValidationError)) as info:
        parse_cluster_profile(text)
    assert str(info.value) == message
