// Unit tests of the client and the Live adapter against a scripted in-process server,
// plus (when ARBITER_TARGET names a running arbiter) the typed errors of the real one.
//
//     npm run build && node --test dist/test/
import { Metadata, Server, ServerCredentials, status, type sendUnaryData, type ServerUnaryCall } from "@grpc/grpc-js";
import assert from "node:assert/strict";
import { afterEach, beforeEach, describe, it } from "node:test";
import { performance } from "node:perf_hooks";
import { setTimeout as sleep } from "node:timers/promises";
import { BadRequest, ErrorInfo, RetryInfo } from "../src/gen/google/rpc/error_details.js";
import { Status } from "../src/gen/google/rpc/status.js";
import {
  ArbiterClient,
  DELIVERY_STUCK_MS,
  ERROR_DOMAIN,
  fromServiceError,
  FailedPreconditionError,
  InvalidArgumentError,
  LiveAdapter,
  NotFoundError,
  UnavailableError,
  pb,
  type Action,
} from "../src/index.js";

const FAST = { initialBackoffMs: 10, maxBackoffMs: 20, maxElapsedMs: 500 };
const quiet = { warn() {}, error() {} };

function effects(responses: [string, string][] = [], skips: string[] = [], notes: string[] = []): pb.Effects {
  return pb.Effects.fromPartial({
    responses: responses.map(([callId, st]) => ({ callId, name: "book_slot", jobId: "job-1", payload: { status: st } })),
    skips: skips.map((callId) => ({ callId, name: "book_slot", reason: "abandoned", jobId: "job-1" })),
    notes: notes.map((text) => ({ jobId: "job-1", text, deliver: pb.Delivery.DELIVERY_NOW })),
  });
}

type Handler = (req: any, call: ServerUnaryCall<any, any>) => Promise<any>;

/** A scripted arbiter: every RPC is recorded; tests set what each returns. */
class Script {
  requests: [string, any][] = [];
  arrived: number[] = []; // performance.now() of each request, as requests
  /** What happened, in order: "Decide" (arrived), "Decide ok", "Decide failed", "Decide cancelled" (by the client). */
  events: string[] = [];
  fail: Record<string, status[]> = {};
  /** A request of this RPC that does not fail waits for the promise before it is answered. */
  hold: Record<string, Promise<void>> = {};
  decide: Handler = async () => pb.DecideResponse.fromPartial({ decision: pb.Decision.DECISION_PENDING });
  completeEffects = effects();
  registerEffects = effects();
  speechEffects = effects();
  pollEffects = effects();
  configureDelayMs = 0;

  sent(name: string): any[] {
    return this.requests.filter(([n]) => n === name).map(([, r]) => r);
  }

  private handler(name: string, respond: Handler) {
    return (call: ServerUnaryCall<any, any>, cb: sendUnaryData<any>) => {
      this.requests.push([name, call.request]);
      this.arrived.push(performance.now());
      this.events.push(name);
      let over = false; // answered: grpc-js also says "cancelled" when a finished call's stream closes
      call.on("cancelled", () => over || this.events.push(`${name} cancelled`));
      const code = this.fail[name]?.shift();
      if (code !== undefined) {
        over = true;
        this.events.push(`${name} failed`);
        return cb({ code, details: `${name}: scripted failure` });
      }
      (this.hold[name] ?? Promise.resolve())
        .then(() => respond(call.request, call))
        .then((r) => {
          if (call.cancelled) return;
          over = true;
          this.events.push(`${name} ok`);
          cb(null, r);
        }, (e) => cb({ code: status.INTERNAL, details: String(e) }));
    };
  }

  impl() {
    return {
      registerCall: this.handler("RegisterCall", async (r) =>
        pb.RegisterCallResponse.fromPartial({
          callId: r.callId, disposition: pb.Disposition.DISPOSITION_EXECUTE, jobId: "job-1",
          businessKey: "book_slot(slot=x)", sideEffect: r.tool === "book_slot", effects: this.registerEffects,
        })),
      reportSpeech: this.handler("ReportSpeech", async () => ({ effects: this.speechEffects })),
      reportTranscript: this.handler("ReportTranscript", async () => pb.ReportTranscriptResponse.fromPartial({ intent: "other" })),
      reportToolCallCancellation: this.handler("ReportToolCallCancellation", async () => pb.ReportToolCallCancellationResponse.fromPartial({})),
      decide: this.handler("Decide", (r, call) => this.decide(r, call)),
      complete: this.handler("Complete", async () => ({ effects: this.completeEffects })),
      getSession: this.handler("GetSession", async (r) => pb.GetSessionResponse.fromPartial({ sessionId: r.sessionId })),
      poll: this.handler("Poll", async () => ({ effects: this.pollEffects })),
      closeSession: this.handler("CloseSession", async () => pb.CloseSessionResponse.fromPartial({})),
      configureSession: this.handler("ConfigureSession", async (r) =>
        sleep(this.configureDelayMs).then(() => pb.ConfigureSessionResponse.fromPartial({ language: r.language || "en", responseScheduling: r.responseScheduling }))),
    };
  }
}

async function serve(script: Script, port = 0): Promise<[Server, number]> {
  const server = new Server();
  server.addService(pb.ArbiterServiceService, script.impl());
  const bound = await new Promise<number>((resolve, reject) =>
    server.bindAsync(`127.0.0.1:${port}`, ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
  );
  return [server, bound];
}

/**
 * Effects of a cancelled job: fc_1's response (with `status_note` when the note rides on
 * it) and the note.
 */
function cancelledWithNote(note: Partial<pb.Note>): pb.Effects {
  const rides = note.via === pb.NoteVia.NOTE_VIA_FUNCTION_RESPONSE;
  return pb.Effects.fromPartial({
    responses: [{ callId: "fc_1", name: "book_slot", jobId: "job-1", payload: { status: "cancelled", ...(rides ? { status_note: "System note: cancelled." } : {}) } }],
    notes: [{ jobId: "job-1", text: "System note: cancelled.", ...note }],
  });
}

const cancelDuringPrepare: Handler = async (r) => {
  await sleep(50);
  return pb.DecideResponse.fromPartial({ decision: pb.Decision.DECISION_CANCEL, reason: "stop", jobId: r.jobId });
};

/** Resolves after ms, without keeping the process alive (a held-open long-poll). */
const hold = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());

