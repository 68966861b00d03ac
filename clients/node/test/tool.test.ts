// The tool helpers (src/tool.ts) against a running arbiter (booking.yaml: book_slot
// side-effecting, grace 1.5 s): a two-phase tool that knows only its call id commits
// on COMMIT, is cancelled by a stop while it prepares, and is refused for a call that
// executes nothing. Without the wire guard nothing indexes the calls, so the session is
// named; the guard's wire checks run the same helper by call id alone.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { describe, it } from "node:test";
import { ArbiterClient, ArbiterError, JobCancelled, ToolJob, pb, twoPhase } from "../src/index.js";

describe("tool helpers", { skip: !process.env.ARBITER_TARGET && "set ARBITER_TARGET to a running arbiter (booking.yaml)" }, () => {
  const register = (client: ArbiterClient, sessionId: string, callId: string, slot = "tomorrow 3pm") =>
    client.registerCall({ sessionId, callId, tool: "book_slot", args: { slot } });

  it("twoPhase commits on COMMIT and answers with the tool's result", async () => {
    const client = new ArbiterClient(process.env.ARBITER_TARGET!);
    const sessionId = "tool-" + randomBytes(4).toString("hex");
    try {
      await register(client, sessionId, "fc_1");
      const done: string[] = [];
      const tool = twoPhase(client, {
        sessionId,
        decideWaitMs: 5000,
        callId: (id: string) => id,
        prepare: async () => "hold-1",
        commit: async (hold, job) => (done.push(`commit ${hold} ${job.jobId}`), { reference: "R-1" }),
        release: async (hold) => void done.push(`release ${hold}`),
      });
      const payload = await tool("fc_1");
      assert.equal(payload.status, "committed");
      assert.deepEqual(payload.result, { reference: "R-1" });
      assert.match(done.join(), /^commit hold-1 job-1\./);
    } finally {
      client.close();
    }
  });

  it("a call id issued again after its commit runs no phase again (JobTaken)", async () => {
    const client = new ArbiterClient(process.env.ARBITER_TARGET!);
    const sessionId = "tool-" + randomBytes(4).toString("hex");
    try {
      const commits: string[] = [];
      const tool = twoPhase(client, {
        sessionId,
        decideWaitMs: 5000,
        callId: (id: string) => id,
        prepare: async () => "hold",
        commit: async (_hold, job) => (commits.push(job.jobId), { reference: "R-1" }),
      });
      await register(client, sessionId, "fc_1");
      assert.equal((await tool("fc_1")).status, "committed");
      // The provider issues fc_1 again (a retry, a reconnect): the framework runs the tool again.
      await register(client, sessionId, "fc_1");
      const again = await tool("fc_1");
      assert.equal(again.status, "duplicate");
      assert.equal(again.executed, false);
      assert.equal(commits.length, 1, `committed ${commits.length} times: ${commits}`);
      const s = await client.getSession({ sessionId });
      assert.equal(s.jobs.length, 1);
      assert.equal(s.jobs[0].outcome, pb.Outcome.OUTCOME_COMMITTED);
    } finally {
      client.close();
    }
  });

  it("a stop while preparing aborts the prepare and cancels the job", async () => {
    const client = new ArbiterClient(process.env.ARBITER_TARGET!);
    const sessionId = "tool-" + randomBytes(4).toString("hex");
    try {
      await register(client, sessionId, "fc_1");
      const job = new ToolJob(client, "fc_1", { sessionId, decideWaitMs: 5000 });
      await job.begin();
      let aborted = false;
      const stop = (async () => {
        await sleep(100);
        await client.reportSpeech({ sessionId, event: pb.SpeechEvent.SPEECH_EVENT_USER_ACTIVITY_START });
        await client.reportTranscript({ sessionId, text: "Actually, stop." });
        await client.reportSpeech({ sessionId, event: pb.SpeechEvent.SPEECH_EVENT_USER_ACTIVITY_END });
      })();
      await assert.rejects(
        job.preparing(async (signal) => {
          await sleep(30000, undefined, { signal }).catch(() => (aborted = true));
        }),
        JobCancelled,
      );
      await stop;
      await job.end();
      assert.ok(aborted, "the prepare's signal aborted");
      assert.equal(job.payload?.status, "cancelled");
      const s = await client.getSession({ sessionId });
      assert.equal(s.jobs[0].outcome, pb.Outcome.OUTCOME_CANCELLED);
    } finally {
      client.close();
    }
  });

  it("a call that executes nothing is refused, naming call_id", async () => {
    const client = new ArbiterClient(process.env.ARBITER_TARGET!);
    const sessionId = "tool-" + randomBytes(4).toString("hex");
    try {
      await register(client, sessionId, "fc_1");
      await register(client, sessionId, "fc_2", "tomorrow at 3pm"); // a duplicate
      await assert.rejects(new ToolJob(client, "fc_2", { sessionId }).begin(), (err: unknown) => err instanceof ArbiterError && err.field === "call_id");
      await assert.rejects(new ToolJob(client, "fc_unindexed").begin(), (err: unknown) => err instanceof ArbiterError && err.field === "call_id");
    } finally {
      client.close();
    }
  });
});
