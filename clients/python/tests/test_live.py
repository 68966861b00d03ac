"""Unit tests of the client and the Live adapter against a scripted in-process server,
plus (when ARBITER_TARGET names a running arbiter) the typed errors of the real one.

    /usr/bin/python3 -m unittest discover -s clients/python/tests -v
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
import time
import unittest

import grpc
from google.protobuf import json_format, struct_pb2

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from arbiter_client import (  # noqa: E402
    AbortPrepare,
    ArbiterClient,
    Cancel,
    Commit,
    Execute,
    FailedPreconditionError,
    InvalidArgumentError,
    LiveAdapter,
    NotFoundError,
    RetryPolicy,
    SendFunctionResponse,
    SendNote,
    Skip,
    UnavailableError,
)
from arbiter_client.errors import ERROR_DOMAIN, ArbiterError, details_of  # noqa: E402
from arbiter_client.rpc import error_details_pb2, status_pb2  # noqa: E402
from arbiter_client.v1 import arbiter_pb2 as pb, arbiter_pb2_grpc as pb_grpc  # noqa: E402

logging.getLogger("arbiter_client").setLevel(int(os.environ.get("PYLOG", logging.ERROR)))  # retries log warnings
FAST = RetryPolicy(initial_backoff=0.01, max_backoff=0.02, max_elapsed=0.5)


def effects(responses=(), skips=(), notes=()):
    e = pb.Effects()
    for call_id, status in responses:
        r = e.responses.add(call_id=call_id, name="book_slot", job_id="job-1")
        r.payload.update({"status": status})
    for call_id in skips:
        e.skips.add(call_id=call_id, name="book_slot", reason="abandoned", job_id="job-1")
    for text in notes:
        e.notes.add(job_id="job-1", text=text, deliver=pb.DELIVERY_NOW)
    return e


class Script(pb_grpc.ArbiterServiceServicer):
    """A scripted arbiter: every RPC is recorded; tests set what each returns."""

    def __init__(self):
        self.requests: list[tuple[str, object]] = []
        self.arrived: list[float] = []  # time.monotonic() of each request, as requests
        # What happened, in order: "Decide" (arrived), "Decide ok", "Decide failed",
        # "Decide cancelled" (by the client), and so for every RPC.
        self.events: list[str] = []
        self.hold: dict[str, asyncio.Event] = {}  # rpc -> a gate a request waits for before it is answered
        self.decide = None  # async (request, context) -> DecideResponse
        self.fail: dict[str, list[grpc.StatusCode]] = {}  # rpc -> codes to fail with, in turn
        self.complete_effects = pb.Effects()
        self.register_effects = pb.Effects()
        self.speech_effects = pb.Effects()
        self.poll_effects = pb.Effects()
        self.configure_delay = 0.0  # seconds ConfigureSession takes

    async def _enter(self, name, request, context):
        self.requests.append((name, request))
        self.arrived.append(time.monotonic())
        self.events.append(name)
        codes = self.fail.get(name)
        if codes:
            self.events.append(f"{name} failed")
            await context.abort(codes.pop(0), f"{name}: scripted failure")

    async def _answer(self, name, respond):
        """Waits for the RPC's gate (hold), then answers with ``await respond()``; records
        whether it answered or the client cancelled it first (grpc.aio cancels the
        handler's task)."""
        try:
            gate = self.hold.get(name)
            if gate is not None:
                await gate.wait()
            resp = await respond()
        except asyncio.CancelledError:
            self.events.append(f"{name} cancelled")
            raise
        self.events.append(f"{name} ok")
        return resp

    def sent(self, name):
        return [r for n, r in self.requests if n == name]

    async def RegisterCall(self, request, context):
        await self._enter("RegisterCall", request, context)
        return pb.RegisterCallResponse(
            call_id=request.call_id, disposition=pb.DISPOSITION_EXECUTE, job_id="job-1",
            business_key="book_slot(slot=x)", side_effect=request.tool == "book_slot", effects=self.register_effects,
        )

    async def ReportSpeech(self, request, context):
        await self._enter("ReportSpeech", request, context)

        async def respond():
            return pb.ReportSpeechResponse(effects=self.speech_effects)

        return await self._answer("ReportSpeech", respond)

    async def ReportTranscript(self, request, context):
        await self._enter("ReportTranscript", request, context)
        return pb.ReportTranscriptResponse(intent="other")

    async def ReportToolCallCancellation(self, request, context):
        await self._enter("ReportToolCallCancellation", request, context)
        return pb.ReportToolCallCancellationResponse()

    async def Decide(self, request, context):
        await self._enter("Decide", request, context)
        return await self._answer("Decide", lambda: self.decide(request, context))

    async def Complete(self, request, context):
        await self._enter("Complete", request, context)
        return pb.CompleteResponse(effects=self.complete_effects)

    async def Poll(self, request, context):
        await self._enter("Poll", request, context)
        return pb.PollResponse(effects=self.poll_effects)

    async def CloseSession(self, request, context):
        await self._enter("CloseSession", request, context)
        return pb.CloseSessionResponse()

    async def ConfigureSession(self, request, context):
        await self._enter("ConfigureSession", request, context)
        await asyncio.sleep(self.configure_delay)
        return pb.ConfigureSessionResponse(
            language=request.language or "en", response_scheduling=request.response_scheduling
        )


def cancelled_with_note(**note):
    """Effects of a cancelled job: fc_1's response (with "status_note" when the note
    rides on it) and the note."""
    e = pb.Effects()
    r = e.responses.add(call_id="fc_1", name="book_slot", job_id="job-1")
    r.payload.update({"status": "cancelled"})
    if note.get("via") == pb.NOTE_VIA_FUNCTION_RESPONSE:
        r.payload.update({"status_note": "System note: cancelled."})
    e.notes.add(job_id="job-1", text="System note: cancelled.", **note)
    return e


async def cancel_during_prepare(req, ctx):
    await asyncio.sleep(0.05)
    return pb.DecideResponse(decision=pb.DECISION_CANCEL, reason="stop", job_id=req.job_id)


def call_message(call_id="fc_1", name="book_slot"):
    return {"tool_call": {"function_calls": [{"id": call_id, "name": name, "args": {"slot": "tomorrow 3pm"}}]}}


class AdapterTest(unittest.IsolatedAsyncioTestCase):
    async def asyncSetUp(self):
        self.script = Script()
        self.server, self.port = await self.serve()
        self.client = ArbiterClient(f"127.0.0.1:{self.port}", retry=FAST, timeout=2.0)
        self.actions: list = []
        self.adapter = LiveAdapter(self.client, "s1", self.actions.append, decide_wait=0.2)

    async def serve(self, port=0):
        server = grpc.aio.server()
        pb_grpc.add_ArbiterServiceServicer_to_server(self.script, server)
        port = server.add_insecure_port(f"127.0.0.1:{port}")
        await server.start()
        return server, port

    async def asyncTearDown(self):
        await self.client.close()
        await self.server.stop(None)

    async def until(self, pred, timeout=30.0):
        # Waits for what the test expects to happen; the bound only ends a test that is
        # already failing, so it is generous: on a loaded machine (CI shares 2 cores) the
        # adapter's retries took over 3 s of wall time.
        for _ in range(int(timeout / 0.01)):
            if pred():
                return
            await asyncio.sleep(0.01)
        self.fail(f"timed out; actions: {self.actions}")

    def of(self, kind):
        return [a for a in self.actions if isinstance(a, kind)]

    async def test_early_cancel_during_prepare_aborts_it(self):
        async def decide(req, ctx):
            if not req.prepared:
                await asyncio.sleep(0.05)
                return pb.DecideResponse(decision=pb.DECISION_CANCEL, reason="stop", job_id=req.job_id)
            raise AssertionError("prepared Decide before prepare finished")

        self.script.decide = decide
        self.script.complete_effects = effects([("fc_1", "cancelled")], notes=["System note: cancelled."])
        await self.adapter.feed(call_message())
        await self.until(lambda: self.of(SendNote))
        kinds = [type(a) for a in self.actions]
        self.assertEqual(kinds, [Execute, AbortPrepare, SendFunctionResponse, SendNote])
        self.assertEqual(self.actions[0].business_key, "book_slot(slot=x)")
        (done,) = self.script.sent("Complete")
        self.assertEqual(done.outcome, pb.OUTCOME_CANCELLED)

    async def test_prepared_reasks_with_prepared_true_then_commits(self):
        async def decide(req, ctx):
            if not req.prepared:
                await asyncio.sleep(10)  # held open: returns early only on cancel
            return pb.DecideResponse(decision=pb.DECISION_COMMIT, reason="grace window passed", job_id=req.job_id)

        self.script.decide = decide
        self.script.complete_effects = effects([("fc_1", "committed")])
        await self.adapter.feed(call_message())
        await self.until(lambda: self.script.sent("Decide"))
        await self.adapter.prepared("job-1")
        await self.until(lambda: self.of(Commit))
        self.assertEqual([d.prepared for d in self.script.sent("Decide")], [False, True])
        # The core follows the delivery contract and says so on every Decide, so the
        # arbiter does not withhold a late commit from it (DecideRequest.events_delivered).
        self.assertEqual([d.events_delivered for d in self.script.sent("Decide")], [True, True])
        self.assertEqual(self.of(SendFunctionResponse), [])
        await self.adapter.committed("job-1", {"reference": "R-1"})
        (done,) = self.script.sent("Complete")
        self.assertEqual((done.outcome, dict(done.result)), (pb.OUTCOME_COMMITTED, {"reference": "R-1"}))
        self.assertEqual([a.id for a in self.of(SendFunctionResponse)], ["fc_1"])

    async def test_decide_retried_on_lost_connection(self):
        self.script.fail["Decide"] = [grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.UNAVAILABLE]

        async def decide(req, ctx):
            return pb.DecideResponse(decision=pb.DECISION_COMMIT, job_id=req.job_id)

        self.script.decide = decide
        await self.adapter.feed(call_message())
        await self.adapter.prepared("job-1")
        await self.until(lambda: self.of(Commit))
        self.assertEqual(len(self.script.sent("Decide")), 3)
        self.assertEqual(len(self.of(Commit)), 1)

    async def test_decide_survives_a_server_restart(self):
        async def decide(req, ctx):
            if len(self.script.sent("Decide")) == 1:
                await asyncio.sleep(10)  # the connection drops while this long-poll is open
            return pb.DecideResponse(decision=pb.DECISION_CANCEL, reason="stop", job_id=req.job_id)

        self.script.decide = decide
        await self.adapter.feed(call_message())
        await self.until(lambda: self.script.sent("Decide"))
        await self.server.stop(None)
        await asyncio.sleep(0.1)
        self.server, _ = await self.serve(self.port)
        await self.until(lambda: self.of(AbortPrepare))
        self.assertEqual(len(self.script.sent("Decide")), 2)  # the same request again
        self.assertEqual(self.of(Commit), [])
        self.assertIsNone(self.of(AbortPrepare)[0].error)

    async def test_failing_decide_never_commits(self):
        self.script.fail["Decide"] = [grpc.StatusCode.UNAVAILABLE] * 1000

        async def decide(req, ctx):
            raise AssertionError("unreachable")

        self.script.decide = decide
        await self.adapter.feed(call_message())
        await self.adapter.prepared("job-1")
        await self.until(lambda: self.script.sent("Complete"))
        self.assertEqual(self.of(Commit), [])
        (release,) = self.of(Cancel) + self.of(AbortPrepare)
        self.assertIsInstance(release.error, UnavailableError)
        (done,) = self.script.sent("Complete")
        self.assertEqual(done.outcome, pb.OUTCOME_FAILED)

    # --- the outbox: age, order, retries ---------------------------------------------

    async def test_events_retried_with_their_growing_age(self):
        self.script.fail["ReportSpeech"] = [grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED]
        await self.adapter.feed({"server_content": {"interrupted": True}})  # delivered by the third attempt
        sent = self.script.sent("ReportSpeech")
        self.assertEqual([r.event for r in sent], [pb.SPEECH_EVENT_INTERRUPTED] * 3)
        self.assertTrue(all(r.HasField("age") for r in sent))
        ages = [r.age.ToNanoseconds() for r in sent]
        self.assertEqual(ages, sorted(ages))
        self.assertGreater(ages[2], ages[0])  # each retry says how long ago it was observed
        self.assertLess(ages[0], 500_000_000)

    async def test_events_keep_their_order_across_a_failure(self):
        self.script.decide = lambda req, ctx: asyncio.sleep(10)
        self.script.fail["ReportSpeech"] = [grpc.StatusCode.UNAVAILABLE] * 6
        self.adapter.feed({"voice_activity": {"voice_activity_type": "ACTIVITY_START"}})  # not awaited
        self.adapter.feed({"server_content": {"input_transcription": {"text": "stop"}}})
        self.adapter.feed({"voice_activity": {"voice_activity_type": "ACTIVITY_END"}})
        last = self.adapter.feed(call_message())
        await last
        delivered = [(n, getattr(r, "event", None)) for n, r in self.script.requests
                     if n in ("ReportSpeech", "ReportTranscript", "RegisterCall")]
        start = ("ReportSpeech", pb.SPEECH_EVENT_USER_ACTIVITY_START)
        self.assertEqual(delivered, [start] * 7 + [
            ("ReportTranscript", None), ("ReportSpeech", pb.SPEECH_EVENT_USER_ACTIVITY_END), ("RegisterCall", None),
        ])
        # Placed where they were observed (arrival minus age): in the order fed, within
        # the few milliseconds the feeding took, though delivered 55 ms or more later.
        placed = {(n, getattr(r, "event", None)): t - r.age.ToNanoseconds() / 1e9
                  for (n, r), t in zip(self.script.requests, self.script.arrived) if r.HasField("age")}
        start_at = placed[start]  # its last attempt, which landed
        self.assertLess(max(placed.values()) - start_at, 0.04)
        self.assertGreater(self.script.arrived[-1] - start_at, 0.05)
        self.assertEqual(len(self.of(Execute)), 1)

    async def test_refused_event_is_dropped_and_raised(self):
        self.script.fail["ReportSpeech"] = [grpc.StatusCode.INVALID_ARGUMENT]
        with self.assertRaises(InvalidArgumentError) as cm:
            await self.adapter.feed({"server_content": {"interrupted": True}})
        self.assertEqual(cm.exception.rpc, "ReportSpeech")
        self.assertEqual(len(self.script.sent("ReportSpeech")), 1)  # not retried
        await self.adapter.feed({"server_content": {"turn_complete": True}})  # the next one goes
        self.assertEqual(len(self.script.sent("ReportSpeech")), 2)

    async def test_call_without_id_retried_only_on_aborted(self):
        self.script.decide = lambda req, ctx: asyncio.sleep(10)
        self.script.fail["RegisterCall"] = [grpc.StatusCode.ABORTED, grpc.StatusCode.UNAVAILABLE]
        with self.assertRaises(UnavailableError):  # the arbiter would mint a second id for a repeat
            await self.adapter.feed(call_message(call_id=""))
        self.assertEqual(len(self.script.sent("RegisterCall")), 2)

    # --- the Decide contract (docs/agent-guide.md; issue 26: an answered COMMIT stands) ----

    def prepared_decides(self):
        return [d for d in self.script.sent("Decide") if d.prepared]

    def at(self, event, start=0):
        """The index in script.events of the first ``event`` from ``start`` on, -1 if none."""
        try:
            return self.script.events.index(event, start)
        except ValueError:
            return -1

    def count(self, event):
        return self.script.events.count(event)

    def trail(self):
        """script.events for a failure message, its middle elided when long."""
        e = self.script.events
        return ", ".join(e if len(e) <= 60 else [*e[:20], "...", *e[-30:]])

    def long_poll(self, **kw):
        """An adapter whose Decide waits 20 s: its deadline never ends it during a test
        (only the core's abort can)."""
        self.adapter = LiveAdapter(self.client, "s1", self.actions.append, decide_wait=20.0, **kw)

    @staticmethod
    def commit(req):
        return pb.DecideResponse(decision=pb.DECISION_COMMIT, reason="grace window passed", job_id=req.job_id)

    async def test_no_decide_while_an_observed_event_is_undelivered(self):
        # The user's voice activity START fails to land (an outage). No Decide goes out,
        # prepared or not, until it has: the one parked during the prepare is aborted,
        # and the prepared one is sent after the START landed, then acted on.
        self.long_poll()
        self.script.fail["ReportSpeech"] = [grpc.StatusCode.UNAVAILABLE] * 10_000

        async def decide(req, ctx):
            if not req.prepared:
                await asyncio.sleep(30)  # parked: ends early only when the client cancels it
            return self.commit(req)

        self.script.decide = decide
        await self.adapter.feed(call_message())
        await self.until(lambda: self.script.sent("Decide"))
        self.adapter.feed({"voice_activity": {"voice_activity_type": "ACTIVITY_START"}})  # observed, undelivered
        await self.until(lambda: self.count("ReportSpeech failed") >= 3)
        await self.adapter.prepared("job-1")
        # Retries go on; a prepared Decide would be sent at once.
        await self.until(lambda: self.count("ReportSpeech failed") >= 6 or self.prepared_decides())
        self.script.fail["ReportSpeech"].clear()  # the outage ends
        await self.until(lambda: self.of(Commit))
        events = self.script.events
        landed, first = self.at("ReportSpeech ok"), self.at("ReportSpeech")
        self.assertGreater(landed, first, self.trail())
        self.assertEqual([i for i, e in enumerate(events) if e == "Decide" and first < i < landed], [],
                         f"a Decide was sent while the START was undelivered: {self.trail()}")
        self.assertEqual(len(self.prepared_decides()), 1)
        self.assertEqual(self.count("Decide cancelled"), 1, self.trail())  # the prepare's parked Decide
        # Each says the core follows the delivery contract (DecideRequest.events_delivered).
        self.assertTrue(all(d.events_delivered for d in self.script.sent("Decide")), self.trail())

    async def test_delivery_failure_aborts_the_waiting_decide(self):
        # The START's delivery fails while the prepared Decide waits: that Decide is
        # aborted (whatever it would have answered), and asked again only once the START
        # landed; the core acts on that answer.
        self.long_poll()
        self.script.fail["ReportSpeech"] = [grpc.StatusCode.UNAVAILABLE] * 10_000

        async def decide(req, ctx):
            if not req.prepared:
                await asyncio.sleep(30)
            if len(self.prepared_decides()) == 1:
                await asyncio.sleep(30)  # ends early only when the client cancels it
                return self.commit(req)
            return pb.DecideResponse(decision=pb.DECISION_CANCEL, reason="stop intent", job_id=req.job_id)

        self.script.decide = decide
        await self.adapter.feed(call_message())
        await self.adapter.prepared("job-1")
        await self.until(self.prepared_decides)
        start = len(self.script.events)  # what happens from the START on
        self.adapter.feed({"voice_activity": {"voice_activity_type": "ACTIVITY_START"}})  # its delivery fails
        await self.until(lambda: self.at("Decide cancelled", start) >= 0)
        cancelled = self.at("Decide cancelled", start)
        self.assertTrue(0 <= self.at("ReportSpeech failed", start) < cancelled, self.trail())
        await self.until(lambda: self.count("ReportSpeech failed") >= 3)  # retried meanwhile; no Decide asked
        self.script.fail["ReportSpeech"].clear()
        await self.until(lambda: self.of(Cancel))
        self.assertEqual(self.of(Commit), [])
        self.assertEqual([a.reason for a in self.of(Cancel)], ["stop intent"])
        await self.until(lambda: self.script.sent("Complete"))
        self.assertEqual([c.outcome for c in self.script.sent("Complete")], [pb.OUTCOME_CANCELLED])
        # The second prepared Decide went out only after the START landed.
        again = [i for i, e in enumerate(self.script.events) if e == "Decide" and i > cancelled]
        self.assertEqual(len(again), 1, self.trail())
        self.assertLess(self.at("ReportSpeech ok"), again[0], self.trail())
        # Every attempt carries its own age, measured when it leaves: they grow.
        ages = [r.age.ToNanoseconds() for r in self.script.sent("ReportSpeech")]
        self.assertEqual(ages, sorted(ages))

    async def test_event_undelivered_past_the_stuck_limit_aborts_the_waiting_decide(self):
        # The START is in flight, not failing (the arbiter has not answered it): past
        # DELIVERY_STUCK the waiting Decide is aborted and asked again once it landed.
        self.long_poll()
        gate = self.script.hold["ReportSpeech"] = asyncio.Event()

        async def decide(req, ctx):
            if not req.prepared or len(self.prepared_decides()) == 1:
                await asyncio.sleep(30)  # ends early only when the client cancels it
            return self.commit(req)

        self.script.decide = decide
        await self.adapter.feed(call_message())
        await self.adapter.prepared("job-1")
        await self.until(self.prepared_decides)
        start = len(self.script.events)
        self.adapter.feed({"voice_activity": {"voice_activity_type": "ACTIVITY_START"}})
        await self.until(lambda: self.at("Decide cancelled", start) >= 0)
        self.assertEqual([e for e in self.script.events if e.startswith("ReportSpeech")], ["ReportSpeech"],
                         "one attempt, still unanswered")
        self.assertEqual(len(self.prepared_decides()), 1, "asked again while the START was undelivered")
        gate.set()
        await self.until(lambda: self.of(Commit))
        self.assertEqual(len(self.prepared_decides()), 2)
        last_decide = len(self.script.events) - 1 - self.script.events[::-1].index("Decide")
        self.assertLess(self.at("ReportSpeech ok"), last_decide, self.trail())

    async def test_commit_arriving_while_an_event_is_in_flight_is_acted_on(self):
        # The COMMIT stands (the arbiter places the START after it): the core acts on it
        # and does not ask again. The in-flight START is never stuck here (its limit is
        # raised), so the test does not depend on how fast this machine answers.
        self.adapter._outbox.stuck_after = 60.0
        gate = self.script.hold["ReportSpeech"] = asyncio.Event()

        async def decide(req, ctx):
            if not req.prepared:
                await asyncio.sleep(30)
            while not self.script.sent("ReportSpeech"):
                await asyncio.sleep(0.005)
            return self.commit(req)

        self.script.decide = decide
        await self.adapter.feed(call_message())
        await self.adapter.prepared("job-1")
        await self.until(self.prepared_decides)
        with self.assertLogs("arbiter_client", logging.WARNING) as logs:
            start = self.adapter.feed({"voice_activity": {"voice_activity_type": "ACTIVITY_START"}})
            await self.until(lambda: self.of(Commit))
        self.assertEqual(self.at("ReportSpeech ok"), -1, "the START is still in flight")
        self.assertEqual(len(self.prepared_decides()), 1)
        self.assertTrue(any("acting on COMMIT; 1 event(s) observed while its Decide was open were not delivered yet"
                            in m for m in logs.output), logs.output)
        gate.set()
        await start
        await self.adapter.committed("job-1", {"reference": "R-1"})
        self.assertEqual([c.outcome for c in self.script.sent("Complete")], [pb.OUTCOME_COMMITTED])
        self.assertEqual(len(self.prepared_decides()), 1)

    async def test_commit_with_nothing_undelivered_is_acted_on_at_once(self):
        async def decide(req, ctx):
            if not req.prepared:
                await asyncio.sleep(30)  # the arbiter never commits an unprepared job
            return self.commit(req)

        self.script.decide = decide
        await self.adapter.feed(call_message())
        await self.adapter.feed({"server_content": {"turn_complete": True}})
        await self.adapter.prepared("job-1")
        await self.until(lambda: self.of(Commit))
        self.assertEqual([d.prepared for d in self.script.sent("Decide")][-1:], [True])
        self.assertEqual(len(self.prepared_decides()), 1)

    async def test_event_undelivered_past_max_elapsed_releases_the_job(self):
        self.script.fail["ReportSpeech"] = [grpc.StatusCode.UNAVAILABLE] * 10_000

        async def decide(req, ctx):
            if not req.prepared:
                await asyncio.sleep(30)
            return self.commit(req)

        self.script.decide = decide
        await self.adapter.feed(call_message())
        await self.until(lambda: self.script.sent("Decide"))
        self.adapter.feed({"voice_activity": {"voice_activity_type": "ACTIVITY_START"}})  # never lands
        await self.adapter.prepared("job-1")
        await self.until(lambda: self.of(Cancel))
        self.assertEqual(self.of(Commit), [])
        self.assertEqual(self.prepared_decides(), [], "a prepared Decide was sent while the START was undelivered")
        (release,) = self.of(Cancel)
        self.assertIn("still undelivered after 0.5 s (the retry policy's max_elapsed)", release.reason)
        await self.until(lambda: self.script.sent("Complete"))
        self.assertEqual([c.outcome for c in self.script.sent("Complete")], [pb.OUTCOME_FAILED])
        await self.adapter.close(timeout=0.1)

    async def test_session_closed_with_an_observed_event_undelivered_never_commits(self):
        self.script.fail["ReportSpeech"] = [grpc.StatusCode.UNAVAILABLE] * 10_000

        async def decide(req, ctx):
            if not req.prepared:
                await asyncio.sleep(30)
            return self.commit(req)

        self.script.decide = decide
        await self.adapter.feed(call_message())
        self.adapter.feed({"voice_activity": {"voice_activity_type": "ACTIVITY_START"}})
        await self.adapter.prepared("job-1")
        await self.until(lambda: len(self.script.sent("ReportSpeech")) > 3)
        await self.adapter.close(timeout=0.3)
        await self.until(lambda: self.script.sent("Complete"))
        self.assertEqual(self.of(Commit), [])
        self.assertEqual(self.prepared_decides(), [])
        (release,) = self.of(Cancel)
        self.assertIn("closed before the events observed were delivered", release.reason)
        self.assertEqual([c.outcome for c in self.script.sent("Complete")], [pb.OUTCOME_FAILED])

    async def test_one_response_per_id_and_none_for_dead_ids(self):
        self.script.speech_effects = effects(skips=["fc_dead"])
        await self.adapter.feed({"server_content": {"interrupted": True}})
        self.script.register_effects = effects([("fc_1", "rejected"), ("fc_1", "rejected"), ("fc_dead", "cancelled")])
        await self.adapter.feed(call_message("fc_1", "get_weather"))
        await self.adapter.feed(call_message("fc_1", "get_weather"))  # the same call again
        self.assertEqual([a.id for a in self.of(Skip)], ["fc_dead"])
        self.assertEqual([a.id for a in self.of(SendFunctionResponse)], ["fc_1"])
        self.assertEqual(len(self.of(Execute)), 1)  # same job: executed once

    async def test_once_per_seq_and_poll_after_the_high_water_mark(self):
        # Skips 1, 2 and 4 in a reply (twice: a retried request repeats the seqs).
        e = pb.Effects()
        for seq, call_id in ((1, "a"), (2, "b"), (4, "d")):
            e.skips.add(call_id=call_id, name="book_slot", reason="abandoned", seq=seq)
        self.script.speech_effects = e
        await self.adapter.feed({"server_content": {"interrupted": True}})
        await self.adapter.feed({"server_content": {"interrupted": True}})
        self.assertEqual([(a.id, a.seq) for a in self.of(Skip)], [("a", 1), ("b", 2), ("d", 4)])
        # Poll asks after the contiguous high-water mark (2) and acts on 3 only.
        p = pb.Effects()
        p.skips.add(call_id="c", name="book_slot", reason="abandoned", seq=3)
        p.skips.add(call_id="d", name="book_slot", reason="abandoned", seq=4)
        self.script.poll_effects = p
        await self.adapter.poll()
        await self.adapter.poll()
        polls = self.script.sent("Poll")
        self.assertEqual([(r.HasField("after_seq"), r.after_seq) for r in polls], [(True, 2), (True, 4)])
        self.assertEqual([(a.id, a.seq) for a in self.of(Skip)], [("a", 1), ("b", 2), ("d", 4), ("c", 3)])

    def test_seqs_bounded(self):
        from arbiter_client.live import _Seqs

        seqs = _Seqs(limit=3)
        for q in (1, 2, 4, 5):
            seqs.add(q)
        self.assertEqual((seqs.high, sorted(seqs.above)), (2, [4, 5]))
        seqs.add(3)
        self.assertEqual((seqs.high, seqs.above), (5, set()))
        for q in (7, 8, 9, 10):  # 6 never comes: given up past the limit
            seqs.add(q)
        self.assertEqual((seqs.high, seqs.above), (10, set()))
        self.assertIn(6, seqs)

    async def test_message_mapping(self):
        await self.adapter.feed({"voice_activity": {"voice_activity_type": "ACTIVITY_START"}})
        await self.adapter.feed({"server_content": {"interim_input_transcription": {"text": "st"}}})
        await self.adapter.feed({"serverContent": {"inputTranscription": {"text": "stop"}}})  # wire JSON casing
        await self.adapter.feed({"server_content": {"input_transcription": {"text": ""}}})  # nothing said
        audio = {"model_turn": {"parts": [{"inline_data": {"mime_type": "audio/pcm", "data": b""}}]}}
        await self.adapter.feed({"server_content": audio})
        await self.adapter.feed({"server_content": audio})  # same turn: one MODEL_OUTPUT_START
        await self.adapter.feed({"server_content": {"output_transcription": {"text": "OK"}, "generation_complete": True}})
        await self.adapter.feed({"server_content": {"turn_complete": True}})
        await self.adapter.feed({"tool_call_cancellation": {"ids": ["fc_9"]}})
        await self.adapter.feed(call_message("fc_2", "get_weather"))
        for name in ("ReportSpeech", "ReportTranscript", "ReportToolCallCancellation", "RegisterCall"):
            self.assertTrue(all(r.HasField("age") for r in self.script.sent(name)), name)
        speech = [pb.SpeechEvent.Name(r.event) for r in self.script.sent("ReportSpeech")]
        self.assertEqual(speech, [
            "SPEECH_EVENT_USER_ACTIVITY_START", "SPEECH_EVENT_MODEL_OUTPUT_START",
            "SPEECH_EVENT_MODEL_GENERATION_COMPLETE", "SPEECH_EVENT_MODEL_TURN_COMPLETE",
        ])
        texts = [(r.role, r.text, r.interim) for r in self.script.sent("ReportTranscript")]
        self.assertEqual(texts, [(pb.ROLE_USER, "st", True), (pb.ROLE_USER, "stop", False), (pb.ROLE_MODEL, "OK", False)])
        self.assertEqual(list(self.script.sent("ReportToolCallCancellation")[0].call_ids), ["fc_9"])

    async def test_voice_activity_as_the_wire_names_it(self):
        # The kind is voiceActivity.type on the wire (google-genai's converters read it
        # there); a raw agent feeds that dict, an SDK its voice_activity_type.
        await self.adapter.feed({"voiceActivity": {"type": "ACTIVITY_START"}})
        await self.adapter.feed({"voiceActivity": {"type": "ACTIVITY_END"}})
        await self.adapter.feed({"voiceActivity": {"voiceActivityType": "ACTIVITY_START"}})
        speech = [pb.SpeechEvent.Name(r.event) for r in self.script.sent("ReportSpeech")]
        self.assertEqual(speech, ["SPEECH_EVENT_USER_ACTIVITY_START", "SPEECH_EVENT_USER_ACTIVITY_END",
                                  "SPEECH_EVENT_USER_ACTIVITY_START"])

    async def test_configure_sent_first_with_the_options(self):
        self.script.fail["ConfigureSession"] = [grpc.StatusCode.UNAVAILABLE]  # retried: idempotent
        self.script.configure_delay = 0.2
        self.script.decide = cancel_during_prepare
        adapter = LiveAdapter(
            self.client, "s2", self.actions.append, decide_wait=0.2, language="es-MX", response_scheduling=True
        )
        await adapter.feed({"voice_activity": {"voice_activity_type": "ACTIVITY_START"}})
        await adapter.feed(call_message())
        await self.until(lambda: self.script.sent("Complete"))
        await adapter.close()
        names = [n for n, _ in self.script.requests]
        self.assertEqual(names[:3], ["ConfigureSession", "ConfigureSession", "ReportSpeech"])
        self.assertEqual(names.count("ConfigureSession"), 2)  # one call, retried once
        conf = self.script.sent("ConfigureSession")[-1]
        self.assertEqual((conf.session_id, conf.language, conf.response_scheduling), ("s2", "es-MX", True))
        # The START waited for ConfigureSession: its age, taken as it left, says so.
        self.assertGreaterEqual(self.script.sent("ReportSpeech")[0].age.ToNanoseconds(), 200_000_000)

    async def test_time_zone_and_reading(self):
        """Issue 25: the time_zone option goes out with ConfigureSession, and a reading
        given with a final user transcript goes out with it."""
        adapter = LiveAdapter(self.client, "s4", self.actions.append, decide_wait=0.2, time_zone="Europe/Paris")
        await adapter.input_transcript("let's leave it", reading=pb.AgentReading(intent="stop", confidence=0.9, source="nlu"))
        await adapter.close()
        conf = self.script.sent("ConfigureSession")[-1]
        self.assertEqual((conf.session_id, conf.time_zone), ("s4", "Europe/Paris"))
        sent = self.script.sent("ReportTranscript")[-1]
        self.assertEqual((sent.text, sent.reading.intent, round(sent.reading.confidence, 2), sent.reading.source),
                         ("let's leave it", "stop", 0.9, "nlu"))

    async def test_read_transcript_gives_the_readings_of_fed_transcripts(self):
        """read_transcript: the agent's own reading of each final user transcript the
        adapter reports (feed() has no other way to carry one); interim pieces and the
        ones it has no reading for go without."""
        seen = []

        def read(text, utterance_id):
            seen.append((text, utterance_id))
            return pb.AgentReading(intent="stop", confidence=0.92, source="nlu-v3") if "leave it" in text else None

        adapter = LiveAdapter(self.client, "s5", self.actions.append, decide_wait=0.2, read_transcript=read)
        await adapter.feed({"serverContent": {"interimInputTranscription": {"text": "Hmm, let's"}}})
        await adapter.feed({"serverContent": {"inputTranscription": {"text": "Hmm, let's leave it for now."}}})
        await adapter.feed({"serverContent": {"inputTranscription": {"text": "Thanks."}}})
        await adapter.close()
        sent = [(r.text, r.interim, r.HasField("reading") and (r.reading.intent, r.reading.source))
                for r in self.script.sent("ReportTranscript")]
        self.assertEqual(sent, [("Hmm, let's", True, False), ("Hmm, let's leave it for now.", False, ("stop", "nlu-v3")),
                                ("Thanks.", False, False)])
        self.assertEqual(seen, [("Hmm, let's leave it for now.", ""), ("Thanks.", "")])

    async def test_no_configure_without_options(self):
        await self.adapter.feed({"server_content": {"turn_complete": True}})
        await self.adapter.close()
        self.assertEqual([n for n, _ in self.script.requests], ["ReportSpeech", "CloseSession"])
        adapter = LiveAdapter(self.client, "s3", self.actions.append, response_scheduling=True)
        await adapter.close()  # nothing reported: nothing to configure
        self.assertEqual(self.script.sent("ConfigureSession"), [])

    async def test_note_via_function_response_rides_on_it(self):
        self.script.decide = cancel_during_prepare
        self.script.complete_effects = cancelled_with_note(
            deliver=pb.DELIVERY_WHEN_IDLE, via=pb.NOTE_VIA_FUNCTION_RESPONSE, call_id="fc_1",
            scheduling=pb.SCHEDULING_WHEN_IDLE, why="the model is speaking",
        )
        await self.adapter.feed(call_message())
        await self.until(lambda: self.of(SendFunctionResponse))
        await self.adapter.close()
        self.assertEqual([type(a) for a in self.actions], [Execute, AbortPrepare, SendFunctionResponse])
        (resp,) = self.of(SendFunctionResponse)
        self.assertEqual((resp.id, resp.scheduling), ("fc_1", "WHEN_IDLE"))
        self.assertEqual(resp.payload, {"status": "cancelled", "status_note": "System note: cancelled."})
        self.assertEqual(self.of(SendNote), [])

    async def test_note_via_user_turn_is_sent_with_when_and_why(self):
        self.script.decide = cancel_during_prepare
        self.script.complete_effects = cancelled_with_note(
            deliver=pb.DELIVERY_WHEN_IDLE, via=pb.NOTE_VIA_USER_TURN, why="the model is speaking"
        )
        await self.adapter.feed(call_message())
        await self.until(lambda: self.of(SendNote))
        self.assertEqual([type(a) for a in self.actions], [Execute, AbortPrepare, SendFunctionResponse, SendNote])
        self.assertIsNone(self.of(SendFunctionResponse)[0].scheduling)
        (note,) = self.of(SendNote)
        self.assertEqual((note.text, note.when, note.why, note.job_id),
                         ("System note: cancelled.", "when_idle", "the model is speaking", "job-1"))

    async def test_note_whose_carrier_is_not_handed_out_goes_as_a_user_turn(self):
        self.script.speech_effects = effects(skips=["fc_1"])  # fc_1 dies: its response is dropped
        await self.adapter.feed({"server_content": {"interrupted": True}})
        self.script.register_effects = cancelled_with_note(
            deliver=pb.DELIVERY_NOW, via=pb.NOTE_VIA_FUNCTION_RESPONSE, call_id="fc_1",
            scheduling=pb.SCHEDULING_INTERRUPT, why="the model is idle",
        )
        with self.assertLogs("arbiter_client", logging.WARNING):
            await self.adapter.feed(call_message("fc_2", "get_weather"))
        self.assertEqual(self.of(SendFunctionResponse), [])
        (note,) = self.of(SendNote)
        self.assertEqual((note.when, note.why), ("now", "the model is idle"))

    async def test_behavior_and_tool_choice(self):
        self.adapter.behaviors["book_slot"] = "BLOCKING"
        self.adapter.tool_choice = "none"
        self.script.decide = lambda req, ctx: asyncio.sleep(10)
        await self.adapter.feed(call_message())
        (reg,) = self.script.sent("RegisterCall")
        self.assertEqual((reg.behavior, reg.tool_choice), (pb.BEHAVIOR_BLOCKING, pb.TOOL_CHOICE_NONE))
        self.assertEqual(dict(reg.args), {"slot": "tomorrow 3pm"})
        await self.adapter.failed("job-1", "backend down")
        self.assertEqual(self.script.sent("Complete")[0].outcome, pb.OUTCOME_FAILED)


class ErrorTest(unittest.TestCase):
    """The details are read from the google.rpc.Status trailer, not from the message."""

    @staticmethod
    def trailer(*details):
        st = status_pb2.Status(code=3, message="whatever the text says")
        for d in details:
            st.details.add().Pack(d)
        return (("grpc-status-details-bin", st.SerializeToString()),)

    def test_details_decoded(self):
        info = error_details_pb2.ErrorInfo(reason="INVALID_FIELD", domain=ERROR_DOMAIN, metadata={"field": "call_ids[1]"})
        bad = error_details_pb2.BadRequest()
        bad.field_violations.add(field="call_ids[1]", description="must be 1-128 characters")
        bad.field_violations.add(field="age", description="negative")
        got = details_of(self.trailer(info, bad))
        err = ArbiterError(grpc.StatusCode.INVALID_ARGUMENT, 'age: "x" is bad', "ReportToolCallCancellation", **got)
        self.assertEqual((err.reason, err.domain, err.field, err.retry_delay),
                         ("INVALID_FIELD", ERROR_DOMAIN, "call_ids[1]", None))  # the first violation, not the message
        self.assertEqual(err.violations, [("call_ids[1]", "must be 1-128 characters"), ("age", "negative")])
        retry = error_details_pb2.RetryInfo()
        retry.retry_delay.FromMilliseconds(100)
        err = ArbiterError(grpc.StatusCode.UNAVAILABLE, "store down", **details_of(
            self.trailer(error_details_pb2.ErrorInfo(reason="STORE_UNAVAILABLE", domain=ERROR_DOMAIN), retry)))
        self.assertEqual((err.reason, err.field, err.retry_delay), ("STORE_UNAVAILABLE", None, 0.1))
        # ErrorInfo's field when there is no BadRequest (NOT_FOUND naming job_id).
        got = details_of(self.trailer(error_details_pb2.ErrorInfo(reason="JOB_NOT_FOUND", metadata={"field": "job_id"})))
        self.assertEqual(ArbiterError(grpc.StatusCode.NOT_FOUND, "", **got).field, "job_id")

    def test_no_details(self):
        # A message that looks like "field: ..." names no field by itself any more.
        err = ArbiterError(grpc.StatusCode.INVALID_ARGUMENT, 'call_id: "a b" must be 1-128 characters')
        self.assertEqual((err.field, err.reason, err.retry_delay, err.violations), (None, None, None, []))
        self.assertEqual(details_of(()), {})
        self.assertEqual(details_of((("grpc-status-details-bin", b"\xff\xff not a Status"),)), {})


@unittest.skipUnless(os.environ.get("ARBITER_TARGET"), "set ARBITER_TARGET to a running arbiter")
class RealServerErrorTest(unittest.IsolatedAsyncioTestCase):
    """The real server's errors arrive typed, with the field at fault."""

    async def asyncSetUp(self):
        self.client = ArbiterClient(os.environ["ARBITER_TARGET"], retry=FAST)

    async def asyncTearDown(self):
        await self.client.close()

    async def test_errors(self):
        sid = f"errors-{os.getpid()}"
        with self.assertRaises(InvalidArgumentError) as cm:
            await self.client.register_call(pb.RegisterCallRequest(session_id=sid, call_id="bad id", tool="book_slot"))
        self.assertEqual((cm.exception.field, cm.exception.code), ("call_id", grpc.StatusCode.INVALID_ARGUMENT))
        self.assertEqual((cm.exception.reason, cm.exception.domain), ("INVALID_FIELD", ERROR_DOMAIN))
        self.assertEqual([f for f, _ in cm.exception.violations], ["call_id"])
        with self.assertRaises(NotFoundError) as cm:
            await self.client.get_session(pb.GetSessionRequest(session_id=f"{sid}-none"))
        self.assertEqual(cm.exception.reason, "SESSION_NOT_FOUND")
        req = pb.RegisterCallRequest(session_id=sid, call_id="fc_1", tool="book_slot")
        req.args.update({"slot": "tomorrow 3pm"})  # its key argument: a call without one is rejected, no job
        reg = await self.client.register_call(req)
        self.assertEqual(reg.disposition, pb.DISPOSITION_EXECUTE)
        with self.assertRaises(NotFoundError) as cm:
            await self.client.decide(pb.DecideRequest(session_id=sid, job_id="job-404"))
        self.assertEqual((cm.exception.field, cm.exception.reason), ("job_id", "JOB_NOT_FOUND"))
        with self.assertRaises(FailedPreconditionError) as cm:
            await self.client.complete(pb.CompleteRequest(session_id=sid, job_id=reg.job_id, outcome=pb.OUTCOME_COMMITTED))
        self.assertEqual((cm.exception.field, cm.exception.reason), ("outcome", "JOB_STATE_CONFLICT"))
        with self.assertRaises(InvalidArgumentError) as cm:
            await self.client.configure_session(pb.ConfigureSessionRequest(session_id=sid, language="not a tag"))
        self.assertEqual(cm.exception.field, "language")
        conf = await self.client.configure_session(
            pb.ConfigureSessionRequest(session_id=sid, language="es", response_scheduling=True)
        )
        self.assertEqual((conf.language, conf.response_scheduling), ("es", True))
        # Issue 25: the time zone and the agent's reading, and their errors.
        with self.assertRaises(InvalidArgumentError) as cm:
            await self.client.configure_session(pb.ConfigureSessionRequest(session_id=sid, time_zone="Mars/Olympus"))
        self.assertEqual(cm.exception.field, "time_zone")
        conf = await self.client.configure_session(pb.ConfigureSessionRequest(session_id=sid, time_zone="Europe/Paris"))
        self.assertEqual(conf.time_zone, "Europe/Paris")
        with self.assertRaises(InvalidArgumentError) as cm:
            await self.client.report_transcript(pb.ReportTranscriptRequest(
                session_id=sid, text="leave it", reading=pb.AgentReading(intent="stop", confidence=1.5)))
        self.assertEqual(cm.exception.field, "reading.confidence")
        tr = await self.client.report_transcript(pb.ReportTranscriptRequest(
            session_id=sid, text="Let's leave it for now.", reading=pb.AgentReading(intent="stop", confidence=0.9, source="nlu")))
        self.assertEqual((tr.intent, list(tr.cancelled_job_ids)), ("stop", [reg.job_id]))
        await self.client.close_session(pb.CloseSessionRequest(session_id=sid))

    async def test_nesting_limit(self):
        """Args nested past 16 levels are refused naming the field; a result nested past
        16 levels answers its call with `result_omitted` (issue 25: every call is
        answered whatever its result); a result of 16 levels comes back in the function
        response and decodes (python3-protobuf refuses a Struct from about 34 levels)."""

        def nested(n, leaf):
            for _ in range(n - 1):
                leaf = {"a": leaf}
            return leaf

        sid = f"nesting-{os.getpid()}"
        deep = pb.RegisterCallRequest(session_id=sid, call_id="fc_1", tool="book_slot")
        deep.args.update(dict(nested(17, {"x": 1}), slot="tomorrow 3pm"))
        with self.assertRaises(InvalidArgumentError) as cm:
            await self.client.register_call(deep)
        self.assertEqual(cm.exception.field, "args")
        req = pb.RegisterCallRequest(session_id=sid, call_id="fc_2", tool="get_weather")
        req.args.update(nested(16, {"city": "Lyon"}))
        reg = await self.client.register_call(req)
        self.assertEqual(reg.disposition, pb.DISPOSITION_EXECUTE)
        too_deep = pb.RegisterCallRequest(session_id=sid, call_id="fc_3", tool="get_weather")
        too_deep.args.update({"city": "Paris"})
        reg3 = await self.client.register_call(too_deep)
        omitted = await self.client.complete(pb.CompleteRequest(
            session_id=sid, job_id=reg3.job_id, outcome=pb.OUTCOME_RESULT, result=_struct(nested(17, {"t": 20}))))
        [resp] = [r for r in omitted.effects.responses if r.call_id == "fc_3"]
        payload = json_format.MessageToDict(resp.payload)
        self.assertEqual((payload["status"], payload["result_omitted"]["reason"], payload["result_omitted"]["max_depth"]),
                         ("ok", "too_deep", 16))
        self.assertNotIn("result", payload)
        done = await self.client.complete(pb.CompleteRequest(
            session_id=sid, job_id=reg.job_id, outcome=pb.OUTCOME_RESULT, result=_struct(nested(16, {"t": 20}))))
        [resp] = [r for r in done.effects.responses if r.call_id == "fc_2"]
        got = json_format.MessageToDict(resp.payload)["result"]
        self.assertEqual(got, nested(16, {"t": 20}))
        await self.client.close_session(pb.CloseSessionRequest(session_id=sid))


def _struct(d):
    s = struct_pb2.Struct()
    s.update(d)
    return s


if __name__ == "__main__":
    unittest.main()
