"""LiveAdapter: puts the arbiter in a Gemini Live (google-genai) receive loop.

The application feeds the adapter every server message (a google-genai
``LiveServerMessage``, or a dict with the same snake_case field names) and handles the
plain actions of :mod:`arbiter_client.actions` that come back through ``on_action``.
The adapter owns the API choreography: RegisterCall for each function call, ReportSpeech
and ReportTranscript for voice activity, model output and transcription,
ReportToolCallCancellation, and for every side-effecting job a Decide long-poll that runs
while the prepare does (prepared=false: it returns early only to cancel) and after it
(prepared=true), then Complete. It hands out at most one function response per call id
and none for ids the arbiter declared dead. Given session options (``language``,
``response_scheduling``), it sends ConfigureSession once, before the session's first
other RPC.

A status note the arbiter puts in a function response (``NOTE_VIA_FUNCTION_RESPONSE``:
the text is in the payload under ``"status_note"``) is handed out as that response's
``scheduling``, never again as a :class:`SendNote` user turn.

A Decide that fails is never a commit: when the arbiter cannot be reached (after the
client's retries) the job is released (:class:`AbortPrepare` or :class:`Cancel` with
``error`` set) and reported as failed.

Confirm-then-act runs: a call the arbiter answers ``DISPOSITION_RUN`` executes nothing;
its prompt (what to ask the user, which confirmation tool to call) comes as a
:class:`SendFunctionResponse`. The confirmation call that confirms the run comes as an
:class:`Execute` of the run's tool (``Execute.tool``/``args``), answered on the
confirmation call's id. Run state changes come as :class:`RunUpdate` (informational).

Reconnects: :meth:`LiveAdapter.reconnect` reports a new model connection (Connect); the
calls still pending from the earlier one come back as :class:`Skip` (reason
``connection_closed``) and their outcomes as notes. Interim results
(:meth:`LiveAdapter.progress`) come back as non-final responses
(``SendFunctionResponse.will_continue``). A commit whose outcome the backend cannot
tell is reported with :meth:`LiveAdapter.unknown`, and its truth later with
:meth:`LiveAdapter.committed` or :meth:`LiveAdapter.failed`.

Timer-made effects (a call's max_pending deadline answer, a confirm-then-act run that
expires, the claim check of an interrupted turn) are due when no RPC of the agent is in
flight. By default the adapter holds a Watch on the session (opened after its first
successful RPC, ended by :meth:`LiveAdapter.close`) and acts on what it streams, so
those reach the agent in a quiet session too. Every effect is acted on once per
``seq``, whether it comes first in a unary reply, on the Watch, or from
:meth:`LiveAdapter.poll` (effects without a ``seq``, from older servers, are acted on as
they come). An agent that cannot hold a stream passes ``watch=False`` and calls
:meth:`LiveAdapter.poll` on a beat instead.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, Dict, Mapping, Optional, Set, Tuple, Union

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
    SendFunctionResponse,
    SendNote,
    Skip,
)
from .client import ArbiterClient
from .errors import ArbiterError, FailedPreconditionError, NotFoundError
from .v1 import arbiter_pb2 as pb

log = logging.getLogger("arbiter_client")

#: What ``on_action`` may be: a plain function or a coroutine function.
ActionHandler = Callable[[Action], Union[None, Awaitable[None]]]

_BEHAVIOR = {
    None: pb.BEHAVIOR_UNSPECIFIED,
    "BLOCKING": pb.BEHAVIOR_BLOCKING,
    "NON_BLOCKING": pb.BEHAVIOR_NON_BLOCKING,
}

_RUN_STATE = {
    pb.RUN_STATE_OPENED: "opened",
    pb.RUN_STATE_CONFIRMED: "confirmed",
    pb.RUN_STATE_REFUSED: "refused",
    pb.RUN_STATE_EXPIRED: "expired",
    pb.RUN_STATE_CANCELLED: "cancelled",
}

_SCHEDULING = {
    pb.SCHEDULING_WHEN_IDLE: "WHEN_IDLE",
    pb.SCHEDULING_INTERRUPT: "INTERRUPT",
    pb.SCHEDULING_SILENT: "SILENT",
}


@dataclass
class _Job:
    id: str
    call: Call
    side_effect: bool
    prepared: asyncio.Event = field(default_factory=asyncio.Event)
    settled: bool = False  # decided locally (commit/cancel handed out) or reported failed
    task: Optional[asyncio.Task] = None


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


#: Watch: an effect streamed is acted on after this delay (seconds), and once no unary
#: RPC of the adapter is in flight (at most ``_WATCH_HOLD_MAX``), so the reply that
#: carries it, which usually lands a moment later, hands it out in its own order.
_WATCH_HOLD = 0.05
_WATCH_HOLD_MAX = 0.5


class LiveAdapter:
    """Drives one arbiter session from one Live session's server messages.

    Args:
        client: the :class:`ArbiterClient`.
        session_id: the arbiter session id (one per model connection), 1 to 128
            characters from ``[A-Za-z0-9_.:-]``.
        on_action: called with each :class:`~arbiter_client.actions.Action`, in order;
            may be a coroutine function (awaited). Keep it short: start prepares and
            commits as tasks, since feed() waits for it.
        behaviors: each tool's ``FunctionDeclaration.behavior`` (``"BLOCKING"`` or
            ``"NON_BLOCKING"``); tools not named use the arbiter's tool policy.
        decide_wait: seconds each Decide long-poll waits (the server caps it at 30).
        language: the session's language as a BCP 47 tag (``"en"``, ``"es-MX"``): which
            stop and amend phrases the arbiter listens for. ``None``: the arbiter's
            default (English).
        response_scheduling: ``True`` when the provider honours a function response's
            scheduling (Gemini Live, NON_BLOCKING calls): then a status note may ride on
            a function response (:attr:`SendFunctionResponse.scheduling`) instead of a
            user turn. When this or ``language`` is set, the adapter sends
            ConfigureSession once, before the session's first other RPC.
        watch: ``True`` (default): hold a Watch on the session (opened after the first
            RPC that succeeds, closed by :meth:`close`) and act on every effect it
            streams, the timer-made ones included. ``False``: no stream; call
            :meth:`poll` on a beat (e.g. every second, or when
            ``GetSessionResponse.next_timer`` passes) to get those.

    Attribute ``tool_choice`` (``"auto"`` or ``"none"``) is the tool choice the model
    currently runs under: set it to ``"none"`` while the generation runs with
    ``toolChoice: none``, and calls that still arrive are rejected (answered at once).
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
    ) -> None:
        self.session_id = session_id
        self.language = language or ""
        self.response_scheduling = bool(response_scheduling)
        self._configured = not (self.language or self.response_scheduling)  # nothing to send
        self._configuring = asyncio.Lock()
        self.behaviors: Dict[str, str] = dict(behaviors or {})
        self.tool_choice = "auto"
        self._client = client
        self._on_action = on_action
        self._wait = duration_pb2.Duration()
        self._wait.FromNanoseconds(int(decide_wait * 1e9))
        self._jobs: Dict[str, _Job] = {}
        self._answered: Set[str] = set()
        self._dead: Set[str] = set()
        self._notes: Set[Tuple[str, str, str]] = set()
        self._interims: Set[Any] = set()  # seqs (or contents) of interim responses handed out
        self._runs: Set[Any] = set()  # seqs (or contents) of run updates handed out
        self.connection_id = ""
        self._model_speaking = False
        self._closed = False
        self._seqs = _Seqs()  # the seqs acted on
        self.watch = bool(watch)
        self._watch_task: Optional[asyncio.Task] = None
        self._watch_last = 0  # the highest seq the Watch streamed
        self._watched: Dict[int, pb.WatchResponse] = {}  # streamed, not acted on yet
        self._flush_task: Optional[asyncio.Task] = None
        self._flushing = asyncio.Lock()
        self._inflight = 0  # unary RPCs (with their effects) under way

    # --- what the model server sends ------------------------------------------------

    async def feed(self, message: Any) -> None:
        """Reports one Live server message to the arbiter and hands out what it made due.

        Feed messages in the order they arrive, one at a time. Raises
        :class:`~arbiter_client.errors.ArbiterError` when an RPC fails (the rest of that
        message is not reported); the adapter stays usable.
        """
        va = _get(message, "voice_activity")
        if va is not None:
            kind = _enum(_get(va, "voice_activity_type"))
            if kind == "ACTIVITY_START":
                await self._speech(pb.SPEECH_EVENT_USER_ACTIVITY_START)
            elif kind == "ACTIVITY_END":
                await self._speech(pb.SPEECH_EVENT_USER_ACTIVITY_END)
        sc = _get(message, "server_content")
        if sc is not None:
            await self._server_content(sc)
        tc = _get(message, "tool_call")
        if tc is not None:
            for fc in _get(tc, "function_calls") or []:
                await self._register(fc)
        tcc = _get(message, "tool_call_cancellation")
        ids = list(_get(tcc, "ids") or []) if tcc is not None else []
        if ids:
            await self._configure()
            await self._unary(self._client.report_tool_call_cancellation,
                              pb.ReportToolCallCancellationRequest(session_id=self.session_id, call_ids=ids))

    async def _server_content(self, sc: Any) -> None:
        # Gemini's input transcription arrives as pieces the arbiter appends to the
        # utterance: each is final (checked for stop intent); interim ones are not.
        await self._transcript(pb.ROLE_USER, _get(sc, "interim_input_transcription"), interim=True)
        await self._transcript(pb.ROLE_USER, _get(sc, "input_transcription"), interim=False)
        if not self._model_speaking and _has_audio(_get(sc, "model_turn")):
            self._model_speaking = True
            await self._speech(pb.SPEECH_EVENT_MODEL_OUTPUT_START)
        await self._transcript(pb.ROLE_MODEL, _get(sc, "output_transcription"), interim=False)
        if _get(sc, "interrupted"):
            self._model_speaking = False
            await self._speech(pb.SPEECH_EVENT_INTERRUPTED)
        if _get(sc, "generation_complete"):
            await self._speech(pb.SPEECH_EVENT_MODEL_GENERATION_COMPLETE)
        if _get(sc, "turn_complete"):
            self._model_speaking = False
            await self._speech(pb.SPEECH_EVENT_MODEL_TURN_COMPLETE)

    async def _transcript(self, role: int, transcription: Any, *, interim: bool) -> None:
        text = _get(transcription, "text")
        if not text or (role == pb.ROLE_USER and not text.strip()):
            return
        await self._configure()
        await self._unary(self._client.report_transcript,
                          pb.ReportTranscriptRequest(session_id=self.session_id, role=role, text=text, interim=interim))

    async def _speech(self, event: int) -> None:
        await self._configure()
        await self._unary(self._client.report_speech, pb.ReportSpeechRequest(session_id=self.session_id, event=event))

    async def _register(self, fc: Any) -> None:
        name = _get(fc, "name") or ""
        args = dict(_get(fc, "args") or {})
        req = pb.RegisterCallRequest(
            session_id=self.session_id,
            call_id=_get(fc, "id") or "",
            tool=name,
            behavior=_BEHAVIOR.get(self.behaviors.get(name), pb.BEHAVIOR_UNSPECIFIED),
            tool_choice=pb.TOOL_CHOICE_NONE if self.tool_choice == "none" else pb.TOOL_CHOICE_AUTO,
        )
        req.args.update(args)
        await self._configure()
        self._inflight += 1
        try:
            await self._register_call(req, name, args)
        finally:
            self._inflight -= 1

    async def _register_call(self, req: pb.RegisterCallRequest, name: str, args: Dict[str, Any]) -> None:
        resp = await self._client.register_call(req)
        self._start_watch()
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

    # --- what the application reports ------------------------------------------------

    async def prepared(self, job_id: str) -> None:
        """Reports that the job's prepare finished: the adapter now asks Decide with
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
        req = pb.ReportProgressRequest(session_id=self.session_id, job_id=job_id)
        if result:
            req.result.update(dict(result))
        await self._configure()
        await self._unary(self._client.report_progress, req)

    async def reconnect(self, connection_id: str) -> None:
        """Reports that the agent now talks to the model over a new connection (a
        reconnect, Gemini session resumption) with id ``connection_id``: Connect. Calls
        still pending from earlier connections come back as :class:`Skip` (reason
        ``connection_closed``): never answer them on the new connection. Their jobs go
        on, and each outcome is handed out as a :class:`SendNote`. Call it for the first
        connection too, so that the calls made on it are known to be its own."""
        await self._configure()

        def connected(_resp) -> None:
            self.connection_id = connection_id
            self._model_speaking = False  # a new connection: nothing is playing

        await self._unary(self._client.connect,
                          pb.ConnectRequest(session_id=self.session_id, connection_id=connection_id), connected)

    async def failed(self, job_id: str, error: str) -> None:
        """Reports that the job failed (its prepare, its commit, or a read-only tool):
        nothing was done. ``error`` (at most 4 KiB) is passed to the model."""
        job = self._job(job_id)
        job.settled = True
        if job.task is not None and job.task is not asyncio.current_task():
            job.task.cancel()
        await self._complete(job_id, pb.OUTCOME_FAILED, error=error)

    async def close(self, timeout: float = 10.0) -> None:
        """Closes the arbiter session (the model connection ended): undecided jobs are
        cancelled (their prepares aborted) and unanswered ids become dead. Waits up to
        ``timeout`` seconds for the Decide loops to hand out their last actions."""
        if self._closed:
            return
        self._closed = True
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        try:
            await self._unary(self._client.close_session, pb.CloseSessionRequest(session_id=self.session_id))
        except NotFoundError:
            pass  # nothing was ever reported: there is no session
        except BaseException:
            await self._stop_watch(0)
            raise
        tasks = [j.task for j in self._jobs.values() if j.task is not None and not j.task.done()]
        if tasks:
            _, pending = await asyncio.wait(tasks, timeout=timeout)
            for t in pending:
                t.cancel()
        # CloseSession ends the stream (OK) after the session's last effects.
        await self._stop_watch(max(0.0, min(2.0, deadline - loop.time())))

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

    async def _unary(self, rpc, req, then: Optional[Callable[[Any], None]] = None):
        """Sends a unary RPC whose reply carries effects and acts on them (counted as in
        flight meanwhile, see ``_WATCH_HOLD``)."""
        self._inflight += 1
        try:
            resp = await rpc(req)
            if then is not None:
                then(resp)
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
        this reopens it after the last seq streamed, as long as the adapter is open."""
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
        except Exception:  # noqa: BLE001 - a background task: log, never raise into the void
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
            while self._inflight and loop.time() - start < _WATCH_HOLD_MAX:
                await asyncio.sleep(0.01)
        finally:
            self._flush_task = None
        try:
            await self._flush()
        except Exception:  # noqa: BLE001
            log.exception("arbiter: acting on the Watch's effects")

    async def _flush(self) -> None:
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
            await self._flush()

    async def _configure(self) -> None:
        """ConfigureSession, once, before the session's first other RPC (only when the
        adapter was given options). If it fails, the RPC that needed it is not sent (the
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
                )
            )
            self._configured = True

    def _job(self, job_id: str) -> _Job:
        job = self._jobs.get(job_id)
        if job is None:
            raise KeyError(f"job_id: {job_id!r} is not a job this adapter executed")
        return job

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
            log.error("arbiter: Decide(%s) failed, releasing the job (no commit): %s", job.id, err)
            reason = f"no decision from the arbiter: {err}"
            release = Cancel if job.prepared.is_set() else AbortPrepare
            try:
                await self._emit(release(job.id, reason, err if isinstance(err, ArbiterError) else None))
                await self._complete(job.id, pb.OUTCOME_FAILED, error="the arbiter could not be reached; nothing was done")
            except Exception:  # noqa: BLE001 - a background task: log, never raise into the void
                log.exception("arbiter: reporting job %s as failed", job.id)
            return
        if job.settled:
            return
        job.settled = True
        try:
            if resp.decision == pb.DECISION_COMMIT:
                await self._emit(Commit(job.id, resp.reason))
            else:
                release = Cancel if job.prepared.is_set() else AbortPrepare
                await self._emit(release(job.id, resp.reason))
                await self._complete(job.id, pb.OUTCOME_CANCELLED)
        except Exception:  # noqa: BLE001
            log.exception("arbiter: handing out the decision for job %s", job.id)

    async def _decide(self, job: _Job) -> pb.DecideResponse:
        """Long-polls Decide until COMMIT or CANCEL. While the prepare runs it asks with
        prepared=false, and re-asks with prepared=true the moment the app reports it."""
        await self._configure()
        while True:
            prepared = job.prepared.is_set()
            decide = asyncio.ensure_future(
                self._client.decide(
                    pb.DecideRequest(session_id=self.session_id, job_id=job.id, prepared=prepared, wait=self._wait)
                )
            )
            try:
                if not prepared:
                    ready = asyncio.ensure_future(job.prepared.wait())
                    try:
                        await asyncio.wait({decide, ready}, return_when=asyncio.FIRST_COMPLETED)
                    finally:
                        ready.cancel()
                    if not decide.done():
                        continue  # prepared meanwhile: ask again with prepared=true
                resp = await decide
            finally:
                decide.cancel()  # a no-op once it is done
            if resp.decision in (pb.DECISION_COMMIT, pb.DECISION_CANCEL):
                return resp

    async def _complete(self, job_id: str, outcome: int, *, result=None, error: str = "") -> None:
        req = pb.CompleteRequest(session_id=self.session_id, job_id=job_id, outcome=outcome, error=error)
        if result:
            req.result.update(dict(result))
        await self._configure()
        await self._unary(self._client.complete, req)

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
            when = "when_idle" if n.deliver == pb.DELIVERY_WHEN_IDLE else "now"
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


def _get(obj: Any, name: str) -> Any:
    """Field ``name`` of a google-genai object or a dict (snake_case, or camelCase as in
    the wire JSON)."""
    if obj is None:
        return None
    if isinstance(obj, Mapping):
        if name in obj:
            return obj[name]
        head, *rest = name.split("_")
        return obj.get(head + "".join(w.title() for w in rest))
    return getattr(obj, name, None)


def _enum(v: Any) -> Optional[str]:
    """An enum's name, whether given as a str, a str Enum or an Enum."""
    if v is None:
        return None
    return str(getattr(v, "value", v))


def _has_audio(model_turn: Any) -> bool:
    for part in _get(model_turn, "parts") or []:
        data = _get(part, "inline_data")
        if data is not None and str(_get(data, "mime_type") or "audio").startswith("audio"):
            return True
    return False
