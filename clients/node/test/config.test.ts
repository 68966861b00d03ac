// Issue 15, retries and idempotency: the packaged service config is clients/service-config.json,
// the channel retries by it (a scripted in-process server fails attempts and records what
// each carried), event RPCs carry one event id across their retries and the outbox's
// redeliveries, the outbox honours RetryInfo, and (with ARBITER_TARGET, a real arbiter) a retried ReportTranscript is
// applied once: the retry answers `repeat` and the history holds one transcript.
import { Metadata, Server, ServerCredentials, status, type sendUnaryData, type ServerUnaryCall } from "@grpc/grpc-js";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { ErrorInfo, RetryInfo } from "../src/gen/google/rpc/error_details.js";
import { Status } from "../src/gen/google/rpc/status.js";
import { ArbiterClient, CHANNEL_SERVICE_CONFIG, ERROR_DOMAIN, LiveAdapter, SERVICE_CONFIG, UnavailableError, pb } from "../src/index.js";

const quiet = { warn() {}, error() {} };

it("the packaged service config equals clients/service-config.json", () => {
  // build/test -> clients/service-config.json
  const file = JSON.parse(readFileSync(join(import.meta.dirname, "..", "..", "..", "service-config.json"), "utf8"));
  assert.deepEqual(SERVICE_CONFIG, file);
  assert.deepEqual(CHANNEL_SERVICE_CONFIG.loadBalancingConfig, [{ round_robin: {} }]);
  assert.deepEqual(CHANNEL_SERVICE_CONFIG.methodConfig, file.methodConfig);
});

/** A scripted server: each RPC fails with the codes queued for it, then answers; every request is recorded. */
async function scripted(fail: Record<string, status[]>) {
  const seen: [string, any][] = [];
  const h = (name: string, answer: (req: any) => any) => (call: ServerUnaryCall<any, any>, cb: sendUnaryData<any>) => {
    seen.push([name, call.request]);
    const code = fail[name]?.shift();
    if (code !== undefined) return cb({ code, details: `${name}: scripted failure` });
    cb(null, answer(call.request));
  };
  const server = new Server();
  server.addService(pb.ArbiterServiceService, {
    reportTranscript: h("ReportTranscript", () => pb.ReportTranscriptResponse.fromPartial({ intent: "other" })),
    reportSpeech: h("ReportSpeech", (r) => pb.ReportSpeechResponse.fromPartial({ repeat: r.eventId === "seen" })),
    registerCall: h("RegisterCall", (r) => pb.RegisterCallResponse.fromPartial({ callId: r.callId || "minted", disposition: pb.Disposition.DISPOSITION_REJECT })),
    decide: h("Decide", (r) => pb.DecideResponse.fromPartial({ jobId: r.jobId, decision: pb.Decision.DECISION_CANCEL })),
    connect: h("Connect", () => pb.ConnectResponse.fromPartial({ epoch: "abc123", state: pb.SessionState.SESSION_STATE_NEW })),
  } as any);
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
  );
  const client = new ArbiterClient(`127.0.0.1:${port}`, { timeoutMs: 3000, retry: { initialBackoffMs: 10, maxBackoffMs: 20 }, logger: quiet });
  const sent = (name: string) => seen.filter(([n]) => n === name).map(([, r]) => r);
  return { server, client, sent, close: () => (client.close(), server.forceShutdown()) };
}

