"""The exception types of the transform (transform.md §3.6).

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
    """YAML or envelope decoding failed (§2.3)."""


class ValidationError(OamError):
    """Document validation, enum errors, ClusterProfile validation, handler property checks."""


class PropertyError(OamError):
    """Authored or emitted property validation against a PropertySchema (§4)."""


class PolicyError(OamError):
    """A policy handler's refusal; the message never names the policy (the transform does, §7.1)."""


class TransformError(OamError):
    """Everything the transform refuses; ``cause`` is the wrapped error, if any."""

    def __init__(self, context: str, cause: OamError | None = None) -> None:
        message = f"{context}: {cause.message}" if cause is not None else context
        super().__init__(message)
        self.context = context
        self.cause = cause


class OrderingError(TransformError):
    """Refusals of the ordering algorithm (§8)."""


class CapabilityError(OamError):
    """ClusterProfile evaluation (§11.2) and missing capabilities (§11.3)."""


class PlatformReservedError(OamError):
    """An authored value for a platform-reserved property (§4.4)."""


class GenerationError(OamError):
    """A failure while generating objects from built configs; never wrapped with the component."""


class ParameterError(OamError):
    """kurel package parameter resolution (§12)."""


class RegistrationError(OamError):
    """A programmer error at handler registration (§5.1); never caused by a document."""


class EffectiveValueError(ValidationError):
    """A trait's check of effective values, reported with the component context only.

    Some traits (e.g. ``scaler``, ``pvc``) validate the values in force after the capability
    rendering is merged; kurel reports those as ``component "<c>": <message>`` rather than with
    the trait context, and the transform honours that when a trait handler raises this type.
    """


CAPABILITY_NOT_FOUND = "oam: capability key not found in ClusterProfile"
PROPERTY_PLATFORM_RESERVED = "oam: property is platform-reserved"
LOWERING_MAX_DEPTH = "oam: lowering exceeded max recursion depth"
