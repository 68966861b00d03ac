"""Typed errors for the Arbiter API.

Every failed RPC reaches the application as an :class:`ArbiterError` (or one of its
subclasses, one per gRPC status code the API documents) carrying the gRPC code and the
server's standard error details, decoded from the ``grpc-status-details-bin`` trailer
(a ``google.rpc.Status``; see the error section of ``proto/arbiter/v1/arbiter.proto``):

- ``ErrorInfo`` (domain ``arbiter.voicearbiter.dev``): :attr:`ArbiterError.reason`, a
  word from a fixed vocabulary (``INVALID_FIELD``, ``SESSION_NOT_FOUND``,
  ``JOB_NOT_FOUND``, ``SESSION_CLOSED``, ``JOB_STATE_CONFLICT``, ``CALL_ID_REUSED``,
  ``SESSION_LOST``, ``STORE_UNAVAILABLE``, ``SERVER_DRAINING``, ``RATE_LIMITED``, ...),
  and its metadata ``field``;
- ``BadRequest`` (INVALID_ARGUMENT): the field violations; :attr:`ArbiterError.field` is
  the first one's field (``"call_id"``, ``"call_ids[1]"``), else ErrorInfo's ``field``;
- ``RetryInfo`` (UNAVAILABLE, ABORTED, RESOURCE_EXHAUSTED where a retry is worth it):
  :attr:`ArbiterError.retry_delay`, in seconds (0 for ``SERVER_DRAINING``: ask again
  now, on another replica).

An error without details (the transport's, a lost connection; one grpc answered before
the arbiter saw the request) has ``reason``, ``field`` and ``retry_delay`` None.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence, Tuple

import grpc

from .rpc import error_details_pb2, status_pb2

#: The ErrorInfo domain of the arbiter's errors.
ERROR_DOMAIN = "arbiter.voicearbiter.dev"

#: The trailer that carries the ``google.rpc.Status`` of a failed RPC.
STATUS_DETAILS_KEY = "grpc-status-details-bin"


class ArbiterError(Exception):
    """An Arbiter RPC failed.

    Attributes:
        code: the gRPC status code (``grpc.StatusCode``).
        message: the server's message (or the transport's, for a lost connection).
        rpc: the RPC that failed (``"RegisterCall"``).
        reason: ErrorInfo's reason (``"SESSION_NOT_FOUND"``), or None without details.
        domain: ErrorInfo's domain (:data:`ERROR_DOMAIN` for the arbiter's own), or None.
        metadata: ErrorInfo's metadata (a new dict; ``{}`` without details).
        field: the request field at fault: the first BadRequest field violation's
            field, else ErrorInfo's metadata ``field``; None when no field is named.
        violations: every BadRequest field violation as ``(field, description)``.
        retry_delay: RetryInfo's delay in seconds (a float, 0 meaning "retry now"), or
            None when the server sent none (a retry is not known to help).
    """

    def __init__(
        self,
        code: grpc.StatusCode,
        message: str,
        rpc: str = "",
        *,
        reason: Optional[str] = None,
        domain: Optional[str] = None,
        metadata: Optional[Dict[str, str]] = None,
        violations: Sequence[Tuple[str, str]] = (),
        retry_delay: Optional[float] = None,
    ) -> None:
        self.code = code
        self.message = message or ""
        self.rpc = rpc
        self.reason = reason
        self.domain = domain
        self.metadata: Dict[str, str] = dict(metadata or {})
        self.violations: List[Tuple[str, str]] = list(violations)
        self.field: Optional[str] = self.violations[0][0] if self.violations else (self.metadata.get("field") or None)
        self.retry_delay = retry_delay
        tag = f" [{reason}]" if reason else ""
        super().__init__(f"{rpc or 'arbiter'}: {code.name}{tag}: {self.message}")


class InvalidArgumentError(ArbiterError):
    """INVALID_ARGUMENT: a field is missing or malformed (see ``field``). Nothing changed."""


class NotFoundError(ArbiterError):
    """NOT_FOUND: the session or job does not exist (or expired); ``reason``
    SESSION_NOT_FOUND or JOB_NOT_FOUND."""


class FailedPreconditionError(ArbiterError):
    """FAILED_PRECONDITION: the request does not fit the job's or session's state."""


class AbortedError(ArbiterError):
    """ABORTED: too many concurrent writers on one session, and retries ran out."""


class UnavailableError(ArbiterError):
    """UNAVAILABLE: the arbiter or its store could not be reached (after retries, for
    idempotent RPCs), or the replica is shutting down (``reason`` SERVER_DRAINING).
    Nothing was decided: never treat it as a commit."""


class DeadlineExceededError(ArbiterError):
    """DEADLINE_EXCEEDED: no answer within the RPC's timeout."""


