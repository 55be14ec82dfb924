"""The ``external-secret`` trait (docs/transform.md#certificates-secrets-and-configuration):
store resolution, data, target, envFrom/mount wiring."""

from __future__ import annotations

from typing import Any

import pytest
from oamkit.profiles import (
    NS,
    capabilities,
    component,
    document,
    error,
    evaluation_error,
    find,
    kinds,
    objects,
    pod_spec,
    run,
    trait,
    webservice,
)

from oam_operator.oam import GenerationError, new_builtin_transformer
from oam_operator.oam.document.schema import walk_schema

STORE = {"external-secret": {"secretStoreRef": {"name": "vault"}}}
DATA = [{"secretKey": "DB_PASSWORD", "remoteRef": {"key": "prod/api/db", "property": "password"}}]
LABEL_ERROR = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end "
    "with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)
ENV_ERROR = (
    "a valid environment variable name must consist of alphabetic characters, digits, '_', '-', or '.', and must "
    "not start with a digit (e.g. 'my.env-name',  or 'MY_ENV.NAME',  or 'MyEnvName1', regex used for validation is "
    "'[-._a-zA-Z][-._a-zA-Z0-9]*')"
)
NO_WORKLOAD = (
    "external-secret envFrom/mountPath requires a Deployment, StatefulSet, DaemonSet, or CronJob component; "
    "no supported workload resource was found"
)


def external_secret(bindings: dict[str, Any] | None = None, **props: Any) -> dict[str, Any]:
    text = document(webservice("api", trait("external-secret", **props)))
    return find(objects(text, STORE if bindings is None else bindings), "ExternalSecret")


def handler_error(bindings: dict[str, Any] | None = None, **props: Any) -> str:
    text = document(webservice("api", trait("external-secret", **props)))
    return error(text, STORE if bindings is None else bindings, validate=False)


def test_object_and_defaults() -> None:
    text = document(webservice("api", trait("external-secret", secretName="api-credentials", data=DATA)))
    objs = objects(text, STORE)
    assert kinds(objs)[-1] == ("ExternalSecret", "api-credentials")
    assert objs[-1] == {
        "apiVersion": "external-secrets.io/v1",
        "kind": "ExternalSecret",
        "metadata": {"name": "api-credentials", "namespace": NS, "labels": {"app": "api"}},
        "spec": {
            "refreshInterval": "1h0m0s",
            "secretStoreRef": {"name": "vault", "kind": "ClusterSecretStore"},
            "target": {"name": "api-credentials"},
            "data": DATA,
        },
    }
    # no envFrom/mountPath: the workload is untouched
    assert "envFrom" not in pod_spec(objs[0])["containers"][0]
    assert "volumes" not in pod_spec(objs[0])


def test_sub_application_name() -> None:
    text = document(webservice("api", trait("external-secret", secretName="creds", data=DATA)))
    assert [a.name for a in run(text, STORE).cluster.applications()] == ["api", "api-external-secret-creds"]


def test_data_entry_defaults_key_and_property() -> None:
    spec = external_secret(secretName="creds", data=[{"secretKey": "TOKEN"}, {"secretKey": "X", "remoteRef": {}}])[
        "spec"
    ]
    assert spec["data"] == [
        {"secretKey": "TOKEN", "remoteRef": {"key": f"{NS}/creds", "property": "TOKEN"}},
        {"secretKey": "X", "remoteRef": {"key": f"{NS}/creds", "property": "X"}},
    ]
    remote = {"key": "k", "property": "p", "version": "v2", "decodingStrategy": "Base64"}
    assert external_secret(secretName="creds", data=[{"secretKey": "A", "remoteRef": remote}])["spec"]["data"] == [
        {"secretKey": "A", "remoteRef": remote}
    ]


def test_remote_ref_shorthand_is_one_data_entry() -> None:
    spec = external_secret(secretName="tls-cert", remoteRef={"key": "certs/web", "version": "3"})["spec"]
    assert spec["data"] == [
        {"secretKey": "tls-cert", "remoteRef": {"key": "certs/web", "version": "3"}}
    ]


def test_data_from_passes_through() -> None:
    data_from = [
        {"extract": {"key": "prod/api", "conversionStrategy": "Default"}},
        {"find": {"name": {"regexp": "^api-"}, "tags": {"team": "a"}}, "rewrite": [{"regexp": {"source": "x"}}]},
    ]
    spec = external_secret(secretName="creds", dataFrom=data_from)["spec"]
    assert spec["dataFrom"] == data_from
    assert "data" not in spec


