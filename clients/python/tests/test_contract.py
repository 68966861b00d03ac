"""Unit tests of the retry and error contract of issue 15, against the scripted
in-process server of test_live: the packaged service config, event ids assigned once per
observed event and sent on every redelivery, ``repeat`` treated as delivered, RetryInfo
and a lost session (DATA_LOSS) handed out as SessionLost, never as a fresh start.

    /usr/bin/python3 -m unittest -v tests.test_contract
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import unittest

import grpc

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from arbiter_client import (  # noqa: E402
    AbortPrepare,
    ArbiterClient,
    Commit,
    LiveAdapter,
    SessionLost,
    SessionLostError,
    UnavailableError,
    service_config,
)
from arbiter_client.rpc import error_details_pb2, status_pb2  # noqa: E402
from arbiter_client.v1 import arbiter_pb2 as pb, arbiter_pb2_grpc as pb_grpc  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_live import FAST, Script, call_message  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
SHARED = os.path.join(HERE, "..", "..", "service-config.json")


class ServiceConfigTest(unittest.TestCase):
    @unittest.skipUnless(os.path.exists(SHARED), "clients/service-config.json is not beside this tree")
    def test_packaged_copy_is_the_shared_config(self):
        with open(SHARED, encoding="utf-8") as f:
            self.assertEqual(service_config("127.0.0.1:1"), json.load(f))

    def test_dns_targets_balance_round_robin(self):
        self.assertEqual(service_config("dns:///arbiter:50051")["loadBalancingConfig"], [{"round_robin": {}}])
        self.assertNotIn("loadBalancingConfig", service_config("127.0.0.1:50051"))
        self.assertEqual(service_config("ipv4:127.0.0.1:1,127.0.0.1:2")["loadBalancingConfig"], [{"round_robin": {}}])
        self.assertNotIn("loadBalancingConfig", service_config("ipv4:127.0.0.1:1"))
        opts = dict(ArbiterClient.channel_options("dns:///arbiter:50051"))
        self.assertEqual(opts["grpc.enable_retries"], 1)
        self.assertEqual(json.loads(opts["grpc.service_config"]), service_config("dns:///arbiter:50051"))

    def test_token_refused_on_plaintext(self):
        with self.assertRaisesRegex(ValueError, "plaintext"):
            ArbiterClient("127.0.0.1:1", token="t")
        with self.assertRaisesRegex(ValueError, "together"):
            ArbiterClient("127.0.0.1:1", cert_file="c.pem")


class HookScript(Script):
    """test_live's scripted arbiter, plus hooks: ``hooks[name](request, context)``
    answers that RPC instead (recorded first), and a Connect."""

    def __init__(self):
        super().__init__()
        self.hooks = {}

    async def _hooked(self, name, request, context, orig):
        hook = self.hooks.get(name)
        if hook is None:
            return await orig(request, context)
        self.requests.append((name, request))
        return await hook(request, context)

    async def ReportSpeech(self, request, context):
        return await self._hooked("ReportSpeech", request, context, super().ReportSpeech)

    async def Connect(self, request, context):
        async def default(req, ctx):
            self.requests.append(("Connect", req))
            return pb.ConnectResponse(epoch="ep0001", state=pb.SESSION_STATE_NEW)
        return await self._hooked("Connect", request, context, default)


class ContractTest(unittest.IsolatedAsyncioTestCase):
    async def asyncSetUp(self):
        self.script = HookScript()
        self.server = grpc.aio.server()
        pb_grpc.add_ArbiterServiceServicer_to_server(self.script, self.server)
        self.port = self.server.add_insecure_port("127.0.0.1:0")
        await self.server.start()
        self.client = ArbiterClient(f"127.0.0.1:{self.port}", retry=FAST, timeout=2.0)
        self.actions: list = []
        self.adapter = LiveAdapter(self.client, "s1", self.actions.append, decide_wait=0.2)

    async def asyncTearDown(self):
        await self.client.close()
        await self.server.stop(None)


async def _abort(ctx, code, reason, delay_ms=None):
    """Aborts with the arbiter's details in the trailer, as server/errors.go sends them."""
    st = status_pb2.Status(code=code.value[0], message=f"scripted {reason}")
    st.details.add().Pack(error_details_pb2.ErrorInfo(reason=reason, domain="arbiter.voicearbiter.dev"))
    if delay_ms is not None:
        ri = error_details_pb2.RetryInfo()
        ri.retry_delay.FromMilliseconds(delay_ms)
        st.details.add().Pack(ri)
    ctx.set_trailing_metadata((("grpc-status-details-bin", st.SerializeToString()),))
    await ctx.abort(code, st.message)