class ResourceExhaustedError(ArbiterError):
    """RESOURCE_EXHAUSTED: a limit was reached (``reason`` CALL_LIMIT, SESSION_LIMIT,
    RATE_LIMITED; ``retry_delay`` when waiting helps)."""


class UnauthenticatedError(ArbiterError):
    """UNAUTHENTICATED: the request carried no token, or one the server does not know."""


class SessionLostError(ArbiterError):
    """DATA_LOSS (reason SESSION_LOST): the request named a session epoch its store lost
    (a Redis restarted without persistence). Nothing changed, and the session was not
    started again silently: the outcome of every call made in the lost epoch is
    unknown. Connect again (with the lost epoch) to go on in a new one."""


_BY_CODE = {
    grpc.StatusCode.INVALID_ARGUMENT: InvalidArgumentError,
    grpc.StatusCode.NOT_FOUND: NotFoundError,
    grpc.StatusCode.FAILED_PRECONDITION: FailedPreconditionError,
    grpc.StatusCode.ABORTED: AbortedError,
    grpc.StatusCode.UNAVAILABLE: UnavailableError,
    grpc.StatusCode.DEADLINE_EXCEEDED: DeadlineExceededError,
    grpc.StatusCode.RESOURCE_EXHAUSTED: ResourceExhaustedError,
    grpc.StatusCode.UNAUTHENTICATED: UnauthenticatedError,
    grpc.StatusCode.DATA_LOSS: SessionLostError,
}


def details_of(trailing_metadata: Any) -> Dict[str, Any]:
    """Decodes the ``google.rpc.Status`` in a failed RPC's trailing metadata (an
    iterable of ``(key, value)`` pairs, as ``AioRpcError.trailing_metadata()`` gives)
    into the keyword arguments of :class:`ArbiterError` (``reason``, ``domain``,
    ``metadata``, ``violations``, ``retry_delay``); ``{}`` when there is none or it does
    not decode. Detail types it does not know are skipped."""
    raw = None
    for key, value in trailing_metadata or ():
        if key == STATUS_DETAILS_KEY and isinstance(value, bytes):
            raw = value
    if raw is None:
        return {}
    st = status_pb2.Status()
    try:
        st.ParseFromString(raw)
    except Exception:  # noqa: BLE001 - a garbled trailer is as good as none
        return {}
    out: Dict[str, Any] = {}
    violations: List[Tuple[str, str]] = []
    for any_ in st.details:
        info = error_details_pb2.ErrorInfo()
        bad = error_details_pb2.BadRequest()
        retry = error_details_pb2.RetryInfo()
        if any_.Is(info.DESCRIPTOR) and any_.Unpack(info):
            out.setdefault("reason", info.reason)
            out.setdefault("domain", info.domain)
            out.setdefault("metadata", dict(info.metadata))
        elif any_.Is(bad.DESCRIPTOR) and any_.Unpack(bad):
            violations += [(v.field, v.description) for v in bad.field_violations]
        elif any_.Is(retry.DESCRIPTOR) and any_.Unpack(retry):
            out.setdefault("retry_delay", retry.retry_delay.ToNanoseconds() / 1e9)
    if violations:
        out["violations"] = violations
    return out


def from_rpc_error(err: grpc.RpcError, rpc: str = "") -> ArbiterError:
    """Converts a grpc.aio error into the matching typed :class:`ArbiterError`, with the
    details of its trailer."""
    code = err.code()
    details = details_of(err.trailing_metadata())
    return _BY_CODE.get(code, ArbiterError)(code, err.details() or "", rpc, **details)
