"""The exception types of the transform (docs/transform.md#error-types).

Errors are data: each carries one exact, deterministic message, which is ``str(exc)`` and
``exc.message``. Wrapping joins messages with ``": "`` so a chain reads left to right from the
outermost context to the root cause.
"""

from __future__ import annotations


class OamError(Exception):
    """Base of every error the transform raises on purpose."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class ParseError(OamError):
    """YAML or envelope decoding failed (docs/transform.md#loading-yaml)."""


class ValidationError(OamError):
    """Document validation, enum errors, ClusterProfile validation, handler property checks."""


class PropertyError(OamError):
    """Authored or emitted property validation against a PropertySchema (docs/transform.md#properties-and-schemas)."""


class PolicyError(OamError):
    """A policy handler's refusal; the message never names the policy (the transform does,
    docs/transform.md#policy-dispatch)."""


class TransformError(OamError):
    """Everything the transform refuses; ``cause`` is the wrapped error, if any."""

    def __init__(self, context: str, cause: OamError | None = None) -> None:
        message = f"{context}: {cause.message}" if cause is not None else context
        super().__init__(message)
        self.context = context
        self.cause = cause


class OrderingError(TransformError):
    """Refusals of the ordering algorithm (docs/transform.md#ordering-components-into-groups)."""


class CapabilityError(OamError):
    """ClusterProfile evaluation (docs/transform.md#evaluating-a-profile) and missing capabilities
    (docs/transform.md#resolving-a-traits-properties)."""


class PlatformReservedError(OamError):
    """An authored value for a platform-reserved property (docs/transform.md#platform-reserved-properties)."""


class GenerationError(OamError):
    """A failure while generating objects from built configs; never wrapped with the component."""


class ParameterError(OamError):
    """kurel package parameter resolution (docs/transform.md#package-parameters)."""


class RegistrationError(OamError):
    """A programmer error at handler registration (docs/transform.md#the-transformer); never caused by a document."""


class EffectiveValueError(ValidationError):
    """A trait's check of effective values, reported with the component context only.

    Some traits (e.g. ``scaler``, ``pvc``) validate the values in force after the capability
    rendering is merged; kurel reports those as ``component "<c>": <message>`` rather than with
    the trait context, and the transform honours that when a trait handler raises this type.
    """


CAPABILITY_NOT_FOUND = "oam: capability key not found in ClusterProfile"
PROPERTY_PLATFORM_RESERVED = "oam: property is platform-reserved"
LOWERING_MAX_DEPTH = "oam: lowering exceeded max recursion depth"
