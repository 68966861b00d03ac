// Issue 15, the rollout, end to end with real processes: a redis-server (AOF on) started
// here on a free port, two `arbiter serve` replicas on it (--drain-timeout 10s; appendfsync always, the setting serve accepts without --allow-volatile-store), and one
// ArbiterClient over both (`ipv4:127.0.0.1:P1,127.0.0.1:P2`, round-robin by the
// service config). Eight LiveAdapter sessions each execute a booking, hear the user start
// speaking and report the prepare done: each keeps a Decide(prepared=true) parked, the
// commit held by the open utterance (grace 0.5 s, holds up to 60 s: no timer decides
// during the test). Then replica 1 gets SIGTERM: its parked Decides end with UNAVAILABLE
// (SERVER_DRAINING), the channel asks again on replica 2, and replica 1 exits. Then the
// users finish: four say "stop" and must be cancelled (cancel action and note), four
// confirm and must be committed (commit action, then the response); no job released
// for want of an answer. The verdict is on the decisions; the drain time (the replica's
// own "drained took=" line) is printed, and only its exit before --drain-timeout (the
// "drained" line, not "drain timeout") is asserted.
//
// clients/test.sh runs it with ARBITER_BIN set (and redis-server on PATH); skipped otherwise.
import assert from "node:assert/strict";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { ArbiterClient, LiveAdapter, pb, type Action } from "../src/index.js";
import { ARBITER_BIN, freePort, serveArbiter, startRedis, tempDir, type Arbiter, type Proc } from "./procs.js";

const POLICY = `# the rollout test's policy: a commit held by an open utterance stays held for the whole test
defaults:
  grace: 0.5s
  transcript_timeout: 60s
  on_transcript_timeout: cancel
  max_hold: 60s
  dedupe_window: 30s
tools:
  - name: book_slot
    side_effect: true
    behavior: NON_BLOCKING
    key:
      - arg: slot
        as: datetime
    describe: "the booking for {slot}"
`;

const SESSIONS = 8;
const SLOTS = ["monday 9am", "monday 10am", "tuesday 9am", "tuesday 10am", "wednesday 9am", "wednesday 10am", "thursday 9am", "thursday 10am"];