def _test(fn):
    """Makes fn a method of ContractTest (and no module-level test of its own for pytest)."""
    setattr(ContractTest, fn.__name__, fn)


@_test
async def test_event_id_stable_across_redeliveries(self):
    self.script.fail["ReportTranscript"] = [grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED]
    await self.adapter.feed({"server_content": {"input_transcription": {"text": "book it"}}})
    sent = self.script.sent("ReportTranscript")
    self.assertEqual(len(sent), 3)  # the outbox's own redeliveries: one attempt each (no gRPC retries)
    self.assertTrue(sent[0].event_id)
    self.assertEqual({r.event_id for r in sent}, {sent[0].event_id})
    ages = [r.age.ToNanoseconds() for r in sent]
    self.assertLess(ages[0], ages[1])  # each redelivery with its own, larger age
    self.assertLess(ages[1], ages[2])
    await self.adapter.feed({"server_content": {"input_transcription": {"text": "at four"}}})
    self.assertNotEqual(self.script.sent("ReportTranscript")[-1].event_id, sent[0].event_id)  # a new event


@_test
async def test_retry_info_zero_redelivers_at_once(self):
    calls = []

    async def speech(req, ctx):
        calls.append(req)
        if len(calls) == 1:
            await _abort(ctx, grpc.StatusCode.UNAVAILABLE, "SERVER_DRAINING", 0)
        return pb.ReportSpeechResponse()

    self.script.hooks["ReportSpeech"] = speech
    slow = ArbiterClient(f"127.0.0.1:{self.port}", timeout=2.0,
                         retry=type(FAST)(initial_backoff=5.0, max_backoff=5.0, max_elapsed=30))
    adapter = LiveAdapter(slow, "s-drain", self.actions.append, watch=False)
    try:
        await asyncio.wait_for(adapter.feed({"server_content": {"turn_complete": True}}), 3)  # not 2.5-5 s
        self.assertEqual(len(calls), 2)
    finally:
        await slow.close()


@_test
async def test_repeat_is_delivered_and_polled(self):
    async def speech(req, ctx):
        return pb.ReportSpeechResponse(repeat=True)

    self.script.hooks["ReportSpeech"] = speech
    self.script.poll_effects = pb.Effects()
    r = self.script.poll_effects.skips.add(call_id="fc_9", name="book_slot", reason="abandoned", seq=7)
    self.actions.clear()
    adapter = LiveAdapter(self.client, "s-repeat", self.actions.append, watch=False)
    await adapter.feed({"server_content": {"interrupted": True}})  # resolves: a repeat is a delivery
    (poll,) = self.script.sent("Poll")  # the first application's effects, from the log
    self.assertEqual(poll.after_seq, 0)
    self.assertEqual([a.id for a in self.actions if type(a).__name__ == "Skip"], [r.call_id])


