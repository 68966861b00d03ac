// Workflow tests against a real `arbiter serve` running clients/e2e/workflow.yaml
// (clients/test.sh starts it and sets ARBITER_WORKFLOW_TARGET; skipped otherwise):
//
// - Watch streams exactly the effects the unary RPCs hand out (plus the timer-made
//   deadline answer), once each, in seq order, and resumes with afterSeq without
//   repeating or missing anything;
// - a confirm-then-act run through the LiveAdapter: take_photo opens a run (its prompt is
//   the answer, nothing executes), confirm_action confirmed=true executes take_photo once
//   and is answered with its outcome;
// - Connect: a call made on connection c1 comes back as a connection_closed skip when the
//   adapter reconnects as c2, and its outcome as a note;
// - timer-made effects through the LiveAdapter: a call nobody answers gets its max_pending
//   (2 s) deadline answer exactly once without the test calling anything, by the
//   adapter's Watch; with watch: false, by adapter.poll() (once: a second poll() brings
//   nothing);
// - no effect is handed out twice (actions counted per seq) over a whole confirm-then-act
//   flow, and every effect of the session is handed out.
//
//     ARBITER_WORKFLOW_TARGET=127.0.0.1:50051 node --test build/test/workflow.test.js
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { ArbiterClient, LiveAdapter, pb, type Action } from "../src/index.js";

const TARGET = process.env.ARBITER_WORKFLOW_TARGET;
const FAST = { initialBackoffMs: 50, maxBackoffMs: 200, maxElapsedMs: 5000 };
const quiet = { warn() {}, error() {} };

const sid = (name: string) => `node-${name}-${process.pid}-${Date.now() % 1e8}`;

type Effect = { seq: number; kind: "response" | "skip" | "note" | "run"; m: unknown };

function flatten(e: pb.Effects | undefined): Effect[] {
  return [
    ...(e?.responses ?? []).map((m) => ({ seq: m.seq, kind: "response" as const, m })),
    ...(e?.skips ?? []).map((m) => ({ seq: m.seq, kind: "skip" as const, m })),
    ...(e?.notes ?? []).map((m) => ({ seq: m.seq, kind: "note" as const, m })),
    ...(e?.runs ?? []).map((m) => ({ seq: m.seq, kind: "run" as const, m })),
  ];
}

function ofWatch(w: pb.WatchResponse): Effect {
  if (w.response) return { seq: w.seq, kind: "response", m: w.response };
  if (w.skip) return { seq: w.seq, kind: "skip", m: w.skip };
  if (w.note) return { seq: w.seq, kind: "note", m: w.note };
  assert.ok(w.run, `an empty WatchResponse: ${JSON.stringify(w)}`);
  return { seq: w.seq, kind: "run", m: w.run };
}

async function until(pred: () => unknown, what: string, ms = 8000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!pred()) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

