"""Tool helpers for agents behind the wire guard (``arbiter serve --proxy-listen``).

Behind the guard the agent reports nothing by hand: the guard reads every server
message off the WebSocket, registers each function call, answers the calls the
arbiter answers itself (duplicates, rejected calls, calls under tool choice none),
hands the agent only the calls it is to execute, and makes sure exactly one function
response per live call id reaches the model, the arbiter's. What is left for the
agent's code is the one thing only the tool can do: run a side effect in two phases,
and only commit it when the arbiter says so. A tool knows its call's id (the id the
framework hands it: LiveKit ``ctx.function_call.call_id``, Pipecat
``params.tool_call_id``, google-genai ``FunctionCall.id``, OpenAI ``call_id``); that is
all these helpers need. Read-only tools need no code at all.

Two forms, the same protocol:

:class:`ToolJob`, an async context manager, for a tool written out by hand::

    async def book_slot(ctx, slot: str):
        async with ToolJob(client, ctx.function_call.call_id) as job:
            hold = await job.preparing(backend.prepare(slot))  # aborted if the arbiter cancels meanwhile
            if await job.commit():                              # Decide(prepared=True) until COMMIT or CANCEL
                return await job.committed(await backend.commit(hold))
            await backend.release(hold)
            return await job.cancelled()

:func:`two_phase`, a decorator, when the tool is its prepare step::

    @two_phase(client, call_id=lambda ctx, slot: ctx.function_call.call_id,
               commit=backend.commit, release=backend.release)
    async def book_slot(ctx, slot: str):
        \"\"\"Book an appointment slot.\"\"\"          # the framework still sees this signature
        return await backend.prepare(slot)              # the hold commit/release get

Either returns the payload the arbiter answers the call with (``{"status":
"committed", "result": {...}}``, ``{"status": "cancelled", "executed": false, ...}``):
return it from the tool. The guard sends the arbiter's own response whatever the
framework makes of the return value, so this is only for the framework's view.

What each step asks (all by call id, the session found by the guard's index):

- entering: ``Decide(call_id, prepared=False, wait=0)``: tells the arbiter this tool
  reports (so a framework's own answer for the call, a "CANCELLED" on barge-in or an
  error text, is held by the guard instead of reaching the model), and refuses a call
  that executes nothing (:class:`~arbiter_client.errors.FailedPreconditionError`);
- :meth:`ToolJob.preparing`: runs the prepare while a ``Decide(prepared=False)``
  long-poll watches for a CANCEL (a stop heard meanwhile): then the prepare is
  cancelled and :class:`Cancelled` raised inside it (the job is reported cancelled on
  leaving the block);
- :meth:`ToolJob.commit`: ``Decide(prepared=True)`` until COMMIT (True) or CANCEL
  (False);
- :meth:`ToolJob.committed`, :meth:`ToolJob.cancelled`, :meth:`ToolJob.failed`,
  :meth:`ToolJob.unknown`: ``Complete`` with that outcome;
- leaving the block without one: after a CANCEL, ``Complete(CANCELLED)``; else an
  exception is ``Complete(FAILED)`` with its text before a commit decision,
  ``Complete(UNKNOWN)`` after one (the backend may have committed); leaving normally
  without reporting is ``Complete(FAILED)`` ("the tool reported no outcome").

Failures: each RPC is retried by the client's service config; a Decide that still
fails (the arbiter's store is down) is asked again, backing off, for up to
``max_elapsed`` seconds, then the job fails closed: nothing is committed, the prepare
is released, :class:`ArbiterUnavailable` is raised from :meth:`ToolJob.commit` (the
decorator returns a ``{"status": "failed", "executed": false}`` payload instead). The
commit never happens on a decision the tool did not get.

Limit: the guard reports what the model server says (a stop in the user's speech)
within a store round trip; a COMMIT handed to the tool in that window, or while the
guard's reports wait for a store that is coming back, is not held back as the
adapters' commit rule holds it (the guard and the tool are different processes).
"""

from __future__ import annotations