def test_no_data_at_all_is_accepted() -> None:
    assert "data" not in external_secret(secretName="creds")["spec"]


def test_target_name_policies_and_template() -> None:
    target = {"creationPolicy": "Merge", "deletionPolicy": "Retain", "template": {"type": "kubernetes.io/tls"}}
    spec = external_secret(secretName="creds", targetSecretName="app-secret", target=target)["spec"]
    assert spec["target"] == {
        "name": "app-secret",
        "creationPolicy": "Merge",
        "deletionPolicy": "Retain",
        "template": {"type": "kubernetes.io/tls"},
    }
    template = {"data": {"url": "postgres://{{ .user }}@db"}}
    assert external_secret(secretName="c", target={"template": template})["spec"]["target"] == {
        "name": "c",
        "template": template,
    }
    assert external_secret(secretName="c", target={"creationPolicy": "None"})["spec"]["target"] == {
        "name": "c",
        "creationPolicy": "None",
    }


def test_refresh_interval() -> None:
    assert external_secret(secretName="c", refreshInterval="15m")["spec"]["refreshInterval"] == "15m0s"
    rendering = {"external-secret": {"secretStoreRef": {"name": "vault"}, "refreshInterval": "30s"}}
    assert external_secret(rendering, secretName="c")["spec"]["refreshInterval"] == "30s"
    assert external_secret(rendering, secretName="c", refreshInterval="2h")["spec"]["refreshInterval"] == "2h0m0s"
    text = document(webservice("api", trait("external-secret", secretName="c", refreshInterval="hourly")))
    with pytest.raises(GenerationError) as info:
        run(text, STORE)
    assert str(info.value) == 'invalid refreshInterval "hourly": time: invalid duration "hourly"'


def test_store_from_rendering_inline_and_provider() -> None:
    assert external_secret(secretName="c")["spec"]["secretStoreRef"] == {"name": "vault", "kind": "ClusterSecretStore"}
    inline = {"name": "team-store", "kind": "SecretStore"}
    assert external_secret(secretName="c", secretStoreRef=inline)["spec"]["secretStoreRef"] == inline
    assert external_secret(secretName="c", provider="aws")["spec"]["secretStoreRef"] == {
        "name": "aws",
        "kind": "ClusterSecretStore",
    }
    # not capability-required: an inline store works without any binding
    assert external_secret({}, secretName="c", provider="aws")["spec"]["secretStoreRef"]["name"] == "aws"
    kind_from_rendering = {"external-secret": {"secretStoreRef": {"name": "vault", "kind": "SecretStore"}}}
    assert external_secret(kind_from_rendering, secretName="c")["spec"]["secretStoreRef"]["kind"] == "SecretStore"


@pytest.mark.parametrize(
    ("component_type", "props"),
    [
        ("webservice", {"port": 8080}),
        ("worker", {}),
        ("statefulset", {"port": 5432}),
        ("daemonset", {}),
        ("cronjob", {"schedule": "0 * * * *"}),
    ],
)
def test_env_from_and_mount_on_every_workload_type(component_type: str, props: dict[str, Any]) -> None:
    es = trait("external-secret", secretName="creds", data=[{"secretKey": "TOKEN"}], envFrom=True, mountPath="/s")
    comp = component("w", component_type, es, image="busybox:1.36", **props)
    spec = pod_spec(objects(document(comp), STORE)[0])
    assert spec["volumes"] == [{"name": "creds", "secret": {"secretName": "creds"}}]
    assert spec["containers"][0]["envFrom"] == [{"secretRef": {"name": "creds"}}]
    assert spec["containers"][0]["volumeMounts"][-1] == {"name": "creds", "mountPath": "/s"}


def test_wiring_appends_after_authored_entries_and_uses_the_target_name() -> None:
    es = trait(
        "external-secret", secretName="creds", targetSecretName="app-env", data=[{"secretKey": "A"}], envFrom=True
    )
    comp = webservice(
        "api",
        es,
        envFrom=[{"configMapRef": {"name": "cfg"}}],
        sidecars=[{"name": "side", "image": "busybox:1.36"}],
    )
    spec = pod_spec(objects(document(comp), STORE)[0])
    assert spec["containers"][0]["envFrom"] == [{"configMapRef": {"name": "cfg"}}, {"secretRef": {"name": "app-env"}}]
    assert "envFrom" not in spec["containers"][1]
    assert "volumes" not in spec