describe("workflow against arbiter serve", { skip: !TARGET && "set ARBITER_WORKFLOW_TARGET to an arbiter serving clients/e2e/workflow.yaml" }, () => {
  it("watch: the unary effects, once each, in seq order; resumes after_seq", async () => {
    const c = new ArbiterClient(TARGET!, { retry: FAST, logger: quiet });
    const s = sid("watch");
    try {
      await c.configureSession({ sessionId: s }); // creates the session
      const unary = new Map<number, Effect>();
      const got = (e: pb.Effects | undefined) => {
        for (const f of flatten(e)) {
          assert.ok(f.seq > 0, `an effect without seq: ${JSON.stringify(f)}`);
          if (unary.has(f.seq)) assert.deepEqual(unary.get(f.seq), f); // a repeat keeps its number
          unary.set(f.seq, f);
        }
      };
      const watched: Effect[] = [];
      const watch = (after: number) => {
        const stop = new AbortController();
        const done = (async () => {
          for await (const w of c.watch(s, after, stop.signal)) watched.push(ofWatch(w));
        })().catch((e) => {
          if (!stop.signal.aborted) throw e;
        });
        return { stop: () => stop.abort(), done };
      };
      const last = () => watched.at(-1)?.seq ?? 0;
      let w = watch(0);
      await sleep(200);

      // A confirm-then-act run: prompt + run opened, then confirmed -> job -> committed.
      const reg = await c.registerCall({ sessionId: s, callId: "p1", tool: "take_photo", args: { subject: "the cat" } });
      assert.equal(reg.disposition, pb.Disposition.DISPOSITION_RUN);
      got(reg.effects);
      const conf = await c.registerCall({ sessionId: s, callId: "k1", tool: "confirm_action", args: { run_id: reg.runId, confirmed: true } });
      assert.deepEqual([conf.disposition, conf.jobTool], [pb.Disposition.DISPOSITION_EXECUTE, "take_photo"]);
      got(conf.effects);
      const dec = await c.decide({ sessionId: s, jobId: conf.jobId, prepared: true, wait: { seconds: 10 } });
      assert.equal(dec.decision, pb.Decision.DECISION_COMMIT);
      const complete = { sessionId: s, jobId: conf.jobId, outcome: pb.Outcome.OUTCOME_COMMITTED, result: { photo: "IMG_1" } };
      got((await c.complete(complete)).effects);
      got((await c.complete(complete)).effects); // retried: the same effects, same seqs
      // A rejected call (tool choice none), a withdrawn one.
      got((await c.registerCall({ sessionId: s, callId: "r1", tool: "get_weather", toolChoice: pb.ToolChoice.TOOL_CHOICE_NONE })).effects);
      got((await c.registerCall({ sessionId: s, callId: "b1", tool: "book_slot", args: { slot: "tomorrow 3pm" } })).effects);
      got((await c.reportToolCallCancellation({ sessionId: s, callIds: ["b1"] })).effects);
      // A call nobody answers: max_pending (2 s) answers it with a timeout, made by a timer.
      got((await c.registerCall({ sessionId: s, callId: "w1", tool: "get_weather" })).effects);
      const timeoutAnswer = () => watched.find((e) => e.kind === "response" && (e.m as pb.FunctionResponse).callId === "w1");
      await until(timeoutAnswer, "the deadline answer of w1 on the stream (no polling)");
      assert.equal((timeoutAnswer()!.m as pb.FunctionResponse).payload?.status, "timeout");
      got((await c.poll({ sessionId: s })).effects);
      let lastSeq = (await c.getSession({ sessionId: s })).lastSeq;
      assert.ok(lastSeq >= Math.max(...unary.keys()));
      await until(() => last() >= lastSeq, `seq ${lastSeq}`);
      assert.deepEqual(watched.map((e) => e.seq), range(1, lastSeq), "ascending, once each, no gaps");
      check(watched, unary);

      // Cancel the stream, make more effects, resume after the last seq seen.
      w.stop();
      await w.done;
      const seen = last();
      watched.length = 0;
      unary.clear();
      const reg2 = await c.registerCall({ sessionId: s, callId: "p2", tool: "take_photo", args: { subject: "the dog" } });
      got(reg2.effects);
      got((await c.registerCall({ sessionId: s, callId: "k2", tool: "confirm_action", args: { run_id: reg2.runId, confirmed: false } })).effects);
      const g = await c.registerCall({ sessionId: s, callId: "w2", tool: "get_weather" });
      got((await c.complete({ sessionId: s, jobId: g.jobId, outcome: pb.Outcome.OUTCOME_RESULT, result: { sky: "clear" } })).effects);
      lastSeq = (await c.getSession({ sessionId: s })).lastSeq;
      assert.ok(lastSeq > seen);
      w = watch(seen);
      try {
        await until(() => last() >= lastSeq, `seq ${lastSeq} after resuming at ${seen}`);
        await sleep(300); // nothing more, nothing repeated
      } finally {
        w.stop();
        await w.done;
      }
      assert.deepEqual(watched.map((e) => e.seq), range(seen + 1, lastSeq));
      check(watched, unary);
      assert.ok(watched.some((e) => e.kind === "run" && (e.m as pb.RunUpdate).state === pb.RunState.RUN_STATE_REFUSED));
      await c.closeSession({ sessionId: s });
    } finally {
      c.close();
    }
  });

  it("confirm-then-act through the LiveAdapter", async () => {
    const { c, ad, actions, executed } = adapter(sid("confirm"));
    try {
      await ad.feed({ toolCall: { functionCalls: [{ id: "p1", name: "take_photo", args: { subject: "the cat" } }] } });
      const prompts = actions.filter((a) => a.type === "sendFunctionResponse");
      assert.equal(prompts.length, 1);
      const prompt = prompts[0] as Extract<Action, { type: "sendFunctionResponse" }>;
      assert.deepEqual([prompt.id, prompt.payload.status], ["p1", "needs_confirmation"]);
      const runId = prompt.payload.run_id as string;
      assert.equal(executed.length, 0, "a run executes nothing until confirmed");
      assert.ok(actions.some((a) => a.type === "run" && a.state === "opened" && a.runId === runId));
      await ad.feed({ toolCall: { functionCalls: [{ id: "k1", name: "confirm_action", args: { run_id: runId, confirmed: true } }] } });
      await until(() => actions.some((a) => a.type === "sendFunctionResponse" && a.id === "k1"), "k1's answer");
      await sleep(300);
      assert.equal(executed.length, 1);
      const ex = executed[0];
      assert.deepEqual([ex.tool, ex.args, ex.call.id, ex.call.name, ex.runId], ["take_photo", { subject: "the cat" }, "k1", "confirm_action", runId]);
      assert.equal(actions.filter((a) => a.type === "commit").length, 1);
      const answers = actions.flatMap((a) => (a.type === "sendFunctionResponse" ? [[a.id, a.payload.status]] : []));
      assert.deepEqual(answers, [["p1", "needs_confirmation"], ["k1", "committed"]]);
      assert.ok(actions.some((a) => a.type === "run" && a.state === "confirmed" && a.jobId === ex.jobId));
      await sleep(700); // what the Watch streams meanwhile must change nothing
      const last = (await c.getSession({ sessionId: ad.sessionId })).lastSeq;
      assertOnce(actions, last);
      await ad.close();
      assertOnce(actions, last);
    } finally {
      c.close();
    }
  });

  it("connect: a call of an earlier connection is skipped, its outcome a note", async () => {
    const { c, ad, actions, executed } = adapter(sid("connect"));
    try {
      await ad.reconnect("c1");
      await ad.feed({ toolCall: { functionCalls: [{ id: "g1", name: "get_weather", args: { city: "Oslo" } }] } });
      assert.equal(executed.length, 1);
      await ad.reconnect("c2");
      const skips = () => actions.flatMap((a) => (a.type === "skip" ? [[a.id, a.reason]] : []));
      assert.deepEqual(skips(), [["g1", "connection_closed"]]);
      await ad.reconnect("c2"); // the current id again: changes nothing
      assert.equal(skips().length, 1);
      await ad.result(executed[0].jobId, { sky: "clear" });
      assert.deepEqual(actions.filter((a) => a.type === "sendFunctionResponse"), [], "a call of an earlier connection is never answered");
      const notes = actions.flatMap((a) => (a.type === "sendNote" ? [a.jobId] : []));
      assert.deepEqual(notes, [executed[0].jobId], `its outcome goes out as a note: ${JSON.stringify(actions)}`);
      await ad.close();
    } finally {
      c.close();
    }
  });

  const timeouts = (actions: Action[], id: string) =>
    actions.flatMap((a) => (a.type === "sendFunctionResponse" && a.id === id ? [a] : []));

  it("deadline-watch: the max_pending answer of a call nobody answers comes by the Watch, once", async () => {
    const { c, ad, actions, executed } = adapter(sid("deadline-watch"));
    try {
      await ad.feed({ toolCall: { functionCalls: [{ id: "w1", name: "get_weather", args: { city: "Oslo" } }] } });
      assert.equal(executed.length, 1);
      assert.equal(executed[0].sideEffect, false);
      assert.deepEqual(timeouts(actions, "w1"), []);
      // No event follows: only the Watch can bring the deadline answer (max_pending 2 s).
      await until(() => timeouts(actions, "w1").length > 0, `w1's deadline answer: ${JSON.stringify(actions)}`, 6000);
      await sleep(1000); // nothing twice
      const answers = timeouts(actions, "w1");
      assert.equal(answers.length, 1);
      assert.deepEqual([answers[0].payload.status, answers[0].jobId], ["timeout", executed[0].jobId]);
      assert.ok(answers[0].seq > 0);
      assertOnce(actions, (await c.getSession({ sessionId: ad.sessionId })).lastSeq);
      const n = actions.length;
      await ad.close(); // the call is answered: nothing to skip
      assert.deepEqual(actions.slice(n), []);
    } finally {
      c.close();
    }
  });

  it("deadline-poll: with watch off, poll() hands the deadline answer out once", async () => {
    const { c, ad, actions, executed } = adapter(sid("deadline-poll"), false);
    try {
      await ad.feed({ toolCall: { functionCalls: [{ id: "w1", name: "get_weather", args: { city: "Oslo" } }] } });
      assert.equal(executed.length, 1);
      await sleep(2600); // past max_pending (2 s)
      assert.deepEqual(timeouts(actions, "w1"), [], "no Watch: nothing comes by itself");
      await ad.poll();
      const answers = timeouts(actions, "w1");
      assert.equal(answers.length, 1);
      assert.deepEqual([answers[0].payload.status, answers[0].jobId], ["timeout", executed[0].jobId]);
      const n = actions.length;
      await ad.poll();
      assert.deepEqual(actions.slice(n), [], "a second poll() hands out nothing");
      assertOnce(actions, (await c.getSession({ sessionId: ad.sessionId })).lastSeq);
      await ad.close();
      assert.deepEqual(actions.slice(n), []);
    } finally {
      c.close();
    }
  });
});

