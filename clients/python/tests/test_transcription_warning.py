"""The adapters warn once per session, with logging.warning (a level a user sees), when
the user's speech was reported (voice activity) but no input transcript ever arrived:
input transcription is off, so no stop can be read, and every commit the user talked
over is cancelled once the policy's transcript_timeout passes. Judged at the start of
a second utterance and at close, never by a timer."""

from __future__ import annotations

import logging
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import grpc  # noqa: E402
from test_live import FAST, Script  # noqa: E402

from arbiter_client import ArbiterClient, LiveAdapter, RealtimeAdapter  # noqa: E402
from arbiter_client.v1 import arbiter_pb2_grpc as pb_grpc  # noqa: E402

START = {"voice_activity": {"voice_activity_type": "ACTIVITY_START"}}
END = {"voice_activity": {"voice_activity_type": "ACTIVITY_END"}}


def said(text, interim=False):
    key = "interim_input_transcription" if interim else "input_transcription"
    return {"server_content": {key: {"text": text}}}


class TranscriptionWarningTest(unittest.IsolatedAsyncioTestCase):
    async def asyncSetUp(self):
        self.script = Script()
        self.server = grpc.aio.server()
        pb_grpc.add_ArbiterServiceServicer_to_server(self.script, self.server)
        port = self.server.add_insecure_port("127.0.0.1:0")
        await self.server.start()
        self.client = ArbiterClient(f"127.0.0.1:{port}", retry=FAST, timeout=2.0)
        self.actions: list = []
        self.adapter = LiveAdapter(self.client, "s1", self.actions.append, decide_wait=0.2, watch=False)

    async def asyncTearDown(self):
        await self.client.close()
        await self.server.stop(None)

    def warnings(self, cm):
        return [r for r in cm.records if "no input transcript" in r.getMessage() and r.levelno == logging.WARNING]

    async def test_warns_once_at_the_second_utterance_without_a_transcript(self):
        with self.assertLogs("arbiter_client", logging.WARNING) as cm:
            for m in (START, END, START, END, START, END):
                await self.adapter.feed(m)
            await self.adapter.close()
        got = self.warnings(cm)
        self.assertEqual(len(got), 1, [r.getMessage() for r in cm.records])
        self.assertIn("s1", got[0].getMessage())
        self.assertIn("input_audio_transcription", got[0].getMessage())

    async def test_warns_at_close_after_one_utterance_without_a_transcript(self):
        with self.assertLogs("arbiter_client", logging.WARNING) as cm:
            await self.adapter.feed(START)
            await self.adapter.feed(END)
            await self.adapter.close()
        self.assertEqual(len(self.warnings(cm)), 1, [r.getMessage() for r in cm.records])

    async def test_silent_when_a_transcript_came(self):
        logger = logging.getLogger("arbiter_client")
        seen = []
        handler = logging.Handler(logging.WARNING)
        handler.emit = seen.append
        logger.addHandler(handler)
        try:
            for m in (START, said("hold on", interim=True), END, said("hold on."), START, END):
                await self.adapter.feed(m)
            await self.adapter.close()
        finally:
            logger.removeHandler(handler)
        self.assertEqual([r for r in seen if "no input transcript" in r.getMessage()], [])

    async def test_silent_without_speech(self):
        logger = logging.getLogger("arbiter_client")
        seen = []
        handler = logging.Handler(logging.WARNING)
        handler.emit = seen.append
        logger.addHandler(handler)
        try:
            await self.adapter.close()
        finally:
            logger.removeHandler(handler)
        self.assertEqual([r for r in seen if "no input transcript" in r.getMessage()], [])

    async def test_openai_adapter_warns_too(self):
        rt = RealtimeAdapter(self.client, "s2", self.actions.append, watch=False)
        with self.assertLogs("arbiter_client", logging.WARNING) as cm:
            for item in ("item_1", "item_2"):
                await rt.feed({"type": "input_audio_buffer.speech_started", "item_id": item})
                await rt.feed({"type": "input_audio_buffer.speech_stopped", "item_id": item})
            await rt.close()
        got = self.warnings(cm)
        self.assertEqual(len(got), 1, [r.getMessage() for r in cm.records])
        self.assertIn("audio.input.transcription", got[0].getMessage())


if __name__ == "__main__":
    unittest.main()
