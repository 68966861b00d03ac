"""SessionCore: one arbiter session driven from what a realtime model session did,
whatever the provider.

A provider adapter (:class:`~arbiter_client.live.LiveAdapter` for Gemini Live; others
for OpenAI Realtime or LiveKit Agents) translates its provider's server messages into
calls of the core's methods, one per thing that happened: a function call, user voice
activity starting or ending, barge-in (``interrupted``), the model starting to speak,
generation and turn complete, input and output transcript pieces, a tool-call
cancellation, a reconnect. The core owns everything else: the outbox that delivers those
events to the arbiter, the Decide/Complete choreography of each side-effecting job, the
Watch, and the plain actions of :mod:`arbiter_client.actions` it hands ``on_action``,
each effect once per ``seq``.

**The outbox.** Each event method stamps the event with the time it is called (the
monotonic clock: call it as the provider's message arrives) and queues it; nothing
waits. The events of a session are delivered in the order observed, one at a time, each
attempt carrying ``age`` = now - observed (so the arbiter places the event where it
happened, however late it arrives, and a retry carries its own, larger age). An attempt
that fails with UNAVAILABLE, ABORTED, DEADLINE_EXCEEDED or CANCELLED (one the core did
not ask for: a server going away) is retried after a backoff (the client's
:class:`~arbiter_client.client.RetryPolicy`: 0.1 s doubling to 1 s, with jitter) until
it lands or the session closes; the later events wait behind it. Any other error (the
arbiter refused the event: INVALID_ARGUMENT, NOT_FOUND, FAILED_PRECONDITION,
RESOURCE_EXHAUSTED, ...) is logged and the event dropped. A function call without an id
is retried only on ABORTED (the arbiter would mint a second id for a repeat). Every
other event carries an ``event_id`` assigned once when it is observed and sent again on
every redelivery (and on gRPC's own retries, see :mod:`arbiter_client.client`), so an
attempt whose answer was lost is recognised by the arbiter (``repeat=true``: treated as
delivered, its effects come from the effect log: the Watch, or a Poll when the Watch is
off) instead of being applied twice. A server's RetryInfo sets the pause (0, a replica
shutting down: at once). Each
event method returns a future that resolves once its event was delivered and what came
back was handed out: await it, or not (a receive loop should not: it would stamp the
next messages late); it raises the error of a dropped event.

**The Decide contract** (docs/agent-guide.md; docs/rules.md, "An answered COMMIT
stands"). A job's Decide (prepared or not) is sent only once every event observed so
far was delivered (or dropped): the core waits for the outbox first. While a Decide
waits (its long-poll), an event observed and still undelivered :data:`DELIVERY_STUCK`
(0.1 s, the arbiter's LateTimer) after it was observed, or an attempt to deliver one
that fails, aborts that Decide (the RPC is cancelled; the arbiter takes back a COMMIT
whose caller went away); the core waits for the outbox again and asks again. Every
Decide says so (``events_delivered``), so the arbiter hands out a commit decided late
(after an outage, or under load) at once instead of withholding it 2 s for events this
core has already delivered (an event the arbiter refused, dropped, will not land later
either). A COMMIT received is acted on (a :class:`~arbiter_client.actions.Commit`): the arbiter stored it
before answering, and no later event withdraws it (an event still undelivered when it
arrives is placed after the commit; a warning is logged). If the session closes before
the events observed are delivered, or they stay undelivered for the retry policy's
``max_elapsed`` (the arbiter unreachable), no Decide is asked: the job is released
(:class:`UndeliveredEventsError`) and completed as failed: never a commit on a timeline
that may miss an event. A Decide that fails is never a commit either.

**A lost session.** The core keeps the epoch Connect returned and names it in its
events. When the arbiter's store lost the session (a volatile Redis restarted), such an
event is refused with DATA_LOSS (reason SESSION_LOST) instead of starting a new session
silently: the core hands out one :class:`~arbiter_client.actions.SessionLost` (the calls
of the lost epoch still unanswered, whose outcome is unknown, and their jobs), releases
every undecided job (AbortPrepare / Cancel, never a Commit), and the event's future
raises :class:`~arbiter_client.errors.SessionLostError`; so do the events after it, until
the agent reports the connection again (:meth:`SessionCore.connection_opened`): Connect
with the lost epoch answers SESSION_STATE_LOST and the core goes on in the new epoch.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import random
import time
from collections import deque
from dataclasses import dataclass, field
from typing import (
    Any,
    Awaitable,
    Callable,
    Deque,
    Dict,
    FrozenSet,
    Iterable,
    List,
    Literal,
    Mapping,
    Optional,
    Set,
    Tuple,
    Union,
)

import grpc
from google.protobuf import duration_pb2, json_format

from .actions import (
    AbortPrepare,
    Action,
    Call,
    Cancel,
    Commit,
    Execute,
    RunUpdate,
    Scheduling,
    SendFunctionResponse,
    SendNote,
    SessionLost,
    Skip,
)
from .client import ArbiterClient, RetryPolicy
from .errors import ArbiterError, FailedPreconditionError, NotFoundError, SessionLostError
from .v1 import arbiter_pb2 as pb

log = logging.getLogger("arbiter_client")

#: What ``on_action`` may be: a plain function or a coroutine function.
ActionHandler = Callable[[Action], Union[Awaitable[None], None]]

#: A function's scheduling mode (Gemini ``FunctionDeclaration.behavior``).
Behavior = Literal["BLOCKING", "NON_BLOCKING"]

#: Why the provider cancelled function calls (:meth:`SessionCore.tool_call_cancellation`).
CancellationReason = Literal["withdrawn", "provider_timeout"]

_CANCELLATION_REASON: Dict[str, "pb.CancellationReason"] = {
    "withdrawn": pb.CANCELLATION_REASON_WITHDRAWN,
    "provider_timeout": pb.CANCELLATION_REASON_PROVIDER_TIMEOUT,
}

_BEHAVIOR: Dict[Optional[str], "pb.Behavior"] = {
    None: pb.BEHAVIOR_UNSPECIFIED,
    "BLOCKING": pb.BEHAVIOR_BLOCKING,
    "NON_BLOCKING": pb.BEHAVIOR_NON_BLOCKING,
}

_RUN_STATE: Dict[int, str] = {
    pb.RUN_STATE_OPENED: "opened",
    pb.RUN_STATE_CONFIRMED: "confirmed",
    pb.RUN_STATE_REFUSED: "refused",
    pb.RUN_STATE_EXPIRED: "expired",
    pb.RUN_STATE_CANCELLED: "cancelled",
}

_SCHEDULING: Dict[int, Scheduling] = {
    pb.SCHEDULING_WHEN_IDLE: "WHEN_IDLE",
    pb.SCHEDULING_INTERRUPT: "INTERRUPT",
    pb.SCHEDULING_SILENT: "SILENT",
}

#: The codes on which the outbox retries an event. CANCELLED is one the core did not
#: ask for (its own cancellation raises asyncio.CancelledError): a server going away.
RETRIED_CODES: FrozenSet[grpc.StatusCode] = frozenset(
    {
        grpc.StatusCode.UNAVAILABLE,
        grpc.StatusCode.ABORTED,
        grpc.StatusCode.DEADLINE_EXCEEDED,
        grpc.StatusCode.CANCELLED,
    }
)
_ABORTED_ONLY: FrozenSet[grpc.StatusCode] = frozenset({grpc.StatusCode.ABORTED})
#: The codes on which a job's Decide is asked again (see ``SessionCore._decide``).
_DECIDE_RETRIED: FrozenSet[grpc.StatusCode] = frozenset(
    {grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED, grpc.StatusCode.CANCELLED}
)


@dataclass
class _Job:
    id: str
    call: Call
    side_effect: bool
    prepared: asyncio.Event = field(default_factory=asyncio.Event)
    settled: bool = False  # decided locally (commit/cancel handed out) or reported failed
    task: Optional["asyncio.Task[None]"] = None


class _Seqs:
    """The ``seq`` numbers acted on: every one up to ``high`` (the contiguous high-water
    mark), plus those above it in ``above``. Bounded: a gap that stays open while more
    than ``limit`` later seqs pile up is given up (the server's log keeps only the last
    256 effects, so it could never be filled)."""

    def __init__(self, limit: int = 1024) -> None:
        self.high = 0
        self.above: Set[int] = set()
        self.limit = limit

    def __contains__(self, seq: int) -> bool:
        return seq <= self.high or seq in self.above

    def add(self, seq: int) -> None:
        if seq in self:
            return
        self.above.add(seq)
        if len(self.above) > self.limit:
            self.high = min(self.above) - 1
        while self.high + 1 in self.above:
            self.high += 1
            self.above.discard(self.high)


#: How long (seconds) an observed event may stay undelivered while a Decide waits before
#: the core aborts that Decide (cancels the RPC): the arbiter's ``arbiter.LateTimer``
#: (arbiter/completion.go, 100 ms). A delivery takes milliseconds when the arbiter and
#: its store answer; one that takes longer may be behind an outage the parked Decide
#: comes out of first, and a COMMIT it answered then would stand ahead of the event
#: (docs/rules.md, "After an outage, a late commit waits for what the agent observed").
#: The server takes back a COMMIT whose caller went away, so an aborted Decide commits
#: nothing; the core asks again once the outbox is empty.
DELIVERY_STUCK: float = 0.1


class UndeliveredEventsError(Exception):
    """A job's Decide could not be asked: the events observed before it stayed
    undelivered (the session closed first, or the arbiter was unreachable for the retry
    policy's ``max_elapsed``). Nothing is committed: the job is released and completed
    as failed."""


def _quiet(fut: "asyncio.Future[Any]") -> None:
    """Marks a future's exception as retrieved once it is set, so that a caller who does
    not await it (a receive loop) gets no "exception was never retrieved" log: the
    outbox logs every dropped event itself."""
    fut.add_done_callback(lambda f: f.cancelled() or f.exception())


def _done() -> "asyncio.Future[None]":
    fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    fut.set_result(None)
    return fut


def together(futures: Iterable["asyncio.Future[None]"]) -> "asyncio.Future[None]":
    """A future that resolves once all of ``futures`` have, with the first one's error
    (in the given order) if any failed. For a translator whose one provider message
    makes several events."""
    futs = list(futures)
    if len(futs) == 1:
        return futs[0]
    out: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    _quiet(out)
    if not futs:
        out.set_result(None)
        return out
    left = len(futs)

    def one(_f: "asyncio.Future[None]") -> None:
        nonlocal left
        left -= 1
        if left or out.done():
            return
        err = next((f.exception() for f in futs if not f.cancelled() and f.exception() is not None), None)
        if err is not None:
            out.set_exception(err)
        else:
            out.set_result(None)

    for f in futs:
        f.add_done_callback(one)
    return out


def _set_once(fut: "asyncio.Future[str]") -> Callable[[str], None]:
    """A callback that sets ``fut``'s result to its argument; later calls do nothing."""

    def set_(value: str) -> None:
        if not fut.done():
            fut.set_result(value)

    return set_


def _duration(seconds: float) -> duration_pb2.Duration:
    d = duration_pb2.Duration()
    d.FromNanoseconds(max(0, int(seconds * 1e9)))
    return d


@dataclass
class _Event:
    index: int  # 1, 2, 3, ... in the order observed
    what: str  # for logs: "ReportSpeech(SPEECH_EVENT_USER_ACTIVITY_START)"
    observed: float  # time.monotonic() when observed
    send: Callable[[duration_pb2.Duration], Awaitable[Any]]  # one attempt, with this age
    handle: Callable[[Any], Awaitable[None]]  # hands out what the reply made due
    retried: FrozenSet[grpc.StatusCode]
    future: "asyncio.Future[None]"


class _Outbox:
    """The events a session observed, delivered in order, one at a time, each attempt
    with its age; see the module doc. ``observed`` counts the events put so far and
    ``settled`` those delivered or dropped: always a prefix, since delivery is FIFO."""

    def __init__(
        self,
        policy: RetryPolicy,
        busy: Callable[[int], None],
        before: Callable[[], Awaitable[None]],
        lost: Callable[[SessionLostError], Awaitable[None]],
    ) -> None:
        self._policy = policy
        self._lost = lost  # an event refused with SESSION_LOST, before its future fails
        self._busy = busy  # +1 / -1 around each attempt (the Watch holds its effects meanwhile)
        self._before = before  # run before each attempt (ConfigureSession, once); fails like it
        self._queue: Deque[_Event] = deque()
        self._worker: Optional["asyncio.Task[None]"] = None
        self._waiters: List[Tuple[int, "asyncio.Future[bool]"]] = []
        self._stuck_listeners: List[Callable[[str], None]] = []
        self.observed = 0
        self.settled = 0
        self.closed = False
        #: An event undelivered this long (seconds) after it was observed is stuck.
        self.stuck_after = DELIVERY_STUCK

    def put(
        self,
        what: str,
        send: Callable[[duration_pb2.Duration], Awaitable[Any]],
        handle: Callable[[Any], Awaitable[None]],
        retried: FrozenSet[grpc.StatusCode] = RETRIED_CODES,
    ) -> "asyncio.Future[None]":
        observed = time.monotonic()
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[None] = loop.create_future()
        _quiet(fut)
        if self.closed:
            log.warning("arbiter: %s observed after the session was closed: not delivered", what)
            fut.set_result(None)
            return fut
        self.observed += 1
        self._queue.append(_Event(self.observed, what, observed, send, handle, retried, fut))
        if self._worker is None:
            self._worker = loop.create_task(self._run(), name="arbiter-outbox")
        return fut

    async def wait_settled(self, index: int) -> bool:
        """Waits until every event up to ``index`` was delivered or dropped: True; False
        if the outbox was closed first (they never will be)."""
        if self.settled >= index:
            return True
        if self.closed:
            return False
        fut: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        self._waiters.append((index, fut))
        return await fut

    async def drain(self, timeout: float) -> bool:
        """Waits (at most ``timeout`` seconds) until every event observed so far was
        delivered or dropped."""
        try:
            return await asyncio.wait_for(self.wait_settled(self.observed), timeout)
        except asyncio.TimeoutError:
            return False

    def on_stuck(self, fn: Callable[[str], None]) -> Callable[[], None]:
        """Calls ``fn(why)`` whenever an event is stuck: an attempt to deliver it failed
        (retried or dropped), or it is still undelivered ``stuck_after`` seconds after it
        was observed (once per event). Returns the function that stops it. A waiting
        Decide listens, to abort."""
        self._stuck_listeners.append(fn)

        def stop() -> None:
            if fn in self._stuck_listeners:
                self._stuck_listeners.remove(fn)

        return stop

    def _stuck(self, why: str) -> None:
        for fn in list(self._stuck_listeners):
            fn(why)

    async def close(self) -> None:
        """Stops delivering: the events still queued are dropped (logged), and waiters
        learn they never will be delivered."""
        if self.closed:
            return
        self.closed = True
        if self._worker is not None:
            self._worker.cancel()
            await asyncio.gather(self._worker, return_exceptions=True)
        if self._queue:
            log.error("arbiter: the session closed with %d observed events undelivered: %s",
                      len(self._queue), ", ".join(ev.what for ev in self._queue))
        for ev in self._queue:
            if not ev.future.done():
                ev.future.set_result(None)
        self._queue.clear()
        for _, w in self._waiters:
            if not w.done():
                w.set_result(False)
        self._waiters.clear()

    async def _run(self) -> None:
        try:
            while self._queue:
                ev = self._queue[0]
                # The head is the oldest event undelivered: the ones behind it get their
                # own timer when they become the head (already due if they waited that long).
                timer = asyncio.get_running_loop().call_later(
                    max(0.0, ev.observed + self.stuck_after - time.monotonic()),
                    self._stuck, f"{ev.what} undelivered {self.stuck_after:g} s after it was observed",
                )
                try:
                    err = await self._deliver(ev)
                finally:
                    timer.cancel()
                self._queue.popleft()
                self.settled = ev.index
                if err is None:
                    ev.future.set_result(None)
                else:
                    ev.future.set_exception(err)
                ready = [w for i, w in self._waiters if i <= self.settled]
                self._waiters = [(i, w) for i, w in self._waiters if i > self.settled]
                for w in ready:
                    if not w.done():
                        w.set_result(True)
        finally:
            self._worker = None

    async def _deliver(self, ev: _Event) -> Optional[BaseException]:
        """Attempts until the event lands (None) or is dropped (the error); handing out
        the reply's effects is part of it (an error there is returned, not retried)."""
        p = self._policy
        delay = p.initial_backoff
        first = True  # the first failure of this event
        while True:
            age = time.monotonic() - ev.observed
            self._busy(+1)
            try:
                try:
                    await self._before()
                    age = time.monotonic() - ev.observed  # as it leaves
                    resp = await ev.send(_duration(age))
                except Exception as err:  # noqa: BLE001 - classified below
                    self._stuck(f"{ev.what}: {err}")
                    if not (isinstance(err, ArbiterError) and err.code in ev.retried):
                        if isinstance(err, SessionLostError):
                            await self._lost(err)
                        log.error("arbiter: %s (observed %.3fs ago) dropped: %s", ev.what, age, err)
                        return err
                    pause = delay * random.uniform(0.5, 1.0)
                    if err.retry_delay is not None:
                        # The server says when: 0 (a replica draining) means now, once.
                        pause = 0.0 if err.retry_delay == 0 and first else max(err.retry_delay, pause)
                    first = False
                    log.warning("arbiter: %s (observed %.3fs ago): %s; retrying in %.2fs", ev.what, age, err, pause)
                else:
                    try:
                        await ev.handle(resp)
                    except Exception as err:
                        log.exception("arbiter: handing out what %s made due", ev.what)
                        return err
                    return None
            finally:
                self._busy(-1)
            await asyncio.sleep(pause)
            delay = min(delay * p.multiplier, p.max_backoff)


#: Watch: an effect streamed is acted on after this delay (seconds), and once no unary
#: RPC of the core is in flight (at most ``_WATCH_HOLD_MAX``), so the reply that
#: carries it, which usually lands a moment later, hands it out in its own order.
_WATCH_HOLD = 0.05
_WATCH_HOLD_MAX = 0.5


class SessionCore:
    """Drives one arbiter session from what one realtime model session did, whatever
    the provider (see the module doc).

    Args:
        client: the :class:`ArbiterClient`.
        session_id: the arbiter session id (one per model connection), 1 to 128
            characters from ``[A-Za-z0-9_.:-]``.
        on_action: called with each :class:`~arbiter_client.actions.Action`, in order;
            may be a coroutine function (awaited). Keep it short: start prepares and
            commits as tasks, since the next event's delivery waits for it.
        behaviors: each tool's behavior (``"BLOCKING"`` or ``"NON_BLOCKING"``), for
            function calls reported without one; tools not named use the arbiter's tool
            policy.
        decide_wait: seconds each Decide long-poll waits (the server caps it at 30).
        language: the session's language as a BCP 47 tag (``"en"``, ``"es-MX"``): which
            stop and amend phrases the arbiter listens for. ``None``: the arbiter's
            default (English).
        response_scheduling: ``True`` when the provider honours a function response's
            scheduling (Gemini Live, NON_BLOCKING calls): then a status note may ride on
            a function response (:attr:`SendFunctionResponse.scheduling`) instead of a
            user turn. When this, ``language`` or ``time_zone`` is set, the core sends
            ConfigureSession once, before the session's first other RPC.
        time_zone: the session's IANA time zone (``"Europe/Paris"``): the arbiter reads
            relative dates ("tomorrow") and times said without an offset ("3pm",
            ``"2026-11-05T09:30"``) in business keys in it. ``None``: UTC.
        watch: ``True`` (default): hold a Watch on the session (opened after the first
            RPC that succeeds, closed by :meth:`close`) and act on every effect it
            streams, the timer-made ones included. ``False``: no stream; call
            :meth:`poll` on a beat (e.g. every second, or when
            ``GetSessionResponse.next_timer`` passes) to get those.
        read_transcript: your own reading of the user's words (your NLU or LLM):
            called with each final input transcript piece reported without one (its
            text, and the utterance id the provider named, else ``""``), before it is
            stamped; what it returns (a ``pb.AgentReading``, or ``None``) goes with the
            piece as its ``reading`` (see :meth:`input_transcript`). Synchronous: a
            reader that must wait (an LLM) would hold the piece back, so it reports
            through :meth:`input_transcript` itself. ``None``: no reading.

    Attribute ``tool_choice`` (``"auto"`` or ``"none"``) is the tool choice the model
    currently runs under: set it to ``"none"`` while the generation runs with
    ``toolChoice: none``, and calls that still arrive are rejected (answered at once).

    The event methods (:meth:`function_call` ... :meth:`tool_call_cancellation`) are
    plain methods: they stamp the event when called, queue it and return a future
    (resolved once it was delivered and its effects handed out). Call them from the
    event loop's thread, as the provider's messages arrive, in that order.
    """

    def __init__(
        self,
        client: ArbiterClient,
        session_id: str,
        on_action: ActionHandler,
        *,
        behaviors: Optional[Mapping[str, str]] = None,
        decide_wait: float = 20.0,
        language: Optional[str] = None,
        response_scheduling: bool = False,
        watch: bool = True,
        time_zone: Optional[str] = None,
        read_transcript: Optional[Callable[[str, str], Optional["pb.AgentReading"]]] = None,
    ) -> None:
        self.session_id = session_id
        self._read_transcript = read_transcript
        self.language = language or ""
        self.response_scheduling = bool(response_scheduling)
        self.time_zone = time_zone or ""
        self._configured = not (self.language or self.response_scheduling or self.time_zone)  # nothing to send
        self._configuring = asyncio.Lock()
        self.behaviors: Dict[str, str] = dict(behaviors or {})
        self.tool_choice = "auto"
        self._client = client
        self._on_action = on_action
        self._wait = _duration(decide_wait)
        self._jobs: Dict[str, _Job] = {}
        self._answered: Set[str] = set()
        self._dead: Set[str] = set()
        self._notes: Set[Tuple[str, str, str]] = set()
        self._interims: Set[Any] = set()  # seqs (or contents) of interim responses handed out
        self._runs: Set[Any] = set()  # seqs (or contents) of run updates handed out
        self.connection_id = ""
        #: The session's epoch, from the last Connect ("" before one): named in events.
        self.epoch = ""
        self._model_speaking = False
        self._closed = False
        self._seqs = _Seqs()  # the seqs acted on
        self.watch = bool(watch)
        self._watch_task: Optional["asyncio.Task[None]"] = None
        self._watch_last = 0  # the highest seq the Watch streamed
        self._watched: Dict[int, pb.WatchResponse] = {}  # streamed, not acted on yet
        self._flush_task: Optional["asyncio.Task[None]"] = None
        self._flushing = asyncio.Lock()
        self._inflight = 0  # unary RPCs (with their effects) under way
        self._call_jobs: Dict[str, str] = {}  # call id -> job id ("" for none), of the current epoch
        self._lost_epochs: Set[str] = set()  # epochs whose loss was handed out
        self._utterances = 0  # voice activity STARTs reported
        self._transcribed = False  # an input transcript (a piece, interim or final) came
        self._untranscribed_warned = False
        self._outbox = _Outbox(client.retry, self._busy, self._configure, self._session_lost)

    # --- what happened in the model session (stamped now, delivered in order) --------

    def function_call(
        self,
        call_id: str,
        name: str,
        args: Optional[Mapping[str, Any]] = None,
        *,
        behavior: Optional[str] = None,
        raw_args: Optional[str] = None,
        business_key: Optional[str] = None,
        tool_choice: Optional[str] = None,
    ) -> "asyncio.Future[None]":
        """The model issued a function call (Gemini ``FunctionCall``, OpenAI
        ``function_call`` item): RegisterCall. ``call_id`` may be empty (the arbiter
        mints one); ``behavior`` (``"BLOCKING"`` / ``"NON_BLOCKING"``) defaults to
        :attr:`behaviors` for ``name``. ``raw_args``: the argument text as the model
        sent it, when it could not be parsed into ``args`` (OpenAI's arguments are JSON
        text): the arbiter rejects the call (an error response saying its arguments
        could not be read) and nothing runs; never pass ``{}`` for unreadable
        arguments. ``business_key``: the agent's own key for the call (it resolved the
        request to a slot id), over the tool policy's key arguments. ``tool_choice``
        (``"auto"`` / ``"none"``): the tool choice the model ran under for this call;
        ``None``: :attr:`tool_choice`. What comes back: :class:`Execute`, function
        responses, skips, notes."""
        call_args: Dict[str, Any] = dict(args or {})
        behavior = behavior or self.behaviors.get(name)
        choice = tool_choice or self.tool_choice
        tool_choice_pb = pb.TOOL_CHOICE_NONE if choice == "none" else pb.TOOL_CHOICE_AUTO

        async def send(age: duration_pb2.Duration) -> pb.RegisterCallResponse:
            req = pb.RegisterCallRequest(
                session_id=self.session_id, call_id=call_id, tool=name,
                behavior=_BEHAVIOR.get(behavior, pb.BEHAVIOR_UNSPECIFIED), tool_choice=tool_choice_pb, age=age,
                epoch=self.epoch, business_key=business_key or "",
            )
            if raw_args is not None:
                req.raw_args = raw_args
            else:
                req.args.update(call_args)
            return await self._client.register_call(req, retry=False)

        async def handle(resp: pb.RegisterCallResponse) -> None:
            await self._registered(resp, name, call_args)

        retried = RETRIED_CODES if call_id else _ABORTED_ONLY
        return self._outbox.put(f"RegisterCall({call_id or name})", send, handle, retried)

    def voice_activity_start(self, *, utterance_id: str = "") -> "asyncio.Future[None]":
        """The user started speaking (Gemini ``ACTIVITY_START``, OpenAI
        ``input_audio_buffer.speech_started``): it holds due commits until the
        utterance's transcript is in. ``utterance_id``: the provider's id for the
        utterance when it gives one (OpenAI: the event's ``item_id``), so that its
        transcript is attributed to it (:meth:`input_transcript`).

        A second utterance starting while no input transcript ever came (or the session
        closing after speech without one) logs one warning for the session: input
        transcription is off (:meth:`_warn_untranscribed`)."""
        self._utterances += 1
        if self._utterances >= 2:
            self._warn_untranscribed()
        return self._speech(pb.SPEECH_EVENT_USER_ACTIVITY_START, utterance_id)

    def voice_activity_end(self, *, utterance_id: str = "") -> "asyncio.Future[None]":
        """The user stopped speaking (``ACTIVITY_END`` / ``speech_stopped``);
        ``utterance_id`` as for :meth:`voice_activity_start`."""
        return self._speech(pb.SPEECH_EVENT_USER_ACTIVITY_END, utterance_id)

    def interrupted(self) -> "asyncio.Future[None]":
        """The server cut the model's output: barge-in (Gemini ``interrupted``). Every
        BLOCKING call still unanswered dies (handed out as :class:`Skip`)."""
        self._model_speaking = False
        return self._speech(pb.SPEECH_EVENT_INTERRUPTED)

    def model_output_start(self) -> "asyncio.Future[None]":
        """The model's audio started (call it for every audio chunk: only the first of
        a turn is reported)."""
        if self._model_speaking:
            return _done()
        self._model_speaking = True
        return self._speech(pb.SPEECH_EVENT_MODEL_OUTPUT_START)

    def generation_complete(self) -> "asyncio.Future[None]":
        """The model finished generating its turn (its audio may still play)."""
        return self._speech(pb.SPEECH_EVENT_MODEL_GENERATION_COMPLETE)

    def turn_complete(self) -> "asyncio.Future[None]":
        """The model's turn is over (Gemini ``turn_complete``, OpenAI
        ``response.done``): it is idle."""
        self._model_speaking = False
        return self._speech(pb.SPEECH_EVENT_MODEL_TURN_COMPLETE)

    def input_transcript(
        self, text: str, *, final: bool = True, utterance_id: str = "", reading: Optional["pb.AgentReading"] = None
    ) -> "asyncio.Future[None]":
        """A piece of the user's input transcription. Final pieces are appended to the
        utterance and checked for stop intent; interim ones (``final=False``) are not.
        Blank text is not reported. ``utterance_id``: the utterance it transcribes, as
        given on its voice activity (OpenAI: the transcription's ``item_id``); without
        one the arbiter picks the oldest utterance that ended and waits for its
        transcript, else the open one (Gemini's transcription comes late).
        ``reading``: your own reading of the utterance (your NLU or LLM), on a final
        piece only: ``pb.AgentReading(intent="stop", confidence=0.9, source="nlu")``,
        intent one of stop, go_ahead, amend, other, unclear; the arbiter fuses it with
        its own as the tool policy's ``agent_intent`` says. ``None`` on a final piece:
        ``read_transcript``'s, if given."""
        if not text or not text.strip():
            return _done()
        if final and reading is None and self._read_transcript is not None:
            reading = self._read_transcript(text, utterance_id)
        self._transcribed = True
        return self._transcript(pb.ROLE_USER, text, interim=not final, utterance_id=utterance_id, reading=reading)

    def output_transcript(self, text: str, *, final: bool = True) -> "asyncio.Future[None]":
        """A piece of the model's output transcription (what it told the user)."""
        if not text:
            return _done()
        return self._transcript(pb.ROLE_MODEL, text, interim=not final)

    def tool_call_cancellation(
        self, call_ids: Iterable[str], *, reason: CancellationReason = "withdrawn"
    ) -> "asyncio.Future[None]":
        """The server withdrew these call ids (Gemini ``toolCallCancellation``, an
        OpenAI ``function_call`` item deleted): they are dead, handed out as
        :class:`Skip`, and an undecided job of theirs is cancelled. ``reason=
        "provider_timeout"``: the provider gave up waiting for the response after its
        own timeout (Ultravox); the ids are dead too, but their job is abandoned rather
        than cancelled, so a re-issue is deduplicated and answered live."""
        ids = list(call_ids)
        if not ids:
            return _done()
        why = _CANCELLATION_REASON[reason]
        event_id = self._client.new_event_id()  # once per observed event: the same on every redelivery

        async def send(age: duration_pb2.Duration) -> pb.ReportToolCallCancellationResponse:
            req = pb.ReportToolCallCancellationRequest(session_id=self.session_id, call_ids=ids, age=age, reason=why,
                                                       event_id=event_id)
            return await self._client.report_tool_call_cancellation(req, retry=False)

        return self._outbox.put(f"ReportToolCallCancellation({','.join(ids)}, event {event_id})", send,
                                self._handed_out)

    async def reconnect(self, connection_id: str) -> None:
        """Reports that the agent now talks to the model over a new connection (a
        reconnect, Gemini session resumption) with id ``connection_id``: Connect, in
        order with the events (after those of the old connection, before those of the
        new one). Calls still pending from earlier connections come back as
        :class:`Skip` (reason ``connection_closed``): never answer them on the new
        connection. Their jobs go on, and each outcome is handed out as a
        :class:`SendNote`. Call it for the first connection too, so that the calls made
        on it are known to be its own. Waits until it was delivered; a receive loop
        that must not wait calls :meth:`connection_opened` instead."""
        await self.connection_opened(connection_id)

    def connection_opened(self, connection_id: str) -> "asyncio.Future[None]":
        """:meth:`reconnect` as an event method: Connect is queued now, in order with
        the events observed so far and before those observed after it, and the
        returned future resolves once it was delivered. Call it as the new connection
        opens, before reading its first message.

        Connect returns the session's epoch; the core names it in every later event
        (RegisterCall, ReportSpeech, ReportTranscript, ConfigureSession), so a session
        its store lost answers DATA_LOSS instead of starting again silently: the core
        hands out :class:`~arbiter_client.actions.SessionLost` and that event's future
        raises :class:`~arbiter_client.errors.SessionLostError` (see the module doc). A
        Connect naming an epoch the store lost answers SESSION_STATE_LOST: SessionLost
        too (once per epoch), and the core goes on in the new epoch (every call of the
        lost one has an unknown outcome)."""
        self._model_speaking = False  # a new connection: nothing is playing

        async def send(_age: duration_pb2.Duration) -> pb.ConnectResponse:
            return await self._client.connect(pb.ConnectRequest(session_id=self.session_id,
                                                                connection_id=connection_id, epoch=self.epoch),
                                              retry=False)

        async def handle(resp: pb.ConnectResponse) -> None:
            self.connection_id = connection_id
            if resp.state == pb.SESSION_STATE_LOST:
                log.error("arbiter: session %s: its store lost epoch %s; going on in epoch %s (the outcome of every "
                          "call made in the lost epoch is unknown)", self.session_id, self.epoch, resp.epoch)
                await self._session_lost(None)
                self._call_jobs.clear()  # a new lifetime: the calls of the lost one are not its own
            if resp.epoch:
                self.epoch = resp.epoch
            await self._handed_out(resp)

        return self._outbox.put(f"Connect({connection_id})", send, handle)

    async def flush(self, timeout: Optional[float] = None) -> bool:
        """Waits until every event observed so far was delivered (or dropped), at most
        ``timeout`` seconds (None: no limit). False if it timed out or the session
        closed first."""
        if timeout is None:
            return await self._outbox.wait_settled(self._outbox.observed)
        return await self._outbox.drain(timeout)

    # --- what the application reports ------------------------------------------------

    async def prepared(self, job_id: str) -> None:
        """Reports that the job's prepare finished: the core now asks Decide with
        prepared=true (which starts the grace window) and hands out Commit or Cancel."""
        self._job(job_id).prepared.set()

    async def committed(self, job_id: str, result: Optional[Mapping[str, Any]] = None) -> None:
        """Reports that the side effect a :class:`Commit` asked for was performed;
        ``result`` (e.g. a booking reference) goes into the function response."""
        await self._complete(job_id, pb.OUTCOME_COMMITTED, result=result)

    async def result(self, job_id: str, result: Optional[Mapping[str, Any]] = None) -> None:
        """Reports a read-only tool's result, which becomes its function response."""
        await self._complete(job_id, pb.OUTCOME_RESULT, result=result)

    async def unknown(self, job_id: str, result: Optional[Mapping[str, Any]] = None) -> None:
        """Reports that the side effect a :class:`Commit` asked for may or may not have
        happened (the backend timed out): Complete OUTCOME_UNKNOWN. The job's calls are
        answered ``"unknown"`` and a repeat is never executed again. Report the truth
        later, once known, with :meth:`committed` or :meth:`failed` for the same job:
        that hands out the authoritative note."""
        await self._complete(job_id, pb.OUTCOME_UNKNOWN, result=result)

    async def progress(self, job_id: str, result: Optional[Mapping[str, Any]] = None) -> None:
        """Reports an interim result of a job still running (ReportProgress). When the
        session takes response scheduling, it comes back as a non-final
        :class:`SendFunctionResponse` (``will_continue=True``) per live NON_BLOCKING call
        id of the job; otherwise the arbiter drops it."""
        req = pb.ReportProgressRequest(session_id=self.session_id, job_id=job_id, event_id=self._client.new_event_id())
        if result:
            req.result.update(dict(result))
        await self._configure()
        await self._unary(self._client.report_progress, req)

    async def failed(self, job_id: str, error: str) -> None:
        """Reports that the job failed (its prepare, its commit, or a read-only tool):
        nothing was done. ``error`` (at most 4 KiB) is passed to the model."""
        job = self._job(job_id)
        job.settled = True
        if job.task is not None and job.task is not asyncio.current_task():
            job.task.cancel()
        await self._complete(job_id, pb.OUTCOME_FAILED, error=error)

    async def close(self, timeout: float = 10.0) -> None:
        """Closes the arbiter session (the model connection ended): delivers the events
        still in the outbox (for at most ``timeout`` seconds; the rest are dropped), then
        CloseSession: undecided jobs are cancelled (their prepares aborted) and
        unanswered ids become dead. Waits up to ``timeout`` seconds for the Decide loops
        to hand out their last actions."""
        if self._closed:
            return
        self._closed = True
        if self._utterances:
            self._warn_untranscribed()
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        await self._outbox.drain(timeout)
        await self._outbox.close()
        try:
            await self._unary(self._client.close_session, pb.CloseSessionRequest(session_id=self.session_id))
        except NotFoundError:
            pass  # nothing was ever reported: there is no session
        except BaseException:
            await self._stop_watch(0)
            raise
        tasks = [j.task for j in self._jobs.values() if j.task is not None and not j.task.done()]
        if tasks:
            _, pending = await asyncio.wait(tasks, timeout=max(0.1, deadline - loop.time()))
            for t in pending:
                t.cancel()
        # CloseSession ends the stream (OK) after the session's last effects.
        await self._stop_watch(max(0.0, min(2.0, deadline - loop.time())))

    def _warn_untranscribed(self) -> None:
        """Logs, once per session and at WARNING (a level an application's default
        logging shows), that the user spoke but no input transcript ever came: input
        transcription is off (or its events are not fed), so the arbiter cannot read a
        stop, and every commit the user's speech holds is cancelled once the policy's
        transcript_timeout passes. Judged on events (a second utterance, the close),
        never on a timer."""
        if self._transcribed or self._untranscribed_warned:
            return
        self._untranscribed_warned = True
        log.warning(
            "arbiter: session %s: the user spoke (%d utterance%s reported by voice activity) and no input transcript "
            "came: is input transcription on? Without the user's words the arbiter cannot read a stop, and every "
            "commit the user talks over is cancelled after the policy's transcript_timeout. Switch it on: Gemini "
            "Live `input_audio_transcription` in the setup, OpenAI Realtime `audio.input.transcription` "
            "(beta: `input_audio_transcription`) in session.update; and feed its events to the adapter.",
            self.session_id, self._utterances, "" if self._utterances == 1 else "s")

    async def poll(self) -> None:
        """Poll: steps the session's timers and acts on every effect after the highest
        ``seq`` acted on without a gap (``after_seq``), the timer-made ones included,
        each once. For agents that run without the Watch (``watch=False``); harmless
        with it. Nothing happens before the session exists."""
        req = pb.PollRequest(session_id=self.session_id, after_seq=self._seqs.high)
        try:
            await self._unary(self._client.poll, req)
        except NotFoundError:
            return  # no session yet: nothing can be due
        except FailedPreconditionError as err:
            # after_seq older than the log keeps: what fell out of it is gone; take
            # what this step makes due.
            log.warning("arbiter: Poll after seq %d: %s; polling without after_seq", req.after_seq, err)
            await self._unary(self._client.poll, pb.PollRequest(session_id=self.session_id))

    # --- internals ---------------------------------------------------------------

    async def _session_lost(self, err: Optional[SessionLostError]) -> None:
        """The store lost the session's current epoch (``err``: the refused event's
        error; None: Connect said so). Once per epoch: releases every undecided job
        (never a commit) and hands out :class:`SessionLost` with the calls still
        unanswered and their jobs."""
        epoch = self.epoch
        if epoch in self._lost_epochs:
            return
        self._lost_epochs.add(epoch)
        pending = [c for c in self._call_jobs if c not in self._answered and c not in self._dead]
        jobs = sorted({self._call_jobs[c] for c in pending if self._call_jobs[c]} |
                      {j.id for j in self._jobs.values() if not j.settled})
        log.error("arbiter: session %s: the arbiter's store lost epoch %s; %d call(s) of unknown outcome (%s), "
                  "job(s) %s; releasing the undecided ones", self.session_id, epoch or "(none)", len(pending),
                  ", ".join(pending) or "none", ", ".join(jobs) or "none")
        reason = "the arbiter's store lost the session: nothing was decided"
        for job in list(self._jobs.values()):
            if job.settled:
                continue
            job.settled = True
            if job.task is not None and job.task is not asyncio.current_task():
                job.task.cancel()
            await self._emit(Cancel(job.id, reason, err) if job.prepared.is_set() else AbortPrepare(job.id, reason, err))
        await self._emit(SessionLost(epoch, tuple(pending), tuple(jobs), err))

    def _busy(self, n: int) -> None:
        self._inflight += n

    def _speech(self, event: "pb.SpeechEvent", utterance_id: str = "") -> "asyncio.Future[None]":
        event_id = self._client.new_event_id()  # once per observed event: the same on every redelivery

        async def send(age: duration_pb2.Duration) -> pb.ReportSpeechResponse:
            req = pb.ReportSpeechRequest(session_id=self.session_id, event=event, age=age, epoch=self.epoch,
                                         utterance_id=utterance_id, event_id=event_id)
            return await self._client.report_speech(req, retry=False)

        what = pb.SpeechEvent.Name(event) + (f", {utterance_id}" if utterance_id else "")
        return self._outbox.put(f"ReportSpeech({what}, event {event_id})", send, self._handed_out)

    def _transcript(self, role: "pb.Role", text: str, *, interim: bool, utterance_id: str = "",
                    reading: Optional["pb.AgentReading"] = None) -> "asyncio.Future[None]":
        event_id = self._client.new_event_id()  # once per observed event: the same on every redelivery

        async def send(age: duration_pb2.Duration) -> pb.ReportTranscriptResponse:
            req = pb.ReportTranscriptRequest(session_id=self.session_id, role=role, text=text, interim=interim, age=age,
                                             epoch=self.epoch, utterance_id=utterance_id, event_id=event_id, reading=reading)
            return await self._client.report_transcript(req, retry=False)

        who = "user" if role == pb.ROLE_USER else "model"
        return self._outbox.put(f"ReportTranscript({who}{', interim' if interim else ''}: {text[:40]!r}, "
                                f"event {event_id})", send, self._handed_out)

    async def _handed_out(self, resp: Any) -> None:
        """What a delivered event's reply made due. ``repeat=true``: the event had been
        applied by an attempt whose answer was lost; its effects are in the session's
        effect log, which the Watch streams (or, with the Watch off, a Poll after the
        highest seq acted on hands out)."""
        self._start_watch()
        if getattr(resp, "repeat", False):
            log.info("arbiter: session %s: an event was applied before (repeat): not applied again", self.session_id)
            if not self.watch:
                await self.poll()
            return
        await self._effects(resp.effects)

    async def _registered(self, resp: pb.RegisterCallResponse, name: str, args: Dict[str, Any]) -> None:
        self._start_watch()
        if resp.call_id:
            self._call_jobs.setdefault(resp.call_id, resp.job_id)
        # DISPOSITION_RUN (and DUPLICATE, REJECT) executes nothing: what is due is in
        # effects. EXECUTE runs job_tool with job_args: the call's own, except for a
        # confirmation call that confirmed a run, which executes the run's tool.
        if resp.disposition == pb.DISPOSITION_EXECUTE and resp.job_id not in self._jobs:
            job_args = json_format.MessageToDict(resp.job_args) if resp.HasField("job_args") else dict(args)
            job = _Job(resp.job_id, Call(resp.call_id, name, args), resp.side_effect)
            self._jobs[job.id] = job
            await self._emit(Execute(job.call, job.id, job.side_effect, resp.business_key,
                                     resp.job_tool or name, job_args, resp.run_id))
            if job.side_effect:
                job.task = asyncio.create_task(self._drive(job), name=f"arbiter-decide-{job.id}")
        await self._effects(resp.effects)

    async def _unary(self, rpc: Callable[[Any], Awaitable[Any]], req: Any) -> Any:
        """Sends a unary RPC whose reply carries effects and acts on them (counted as in
        flight meanwhile, see ``_WATCH_HOLD``)."""
        self._inflight += 1
        try:
            resp = await rpc(req)
            self._start_watch()
            await self._effects(resp.effects)
            return resp
        finally:
            self._inflight -= 1

    # --- Watch ---------------------------------------------------------------------

    def _start_watch(self) -> None:
        """Opens the Watch once the session exists (after an RPC that succeeded)."""
        if self.watch and self._watch_task is None and not self._closed:
            self._watch_task = asyncio.create_task(self._watch_loop(), name=f"arbiter-watch-{self.session_id}")

    async def _watch_loop(self) -> None:
        """Streams the session's effects until the server ends the stream (the session
        closed or expired). The client resumes a lost stream itself; when it gives up,
        this reopens it after the last seq streamed, as long as the core is open."""
        missing = 0  # NOT_FOUND in a row: a session not visible yet (another replica)
        failures = 0
        try:
            while True:
                after = max(self._seqs.high, self._watch_last)
                try:
                    async for w in self._client.watch(self.session_id, after_seq=after):
                        missing = failures = 0
                        self._stream(w)
                    return  # the server ended the stream
                except NotFoundError as err:
                    missing += 1
                    if self._closed or missing > 20:
                        log.warning("arbiter: Watch(%s): %s; no stream (call poll())", self.session_id, err)
                        return
                    await asyncio.sleep(min(0.05 * missing, 0.5))
                except FailedPreconditionError as err:
                    # after_seq beyond the log or older than it keeps: resynchronise.
                    failures += 1
                    if self._closed or failures > 5:
                        log.warning("arbiter: Watch(%s): %s; no stream (call poll())", self.session_id, err)
                        return
                    last = (await self._client.get_session(pb.GetSessionRequest(session_id=self.session_id))).last_seq
                    log.error("arbiter: Watch(%s) after seq %d: %s; resuming after seq %d (what lies between is lost)",
                              self.session_id, after, err, last)
                    self._watch_last = max(self._watch_last, last)
                except ArbiterError as err:
                    if err.code == grpc.StatusCode.UNIMPLEMENTED:
                        log.info("arbiter: the server has no Watch: %s (call poll())", err)
                        return
                    failures += 1
                    if self._closed or failures > 5:
                        log.error("arbiter: Watch(%s): %s; giving up the stream (call poll())", self.session_id, err)
                        return
                    log.warning("arbiter: Watch(%s): %s; reopening", self.session_id, err)
                    await asyncio.sleep(1.0)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("arbiter: Watch(%s)", self.session_id)

    def _stream(self, w: pb.WatchResponse) -> None:
        """One streamed effect: held a moment (``_WATCH_HOLD``), then acted on unless a
        unary reply handed it out meanwhile."""
        self._watch_last = max(self._watch_last, w.seq)
        if w.seq and w.seq in self._seqs:
            return
        self._watched[w.seq] = w
        if self._flush_task is None:
            self._flush_task = asyncio.create_task(self._flush_later(), name=f"arbiter-watch-act-{self.session_id}")

    async def _flush_later(self) -> None:
        loop = asyncio.get_running_loop()
        start = loop.time()
        try:
            await asyncio.sleep(_WATCH_HOLD)
            while self._inflight and loop.time() - start < _WATCH_HOLD_MAX:  # noqa: ASYNC110 - bounded by _WATCH_HOLD_MAX, not an event
                await asyncio.sleep(0.01)
        finally:
            self._flush_task = None
        try:
            await self._flush_watched()
        except Exception:
            log.exception("arbiter: acting on the Watch's effects")

    async def _flush_watched(self) -> None:
        """Acts on the streamed effects held, as one Effects (in seq order per kind)."""
        async with self._flushing:
            held = [self._watched[q] for q in sorted(self._watched)]
            self._watched.clear()
            effects = pb.Effects()
            for w in held:
                kind = w.WhichOneof("effect")
                if kind is not None:
                    getattr(effects, kind + "s").add().CopyFrom(getattr(w, kind))
            await self._effects(effects)

    async def _stop_watch(self, wait: float) -> None:
        """Lets the stream end (it does once the session is closed), up to ``wait``
        seconds, then cancels it; acts on what it streamed."""
        task, self._watch_task = self._watch_task, None
        self.watch = False  # never reopened
        if task is not None:
            if wait > 0 and not task.done():
                await asyncio.wait([task], timeout=wait)
            if not task.done():
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)
        if self._flush_task is not None:
            self._flush_task.cancel()
            self._flush_task = None
        if self._watched:
            await self._flush_watched()

    async def _configure(self) -> None:
        """ConfigureSession, once, before the session's first other RPC (only when the
        core was given options). If it fails, the RPC that needed it is not sent (the
        error propagates) and the next one tries again."""
        if self._configured:
            return
        async with self._configuring:
            if self._configured:
                return
            await self._client.configure_session(
                pb.ConfigureSessionRequest(
                    session_id=self.session_id,
                    language=self.language,
                    response_scheduling=self.response_scheduling,
                    epoch=self.epoch,
                    time_zone=self.time_zone,
                )
            )
            self._configured = True

    def _job(self, job_id: str) -> _Job:
        job = self._jobs.get(job_id)
        if job is None:
            raise KeyError(f"job_id: {job_id!r} is not a job this adapter executed")
        return job

    # --- Decide / Complete -------------------------------------------------------------

    async def _drive(self, job: _Job) -> None:
        """The Decide loop of one side-effecting job."""
        try:
            resp = await self._decide(job)
        except asyncio.CancelledError:
            raise
        except Exception as err:  # noqa: BLE001 - fail closed, whatever went wrong
            if job.settled:
                return
            job.settled = True
            if isinstance(err, UndeliveredEventsError):
                reason, error = str(err), "the events observed could not be delivered, so no decision was asked; nothing was done"
            else:
                reason, error = f"no decision from the arbiter: {err}", "the arbiter could not be reached; nothing was done"
            log.error("arbiter: job %s: %s; releasing the job (no commit)", job.id, reason)
            cause = err if isinstance(err, ArbiterError) else None
            release: Action = Cancel(job.id, reason, cause) if job.prepared.is_set() else AbortPrepare(job.id, reason, cause)
            try:
                await self._emit(release)
                if isinstance(err, NotFoundError) and err.reason == "SESSION_NOT_FOUND":
                    return  # no session to report into (expired, or its store lost it)
                await self._complete(job.id, pb.OUTCOME_FAILED, error=error)
            except Exception:
                log.exception("arbiter: reporting job %s as failed", job.id)
            return
        if job.settled:
            return
        job.settled = True
        try:
            if resp.decision == pb.DECISION_COMMIT:
                await self._emit(Commit(job.id, resp.reason))
            else:
                await self._emit(Cancel(job.id, resp.reason) if job.prepared.is_set() else AbortPrepare(job.id, resp.reason))
                await self._complete(job.id, pb.OUTCOME_CANCELLED)
        except Exception:
            log.exception("arbiter: handing out the decision for job %s", job.id)

    async def _decide(self, job: _Job) -> pb.DecideResponse:
        """Long-polls Decide until COMMIT or CANCEL, under the Decide contract (see the
        module doc). While the prepare runs it asks with prepared=false, and re-asks with
        prepared=true the moment the app reports it. Before each Decide it waits until
        every event observed so far was delivered (:meth:`_await_delivered`); a Decide
        waiting when an event gets stuck (the outbox's ``on_stuck``) is cancelled and
        asked again after that wait. A COMMIT received is returned: it stands.

        A Decide that fails with UNAVAILABLE, DEADLINE_EXCEEDED or CANCELLED after the
        service config's attempts (a store outage longer than they last, a replica
        draining with no other to answer) is asked again, backing off as the client's
        :class:`RetryPolicy` says, until ``max_elapsed`` seconds have passed since the
        first such failure in a row; then its error is raised (the job is released,
        never committed). Decide changes nothing but the prepared flag: asking again is
        safe."""
        await self._configure()
        loop = asyncio.get_running_loop()
        policy = self._client.retry
        failing: Optional[float] = None  # when the failures in a row began
        delay = policy.initial_backoff
        while True:
            if self._outbox.settled < self._outbox.observed:
                await self._await_delivered(failing)
                continue  # more may have been observed meanwhile
            # Nothing is undelivered from here until the request is sent (no await between).
            prepared = job.prepared.is_set()
            decide = asyncio.ensure_future(
                self._client.decide(
                    # events_delivered: this core follows the delivery contract (module
                    # doc), so the arbiter need not withhold a late commit from it.
                    pb.DecideRequest(
                        session_id=self.session_id, job_id=job.id, prepared=prepared, wait=self._wait, events_delivered=True
                    )
                )
            )
            stuck: asyncio.Future[str] = loop.create_future()
            unlisten = self._outbox.on_stuck(_set_once(stuck))
            try:
                waiting: Set["asyncio.Future[Any]"] = {decide, stuck}
                ready = None
                if not prepared:
                    ready = asyncio.ensure_future(job.prepared.wait())
                    waiting.add(ready)
                try:
                    await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
                finally:
                    if ready is not None:
                        ready.cancel()
                if not decide.done():
                    if stuck.done():
                        # The answer did not arrive before the abort: nothing stands.
                        log.warning("arbiter: job %s: Decide aborted (%s); asking again once the events observed "
                                    "are delivered", job.id, stuck.result())
                    continue  # stuck, or prepared meanwhile (ask again with prepared=true)
                resp = decide.result()  # an answer that arrived stands, stuck or not
            except ArbiterError as err:
                if err.code not in _DECIDE_RETRIED:
                    raise
                now = loop.time()
                failing = now if failing is None else failing
                pause = delay * random.uniform(0.5, 1.0)
                if err.retry_delay is not None:
                    pause = max(err.retry_delay, pause)
                if now - failing + pause > policy.max_elapsed:
                    raise
                log.warning("arbiter: job %s: %s; asking again in %.2fs", job.id, err, pause)
                await asyncio.sleep(pause)
                delay = min(delay * policy.multiplier, policy.max_backoff)
                continue
            finally:
                unlisten()
                decide.cancel()  # a no-op once it is done; cancels the RPC otherwise
            failing, delay = None, policy.initial_backoff
            if resp.decision == pb.DECISION_COMMIT:
                late = self._outbox.observed - self._outbox.settled
                if late:
                    log.warning("arbiter: job %s: acting on COMMIT; %d event(s) observed while its Decide was open "
                                "were not delivered yet: the arbiter places them after the commit", job.id, late)
                return resp
            if resp.decision == pb.DECISION_CANCEL:
                return resp

    async def _await_delivered(self, failing: Optional[float]) -> None:
        """Waits until every event observed so far was delivered (or dropped), before a
        Decide. Raises :class:`UndeliveredEventsError` if the session closed first, or if
        they are still undelivered ``max_elapsed`` seconds (the client's
        :class:`RetryPolicy`) after ``failing`` (the loop time the job's Decide failures
        in a row began; now if none): the arbiter is unreachable, as a Decide failing
        that long would say. Cancelled with the job's task (closed, lost)."""
        loop = asyncio.get_running_loop()
        max_elapsed = self._client.retry.max_elapsed
        since = loop.time() if failing is None else failing
        left = max(0.0, max_elapsed - (loop.time() - since))
        try:
            ok = await asyncio.wait_for(self._outbox.wait_settled(self._outbox.observed), left)
        except asyncio.TimeoutError:
            raise UndeliveredEventsError(
                f"the events observed were still undelivered after {max_elapsed:g} s (the retry policy's "
                "max_elapsed); no Decide was asked") from None
        if not ok:
            raise UndeliveredEventsError(
                "the session closed before the events observed were delivered; no Decide was asked")

    async def _complete(self, job_id: str, outcome: "pb.Outcome", *, result: Optional[Mapping[str, Any]] = None,
                        error: str = "") -> None:
        req = pb.CompleteRequest(session_id=self.session_id, job_id=job_id, outcome=outcome, error=error)
        if result:
            req.result.update(dict(result))
        await self._configure()
        await self._unary(self._client.complete, req)

    # --- effects -> actions ------------------------------------------------------------

    async def _effects(self, effects: pb.Effects) -> None:
        # Each effect is acted on once per seq, wherever it came from (a unary reply, a
        # retried one, the Watch, a Poll): claim the new ones before acting on any, so
        # that a concurrent path skips them. Effects without a seq (older servers) pass.
        fresh = pb.Effects()
        for kind in ("responses", "skips", "notes", "runs"):
            for m in getattr(effects, kind):
                if m.seq:
                    if m.seq in self._seqs:
                        continue
                    self._seqs.add(m.seq)
                getattr(fresh, kind).add().CopyFrom(m)
        effects = fresh
        # A note via FUNCTION_RESPONSE is already in the payload ("status_note") of its
        # call's response in these same effects: that response carries its scheduling,
        # and the note is not sent again as a user turn.
        riders: Dict[str, pb.Note] = {}
        for n in effects.notes:
            if n.via == pb.NOTE_VIA_FUNCTION_RESPONSE and n.call_id:
                riders.setdefault(n.call_id, n)
        carried: Set[str] = set()  # call ids whose response went out carrying a note
        for r in effects.responses:
            if r.interim:
                await self._interim(r)
                continue
            if r.call_id in self._dead:
                log.warning("arbiter: dropping a response for dead call %s", r.call_id)
                continue
            if r.call_id in self._answered:
                continue  # a retried RPC returns the same answer: send it once
            self._answered.add(r.call_id)
            payload = json_format.MessageToDict(r.payload)
            rider = riders.get(r.call_id)
            scheduling = _SCHEDULING.get(rider.scheduling) if rider is not None else None
            if rider is not None:
                carried.add(r.call_id)
            await self._emit(SendFunctionResponse(r.call_id, r.name, payload, r.job_id, scheduling, seq=r.seq))
        for s in effects.skips:
            if s.call_id in self._dead or s.call_id in self._answered:
                continue
            self._dead.add(s.call_id)
            await self._emit(Skip(s.call_id, s.name, s.reason, s.job_id, seq=s.seq))
        for n in effects.notes:
            if (n.job_id, n.run_id, n.text) in self._notes:
                continue
            self._notes.add((n.job_id, n.run_id, n.text))
            if n.via == pb.NOTE_VIA_FUNCTION_RESPONSE:
                if n.call_id in carried:
                    continue  # it rode on that function response
                # Its response was not handed out here (dead, or answered before): the
                # model would never see it, so it goes as a user turn, as `deliver` says.
                log.warning("arbiter: the note for job %s rides on call %s, whose response was not handed out: "
                            "sending it as a user turn", n.job_id, n.call_id)
            when: Literal["now", "when_idle"] = "when_idle" if n.deliver == pb.DELIVERY_WHEN_IDLE else "now"
            await self._emit(SendNote(n.text, when, n.job_id, n.why, seq=n.seq))
        for u in effects.runs:
            key = u.seq or (u.run_id, u.state, u.call_id)
            if key in self._runs:
                continue  # a retried RPC returns the same update
            self._runs.add(key)
            await self._emit(RunUpdate(u.run_id, u.tool, _RUN_STATE.get(u.state, ""), u.call_id, u.job_id, u.reason,
                                     seq=u.seq))

    async def _interim(self, r: pb.FunctionResponse) -> None:
        """A non-final response (ReportProgress): handed out with ``will_continue`` while
        its call is live and unanswered; never marks the call answered."""
        if r.call_id in self._dead or r.call_id in self._answered:
            return
        payload = json_format.MessageToDict(r.payload)
        key = r.seq or (r.call_id, r.payload.SerializeToString(deterministic=True))
        if key in self._interims:
            return  # a retried RPC returns the same interim response
        self._interims.add(key)
        await self._emit(SendFunctionResponse(r.call_id, r.name, payload, r.job_id, None, True, seq=r.seq))

    async def _emit(self, action: Action) -> None:
        out = self._on_action(action)
        if inspect.isawaitable(out):
            await out
