"""The tool helpers (arbiter_client.tool) against a running arbiter: a two-phase tool
that knows only its call id commits when the arbiter says so, is cancelled by a stop
while it prepares, fails closed, and refuses a call that executes nothing.

    ARBITER_TARGET=127.0.0.1:50051 /usr/bin/python3 -m unittest -v tests.test_tool

The arbiter runs with testdata/tools/booking.yaml (book_slot side-effecting, grace
1.5 s). Without the wire guard nothing indexes the calls, so the jobs are named by
session id and call id; the guard's end-to-end tests run the same helpers by call id
alone.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from arbiter_client import ArbiterClient, FailedPreconditionError, NotFoundError  # noqa: E402
from arbiter_client.tool import JobTaken, ToolJob, two_phase  # noqa: E402
from arbiter_client.v1 import arbiter_pb2 as pb  # noqa: E402
from google.protobuf import struct_pb2  # noqa: E402


def _args(**kw):
    s = struct_pb2.Struct()
    s.update(kw)
    return s


@unittest.skipUnless(os.environ.get("ARBITER_TARGET"), "set ARBITER_TARGET to a running arbiter (booking.yaml)")
class ToolHelperTest(unittest.IsolatedAsyncioTestCase):
    async def asyncSetUp(self):
        self.client = ArbiterClient(os.environ["ARBITER_TARGET"])
        self.sid = "tool-" + secrets.token_hex(4)

    async def asyncTearDown(self):
        await self.client.close()

    async def register(self, call_id: str, slot: str = "tomorrow 3pm") -> pb.RegisterCallResponse:
        return await self.client.register_call(
            pb.RegisterCallRequest(session_id=self.sid, call_id=call_id, tool="book_slot", args=_args(slot=slot))
        )

    async def test_decorator_commits_on_commit(self):
        await self.register("fc_1")
        done = []

        async def commit(hold):
            done.append(("commit", hold))
            return {"reference": "R-1"}

        async def release(hold):
            done.append(("release", hold))

        @two_phase(self.client, call_id=lambda call_id, slot: call_id, commit=commit, release=release, decide_wait=5)
        async def book_slot(call_id: str, slot: str):
            """Book an appointment slot."""
            return f"hold:{slot}"

        self.assertEqual(book_slot.__doc__, "Book an appointment slot.")  # the framework's schema source
        # The session is named by id here: nothing indexed the call (no guard).
        job = ToolJob(self.client, "fc_1", session_id=self.sid, decide_wait=5)
        async with job:
            hold = await job.preparing(asyncio.sleep(0.05, result="h"))
            self.assertTrue(await job.commit())  # after the 1.5 s grace window
            payload = await job.committed({"reference": "R-1"})
        self.assertEqual(payload["status"], "committed")
        self.assertEqual(payload["result"], {"reference": "R-1"})
        self.assertEqual(hold, "h")
        # A second Complete by the same call id repeats the first answer.
        again = await ToolJob(self.client, "fc_1", session_id=self.sid).committed({"reference": "R-1"})
        self.assertEqual(again, payload)

    async def test_call_id_issued_again_after_commit_runs_no_phase(self):
        await self.register("fc_1")
        async with ToolJob(self.client, "fc_1", session_id=self.sid, decide_wait=5) as job:
            await job.preparing(asyncio.sleep(0.05))
            self.assertTrue(await job.commit())
            await job.committed({"reference": "R-1"})
        # The provider issues fc_1 again (a retry, a reconnect): the framework runs the tool again.
        await self.register("fc_1")
        ran = []
        with self.assertRaises(JobTaken):
            async with ToolJob(self.client, "fc_1", session_id=self.sid, decide_wait=5) as again:
                ran.append("prepare")
                await again.preparing(asyncio.sleep(0.05))
                if await again.commit():
                    ran.append("commit")
        self.assertEqual(ran, [])
        s = await self.client.get_session(pb.GetSessionRequest(session_id=self.sid))
        self.assertEqual([j.outcome for j in s.jobs], [pb.OUTCOME_COMMITTED])

    async def test_stop_while_preparing_cancels(self):
        await self.register("fc_1")
        job = ToolJob(self.client, "fc_1", session_id=self.sid, decide_wait=5)
        prepared = asyncio.Event()

        async def slow_prepare():
            prepared.set()
            await asyncio.sleep(30)

        async def say_stop():
            await prepared.wait()
            await self.client.report_speech(pb.ReportSpeechRequest(session_id=self.sid, event=pb.SPEECH_EVENT_USER_ACTIVITY_START))
            await self.client.report_transcript(pb.ReportTranscriptRequest(session_id=self.sid, text="Actually, stop."))
            await self.client.report_speech(pb.ReportSpeechRequest(session_id=self.sid, event=pb.SPEECH_EVENT_USER_ACTIVITY_END))

        stopper = asyncio.ensure_future(say_stop())
        async with job:
            with self.assertRaises(Exception) as caught:
                await job.preparing(slow_prepare())
        await stopper
        self.assertEqual(type(caught.exception).__name__, "Cancelled")
        self.assertEqual(job.payload["status"], "cancelled")  # leaving the block reported it
        s = await self.client.get_session(pb.GetSessionRequest(session_id=self.sid))
        self.assertEqual(s.jobs[0].outcome, pb.OUTCOME_CANCELLED)

    async def test_an_error_before_the_decision_fails_the_job(self):
        await self.register("fc_1")
        with self.assertRaises(RuntimeError):
            async with ToolJob(self.client, "fc_1", session_id=self.sid):
                raise RuntimeError("backend down")
        s = await self.client.get_session(pb.GetSessionRequest(session_id=self.sid))
        self.assertEqual(s.jobs[0].outcome, pb.OUTCOME_FAILED)

    async def test_a_call_that_executes_nothing_is_refused(self):
        await self.register("fc_1")
        await self.register("fc_2", slot="tomorrow at 3pm")  # the same business key: a duplicate
        with self.assertRaises(FailedPreconditionError) as caught:
            async with ToolJob(self.client, "fc_2", session_id=self.sid):
                pass
        self.assertEqual(caught.exception.field, "call_id")
        with self.assertRaises(NotFoundError) as caught:
            async with ToolJob(self.client, "fc_unindexed"):  # no session id, and no guard indexed it
                pass
        self.assertEqual(caught.exception.field, "call_id")


if __name__ == "__main__":
    unittest.main()
