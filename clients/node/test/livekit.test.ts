// Unit tests of the LiveKit integration's provider taps (issue 21), against a scripted
// in-process arbiter, with the providers' connections stubbed where the taps wrap them
// (@google/genai's Live.connect, the OpenAI plugin's createWsConn): what the model ends
// up holding is one answer per id and each note as often as Arbiter handed it out,
// whatever the plugins re-send. This file stubs those prototypes before the taps are
// installed: node --test runs it in a process of its own.
import { Server, ServerCredentials } from "@grpc/grpc-js";
import { llm, voice } from "@livekit/agents";
import { EventEmitter } from "node:events";
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { ArbiterClient, pb } from "../src/index.js";
import { LiveKitArbiter } from "../src/livekit.js";
import { Script } from "./script.js";

const quiet = { warn() {}, error() {} };
const NOTE = "System note: the booking for tomorrow at 3pm is confirmed (reference R-1).";

let script: Script, server: Server, client: ArbiterClient;
before(async () => {
  script = new Script();
  server = new Server();
  server.addService(pb.ArbiterServiceService, script.impl() as any);
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", ServerCredentials.createInsecure(), (e, p) => (e ? reject(e) : resolve(p))),
  );
  client = new ArbiterClient(`127.0.0.1:${port}`, { logger: quiet });
});
after(() => {
  client.close();
  server.forceShutdown();
});

/** A stand-in AgentSession: what the integration uses of it. */
function fakeSession() {
  let ctx = llm.ChatContext.empty();
  const agent = {
    get chatCtx() {
      return ctx;
    },
    async updateChatCtx(c: llm.ChatContext) {
      ctx = c;
    },
  };
  return { currentAgent: agent, on() {}, generateReply() {} } as unknown as voice.AgentSession;
}

const bookSlot = () => llm.tool({ description: "Book.", parameters: { type: "object", properties: { slot: { type: "string" } } }, execute: async () => "never" });
const backend = { prepare: async () => undefined, commit: async () => ({}), release: () => undefined };

/** Hands the integration one note (RegisterCall's effects carry it). */
async function handNote(lk: LiveKitArbiter, callId: string): Promise<void> {
  script.register = (r) =>
    pb.RegisterCallResponse.fromPartial({
      callId: r.callId,
      disposition: pb.Disposition.DISPOSITION_DUPLICATE,
      jobId: "job-1",
      effects: { notes: [{ jobId: "job-1", text: NOTE, deliver: pb.Delivery.DELIVERY_NOW, via: pb.NoteVia.NOTE_VIA_USER_TURN }] },
    });
  await lk.core.functionCall({ id: callId, name: "book_slot", args: { slot: "tomorrow 3pm" } });
  await sleep(20); // the note goes through the chat context
}

describe("LiveKit Google tap", () => {
  it("a note the plugin re-sends (alone, as a part of a two-part turn, after a resumption) is dropped; a new context gets it once", async () => {
    const genai: any = await import("@google/genai");
    const sent: any[] = [];
    genai.Live.prototype.connect = async function (params: any) {
      params.callbacks?.onopen?.();
      return {
        sendToolResponse: (p: any) => sent.push(["tool", p]),
        sendClientContent: (p: any) => sent.push(["content", p]),
        sendRealtimeInput: (p: any) => sent.push(["realtime", p]),
        close() {},
      };
    };
    const lk = await LiveKitArbiter.create(client, "lk-google-1", { provider: "google", watch: false, logger: quiet });
    lk.attach(fakeSession());
    lk.tool("book_slot", bookSlot(), backend);
    const connect = (handle?: string) => {
      let session!: Promise<any>;
      const model = lk.model({ session: () => ((session = genai.Live.prototype.connect.call({}, { config: handle ? { sessionResumption: { handle } } : {}, callbacks: {} })), {}) } as any);
      model.session();
      return session;
    };
    const s1 = await connect();
    await handNote(lk, "fc_1");
    const note = { role: "user", parts: [{ text: NOTE }] };
    s1.sendClientContent({ turns: [note], turnComplete: false }); // the integration's own update: goes
    s1.sendClientContent({ turns: [note], turnComplete: false }); // the diff again: dropped
    s1.sendClientContent({ turns: [{ role: "user", parts: [{ text: "Hello?" }, { text: NOTE }] }], turnComplete: false }); // reordered, two parts
    s1.sendRealtimeInput({ text: NOTE }); // the note as realtime text: dropped
    const s2 = await connect("fake-session-1"); // resumed: the same model context
    s2.sendClientContent({ turns: [{ role: "user", parts: [{ text: "Book it." }] }, note], turnComplete: false });
    const s3 = await connect(); // a new session: history, once
    s3.sendClientContent({ turns: [note], turnComplete: false });
    s3.sendClientContent({ turns: [note], turnComplete: false });
    const notes = sent.filter(([k]) => k === "content").map(([, p]) => p.turns.map((t: any) => t.parts.map((x: any) => x.text).join("|")));
    assert.deepEqual(notes, [[NOTE], [["Hello?"].join("|")], ["Book it."], [NOTE]]);
    assert.equal(sent.filter(([k]) => k === "realtime").length, 0);
    await lk.close(300);
  });
});