describe("the channel retries by the service config", () => {
  it("an event RPC on UNAVAILABLE: again, with the same event id", async () => {
    const s = await scripted({ ReportTranscript: [status.UNAVAILABLE, status.ABORTED] });
    try {
      const res = await s.client.reportTranscript({ sessionId: "s1", role: pb.Role.ROLE_USER, text: "stop" });
      assert.equal(res.intent, "other");
      const ids = s.sent("ReportTranscript").map((r) => r.eventId);
      assert.equal(ids.length, 3);
      assert.match(ids[0], /^[0-9a-f]{32}$/);
      assert.deepEqual(new Set(ids).size, 1);
    } finally {
      s.close();
    }
  });

  it("not past the config's attempts (4 for the event RPCs), and not on a code it does not list", async () => {
    const s = await scripted({ ReportTranscript: Array(10).fill(status.UNAVAILABLE), ReportSpeech: [status.DEADLINE_EXCEEDED] });
    try {
      await assert.rejects(s.client.reportTranscript({ sessionId: "s1", text: "x" }), UnavailableError);
      assert.equal(s.sent("ReportTranscript").length, 4);
      await assert.rejects(s.client.reportSpeech({ sessionId: "s1", eventId: "e1" }), (e: any) => e.code === status.DEADLINE_EXCEEDED);
      assert.equal(s.sent("ReportSpeech").length, 1);
    } finally {
      s.close();
    }
  });

  it("a RegisterCall without a call id is sent once (a retry would mint a second id); with one it is retried", async () => {
    const s = await scripted({ RegisterCall: [status.UNAVAILABLE, status.UNAVAILABLE] });
    try {
      await assert.rejects(s.client.registerCall({ sessionId: "s1", tool: "t" }), UnavailableError);
      assert.equal(s.sent("RegisterCall").length, 1);
      const res = await s.client.registerCall({ sessionId: "s1", callId: "fc_1", tool: "t" });
      assert.equal(res.callId, "fc_1");
      assert.equal(s.sent("RegisterCall").length, 3);
    } finally {
      s.close();
    }
  });

  it("retry: false is one attempt; Decide is retried on UNAVAILABLE", async () => {
    const s = await scripted({ ReportSpeech: [status.UNAVAILABLE], Decide: [status.UNAVAILABLE, status.UNAVAILABLE] });
    try {
      await assert.rejects(s.client.reportSpeech({ sessionId: "s1" }, { retry: false }), UnavailableError);
      assert.equal(s.sent("ReportSpeech").length, 1);
      const d = await s.client.decide({ sessionId: "s1", jobId: "job-1.abc123", wait: { seconds: 1, nanos: 0 } });
      assert.equal(d.decision, pb.Decision.DECISION_CANCEL);
      assert.equal(s.sent("Decide").length, 3);
    } finally {
      s.close();
    }
  });

  it("the outbox redelivers an event with the same event id and a fresh age; a repeat answer is success", async () => {
    const s = await scripted({ ReportSpeech: [status.UNAVAILABLE, status.UNAVAILABLE] });
    try {
      const adapter = new LiveAdapter(s.client, "s1", () => undefined, { watch: false, logger: quiet });
      await adapter.reconnect("c1");
      await adapter.feed({ voiceActivity: { voiceActivityType: "ACTIVITY_START" } });
      await adapter.feed({ voiceActivity: { voiceActivityType: "ACTIVITY_END" } });
      const sent = s.sent("ReportSpeech");
      assert.equal(sent.length, 4); // START three times (one attempt each: the outbox retries), END once
      assert.equal(new Set(sent.slice(0, 3).map((r) => r.eventId)).size, 1);
      assert.notEqual(sent[3].eventId, sent[0].eventId);
      const ages = sent.slice(0, 3).map((r) => r.age.seconds * 1e9 + r.age.nanos);
      assert.ok(ages[0] < ages[1] && ages[1] < ages[2], `ages ${ages}`);
      assert.ok(sent.every((r) => r.epoch === "abc123"), "the epoch Connect returned goes with every event");
      await adapter.close(1000).catch(() => undefined);
    } finally {
      s.close();
    }
  });
});

