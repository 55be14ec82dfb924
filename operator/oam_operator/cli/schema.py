"""Body of ``oam-operator schema``: the property schemas and contracts of the built-in types,
as a table (``schematable.py``) or as JSON Schema."""

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


_SINGULAR = {"components": "component", "traits": "trait", "policies": "policy"}


def run_schema(first: str | None, second: str | None, output_format: str, depth: int = 2,
               definitions_dir: str | None = None) -> None:
    """``oam-operator schema [FAMILY] [TYPE]`` or ``schema TYPE``: a table of one type's
    properties (``-o table``, the default; ``depth`` levels, 0 every one), a list of the types, or
    the JSON Schemas and contracts (``-o json|yaml``). With ``definitions_dir``, the definitions
    there are published too, each as ``<type>@<version>`` and its highest version as ``<type>``."""
    import dataclasses
    import json
    import shutil
    from typing import Any

    from oam_operator.cli.schematable import render_table, rows_of
    from oam_operator.oam import new_builtin_transformer
    from oam_operator.oam.document.schema import object_json_schema
    from oam_operator.oam.formatting.choices import unknown_value
    from oam_operator.oam.formatting.serialize import dump_document
    from oam_operator.operatorpolicies import register_operator_policies

    # The operator's own policy types are part of what it validates, so their schemas are published too.
    transformer = register_operator_policies(new_builtin_transformer())
    schemas = transformer.handler_schemas()
    contracts = transformer.handler_contracts()
    if definitions_dir is not None:
        from oam_operator.cli.definitions import load_definitions
        from oam_operator.oam.definitions.handlers import definition_contract
        from oam_operator.oam.definitions.model import COMPONENT_KIND

        catalog = load_definitions(definitions_dir, transformer)
        for definition in catalog.definitions():
            family = "components" if definition.kind == COMPONENT_KIND else "traits"
            for name in (definition.reference, definition.type):  # the highest version comes last
                getattr(schemas, family)[name] = dict(definition.parameters)
                getattr(contracts, family)[name] = definition_contract(definition)

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

    positions = ("components", "traits", "policies")
    position: str | None = None
    type_name = second
    if first is not None:
        position = _FAMILIES.get(first)
        if position is None:  # ``schema webservice``: a type of whichever family has it
            owners = [p for p in positions if first in getattr(schemas, p)]
            if second is not None or not owners:
                names = sorted({*_SINGULAR.values(), *(n for p in positions for n in getattr(schemas, p))})
                fail(unknown_value("family or type", first, names) if second is None
                     else unknown_value("family", first, list(_SINGULAR.values())))
            if len(owners) > 1:
                fail(f"{first!r} is a type of {' and of '.join(_SINGULAR[p] for p in owners)}: name the family "
                     f"(oam-operator schema {_SINGULAR[owners[0]]} {first})")
            position, type_name = owners[0], first
    if position is not None and type_name is not None:
        known = sorted(getattr(schemas, position))
        if type_name not in known:
            fail(unknown_value(f"{_SINGULAR[position]} type", type_name, known))
    if output_format == "table":
        if position is not None and type_name is not None:
            contract = getattr(contracts, position)[type_name]
            note = f", deprecated: {contract.deprecation_message}" if contract.deprecated else ""
            title = f"{_SINGULAR[position]} {type_name} ({contract.version}{note}): properties"
            width = shutil.get_terminal_size((100, 24)).columns
            click.echo(render_table(title, rows_of(getattr(schemas, position)[type_name]), width, depth or None),
                       nl=False)
            return
        listed = [position] if position is not None else list(positions)
        rows = [(name, _SINGULAR[p], str(len(getattr(schemas, p)[name])))
                for p in listed for name in sorted(getattr(schemas, p))]
        wide = [max(len(r[i]) for r in [("TYPE", "FAMILY", "PROPERTIES"), *rows]) for i in range(2)]
        for row in [("TYPE", "FAMILY", "PROPERTIES"), *rows]:
            click.echo(f"{row[0]:<{wide[0]}}  {row[1]:<{wide[1]}}  {row[2]}")
        click.echo("\noam-operator schema TYPE prints a type's properties; -o json their JSON Schemas.")
        return
    document: dict[str, Any]
    if position is None:
        document = {p: family_doc(p) for p in positions}
    elif type_name is None:
        document = family_doc(position)
    else:
        document = {"type": type_name, **describe(position, type_name)}
    if output_format == "yaml":
        click.echo(dump_document(document), nl=False)
    else:
        click.echo(json.dumps(document, indent=2, sort_keys=True))