/** Resolves when the client cancels the call, or after ms (a held-open long-poll the client never cancels). */
const untilCancelled = (call: ServerUnaryCall<any, any>, ms = 10_000) =>
  new Promise<void>((resolve) => {
    if (call.cancelled) return resolve();
    call.once("cancelled", () => resolve());
    setTimeout(resolve, ms).unref();
  });

/** A gate the test opens: [the promise, open]. */
function gate(): [Promise<void>, () => void] {
  let open!: () => void;
  const p = new Promise<void>((resolve) => (open = resolve));
  return [p, open];
}

/** A Duration as nanoseconds. */
const ageNs = (d: { seconds: number; nanos: number }) => d.seconds * 1e9 + d.nanos;

const callMessage = (id = "fc_1", name = "book_slot") => ({
  toolCall: { functionCalls: [{ id, name, args: { slot: "tomorrow 3pm" } }] },
});

describe("LiveAdapter", () => {
  let script: Script, server: Server, port: number, client: ArbiterClient, adapter: LiveAdapter;
  let actions: Action[];
  const of = <T extends Action["type"]>(type: T) => actions.filter((a) => a.type === type) as Extract<Action, { type: T }>[];
  const until = async (pred: () => unknown, ms = 3000) => {
    for (let t = 0; t < ms; t += 10) {
      if (pred()) return;
      await sleep(10);
    }
    assert.fail(`timed out; actions: ${JSON.stringify(actions)}`);
  };

  beforeEach(async () => {
    script = new Script();
    [server, port] = await serve(script);
    client = new ArbiterClient(`127.0.0.1:${port}`, { retry: FAST, timeoutMs: 2000, logger: quiet });
    actions = [];
    adapter = new LiveAdapter(client, "s1", (a) => void actions.push(a), { decideWaitMs: 200, logger: quiet });
  });

  afterEach(() => {
    client.close();
    server.forceShutdown();
  });

  describe("input transcription off", () => {
    const activity = (t: string) => ({ voiceActivity: { voiceActivityType: t } });
    const heard = (text: string) => ({ serverContent: { inputTranscription: { text } } });
    let warnings: string[];
    let watched: LiveAdapter;
    beforeEach(() => {
      warnings = [];
      const logger = { warn: (m: string) => void warnings.push(m), error() {} };
      watched = new LiveAdapter(client, "s-tx", (a) => void actions.push(a), { decideWaitMs: 200, logger, transcriptWarningMs: 100 });
    });
    afterEach(() => watched.close(500));

    it("warns once when voice activity ends and no input transcript ever arrives", async () => {
      for (let i = 0; i < 2; i++) {
        await watched.feed(activity("ACTIVITY_START"));
        await watched.feed(activity("ACTIVITY_END"));
        await sleep(300); // past the 100 ms window
      }
      assert.equal(warnings.length, 1, warnings.join("\n"));
      assert.match(warnings[0], /session s-tx: the user's voice activity ended 100 ms ago and no input transcript/);
      assert.match(warnings[0], /inputAudioTranscription/);
    });

    it("stays silent when an input transcript arrives within the window", async () => {
      void watched.feed(activity("ACTIVITY_START"));
      void watched.feed(activity("ACTIVITY_END"));
      void watched.feed(heard("Actually, stop.")); // the same tick as the end: before the timer can fire
      await sleep(300);
      await watched.feed(activity("ACTIVITY_START"));
      await watched.feed(activity("ACTIVITY_END")); // later utterances: transcription is known to be on
      await sleep(300);
      assert.deepEqual(warnings, []);
      assert.equal(script.sent("ReportTranscript").length, 1);
    });

    it("stays silent with transcriptWarningMs 0, and after close", async () => {
      const off: string[] = [];
      const quietAdapter = new LiveAdapter(client, "s-off", () => {}, { logger: { warn: (m: string) => void off.push(m), error() {} }, transcriptWarningMs: 0 });
      await quietAdapter.feed(activity("ACTIVITY_END"));
      await watched.feed(activity("ACTIVITY_END"));
      await watched.close(500);
      await sleep(300);
      await quietAdapter.close(500);
      assert.deepEqual([...off, ...warnings], []);
    });
  });

  it("aborts the prepare when Decide cancels during it", async () => {
    script.decide = async (r) => {
      assert.equal(r.prepared, false);
      await sleep(50);
      return pb.DecideResponse.fromPartial({ decision: pb.Decision.DECISION_CANCEL, reason: "stop", jobId: r.jobId });
    };
    script.completeEffects = effects([["fc_1", "cancelled"]], [], ["System note: cancelled."]);
    await adapter.feed(callMessage());
    await until(() => of("sendNote").length);
    assert.deepEqual(actions.map((a) => a.type), ["execute", "abortPrepare", "sendFunctionResponse", "sendNote"]);
    assert.equal(of("execute")[0].businessKey, "book_slot(slot=x)");
    assert.deepEqual(script.sent("Complete").map((c) => c.outcome), [pb.Outcome.OUTCOME_CANCELLED]);
  });

  it("re-asks with prepared=true once prepared, then commits", async () => {
    script.decide = async (r) => {
      if (!r.prepared) await hold(10_000); // held open: returns early only on cancel
      return pb.DecideResponse.fromPartial({ decision: pb.Decision.DECISION_COMMIT, reason: "grace window passed", jobId: r.jobId });
    };
    script.completeEffects = effects([["fc_1", "committed"]]);
    await adapter.feed(callMessage());
    await until(() => script.sent("Decide").length);
    await adapter.prepared("job-1");
    await until(() => of("commit").length);
    assert.deepEqual(script.sent("Decide").map((d) => d.prepared), [false, true]);
    // The core follows the delivery contract and says so on every Decide, so the
    // arbiter does not withhold a late commit from it (DecideRequest.events_delivered).
    assert.deepEqual(script.sent("Decide").map((d) => d.eventsDelivered), [true, true]);
    assert.equal(of("sendFunctionResponse").length, 0);
    await adapter.committed("job-1", { reference: "R-1" });
    const [done] = script.sent("Complete");
    assert.equal(done.outcome, pb.Outcome.OUTCOME_COMMITTED);
    assert.deepEqual(done.result, { reference: "R-1" });
    assert.deepEqual(of("sendFunctionResponse").map((a) => a.id), ["fc_1"]);
  });

  it("retries Decide on a lost connection", async () => {
    script.fail.Decide = [status.UNAVAILABLE, status.UNAVAILABLE];
    script.decide = async (r) => pb.DecideResponse.fromPartial({ decision: pb.Decision.DECISION_COMMIT, jobId: r.jobId });
    await adapter.feed(callMessage());
    await adapter.prepared("job-1");
    await until(() => of("commit").length);
    assert.equal(script.sent("Decide").length, 3);
    assert.equal(of("commit").length, 1);
  });

  it("keeps a Decide long-poll across a server restart", async () => {
    script.decide = async (r) => {
      if (script.sent("Decide").length === 1) await hold(10_000); // the connection drops meanwhile
      return pb.DecideResponse.fromPartial({ decision: pb.Decision.DECISION_CANCEL, reason: "stop", jobId: r.jobId });
    };
    await adapter.feed(callMessage());
    await until(() => script.sent("Decide").length);
    server.forceShutdown();
    await sleep(100);
    [server] = await serve(script, port);
    await until(() => of("abortPrepare").length);
    assert.equal(script.sent("Decide").length, 2, JSON.stringify(of("abortPrepare")[0]?.reason));
    assert.equal(of("commit").length, 0);
    assert.equal(of("abortPrepare")[0].error, undefined);
  });

  it("never commits when Decide keeps failing", async () => {
    script.fail.Decide = Array(1000).fill(status.UNAVAILABLE);
    await adapter.feed(callMessage());
    await adapter.prepared("job-1");
    // Each Decide call makes the service config's 5 attempts (about 1.5 s), and the core
    // asks again until FAST's maxElapsedMs: a bound, not the verdict.
    await until(() => script.sent("Complete").length, 15_000);
    assert.ok(script.sent("Decide").length > 5, "asked again past one call's attempts");
    assert.equal(of("commit").length, 0);
    const [release] = [...of("cancel"), ...of("abortPrepare")];
    assert.ok(release.error instanceof UnavailableError);
    assert.deepEqual(script.sent("Complete").map((c) => c.outcome), [pb.Outcome.OUTCOME_FAILED]);
  });

  // --- the outbox: age, order, retries -------------------------------------------------

  it("retries an event with its growing age", async () => {
    script.fail.ReportSpeech = [status.UNAVAILABLE, status.DEADLINE_EXCEEDED];
    await adapter.feed({ serverContent: { interrupted: true } }); // delivered by the third attempt
    const sent = script.sent("ReportSpeech");
    assert.deepEqual(sent.map((r) => r.event), Array(3).fill(pb.SpeechEvent.SPEECH_EVENT_INTERRUPTED));
    assert.ok(sent.every((r) => r.age !== undefined));
    const ages = sent.map((r) => ageNs(r.age));
    assert.deepEqual(ages, [...ages].sort((a, b) => a - b));
    assert.ok(ages[2] > ages[0], `ages ${ages}`); // each retry says how long ago it was observed
    assert.ok(ages[0] < 500e6);
  });

  it("keeps the events' order across a failure", async () => {
    script.decide = async () => {
      await hold(10_000);
      return pb.DecideResponse.fromPartial({});
    };
    script.fail.ReportSpeech = Array(6).fill(status.UNAVAILABLE);
    void adapter.feed({ voiceActivity: { voiceActivityType: "ACTIVITY_START" } }); // not awaited
    void adapter.feed({ serverContent: { inputTranscription: { text: "stop" } } });
    void adapter.feed({ voiceActivity: { voiceActivityType: "ACTIVITY_END" } });
    await adapter.feed(callMessage());
    const delivered = script.requests
      .filter(([n]) => ["ReportSpeech", "ReportTranscript", "RegisterCall"].includes(n))
      .map(([n, r]) => [n, r.event]);
    const start = ["ReportSpeech", pb.SpeechEvent.SPEECH_EVENT_USER_ACTIVITY_START];
    assert.deepEqual(delivered, [
      ...Array(7).fill(start),
      ["ReportTranscript", undefined],
      ["ReportSpeech", pb.SpeechEvent.SPEECH_EVENT_USER_ACTIVITY_END],
      ["RegisterCall", undefined],
    ]);
    // Placed where they were observed (arrival minus age): in the order fed, within the
    // few milliseconds the feeding took, though delivered 55 ms or more later.
    const placed = script.requests.flatMap(([n, r], i) => (r.age ? [[`${n}/${r.event}`, script.arrived[i] - ageNs(r.age) / 1e6] as const] : []));
    const last = new Map(placed); // the last attempt of each event: the one that landed
    const startAt = last.get(`ReportSpeech/${pb.SpeechEvent.SPEECH_EVENT_USER_ACTIVITY_START}`)!;
    assert.ok(Math.max(...last.values()) - startAt < 40, JSON.stringify([...last]));
    assert.ok(script.arrived.at(-1)! - startAt > 50);
    assert.equal(of("execute").length, 1);
  });

  it("drops an event the arbiter refuses, and rejects feed with its error", async () => {
    script.fail.ReportSpeech = [status.INVALID_ARGUMENT];
    await assert.rejects(adapter.feed({ serverContent: { interrupted: true } }), (e: unknown) => {
      assert.ok(e instanceof InvalidArgumentError);
      assert.equal(e.rpc, "ReportSpeech");
      return true;
    });
    assert.equal(script.sent("ReportSpeech").length, 1); // not retried
    await adapter.feed({ serverContent: { turnComplete: true } }); // the next one goes
    assert.equal(script.sent("ReportSpeech").length, 2);
  });

  it("retries a call without an id only on ABORTED", async () => {
    script.decide = async () => {
      await hold(10_000);
      return pb.DecideResponse.fromPartial({});
    };
    script.fail.RegisterCall = [status.ABORTED, status.UNAVAILABLE];
    await assert.rejects(adapter.feed(callMessage("")), UnavailableError); // the arbiter would mint a second id for a repeat
    assert.equal(script.sent("RegisterCall").length, 2);
  });

  // --- the Decide contract (docs/agent-guide.md; issue 26: an answered COMMIT stands) ----

  const prepared = () => script.sent("Decide").filter((d) => d.prepared);
  const commit = (r: any) => pb.DecideResponse.fromPartial({ decision: pb.Decision.DECISION_COMMIT, reason: "grace window passed", jobId: r.jobId });
  const cancel = (r: any) => pb.DecideResponse.fromPartial({ decision: pb.Decision.DECISION_CANCEL, reason: "stop intent", jobId: r.jobId });
  /** The index in script.events of the first entry `e` (after index `from`), -1 if none. */
  const at = (e: string, from = 0) => script.events.indexOf(e, from);
  const count = (e: string) => script.events.filter((x) => x === e).length;
  /** script.events for a failure message, its middle elided when long. */
  const trail = () => (script.events.length <= 60 ? script.events : [...script.events.slice(0, 20), "...", ...script.events.slice(-30)]).join(", ");
  /** An adapter whose Decide waits 20 s: its deadline never cancels it during a test (only the core can). */
  const longPoll = () => (adapter = new LiveAdapter(client, "s1", (a) => void actions.push(a), { decideWaitMs: 20_000, logger: quiet }));

  it("sends no Decide while an observed event is undelivered", async () => {
    longPoll();
    // The user's voice activity START fails to land (an outage). No Decide goes out,
    // prepared or not, until it has: the one parked during the prepare is aborted, and
    // the prepared one is sent after the START landed, then acted on.
    script.fail.ReportSpeech = Array(10_000).fill(status.UNAVAILABLE);
    script.decide = async (r, call) => {
      if (!r.prepared) await untilCancelled(call); // parked: returns early only on cancel
      return commit(r);
    };
    await adapter.feed(callMessage());
    await until(() => script.sent("Decide").length);
    void adapter.feed({ voiceActivity: { voiceActivityType: "ACTIVITY_START" } }); // observed, undelivered
    await until(() => count("ReportSpeech failed") >= 3);
    await adapter.prepared("job-1");
    await until(() => count("ReportSpeech failed") >= 6 || prepared().length > 0); // retries go on; a Decide would be sent at once
    script.fail.ReportSpeech = []; // the outage ends
    await until(() => of("commit").length);
    const landed = at("ReportSpeech ok");
    const firstStart = at("ReportSpeech");
    const decides = script.events.flatMap((e, i) => (e === "Decide" ? [i] : []));
    assert.ok(landed > 0, trail());
    assert.deepEqual(decides.filter((i) => i > firstStart && i < landed), [], `a Decide was sent while the START was undelivered: ${trail()}`);
    assert.equal(prepared().length, 1);
    assert.equal(count("Decide cancelled"), 1, trail()); // the prepare's parked Decide
    // Each says the core follows the delivery contract (DecideRequest.events_delivered).
    assert.deepEqual(script.sent("Decide").map((d) => d.eventsDelivered), script.sent("Decide").map(() => true));
  });

  it("aborts a waiting Decide when an event's delivery fails; asks again once it lands and acts on that answer", async () => {
    longPoll();
    script.fail.ReportSpeech = Array(10_000).fill(status.UNAVAILABLE);
    script.decide = async (r, call) => {
      if (!r.prepared) await hold(10_000); // held open: returns early only on cancel
      if (prepared().length === 1) {
        await untilCancelled(call);
        return commit(r); // the arbiter takes back a COMMIT whose caller went away
      }
      return cancel(r);
    };
    await adapter.feed(callMessage());
    await adapter.prepared("job-1");
    await until(() => prepared().length);
    const from = script.events.length; // what happens from the START on
    void adapter.feed({ voiceActivity: { voiceActivityType: "ACTIVITY_START" } }); // its delivery fails
    await until(() => at("Decide cancelled", from) >= 0);
    const cancelled = at("Decide cancelled", from);
    assert.ok(at("ReportSpeech failed", from) >= 0 && at("ReportSpeech failed", from) < cancelled, trail());
    await until(() => count("ReportSpeech failed") >= 3); // retried meanwhile; no Decide asked
    script.fail.ReportSpeech = [];
    await until(() => of("cancel").length);
    assert.equal(of("commit").length, 0);
    assert.deepEqual(of("cancel").map((a) => a.reason), ["stop intent"]);
    await until(() => script.sent("Complete").length);
    assert.deepEqual(script.sent("Complete").map((c) => c.outcome), [pb.Outcome.OUTCOME_CANCELLED]);
    // The second prepared Decide went out only after the START landed, with its age.
    const second = script.events.flatMap((e, i) => (e === "Decide" ? [i] : [])).filter((i) => i > cancelled);
    assert.equal(second.length, 1, trail());
    assert.ok(at("ReportSpeech ok") < second[0], trail());
    const ages = script.sent("ReportSpeech").map((r) => ageNs(r.age));
    assert.deepEqual(ages, [...ages].sort((a, b) => a - b));
  });

  it(`aborts a waiting Decide when an event is not delivered within ${DELIVERY_STUCK_MS} ms`, async () => {
    longPoll();
    const [held, release] = gate();
    script.hold.ReportSpeech = held; // in flight, not failing: the arbiter has not answered it
    script.decide = async (r, call) => {
      if (!r.prepared) await hold(10_000);
      if (prepared().length === 1) await untilCancelled(call);
      return commit(r);
    };
    await adapter.feed(callMessage());
    await adapter.prepared("job-1");
    await until(() => prepared().length);
    const from = script.events.length;
    void adapter.feed({ voiceActivity: { voiceActivityType: "ACTIVITY_START" } });
    await until(() => at("Decide cancelled", from) >= 0);
    assert.deepEqual(script.events.filter((e) => e.startsWith("ReportSpeech")), ["ReportSpeech"], "one attempt, still unanswered");
    assert.equal(prepared().length, 1, "asked again while the START was undelivered");
    release();
    await until(() => of("commit").length);
    assert.equal(prepared().length, 2);
    assert.ok(at("ReportSpeech ok") < script.events.lastIndexOf("Decide"), trail());
  });

  it("acts on a COMMIT that arrives while an event is in flight", async () => {
    // The COMMIT stands (the arbiter places the START after it): the core acts on it,
    // and does not ask again. The in-flight START is never stuck here (its limit is
    // raised), so the test does not depend on how fast this machine answers.
    const warnings: string[] = [];
    adapter = new LiveAdapter(client, "s1", (a) => void actions.push(a), { decideWaitMs: 200, logger: { warn: (m: string) => void warnings.push(m), error() {} } });
    (adapter as any).outbox.stuckMs = 60_000;
    const [held, release] = gate();
    script.hold.ReportSpeech = held;
    script.decide = async (r) => {
      if (!r.prepared) await hold(10_000);
      while (script.sent("ReportSpeech").length === 0) await sleep(5);
      return commit(r);
    };
    await adapter.feed(callMessage());
    await adapter.prepared("job-1");
    await until(() => prepared().length);
    const start = adapter.feed({ voiceActivity: { voiceActivityType: "ACTIVITY_START" } });
    await until(() => of("commit").length);
    assert.equal(at("ReportSpeech ok"), -1, "the START is still in flight");
    assert.equal(prepared().length, 1);
    assert.ok(warnings.some((w) => /acting on COMMIT; 1 event\(s\) observed while its Decide was open were not delivered yet/.test(w)), warnings.join("\n"));
    release();
    await start;
    await adapter.committed("job-1", { reference: "R-1" });
    assert.deepEqual(script.sent("Complete").map((c) => c.outcome), [pb.Outcome.OUTCOME_COMMITTED]);
    assert.equal(prepared().length, 1);
  });

  it("acts on a COMMIT at once when nothing is undelivered", async () => {
    script.decide = async (r, call) => {
      if (!r.prepared) await untilCancelled(call); // the arbiter never commits an unprepared job
      return commit(r);
    };
    await adapter.feed(callMessage());
    await adapter.feed({ serverContent: { turnComplete: true } });
    await adapter.prepared("job-1");
    await until(() => of("commit").length);
    assert.equal(prepared().length, 1);
  });

  it("releases the job, never commits, when an observed event stays undelivered past maxElapsedMs", async () => {
    script.fail.ReportSpeech = Array(10_000).fill(status.UNAVAILABLE);
    script.decide = async (r, call) => {
      if (!r.prepared) await untilCancelled(call);
      return commit(r);
    };
    await adapter.feed(callMessage());
    await until(() => script.sent("Decide").length);
    void adapter.feed({ voiceActivity: { voiceActivityType: "ACTIVITY_START" } }); // never lands
    await adapter.prepared("job-1");
    await until(() => of("cancel").length);
    assert.equal(of("commit").length, 0);
    assert.equal(prepared().length, 0, "a prepared Decide was sent while the START was undelivered");
    assert.match(of("cancel")[0].reason, /undelivered after 500 ms \(the retry policy's maxElapsedMs\)/);
    await until(() => script.sent("Complete").length);
    assert.deepEqual(script.sent("Complete").map((c) => c.outcome), [pb.Outcome.OUTCOME_FAILED]);
    await adapter.close(100);
  });

  it("never commits when the session closes with an observed event undelivered", async () => {
    script.fail.ReportSpeech = Array(10_000).fill(status.UNAVAILABLE);
    script.decide = async (r, call) => {
      if (!r.prepared) await untilCancelled(call);
      return commit(r);
    };
    await adapter.feed(callMessage());
    void adapter.feed({ voiceActivity: { voiceActivityType: "ACTIVITY_START" } });
    await adapter.prepared("job-1");
    await until(() => script.sent("ReportSpeech").length > 3);
    await adapter.close(300);
    await until(() => script.sent("Complete").length);
    assert.equal(of("commit").length, 0);
    assert.equal(prepared().length, 0);
    const [release] = of("cancel");
    assert.match(release.reason, /closed before the events observed were delivered/);
    assert.deepEqual(script.sent("Complete").map((c) => c.outcome), [pb.Outcome.OUTCOME_FAILED]);
  });

  it("hands out one response per call id and none for dead ids", async () => {
    script.speechEffects = effects([], ["fc_dead"]);
    await adapter.feed({ serverContent: { interrupted: true } });
    script.registerEffects = effects([["fc_1", "rejected"], ["fc_1", "rejected"], ["fc_dead", "cancelled"]]);
    await adapter.feed(callMessage("fc_1", "get_weather"));
    await adapter.feed(callMessage("fc_1", "get_weather")); // the same call again
    assert.deepEqual(of("skip").map((a) => a.id), ["fc_dead"]);
    assert.deepEqual(of("sendFunctionResponse").map((a) => a.id), ["fc_1"]);
    assert.equal(of("execute").length, 1);
  });

  it("acts once per seq; poll() asks after the contiguous high-water mark", async () => {
    const skip = (callId: string, seq: number) => ({ callId, name: "book_slot", reason: "abandoned", jobId: "", seq });
    // Skips 1, 2 and 4 in a reply (twice: a retried request repeats the seqs).
    script.speechEffects = pb.Effects.fromPartial({ skips: [skip("a", 1), skip("b", 2), skip("d", 4)] });
    await adapter.feed({ serverContent: { interrupted: true } });
    await adapter.feed({ serverContent: { interrupted: true } });
    assert.deepEqual(of("skip").map((a) => [a.id, a.seq]), [["a", 1], ["b", 2], ["d", 4]]);
    // Poll asks after 2 and acts on 3 only.
    script.pollEffects = pb.Effects.fromPartial({ skips: [skip("c", 3), skip("d", 4)] });
    await adapter.poll();
    await adapter.poll();
    assert.deepEqual(script.sent("Poll").map((r) => r.afterSeq), [2, 4]);
    assert.deepEqual(of("skip").map((a) => [a.id, a.seq]), [["a", 1], ["b", 2], ["d", 4], ["c", 3]]);
  });

  it("reads voice activity as the wire names it (voiceActivity.type) and as converted (voiceActivityType)", async () => {
    // The Developer API's message as @google/genai hands it over (unconverted), then the
    // SDK's Vertex AI conversion: both are the user's voice activity.
    await adapter.feed({ voiceActivity: { type: "ACTIVITY_START" } });
    await adapter.feed({ voiceActivity: { type: "ACTIVITY_END" } });
    await adapter.feed({ voiceActivity: { voiceActivityType: "ACTIVITY_START" } });
    assert.deepEqual(script.sent("ReportSpeech").map((r) => pb.speechEventToJSON(r.event)), [
      "SPEECH_EVENT_USER_ACTIVITY_START",
      "SPEECH_EVENT_USER_ACTIVITY_END",
      "SPEECH_EVENT_USER_ACTIVITY_START",
    ]);
  });

  it("maps LiveServerMessage fields to reports", async () => {
    await adapter.feed({ voiceActivity: { voiceActivityType: "ACTIVITY_START" } });
    await adapter.feed({ serverContent: { interimInputTranscription: { text: "st" } } });
    await adapter.feed({ serverContent: { inputTranscription: { text: "stop" } } });
    await adapter.feed({ serverContent: { inputTranscription: { text: " " } } }); // nothing said
    const audio = { modelTurn: { parts: [{ inlineData: { mimeType: "audio/pcm" } }] } };
    await adapter.feed({ serverContent: audio });
    await adapter.feed({ serverContent: audio }); // same turn: one MODEL_OUTPUT_START
    await adapter.feed({ serverContent: { outputTranscription: { text: "OK" }, generationComplete: true } });
    await adapter.feed({ serverContent: { turnComplete: true } });
    await adapter.feed({ toolCallCancellation: { ids: ["fc_9"] } });
    await adapter.feed(callMessage("fc_2", "get_weather"));
    for (const name of ["ReportSpeech", "ReportTranscript", "ReportToolCallCancellation", "RegisterCall"]) {
      assert.ok(script.sent(name).every((r) => r.age !== undefined), name);
    }
    assert.deepEqual(script.sent("ReportSpeech").map((r) => pb.speechEventToJSON(r.event)), [
      "SPEECH_EVENT_USER_ACTIVITY_START",
      "SPEECH_EVENT_MODEL_OUTPUT_START",
      "SPEECH_EVENT_MODEL_GENERATION_COMPLETE",
      "SPEECH_EVENT_MODEL_TURN_COMPLETE",
    ]);
    assert.deepEqual(script.sent("ReportTranscript").map((r) => [r.role, r.text, r.interim]), [
      [pb.Role.ROLE_USER, "st", true],
      [pb.Role.ROLE_USER, "stop", false],
      [pb.Role.ROLE_MODEL, "OK", false],
    ]);
    assert.deepEqual(script.sent("ReportToolCallCancellation")[0].callIds, ["fc_9"]);
  });

  it("sends ConfigureSession first, with the options", async () => {
    script.fail.ConfigureSession = [status.UNAVAILABLE]; // retried: idempotent
    script.configureDelayMs = 200;
    script.decide = cancelDuringPrepare;
    const a = new LiveAdapter(client, "s2", (x) => void actions.push(x), { decideWaitMs: 200, logger: quiet, language: "es-MX", responseScheduling: true });
    await a.feed({ voiceActivity: { voiceActivityType: "ACTIVITY_START" } });
    await a.feed(callMessage());
    await until(() => script.sent("Complete").length);
    await a.close();
    const names = script.requests.map(([n]) => n);
    assert.deepEqual(names.slice(0, 3), ["ConfigureSession", "ConfigureSession", "ReportSpeech"]);
    assert.equal(names.filter((n) => n === "ConfigureSession").length, 2); // one call, retried once
    const conf = script.sent("ConfigureSession").at(-1);
    assert.deepEqual([conf.sessionId, conf.language, conf.responseScheduling], ["s2", "es-MX", true]);
    // The START waited for ConfigureSession: its age, taken as it left, says so.
    assert.ok(ageNs(script.sent("ReportSpeech")[0].age) >= 200e6);
  });

  it("sends the time zone with ConfigureSession and a reading with the transcript (issue 25)", async () => {
    const a = new LiveAdapter(client, "s4", (x) => void actions.push(x), { decideWaitMs: 200, logger: quiet, timeZone: "Europe/Paris" });
    await a.inputTranscript("let's leave it", true, undefined, { intent: "stop", confidence: 0.9, source: "nlu" });
    await a.close();
    const conf = script.sent("ConfigureSession").at(-1);
    assert.deepEqual([conf.sessionId, conf.timeZone], ["s4", "Europe/Paris"]);
    const tr = script.sent("ReportTranscript").at(-1);
    assert.deepEqual([tr.text, tr.reading?.intent, tr.reading?.confidence, tr.reading?.source], ["let's leave it", "stop", 0.9, "nlu"]);
  });

  it("gives fed final transcripts the agent's own reading (readTranscript)", async () => {
    // feed() has no other way to carry a reading; interim pieces and the ones the reader
    // has none for go without.
    const seen: [string, string][] = [];
    const readTranscript = (text: string, utteranceId: string) => {
      seen.push([text, utteranceId]);
      return text.includes("leave it") ? { intent: "stop", confidence: 0.92, source: "nlu-v3" } : undefined;
    };
    const a = new LiveAdapter(client, "s5", (x) => void actions.push(x), { decideWaitMs: 200, logger: quiet, readTranscript });
    await a.feed({ serverContent: { interimInputTranscription: { text: "Hmm, let's" } } });
    await a.feed({ serverContent: { inputTranscription: { text: "Hmm, let's leave it for now." } } });
    await a.feed({ serverContent: { inputTranscription: { text: "Thanks." } } });
    await a.close();
    assert.deepEqual(script.sent("ReportTranscript").map((r) => [r.text, r.interim, r.reading?.intent, r.reading?.source]), [
      ["Hmm, let's", true, undefined, undefined],
      ["Hmm, let's leave it for now.", false, "stop", "nlu-v3"],
      ["Thanks.", false, undefined, undefined],
    ]);
    assert.deepEqual(seen, [["Hmm, let's leave it for now.", ""], ["Thanks.", ""]]);
  });

  it("sends no ConfigureSession without options", async () => {
    await adapter.feed({ serverContent: { turnComplete: true } });
    await adapter.close();
    assert.deepEqual(script.requests.map(([n]) => n), ["ReportSpeech", "CloseSession"]);
    await new LiveAdapter(client, "s3", () => {}, { responseScheduling: true, logger: quiet }).close(); // nothing reported
    assert.equal(script.sent("ConfigureSession").length, 0);
  });

  it("hands out a note via function response as that response's scheduling, not a sendNote", async () => {
    script.decide = cancelDuringPrepare;
    script.completeEffects = cancelledWithNote({
      deliver: pb.Delivery.DELIVERY_WHEN_IDLE, via: pb.NoteVia.NOTE_VIA_FUNCTION_RESPONSE, callId: "fc_1",
      scheduling: pb.Scheduling.SCHEDULING_WHEN_IDLE, why: "the model is speaking",
    });
    await adapter.feed(callMessage());
    await until(() => of("sendFunctionResponse").length);
    await adapter.close();
    assert.deepEqual(actions.map((a) => a.type), ["execute", "abortPrepare", "sendFunctionResponse"]);
    const [resp] = of("sendFunctionResponse");
    assert.deepEqual([resp.id, resp.scheduling], ["fc_1", "WHEN_IDLE"]);
    assert.deepEqual(resp.payload, { status: "cancelled", status_note: "System note: cancelled." });
    assert.equal(of("sendNote").length, 0);
  });

  it("sends a note via user turn as sendNote, with when and why", async () => {
    script.decide = cancelDuringPrepare;
    script.completeEffects = cancelledWithNote({ deliver: pb.Delivery.DELIVERY_WHEN_IDLE, via: pb.NoteVia.NOTE_VIA_USER_TURN, why: "the model is speaking" });
    await adapter.feed(callMessage());
    await until(() => of("sendNote").length);
    assert.deepEqual(actions.map((a) => a.type), ["execute", "abortPrepare", "sendFunctionResponse", "sendNote"]);
    assert.equal(of("sendFunctionResponse")[0].scheduling, null);
    const [note] = of("sendNote");
    assert.deepEqual([note.text, note.when, note.why, note.jobId], ["System note: cancelled.", "when_idle", "the model is speaking", "job-1"]);
  });

  it("sends a note as a user turn when the response it rides on is not handed out", async () => {
    script.speechEffects = effects([], ["fc_1"]); // fc_1 dies: its response is dropped
    await adapter.feed({ serverContent: { interrupted: true } });
    script.registerEffects = cancelledWithNote({
      deliver: pb.Delivery.DELIVERY_NOW, via: pb.NoteVia.NOTE_VIA_FUNCTION_RESPONSE, callId: "fc_1",
      scheduling: pb.Scheduling.SCHEDULING_INTERRUPT, why: "the model is idle",
    });
    await adapter.feed(callMessage("fc_2", "get_weather"));
    assert.equal(of("sendFunctionResponse").length, 0);
    const [note] = of("sendNote");
    assert.deepEqual([note.when, note.why], ["now", "the model is idle"]);
  });

  it("sends behavior and tool choice, and reports failures", async () => {
    adapter.behaviors.book_slot = "BLOCKING";
    adapter.toolChoice = "none";
    script.decide = async () => {
      await hold(10_000);
      return pb.DecideResponse.fromPartial({});
    };
    await adapter.feed(callMessage());
    const [reg] = script.sent("RegisterCall");
    assert.equal(reg.behavior, pb.Behavior.BEHAVIOR_BLOCKING);
    assert.equal(reg.toolChoice, pb.ToolChoice.TOOL_CHOICE_NONE);
    assert.deepEqual(reg.args, { slot: "tomorrow 3pm" });
    await adapter.failed("job-1", "backend down");
    assert.deepEqual(script.sent("Complete").map((c) => c.outcome), [pb.Outcome.OUTCOME_FAILED]);
  });
});

describe("ArbiterError", () => {
  it("reads reason, field and retry delay from the google.rpc.Status trailer, not the message", () => {
    const any = (type: string, value: Uint8Array) => ({ typeUrl: `type.googleapis.com/google.rpc.${type}`, value: Buffer.from(value) });
    const st = Status.encode({
      code: status.INVALID_ARGUMENT,
      message: "not the field: x",
      details: [
        any("ErrorInfo", ErrorInfo.encode({ reason: "INVALID_FIELD", domain: ERROR_DOMAIN, metadata: { field: "call_ids[2]" } }).finish()),
        any("BadRequest", BadRequest.encode({ fieldViolations: [{ field: "call_ids[2]", description: "empty", reason: "", localizedMessage: undefined }] }).finish()),
        any("RetryInfo", RetryInfo.encode({ retryDelay: { seconds: 1, nanos: 500_000_000 } }).finish()),
        { typeUrl: "type.googleapis.com/google.rpc.Unknown", value: Buffer.from([0xff]) },
      ],
    }).finish();
    const md = new Metadata();
    md.set("grpc-status-details-bin", Buffer.from(st));
    const e = fromServiceError({ code: status.INVALID_ARGUMENT, details: 'other: "a" is bad', metadata: md, name: "", message: "" }, "ReportToolCallCancellation");
    assert.ok(e instanceof InvalidArgumentError);
    assert.deepEqual([e.reason, e.field, e.retryDelayMs, e.errorDetails.domain], ["INVALID_FIELD", "call_ids[2]", 1500, ERROR_DOMAIN]);
    assert.equal(e.errorDetails.fieldViolations[0].description, "empty");
    // No trailer (grpc's own errors, a lost connection): no reason, no field, whatever the message says.
    const bare = fromServiceError({ code: status.UNAVAILABLE, details: 'call_id: "x" looks like a field', metadata: new Metadata(), name: "", message: "" }, "Decide");
    assert.ok(bare instanceof UnavailableError);
    assert.deepEqual([bare.reason, bare.field, bare.retryDelayMs], ["", undefined, undefined]);
    // A trailer that does not decode: empty details, never a throw.
    const junk = new Metadata();
    junk.set("grpc-status-details-bin", Buffer.from([0x0a, 0xff, 0xff]));
    assert.equal(fromServiceError({ code: status.INTERNAL, details: "x", metadata: junk, name: "", message: "" }, "Poll").reason, "");
  });
});

describe("real arbiter errors", { skip: !process.env.ARBITER_TARGET && "set ARBITER_TARGET to a running arbiter" }, () => {
  it("arrive typed, with the field at fault", async () => {
    const client = new ArbiterClient(process.env.ARBITER_TARGET!, { retry: FAST, logger: quiet });
    const sessionId = `errors-node-${process.pid}`;
    try {
      await assert.rejects(client.registerCall({ sessionId, callId: "bad id", tool: "book_slot" }), (e: unknown) => {
        assert.ok(e instanceof InvalidArgumentError);
        assert.equal(e.field, "call_id");
        assert.equal(e.reason, "INVALID_FIELD");
        assert.equal(e.errorDetails.domain, ERROR_DOMAIN);
        assert.equal(e.errorDetails.fieldViolations[0]?.field, "call_id");
        assert.equal(e.retryDelayMs, undefined); // retrying the same request cannot help
        assert.equal(e.codeName, "INVALID_ARGUMENT");
        return true;
      });
      await assert.rejects(client.getSession({ sessionId: `${sessionId}-none` }), (e: unknown) => {
        assert.ok(e instanceof NotFoundError);
        assert.deepEqual([e.reason, e.field], ["SESSION_NOT_FOUND", "session_id"]);
        return true;
      });
      const reg = await client.registerCall({ sessionId, callId: "fc_1", tool: "book_slot", args: { slot: "tomorrow 3pm" } }); // its key argument: a call without it is rejected
      const history = await client.getHistory({ sessionId });
      assert.equal(history.sessionId, sessionId);
      assert.deepEqual(history.entries.filter((e) => e.call).map((e) => e.call!.callId), ["fc_1"], JSON.stringify(history.entries));
      await assert.rejects(client.getHistory({ sessionId: `${sessionId}-none` }), (e: unknown) => {
        assert.ok(e instanceof NotFoundError);
        assert.deepEqual([e.reason, e.field], ["SESSION_NOT_FOUND", "session_id"]);
        return true;
      });
      await assert.rejects(client.getHistory({ sessionId: "" }), (e: unknown) => {
        assert.ok(e instanceof InvalidArgumentError);
        assert.equal(e.field, "session_id");
        return true;
      });
      await assert.rejects(client.decide({ sessionId, jobId: "job-404" }), (e: unknown) => {
        assert.ok(e instanceof NotFoundError);
        assert.deepEqual([e.reason, e.field], ["JOB_NOT_FOUND", "job_id"]);
        return true;
      });
      await assert.rejects(client.complete({ sessionId, jobId: reg.jobId, outcome: pb.Outcome.OUTCOME_COMMITTED }), (e: unknown) => {
        assert.ok(e instanceof FailedPreconditionError);
        assert.deepEqual([e.reason, e.field], ["JOB_STATE_CONFLICT", "outcome"]);
        return true;
      });
      await assert.rejects(client.configureSession({ sessionId, language: "not a tag" }), (e: unknown) => {
        assert.ok(e instanceof InvalidArgumentError);
        assert.equal(e.field, "language");
        return true;
      });
      const conf = await client.configureSession({ sessionId, language: "es", responseScheduling: true });
      assert.deepEqual([conf.language, conf.responseScheduling], ["es", true]);
      // Issue 25: the time zone and the agent's reading, and their errors.
      await assert.rejects(client.configureSession({ sessionId, timeZone: "Mars/Olympus" }), (e: unknown) => {
        assert.ok(e instanceof InvalidArgumentError);
        assert.equal(e.field, "time_zone");
        return true;
      });
      assert.equal((await client.configureSession({ sessionId, timeZone: "Europe/Paris" })).timeZone, "Europe/Paris");
      await assert.rejects(client.reportTranscript({ sessionId, text: "leave it", reading: { intent: "stop", confidence: 1.5, source: "" } }), (e: unknown) => {
        assert.ok(e instanceof InvalidArgumentError);
        assert.equal(e.field, "reading.confidence");
        return true;
      });
      const tr = await client.reportTranscript({ sessionId, text: "Let's leave it for now.", reading: { intent: "stop", confidence: 0.9, source: "nlu" } });
      assert.deepEqual([tr.intent, tr.cancelledJobIds], ["stop", [reg.jobId]]);
      await client.closeSession({ sessionId });
    } finally {
      client.close();
    }
  });

  it("refuse args nested past 16 levels, answer a result nested past them with result_omitted; 16 levels come back and decode", async () => {
    // @grpc/grpc-js and ts-proto refuse a Struct from about 40 levels ("recursion limit").
    const nested = (n: number, leaf: Record<string, unknown>): Record<string, unknown> => {
      let v = leaf;
      for (let i = 1; i < n; i++) v = { a: v };
      return v;
    };
    const client = new ArbiterClient(process.env.ARBITER_TARGET!, { retry: FAST, logger: quiet });
    const sessionId = `nesting-node-${process.pid}`;
    const invalid = (field: string) => (e: unknown) => {
      assert.ok(e instanceof InvalidArgumentError);
      assert.equal(e.field, field);
      return true;
    };
    try {
      await assert.rejects(
        client.registerCall({ sessionId, callId: "fc_1", tool: "book_slot", args: { ...nested(17, { x: 1 }), slot: "tomorrow 3pm" } }),
        invalid("args"),
      );
      const reg = await client.registerCall({ sessionId, callId: "fc_2", tool: "get_weather", args: nested(16, { city: "Lyon" }) });
      assert.equal(reg.disposition, pb.Disposition.DISPOSITION_EXECUTE);
      // Issue 25: every call is answered whatever its result.
      const reg3 = await client.registerCall({ sessionId, callId: "fc_3", tool: "get_weather", args: { city: "Paris" } });
      const omitted = await client.complete({ sessionId, jobId: reg3.jobId, outcome: pb.Outcome.OUTCOME_RESULT, result: nested(17, { t: 20 }) });
      const p3 = omitted.effects?.responses.find((r) => r.callId === "fc_3")?.payload;
      assert.deepEqual([p3?.status, p3?.result_omitted?.reason, p3?.result_omitted?.max_depth, p3?.result], ["ok", "too_deep", 16, undefined]);
      const done = await client.complete({ sessionId, jobId: reg.jobId, outcome: pb.Outcome.OUTCOME_RESULT, result: nested(16, { t: 20 }) });
      const resp = done.effects?.responses.find((r) => r.callId === "fc_2");
      assert.deepEqual(resp?.payload?.result, nested(16, { t: 20 }));
      await client.closeSession({ sessionId });
    } finally {
      client.close();
    }
  });
});

// The first copied agent of issue 22, against the real arbiter (the booking policy of
// testdata/tools/booking.yaml: grace 1.5 s, transcript_timeout 3 s): the model session
// has no input transcription, so the user's "yes, thanks" during the prepare arrives as
// voice activity alone. The arbiter cannot tell it from a stop and cancels the job when
// no transcript comes; the adapter warns once, on the logger, that none ever arrived.
describe("real arbiter, input transcription off", { skip: !process.env.ARBITER_TARGET && "set ARBITER_TARGET to a running arbiter" }, () => {
  it("warns once on the logger, and the job is cancelled for want of a transcript", async () => {
    const client = new ArbiterClient(process.env.ARBITER_TARGET!, { retry: FAST, logger: quiet });
    const warnings: string[] = [];
    const actions: Action[] = [];
    const sessionId = `no-transcript-node-${process.pid}`;
    const adapter = new LiveAdapter(client, sessionId, (a) => void actions.push(a), {
      behaviors: { book_slot: "NON_BLOCKING" },
      logger: { warn: (m: string) => void warnings.push(m), error() {} },
      transcriptWarningMs: 500,
    });
    try {
      await adapter.reconnect("c1");
      await adapter.feed(callMessage());
      const job = actions.find((a) => a.type === "execute");
      assert.ok(job && job.type === "execute" && job.sideEffect, JSON.stringify(actions));
      await adapter.feed({ voiceActivity: { voiceActivityType: "ACTIVITY_START" } }); // "yes, thanks", never transcribed
      await adapter.feed({ voiceActivity: { voiceActivityType: "ACTIVITY_END" } });
      await adapter.prepared(job.jobId);
      for (let t = 0; t < 15_000 && !actions.some((a) => a.type === "cancel" || a.type === "commit"); t += 50) await sleep(50);
      assert.deepEqual(actions.filter((a) => a.type === "cancel" || a.type === "commit").map((a) => a.type), ["cancel"], JSON.stringify(actions));
      assert.equal(warnings.filter((w) => w.includes("no input transcript")).length, 1, warnings.join("\n"));
      assert.match(warnings[0], new RegExp(`session ${sessionId}: `));
    } finally {
      await adapter.close(1000);
      client.close();
    }
  });
});