import asyncio
import functools
import logging
import random
import time
from typing import Any, Awaitable, Callable, Dict, List, Mapping, Optional, TypeVar

import grpc
from google.protobuf import duration_pb2, json_format, struct_pb2

from .client import ArbiterClient
from .errors import ArbiterError
from .v1 import arbiter_pb2 as pb

__all__ = ["ArbiterUnavailable", "Cancelled", "JobTaken", "ToolJob", "two_phase"]

log = logging.getLogger("arbiter_client.tool")

T = TypeVar("T")

#: Codes on which a job's Decide is asked again (after the service config's attempts).
_AGAIN = {grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED}


class Cancelled(Exception):
    """The arbiter cancelled the job while its prepare ran (raised inside the prepare's
    task, and out of :meth:`ToolJob.preparing`)."""


class JobTaken(Exception):
    """The job was already told to commit before this run prepared anything: another
    run of the same job owns it (the provider issued the call id again in the same
    session, as a retry or after a reconnect, and the framework ran the tool again).
    Raised by entering :class:`ToolJob`; nothing is reported for this run, and it must
    not prepare or commit (the side effect would happen twice): the arbiter answers
    the call itself."""


class ArbiterUnavailable(Exception):
    """The arbiter could not be asked for ``max_elapsed`` seconds: the job fails closed
    (nothing committed)."""


def _duration(seconds: float) -> duration_pb2.Duration:
    d = duration_pb2.Duration()
    d.FromNanoseconds(int(seconds * 1e9))
    return d


def _struct(m: Optional[Mapping[str, Any]]) -> Optional[struct_pb2.Struct]:
    if m is None:
        return None
    s = struct_pb2.Struct()
    s.update(dict(m))
    return s