def test_mount_only() -> None:
    es = trait("external-secret", secretName="creds", mountPath="/etc/creds")
    comp = webservice("api", es, volumes=[{"name": "data", "mountPath": "/data", "type": "emptyDir"}])
    spec = pod_spec(objects(document(comp), STORE)[0])
    assert spec["volumes"] == [{"name": "data", "emptyDir": {}}, {"name": "creds", "secret": {"secretName": "creds"}}]
    assert spec["containers"][0]["volumeMounts"] == [
        {"name": "data", "mountPath": "/data"},
        {"name": "creds", "mountPath": "/etc/creds"},
    ]
    assert "envFrom" not in spec["containers"][0]


def test_wiring_a_passthrough_deployment() -> None:
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "legacy"},
        "spec": {"template": {"spec": {"containers": [{"name": "c", "image": "nginx:1.25"}]}}},
    }
    es = trait("external-secret", secretName="creds", data=[{"secretKey": "A"}], envFrom=True)
    obj = objects(document(component("legacy", "passthrough", es, object=deployment)), STORE)[0]
    assert pod_spec(obj)["containers"][0]["envFrom"] == [{"secretRef": {"name": "creds"}}]


@pytest.mark.parametrize(
    "comp",
    [
        component("chart", "helm", source={"url": "https://charts.example.com"}, chart="app"),
        component("cfg", "passthrough", object={"apiVersion": "v1", "kind": "ConfigMap"}),
    ],
    ids=["helm", "configmap"],
)
@pytest.mark.parametrize("wiring", [{"envFrom": True}, {"mountPath": "/s"}])
def test_wiring_without_a_workload_is_a_generation_error(comp: dict[str, Any], wiring: dict[str, Any]) -> None:
    comp = {**comp, "traits": [trait("external-secret", secretName="creds", data=[{"secretKey": "A"}], **wiring)]}
    with pytest.raises(GenerationError) as info:
        run(document(comp), STORE)
    assert str(info.value) == NO_WORKLOAD


def test_mount_collisions_are_generation_errors() -> None:
    es = trait("external-secret", secretName="data", mountPath="/secret")
    comp = webservice("api", es, volumes=[{"name": "data", "mountPath": "/data", "type": "emptyDir"}])
    with pytest.raises(GenerationError) as info:
        run(document(comp), STORE)
    assert str(info.value) == (
        'external-secret mountPath: volume "data" already exists on the workload; rename the secret via targetSecretName'
    )
    es = trait("external-secret", secretName="creds", mountPath="/data")
    comp = webservice("api", es, volumes=[{"name": "data", "mountPath": "/data", "type": "emptyDir"}])
    with pytest.raises(GenerationError) as info:
        run(document(comp), STORE)
    assert str(info.value) == (
        'external-secret mountPath: mountPath "/data" is already used by volume "data" on the workload; change the '
        "mountPath or the colliding volume's mount"
    )


