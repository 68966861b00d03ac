"""Issue 12 / 15 end to end: a session its store lost is surfaced as SessionLost, never
started again silently.

Real processes: a redis-server with persistence off (``--save '' --appendonly no``) on a
free port, ``arbiter serve --redis-url ... --allow-volatile-store`` on it (both started
here), and the LiveAdapter. The adapter Connects (the session's epoch), a call is
registered and prepared; redis-server is restarted (everything it held is gone); the next
event the adapter observes must come back as a SessionLost action (the call's outcome
unknown, its job released: an AbortPrepare, no Commit) and a SessionLostError from the
event's future, and the arbiter must not have made a new session of it (GetSession
NOT_FOUND). Reporting the connection again goes on in a new epoch (SESSION_STATE_LOST).

clients/test.sh runs it with ARBITER_BIN set to the arbiter binary; skipped otherwise:

    ARBITER_BIN=/tmp/arbiter python3 -m unittest -v tests.test_lost_session
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import socket
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from arbiter_client import (  # noqa: E402
    AbortPrepare,
    ArbiterClient,
    Commit,
    Execute,
    LiveAdapter,
    NotFoundError,
    RetryPolicy,
    SessionLost,
    SessionLostError,
)
from arbiter_client.v1 import arbiter_pb2 as pb  # noqa: E402

BIN = os.environ.get("ARBITER_BIN")
TOOLS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "testdata", "tools", "booking.yaml")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@unittest.skipUnless(BIN and shutil.which("redis-server"), "set ARBITER_BIN (and install redis-server)")
class LostSessionTest(unittest.IsolatedAsyncioTestCase):
    async def asyncSetUp(self):
        self.dir = tempfile.mkdtemp(prefix="arbiter-lost-")
        self.redis_port = free_port()
        self.redis = await self.start_redis()
        self.log = open(os.path.join(self.dir, "serve.log"), "w+b")
        self.arbiter = await asyncio.create_subprocess_exec(
            BIN, "serve", "--listen", "127.0.0.1:0", "--tools", TOOLS,
            "--redis-url", f"redis://127.0.0.1:{self.redis_port}", "--allow-volatile-store",
            stdout=self.log, stderr=self.log)
        addr = None
        for _ in range(100):
            self.log.seek(0)
            m = re.search(rb"arbiter serving.* addr=(\S+)", self.log.read())
            if m:
                addr = m.group(1).decode()
                break
            await asyncio.sleep(0.1)
        self.assertIsNotNone(addr, self.serve_log())
        self.client = ArbiterClient(addr, retry=RetryPolicy(initial_backoff=0.05, max_backoff=0.2))

    def serve_log(self) -> str:
        self.log.seek(0)
        return self.log.read().decode(errors="replace")

    async def start_redis(self):
        proc = await asyncio.create_subprocess_exec(
            "redis-server", "--port", str(self.redis_port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
            "--dir", self.dir, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL)
        for _ in range(100):
            try:
                _, w = await asyncio.open_connection("127.0.0.1", self.redis_port)
                w.close()
                return proc
            except OSError:
                await asyncio.sleep(0.05)
        self.fail("redis-server did not start")

    async def asyncTearDown(self):
        await self.client.close()
        for p in (self.arbiter, self.redis):
            if p.returncode is None:
                p.terminate()
                await p.wait()
        self.log.close()
        shutil.rmtree(self.dir, ignore_errors=True)

    async def test_lost_session_is_surfaced(self):
        sid = f"lost-{os.getpid()}"
        actions: list = []
        adapter = LiveAdapter(self.client, sid, actions.append, watch=False)
        await adapter.reconnect("c1")
        epoch = adapter.epoch
        self.assertTrue(epoch)
        await adapter.feed({"tool_call": {"function_calls": [
            {"id": "fc_1", "name": "book_slot", "args": {"slot": "tomorrow 3pm"}}]}})
        (ex,) = [a for a in actions if isinstance(a, Execute)]
        # Restart redis-server: with persistence off it comes back empty.
        self.redis.terminate()
        await self.redis.wait()
        self.redis = await self.start_redis()
        with self.assertRaises(SessionLostError) as cm:
            await asyncio.wait_for(adapter.feed({"voice_activity": {"voice_activity_type": "ACTIVITY_START"}}), 20)
        self.assertEqual(cm.exception.reason, "SESSION_LOST")
        (lost,) = [a for a in actions if isinstance(a, SessionLost)]
        self.assertEqual((lost.epoch, lost.call_ids, lost.job_ids), (epoch, ("fc_1",), (ex.job_id,)))
        self.assertEqual([a.job_id for a in actions if isinstance(a, AbortPrepare)], [ex.job_id])
        self.assertEqual([a for a in actions if isinstance(a, Commit)], [])
        with self.assertRaises(NotFoundError):  # never a silently new session
            await self.client.get_session(pb.GetSessionRequest(session_id=sid))
        # Reporting the connection again goes on in a new epoch.
        await adapter.reconnect("c2")
        self.assertNotEqual(adapter.epoch, epoch)
        await adapter.feed({"voice_activity": {"voice_activity_type": "ACTIVITY_END"}})
        self.assertEqual(len([a for a in actions if isinstance(a, SessionLost)]), 1)
        await adapter.close(timeout=5)


if __name__ == "__main__":
    unittest.main()