/** Each effect of the session (seq 1..last) handed out exactly once. */
function assertOnce(actions: Action[], last: number): void {
  const seqs = new Map<number, number>();
  for (const a of actions) {
    if (a.type === "sendFunctionResponse" || a.type === "sendNote" || a.type === "skip" || a.type === "run") seqs.set(a.seq, (seqs.get(a.seq) ?? 0) + 1);
  }
  assert.deepEqual([...seqs].filter(([, n]) => n !== 1), [], `effects handed out twice: ${JSON.stringify(actions)}`);
  assert.ok(!seqs.has(0), "an action without seq");
  assert.deepEqual([...seqs.keys()].sort((a, b) => a - b), range(1, last), `every effect once: ${JSON.stringify(actions)}`);
}

/** Every effect a unary RPC returned is on the stream, the same; the stream has nothing else but deadline answers. */
function check(watched: Effect[], unary: Map<number, Effect>): void {
  const bySeq = new Map(watched.map((e) => [e.seq, e]));
  for (const [seq, f] of [...unary].sort(([a], [b]) => a - b)) {
    assert.ok(bySeq.has(seq), `unary effect ${seq} (${f.kind}) missing from the stream`);
    assert.deepEqual(bySeq.get(seq), f, `effect ${seq} differs`);
  }
  for (const [seq, e] of bySeq) {
    if (unary.has(seq)) continue;
    assert.deepEqual([e.kind, (e.m as pb.FunctionResponse).payload?.status], ["response", "timeout"], `stream effect ${seq} was handed out by no RPC: ${JSON.stringify(e)}`);
  }
}

function adapter(sessionId: string, watch = true) {
  const c = new ArbiterClient(TARGET!, { retry: FAST, logger: quiet });
  const actions: Action[] = [];
  const executed: Extract<Action, { type: "execute" }>[] = [];
  const ad: LiveAdapter = new LiveAdapter(
    c,
    sessionId,
    (a) => {
      actions.push(a);
      if (a.type === "execute") {
        executed.push(a);
        if (a.sideEffect) void ad.prepared(a.jobId);
        // read-only results are reported by the tests themselves
      } else if (a.type === "commit") {
        void ad.committed(a.jobId, { done_by: "node" }).catch(() => undefined);
      }
    },
    { decideWaitMs: 5000, logger: quiet, watch },
  );
  return { c, ad, actions, executed };
}
