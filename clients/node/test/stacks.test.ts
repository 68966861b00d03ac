// Unit tests of the provider translators and the LiveKit integration against a scripted
// in-process arbiter: RealtimeAdapter (OpenAI Realtime events in, client events out),
// LiveAdapter.deliver, the core's utterance ids / raw_args / PROVIDER_TIMEOUT, and the
// LiveKit tool wrapper (StopResponse for every execute, answers through the chat
// context, none for a dead id, the abort signal honoured). The wire-level runs of the
// real SDKs are clients/e2e/wire.sh.
import { Server, ServerCredentials } from "@grpc/grpc-js";
import { llm, voice } from "@livekit/agents";
import assert from "node:assert/strict";
import { afterEach, beforeEach, describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { ArbiterClient, LiveAdapter, RealtimeAdapter, bargeIn, pb, type Action } from "../src/index.js";
import { Script } from "./script.js";
import { LiveKitArbiter } from "../src/livekit.js";

const quiet = { warn() {}, error() {} };

let script: Script, server: Server, client: ArbiterClient;
beforeEach(async () => {
  script = new Script();
  server = new Server();
  server.addService(pb.ArbiterServiceService, script.impl() as any);
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", ServerCredentials.createInsecure(), (e, p) => (e ? reject(e) : resolve(p))),
  );
  client = new ArbiterClient(`127.0.0.1:${port}`, { logger: quiet });
});
afterEach(async () => {
  client.close();
  server.forceShutdown();
});

const answered = (callId: string) =>
  pb.Effects.fromPartial({ responses: [{ callId, name: "book_slot", jobId: "job-1", payload: { status: "cancelled" } }] });
const dead = (callId: string) => pb.Effects.fromPartial({ skips: [{ callId, name: "book_slot", reason: "abandoned", jobId: "job-1" }] });

