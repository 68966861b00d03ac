// Issue 12 ("a lost session comes back silently"), the Node client's half, end to end: a
// real `arbiter serve` on a Redis without persistence (--allow-volatile-store), and a
// LiveAdapter that Connected (so it knows the session's epoch). A booking is executed
// and prepared; then the Redis restarts, empty. The next event the adapter delivers
// carries the epoch and gets DATA_LOSS (SESSION_LOST) instead of silently starting a
// fresh session; the adapter then releases the job (cancel, with the SessionLostError;
// or, when its parked Decide found the job gone first, with that NOT_FOUND: fail
// closed either way), answers the live call "unknown", hands out `sessionLost`, Connects again with the
// lost epoch (state LOST, a new epoch) and goes on: the event is delivered in the new
// epoch, and a new call executes there with a job id of the new epoch.
//
// clients/test.sh runs it with ARBITER_BIN set (and redis-server on PATH); skipped otherwise.
import assert from "node:assert/strict";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { ArbiterClient, LiveAdapter, NotFoundError, SessionLostError, type Action } from "../src/index.js";
import { ARBITER_BIN, freePort, serveArbiter, startRedis, tempDir, type Arbiter, type Proc } from "./procs.js";

describe("a session the store lost", { skip: !ARBITER_BIN && "set ARBITER_BIN to the arbiter binary" }, () => {
  let dir: string, port: number, redis: Proc, arbiter: Arbiter;
  before(async () => {
    dir = tempDir("arbiter-lost-");
    port = await freePort();
    redis = await startRedis(port, dir);
    arbiter = await serveArbiter(
      ["--tools", join(import.meta.dirname, "..", "..", "..", "..", "testdata", "tools", "booking.yaml"), "--redis-url", `redis://127.0.0.1:${port}`, "--allow-volatile-store"],
      join(dir, "serve.log"),
    );
  });
  after(async () => {
    await arbiter?.stop();
    await redis?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("is reported (sessionLost, the call answered unknown, the job released), never started again silently", async () => {
    const log: string[] = [];
    const logger = { warn: (m: string) => void log.push(m), error: (m: string) => void log.push(m) };
    const client = new ArbiterClient(arbiter.addr, { logger });
    const actions: Action[] = [];
    const of = <T extends Action["type"]>(type: T) => actions.filter((a) => a.type === type) as Extract<Action, { type: T }>[];
    const session = `node-lost-${process.pid}-${Date.now() % 1e8}`;
    const adapter = new LiveAdapter(client, session, (a) => void actions.push(a), { logger, decideWaitMs: 2000 });
    const until = async (what: string, pred: () => unknown) => {
      for (let i = 0; i < 300 && !pred(); i++) await sleep(50);
      assert.ok(pred(), `${what}; actions: ${JSON.stringify(actions)}\nlog:\n${log.join("\n")}\nserver:\n${arbiter.log()}`);
    };
    try {
      await adapter.reconnect("c1");
      const epoch = adapter.epoch;
      assert.match(epoch, /^[0-9a-z]{6}$/);
      await adapter.feed({ toolCall: { functionCalls: [{ id: "fc_1", name: "book_slot", args: { slot: "tomorrow 3pm" } }] } });
      const [execute] = of("execute");
      assert.ok(execute, "no execute");
      assert.ok(execute.jobId.endsWith(`.${epoch}`), execute.jobId);
      await adapter.feed({ voiceActivity: { voiceActivityType: "ACTIVITY_START" } }); // holds the commit
      await adapter.prepared(execute.jobId);

      // The store loses everything: a Redis without persistence restarts.
      await redis.stop("SIGKILL");
      redis = await startRedis(port, dir);

      await adapter.feed({ serverContent: { inputTranscription: { text: "What time was that again?" } } });
      await until("no sessionLost", () => of("sessionLost").length);
      const [lost] = of("sessionLost");
      assert.equal(lost.lostEpoch, epoch);
      assert.match(lost.epoch, /^[0-9a-z]{6}$/);
      assert.notEqual(lost.epoch, epoch);
      assert.equal(adapter.epoch, lost.epoch);
      assert.deepEqual(lost.callIds, ["fc_1"]);
      assert.ok(lost.error instanceof SessionLostError);
      assert.equal(lost.error.reason, "SESSION_LOST");
      // Before it: the job released once (no commit), the call answered as of unknown
      // outcome. Who saw the loss first is a race: the transcript (SESSION_LOST: the job
      // is in jobIds) or the parked Decide, asked again by the channel once Redis was
      // back (JOB_NOT_FOUND or SESSION_NOT_FOUND: released as "no decision", fail closed).
      assert.equal(of("commit").length, 0);
      const releases = of("cancel");
      assert.deepEqual(releases.map((r) => r.jobId), [execute.jobId]);
      const release = releases[0];
      if (release.error instanceof SessionLostError) {
        assert.deepEqual(lost.jobIds, [execute.jobId]);
      } else {
        assert.ok(release.error instanceof NotFoundError && /^(JOB|SESSION)_NOT_FOUND$/.test(release.error.reason), String(release.error));
        assert.deepEqual(lost.jobIds, []);
      }
      console.error(`  the loss was seen first by ${release.error instanceof SessionLostError ? "the transcript" : "the parked Decide"}`);
      const answers = of("sendFunctionResponse");
      assert.deepEqual(answers.map((a) => [a.id, a.payload.status]), [["fc_1", "unknown"]]);
      assert.ok(actions.indexOf(answers[0]) < actions.indexOf(lost));

      // It goes on in the new epoch: the transcript was delivered there, a new call executes there.
      assert.ok(await adapter.flush(10_000), "the transcript was not delivered in the new epoch");
      await adapter.feed({ toolCall: { functionCalls: [{ id: "fc_2", name: "book_slot", args: { slot: "friday 10am" } }] } });
      const second = of("execute").find((a) => a.call.id === "fc_2");
      assert.ok(second, `no execute for fc_2: ${JSON.stringify(actions)}`);
      assert.ok(second.jobId.endsWith(`.${lost.epoch}`), second.jobId);
      const state = await client.getSession({ sessionId: session });
      assert.equal(state.epoch, lost.epoch);
      assert.equal(of("sessionLost").length, 1, "one loss, handed out once");
      console.error(`  ${log.join("\n  ")}`);
      // The old job's id names nothing in the new epoch.
      await assert.rejects(client.decide({ sessionId: session, jobId: execute.jobId }), (e: any) => e.reason === "JOB_NOT_FOUND");
    } finally {
      await adapter.close(3000).catch(() => undefined);
      client.close();
    }
  });
});
