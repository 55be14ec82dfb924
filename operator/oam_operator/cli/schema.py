"""Body of ``oam-operator schema``: the property schemas and contracts of the built-in types."""

from __future__ import annotations

import click

from oam_operator.cli.errors import fail

__all__ = ["run_schema"]


_FAMILIES = {
    "component": "components",
    "components": "components",
    "trait": "traits",
    "traits": "traits",
    "policy": "policies",
    "policies": "policies",
}


def run_schema(family: str | None, type_name: str | None, output_format: str) -> None:
    """``oam-operator schema``: JSON Schema and contract of every type, of a family, or of one type."""
    import dataclasses
    import json
    from typing import Any

    from oam_operator.oam import new_builtin_transformer
    from oam_operator.oam.document.schema import object_json_schema
    from oam_operator.oam.formatting.gofmt import go_quote
    from oam_operator.oam.formatting.serialize import dump_document
    from oam_operator.operatorpolicies import register_operator_policies

    # The operator's own policy types are part of what it validates, so their schemas are published too.
    transformer = register_operator_policies(new_builtin_transformer())
    schemas = transformer.handler_schemas()
    contracts = transformer.handler_contracts()

    def describe(position: str, name: str) -> dict[str, Any]:
        contract = dataclasses.asdict(getattr(contracts, position)[name])
        return {
            "contract": {
                "family": contract["family"],
                "version": contract["version"],
                "requiredCapabilityKeys": contract["required_capability_keys"],
                "deprecated": contract["deprecated"],
                "deprecationMessage": contract["deprecation_message"],
            },
            "schema": {
                "$schema": "https://json-schema.org/draft/2020-12/schema",
                "title": f"{position[:-1] if position != 'policies' else 'policy'} {name} properties",
                "type": "object",
                **object_json_schema(getattr(schemas, position)[name], False),
            },
        }

    def family_doc(position: str) -> dict[str, Any]:
        return {name: describe(position, name) for name in sorted(getattr(schemas, position))}

    document: dict[str, Any]
    if family is None:
        document = {position: family_doc(position) for position in ("components", "traits", "policies")}
    else:
        position = _FAMILIES.get(family)
        if position is None:
            fail(f"unknown family {go_quote(family)}; expected component, trait or policy")
        if type_name is None:
            document = family_doc(position)
        else:
            known = sorted(getattr(schemas, position))
            if type_name not in known:
                singular = {"components": "component", "traits": "trait", "policies": "policy"}[position]
                fail(f"unknown {singular} type {go_quote(type_name)}; known: {', '.join(known) or '(none)'}")
            document = {"type": type_name, **describe(position, type_name)}
    if output_format == "yaml":
        click.echo(dump_document(document), nl=False)
    else:
        click.echo(json.dumps(document, indent=2, sort_keys=True))

