"""Component and trait types defined by a platform team in ComponentDefinition and
TraitDefinition resources: typed parameters, object templates with CEL, test cases
(docs/definitions.md)."""
