"""Unit tests of the raw Gemini Live agent's messages: live_wire's setup, toolResponse
and clientContent shapes, and examples/wire_agent.py's Gemini session (its setup from a
trace and a policy, and what it puts on the socket for the adapter's actions: one
response per live id, none for a dead one, "when_idle" notes after the turn)."""

from __future__ import annotations

import asyncio
import argparse
import json
import logging
import os
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, os.path.join(HERE, "..", "examples"))

from arbiter_client import ArbiterClient, SendFunctionResponse, SendNote, Skip, live_wire  # noqa: E402

try:
    import wire_agent  # noqa: E402  (needs python3-websockets)
except SystemExit:  # pragma: no cover
    wire_agent = None
logging.getLogger("wire_agent").setLevel(logging.CRITICAL)  # the guard's refusals are logged as errors


def response(call_id="fc_1", **kw):
    return SendFunctionResponse(call_id, "book_slot", {"status": "cancelled"}, "job-1", **kw)


class LiveWireTest(unittest.TestCase):
    def test_setup(self):
        decl = live_wire.function_declaration(
            "book_slot", parameters={"type": "object", "properties": {"slot": {"type": "string"}}, "required": ["slot"]},
            behavior="NON_BLOCKING")
        self.assertEqual(live_wire.setup("models/gemini-3.8-live", [decl]), {"setup": {
            "model": "models/gemini-3.8-live",
            "generationConfig": {"responseModalities": ["AUDIO"]},
            "tools": [{"functionDeclarations": [{
                "name": "book_slot",
                "parameters": {"type": "OBJECT", "properties": {"slot": {"type": "STRING"}}, "required": ["slot"]},
                "behavior": "NON_BLOCKING"}]}],
            "inputAudioTranscription": {},
            "outputAudioTranscription": {},
            "sessionResumption": {},
        }})
        resumed = live_wire.setup("m", [], resumption_handle="h-1", output_transcription=False)["setup"]
        self.assertEqual(resumed["sessionResumption"], {"handle": "h-1"})
        self.assertNotIn("tools", resumed)
        self.assertNotIn("outputAudioTranscription", resumed)
        self.assertEqual(live_wire.function_declaration("hangup"), {"name": "hangup"})

    def test_tool_response_shapes(self):
        self.assertEqual(live_wire.tool_response(response()), {"toolResponse": {"functionResponses": [
            {"id": "fc_1", "name": "book_slot", "response": {"status": "cancelled"}}]}})
        riding = live_wire.function_response(response(scheduling="WHEN_IDLE"))  # a note rides on it
        self.assertEqual(riding["scheduling"], "WHEN_IDLE")
        self.assertNotIn("willContinue", riding)
        interim = live_wire.function_response(response(will_continue=True))
        self.assertEqual((interim["willContinue"], "scheduling" in interim), (True, False))
        both = live_wire.tool_response([response("fc_1"), response("fc_2")])
        self.assertEqual([f["id"] for f in both["toolResponse"]["functionResponses"]], ["fc_1", "fc_2"])

    def test_client_content(self):
        self.assertEqual(live_wire.client_content("System note: cancelled."), {"clientContent": {
            "turns": [{"role": "user", "parts": [{"text": "System note: cancelled."}]}], "turnComplete": True}})


class FakeSocket:
    def __init__(self):
        self.sent: list = []

    async def send(self, text):
        self.sent.append(json.loads(text))