describe("RealtimeAdapter (OpenAI Realtime)", () => {
  it("maps server events to the core: utterance ids, one RegisterCall per call id (behavior: the policy's), raw_args, interrupted, deleted items", async () => {
    const rt = new RealtimeAdapter(client, "s1", () => undefined, { watch: false, logger: quiet });
    const item = { id: "item_9", type: "function_call", call_id: "call_1", name: "book_slot", arguments: '{"slot":"tomorrow 3pm"}' };
    await Promise.all([
      rt.feed({ type: "session.created", session: { id: "sess_1" } }),
      rt.feed({ type: "input_audio_buffer.speech_started", item_id: "item_1" }),
      rt.feed({ type: "input_audio_buffer.speech_stopped", item_id: "item_1" }),
      rt.feed({ type: "conversation.item.input_audio_transcription.completed", item_id: "item_1", transcript: "Book it." }),
      rt.feed({ type: "response.output_item.added", item: { ...item, arguments: "" } }),
      rt.feed({ type: "response.function_call_arguments.done", item_id: "item_9", call_id: "call_1", arguments: item.arguments }),
      rt.feed({ type: "response.output_item.done", item }),
      rt.feed({ type: "response.function_call_arguments.done", call_id: "call_2", name: "book_slot", arguments: '{"slot": tomorrow' }),
      rt.feed({ type: "response.output_audio.delta", delta: "AAAA" }),
      rt.feed({ type: "response.output_audio_transcript.delta", delta: "Booking" }),
      rt.feed({ type: "response.done", response: { status: "cancelled", status_details: { type: "cancelled", reason: "turn_detected" } } }),
      rt.feed({ type: "conversation.item.deleted", item_id: "item_9" }),
    ]);
    assert.deepEqual(script.sent("Connect").map((r) => r.connectionId), ["sess_1"]);
    const speech = script.sent("ReportSpeech").map((r) => [pb.speechEventToJSON(r.event), r.utteranceId]);
    assert.deepEqual(speech, [
      ["SPEECH_EVENT_USER_ACTIVITY_START", "item_1"],
      ["SPEECH_EVENT_USER_ACTIVITY_END", "item_1"],
      ["SPEECH_EVENT_MODEL_OUTPUT_START", ""],
      ["SPEECH_EVENT_INTERRUPTED", ""],
    ]);
    const tr = script.sent("ReportTranscript");
    assert.deepEqual(tr.map((r) => [r.text, r.utteranceId, r.role]), [["Book it.", "item_1", pb.Role.ROLE_USER], ["Booking", "", pb.Role.ROLE_MODEL]]);
    const calls = script.sent("RegisterCall");
    assert.equal(calls.length, 2, "one RegisterCall per call id");
    // An OpenAI call carries no behavior: the tool policy's decides (issue 21).
    assert.deepEqual([calls[0].callId, calls[0].args, calls[0].behavior, calls[0].rawArgs], ["call_1", { slot: "tomorrow 3pm" }, pb.Behavior.BEHAVIOR_UNSPECIFIED, ""]);
    assert.deepEqual([calls[1].callId, calls[1].args, calls[1].rawArgs], ["call_2", {}, '{"slot": tomorrow'], "unreadable arguments go as raw_args, never as {}");
    assert.deepEqual(script.sent("ReportToolCallCancellation").map((r) => [r.callIds, r.reason]), [[["call_1"], pb.CancellationReason.CANCELLATION_REASON_WITHDRAWN]]);
    await rt.close(300); // the scripted Decide never decides
  });

  it("a response cut off by barge-in is interrupted: turn_detected, or the client's cancel after speech started; a client cancel with no speech ends the turn", async () => {
    const rt = new RealtimeAdapter(client, "s5", () => undefined, { watch: false, logger: quiet, connectOnSessionCreated: false });
    const cancelled = (reason: string) => ({ type: "response.done", response: { status: "cancelled", status_details: { type: "cancelled", reason } } });
    await Promise.all([
      rt.feed({ type: "response.created", response: { id: "resp_1" } }),
      rt.feed({ type: "response.output_item.done", item: { id: "item_2", type: "function_call", call_id: "call_end", name: "end_call", arguments: "{}" } }),
      rt.feed(cancelled("client_cancelled")), // no speech: the client's own reasons
      rt.feed({ type: "response.created", response: { id: "resp_2" } }),
      rt.feed({ type: "input_audio_buffer.speech_started", item_id: "item_3" }),
      rt.feed(cancelled("client_cancelled")), // for the user's speech: barge-in
      rt.feed({ type: "response.created", response: { id: "resp_3" } }),
      rt.feed(cancelled("turn_detected")),
    ]);
    const speech = script.sent("ReportSpeech").map((r) => pb.speechEventToJSON(r.event));
    assert.deepEqual(speech, [
      "SPEECH_EVENT_MODEL_GENERATION_COMPLETE",
      "SPEECH_EVENT_MODEL_TURN_COMPLETE",
      "SPEECH_EVENT_USER_ACTIVITY_START",
      "SPEECH_EVENT_INTERRUPTED",
      "SPEECH_EVENT_INTERRUPTED",
    ]);
    assert.equal(script.sent("RegisterCall")[0].behavior, pb.Behavior.BEHAVIOR_UNSPECIFIED, "the policy's BLOCKING abandons a call of a cut-off response");
    assert.deepEqual([bargeIn("cancelled", "turn_detected", false), bargeIn("cancelled", "client_cancelled", false), bargeIn("completed", undefined, true)], [true, false, false]);
    await rt.close(300);
  });

  it("the client's own delete is not a withdrawal; tool_choice and a call's business key reach RegisterCall", async () => {
    const rt = new RealtimeAdapter(client, "s6", () => undefined, {
      watch: false,
      logger: quiet,
      connectOnSessionCreated: false,
      resolveCall: (c) => ({ ...c, businessKey: `key-${c.id}` }),
    });
    const item = { id: "item_9", type: "function_call", call_id: "call_1", name: "book_slot", arguments: "{}" };
    await rt.feed({ type: "response.output_item.done", item });
    rt.sent({ type: "conversation.item.delete", item_id: "item_9" }); // LiveKit moves the item
    await rt.feed({ type: "conversation.item.deleted", item_id: "item_9" });
    assert.deepEqual(script.sent("ReportToolCallCancellation"), [], "a move is no withdrawal");
    await rt.feed({ type: "session.updated", session: { tool_choice: "none" } });
    await rt.feed({ type: "response.output_item.done", item: { ...item, id: "item_10", call_id: "call_2" } });
    const calls = script.sent("RegisterCall");
    assert.deepEqual(calls.map((r) => [r.callId, r.businessKey, r.toolChoice]), [
      ["call_1", "key-call_1", pb.ToolChoice.TOOL_CHOICE_AUTO],
      ["call_2", "key-call_2", pb.ToolChoice.TOOL_CHOICE_NONE],
    ]);
    await rt.close(300);
  });

  it("delivers a response as a function_call_output and asks for a response once the open one is done", async () => {
    const sent: any[] = [];
    const rt = new RealtimeAdapter(client, "s2", () => undefined, { watch: false, logger: quiet, connectOnSessionCreated: false });
    await rt.feed({ type: "response.created", response: { id: "resp_1" } });
    const a: Action = { type: "sendFunctionResponse", id: "call_1", name: "book_slot", payload: { status: "cancelled" }, jobId: "job-1", scheduling: null, willContinue: false, seq: 1 };
    assert.equal(await rt.deliver(a, (e) => sent.push(e)), true);
    assert.deepEqual([...sent], [{ type: "conversation.item.create", item: { type: "function_call_output", call_id: "call_1", output: '{"status":"cancelled"}' } }]);
    await rt.deliver({ type: "sendNote", text: "System note: x.", when: "now", jobId: "job-1", why: "", seq: 2 }, (e) => sent.push(e));
    assert.equal(sent.filter((e) => e.type === "response.create").length, 0, "no response.create while a response is open");
    await rt.feed({ type: "response.done", response: { status: "completed" } });
    assert.deepEqual(sent.map((e) => e.type), ["conversation.item.create", "conversation.item.create", "response.create"]);
    assert.deepEqual((sent[1] as any).item, { type: "message", role: "user", content: [{ type: "input_text", text: "System note: x." }] });
    assert.equal(await rt.deliver({ type: "commit", jobId: "job-1", reason: "" }, (e) => sent.push(e)), false);
    await rt.close();
  });
});

