"""Unit tests of the OpenAI Realtime translator (RealtimeAdapter) and its client events,
with scripted Realtime server events and a scripted arbiter (test_live.Script); plus the
core's utterance ids, raw_args, cancellation reason and epoch, which it relies on."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import unittest

import grpc

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import test_live  # noqa: E402  (not its TestCase names: unittest would run them twice)

from arbiter_client import (  # noqa: E402
    AbortPrepare,
    ArbiterClient,
    Execute,
    RealtimeAdapter,
    SendFunctionResponse,
    SendNote,
    SessionCore,
)
from arbiter_client import realtime  # noqa: E402
from arbiter_client.v1 import arbiter_pb2 as pb  # noqa: E402


class RealtimeScript(test_live.Script):
    """The scripted arbiter, with Connect (and an epoch)."""

    async def Connect(self, request, context):
        await self._enter("Connect", request, context)
        return pb.ConnectResponse(epoch="ep0001", state=pb.SESSION_STATE_NEW)


def call_events(call_id="call_1", item_id="item_002", arguments='{"slot": "tomorrow 3pm"}', name="book_slot",
                with_name=True):
    """The events OpenAI sends for one function call (GA), as the fake provider does."""
    item = {"id": item_id, "type": "function_call", "status": "in_progress", "name": name, "call_id": call_id,
            "arguments": ""}
    done = dict(item, status="completed", arguments=arguments)
    args_done = {"type": "response.function_call_arguments.done", "call_id": call_id, "item_id": item_id,
                 "arguments": arguments}
    if with_name:
        args_done["name"] = name
    return [
        {"type": "response.output_item.added", "item": item},
        {"type": "response.function_call_arguments.delta", "call_id": call_id, "item_id": item_id, "delta": arguments},
        args_done,
        {"type": "response.output_item.done", "item": done},
        {"type": "conversation.item.done", "item": done},
    ]


class RealtimeAdapterTest(unittest.IsolatedAsyncioTestCase):
    async def asyncSetUp(self):
        self.script = RealtimeScript()
        self.server = grpc.aio.server()
        test_live.pb_grpc.add_ArbiterServiceServicer_to_server(self.script, self.server)
        port = self.server.add_insecure_port("127.0.0.1:0")
        await self.server.start()
        self.client = ArbiterClient(f"127.0.0.1:{port}", retry=test_live.FAST, timeout=2.0)
        self.actions: list = []
        self.adapter = RealtimeAdapter(self.client, "s1", self.actions.append, decide_wait=0.2, watch=False)
        self.script.decide = lambda req, ctx: asyncio.sleep(10)

    async def asyncTearDown(self):
        await self.client.close()
        await self.server.stop(None)

    async def feed(self, *events, adapter=None):
        ad = adapter or self.adapter
        futs = [ad.feed(ev) for ev in events]
        for f in futs:
            await f

    def rpcs(self):
        return [n for n, _ in self.script.requests]

    async def test_utterance_ids_from_item_ids(self):
        await self.feed(
            {"type": "input_audio_buffer.speech_started", "audio_start_ms": 300, "item_id": "item_001"},
            {"type": "conversation.item.input_audio_transcription.delta", "item_id": "item_001", "delta": "Book"},
            {"type": "input_audio_buffer.speech_stopped", "audio_end_ms": 900, "item_id": "item_001"},
            {"type": "input_audio_buffer.speech_started", "audio_start_ms": 1000, "item_id": "item_003"},
            # item_001's transcript comes after the next utterance began: it names its item
            {"type": "conversation.item.input_audio_transcription.completed", "item_id": "item_001",
             "content_index": 0, "transcript": "Book me 3pm tomorrow."},
        )
        speech = self.script.sent("ReportSpeech")
        self.assertEqual([(r.event, r.utterance_id) for r in speech], [
            (pb.SPEECH_EVENT_USER_ACTIVITY_START, "item_001"),
            (pb.SPEECH_EVENT_USER_ACTIVITY_END, "item_001"),
            (pb.SPEECH_EVENT_USER_ACTIVITY_START, "item_003"),
        ])
        texts = self.script.sent("ReportTranscript")
        self.assertEqual([(t.role, t.text, t.interim, t.utterance_id) for t in texts], [
            (pb.ROLE_USER, "Book", True, "item_001"),
            (pb.ROLE_USER, "Book me 3pm tomorrow.", False, "item_001"),
        ])
        self.assertTrue(all(r.HasField("age") for r in speech + texts))

    async def test_function_call_registered_once_behavior_left_to_the_policy(self):
        await self.feed({"type": "response.created", "response": {"id": "resp_001"}}, *call_events())
        self.assertTrue(self.adapter.response_active)
        (reg,) = self.script.sent("RegisterCall")  # arguments.done, then output_item.done: one call
        self.assertEqual((reg.call_id, reg.tool, dict(reg.args), reg.raw_args),
                         ("call_1", "book_slot", {"slot": "tomorrow 3pm"}, ""))
        # An OpenAI call carries no behavior: the tool policy's decides (issue 21).
        self.assertEqual(reg.behavior, pb.BEHAVIOR_UNSPECIFIED)
        self.assertEqual(reg.tool_choice, pb.TOOL_CHOICE_AUTO)
        self.assertIsInstance(self.actions[0], Execute)
        self.assertEqual(self.actions[0].call.args, {"slot": "tomorrow 3pm"})

    async def test_behavior_configured_per_tool_or_left_to_the_policy(self):
        ad = RealtimeAdapter(self.client, "s2", self.actions.append, behaviors={"book_slot": "BLOCKING"}, watch=False)
        await self.feed(*call_events(), adapter=ad)
        ad2 = RealtimeAdapter(self.client, "s3", self.actions.append, default_behavior="NON_BLOCKING", watch=False)
        await self.feed(*call_events(), adapter=ad2)
        ad3 = RealtimeAdapter(self.client, "s4", self.actions.append, watch=False)
        await self.feed(*call_events(), adapter=ad3)
        self.assertEqual([r.behavior for r in self.script.sent("RegisterCall")],
                         [pb.BEHAVIOR_BLOCKING, pb.BEHAVIOR_NON_BLOCKING, pb.BEHAVIOR_UNSPECIFIED])
        await ad3.close(timeout=0.5)
        await ad.close(timeout=0.5)
        await ad2.close(timeout=0.5)

    async def test_unreadable_arguments_go_as_raw_args(self):
        await self.feed(*call_events(arguments='{"slot": "tomorrow 3p'))
        await self.feed(*call_events(call_id="call_2", item_id="item_004", arguments='["tomorrow"]'))
        await self.feed(*call_events(call_id="call_3", item_id="item_005", arguments=""))
        r1, r2, r3 = self.script.sent("RegisterCall")
        self.assertEqual((r1.raw_args, len(r1.args)), ('{"slot": "tomorrow 3p', 0))
        self.assertEqual((r2.raw_args, len(r2.args)), ('["tomorrow"]', 0))  # not an object
        self.assertEqual((r3.raw_args, len(r3.args)), ("", 0))  # blank: no arguments
        self.assertEqual(realtime.parse_arguments('{"a": 1}'), ({"a": 1}, None))
        self.assertEqual(realtime.parse_arguments("nope"), ({}, "nope"))

    async def test_beta_arguments_done_without_name(self):
        # Beta's arguments.done carries no name: it is taken from the item.
        evs = call_events(with_name=False)
        await self.feed(evs[2])  # arguments.done alone, no item seen: not enough to register
        self.assertEqual(self.script.sent("RegisterCall"), [])
        await self.feed(*evs)
        (reg,) = self.script.sent("RegisterCall")
        self.assertEqual((reg.call_id, reg.tool), ("call_1", "book_slot"))

    async def test_incomplete_call_item_is_not_a_call(self):
        item = {"id": "item_002", "type": "function_call", "status": "incomplete", "name": "book_slot",
                "call_id": "call_1", "arguments": '{"slot": "tomo'}
        await self.feed({"type": "response.output_item.done", "item": item})
        self.assertEqual(self.script.sent("RegisterCall"), [])

    async def test_response_done_cancelled_is_barge_in(self):
        # Cut off by barge-in: the server's VAD (turn_detected), or the client's cancel
        # after the user's speech started during the response; a client cancel with no
        # speech ends the turn (issue 21: one rule with the fake provider's checker).
        await self.feed(
            {"type": "response.created", "response": {"id": "resp_001"}},
            {"type": "response.output_audio.delta", "item_id": "item_005", "delta": "AAAA"},
            {"type": "response.output_audio.delta", "item_id": "item_005", "delta": "AAAA"},
            {"type": "response.done", "response": {"id": "resp_001", "status": "cancelled",
                                                   "status_details": {"type": "cancelled", "reason": "turn_detected"}}},
            {"type": "response.created", "response": {"id": "resp_002"}},
            {"type": "response.done", "response": {"id": "resp_002", "status": "cancelled",
                                                   "status_details": {"type": "cancelled", "reason": "client_cancelled"}}},
            {"type": "response.created", "response": {"id": "resp_003"}},
            {"type": "input_audio_buffer.speech_started", "item_id": "item_006"},
            {"type": "response.done", "response": {"id": "resp_003", "status": "cancelled",
                                                   "status_details": {"type": "cancelled", "reason": "client_cancelled"}}},
            {"type": "response.created", "response": {"id": "resp_004"}},
            {"type": "response.audio.delta", "item_id": "item_007", "delta": "AAAA"},  # beta name
            {"type": "response.done", "response": {"id": "resp_004", "status": "completed"}},
        )
        self.assertEqual([r.event for r in self.script.sent("ReportSpeech")], [
            pb.SPEECH_EVENT_MODEL_OUTPUT_START,  # once per turn
            pb.SPEECH_EVENT_INTERRUPTED,
            pb.SPEECH_EVENT_MODEL_TURN_COMPLETE,  # a cancel the client asked for, no speech: no barge-in
            pb.SPEECH_EVENT_USER_ACTIVITY_START,
            pb.SPEECH_EVENT_INTERRUPTED,  # the client's cancel for the user's speech
            pb.SPEECH_EVENT_MODEL_OUTPUT_START,
            pb.SPEECH_EVENT_MODEL_TURN_COMPLETE,
        ])
        self.assertFalse(self.adapter.response_active)
        self.assertEqual([realtime.barge_in(*a) for a in [("cancelled", "turn_detected", False), ("cancelled", "client_cancelled", True),
                                                          ("cancelled", "client_cancelled", False), ("completed", None, True)]],
                         [True, True, False, False])

    async def test_call_of_a_cut_off_response_goes_with_the_policys_behavior(self):
        # An end_call from a response the user talked over: registered with no behavior
        # (the policy's BLOCKING abandons it), then INTERRUPTED, in that order.
        await self.feed({"type": "response.created", "response": {"id": "resp_001"}},
                        *call_events(name="end_call", arguments="{}"),
                        {"type": "input_audio_buffer.speech_started", "item_id": "item_009"},
                        {"type": "response.done", "response": {"id": "resp_001", "status": "cancelled",
                                                               "status_details": {"type": "cancelled", "reason": "turn_detected"}}})
        (reg,) = self.script.sent("RegisterCall")
        self.assertEqual((reg.tool, reg.behavior), ("end_call", pb.BEHAVIOR_UNSPECIFIED))
        events = [(n, getattr(r, "event", None)) for n, r in self.script.requests if n in ("RegisterCall", "ReportSpeech")]
        self.assertEqual(events, [("RegisterCall", None), ("ReportSpeech", pb.SPEECH_EVENT_USER_ACTIVITY_START),
                                  ("ReportSpeech", pb.SPEECH_EVENT_INTERRUPTED)])

    async def test_output_transcript_deltas_and_done(self):
        await self.feed(
            {"type": "response.output_audio_transcript.delta", "item_id": "item_005", "delta": "I have cancelled "},
            {"type": "response.output_audio_transcript.delta", "item_id": "item_005", "delta": "it."},
            {"type": "response.output_audio_transcript.done", "item_id": "item_005", "transcript": "I have cancelled it."},
            # an item whose deltas were missed: the done event's whole text
            {"type": "response.audio_transcript.done", "item_id": "item_006", "transcript": "Nothing is booked."},
        )
        self.assertEqual([(t.role, t.text) for t in self.script.sent("ReportTranscript")], [
            (pb.ROLE_MODEL, "I have cancelled "), (pb.ROLE_MODEL, "it."), (pb.ROLE_MODEL, "Nothing is booked."),
        ])

    async def test_deleted_call_item_is_withdrawn(self):
        await self.feed(*call_events())
        await self.feed({"type": "conversation.item.deleted", "item_id": "item_999"})  # not a call: nothing
        await self.feed({"type": "conversation.item.deleted", "item_id": "item_002"})
        (cancel,) = self.script.sent("ReportToolCallCancellation")
        self.assertEqual((list(cancel.call_ids), cancel.reason), (["call_1"], pb.CANCELLATION_REASON_WITHDRAWN))

    async def test_clients_own_delete_is_not_a_withdrawal(self):
        # A framework moves an item by delete + create (LiveKit): the server's deleted
        # that echoes the client's own delete is no withdrawal (issue 21).
        await self.feed(*call_events())
        delete = {"type": "conversation.item.delete", "item_id": "item_002"}
        self.adapter.sent(delete)
        await self.feed({"type": "conversation.item.deleted", "item_id": "item_002"})
        self.assertEqual(self.script.sent("ReportToolCallCancellation"), [])
        self.adapter.sent({"type": "response.create"})  # other events: nothing

    async def test_business_key_and_tool_choice_per_call(self):
        await self.adapter.function_call("call_7", "book_slot", {"slot": "x"}, business_key="slot-42", tool_choice="none")
        (reg,) = self.script.sent("RegisterCall")
        self.assertEqual((reg.business_key, reg.tool_choice), ("slot-42", pb.TOOL_CHOICE_NONE))

    async def test_tool_choice_from_the_session(self):
        await self.feed({"type": "session.updated", "session": {"tool_choice": "none"}}, *call_events())
        (reg,) = self.script.sent("RegisterCall")
        self.assertEqual(reg.tool_choice, pb.TOOL_CHOICE_NONE)

    async def test_events_delivered_in_the_order_observed(self):
        self.script.fail["ReportSpeech"] = [grpc.StatusCode.UNAVAILABLE] * 3
        futs = [self.adapter.feed(ev) for ev in [
            {"type": "input_audio_buffer.speech_started", "item_id": "item_003"},
            {"type": "conversation.item.input_audio_transcription.completed", "item_id": "item_003",
             "transcript": "Actually, stop."},
            {"type": "input_audio_buffer.speech_stopped", "item_id": "item_003"},
        ]]
        await asyncio.gather(*futs)
        self.assertEqual([n for n in self.rpcs() if n in ("ReportSpeech", "ReportTranscript")],
                         ["ReportSpeech"] * 4 + ["ReportTranscript", "ReportSpeech"])

    async def test_cancelled_job_answers_the_live_id(self):
        async def decide(req, ctx):
            await asyncio.sleep(0.05)
            return pb.DecideResponse(decision=pb.DECISION_CANCEL, reason="stop", job_id=req.job_id)

        self.script.decide = decide
        self.script.complete_effects = test_live.cancelled_with_note(deliver=pb.DELIVERY_NOW)
        await self.feed(*call_events(call_id="fc_1"))
        await asyncio.wait_for(self._until(lambda: any(isinstance(a, SendNote) for a in self.actions)), 3)
        kinds = [type(a) for a in self.actions]
        self.assertEqual(kinds, [Execute, AbortPrepare, SendFunctionResponse, SendNote])
        resp, note = self.actions[2], self.actions[3]
        out = realtime.function_call_output(resp.id, resp.payload)
        self.assertEqual(out["type"], "conversation.item.create")
        self.assertEqual((out["item"]["type"], out["item"]["call_id"]), ("function_call_output", "fc_1"))
        self.assertEqual(json.loads(out["item"]["output"]), {"status": "cancelled"})
        msg = realtime.user_message(note.text)
        self.assertEqual(msg["item"], {"type": "message", "role": "user",
                                       "content": [{"type": "input_text", "text": "System note: cancelled."}]})

    async def _until(self, pred):
        while not pred():
            await asyncio.sleep(0.01)


class CoreFieldsTest(unittest.IsolatedAsyncioTestCase):
    """What the core sends for the fields the translators use: the epoch Connect
    returned, raw_args, the cancellation reason."""

    async def asyncSetUp(self):
        self.script = RealtimeScript()
        self.server = grpc.aio.server()
        test_live.pb_grpc.add_ArbiterServiceServicer_to_server(self.script, self.server)
        port = self.server.add_insecure_port("127.0.0.1:0")
        await self.server.start()
        self.client = ArbiterClient(f"127.0.0.1:{port}", retry=test_live.FAST, timeout=2.0)
        self.script.decide = lambda req, ctx: asyncio.sleep(10)
        self.core = SessionCore(self.client, "s1", lambda a: None, watch=False, language="es")

    async def asyncTearDown(self):
        await self.client.close()
        await self.server.stop(None)

    async def test_epoch_named_after_connect(self):
        await self.core.voice_activity_start()  # before any Connect: no epoch
        opened = self.core.connection_opened("c1")  # queued now, in order
        after = self.core.voice_activity_end(utterance_id="u1")
        await opened
        await after
        await self.core.input_transcript("hola", utterance_id="u1")
        await self.core.function_call("fc_1", "book_slot", raw_args="{oops")
        await self.core.reconnect("c2")
        (conf,) = self.script.sent("ConfigureSession")
        self.assertEqual(conf.epoch, "")
        speech = self.script.sent("ReportSpeech")
        self.assertEqual([(s.epoch, s.utterance_id) for s in speech], [("", ""), ("ep0001", "u1")])
        (tr,) = self.script.sent("ReportTranscript")
        self.assertEqual((tr.epoch, tr.utterance_id), ("ep0001", "u1"))
        (reg,) = self.script.sent("RegisterCall")
        self.assertEqual((reg.epoch, reg.raw_args, len(reg.args)), ("ep0001", "{oops", 0))
        c1, c2 = self.script.sent("Connect")
        self.assertEqual([(c.connection_id, c.epoch) for c in (c1, c2)], [("c1", ""), ("c2", "ep0001")])
        self.assertEqual(self.core.epoch, "ep0001")

    async def test_provider_timeout_reason(self):
        await self.core.tool_call_cancellation(["fc_1"], reason="provider_timeout")
        await self.core.tool_call_cancellation(["fc_2"])
        a, b = self.script.sent("ReportToolCallCancellation")
        self.assertEqual((a.reason, b.reason), (pb.CANCELLATION_REASON_PROVIDER_TIMEOUT, pb.CANCELLATION_REASON_WITHDRAWN))


class ClientEventsTest(unittest.TestCase):
    def test_session_update_ga_and_beta(self):
        tools = [{"name": "book_slot", "parameters": {"type": "object", "properties": {"slot": {"type": "string"}},
                                                      "required": ["slot"]}}]
        ga = realtime.session_update(tools)
        self.assertEqual(ga, {"type": "session.update", "session": {
            "type": "realtime", "audio": {"input": {"transcription": {"model": "gpt-4o-transcribe"}}},
            "tools": [{"type": "function", "name": "book_slot", "parameters": tools[0]["parameters"]}],
            "tool_choice": "auto"}})
        beta = realtime.session_update([{"name": "get_weather", "description": "The forecast."}], beta=True,
                                       transcription_model="whisper-1")
        self.assertEqual(beta["session"]["input_audio_transcription"], {"model": "whisper-1"})
        self.assertEqual(beta["session"]["tools"], [{"type": "function", "name": "get_weather",
                                                     "description": "The forecast.",
                                                     "parameters": {"type": "object", "properties": {}}}])
        self.assertNotIn("type", beta["session"])
        self.assertEqual(realtime.response_create(), {"type": "response.create"})


if __name__ == "__main__":
    unittest.main()
