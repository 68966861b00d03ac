"""Typed errors for the Arbiter API.

Every failed RPC reaches the application as an :class:`ArbiterError` (or one of its
subclasses, one per gRPC status code the API documents) carrying the gRPC code, the
request field at fault and the server's message. The server starts its messages with
the field name and a colon (``call_id: "x y" must be ...``); :attr:`ArbiterError.field`
is that name, or ``None`` when the message names none.
"""

from __future__ import annotations

import re

import grpc

_FIELD = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*(?:\[\d+\])?(?:\.[A-Za-z_][A-Za-z0-9_]*(?:\[\d+\])?)*): ")


class ArbiterError(Exception):
    """An Arbiter RPC failed.

    Attributes:
        code: the gRPC status code (``grpc.StatusCode``).
        field: the request field the server named (``"call_id"``, ``"call_ids[0]"``), or None.
        message: the server's message (or the transport's, for a lost connection).
        rpc: the RPC that failed (``"RegisterCall"``).
    """

    def __init__(self, code: grpc.StatusCode, message: str, rpc: str = "") -> None:
        m = _FIELD.match(message or "")
        self.code = code
        self.message = message or ""
        self.field = m.group(1) if m else None
        self.rpc = rpc
        super().__init__(f"{rpc or 'arbiter'}: {code.name}: {self.message}")


class InvalidArgumentError(ArbiterError):
    """INVALID_ARGUMENT: a field is missing or malformed (see ``field``). Nothing changed."""


class NotFoundError(ArbiterError):
    """NOT_FOUND: the session or job does not exist (or expired)."""


class FailedPreconditionError(ArbiterError):
    """FAILED_PRECONDITION: the request does not fit the job's or session's state."""


class AbortedError(ArbiterError):
    """ABORTED: too many concurrent writers on one session, and retries ran out."""


class UnavailableError(ArbiterError):
    """UNAVAILABLE: the arbiter or its store could not be reached (after retries, for
    idempotent RPCs). Nothing was decided: never treat it as a commit."""


class DeadlineExceededError(ArbiterError):
    """DEADLINE_EXCEEDED: no answer within the RPC's timeout."""


class ResourceExhaustedError(ArbiterError):
    """RESOURCE_EXHAUSTED: a session limit was reached (e.g. too many calls)."""


_BY_CODE = {
    grpc.StatusCode.INVALID_ARGUMENT: InvalidArgumentError,
    grpc.StatusCode.NOT_FOUND: NotFoundError,
    grpc.StatusCode.FAILED_PRECONDITION: FailedPreconditionError,
    grpc.StatusCode.ABORTED: AbortedError,
    grpc.StatusCode.UNAVAILABLE: UnavailableError,
    grpc.StatusCode.DEADLINE_EXCEEDED: DeadlineExceededError,
    grpc.StatusCode.RESOURCE_EXHAUSTED: ResourceExhaustedError,
}


def from_rpc_error(err: grpc.aio.AioRpcError, rpc: str = "") -> ArbiterError:
    """Converts a grpc.aio error into the matching typed :class:`ArbiterError`."""
    code = err.code()
    return _BY_CODE.get(code, ArbiterError)(code, err.details() or "", rpc)