describe("rollout: SIGTERM one of two replicas while Decides are parked", { skip: !ARBITER_BIN && "set ARBITER_BIN to the arbiter binary" }, () => {
  let dir: string, redis: Proc, replicas: Arbiter[] = [];
  before(async () => {
    dir = tempDir("arbiter-rollout-");
    const port = await freePort();
    redis = await startRedis(port, dir, ["--appendonly", "yes", "--appendfsync", "always"]);
    writeFileSync(join(dir, "rollout.yaml"), POLICY);
    const args = ["--tools", join(dir, "rollout.yaml"), "--redis-url", `redis://127.0.0.1:${port}`, "--drain-timeout", "10s"];
    replicas = [await serveArbiter(args, join(dir, "replica1.log")), await serveArbiter(args, join(dir, "replica2.log"))];
  });
  after(async () => {
    for (const r of replicas) await r.stop();
    await redis?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("the parked Decides finish on the other replica; the replica drains before its timeout", async () => {
    const [r1, r2] = replicas;
    const target = `ipv4:${r1.addr},${r2.addr}`;
    const log: string[] = [];
    const logger = { warn: (m: string) => void log.push(m), error: (m: string) => void log.push(m) };
    const client = new ArbiterClient(target, { logger });
    // One channel per session, each over both replicas: round-robin takes them in turn
    // per RPC within a channel, so a session's RPCs land where its own sequence puts
    // them, not where the other sessions' interleaving does.
    const channels = Array.from({ length: SESSIONS }, () => new ArbiterClient(target, { logger }));
    const run = `${process.pid}-${Date.now() % 1e8}`;
    const sessions = Array.from({ length: SESSIONS }, (_, i) => {
      const actions: Action[] = [];
      const s = {
        id: `node-rollout-${run}-${i}`,
        stop: i % 2 === 0,
        actions,
        of: <T extends Action["type"]>(type: T) => actions.filter((a) => a.type === type) as Extract<Action, { type: T }>[],
        adapter: undefined as unknown as LiveAdapter,
      };
      s.adapter = new LiveAdapter(channels[i], s.id, (a) => {
        actions.push(a);
        if (a.type === "commit") void s.adapter.committed(a.jobId, { reference: `R-${i}` }).catch((e) => log.push(`committed ${a.jobId}: ${e}`));
      }, { logger });
      return s;
    });
    const why = () =>
      `\n${sessions.map((s) => `${s.id}: ${s.actions.map((a) => a.type).join(" ")}`).join("\n")}\nlog:\n  ${log.join("\n  ")}\nreplica 1:\n${r1.log()}\nreplica 2:\n${r2.log()}`;
    const until = async (what: string, pred: () => boolean | Promise<boolean>) => {
      for (let i = 0; i < 400; i++) {
        if (await pred()) return;
        await sleep(50);
      }
      assert.fail(`${what}${why()}`);
    };
    try {
      for (const [i, s] of sessions.entries()) {
        await s.adapter.reconnect("c1");
        await s.adapter.feed({ toolCall: { functionCalls: [{ id: "fc_1", name: "book_slot", args: { slot: SLOTS[i] } }] } });
        await s.adapter.feed({ voiceActivity: { voiceActivityType: "ACTIVITY_START" } });
        const [execute] = s.of("execute");
        assert.ok(execute, `no execute for ${s.id}${why()}`);
        // Every session makes the same RPCs on its own channel: one more for every
        // other session puts its Decide on the other replica, whatever the count (the
        // client core's Decide contract changed it once, and with one shared channel
        // every Decide landed on replica 2).
        if (i % 2 === 1) await channels[i].getSession({ sessionId: s.id });
        await s.adapter.prepared(execute.jobId);
      }
      // Every job prepared: its Decide(prepared=true) reached a replica and waits there.
      await until("not every Decide(prepared=true) arrived", async () => {
        const states = await Promise.all(sessions.map((s) => client.getSession({ sessionId: s.id })));
        return states.every((st) => st.jobs.length === 1 && st.jobs[0].state === pb.JobState.JOB_STATE_PREPARED);
      });

      const termAt = Date.now();
      await r1.stop("SIGTERM");
      const exitMs = (r1.exitedAt ?? Date.now()) - termAt;
      const out = r1.log();
      const drained = /msg=drained took=(\S+)/.exec(out);
      assert.ok(drained, `replica 1 did not log "drained" (a "drain timeout" means it waited out --drain-timeout)${why()}`);
      assert.doesNotMatch(out, /drain timeout/);
      assert.equal(await r1.exited, 0, `replica 1 exit status${why()}`);
      // The access log's fields in any order: one line per Decide the drain ended.
      const drainedDecides = out
        .split("\n")
        .filter((l) => /\bgrpc\.method=Decide\b/.test(l) && /\bgrpc\.code=Unavailable\b/.test(l) && l.includes("server shutting down")).length;
      assert.ok(drainedDecides > 0, `no Decide was parked on replica 1 (round-robin should have put about half there)${why()}`);
      console.error(`  replica 1: drained took=${drained[1]} (its log), SIGTERM to exit ${exitMs}ms; Decides it ended with SERVER_DRAINING: ${drainedDecides} of ${SESSIONS}`);

      // Nothing was decided meanwhile: every commit is still held by its utterance.
      for (const s of sessions) assert.equal(s.actions.filter((a) => a.type !== "execute").length, 0, `${s.id} decided before the user finished${why()}`);
      for (const s of sessions) {
        await s.adapter.feed({ serverContent: { inputTranscription: { text: s.stop ? "Stop, don't book it." : "Yes, that's the one." } } });
        await s.adapter.feed({ voiceActivity: { voiceActivityType: "ACTIVITY_END" } });
      }
      await until("not every session got its decision and its answer", () =>
        sessions.every((s) => (s.stop ? s.of("cancel").length === 1 && s.of("sendNote").length === 1 : s.of("sendFunctionResponse").length === 1)),
      );
      for (const s of sessions) {
        if (s.stop) {
          assert.equal(s.of("commit").length, 0, `${s.id} committed after a stop${why()}`);
          assert.equal(s.of("cancel")[0].error, undefined, `${s.id} released for want of an answer${why()}`);
          assert.match(s.of("cancel")[0].reason, /stop intent/);
        } else {
          assert.equal(s.of("commit").length, 1, `${s.id} not committed${why()}`);
          assert.equal(s.of("sendFunctionResponse")[0].payload.status, "committed", why());
        }
      }
    } finally {
      for (const s of sessions) await s.adapter.close(3000).catch(() => undefined);
      client.close();
      for (const c of channels) c.close();
    }
  });
});
