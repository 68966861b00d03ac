"""Unit tests (scripted in-process server) of Watch's resume, Connect, ReportProgress,
OUTCOME_UNKNOWN and confirm-then-act runs in the client and the Live adapter."""

from __future__ import annotations

import os
import sys
import unittest

import grpc

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import test_live  # noqa: E402  (not its TestCase names: unittest would run them twice)

from arbiter_client import ArbiterClient, Execute, LiveAdapter, RunUpdate, SendFunctionResponse, Skip  # noqa: E402
from arbiter_client.v1 import arbiter_pb2 as pb  # noqa: E402


class MoreScript(test_live.Script):
    def __init__(self):
        super().__init__()
        self.register = None  # (request) -> RegisterCallResponse, replacing the default
        self.watch_plan: list[list] = []  # per Watch call: seqs to send, then "UNAVAILABLE" or end
        self.progress_effects = pb.Effects()
        self.connect_effects = pb.Effects()

    async def RegisterCall(self, request, context):
        if self.register is None:
            return await super().RegisterCall(request, context)
        await self._enter("RegisterCall", request, context)
        return self.register(request)

    async def Connect(self, request, context):
        await self._enter("Connect", request, context)
        return pb.ConnectResponse(effects=self.connect_effects)

    async def ReportProgress(self, request, context):
        await self._enter("ReportProgress", request, context)
        return pb.ReportProgressResponse(effects=self.progress_effects)

    async def Watch(self, request, context):
        self.requests.append(("Watch", request))
        for item in self.watch_plan.pop(0):
            if item == "UNAVAILABLE":
                await context.abort(grpc.StatusCode.UNAVAILABLE, "replica going away")
            yield pb.WatchResponse(seq=item, skip=pb.Skip(call_id=f"c{item}", reason="abandoned", seq=item))


class WorkflowUnitTest(unittest.IsolatedAsyncioTestCase):
    async def asyncSetUp(self):
        self.script = MoreScript()
        self.server = grpc.aio.server()
        test_live.pb_grpc.add_ArbiterServiceServicer_to_server(self.script, self.server)
        port = self.server.add_insecure_port("127.0.0.1:0")
        await self.server.start()
        self.client = ArbiterClient(f"127.0.0.1:{port}", retry=test_live.FAST, timeout=2.0)
        self.actions: list = []
        self.adapter = LiveAdapter(self.client, "s1", self.actions.append, decide_wait=0.2)

    async def asyncTearDown(self):
        await self.client.close()
        await self.server.stop(None)

    def of(self, kind):
        return [a for a in self.actions if isinstance(a, kind)]

    async def test_watch_resumes_after_the_last_seq(self):
        self.script.watch_plan = [[1, 2, "UNAVAILABLE"], [2, 3]]  # the second replica resends 2
        seqs = [w.seq async for w in self.client.watch("s1")]
        self.assertEqual(seqs, [1, 2, 3])
        self.assertEqual([r.after_seq for r in self.script.sent("Watch")], [0, 2])

    async def test_run_executes_nothing_and_the_confirmation_runs_the_runs_tool(self):
        prompt = pb.Effects()
        r = prompt.responses.add(call_id="p1", name="take_photo", seq=1)
        r.payload.update({"status": "needs_confirmation", "run_id": "run-1"})
        prompt.runs.add(run_id="run-1", tool="take_photo", state=pb.RUN_STATE_OPENED, call_id="p1", seq=2)

        def register(req):
            if req.tool == "take_photo":
                return pb.RegisterCallResponse(call_id=req.call_id, disposition=pb.DISPOSITION_RUN, run_id="run-1",
                                               effects=prompt)
            resp = pb.RegisterCallResponse(call_id=req.call_id, disposition=pb.DISPOSITION_EXECUTE, job_id="job-1",
                                           side_effect=False, run_id="run-1", job_tool="take_photo")
            resp.job_args.update({"subject": "cat"})
            return resp

        self.script.register = register
        await self.adapter.feed({"tool_call": {"function_calls": [{"id": "p1", "name": "take_photo", "args": {"subject": "cat"}}]}})
        self.assertEqual([type(a) for a in self.actions], [SendFunctionResponse, RunUpdate])
        self.assertEqual(self.actions[1].state, "opened")
        await self.adapter.feed({"tool_call": {"function_calls": [
            {"id": "k1", "name": "confirm_action", "args": {"run_id": "run-1", "confirmed": True}}]}})
        (ex,) = self.of(Execute)
        self.assertEqual((ex.tool, ex.args, ex.call.id, ex.call.name, ex.run_id),
                         ("take_photo", {"subject": "cat"}, "k1", "confirm_action", "run-1"))
        self.assertEqual(self.script.sent("Decide"), [])

    async def test_interim_unknown_and_reconnect(self):
        await self.adapter.feed({"tool_call": {"function_calls": [{"id": "g1", "name": "get_weather", "args": {}}]}})
        r = self.script.progress_effects.responses.add(call_id="g1", name="get_weather", job_id="job-1", interim=True, seq=1)
        r.payload.update({"status": "in_progress", "percent": 40})
        await self.adapter.progress("job-1", {"percent": 40})
        await self.adapter.progress("job-1", {"percent": 40})  # the same seq again: handed out once
        (interim,) = self.of(SendFunctionResponse)
        self.assertEqual((interim.id, interim.will_continue, interim.payload["percent"]), ("g1", True, 40))
        self.script.complete_effects = effects_with(("g1", "unknown", 2))
        await self.adapter.unknown("job-1")
        self.script.complete_effects = pb.Effects()
        await self.adapter.failed("job-1", "it did not happen")
        self.assertEqual([c.outcome for c in self.script.sent("Complete")], [pb.OUTCOME_UNKNOWN, pb.OUTCOME_FAILED])
        final = self.of(SendFunctionResponse)[-1]
        self.assertEqual((final.will_continue, final.payload["status"]), (False, "unknown"))
        self.script.connect_effects.skips.add(call_id="x1", name="book_slot", reason="connection_closed", seq=3)
        await self.adapter.reconnect("conn-2")
        (connect,) = self.script.sent("Connect")
        self.assertEqual((connect.session_id, connect.connection_id), ("s1", "conn-2"))
        self.assertEqual([(s.id, s.reason) for s in self.of(Skip)], [("x1", "connection_closed")])


def effects_with(*responses):
    e = pb.Effects()
    for call_id, status, seq in responses:
        e.responses.add(call_id=call_id, name="get_weather", job_id="job-1", seq=seq).payload.update({"status": status})
    return e


if __name__ == "__main__":
    unittest.main()
