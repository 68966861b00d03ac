"""ArbiterClient: the Arbiter API over grpc.aio, with typed errors, gRPC's own retries
(the service config), TLS, bearer tokens and trace context.

Retries. The channel is built with the API's gRPC service config
(``service_config.json`` in this package, a copy of ``clients/service-config.json``) and
``grpc.enable_retries``: gRPC itself retries each method on the codes safe for it
(UNAVAILABLE and ABORTED for all; DEADLINE_EXCEEDED too for Complete, ConfigureSession,
Connect, CloseSession, Poll, GetSession, GetHistory and ReportProgress), with the
config's attempts and backoff. That is safe because every RPC is idempotent: RegisterCall
by call id (one without an id mints a new one on a retry, so the config retries it only
on codes where the server changed nothing), Decide, Complete, Connect and the rest by
their nature, and the event RPCs (ReportSpeech, ReportTranscript,
ReportToolCallCancellation, ReportProgress) by ``event_id``: this client gives a request
that has none an id of its own (:meth:`ArbiterClient.new_event_id`), so its retries
(gRPC's, sent with the same bytes) are answered ``repeat=true`` and applied once. Every
RPC is also sent with ``wait_for_ready``, so a request made while the connection is down
waits for it, up to the RPC's timeout. ``retry=False`` (the adapters' outbox, which
redelivers an observed event itself with a fresh ``age``: gRPC's retries would resend the
old one) sends one attempt without either, on a second channel to the same target built
without the retries (both channels connect when the client is made). What is left after the
config's attempts raises the typed :class:`~arbiter_client.errors.ArbiterError` (its
``retry_delay`` says when another try is worth it).

For ``dns:///`` targets the channel balances round robin over every address the name
resolves to (a headless Service), re-resolving as replicas come and go, so new replicas
get traffic; so it does over an address list (``ipv4:HOST:PORT,HOST:PORT``); other
targets use gRPC's default (pick_first).

Watch is a stream: :meth:`ArbiterClient.watch` resumes it after a lost connection
(UNAVAILABLE, SERVER_DRAINING included, or a CANCELLED it did not ask for) with
``after_seq`` set to the last ``seq`` it yielded, so no effect is yielded twice and none
is skipped, backing off as :class:`RetryPolicy` says (at once when the server's
RetryInfo says 0: a replica shutting down); the budget starts again after each effect.

TLS and tokens: ``ca_file`` (the CA that signed the server's certificate; else the
system's roots when ``tls=True``), ``cert_file`` + ``key_file`` (a client certificate,
for a server with ``--tls-client-ca``) and ``token`` (sent as ``authorization: Bearer``
on every RPC, gRPC per-RPC credentials; refused on a plaintext channel unless
``insecure_token=True``, e.g. a TLS-terminating sidecar on loopback).

Traces: every RPC carries W3C trace context (``traceparent``, ``tracestate``): the
current OpenTelemetry context's when ``opentelemetry-api`` is installed and a span is
current, else what the ``traceparent`` option returns, so the arbiter's spans nest in
the agent's trace.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
import os
import random
import secrets
from dataclasses import dataclass
from typing import Any, AsyncIterator, Callable, Dict, List, Optional, Sequence, Tuple, cast

import grpc

from ._version import __version__
from .errors import from_rpc_error
from .v1 import API_VERSION
from .v1 import arbiter_pb2 as pb
from .v1 import arbiter_pb2_grpc as pb_grpc

try:  # W3C trace context from the current OpenTelemetry context, when the API is there
    from opentelemetry import propagate as _otel_propagate
except ImportError:  # pragma: no cover - not installed on Debian
    _otel_propagate = None  # type: ignore

log = logging.getLogger("arbiter_client")

#: Sent as the gRPC user agent, so the server's logs show which client spoke.
USER_AGENT = f"arbiter-client-python/{__version__} ({API_VERSION})"

_SERVICE_CONFIG_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "service_config.json")

#: Metadata pairs sent with an RPC.
Metadata = Tuple[Tuple[str, str], ...]


def service_config(target: str = "") -> Dict[str, Any]:
    """The gRPC service config this client builds its channel with: the packaged copy
    of ``clients/service-config.json`` (retryPolicy per method), plus
    ``loadBalancingConfig: [{"round_robin": {}}]`` when ``target`` is a ``dns:`` target
    or a list of addresses (``ipv4:10.0.0.1:50051,10.0.0.2:50051``). A new dict each
    call."""
    with open(_SERVICE_CONFIG_FILE, encoding="utf-8") as f:
        config: Dict[str, Any] = json.load(f)
    if target.startswith("dns:") or (target.startswith(("ipv4:", "ipv6:")) and "," in target):
        config["loadBalancingConfig"] = [{"round_robin": {}}]
    return config


@dataclass(frozen=True)
class RetryPolicy:
    """Backoff, in seconds, for what this client and the adapters retry themselves:
    the outbox's redelivery of an observed event (with a fresh ``age``), Watch's resume,
    and reconnecting. The first retry waits ``initial_backoff`` (times a random 0.5-1
    jitter), each next one ``multiplier`` times longer, at most ``max_backoff``; no
    retry starts after ``max_elapsed`` seconds from the first failure. Each RPC's own
    retries are the service config's (see the module doc)."""

    initial_backoff: float = 0.1
    max_backoff: float = 1.0
    multiplier: float = 2.0
    max_elapsed: float = 20.0