describe("SessionCore and LiveAdapter additions", () => {
  it("reports a provider timeout as CANCELLATION_REASON_PROVIDER_TIMEOUT", async () => {
    const core = new LiveAdapter(client, "s3", () => undefined, { watch: false, logger: quiet });
    await core.toolCallCancellation(["fc_1"], "provider_timeout");
    assert.equal(script.sent("ReportToolCallCancellation")[0].reason, pb.CancellationReason.CANCELLATION_REASON_PROVIDER_TIMEOUT);
    await core.close();
  });

  it("LiveAdapter.deliver: a tool response with its scheduling; a when_idle note only after the turn completes", async () => {
    const calls: [string, any][] = [];
    const session = { sendToolResponse: (p: any) => calls.push(["tool", p]), sendClientContent: (p: any) => calls.push(["content", p]) };
    const live = new LiveAdapter(client, "s4", () => undefined, { watch: false, logger: quiet });
    await live.deliver({ type: "sendFunctionResponse", id: "fc_1", name: "book_slot", payload: { status: "cancelled" }, jobId: "job-1", scheduling: "WHEN_IDLE", willContinue: false, seq: 1 }, session);
    assert.deepEqual(calls[0], ["tool", { functionResponses: [{ id: "fc_1", name: "book_slot", response: { status: "cancelled" }, scheduling: "WHEN_IDLE" }] }]);
    void live.feed({ serverContent: { modelTurn: { parts: [{ inlineData: { mimeType: "audio/pcm" } }] } } });
    await live.deliver({ type: "sendNote", text: "System note: y.", when: "when_idle", jobId: "job-1", why: "", seq: 2 }, session);
    await sleep(20);
    assert.equal(calls.length, 1, "the note waits while the model speaks");
    void live.feed({ serverContent: { turnComplete: true } });
    await sleep(20);
    assert.deepEqual(calls[1], ["content", { turns: [{ role: "user", parts: [{ text: "System note: y." }] }], turnComplete: true }]);
    await live.close();
  });
});

/** A stand-in AgentSession: what the integration uses of it. */
function fakeSession() {
  const updates: llm.ChatContext[] = [];
  let ctx = llm.ChatContext.empty();
  const agent = {
    get chatCtx() {
      return ctx;
    },
    async updateChatCtx(c: llm.ChatContext) {
      ctx = c;
      updates.push(c);
    },
  };
  const replies: unknown[] = [];
  const session = { currentAgent: agent, on() {}, generateReply: (o: unknown) => replies.push(o) };
  return { session: session as unknown as voice.AgentSession, updates, replies };
}

