// A short store outage under a prepared job, end to end: a real `arbiter serve
// --redis-url` on a redis-server this test starts with AOF (appendfsync always), a
// LiveAdapter with a booking prepared while the user speaks (so its Decide is parked,
// holding the commit), then the redis-server SIGKILLed and started again on the same
// port (same directory: its AOF) 2 s later. The parked Decide's store reads fail for
// longer than the service config's 5 attempts last (about 1.5 s); the core asks it
// again (RetryPolicy, up to maxElapsedMs), so the job commits once the user's turn is
// over, and is never released as "the arbiter could not be reached".
//
// clients/test.sh runs it with ARBITER_BIN set (and redis-server on PATH); skipped otherwise.
import assert from "node:assert/strict";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { ArbiterClient, LiveAdapter, pb, type Action } from "../src/index.js";
import { ARBITER_BIN, freePort, serveArbiter, startRedis, tempDir, type Arbiter, type Proc } from "./procs.js";

const AOF = ["--appendonly", "yes", "--appendfsync", "always", "--save", ""];

describe("a 2 s store outage under a prepared job", { skip: !ARBITER_BIN && "set ARBITER_BIN to the arbiter binary" }, () => {
  let dir: string, port: number, redis: Proc, arbiter: Arbiter;
  before(async () => {
    dir = tempDir("arbiter-storeoutage-");
    port = await freePort();
    redis = await startRedis(port, dir, AOF);
    arbiter = await serveArbiter(
      ["--tools", join(import.meta.dirname, "..", "..", "..", "..", "testdata", "tools", "booking.yaml"), "--redis-url", `redis://127.0.0.1:${port}`],
      join(dir, "serve.log"),
    );
  });
  after(async () => {
    await arbiter?.stop();
    await redis?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("the job commits once Redis is back; it is never released as unreachable", async () => {
    const log: string[] = [];
    const logger = { warn: (m: string) => void log.push(m), error: (m: string) => void log.push(`ERROR ${m}`) };
    const client = new ArbiterClient(arbiter.addr, { logger });
    const actions: Action[] = [];
    const of = <T extends Action["type"]>(type: T) => actions.filter((a) => a.type === type) as Extract<Action, { type: T }>[];
    const session = `node-storeoutage-${process.pid}-${Date.now() % 1e8}`;
    // A short long-poll, so the parked Decide goes back to the store during the outage.
    const adapter = new LiveAdapter(client, session, (a) => void actions.push(a), { logger, decideWaitMs: 500 });
    const why = () => `actions: ${JSON.stringify(actions)}\nlog:\n${log.join("\n")}\nserver:\n${arbiter.log()}`;
    try {
      await adapter.reconnect("c1");
      await adapter.feed({ toolCall: { functionCalls: [{ id: "fc_1", name: "book_slot", args: { slot: "tomorrow 3pm" } }] } });
      const [execute] = of("execute");
      assert.ok(execute?.sideEffect, `no side-effecting execute; ${why()}`);
      await adapter.feed({ voiceActivity: { voiceActivityType: "ACTIVITY_START" } }); // the user speaks: the commit is held
      await adapter.prepared(execute.jobId);
      await sleep(300); // the prepared Decide is parked on the hold

      await redis.stop("SIGKILL");
      const killed = Date.now();
      // The rest of the user's turn (not a stop), observed during the outage: the outbox
      // retries it with its age until Redis is back.
      const turn = Promise.all([
        adapter.feed({ serverContent: { inputTranscription: { text: "Yes, that works for me." } } }),
        adapter.feed({ voiceActivity: { voiceActivityType: "ACTIVITY_END" } }),
      ]);
      await sleep(2000);
      redis = await startRedis(port, dir, AOF); // the same port and directory: the AOF comes back
      const outageMs = Date.now() - killed;
      await turn;

      for (let i = 0; i < 400 && !of("commit").length && !of("cancel").length && !of("abortPrepare").length; i++) await sleep(50);
      assert.deepEqual([of("cancel").length, of("abortPrepare").length], [0, 0], `released; ${why()}`);
      assert.deepEqual(of("commit").map((a) => a.jobId), [execute.jobId], `no commit; ${why()}`);
      await adapter.committed(execute.jobId, { booked: "tomorrow 3pm" });
      const answers = of("sendFunctionResponse").filter((a) => a.id === "fc_1");
      assert.equal(answers.length, 1, why());
      assert.equal(answers[0].payload.status, "committed", why());
      assert.ok(!log.some((m) => m.includes("could not be reached")), why());
      const state = await client.getSession({ sessionId: session });
      assert.deepEqual(
        state.jobs.map((j) => [j.jobId, j.decision, j.outcome]),
        [[execute.jobId, pb.Decision.DECISION_COMMIT, pb.Outcome.OUTCOME_COMMITTED]],
        JSON.stringify(state.jobs),
      );
      const reasked = log.filter((m) => m.includes("asking again")).length;
      console.error(`  outage ${outageMs} ms; the core asked Decide/Complete again ${reasked} time(s) past the service config's attempts`);
    } finally {
      await adapter.close(3000).catch(() => undefined);
      client.close();
    }
  });
});