it("the outbox waits at least RetryInfo's delay, and not at all for SERVER_DRAINING", async () => {
  const details = (reason: string, delayMs: number) => {
    const any = (type: string, value: Uint8Array) => ({ typeUrl: `type.googleapis.com/google.rpc.${type}`, value: Buffer.from(value) });
    const st = Status.encode({
      code: status.UNAVAILABLE,
      message: reason,
      details: [
        any("ErrorInfo", ErrorInfo.encode({ reason, domain: ERROR_DOMAIN, metadata: {} }).finish()),
        any("RetryInfo", RetryInfo.encode({ retryDelay: { seconds: Math.floor(delayMs / 1000), nanos: (delayMs % 1000) * 1e6 } }).finish()),
      ],
    }).finish();
    const md = new Metadata();
    md.set("grpc-status-details-bin", Buffer.from(st));
    return md;
  };
  const failures = [details("SERVER_DRAINING", 0), details("STORE_UNAVAILABLE", 700)];
  const server = new Server();
  server.addService(pb.ArbiterServiceService, {
    reportSpeech: (_call: ServerUnaryCall<any, any>, cb: sendUnaryData<any>) => {
      const md = failures.shift();
      if (md) return cb({ code: status.UNAVAILABLE, details: "scripted", metadata: md });
      cb(null, pb.ReportSpeechResponse.fromPartial({}));
    },
  } as any);
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
  );
  const log: string[] = [];
  const client = new ArbiterClient(`127.0.0.1:${port}`, { retry: { initialBackoffMs: 10, maxBackoffMs: 20 }, logger: quiet });
  const adapter = new LiveAdapter(client, "s1", () => undefined, { watch: false, logger: { warn: (m: string) => void log.push(m), error() {} } });
  try {
    await adapter.feed({ voiceActivity: { voiceActivityType: "ACTIVITY_START" } });
    const pauses = log.filter((m) => m.includes("retrying in")).map((m) => Number(/retrying in (\d+)ms/.exec(m)![1]));
    assert.deepEqual(pauses, [0, 700], log.join("\n"));
  } finally {
    await adapter.close(500).catch(() => undefined);
    client.close();
    server.forceShutdown();
  }
});

describe("a retried ReportTranscript against the real arbiter", { skip: !process.env.ARBITER_TARGET && "set ARBITER_TARGET to a running arbiter" }, () => {
  it("is applied once: the retry answers repeat, the history holds one transcript", async () => {
    const client = new ArbiterClient(process.env.ARBITER_TARGET!, { logger: quiet });
    const sessionId = `node-repeat-${process.pid}-${Date.now() % 1e8}`;
    try {
      const reg = await client.registerCall({ sessionId, callId: "fc_1", tool: "book_slot", args: { slot: "tomorrow 3pm" } });
      await client.reportSpeech({ sessionId, event: pb.SpeechEvent.SPEECH_EVENT_USER_ACTIVITY_START, eventId: "u1-start" });
      const req = { sessionId, role: pb.Role.ROLE_USER, text: "Stop, don't book it.", eventId: "u1-text" };
      const first = await client.reportTranscript(req);
      assert.equal(first.repeat, false);
      assert.deepEqual(first.cancelledJobIds, [reg.jobId]);
      const again = await client.reportTranscript(req); // what a retry after a lost answer sends
      assert.equal(again.repeat, true);
      assert.deepEqual(again.cancelledJobIds, []);
      const speechAgain = await client.reportSpeech({ sessionId, event: pb.SpeechEvent.SPEECH_EVENT_USER_ACTIVITY_START, eventId: "u1-start" });
      assert.equal(speechAgain.repeat, true);
      const history = await client.getHistory({ sessionId });
      assert.equal(history.entries.filter((e) => e.transcript).length, 1, JSON.stringify(history.entries));
      assert.equal(history.entries.filter((e) => e.speech).length, 1);
      await client.closeSession({ sessionId });
    } finally {
      client.close();
    }
  });
});


