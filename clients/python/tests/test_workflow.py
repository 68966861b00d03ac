"""Workflow tests against a real `arbiter serve` running clients/e2e/workflow.yaml
(clients/test.sh starts it and sets ARBITER_WORKFLOW_TARGET; skipped otherwise):

- Watch streams exactly the effects the unary RPCs hand out (plus the timer-made
  deadline answer), once each, in seq order, and resumes with after_seq without
  repeating or missing anything;
- a confirm-then-act run through the LiveAdapter: take_photo opens a run (its prompt is
  the answer, nothing executes), confirm_action confirmed=true executes take_photo once
  and is answered with its outcome;
- Connect: a call made on connection c1 comes back as a connection_closed skip when the
  adapter reconnects as c2, and its outcome as a note;
- timer-made effects through the LiveAdapter: a call nobody answers gets its max_pending
  (2 s) deadline answer exactly once without the test calling anything, by the adapter's
  Watch; with watch=False, by adapter.poll() (once: a second poll() brings nothing);
- no effect is handed out twice (actions counted per seq) over a whole confirm-then-act
  flow, and every effect of the session is handed out.

    ARBITER_WORKFLOW_TARGET=127.0.0.1:50051 /usr/bin/python3 -m unittest discover -s clients/python/tests -p 'test_workflow.py' -v
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
import time
import unittest
from collections import Counter

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from arbiter_client import (  # noqa: E402
    ArbiterClient,
    Commit,
    Execute,
    LiveAdapter,
    RetryPolicy,
    RunUpdate,
    SendFunctionResponse,
    SendNote,
    Skip,
)
from arbiter_client.v1 import arbiter_pb2 as pb  # noqa: E402

logging.getLogger("arbiter_client").setLevel(logging.ERROR)
TARGET = os.environ.get("ARBITER_WORKFLOW_TARGET")
FAST = RetryPolicy(initial_backoff=0.05, max_backoff=0.2, max_elapsed=5.0)


def sid(name: str) -> str:
    return f"py-{name}-{os.getpid()}-{int(time.time() * 1000) % 10**8}"


def register(session_id: str, call_id: str, tool: str, args=None, **kw) -> pb.RegisterCallRequest:
    req = pb.RegisterCallRequest(session_id=session_id, call_id=call_id, tool=tool, **kw)
    if args:
        req.args.update(args)
    return req


def struct(d):
    m = pb.CompleteRequest().result
    m.update(d)
    return m


def flatten(effects: pb.Effects):
    """(seq, kind, message) for each effect of a unary response."""
    out = []
    for kind, items in (("response", effects.responses), ("skip", effects.skips),
                        ("note", effects.notes), ("run", effects.runs)):
        out += [(m.seq, kind, m) for m in items]
    return out


def of_watch(w: pb.WatchResponse):
    kind = w.WhichOneof("effect")
    return (w.seq, kind, getattr(w, kind))


@unittest.skipUnless(TARGET, "set ARBITER_WORKFLOW_TARGET to an arbiter serving clients/e2e/workflow.yaml")
class WorkflowTest(unittest.IsolatedAsyncioTestCase):
    async def asyncSetUp(self):
        self.client = ArbiterClient(TARGET, retry=FAST, timeout=5.0)

    async def asyncTearDown(self):
        await self.client.close()

    # --- Watch ----------------------------------------------------------------------

    async def test_watch(self):
        s = sid("watch")
        c = self.client
        await c.configure_session(pb.ConfigureSessionRequest(session_id=s))  # creates the session
        unary: dict[int, tuple] = {}

        def got(effects: pb.Effects):
            for seq, kind, m in flatten(effects):
                self.assertGreater(seq, 0, f"an effect without seq: {kind} {m}")
                if seq in unary:  # a retried or repeated request: the same effect, same number
                    self.assertEqual(unary[seq], (kind, m))
                unary[seq] = (kind, m)

        watched: list[tuple] = []

        async def watch(after: int):
            async for w in c.watch(s, after_seq=after):
                watched.append(of_watch(w))

        async def until(pred, timeout=8.0, what=""):
            deadline = time.monotonic() + timeout
            while not pred():
                if time.monotonic() > deadline:
                    self.fail(f"timed out waiting for {what}; watched: {[(q, k) for q, k, _ in watched]}")
                await asyncio.sleep(0.02)

        task = asyncio.create_task(watch(0))
        await asyncio.sleep(0.2)  # the stream is open before anything happens (it would replay anyway)

        # A confirm-then-act run: prompt + run opened, then confirmed -> job -> committed.
        reg = await c.register_call(register(s, "p1", "take_photo", args={"subject": "the cat"}))
        self.assertEqual(reg.disposition, pb.DISPOSITION_RUN)
        got(reg.effects)
        run_id = reg.run_id
        conf = await c.register_call(register(s, "k1", "confirm_action", args={"run_id": run_id, "confirmed": True}))
        self.assertEqual((conf.disposition, conf.job_tool), (pb.DISPOSITION_EXECUTE, "take_photo"))
        got(conf.effects)
        dec = await c.decide(pb.DecideRequest(session_id=s, job_id=conf.job_id, prepared=True, wait={"seconds": 10}))
        self.assertEqual(dec.decision, pb.DECISION_COMMIT)
        done = await c.complete(pb.CompleteRequest(
            session_id=s, job_id=conf.job_id, outcome=pb.OUTCOME_COMMITTED, result=struct({"photo": "IMG_1"})))
        got(done.effects)
        again = await c.complete(pb.CompleteRequest(  # retried: the same effects, same seqs
            session_id=s, job_id=conf.job_id, outcome=pb.OUTCOME_COMMITTED, result=struct({"photo": "IMG_1"})))
        got(again.effects)
        # A rejected call (tool choice none), a withdrawn one.
        got((await c.register_call(register(s, "r1", "get_weather", tool_choice=pb.TOOL_CHOICE_NONE))).effects)
        b = await c.register_call(register(s, "b1", "book_slot", args={"slot": "tomorrow 3pm"}))
        got(b.effects)
        w = await c.report_tool_call_cancellation(pb.ReportToolCallCancellationRequest(session_id=s, call_ids=["b1"]))
        got(w.effects)
        # A call nobody answers: max_pending (2 s) answers it with a timeout, made by a timer.
        got((await c.register_call(register(s, "w1", "get_weather"))).effects)

        def timeout_answer():
            return [e for e in watched if e[1] == "response" and e[2].call_id == "w1"]

        await until(lambda: timeout_answer(), what="the deadline answer of w1 on the stream (no polling)")
        self.assertEqual(timeout_answer()[0][2].payload["status"], "timeout")
        got((await c.poll(pb.PollRequest(session_id=s))).effects)
        last = (await c.get_session(pb.GetSessionRequest(session_id=s))).last_seq
        self.assertGreaterEqual(last, max(unary))
        await until(lambda: watched and watched[-1][0] >= last, what=f"seq {last}")
        self.assertEqual([q for q, _, _ in watched], list(range(1, last + 1)), "ascending, once each, no gaps")
        self.check(watched, unary)
        kinds = {k for _, k, _ in watched}
        self.assertEqual(kinds, {"response", "skip", "run"} | ({"note"} & kinds))

        # Cancel the stream, make more effects, resume after the last seq seen.
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        seen = watched[-1][0]
        watched.clear()
        unary.clear()
        reg = await c.register_call(register(s, "p2", "take_photo", args={"subject": "the dog"}))
        got(reg.effects)
        got((await c.register_call(register(s, "k2", "confirm_action", args={"run_id": reg.run_id, "confirmed": False}))).effects)
        g = await c.register_call(register(s, "w2", "get_weather"))
        got((await c.complete(pb.CompleteRequest(
            session_id=s, job_id=g.job_id, outcome=pb.OUTCOME_RESULT, result=struct({"sky": "clear"})))).effects)
        last = (await c.get_session(pb.GetSessionRequest(session_id=s))).last_seq
        self.assertGreater(last, seen)
        task = asyncio.create_task(watch(seen))
        try:
            await until(lambda: watched and watched[-1][0] >= last, what=f"seq {last} after resuming at {seen}")
            await asyncio.sleep(0.3)  # nothing more, nothing repeated
        finally:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
        self.assertEqual([q for q, _, _ in watched], list(range(seen + 1, last + 1)))
        self.check(watched, unary)
        self.assertTrue(any(k == "run" and m.state == pb.RUN_STATE_REFUSED for _, k, m in watched))
        await c.close_session(pb.CloseSessionRequest(session_id=s))

    def check(self, watched, unary):
        """Every effect a unary RPC returned is on the stream, the same; the stream has
        nothing else but deadline answers."""
        if os.environ.get("WORKFLOW_DEBUG"):
            print([(q, k, q in unary) for q, k, _ in watched], file=sys.stderr)
        by_seq = {q: (k, m) for q, k, m in watched}
        for seq, (kind, m) in sorted(unary.items()):
            self.assertIn(seq, by_seq, f"unary effect {seq} ({kind}) missing from the stream")
            self.assertEqual(by_seq[seq], (kind, m), f"effect {seq} differs")
        for seq, (kind, m) in by_seq.items():
            if seq not in unary:
                self.assertEqual((kind, m.payload["status"]), ("response", "timeout"),
                                 f"stream effect {seq} was handed out by no RPC: {kind} {m}")

    # --- LiveAdapter: confirm-then-act, Connect -------------------------------------

    def adapter(self, s: str, **kw):
        actions: list = []
        tasks: set = set()
        executed: list[Execute] = []

        def spawn(coro):
            t = asyncio.create_task(coro)
            tasks.add(t)
            t.add_done_callback(tasks.discard)

        def on_action(a):
            actions.append(a)
            if isinstance(a, Execute):
                executed.append(a)
                if a.side_effect:
                    spawn(ad.prepared(a.job_id))
                else:
                    pass  # the tests report read-only results themselves
            elif isinstance(a, Commit):
                spawn(ad.committed(a.job_id, {"done_by": "py"}))

        ad = LiveAdapter(self.client, s, on_action, decide_wait=5.0, **kw)
        return ad, actions, executed

    async def until(self, actions, pred, timeout=8.0):
        deadline = time.monotonic() + timeout
        while not pred():
            if time.monotonic() > deadline:
                self.fail(f"timed out; actions: {actions}")
            await asyncio.sleep(0.02)

    async def test_confirm_then_act(self):
        ad, actions, executed = self.adapter(sid("confirm"))
        await ad.feed({"tool_call": {"function_calls": [{"id": "p1", "name": "take_photo", "args": {"subject": "the cat"}}]}})
        (prompt,) = [a for a in actions if isinstance(a, SendFunctionResponse)]
        self.assertEqual((prompt.id, prompt.payload["status"]), ("p1", "needs_confirmation"))
        run_id = prompt.payload["run_id"]
        self.assertEqual(executed, [], "a run executes nothing until confirmed")
        self.assertIn(("opened", run_id), [(a.state, a.run_id) for a in actions if isinstance(a, RunUpdate)])
        await ad.feed({"tool_call": {"function_calls": [
            {"id": "k1", "name": "confirm_action", "args": {"run_id": run_id, "confirmed": True}}]}})
        await self.until(actions, lambda: any(isinstance(a, SendFunctionResponse) and a.id == "k1" for a in actions))
        await asyncio.sleep(0.3)
        (ex,) = executed
        self.assertEqual((ex.tool, ex.args, ex.call.id, ex.call.name, ex.run_id),
                         ("take_photo", {"subject": "the cat"}, "k1", "confirm_action", run_id))
        self.assertEqual(len([a for a in actions if isinstance(a, Commit)]), 1)
        answers = [(a.id, a.payload["status"]) for a in actions if isinstance(a, SendFunctionResponse)]
        self.assertEqual(answers, [("p1", "needs_confirmation"), ("k1", "committed")])
        self.assertIn(("confirmed", ex.job_id), [(a.state, a.job_id) for a in actions if isinstance(a, RunUpdate)])
        await asyncio.sleep(0.7)  # what the Watch streams meanwhile must change nothing
        last = (await self.client.get_session(pb.GetSessionRequest(session_id=ad.session_id))).last_seq
        self.assertOnce(actions, last)
        await ad.close()
        self.assertOnce(actions, last)

    def assertOnce(self, actions, last: int):
        """Each effect of the session (seq 1..last) handed out exactly once."""
        seqs = Counter(a.seq for a in actions if isinstance(a, (SendFunctionResponse, SendNote, Skip, RunUpdate)))
        self.assertEqual({q: n for q, n in seqs.items() if n != 1}, {}, f"effects handed out twice: {actions}")
        self.assertNotIn(0, seqs, "an action without seq")
        self.assertEqual(sorted(seqs), list(range(1, last + 1)), f"every effect once: {actions}")

    # --- LiveAdapter: timer-made effects --------------------------------------------

    def timeouts(self, actions, call_id):
        return [a for a in actions if isinstance(a, SendFunctionResponse) and a.id == call_id]

    async def test_deadline_answer_watch(self):
        """A call nobody answers: its max_pending deadline answer reaches the agent by
        the adapter's Watch, once, with nothing else called."""
        ad, actions, executed = self.adapter(sid("deadline-watch"))
        await ad.feed({"tool_call": {"function_calls": [{"id": "w1", "name": "get_weather", "args": {"city": "Oslo"}}]}})
        (ex,) = executed
        self.assertFalse(ex.side_effect)
        self.assertEqual(self.timeouts(actions, "w1"), [])
        t0 = time.monotonic()
        await self.until(actions, lambda: self.timeouts(actions, "w1"), timeout=6.0)
        waited = time.monotonic() - t0
        await asyncio.sleep(1.0)  # nothing twice
        (answer,) = self.timeouts(actions, "w1")
        self.assertEqual((answer.payload["status"], answer.job_id), ("timeout", ex.job_id))
        self.assertGreater(answer.seq, 0)
        self.assertLess(waited, 4.0, "max_pending is 2 s")
        last = (await self.client.get_session(pb.GetSessionRequest(session_id=ad.session_id))).last_seq
        self.assertOnce(actions, last)
        n = len(actions)
        await ad.close()  # the call is answered: nothing to skip
        self.assertEqual(actions[n:], [])

    async def test_deadline_answer_poll(self):
        """watch=False: nothing arrives by itself; poll() hands the deadline answer out
        once, and a second poll() nothing."""
        ad, actions, executed = self.adapter(sid("deadline-poll"), watch=False)
        await ad.feed({"tool_call": {"function_calls": [{"id": "w1", "name": "get_weather", "args": {"city": "Oslo"}}]}})
        (ex,) = executed
        await asyncio.sleep(2.6)  # past max_pending (2 s)
        self.assertEqual(self.timeouts(actions, "w1"), [], "no Watch: nothing comes by itself")
        await ad.poll()
        (answer,) = self.timeouts(actions, "w1")
        self.assertEqual((answer.payload["status"], answer.job_id), ("timeout", ex.job_id))
        n = len(actions)
        await ad.poll()
        self.assertEqual(actions[n:], [], "a second poll() hands out nothing")
        last = (await self.client.get_session(pb.GetSessionRequest(session_id=ad.session_id))).last_seq
        self.assertOnce(actions, last)
        await ad.close()
        self.assertEqual(actions[n:], [])

    async def test_connect(self):
        ad, actions, executed = self.adapter(sid("connect"))
        await ad.reconnect("c1")
        await ad.feed({"tool_call": {"function_calls": [{"id": "g1", "name": "get_weather", "args": {"city": "Oslo"}}]}})
        (ex,) = executed
        await ad.reconnect("c2")
        skips = [a for a in actions if isinstance(a, Skip)]
        self.assertEqual([(a.id, a.reason) for a in skips], [("g1", "connection_closed")])
        await ad.reconnect("c2")  # the current id again: changes nothing
        self.assertEqual(len([a for a in actions if isinstance(a, Skip)]), 1)
        await ad.result(ex.job_id, {"sky": "clear"})
        self.assertEqual([a for a in actions if isinstance(a, SendFunctionResponse)], [],
                         "a call of an earlier connection is never answered")
        notes = [a for a in actions if isinstance(a, SendNote)]
        self.assertEqual([n.job_id for n in notes], [ex.job_id], f"its outcome goes out as a note: {actions}")
        await ad.close()


if __name__ == "__main__":
    unittest.main()
