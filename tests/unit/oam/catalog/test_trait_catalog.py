"""The trait catalog as a whole: registration, schemas, contracts, delivery-only types, trait order."""

from __future__ import annotations

from typing import Any

import pytest
from oamkit.traits import document, error, find, kinds, objects, trait, webservice, worker

from oam_operator.oam import new_builtin_transformer
from oam_operator.oam.document.schema import walk_schema
from oam_operator.oam.engine.transformer import DELIVERY_HINT

MINE = [
    "cilium-networkpolicy",
    "configmap",
    "httproute",
    "ingress",
    "networkpolicy",
    "prune-protection",
    "pvc",
    "rbac",
    "scaler",
    "security-context",
]


def test_traits_are_registered_with_contracts() -> None:
    t = new_builtin_transformer()
    assert set(MINE) <= set(t.trait_types())
    contracts = t.handler_contracts().traits
    for name in MINE:
        contract = contracts[name]
        assert (contract.family, contract.version, contract.required_capability_keys) == (name, "v1alpha1", [])


@pytest.mark.parametrize("name", MINE)
def test_every_schema_node_is_described(name: str) -> None:
    schema = new_builtin_transformer().handler_schemas().traits[name]
    assert "scope" in schema
    missing = [path for path, node in walk_schema(schema) if not node.description]
    assert missing == []


def test_documented_defaults() -> None:
    schemas = new_builtin_transformer().handler_schemas().traits
    rule: Any = schemas["ingress"]["rules"].items
    paths = rule.properties["paths"].items.properties
    assert (paths["path"].default, paths["pathType"].default) == ("/", "Prefix")
    assert schemas["httproute"]["gatewayNamespace"].default == "gateway-system"
    assert (schemas["scaler"]["cpuUtilization"].default, schemas["scaler"]["enablePDB"].default) == (80, False)
    assert schemas["pvc"]["accessModes"].default == ["ReadWriteOnce"]
    assert schemas["rbac"]["clusterWide"].default is False
    assert schemas["prune-protection"] == {"scope": schemas["prune-protection"]["scope"]}
    reserved = {
        name: sorted(k for k, v in schema.items() if v.platform_reserved)
        for name, schema in schemas.items()
        if name in MINE
    }
    assert reserved["ingress"] == ["allowedHostnameWildcard", "networkPolicy"]
    assert reserved["httproute"] == ["networkPolicy"]
    assert all(not keys for name, keys in reserved.items() if name not in ("ingress", "httproute"))


@pytest.mark.parametrize("name", ["fluxcd-patches", "fluxcd-postbuild"])
def test_delivery_traits_are_refused_with_the_hint(name: str) -> None:
    text = document(webservice("web", trait(name, patches=[])))
    expected = f'no handler for trait type "{name}" (on component "web"): {DELIVERY_HINT}'
    assert error(text) == expected
    assert error(text, validate=True) == expected
    assert DELIVERY_HINT == (
        "it configures delivery, which the transform leaves to the consumer that delivers the application; "
        "a consumer that delivers through Flux registers its own handler"
    )


def test_routing_sees_the_service_port_through_a_decorated_component() -> None:
    comp = webservice(
        "web",
        trait("configmap", name="cfg", mountPath="/cfg"),
        trait("security-context", psaLevel="restricted"),
        trait("ingress", rules=[{"host": "h", "paths": [{}]}]),
        port=8080,
    )
    ingress = find(objects(document(comp)), "Ingress")
    assert ingress["spec"]["rules"][0]["http"]["paths"][0]["backend"] == {
        "service": {"name": "web", "port": {"number": 8080}}
    }


def test_each_component_is_followed_by_its_trait_objects() -> None:
    text = document(
        webservice("web", trait("configmap", name="web-cfg"), trait("scaler", minReplicas=1, maxReplicas=2)),
        worker(
            "jobs",
            trait("pvc", name="scratch", size="1Gi"),
            trait("rbac", rules=[{"resources": ["pods"], "verbs": ["get"]}]),
        ),
    )
    assert kinds(text) == [
        ("Deployment", "web"),
        ("Service", "web"),
        ("ServiceAccount", "web"),
        ("ConfigMap", "web-cfg"),
        ("HorizontalPodAutoscaler", "web-hpa"),
        ("Deployment", "jobs"),
        ("ServiceAccount", "jobs"),
        ("PersistentVolumeClaim", "scratch"),
        ("Role", "jobs"),
        ("RoleBinding", "jobs"),
    ]
