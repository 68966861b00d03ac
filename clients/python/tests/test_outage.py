"""Issue 12 end to end: a network cut turns a stop into a commit, unless the adapter
delivers what it observed with its age, asks Decide only once it is delivered, and aborts
a waiting Decide when an event's delivery fails (the Decide contract).

Real processes, real timings: the LiveAdapter talks to a real `arbiter serve` (the
booking policy: 1.5 s grace, 3 s transcript timeout) through clients/e2e/proxy.py, a TCP
proxy the test cuts. The timeline of the issue:

    t=0     the booking's prepare is done: Decide(prepared=true) starts the grace window
    t=0.3   the proxy cuts every connection and refuses new ones
    t=0.8   the user starts speaking (voice activity START): its ReportSpeech fails and
            is retried
    t=3.5   the proxy is back
    t=3.6   the transcript "Stop, don't book it.", then (3.7) the end of voice activity

The START's first failed attempt aborts the parked Decide, and no Decide is asked until
the START has landed: whenever the proxy comes back, the arbiter has the START (and then
the stop) before any Decide could hand out a COMMIT, which would stand. The adapter must
end with the job cancelled: a Cancel action and the cancel note, never a Commit.

clients/test.sh runs it with ARBITER_OUTAGE_TARGET set to its booking arbiter; skipped
otherwise:

    ARBITER_OUTAGE_TARGET=127.0.0.1:50051 python3 -m unittest -v tests.test_outage
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from arbiter_client import ArbiterClient, Cancel, Commit, Execute, LiveAdapter, SendNote  # noqa: E402
from tests.e2e_proxy import LogLines, Proxy  # noqa: E402

TARGET = os.environ.get("ARBITER_OUTAGE_TARGET")

@unittest.skipUnless(TARGET, "set ARBITER_OUTAGE_TARGET to an arbiter serving testdata/tools/booking.yaml")
class OutageTest(unittest.IsolatedAsyncioTestCase):
    report = ""  # which way it went, printed after the result line

    @classmethod
    def tearDownClass(cls):
        if cls.report:
            print(cls.report, file=sys.stderr)

    async def asyncSetUp(self):
        self.proxy = await Proxy.start(TARGET)
        self.log = LogLines().attach()

    async def asyncTearDown(self):
        self.log.detach()
        await self.proxy.close()

    async def command(self, cmd: str) -> None:
        await self.proxy.say(cmd, {"cut": "cut", "restore": "restored"}[cmd])

    async def test_stop_during_a_network_cut_cancels_the_booking(self):
        loop = asyncio.get_running_loop()
        actions: list[tuple[float, object]] = []
        executed = asyncio.Event()
        t0 = loop.time()

        def on_action(a) -> None:
            actions.append((loop.time() - t0, a))
            if isinstance(a, Execute):
                executed.set()
            if isinstance(a, Commit):  # what the booking agent would do: book it
                asyncio.ensure_future(adapter.committed(a.job_id, {"reference": "R-1"}))

        client = ArbiterClient(self.proxy.address)
        session = f"py-outage-{os.getpid()}-{int(time.time() * 1000) % 10**8}"
        adapter = LiveAdapter(client, session, on_action)
        try:
            await adapter.feed({"tool_call": {"function_calls": [
                {"id": "fc_1", "name": "book_slot", "args": {"slot": "tomorrow 3pm"}}]}})
            await asyncio.wait_for(executed.wait(), 10)
            (job_id,) = [a.job_id for _, a in actions if isinstance(a, Execute)]

            async def at(t: float) -> None:
                await asyncio.sleep(max(0.0, t0 + t - loop.time()))

            t0 = loop.time()
            await adapter.prepared(job_id)  # Decide(prepared=true): the grace window runs to 1.5 s
            await at(0.3)
            await self.command("cut")
            await at(0.8)
            adapter.feed({"voice_activity": {"voice_activity_type": "ACTIVITY_START"}})  # fails, retried
            await at(3.5)
            await self.command("restore")
            await at(3.6)
            adapter.feed({"server_content": {"input_transcription": {"text": "Stop, don't book it."}}})
            await at(3.7)
            adapter.feed({"voice_activity": {"voice_activity_type": "ACTIVITY_END"}})

            def of(kind):
                return [a for _, a in actions if isinstance(a, kind)]

            deadline = loop.time() + 25
            while not (of(Commit) or (of(Cancel) and of(SendNote))) and loop.time() < deadline:
                await asyncio.sleep(0.05)
            timeline = "\n".join(f"  {t:6.2f}s {a}" for t, a in actions)
            log = "\n".join(f"  {m}" for m in self.log.lines)
            self.assertEqual(of(Commit), [], f"committed through the cut:\n{timeline}\nlog:\n{log}")
            self.assertEqual(len(of(Cancel)), 1, f"no cancel:\n{timeline}\nlog:\n{log}")
            self.assertIn("stop intent", of(Cancel)[0].reason)
            (note,) = of(SendNote)
            self.assertIn("cancelled before it was committed", note.text)
            retried = [m for m in self.log.lines if "USER_ACTIVITY_START" in m and "retrying" in m]
            self.assertTrue(retried, f"the START was never retried (no cut?):\n{log}")
            aborted = sum("Decide aborted" in m for m in self.log.lines)
            OutageTest.report = (f"  Decides aborted for an undelivered event: {aborted}; "
                                 f"START attempts: {len(retried) + 1}\n{timeline}")
        finally:
            await adapter.close()
            await client.close()


if __name__ == "__main__":
    unittest.main()