@pytest.mark.parametrize(
    ("props", "message"),
    [
        ({}, "required property 'secretName' missing or not a string"),
        ({"secretName": ""}, "required property 'secretName' missing or not a string"),
        ({"secretName": ["x"]}, "required property 'secretName' missing or not a string"),
        (
            {"secretName": "c", "data": [{"secretKey": "A", "key": "x"}]},
            'data[0]: unsupported field "key" (supported: secretKey, remoteRef)',
        ),
        (
            {"secretName": "c", "data": [{"secretKey": "A"}, {"remoteRef": {"key": "x"}}]},
            "data[1]: required field 'secretKey' missing or empty",
        ),
        ({"secretName": "c", "data": [{"secretKey": ""}]}, "data[0]: required field 'secretKey' missing or empty"),
        ({"secretName": "c", "data": ["A"]}, "data[0]: expected object"),
        ({"secretName": "c", "data": {"secretKey": "A"}}, "'data' must be an array"),
        ({"secretName": "c", "data": [{"secretKey": "A", "remoteRef": "k"}]}, "data[0].remoteRef: expected object"),
        (
            {"secretName": "c", "data": [{"secretKey": "A", "remoteRef": {"key": 1}}]},
            "data[0].remoteRef.key must be a string",
        ),
        ({"secretName": "c", "dataFrom": [{"rewrite": []}]}, "dataFrom[0]: must have 'extract' or 'find'"),
        ({"secretName": "c", "dataFrom": ["x"]}, "dataFrom[0]: must have 'extract' or 'find'"),
        ({"secretName": "c", "dataFrom": "x"}, "'dataFrom' must be an array"),
        (
            {"secretName": "c", "remoteRef": {"key": "k"}, "data": [{"secretKey": "A"}]},
            "external-secret: 'remoteRef' cannot be combined with 'data' or 'dataFrom'",
        ),
        (
            {"secretName": "c", "remoteRef": {"key": "k"}, "dataFrom": [{"find": {}}]},
            "external-secret: 'remoteRef' cannot be combined with 'data' or 'dataFrom'",
        ),
        ({"secretName": "c", "remoteRef": "k"}, "'remoteRef' must be a map"),
        (
            {"secretName": "c", "remoteRef": {"key": "k"}, "envFrom": True},
            "external-secret: 'envFrom' cannot be combined with the 'remoteRef' shorthand; the shorthand derives its "
            "secretKey from secretName, which is a Secret name and not an environment variable name — author 'data' "
            "entries with explicit secretKey values instead",
        ),
        ({"secretName": "c", "envFrom": "yes"}, "external-secret: 'envFrom' must be a boolean, got string"),
        ({"secretName": "c", "mountPath": 5}, "external-secret: 'mountPath' must be a string, got int"),
        ({"secretName": "c", "envFrom": None}, "external-secret: 'envFrom' must be a boolean, got <nil>"),
        ({"secretName": "c", "mountPath": None}, "external-secret: 'mountPath' must be a string, got <nil>"),
        ({"secretName": "c", "targetSecretName": 5}, "'targetSecretName' must be a string"),
        ({"secretName": "c", "target": "x"}, "'target' must be a map"),
        (
            {"secretName": "c", "target": {"creationPolicy": "Always"}},
            'target.creationPolicy: unknown creationPolicy "Always" (valid: Owner, Orphan, Merge, None)',
        ),
        (
            {"secretName": "c", "target": {"deletionPolicy": "Keep"}},
            'target.deletionPolicy: unknown deletionPolicy "Keep" (valid: Delete, Merge, Retain)',
        ),
        ({"secretName": "c", "target": {"template": "x"}}, "target.template must be a map"),
    ],
)
def test_messages(props: dict[str, Any], message: str) -> None:
    assert handler_error(**props) == f'component "api" trait "external-secret": {message}'


@pytest.mark.parametrize(
    ("bindings", "props", "message"),
    [
        (
            {},
            {"secretName": "c"},
            "external-secret: secretStoreRef (or provider) is required; set inline or via ClusterProfile capability",
        ),
        (
            {"external-secret": {"refreshInterval": "1m"}},
            {"secretName": "c"},
            "external-secret: secretStoreRef (or provider) is required; set inline or via ClusterProfile capability",
        ),
        (
            {},
            {"secretName": "c", "secretStoreRef": {"kind": "SecretStore"}},
            "external-secret: secretStoreRef.name is required",
        ),
        ({}, {"secretName": "c", "secretStoreRef": "vault"}, "external-secret: secretStoreRef.name is required"),
        (
            {},
            {"secretName": "c", "secretStoreRef": {"name": "v", "kind": 1}},
            "external-secret: secretStoreRef.kind must be a string",
        ),
        ({}, {"secretName": "c", "provider": 7}, "external-secret: provider must be a string"),
    ],
)
def test_store_messages(bindings: dict[str, Any], props: dict[str, Any], message: str) -> None:
    assert handler_error(bindings, **props) == f'component "api" trait "external-secret": {message}'


def test_provider_wins_over_a_rendered_store() -> None:
    assert external_secret(secretName="c", provider="aws")["spec"]["secretStoreRef"]["name"] == "aws"


@pytest.mark.parametrize(
    ("key", "errors"),
    [
        ("1PASSWORD", ENV_ERROR),
        ("DB PASSWORD", ENV_ERROR),
        ("..hidden", "must not start with '..'"),
        (".", "must not be '.'"),
        ("..", "must not be '..'"),
        ("A=B", ENV_ERROR),
        ("TOKEN\n", ENV_ERROR),
    ],
)
def test_env_from_needs_environment_variable_names(key: str, errors: str) -> None:
    props = {"secretName": "c", "data": [{"secretKey": "OK"}, {"secretKey": key}], "envFrom": True}
    assert handler_error(**props) == (
        f'component "api" trait "external-secret": data[1].secretKey "{key}" is not a valid environment variable name '
        f"(required by envFrom): {errors}".replace("\n", "\\n")
    )