describe("LiveKit OpenAI tap", () => {
  it("each connection is a Connect; a function_call_output moved by delete + create goes; a second answer held at once does not; the plugin's own delete of a call item is no withdrawal", async () => {
    const plugin: any = await import("@livekit/agents-plugin-openai");
    const wire: any[] = [];
    plugin.realtime.RealtimeSession.prototype.createWsConn = async function () {
      const ws: any = new EventEmitter();
      ws.send = (d: string) => wire.push(JSON.parse(d));
      ws.close = () => undefined;
      return ws;
    };
    const lk = await LiveKitArbiter.create(client, "lk-openai-1", { provider: "openai", watch: false, logger: quiet });
    lk.attach(fakeSession());
    lk.tool("book_slot", bookSlot(), backend);
    let server!: (ev: any) => void;
    let ws!: Promise<any>;
    const model = lk.model({
      session: () => {
        ws = plugin.realtime.RealtimeSession.prototype.createWsConn.call({});
        return { on: (name: string, cb: (ev: any) => void) => name === "openai_server_event_received" && (server = cb) };
      },
    } as any);
    model.session();
    const sock = await ws;
    await sleep(20);
    // The plugin reads session.created before its event handler is on: the tap reports
    // the connection itself.
    assert.deepEqual(script.sent("Connect").filter((r) => r.sessionId === "lk-openai-1").map((r) => r.connectionId), ["lk-1"]);
    script.register = (r) => pb.RegisterCallResponse.fromPartial({ callId: r.callId, disposition: pb.Disposition.DISPOSITION_EXECUTE, jobId: "job-1", sideEffect: true });
    server({ type: "response.output_item.done", item: { id: "item_fc", type: "function_call", call_id: "call_1", name: "book_slot", arguments: '{"slot":"x"}' } });
    await sleep(20);
    const out = (id: string) => JSON.stringify({ type: "conversation.item.create", item: { id, type: "function_call_output", call_id: "call_1", output: '{"status":"committed"}' } });
    sock.send(out("out_1"));
    sock.send(JSON.stringify({ type: "conversation.item.delete", item_id: "out_1" }));
    sock.send(out("out_1")); // the move's create: goes
    sock.send(out("out_2")); // a second answer while one is held: dropped
    sock.send(out("out_1")); // the same item again, not deleted: dropped
    assert.deepEqual(
      wire.map((e) => `${e.type} ${e.item?.id ?? e.item_id}`),
      ["conversation.item.create out_1", "conversation.item.delete out_1", "conversation.item.create out_1"],
    );
    // The plugin deletes its own function_call item (a move): the echo is no withdrawal.
    sock.send(JSON.stringify({ type: "conversation.item.delete", item_id: "item_fc" }));
    server({ type: "conversation.item.deleted", item_id: "item_fc" });
    await sleep(20);
    assert.deepEqual(script.sent("ReportToolCallCancellation"), []);
    // A server's delete the client did not ask for is a withdrawal.
    server({ type: "conversation.item.deleted", item_id: "item_fc" });
    await sleep(20);
    assert.deepEqual(script.sent("ReportToolCallCancellation").map((r) => r.callIds), [["call_1"]]);
    await lk.close(300);
  });
});
