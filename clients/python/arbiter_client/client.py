"""ArbiterClient: the Arbiter API over grpc.aio, with typed errors and retries.

Retries (see :class:`RetryPolicy`). Every RPC is sent with ``wait_for_ready``, so a
request made while the connection is down or reconnecting waits for it (up to the
RPC's timeout) instead of failing: it has not reached the server, so this is safe for
every RPC. Once sent, a request whose connection is lost is ambiguous: it may or may not
have been applied. Those are retried, with exponential backoff and jitter, only for the
RPCs that are idempotent (by call id, job id, or by nature): RegisterCall (when it
carries a call id), ReportToolCallCancellation, Decide, Complete, ConfigureSession,
Poll, GetSession, CloseSession and Connect, on UNAVAILABLE, ABORTED, DEADLINE_EXCEEDED and
CANCELLED (one this client did not ask for: a server going away resets its streams).
ReportSpeech, ReportTranscript and ReportProgress are not idempotent (an event applied
twice is two events): they are retried only on ABORTED, which the server returns when
it changed nothing. Everything else, and a retry budget run out, raises the typed
:class:`~arbiter_client.errors.ArbiterError`.

Watch is a stream: :meth:`ArbiterClient.watch` resumes it after a lost connection
(UNAVAILABLE, or a CANCELLED it did not ask for) with ``after_seq`` set to the last
``seq`` it yielded, so no effect is yielded twice and none is skipped, backing off as
above; the budget starts again after each effect received.
"""

from __future__ import annotations

import asyncio
import logging
import random
from dataclasses import dataclass
from typing import AsyncIterator, Optional

import grpc

from ._version import __version__
from .errors import from_rpc_error
from .v1 import API_VERSION, arbiter_pb2 as pb, arbiter_pb2_grpc as pb_grpc

log = logging.getLogger("arbiter_client")

#: Sent as the gRPC user agent, so the server's logs show which client spoke.
USER_AGENT = f"arbiter-client-python/{__version__} ({API_VERSION})"

_ALWAYS_RETRIED = frozenset({grpc.StatusCode.ABORTED})
# CANCELLED is here because it is not ours (our own cancellation raises
# asyncio.CancelledError): a server going away resets its streams.
_RETRIED_IF_IDEMPOTENT = frozenset(
    {
        grpc.StatusCode.UNAVAILABLE,
        grpc.StatusCode.ABORTED,
        grpc.StatusCode.DEADLINE_EXCEEDED,
        grpc.StatusCode.CANCELLED,
    }
)


@dataclass(frozen=True)
class RetryPolicy:
    """Backoff for retried RPCs: the first retry waits ``initial_backoff`` seconds
    (times a random 0.5-1 jitter), each next one ``multiplier`` times longer, at most
    ``max_backoff``; no retry starts after ``max_elapsed`` seconds from the first try."""

    initial_backoff: float = 0.1
    max_backoff: float = 1.0
    multiplier: float = 2.0
    max_elapsed: float = 20.0