class ToolJob:
    """One side-effecting function call's job, named by its call id (see the module
    doc). Use it as ``async with ToolJob(client, call_id) as job:``; one task at a
    time.

    Args:
        client: the :class:`~arbiter_client.client.ArbiterClient`.
        call_id: the function call's id, as the framework hands it to the tool.
        session_id: the arbiter session, when the tool knows it (optional: the guard
            indexes its calls, so the call id alone finds it).
        decide_wait: how long each Decide long-poll waits, in seconds (the server caps
            it at 30).
        max_elapsed: how long, in seconds, failed Decides are asked again before the
            job fails closed.
    """

    def __init__(
        self,
        client: ArbiterClient,
        call_id: str,
        *,
        session_id: str = "",
        decide_wait: float = 20.0,
        max_elapsed: float = 20.0,
    ) -> None:
        if not call_id:
            raise ValueError("call_id is required: the id the framework hands the tool")
        self.client = client
        self.call_id = call_id
        self.session_id = session_id
        self.decide_wait = decide_wait
        self.max_elapsed = max_elapsed
        #: The job id, once the arbiter named it.
        self.job_id = ""
        #: COMMIT was decided (the backend may have committed from here on).
        self.decided_commit = False
        #: CANCEL was decided (while preparing, or at the commit step).
        self.decided_cancel = False
        #: The payload the arbiter answered the call with, once reported.
        self.payload: Optional[Dict[str, Any]] = None
        self._reported = False

    # -- the protocol ------------------------------------------------------------------

    async def __aenter__(self) -> "ToolJob":
        d = await self._decide(prepared=False, wait=0.0)
        if d.decision == pb.DECISION_COMMIT:
            # A commit is decided only after a prepare: another run of this job made it.
            self._reported = True  # that run reports
            raise JobTaken(f"call {self.call_id}: job {d.job_id} was already told to commit (another run of it, "
                           "for the same call id): not run again")
        return self

    async def __aexit__(self, typ: Any, exc: Any, tb: Any) -> None:
        if self._reported:
            return
        try:
            if self.decided_cancel:
                await self.cancelled()
            elif exc is None:
                await self.failed("the tool reported no outcome")
            elif self.decided_commit:
                await self.unknown()  # the backend may have committed before the error
            else:
                await self.failed(f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__)
        except (ArbiterError, ArbiterUnavailable) as err:  # the tool's own exception (if any) propagates
            log.error("arbiter: call %s: reporting the outcome failed: %s", self.call_id, err)

    async def preparing(self, prepare: Awaitable[T]) -> T:
        """Runs ``prepare`` (the slow, reversible phase) while a ``Decide(prepared=False)``
        long-poll watches for a CANCEL; returns its result. On CANCEL the prepare's task
        is cancelled and :class:`Cancelled` raised (leaving the block reports the job
        cancelled). A watch that fails leaves the prepare running: the commit decision
        is asked for afterwards anyway."""
        task: "asyncio.Future[T]" = asyncio.ensure_future(prepare)
        watch: "asyncio.Future[bool]" = asyncio.ensure_future(self._watch_cancel())
        try:
            futs: "List[asyncio.Future[Any]]" = [task, watch]
            await asyncio.wait(futs, return_when=asyncio.FIRST_COMPLETED)
            if task.done():
                return task.result()
            if watch.result():
                self.decided_cancel = True
                task.cancel()
                try:
                    await task
                except (asyncio.CancelledError, Exception):  # noqa: BLE001 - the prepare's own end, replaced by Cancelled
                    pass
                raise Cancelled(f"call {self.call_id}: the arbiter cancelled the job while it was being prepared")
            return await task
        finally:
            watch.cancel()

    async def commit(self) -> bool:
        """Reports the prepare finished and waits for the decision: True for COMMIT
        (commit, then :meth:`committed`), False for CANCEL (release, then
        :meth:`cancelled`). Raises :class:`ArbiterUnavailable` when the arbiter could not
        be asked for ``max_elapsed`` seconds (fail closed: do not commit)."""
        while True:
            d = await self._decide(prepared=True, wait=self.decide_wait)
            if d.decision == pb.DECISION_COMMIT:
                self.decided_commit = True
                return True
            if d.decision == pb.DECISION_CANCEL:
                self.decided_cancel = True
                return False

    async def committed(self, result: Optional[Mapping[str, Any]] = None) -> Dict[str, Any]:
        """``Complete(COMMITTED, result)``; returns the call's payload."""
        return await self._complete(pb.OUTCOME_COMMITTED, result=result)

    async def cancelled(self) -> Dict[str, Any]:
        """``Complete(CANCELLED)`` (after a CANCEL); returns the call's payload."""
        return await self._complete(pb.OUTCOME_CANCELLED)

    async def failed(self, error: str) -> Dict[str, Any]:
        """``Complete(FAILED, error)``: nothing was done; returns the call's payload."""
        return await self._complete(pb.OUTCOME_FAILED, error=error)

    async def unknown(self) -> Dict[str, Any]:
        """``Complete(UNKNOWN)``: after COMMIT, the backend could not say whether it
        committed; report ``committed``/``failed`` later with a new ToolJob."""
        return await self._complete(pb.OUTCOME_UNKNOWN)

    # -- RPCs --------------------------------------------------------------------------

    async def _decide(self, *, prepared: bool, wait: float) -> pb.DecideResponse:
        # No events_delivered: the tool does not observe the session's events (the wire
        # guard does), so it cannot declare them delivered; a late commit is withheld.
        req = pb.DecideRequest(session_id=self.session_id, call_id=self.call_id, prepared=prepared, wait=_duration(wait))
        start = time.monotonic()
        delay = self.client.retry.initial_backoff
        while True:
            try:
                d = await self.client.decide(req)
                self.job_id = d.job_id
                if not self.session_id and d.session_id:
                    # Found once by the call id; named from here on (the index
                    # may later call the id ambiguous: another session reused it).
                    self.session_id = d.session_id
                    req.session_id = d.session_id
                return d
            except ArbiterError as err:
                if err.code not in _AGAIN or time.monotonic() - start >= self.max_elapsed:
                    if err.code in _AGAIN:
                        raise ArbiterUnavailable(f"call {self.call_id}: the arbiter could not be asked: {err}") from err
                    raise
                pause = max(delay * (0.5 + random.random() / 2), err.retry_delay or 0.0)
                log.warning("arbiter: call %s: Decide failed (%s); asking again in %.2fs", self.call_id, err, pause)
                await asyncio.sleep(pause)
                delay = min(delay * self.client.retry.multiplier, self.client.retry.max_backoff)

    async def _watch_cancel(self) -> bool:
        """Long-polls Decide(prepared=False) until CANCEL (True); False when a Decide
        fails (the commit step asks again)."""
        try:
            while True:
                d = await self._decide(prepared=False, wait=self.decide_wait)
                if d.decision == pb.DECISION_CANCEL:
                    return True
        except (ArbiterError, ArbiterUnavailable) as err:
            log.warning("arbiter: call %s: watching for a cancel while preparing failed: %s", self.call_id, err)
            await asyncio.Event().wait()  # never: the prepare decides
            return False

    async def _complete(
        self, outcome: "pb.Outcome", *, result: Optional[Mapping[str, Any]] = None, error: str = ""
    ) -> Dict[str, Any]:
        req = pb.CompleteRequest(session_id=self.session_id, call_id=self.call_id, outcome=outcome, error=error)
        if result is not None:
            req.result.update(dict(result))
        resp = await self.client.complete(req)
        self._reported = True
        for r in resp.effects.responses:
            if r.call_id == self.call_id and not r.interim:
                self.payload = json_format.MessageToDict(r.payload)
        if self.payload is None:
            # The call died meanwhile (an interruption, a withdrawal): the model gets
            # nothing for it; this only tells the framework what happened.
            self.payload = {"status": _OUTCOME_STATUS.get(outcome, "failed"), "answered": False}
        return self.payload