it("a job's Decide and Complete are asked again past the service config's attempts, at least RetryInfo's delay apart", async () => {
  // A store outage longer than the config's 5 attempts: Decide fails 12 times in a row
  // (two whole calls, then 2 attempts of a third), Complete 7 times (one whole call, then 2),
  // each with STORE_UNAVAILABLE's RetryInfo (here 300 ms). The job still commits and its
  // commit is reported; nothing is released.
  const unavailable = () => {
    const any = (type: string, value: Uint8Array) => ({ typeUrl: `type.googleapis.com/google.rpc.${type}`, value: Buffer.from(value) });
    const st = Status.encode({
      code: status.UNAVAILABLE,
      message: "store unavailable",
      details: [
        any("ErrorInfo", ErrorInfo.encode({ reason: "STORE_UNAVAILABLE", domain: ERROR_DOMAIN, metadata: {} }).finish()),
        any("RetryInfo", RetryInfo.encode({ retryDelay: { seconds: 0, nanos: 300e6 } }).finish()),
      ],
    }).finish();
    const md = new Metadata();
    md.set("grpc-status-details-bin", Buffer.from(st));
    return { code: status.UNAVAILABLE, details: "scripted: store unavailable", metadata: md };
  };
  const failing: Record<string, number> = { Decide: 12, Complete: 7 };
  const seen: Record<string, any[]> = { Decide: [], Complete: [] };
  const h = (name: string, answer: (req: any) => any) => (call: ServerUnaryCall<any, any>, cb: sendUnaryData<any>) => {
    if (name === "Decide" && !call.request.prepared) return; // the prepare's long-poll: parked until the core drops it
    seen[name]?.push(call.request);
    if ((failing[name] ?? 0) > 0) {
      failing[name]--;
      return cb(unavailable());
    }
    cb(null, answer(call.request));
  };
  const server = new Server();
  server.addService(pb.ArbiterServiceService, {
    registerCall: h("RegisterCall", (r) =>
      pb.RegisterCallResponse.fromPartial({ callId: r.callId, disposition: pb.Disposition.DISPOSITION_EXECUTE, jobId: "job-1", sideEffect: true })),
    decide: h("Decide", (r) => pb.DecideResponse.fromPartial({ jobId: r.jobId, decision: pb.Decision.DECISION_COMMIT })),
    complete: h("Complete", () => pb.CompleteResponse.fromPartial({})),
  } as any);
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
  );
  const log: string[] = [];
  const actions: string[] = [];
  const client = new ArbiterClient(`127.0.0.1:${port}`, { retry: { initialBackoffMs: 10, maxBackoffMs: 20 }, logger: quiet });
  const adapter = new LiveAdapter(client, "s1", (a) => void actions.push(a.type), {
    watch: false,
    decideWaitMs: 200,
    logger: { warn: (m: string) => void log.push(m), error: (m: string) => void log.push(`ERROR ${m}`) },
  });
  try {
    await adapter.feed({ toolCall: { functionCalls: [{ id: "fc_1", name: "book_slot", args: { slot: "3pm" } }] } });
    await adapter.prepared("job-1");
    for (let i = 0; i < 1000 && !actions.includes("commit") && !actions.includes("cancel"); i++) await sleep(10);
    assert.deepEqual(actions.filter((a) => a === "commit" || a === "cancel"), ["commit"], log.join("\n"));
    assert.equal(seen.Decide.length, 13); // 12 failed attempts, then the COMMIT
    await adapter.committed("job-1", { booked: true });
    assert.equal(seen.Complete.length, 8); // 7 failed attempts, then the report
    assert.deepEqual(new Set(seen.Complete.map((r) => r.outcome)), new Set([pb.Outcome.OUTCOME_COMMITTED]));
    const pauses = (rpc: string) => log.filter((m) => m.includes(`${rpc}: `)).map((m) => Number(/asking again in (\d+)ms/.exec(m)![1]));
    assert.equal(pauses("Decide").length, 2, log.join("\n"));
    assert.equal(pauses("Complete").length, 1, log.join("\n"));
    assert.ok([...pauses("Decide"), ...pauses("Complete")].every((ms) => ms >= 300), log.join("\n"));
    assert.ok(!log.some((m) => m.startsWith("ERROR")), log.join("\n"));
  } finally {
    await adapter.close(500).catch(() => undefined);
    client.close();
    server.forceShutdown();
  }
});