class ArbiterClient:
    """An asyncio client of ``arbiter.v1.ArbiterService``.

    Each method takes the request message (``arbiter_client.v1.arbiter_pb2``) and returns
    the response message; failures raise :class:`~arbiter_client.errors.ArbiterError`.

    Args:
        target: the server address, e.g. ``"127.0.0.1:50051"`` (plaintext). Ignored when
            ``channel`` is given.
        channel: a ``grpc.aio.Channel`` to use instead (TLS, interceptors, options).
        timeout: deadline of each RPC attempt, in seconds (Decide adds its ``wait``).
        retry: how retried RPCs back off.
    """

    def __init__(
        self,
        target: Optional[str] = None,
        *,
        channel: Optional[grpc.aio.Channel] = None,
        timeout: float = 5.0,
        retry: RetryPolicy = RetryPolicy(),
    ) -> None:
        if channel is None:
            if not target:
                raise ValueError("ArbiterClient: give a target address or a channel")
            # Reconnect on the retry policy's schedule: gRPC's own default (1 s, x1.6, up
            # to 120 s) would leave a restored arbiter unreached for seconds, past
            # max_hold, while the outbox retries every 2 s at most.
            channel = grpc.aio.insecure_channel(target, options=[
                ("grpc.primary_user_agent", USER_AGENT),
                ("grpc.initial_reconnect_backoff_ms", int(retry.initial_backoff * 1000)),
                ("grpc.min_reconnect_backoff_ms", int(retry.initial_backoff * 1000)),
                ("grpc.max_reconnect_backoff_ms", int(retry.max_backoff * 1000)),
            ])
        self._channel = channel
        self._stub = pb_grpc.ArbiterServiceStub(channel)
        self.timeout = timeout
        self.retry = retry

    async def close(self) -> None:
        """Closes the channel."""
        await self._channel.close()

    async def __aenter__(self) -> "ArbiterClient":
        return self

    async def __aexit__(self, *exc) -> None:
        await self.close()

    async def register_call(self, req: pb.RegisterCallRequest, *, retry: bool = True) -> pb.RegisterCallResponse:
        """RegisterCall; retried only when the request carries a call id. ``retry=False``:
        one attempt, failing fast while the connection is down (see the module doc)."""
        return await self._call("RegisterCall", req, idempotent=bool(req.call_id), retry=retry)

    async def report_speech(self, req: pb.ReportSpeechRequest, *, retry: bool = True) -> pb.ReportSpeechResponse:
        """ReportSpeech; not idempotent: retried only on ABORTED. ``retry=False``: one
        attempt, failing fast while the connection is down."""
        return await self._call("ReportSpeech", req, idempotent=False, retry=retry)

    async def report_transcript(
        self, req: pb.ReportTranscriptRequest, *, retry: bool = True
    ) -> pb.ReportTranscriptResponse:
        """ReportTranscript; not idempotent: retried only on ABORTED. ``retry=False``:
        one attempt, failing fast while the connection is down."""
        return await self._call("ReportTranscript", req, idempotent=False, retry=retry)

    async def report_tool_call_cancellation(
        self, req: pb.ReportToolCallCancellationRequest, *, retry: bool = True
    ) -> pb.ReportToolCallCancellationResponse:
        """ReportToolCallCancellation; idempotent (dead ids stay dead). ``retry=False``:
        one attempt, failing fast while the connection is down."""
        return await self._call("ReportToolCallCancellation", req, idempotent=True, retry=retry)

    async def decide(self, req: pb.DecideRequest) -> pb.DecideResponse:
        """Decide; idempotent. The attempt's deadline is ``timeout`` plus ``req.wait``."""
        wait = req.wait.seconds + req.wait.nanos / 1e9
        return await self._call("Decide", req, idempotent=True, timeout=self.timeout + wait)

    async def complete(self, req: pb.CompleteRequest) -> pb.CompleteResponse:
        """Complete; idempotent (the same report returns the same effects).

        ``OUTCOME_UNKNOWN`` (after COMMIT: the backend could not say whether the side
        effect happened) answers the job's calls "unknown"; report ``OUTCOME_COMMITTED``
        or ``OUTCOME_FAILED`` for the same job once the truth is known (the note then
        comes in that Complete's effects)."""
        return await self._call("Complete", req, idempotent=True)

    async def configure_session(self, req: pb.ConfigureSessionRequest) -> pb.ConfigureSessionResponse:
        """ConfigureSession; idempotent (the same options again change nothing)."""
        return await self._call("ConfigureSession", req, idempotent=True)

    async def poll(self, req: pb.PollRequest) -> pb.PollResponse:
        """Poll (steps the session's timers); retried like the idempotent RPCs. Set
        ``after_seq`` (the highest ``seq`` acted on): then a retry whose first reply was
        lost, or a Watch that fired the timers first, still hands every effect back
        (without it, an effect goes to one reply only). With Watch open no polling is
        needed."""
        return await self._call("Poll", req, idempotent=True)

    async def get_session(self, req: pb.GetSessionRequest) -> pb.GetSessionResponse:
        """GetSession; read-only."""
        return await self._call("GetSession", req, idempotent=True)

    async def close_session(self, req: pb.CloseSessionRequest) -> pb.CloseSessionResponse:
        """CloseSession; idempotent."""
        return await self._call("CloseSession", req, idempotent=True)

    async def connect(self, req: pb.ConnectRequest, *, retry: bool = True) -> pb.ConnectResponse:
        """Connect (a new model connection for the session); idempotent (connecting
        again with the current id changes nothing). Its effects are skips with reason
        ``connection_closed``. ``retry=False``: one attempt, failing fast while the
        connection is down."""
        return await self._call("Connect", req, idempotent=True, retry=retry)

    async def report_progress(self, req: pb.ReportProgressRequest) -> pb.ReportProgressResponse:
        """ReportProgress (an interim result of a running job); not idempotent (each
        report is one more interim response): retried only on ABORTED."""
        return await self._call("ReportProgress", req, idempotent=False)

    async def watch(self, session_id: str, after_seq: int = 0) -> AsyncIterator[pb.WatchResponse]:
        """Watch: yields every effect of the session (``WatchResponse``, one effect each,
        ascending ``seq``) as it becomes due, from the one after ``after_seq``.

        A stream lost to UNAVAILABLE (or a CANCELLED this client did not ask for) is
        reopened with ``after_seq`` set to the last ``seq`` yielded, so nothing is yielded
        twice and nothing is skipped; retries back off as :class:`RetryPolicy` says, the
        budget counting from the first failure since the last effect received. The
        iterator ends when the server ends the stream (the session closed or expired).
        Other errors (NOT_FOUND, FAILED_PRECONDITION when ``after_seq`` is beyond the log
        or older than it keeps) raise :class:`~arbiter_client.errors.ArbiterError`.
        Stop early with ``break`` (or by closing the generator): the stream is cancelled.
        """
        loop = asyncio.get_running_loop()
        last = after_seq
        start: Optional[float] = None  # first failure since the last effect received
        delay = self.retry.initial_backoff
        while True:
            call = self._stub.Watch(pb.WatchRequest(session_id=session_id, after_seq=last), wait_for_ready=True)
            try:
                async for resp in call:
                    if resp.seq and resp.seq <= last:
                        continue  # a replica that resent what was delivered: never twice
                    last = resp.seq or last
                    start, delay = None, self.retry.initial_backoff
                    yield resp
                return  # the server ended the stream
            except grpc.aio.AioRpcError as err:
                if start is None:
                    start = loop.time()
                pause = delay * random.uniform(0.5, 1.0)
                retried = err.code() in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.CANCELLED)
                if not retried or loop.time() - start + pause > self.retry.max_elapsed:
                    raise from_rpc_error(err, "Watch") from None
                log.warning("arbiter Watch: %s (%s), resuming after seq %d in %.2fs",
                            err.code().name, err.details(), last, pause)
                await asyncio.sleep(pause)
                delay = min(delay * self.retry.multiplier, self.retry.max_backoff)
            finally:
                call.cancel()  # a no-op once it ended

    async def _call(self, name: str, req, *, idempotent: bool, timeout: Optional[float] = None, retry: bool = True):
        rpc = getattr(self._stub, name)
        if not retry:  # one attempt, failing fast: the caller retries with a fresh request
            try:
                return await rpc(req, timeout=timeout or self.timeout, wait_for_ready=False)
            except grpc.aio.AioRpcError as err:
                raise from_rpc_error(err, name) from None
        retried = _RETRIED_IF_IDEMPOTENT if idempotent else _ALWAYS_RETRIED
        loop = asyncio.get_running_loop()
        start, delay = loop.time(), self.retry.initial_backoff
        while True:
            try:
                return await rpc(req, timeout=timeout or self.timeout, wait_for_ready=True)
            except grpc.aio.AioRpcError as err:
                pause = delay * random.uniform(0.5, 1.0)
                if err.code() not in retried or loop.time() - start + pause > self.retry.max_elapsed:
                    raise from_rpc_error(err, name) from None
                log.warning("arbiter %s: %s (%s), retrying in %.2fs", name, err.code().name, err.details(), pause)
                await asyncio.sleep(pause)
                delay = min(delay * self.retry.multiplier, self.retry.max_backoff)