const outputs = (updates: llm.ChatContext[]) =>
  updates.at(-1)?.items.filter((i) => i.type === "function_call_output").map((i: any) => [i.callId, JSON.parse(i.output).status]) ?? [];

describe("LiveKitArbiter", () => {
  const backend = { prepare: async () => undefined, commit: async () => ({}), release: () => undefined };
  const bookSlot = () => llm.tool({ description: "Book.", parameters: { type: "object", properties: { slot: { type: "string" } } }, execute: async () => "never" });

  it("a dead id: execute throws StopResponse and nothing is answered", async () => {
    script.register = (r) => pb.RegisterCallResponse.fromPartial({ callId: r.callId, disposition: pb.Disposition.DISPOSITION_DUPLICATE, jobId: "job-1", effects: dead(r.callId) });
    const lk = await LiveKitArbiter.create(client, "lk1", { provider: "google", watch: false, logger: quiet });
    const f = fakeSession();
    lk.attach(f.session);
    const tool = lk.tool("book_slot", bookSlot(), backend);
    const run = (tool as any).execute({ slot: "x" }, { toolCallId: "fc_dead", abortSignal: new AbortController().signal });
    await assert.rejects(run, (e: unknown) => e instanceof voice.StopResponse);
    assert.equal(f.updates.length, 0, "no function output for a dead id");
    await lk.close();
  });

  it("a live id: the answer goes through the chat context once, execute ends with StopResponse", async () => {
    script.register = (r) => pb.RegisterCallResponse.fromPartial({ callId: r.callId, disposition: pb.Disposition.DISPOSITION_DUPLICATE, jobId: "job-1", effects: answered(r.callId) });
    const lk = await LiveKitArbiter.create(client, "lk2", { provider: "openai", watch: false, logger: quiet });
    const f = fakeSession();
    lk.attach(f.session);
    const tool = lk.tool("book_slot", bookSlot(), backend);
    const run = (tool as any).execute({ slot: "x" }, { toolCallId: "call_live", abortSignal: new AbortController().signal });
    await assert.rejects(run, (e: unknown) => e instanceof voice.StopResponse, "LiveKit never sends the output itself");
    await sleep(20);
    assert.deepEqual(outputs(f.updates), [["call_live", "cancelled"]]);
    assert.equal(f.replies.length, 1, "OpenAI: a reply is asked for after the output");
    assert.equal(lk._mayAnswer("call_live"), true, "the first output on the wire passes the guard");
    assert.equal(lk._mayAnswer("call_live"), false, "a second one is dropped");
    await lk.close();
  });

  it("LiveKit's abort (an interruption) ends execute at once with StopResponse; the job is left to Arbiter", async () => {
    let answer!: () => void;
    const later = new Promise<void>((r) => (answer = r));
    script.register = (r) => pb.RegisterCallResponse.fromPartial({ callId: r.callId, disposition: pb.Disposition.DISPOSITION_EXECUTE, jobId: "job-1", sideEffect: true });
    script.speech = pb.Effects.fromPartial({});
    const lk = await LiveKitArbiter.create(client, "lk3", { provider: "openai", watch: false, logger: quiet });
    const f = fakeSession();
    lk.attach(f.session);
    const tool = lk.tool("book_slot", bookSlot(), { ...backend, prepare: () => later });
    const abort = new AbortController();
    const run = (tool as any).execute({ slot: "x" }, { toolCallId: "call_int", abortSignal: abort.signal });
    await sleep(50);
    abort.abort();
    await assert.rejects(run, (e: unknown) => e instanceof voice.StopResponse);
    assert.equal(f.updates.length, 0);
    // The job is decided later (here: the session closes, the job is released and
    // completed); nothing was answered by LiveKit meanwhile.
    answer();
    await lk.close(500);
  });

  it("refuses zod parameters (LiveKit would answer a failed validation itself)", async () => {
    const lk = await LiveKitArbiter.create(client, "lk4", { provider: "google", watch: false, logger: quiet });
    const { z } = await import("zod");
    assert.throws(() => lk.tool("book_slot", llm.tool({ description: "Book.", parameters: z.object({ slot: z.string() }), execute: async () => "x" }), backend), /JSON schema/);
    await lk.close();
  });
});
