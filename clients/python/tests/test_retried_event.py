"""Issue 15 end to end: a ReportTranscript whose answer is lost is retried with the same
event id and applied once.

Real processes: the LiveAdapter talks to a real `arbiter serve` through
clients/e2e/proxy.py; the proxy's ``drop-reply`` lets the next request reach the arbiter
and resets the connection instead of forwarding its answer. The adapter's outbox sees
UNAVAILABLE and redelivers the transcript with the same ``event_id`` (and a fresh
``age``); the arbiter answers ``repeat=true``; the session's history (GetHistory, read
directly from the arbiter) holds the transcript once. A control sends the same kind of
request without an event id through the same drop: it is applied twice, which is what
the event id prevents (so the check can fail).

clients/test.sh runs it with ARBITER_RETRY_TARGET set to its booking arbiter; skipped
otherwise:

    ARBITER_RETRY_TARGET=127.0.0.1:50051 python3 -m unittest -v tests.test_retried_event
"""

from __future__ import annotations

import asyncio
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from arbiter_client import ArbiterClient, LiveAdapter, RetryPolicy  # noqa: E402
from arbiter_client.v1 import arbiter_pb2 as pb, arbiter_pb2_grpc as pb_grpc  # noqa: E402
from tests.e2e_proxy import LogLines, Proxy  # noqa: E402

TARGET = os.environ.get("ARBITER_RETRY_TARGET")


@unittest.skipUnless(TARGET, "set ARBITER_RETRY_TARGET to an arbiter serving testdata/tools/booking.yaml")
class RetriedEventTest(unittest.IsolatedAsyncioTestCase):
    async def asyncSetUp(self):
        self.proxy = await Proxy.start(TARGET)
        self.via_proxy = self.proxy.address
        self.direct = ArbiterClient(TARGET)
        self.log = LogLines().attach()

    async def asyncTearDown(self):
        self.log.detach()
        await self.direct.close()
        await self.proxy.close()

    async def transcripts(self, sid: str) -> list:
        hist = await self.direct.get_history(pb.GetHistoryRequest(session_id=sid))
        return [e.transcript.text for e in hist.entries if e.WhichOneof("entry") == "transcript"]

    async def test_retried_transcript_applied_once(self):
        sid = f"retried-transcript-{os.getpid()}"
        client = ArbiterClient(self.via_proxy, retry=RetryPolicy(initial_backoff=0.05, max_backoff=0.2))
        adapter = LiveAdapter(client, sid, lambda a: None, watch=False)  # no stream: the next reply is the transcript's
        try:
            await adapter.feed({"voice_activity": {"voice_activity_type": "ACTIVITY_START"}})  # connected, session made
            await self.proxy.say("drop-reply", "armed")
            text = "I'd like the three pm slot please."
            await asyncio.wait_for(adapter.feed({"server_content": {"input_transcription": {"text": text}}}), 20)
            await self.proxy.say("", "dropped")  # the proxy did drop an answer (printed when it happened)
            self.assertEqual(await self.transcripts(sid), [text])  # applied once
            retried = [ln for ln in self.log.lines if "ReportTranscript" in ln and "retrying" in ln]
            self.assertTrue(retried, self.log.lines)  # the outbox saw the lost answer and redelivered
            self.assertTrue(any("repeat" in ln for ln in self.log.lines), self.log.lines)  # answered repeat
            await adapter.close(timeout=5)
        finally:
            await client.close()

    async def test_control_without_event_id_is_applied_twice(self):
        # The same drop, a request without an event id and a plain resend: two
        # transcripts. What the event id above prevents.
        import grpc

        sid = f"retried-control-{os.getpid()}"
        async with grpc.aio.insecure_channel(self.via_proxy, options=[("grpc.enable_retries", 0)]) as ch:
            stub = pb_grpc.ArbiterServiceStub(ch)
            await stub.ReportSpeech(pb.ReportSpeechRequest(session_id=sid, event=pb.SPEECH_EVENT_USER_ACTIVITY_START))
            await self.proxy.say("drop-reply", "armed")
            req = pb.ReportTranscriptRequest(session_id=sid, role=pb.ROLE_USER, text="the three pm slot")
            with self.assertRaises(grpc.aio.AioRpcError):
                await stub.ReportTranscript(req, timeout=5)
            await self.proxy.say("", "dropped")
            await stub.ReportTranscript(req, timeout=5, wait_for_ready=True)
        self.assertEqual(await self.transcripts(sid), ["the three pm slot"] * 2)


if __name__ == "__main__":
    unittest.main()