_OUTCOME_STATUS: "Dict[pb.Outcome, str]" = {
    pb.OUTCOME_COMMITTED: "committed",
    pb.OUTCOME_CANCELLED: "cancelled",
    pb.OUTCOME_FAILED: "failed",
    pb.OUTCOME_UNKNOWN: "unknown",
}


def two_phase(
    client: ArbiterClient,
    *,
    call_id: Callable[..., str],
    commit: Callable[[Any], Awaitable[Optional[Mapping[str, Any]]]],
    release: Optional[Callable[[Any], Awaitable[None]]] = None,
    decide_wait: float = 20.0,
    max_elapsed: float = 20.0,
) -> Callable[[Callable[..., Awaitable[Any]]], Callable[..., Awaitable[Dict[str, Any]]]]:
    """Makes a tool's prepare function a two-phase tool under the arbiter (see the
    module doc): the decorated function keeps its name, docstring and signature (for
    the framework's schema), and is the prepare; ``call_id`` takes the tool's arguments
    and returns the call id; ``commit(hold)`` performs the side effect and returns its
    result (a dict, or None); ``release(hold)`` lets go of a prepared hold that will
    not be committed. The tool returns the arbiter's payload for the call."""

    def wrap(prepare: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Dict[str, Any]]]:
        @functools.wraps(prepare)
        async def tool(*args: Any, **kwargs: Any) -> Dict[str, Any]:
            job = ToolJob(client, call_id(*args, **kwargs), decide_wait=decide_wait, max_elapsed=max_elapsed)
            try:
                async with job:
                    try:
                        hold = await job.preparing(prepare(*args, **kwargs))
                    except Cancelled:
                        return await job.cancelled()
                    try:
                        go = await job.commit()
                    except ArbiterUnavailable:
                        if release is not None:
                            await release(hold)  # fail closed: never commit on a decision not had
                        raise
                    if go:
                        return await job.committed(await commit(hold))
                    if release is not None:
                        await release(hold)
                    return await job.cancelled()
            except ArbiterUnavailable as err:
                return {"status": "failed", "executed": False, "error": str(err)}
            except JobTaken as err:  # the arbiter answers the call
                return {"status": "duplicate", "executed": False, "error": str(err)}

        return tool

    return wrap