@unittest.skipIf(wire_agent is None, "python3-websockets is not installed")
class WireAgentGeminiTest(unittest.IsolatedAsyncioTestCase):
    async def asyncSetUp(self):
        self.dir = tempfile.TemporaryDirectory()
        path = os.path.join(self.dir.name, "C_x.jsonl")
        with open(path, "w") as f:
            f.write('{"t_ms": 0, "event": "session_start", "prepare_ms": 2500}\n')
            f.write('{"t_ms": 10, "event": "tool_call", "call_id": "fc_1", "tool": "book_slot", '
                    '"args": {"slot": "tomorrow 3pm"}, "behavior": "BLOCKING"}\n')
            f.write('{"t_ms": 20, "event": "tool_call", "call_id": "w1", "tool": "get_weather", "args": {"days": 2}}\n')
        self.trace = wire_agent.Trace.read(path)
        policy = {"book_slot": wire_agent.Tool("book_slot", {"slot": {"type": "string"}}, ["slot"], "NON_BLOCKING")}
        self.tools = wire_agent.declared_tools([self.trace], policy)
        args = argparse.Namespace(provider="ws://127.0.0.1:1", model=None, no_response_scheduling=False,
                                  api_key="x", ca_file=None)
        self.client = ArbiterClient("127.0.0.1:1")
        self.log = open(os.path.join(self.dir.name, "backend.jsonl"), "w")
        self.session = wire_agent.GeminiSession(self.trace, self.tools, args, self.client, self.log)
        self.ws = FakeSocket()
        self.session.ws = self.ws

    async def asyncTearDown(self):
        self.log.close()
        await self.client.close()
        self.dir.cleanup()

    def test_trace_and_setup(self):
        self.assertEqual((self.trace.name, self.trace.prepare_ms), ("C_x", 2500))
        setup = self.session.setup(None)["setup"]
        decls = {d["name"]: d for d in setup["tools"][0]["functionDeclarations"]}
        # The recorded app declared book_slot BLOCKING (the trace says so, over the
        # policy's); get_weather has no behavior anywhere: declared NON_BLOCKING, the
        # arbiter's default for a call with none, which the reference replay assumes
        # (left out, Gemini's default would be BLOCKING: the two would disagree).
        self.assertEqual({n: d["behavior"] for n, d in decls.items()}, {"book_slot": "BLOCKING", "get_weather": "NON_BLOCKING"})
        self.assertEqual(self.session.live.behaviors, {"book_slot": "BLOCKING", "get_weather": "NON_BLOCKING"})
        self.assertEqual(decls["book_slot"]["parameters"]["required"], ["slot"])
        self.assertEqual(decls["get_weather"]["parameters"]["properties"], {"days": {"type": "NUMBER"}})
        self.assertEqual((setup["inputAudioTranscription"], setup["outputAudioTranscription"]), ({}, {}))
        self.assertEqual(self.session.setup("fake-session-1")["setup"]["sessionResumption"], {"handle": "fake-session-1"})
        self.assertTrue(self.session.live.response_scheduling)
        self.assertTrue(self.session.url().endswith("/trace/C_x"))

    async def test_one_response_per_live_id_none_for_dead(self):
        s = self.session
        await s.on_action(Skip("fc_0", "book_slot", "abandoned", "job-1"))
        await s.on_action(response("fc_0"))  # dead: never sent
        await s.on_action(response("fc_1", will_continue=True))  # interim: the final one still comes
        await s.on_action(response("fc_1", scheduling="INTERRUPT"))
        await s.on_action(response("fc_1"))  # answered already: not again
        frs = [m["toolResponse"]["functionResponses"][0] for m in self.ws.sent]
        self.assertEqual(frs, [
            {"id": "fc_1", "name": "book_slot", "response": {"status": "cancelled"}, "willContinue": True},
            {"id": "fc_1", "name": "book_slot", "response": {"status": "cancelled"}, "scheduling": "INTERRUPT"},
        ])
        self.assertEqual(s.sent, {"responses": 1, "interim": 1, "notes": 0})

    async def test_when_idle_notes_wait_for_the_turn(self):
        s = self.session
        s.speaking = True
        await s.on_action(SendNote("System note: correction.", "when_idle", "job-1"))
        await s.on_action(SendNote("System note: cancelled.", "now", "job-1"))
        self.assertEqual([m["clientContent"]["turns"][0]["parts"][0]["text"] for m in self.ws.sent],
                         ["System note: cancelled."])
        s.speaking = False
        await s.flush_idle_notes()
        self.assertEqual(self.ws.sent[-1], live_wire.client_content("System note: correction."))
        self.assertEqual(s.sent["notes"], 2)

    async def test_backend_log_lines(self):
        from arbiter_client import Call, Cancel, Execute

        s = self.session
        s.clock.start()
        await s.on_action(Execute(Call("fc_1", "book_slot", {"slot": "tomorrow 3pm"}), "job-1.ab12cd", True))
        await s.on_action(Cancel("job-1.ab12cd", "stop intent"))
        await asyncio.sleep(0)
        self.log.flush()
        with open(self.log.name) as f:
            lines = [json.loads(line) for line in f]
        self.assertEqual([(l["out"], l["job_id"], l["trace"]) for l in lines],
                         [("execute", "job-1.ab12cd", "C_x"), ("cancel", "job-1.ab12cd", "C_x")])
        self.assertEqual(lines[0]["call_id"], "fc_1")
        self.assertTrue(all(isinstance(l["t_ms"], int) for l in lines))
        self.assertNotIn("job-1.ab12cd", s.backend.prepares)  # the prepare was stopped


if __name__ == "__main__":
    unittest.main()
