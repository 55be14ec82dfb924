"""The OAM transform: Application document → bundle tree. Pure: no cluster access, no kopf.

Entry points: :func:`parse_application`, :func:`parse_cluster_profile`,
:func:`new_builtin_transformer` (then ``validate_authored_properties`` and ``transform``),
:func:`dump_objects` / :func:`tree_document` for output.

Layout, by concern (each subpackage's docstring says what it holds): ``document`` (what an
author writes: loading, models, property schemas, package parameters, names), ``engine``
(dispatch, registration, lowering, ordering, generated sources, the bundle tree),
``catalog`` (the built-in types by family: workloads, manifests, flux, postgresql, routing,
secrets, storage, policy), ``policies`` (the ``dependency`` and ``placement`` policies),
``formatting`` (Go- and kurel-compatible output), ``remote`` (URL sources and the network they
may reach), ``errors`` (the exception types) and ``pipeline`` (the one assembly with its
adapters). The Go-duration parser and the DNS-1123 check are shared with the operator and live
outside, in ``oam_operator.common.durations`` and ``oam_operator.common.dns1123``.
"""

from oam_operator.oam.document.document import (
    Application,
    ApplicationPolicy,
    CapabilityBinding,
    ClusterProfile,
    Component,
    Metadata,
    Trait,
    application_from_object,
    cluster_profile_from_object,
    parse_application,
    parse_cluster_profile,
)
from oam_operator.oam.document.schema import PropertySchema
from oam_operator.oam.engine.handlers import ContractMetadata, HandlerContractSet, HandlerSchemaSet
from oam_operator.oam.engine.transformer import TransformContext, Transformer, TransformResult, new_builtin_transformer
from oam_operator.oam.engine.tree import Bundle, Cluster, Node, TreeApplication, tree_document
from oam_operator.oam.errors import (
    CapabilityError,
    GenerationError,
    OamError,
    OrderingError,
    ParseError,
    PolicyError,
    PropertyError,
    RegistrationError,
    TransformError,
    ValidationError,
)
from oam_operator.oam.formatting.serialize import dump_objects
from oam_operator.oam.policies.result import TIER_ORDER, PolicyResult

__all__ = [
    "TIER_ORDER",
    "Application",
    "ApplicationPolicy",
    "Bundle",
    "CapabilityBinding",
    "CapabilityError",
    "Cluster",
    "ClusterProfile",
    "Component",
    "ContractMetadata",
    "GenerationError",
    "HandlerContractSet",
    "HandlerSchemaSet",
    "Metadata",
    "Node",
    "OamError",
    "OrderingError",
    "ParseError",
    "PolicyError",
    "PolicyResult",
    "PropertyError",
    "PropertySchema",
    "RegistrationError",
    "Trait",
    "TransformContext",
    "TransformError",
    "TransformResult",
    "Transformer",
    "TreeApplication",
    "ValidationError",
    "application_from_object",
    "cluster_profile_from_object",
    "dump_objects",
    "new_builtin_transformer",
    "parse_application",
    "parse_cluster_profile",
    "tree_document",
]