def _read(path: Optional[str]) -> Optional[bytes]:
    if path is None:
        return None
    with open(path, "rb") as f:
        return f.read()


class ArbiterClient:
    """An asyncio client of ``arbiter.v1.ArbiterService``.

    Each method takes the request message (``arbiter_client.v1.arbiter_pb2``) and returns
    the response message; failures raise :class:`~arbiter_client.errors.ArbiterError`.
    Safe to share among the sessions of one event loop.

    Args:
        target: the server address: ``"127.0.0.1:50051"``, or ``"dns:///arbiter:50051"``
            to balance over every address the name has. Ignored when ``channel`` is given.
        channel: a ``grpc.aio.Channel`` to use instead (then the options below but
            ``timeout``, ``retry``, ``token`` with ``insecure_token`` and
            ``traceparent`` are not applied: build it with
            :meth:`channel_options` to keep the service config).
        timeout: deadline of each RPC, in seconds (Decide adds its ``wait``), retries
            included.
        retry: how the adapters' own retries back off (:class:`RetryPolicy`), and the
            channel's reconnect backoff.
        tls: serve over TLS (default: when ``ca_file`` or ``cert_file`` is given).
        ca_file: PEM file of the CA(s) to verify the server's certificate with
            (default: the system's roots).
        cert_file, key_file: PEM files of a client certificate and its key (mutual
            TLS, for a server run with ``--tls-client-ca``); both or neither.
        server_name: the name to verify in the server's certificate, when it is not
            the target's host (``grpc.ssl_target_name_override``).
        token: a bearer token (``--auth-tokens-file``), sent as
            ``authorization: Bearer TOKEN`` on every RPC. A server that does not know it
            answers UNAUTHENTICATED (:class:`~arbiter_client.errors.UnauthenticatedError`).
        insecure_token: allow ``token`` on a plaintext channel (a TLS-terminating proxy
            on loopback); otherwise a token without TLS raises ValueError.
        traceparent: returns the W3C ``traceparent`` to send with the next RPC (or None
            for none); used when OpenTelemetry has no current span (or is not
            installed).
        options: more channel arguments (``(name, value)`` pairs), after this client's.

    Raises:
        ValueError: neither target nor channel; ``cert_file`` without ``key_file`` (or
            the reverse); ``token`` on a plaintext channel without ``insecure_token``.
        OSError: a certificate file could not be read.
    """

    def __init__(
        self,
        target: Optional[str] = None,
        *,
        channel: Optional[grpc.aio.Channel] = None,
        timeout: float = 5.0,
        retry: RetryPolicy = RetryPolicy(),
        tls: Optional[bool] = None,
        ca_file: Optional[str] = None,
        cert_file: Optional[str] = None,
        key_file: Optional[str] = None,
        server_name: Optional[str] = None,
        token: Optional[str] = None,
        insecure_token: bool = False,
        traceparent: Optional[Callable[[], Optional[str]]] = None,
        options: Sequence[Tuple[str, Any]] = (),
    ) -> None:
        self._metadata: Metadata = ()
        self._fast_channel_factory: Optional[Callable[[], grpc.aio.Channel]] = None
        if channel is None:
            if not target:
                raise ValueError("ArbiterClient: give a target address or a channel")
            if (cert_file is None) != (key_file is None):
                raise ValueError("ArbiterClient: give cert_file and key_file together (mutual TLS)")
            use_tls = bool(ca_file or cert_file) if tls is None else tls
            opts = self.channel_options(target, retry) + list(options)
            if server_name:
                opts.append(("grpc.ssl_target_name_override", server_name))
            # retry=False RPCs go on a channel without the service config's retries:
            # one attempt, so the caller's next one is a fresh request (a new age).
            fast_opts = [(k, v) for k, v in opts if k != "grpc.enable_retries"] + [("grpc.enable_retries", 0)]
            if use_tls:
                creds = grpc.ssl_channel_credentials(
                    root_certificates=_read(ca_file), private_key=_read(key_file), certificate_chain=_read(cert_file)
                )
                if token:
                    creds = grpc.composite_channel_credentials(creds, grpc.access_token_call_credentials(token))
                channel = grpc.aio.secure_channel(target, creds, options=opts)
                self._fast_channel_factory = lambda: grpc.aio.secure_channel(target, creds, options=fast_opts)
            else:
                if token and not insecure_token:
                    raise ValueError("ArbiterClient: a token on a plaintext channel would cross the network in the "
                                     "clear: give ca_file (TLS), or insecure_token=True for a loopback proxy")
                if token:
                    self._metadata = (("authorization", f"Bearer {token}"),)
                channel = grpc.aio.insecure_channel(target, options=opts)
                self._fast_channel_factory = lambda: grpc.aio.insecure_channel(target, options=fast_opts)
        self._channel = channel
        self._stub = pb_grpc.ArbiterServiceStub(channel)  # type: ignore[no-untyped-call]  # generated, untyped
        self._fast_channel: Optional[grpc.aio.Channel] = None
        self._fast_stub: Optional[pb_grpc.ArbiterServiceStub] = None
        if self._fast_channel_factory is not None:
            # Both connect now, not at their first RPC: an event's age is taken as its
            # request leaves, so a first connection made after that would count as
            # transit and place the event late.
            self._stub_for(False)
            for ch in (channel, self._fast_channel):
                if ch is not None:
                    ch.get_state(try_to_connect=True)
        self.timeout = timeout
        self.retry = retry
        self._traceparent = traceparent
        self._event_prefix = "py" + secrets.token_hex(6)
        self._event_counter = itertools.count(1)

    @staticmethod
    def channel_options(target: str = "", retry: RetryPolicy = RetryPolicy()) -> List[Tuple[str, Any]]:
        """The channel arguments this client builds its channel with: the user agent,
        :func:`service_config` for ``target`` with ``grpc.enable_retries``, and
        reconnecting on ``retry``'s schedule (gRPC's own default, 1 s growing to 120 s,
        would leave a restored arbiter unreached for seconds, past a job's max_hold)."""
        return [
            ("grpc.primary_user_agent", USER_AGENT),
            ("grpc.enable_retries", 1),
            ("grpc.service_config", json.dumps(service_config(target))),
            ("grpc.initial_reconnect_backoff_ms", int(retry.initial_backoff * 1000)),
            ("grpc.min_reconnect_backoff_ms", int(retry.initial_backoff * 1000)),
            ("grpc.max_reconnect_backoff_ms", int(retry.max_backoff * 1000)),
        ]

    def new_event_id(self) -> str:
        """A new event id (``event_id`` of the event RPCs), unique to this client:
        ``"py"``, 12 random hex digits, ``-``, a counter. Give one observed event one
        id, and send it on every retry of that event."""
        return f"{self._event_prefix}-{next(self._event_counter)}"

    async def close(self) -> None:
        """Closes the channels."""
        if self._fast_channel is not None:
            await self._fast_channel.close()
        await self._channel.close()

    async def __aenter__(self) -> "ArbiterClient":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()

    async def register_call(self, req: pb.RegisterCallRequest, *, retry: bool = True) -> pb.RegisterCallResponse:
        """RegisterCall; idempotent by call id (one without an id is given a new id by
        each attempt that lands). ``retry=False``: one attempt, failing fast while the
        connection is down (no ``wait_for_ready``), on a second channel without the
        service config's retries: for a caller that retries itself with a fresh
        request (the adapters' outbox: a new ``age`` each time)."""
        return cast(pb.RegisterCallResponse, await self._call("RegisterCall", req, retry=retry))

    async def report_speech(self, req: pb.ReportSpeechRequest, *, retry: bool = True) -> pb.ReportSpeechResponse:
        """ReportSpeech; idempotent by ``event_id`` (given one if it has none: the
        request is copied). ``repeat=true`` in the answer: a retry of an event already
        applied. ``retry=False`` as for :meth:`register_call`."""
        return cast(pb.ReportSpeechResponse, await self._call("ReportSpeech", self._with_event_id(req), retry=retry))

    async def report_transcript(
        self, req: pb.ReportTranscriptRequest, *, retry: bool = True
    ) -> pb.ReportTranscriptResponse:
        """ReportTranscript; idempotent by ``event_id``, as :meth:`report_speech`."""
        return cast(pb.ReportTranscriptResponse, await self._call("ReportTranscript", self._with_event_id(req), retry=retry))

    async def report_tool_call_cancellation(
        self, req: pb.ReportToolCallCancellationRequest, *, retry: bool = True
    ) -> pb.ReportToolCallCancellationResponse:
        """ReportToolCallCancellation; idempotent by ``event_id`` (and dead ids stay
        dead), as :meth:`report_speech`."""
        resp = await self._call("ReportToolCallCancellation", self._with_event_id(req), retry=retry)
        return cast(pb.ReportToolCallCancellationResponse, resp)

    async def decide(self, req: pb.DecideRequest) -> pb.DecideResponse:
        """Decide; idempotent. The deadline is ``timeout`` plus ``req.wait``. A replica
        shutting down answers UNAVAILABLE (reason SERVER_DRAINING): retried by the
        service config, on another replica when the channel has one."""
        wait = req.wait.seconds + req.wait.nanos / 1e9
        return cast(pb.DecideResponse, await self._call("Decide", req, timeout=self.timeout + wait))

    async def complete(self, req: pb.CompleteRequest) -> pb.CompleteResponse:
        """Complete; idempotent (the same report returns the same effects).

        ``OUTCOME_UNKNOWN`` (after COMMIT: the backend could not say whether the side
        effect happened) answers the job's calls "unknown"; report ``OUTCOME_COMMITTED``
        or ``OUTCOME_FAILED`` for the same job once the truth is known (the note then
        comes in that Complete's effects)."""
        return cast(pb.CompleteResponse, await self._call("Complete", req))

    async def configure_session(self, req: pb.ConfigureSessionRequest) -> pb.ConfigureSessionResponse:
        """ConfigureSession; idempotent (the same options again change nothing)."""
        return cast(pb.ConfigureSessionResponse, await self._call("ConfigureSession", req))

    async def poll(self, req: pb.PollRequest) -> pb.PollResponse:
        """Poll (steps the session's timers). Set ``after_seq`` (the highest ``seq``
        acted on): then a retry whose first reply was lost, or a Watch that fired the
        timers first, still hands every effect back (without it, an effect goes to one
        reply only). With Watch open no polling is needed."""
        return cast(pb.PollResponse, await self._call("Poll", req))

    async def get_session(self, req: pb.GetSessionRequest) -> pb.GetSessionResponse:
        """GetSession; read-only."""
        return cast(pb.GetSessionResponse, await self._call("GetSession", req))

    async def get_history(self, req: pb.GetHistoryRequest) -> pb.GetHistoryResponse:
        """GetHistory (the session's timeline: inputs, decisions, effects); read-only."""
        return cast(pb.GetHistoryResponse, await self._call("GetHistory", req))

    async def close_session(self, req: pb.CloseSessionRequest) -> pb.CloseSessionResponse:
        """CloseSession; idempotent."""
        return cast(pb.CloseSessionResponse, await self._call("CloseSession", req))

    async def connect(self, req: pb.ConnectRequest, *, retry: bool = True) -> pb.ConnectResponse:
        """Connect (a new model connection for the session); idempotent (connecting
        again with the current id changes nothing). Its effects are skips with reason
        ``connection_closed``; its ``epoch`` names the session's lifetime (send it in
        later events: a lost session then answers DATA_LOSS, never a new one silently);
        ``state`` SESSION_STATE_LOST when the request's epoch was lost. ``retry=False``
        as for :meth:`register_call`."""
        return cast(pb.ConnectResponse, await self._call("Connect", req, retry=retry))

    async def report_progress(self, req: pb.ReportProgressRequest) -> pb.ReportProgressResponse:
        """ReportProgress (an interim result of a running job); idempotent by
        ``event_id``, as :meth:`report_speech`."""
        return cast(pb.ReportProgressResponse, await self._call("ReportProgress", self._with_event_id(req)))

    async def watch(self, session_id: str, after_seq: int = 0) -> AsyncIterator[pb.WatchResponse]:
        """Watch: yields every effect of the session (``WatchResponse``, one effect each,
        ascending ``seq``) as it becomes due, from the one after ``after_seq``.

        A stream lost to UNAVAILABLE (SERVER_DRAINING included) or a CANCELLED this
        client did not ask for is reopened with ``after_seq`` set to the last ``seq``
        yielded, so nothing is yielded twice and nothing is skipped; it waits the
        server's RetryInfo delay when there is one, else backs off as
        :class:`RetryPolicy` says, the budget counting from the first failure since the
        last effect received. The iterator ends when the server ends the stream (the
        session closed or expired). Other errors (NOT_FOUND, FAILED_PRECONDITION when
        ``after_seq`` is beyond the log or older than it keeps) raise
        :class:`~arbiter_client.errors.ArbiterError`. Stop early with ``break`` (or by
        closing the generator): the stream is cancelled.
        """
        loop = asyncio.get_running_loop()
        last = after_seq
        start: Optional[float] = None  # first failure since the last effect received
        delay = self.retry.initial_backoff
        while True:
            call = self._stub.Watch(pb.WatchRequest(session_id=session_id, after_seq=last), wait_for_ready=True,
                                    metadata=self._call_metadata())
            try:
                async for resp in call:
                    if resp.seq and resp.seq <= last:
                        continue  # a replica that resent what was delivered: never twice
                    last = resp.seq or last
                    start, delay = None, self.retry.initial_backoff
                    yield resp
                return  # the server ended the stream
            except grpc.aio.AioRpcError as rpc_err:
                err = from_rpc_error(rpc_err, "Watch")
                first = start is None
                if start is None:
                    start = loop.time()
                pause = delay * random.uniform(0.5, 1.0)
                if err.retry_delay is not None:
                    # The server says when: 0 (a replica draining) means now, once.
                    pause = 0.0 if err.retry_delay == 0 and first else max(err.retry_delay, pause)
                retried = err.code in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.CANCELLED)
                if not retried or loop.time() - start + pause > self.retry.max_elapsed:
                    raise err from None
                log.warning("arbiter Watch: %s, resuming after seq %d in %.2fs", err, last, pause)
                await asyncio.sleep(pause)
                delay = min(delay * self.retry.multiplier, self.retry.max_backoff)
            finally:
                call.cancel()  # a no-op once it ended

    def _with_event_id(self, req: Any) -> Any:
        if req.event_id:
            return req
        out = type(req)()
        out.CopyFrom(req)
        out.event_id = self.new_event_id()
        return out

    def _call_metadata(self) -> Metadata:
        """The metadata of one RPC: the token (plaintext channels) and trace context."""
        md: Dict[str, str] = {}
        if _otel_propagate is not None:
            _otel_propagate.inject(md)
        if "traceparent" not in md and self._traceparent is not None:
            tp = self._traceparent()
            if tp:
                md["traceparent"] = tp
        return self._metadata + tuple((k.lower(), v) for k, v in md.items())

    def _stub_for(self, retry: bool) -> pb_grpc.ArbiterServiceStub:
        """The stub of the main channel (the service config's retries), or for
        ``retry=False`` that of a second channel to the same target without them (the
        main one when the client was given its channel)."""
        if retry or self._fast_channel_factory is None:
            return self._stub
        if self._fast_stub is None:
            self._fast_channel = self._fast_channel_factory()
            self._fast_stub = pb_grpc.ArbiterServiceStub(self._fast_channel)  # type: ignore[no-untyped-call]
        return self._fast_stub

    async def _call(self, name: str, req: Any, *, timeout: Optional[float] = None, retry: bool = True) -> Any:
        rpc = getattr(self._stub_for(retry), name)
        try:
            return await rpc(req, timeout=timeout or self.timeout, wait_for_ready=retry,
                             metadata=self._call_metadata())
        except grpc.aio.AioRpcError as err:
            raise from_rpc_error(err, name) from None