def test_env_names_are_free_without_env_from() -> None:
    data = external_secret(secretName="c", data=[{"secretKey": "tls.crt"}, {"secretKey": "1x"}])["spec"]["data"]
    assert [d["secretKey"] for d in data] == ["tls.crt", "1x"]
    assert external_secret(secretName="c", data=[{"secretKey": "my.env-name"}], envFrom=True)


@pytest.mark.parametrize(
    ("props", "name", "errors"),
    [
        ({"secretName": "api.creds"}, "api.creds", LABEL_ERROR),
        ({"secretName": "ok", "targetSecretName": "Bad"}, "Bad", LABEL_ERROR),
        ({"secretName": "ok", "targetSecretName": "x" * 64}, "x" * 64, "must be no more than 63 characters"),
    ],
)
def test_mount_needs_a_label_secret_name(props: dict[str, Any], name: str, errors: str) -> None:
    assert handler_error(**props, mountPath="/s") == (
        f'component "api" trait "external-secret": external-secret mountPath: the produced Secret name "{name}" cannot '
        f"be used as a volume name ({errors}); set targetSecretName to a DNS-1123 label"
    )
    # without a mount the name is fine
    assert external_secret(**props)["spec"]["target"]["name"] == name


@pytest.mark.parametrize(
    ("rendering", "message"),
    [
        (
            {"provider": "aws"},
            'external-secret rendering: unsupported field "provider" (allowed: refreshInterval, secretStoreRef)',
        ),
        ({"secretStoreRef": {"kind": "SecretStore"}}, "external-secret rendering: secretStoreRef.name is required"),
        ({"secretStoreRef": "vault"}, "external-secret rendering: secretStoreRef.name is required"),
        (
            {"secretStoreRef": {"name": "v", "kind": True}},
            "external-secret rendering: secretStoreRef.kind must be a string",
        ),
        (
            {"secretStoreRef": {"name": "v", "namespace": "x"}},
            'external-secret rendering: secretStoreRef: unsupported field "namespace" (allowed: kind, name)',
        ),
        ({"refreshInterval": 60}, "external-secret rendering: refreshInterval must be a string"),
        (
            {"refreshInterval": "1d"},
            'external-secret rendering: invalid refreshInterval "1d": time: unknown unit "d" in duration "1d"',
        ),
    ],
)
def test_rendering_messages(rendering: dict[str, Any], message: str) -> None:
    assert evaluation_error({"external-secret": rendering}) == f'capability "external-secret": {message}'


def test_rendering_defaults() -> None:
    caps = capabilities({"external-secret": {"secretStoreRef": {"name": "v"}, "refreshInterval": "5m"}})
    assert caps["external-secret"].rendering == {
        "secretStoreRef": {"name": "v", "kind": "ClusterSecretStore"},
        "refreshInterval": "5m",
    }


def test_authored_schema_checks() -> None:
    text = document(webservice("api", trait("external-secret", secretName="c", remoteRef={"property": "p"})))
    assert error(text, STORE) == 'component "api": trait "external-secret": properties.remoteRef: "key" is required'
    text = document(webservice("api", trait("external-secret", secretName="c", data=[{"remoteRef": {}}])))
    assert error(text, STORE) == 'component "api": trait "external-secret": properties.data[0]: "secretKey" is required'
    text = document(webservice("api", trait("external-secret", secretName="c", target={"name": "x"})))
    assert error(text, STORE) == (
        'component "api": trait "external-secret": properties.target: unsupported field "name" '
        "(allowed: creationPolicy, deletionPolicy, template)"
    )


def test_contract_schema_and_documented_defaults() -> None:
    t = new_builtin_transformer()
    contract = t.handler_contracts().traits["external-secret"]
    assert (contract.family, contract.version, contract.required_capability_keys) == (
        "external-secret",
        "v1alpha1",
        [],
    )
    schema = t.handler_schemas().traits["external-secret"]
    assert [p for p, node in walk_schema(schema) if not node.description] == []
    assert [k for k, v in schema.items() if v.required] == ["secretName"]
    assert (schema["refreshInterval"].default, schema["envFrom"].default) == ("1h", False)
    store: Any = schema["secretStoreRef"].properties
    assert store["kind"].default == "ClusterSecretStore"
    assert not any(node.platform_reserved for _, node in walk_schema(schema))
