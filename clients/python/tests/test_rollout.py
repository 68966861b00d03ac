"""Issue 15 end to end: a rollout. Two replicas on one redis-server; one is stopped
(SIGTERM) while the adapter's Decides are parked on both; those it held are answered at
once (UNAVAILABLE, reason SERVER_DRAINING, RetryInfo 0), gRPC's retry (the service
config) asks the other replica (round robin over the address list), and every job goes
on to its decision there: all commit, none is released, and the stopped replica's drain
does not wait for the long-polls.

Real processes, all started here: redis-server (AOF on), two ``arbiter serve
--redis-url``, the LiveAdapter on ``ipv4:A,B``. What is compared is decisions (every
job commits, no AbortPrepare/Cancel); the drain's duration, from the replica's own
``drained took=`` log line, is printed, not asserted.

clients/test.sh runs it with ARBITER_BIN set to the arbiter binary; skipped otherwise:

    ARBITER_BIN=/tmp/arbiter python3 -m unittest -v tests.test_rollout
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from arbiter_client import AbortPrepare, ArbiterClient, Cancel, Commit, Execute, LiveAdapter  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_lost_session import TOOLS, free_port  # noqa: E402

BIN = os.environ.get("ARBITER_BIN")
JOBS = 6


@unittest.skipUnless(BIN and shutil.which("redis-server"), "set ARBITER_BIN (and install redis-server)")
class RolloutTest(unittest.IsolatedAsyncioTestCase):
    async def asyncSetUp(self):
        self.dir = tempfile.mkdtemp(prefix="arbiter-rollout-")
        port = free_port()
        self.redis = await asyncio.create_subprocess_exec(
            "redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "yes", "--appendfsync", "always",
            "--dir", self.dir, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL)
        for _ in range(100):
            try:
                _, w = await asyncio.open_connection("127.0.0.1", port)
                w.close()
                break
            except OSError:
                await asyncio.sleep(0.05)
        self.replicas = []  # (process, log file, addr)
        for name in ("a", "b"):
            log = open(os.path.join(self.dir, f"{name}.log"), "w+b")
            proc = await asyncio.create_subprocess_exec(
                BIN, "serve", "--listen", "127.0.0.1:0", "--tools", TOOLS, "--redis-url", f"redis://127.0.0.1:{port}",
                stdout=log, stderr=log)
            addr = None
            for _ in range(100):
                log.seek(0)
                m = re.search(rb"arbiter serving.* addr=(\S+)", log.read())
                if m:
                    addr = m.group(1).decode()
                    break
                await asyncio.sleep(0.1)
            self.assertIsNotNone(addr, self.text(log))
            self.replicas.append((proc, log, addr))

    @staticmethod
    def text(log) -> str:
        log.seek(0)
        return log.read().decode(errors="replace")

    async def asyncTearDown(self):
        for proc, log, _ in self.replicas:
            if proc.returncode is None:
                proc.terminate()
                await proc.wait()
            log.close()
        self.redis.terminate()
        await self.redis.wait()
        shutil.rmtree(self.dir, ignore_errors=True)

    async def test_sigterm_during_parked_decides(self):
        (a, a_log, a_addr), (_, _, b_addr) = self.replicas
        client = ArbiterClient(f"ipv4:{a_addr},{b_addr}")
        actions: list = []
        adapter = LiveAdapter(client, f"rollout-{os.getpid()}", actions.append, decide_wait=20)
        try:
            await adapter.reconnect("c1")
            slots = [f"tomorrow at {i + 1}pm" for i in range(JOBS)]
            await adapter.feed({"tool_call": {"function_calls": [
                {"id": f"fc_{i}", "name": "book_slot", "args": {"slot": s}} for i, s in enumerate(slots)]}})
            jobs = [x.job_id for x in actions if isinstance(x, Execute)]
            self.assertEqual(len(jobs), JOBS)
            await asyncio.sleep(0.5)  # every job's Decide(prepared=false) parked, spread over both replicas
            a.terminate()  # SIGTERM: a rollout takes replica a away
            await a.wait()
            a_text = self.text(a_log)
            drained = re.search(r"drained took=(\S+)", a_text)
            self.assertIsNotNone(drained, a_text)  # drained, not stopped hard at --drain-timeout
            # Decides were parked on replica a, and its drain answered them UNAVAILABLE.
            at_drain = a_text[a_text.index("msg=draining"):]
            # The access log's fields in any order: a line per Decide the drain ended.
            ended = [ln for ln in at_drain.splitlines()
                     if re.search(r"\bgrpc\.method=Decide\b", ln) and re.search(r"\bgrpc\.code=Unavailable\b", ln)]
            self.assertTrue(ended, a_text)
            for j in jobs:
                await adapter.prepared(j)
            for _ in range(1000):
                if len([x for x in actions if isinstance(x, Commit)]) == JOBS:
                    break
                await asyncio.sleep(0.02)
            self.assertEqual(sorted(x.job_id for x in actions if isinstance(x, Commit)), sorted(jobs))
            self.assertEqual([x for x in actions if isinstance(x, (AbortPrepare, Cancel))], [])
            print(f"rollout: replica a drained in {drained.group(1)}, answering {len(ended)} parked Decide(s); "
                  f"{JOBS} jobs committed on replica b",
                  file=sys.stderr)
            for j in jobs:
                await adapter.committed(j, {"ref": j})
            await adapter.close(timeout=5)
        finally:
            await client.close()


if __name__ == "__main__":
    unittest.main()
