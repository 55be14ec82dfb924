"""The operator's side of definitions (docs/definitions.md): the admission decision, the watch's
loading and Ready condition, the wake-up rule and the digest. The client is a fake recording
``request()`` (the real writes: tests/e2e/test_definitions_e2e.py)."""

from __future__ import annotations

import copy
from typing import Any

from oam_operator.controller.reconcile.definitionuse import names_type, spec_types, used_definitions
from oam_operator.controller.reconcile.digest import component_digest
from oam_operator.controller.service.admission import definition_refusal
from oam_operator.controller.service.definitions import DefinitionWatch
from oam_operator.oam.definitions.catalog import DefinitionCatalog
from oam_operator.oam.engine.transformer import new_builtin_transformer

KIND = "ComponentDefinition"


def definition(version: str = "v1", greeting: str = "hello", expected: str = "hello") -> dict[str, Any]:
    return {"apiVersion": "oam-operator.dev/v1alpha1", "kind": KIND, "metadata": {"name": f"greeter.{version}"},
            "spec": {"type": "greeter", "version": version,
                     "objects": [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "g"},
                                  "data": {"greeting": greeting}}],
                     "tests": [{"name": "plain", "expect": [{"apiVersion": "v1", "kind": "ConfigMap",
                                                             "metadata": {"name": "g"},
                                                             "data": {"greeting": expected}}]}]}}


class FakeClient:
    def __init__(self) -> None:
        self.patches: list[tuple[str, Any]] = []

    def request(self, verb: str, method: str, path: str, *, body: Any = None, **_: Any) -> dict[str, Any]:
        self.patches.append((path, body))
        return {}


def catalog() -> DefinitionCatalog:
    return DefinitionCatalog.beside(new_builtin_transformer())


def test_admission_refuses_a_failing_case_and_a_builtin_name_and_admits_an_unchanged_spec() -> None:
    failing = definition(expected="hi")
    message = 'spec.tests[0] "plain": expect[0].data.greeting: expected "hi", got "hello"'
    assert definition_refusal(catalog(), "CREATE", failing) == message
    assert definition_refusal(catalog(), "UPDATE", failing, old=copy.deepcopy(failing)) is None
    assert definition_refusal(catalog(), "DELETE", failing) is None
    clash = definition()
    clash["spec"]["type"], clash["metadata"]["name"] = "webservice", "webservice.v1"
    assert definition_refusal(catalog(), "CREATE", clash) == 'spec.type: "webservice" is a built-in component type'
    assert definition_refusal(catalog(), "CREATE", definition()) is None


def test_the_watch_loads_refuses_and_removes_and_writes_ready_once() -> None:
    client, loaded = FakeClient(), catalog()
    watch = DefinitionWatch(loaded, client)  # type: ignore[arg-type]
    assert watch.changed(KIND, "greeter.v1", definition()) == {"greeter"}
    assert loaded.find(KIND, "greeter") is not None
    path, body = client.patches[-1]
    assert path == "/apis/oam-operator.dev/v1alpha1/componentdefinitions/greeter.v1/status"
    ready = body["status"]["conditions"][0]
    assert (ready["status"], ready["reason"], ready["message"]) == ("True", "Loaded", "Loaded as greeter@v1")

    said = definition()
    said["status"] = {"conditions": [ready]}
    watch.changed(KIND, "greeter.v1", said)
    assert len(client.patches) == 1  # it says so already

    watch.changed(KIND, "greeter.v1", definition(expected="hi"))  # a refused change takes the old one out
    assert loaded.find(KIND, "greeter") is None
    refused = client.patches[-1][1]["status"]["conditions"][0]
    assert (refused["status"], refused["reason"]) == ("False", "Refused")

    watch.changed(KIND, "greeter.v1", definition())
    assert watch.changed(KIND, "greeter.v1", None) == {"greeter"}
    assert loaded.find(KIND, "greeter") is None


def test_the_types_an_application_names_decide_its_wake_ups() -> None:
    spec = {"components": [{"name": "a", "type": "greeter@v2", "traits": [{"type": "labels"}]},
                           {"name": "b", "type": "webservice"}]}
    types = spec_types(spec)
    assert types == {(KIND, "greeter@v2"), (KIND, "webservice"), ("TraitDefinition", "labels")}
    assert names_type(types, KIND, "greeter") and names_type(types, "TraitDefinition", "labels")
    assert not names_type(types, "TraitDefinition", "greeter")


def test_a_changed_definition_changes_the_digest_of_its_users_only() -> None:
    loaded, watch_client = catalog(), FakeClient()
    watch = DefinitionWatch(loaded, watch_client)  # type: ignore[arg-type]
    watch.changed(KIND, "greeter.v1", definition())
    user = {"components": [{"name": "a", "type": "greeter"}]}
    other = {"components": [{"name": "b", "type": "webservice", "properties": {"image": "nginx:1"}}]}

    def digest(spec: dict[str, Any]) -> str:
        return component_digest("oam-operator.dev", spec, "", None, used_definitions(loaded, spec))

    before, other_before = digest(user), digest(other)
    assert other_before == component_digest("oam-operator.dev", other, "", None)  # as before definitions
    watch.changed(KIND, "greeter.v1", definition(greeting="hallo", expected="hallo"))
    assert digest(user) != before
    assert digest(other) == other_before


class ListingClient(FakeClient):
    def __init__(self, items: dict[str, list[dict[str, Any]]]) -> None:
        super().__init__()
        self.items = items

    def request(self, verb: str, method: str, path: str, *, body: Any = None, **_: Any) -> dict[str, Any]:
        if method == "GET":
            return {"items": self.items.get(path.rsplit("/", 1)[-1], [])}
        return super().request(verb, method, path, body=body)


def test_start_up_lists_the_definitions_before_any_pass_and_writes_nothing() -> None:
    loaded = catalog()
    reader = ListingClient({"componentdefinitions": [definition(), definition("v2", expected="bad")]})
    writer = FakeClient()
    DefinitionWatch(loaded, writer, reader).prime()  # type: ignore[arg-type]
    assert [d.reference for d in loaded.definitions()] == ["greeter@v1"]  # v2 fails its case: not loaded
    assert writer.patches == []