@_test
async def test_session_lost_is_surfaced_never_a_fresh_start(self):
    state = {"lost": False}

    async def speech(req, ctx):
        if state["lost"]:
            await _abort(ctx, grpc.StatusCode.DATA_LOSS, "SESSION_LOST")
        return pb.ReportSpeechResponse()

    async def connect(req, ctx):
        if req.epoch == "ep0001" and state["lost"]:
            return pb.ConnectResponse(epoch="ep0002", state=pb.SESSION_STATE_LOST)
        return pb.ConnectResponse(epoch="ep0001", state=pb.SESSION_STATE_NEW)

    self.script.hooks["ReportSpeech"] = speech
    self.script.hooks["Connect"] = connect
    self.script.decide = lambda req, ctx: asyncio.sleep(10)  # undecided
    await self.adapter.reconnect("c1")
    await self.adapter.feed(call_message())
    self.assertEqual(self.script.sent("RegisterCall")[0].epoch, "ep0001")
    state["lost"] = True
    with self.assertRaises(SessionLostError) as cm:
        await self.adapter.feed({"voice_activity": {"voice_activity_type": "ACTIVITY_START"}})
    self.assertEqual(cm.exception.reason, "SESSION_LOST")
    self.assertEqual(self.script.sent("ReportSpeech")[-1].epoch, "ep0001")  # never sent without it
    (lost,) = [a for a in self.actions if isinstance(a, SessionLost)]
    self.assertEqual((lost.epoch, lost.call_ids, lost.job_ids), ("ep0001", ("fc_1",), ("job-1",)))
    self.assertEqual([a.job_id for a in self.actions if isinstance(a, AbortPrepare)], ["job-1"])
    self.assertEqual([a for a in self.actions if isinstance(a, Commit)], [])
    with self.assertRaises(SessionLostError):  # the next event too, once: one SessionLost
        await self.adapter.feed({"voice_activity": {"voice_activity_type": "ACTIVITY_END"}})
    self.assertEqual(len([a for a in self.actions if isinstance(a, SessionLost)]), 1)
    await self.adapter.reconnect("c2")  # Connect with the lost epoch: SESSION_STATE_LOST, a new epoch
    self.assertEqual(self.script.sent("Connect")[-1].epoch, "ep0001")
    self.assertEqual(self.adapter.epoch, "ep0002")


@_test
async def test_decide_asked_again_past_the_service_configs_attempts(self):
    # 7 UNAVAILABLE in a row: gRPC's retries (5 attempts for Decide) end in an error,
    # and the core asks again (RetryPolicy) instead of releasing the job.
    self.script.fail["Decide"] = [grpc.StatusCode.UNAVAILABLE] * 7

    async def decide(req, ctx):
        if not req.prepared:
            await asyncio.sleep(10)
        return pb.DecideResponse(decision=pb.DECISION_COMMIT, reason="grace window passed", job_id=req.job_id)

    self.script.decide = decide
    client = ArbiterClient(f"127.0.0.1:{self.port}", timeout=2.0)  # the default RetryPolicy: 20 s of re-asking
    adapter = LiveAdapter(client, "s-decide", self.actions.append, decide_wait=0.2, watch=False)
    try:
        await adapter.feed(call_message())
        await adapter.prepared("job-1")
        for _ in range(1000):
            if [a for a in self.actions if isinstance(a, Commit)]:
                break
            await asyncio.sleep(0.01)
        self.assertEqual([a.job_id for a in self.actions if isinstance(a, Commit)], ["job-1"])
        self.assertEqual([a for a in self.actions if isinstance(a, AbortPrepare)], [])
        self.assertEqual(len(self.script.sent("Decide")), 8)  # 7 failed, then the answer
    finally:
        await client.close()


@_test
async def test_service_config_retries_on_the_main_channel_only(self):
    # One Decide call: the service config's 5 attempts. One retry=False call: one.
    self.script.fail["Decide"] = [grpc.StatusCode.UNAVAILABLE] * 10
    with self.assertRaises(UnavailableError):
        await self.client.decide(pb.DecideRequest(session_id="s-config", job_id="job-1"))
    self.assertEqual(len(self.script.sent("Decide")), 5)
    self.script.fail["ReportSpeech"] = [grpc.StatusCode.UNAVAILABLE] * 10
    req = pb.ReportSpeechRequest(session_id="s-config", event=pb.SPEECH_EVENT_USER_ACTIVITY_START)
    with self.assertRaises(UnavailableError):
        await self.client.report_speech(req, retry=False)
    self.assertEqual(len(self.script.sent("ReportSpeech")), 1)
    with self.assertRaises(UnavailableError):
        await self.client.report_speech(req)  # the main channel: 4 attempts, one event id
    sent = self.script.sent("ReportSpeech")[1:]
    self.assertEqual(len(sent), 4)
    self.assertEqual(len({r.event_id for r in sent}), 1)
    self.assertTrue(sent[0].event_id)


if __name__ == "__main__":
    unittest.main()
