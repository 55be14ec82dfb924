"""The reconciler's exception hierarchy (docs/reconciler.md#errors).

Errors are data: every refusal has one exact message (``str(error)``), and the class tells
the driver how to retry: ``retryable`` errors are retried fast with backoff, the others
slowly, because an operator, an RBAC grant or another owner can still fix them.
"""

from __future__ import annotations

__all__ = [
    "ApiError",
    "InconsistentStateError",
    "InstancesExistError",
    "InventoryCorruptError",
    "ObjectValidationError",
    "OwnershipConflictError",
    "PermanentApiError",
    "ReconcilerError",
    "TransientApiError",
]


class ReconcilerError(Exception):
    """Base of every error the reconciler raises on purpose."""

    retryable: bool = False

    def __init__(
        self,
        message: str,
        *,
        object_key: str | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.object_key = object_key
        self.retry_after = retry_after

    def __str__(self) -> str:
        return self.message


class ObjectValidationError(ReconcilerError):
    """The desired objects are invalid: fixing the input is the only remedy."""


class OwnershipConflictError(ReconcilerError):
    """Another owner holds the object, and the adoption policy forbids taking it."""


class InventoryCorruptError(ReconcilerError):
    """The persisted inventory contradicts itself (duplicate items)."""


class ApiError(ReconcilerError):
    """An API request failed; ``status`` is the HTTP code (0 for connection errors)."""

    def __init__(
        self,
        message: str,
        *,
        status: int,
        reason: str,
        verb: str,
        object_key: str | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message, object_key=object_key, retry_after=retry_after)
        self.status = status
        self.reason = reason
        self.verb = verb

    def with_context(self, context: str, object_key: str | None = None) -> ApiError:
        """The same error, its message prefixed with ``<context>: ``; keeps the class."""
        return type(self)(
            f"{context}: {self.message}",
            status=self.status,
            reason=self.reason,
            verb=self.verb,
            object_key=object_key if object_key is not None else self.object_key,
            retry_after=self.retry_after,
        )


class TransientApiError(ApiError):
    """An API failure that goes away by itself (conflicts, throttling, outages)."""

    retryable = True


class PermanentApiError(ApiError):
    """An API refusal that needs a change of input or permissions: a 4xx, or one of the
    deterministic server errors (a typed-patch failure, etcd's size limit, a webhook denial)."""


class InstancesExistError(ReconcilerError):
    """A CRD or APIService cannot finish deleting while instances of it exist."""

    retryable = True


class InconsistentStateError(ReconcilerError):
    """The cluster contradicts what the inventory says was done; re-read next call."""

    retryable = True
