/**
 * A complete voice agent: OpenAI Realtime through the openai SDK's OpenAIRealtimeWS, with
 * Arbiter's RealtimeAdapter in the event loop and one side-effecting tool, book_slot, run
 * in two phases (prepare, then commit only when the arbiter says so). Copy this file
 * whole; the BookingBackend below is the part to replace with your own API.
 *
 *   npm install openai ws @voicearbiter/arbiter-client
 *   arbiter serve --tools booking.yaml      # book_slot's policy: testdata/tools/booking.yaml
 *   sox -q -d -t raw -r 24000 -e signed -b 16 -c 1 - |
 *     OPENAI_API_KEY=... node stack-openai-realtime.js |
 *     sox -q -t raw -r 24000 -e signed -b 16 -c 1 - -d
 *
 * The user's voice comes in on stdin and the model's goes out on stdout (24 kHz, 16-bit,
 * mono PCM both ways); sox is one way to wire a microphone and a speaker, a telephony or
 * WebRTC transport another. ARBITER_TARGET names the arbiter (default 127.0.0.1:50051),
 * OPENAI_MODEL the model; the log goes to stderr.
 *
 * Input transcription is on (`audio.input.transcription`): the arbiter reads "stop" in
 * the user's words. Without it no stop can be heard, user speech during a prepare cancels
 * the job after the policy's transcript_timeout, and the adapter warns once. A call
 * carries no behavior: the tool policy's decides, and a call of a response the user cut
 * off by barge-in is dead when its tool is BLOCKING there (docs/fake-provider.md).
 *
 * The wire checks (clients/e2e/wire.sh) run `run` at the bottom of this file: the same
 * `startAgent`, for each recorded session, against `arbiter fake-provider`.
 */
import OpenAI from "openai";
import { OpenAIRealtimeWS } from "openai/realtime/ws";
import { ArbiterClient, RealtimeAdapter, type Action, type FunctionCallLike, type SessionCoreOptions } from "@voicearbiter/arbiter-client";
import { performance } from "node:perf_hooks";
import { setTimeout as sleep } from "node:timers/promises";
import { pathToFileURL } from "node:url";

/** The tool the model may call. */
const BOOK_SLOT = {
  type: "function" as const,
  name: "book_slot",
  description: "Book an appointment slot.",
  parameters: { type: "object", properties: { slot: { type: "string" } }, required: ["slot"] },
};

/** Your booking API, in two phases. */
export interface BookingBackend {
  /** Phase one, reversible: hold the slot. Stop when `signal` aborts. */
  prepare(job: { jobId: string; callId: string; args: Record<string, unknown> }, signal: AbortSignal): Promise<void>;
  /** Phase two: book it. Called only when the arbiter decided COMMIT. */
  commit(jobId: string): Promise<Record<string, unknown>>;
  /** Let go of the hold: the job was cancelled (`cancel`) or stopped during its prepare (`abortPrepare`). */
  release(jobId: string, why: "cancel" | "abortPrepare"): void;
}

/**
 * A stand-in booking API that logs each step as a JSON line: a prepare takes
 * `prepareMs`, a commit returns a reference. Replace it with yours.
 */
export class DemoBackend implements BookingBackend {
  private t0 = performance.now();
  private refs = 0;
  constructor(
    private readonly write: (line: Record<string, unknown>) => void,
    private readonly prepareMs = 4000,
    private readonly tag: Record<string, unknown> = {},
  ) {}
  /** The model session began: times count from now. */
  start(): void {
    this.t0 = performance.now();
  }
  private log(out: string, fields: Record<string, unknown>): void {
    this.write({ out, t_ms: Math.round(performance.now() - this.t0), ...this.tag, ...fields });
  }
  async prepare(job: { jobId: string; callId: string }, signal: AbortSignal): Promise<void> {
    this.log("execute", { job_id: job.jobId, call_id: job.callId });
    await sleep(this.prepareMs, undefined, { signal });
  }
  async commit(jobId: string): Promise<Record<string, unknown>> {
    this.log("commit", { job_id: jobId });
    return { reference: `R-${++this.refs}` };
  }
  release(jobId: string, why: "cancel" | "abortPrepare"): void {
    this.log(why === "cancel" ? "cancel" : "abort_prepare", { job_id: jobId });
  }
}

/** A function the model may call, as an OpenAI Realtime session declares it. */
export interface Tool {
  type: "function";
  name: string;
  description: string;
  parameters: unknown;
}

export interface AgentOptions {
  client: ArbiterClient;
  /** The arbiter session: one per conversation (it goes on across reconnects). */
  sessionId: string;
  openai: OpenAI;
  model: string;
  backend: BookingBackend;
  /** The functions to declare; default book_slot alone. */
  tools?: Tool[];
  /** Actions of your other tools (book_slot's two phases are below): return true for the ones it took. */
  handle?: (a: Action, arbiter: RealtimeAdapter) => boolean;
  /** The conversation's language (ISO 639-1 for the transcription; the stop words the arbiter listens for). */
  language?: string;
  /** What the app knows of a call before it is registered: its business key, the tool choice it was made under. */
  resolveCall?: (call: FunctionCallLike) => FunctionCallLike;
  /** The conversation's IANA time zone: how the arbiter reads "tomorrow" and "3pm" in business keys. */
  timeZone?: string;
  /** Your own reading of the user's final words (your NLU), sent with them. */
  readTranscript?: SessionCoreOptions["readTranscript"];
  /**
   * The server closed the socket: connect again? (OpenAI has no resumption: a new
   * Realtime session; the arbiter session goes on, and calls of the closed connection
   * die at its Connect.) Default: no.
   */
  reconnect?: (close: { code: number; reason: string }) => boolean;
  /** Each server event, after the adapter saw it (the model's audio is in them). */
  onEvent?: (ev: { type: string; [field: string]: any }) => void;
  /** The session was created (its first event). */
  onOpen?: () => void;
}

/**
 * Opens the Realtime session with Arbiter in its event loop (and a new one when
 * `reconnect` says so). `rt` is the connection whose session is set up now; `done`
 * resolves with the last close, once the socket has closed and the arbiter session with
 * it.
 */
export async function startAgent(o: AgentOptions): Promise<{ readonly rt: OpenAIRealtimeWS | undefined; done: Promise<{ code: number; reason: string }> }> {
  let rt: OpenAIRealtimeWS | undefined;
  const pending: Action[] = []; // notes due while no session is set up
  const holds = new Map<string, AbortController>(); // prepares running, by job id
  const fail = (what: string) => (err: unknown) => console.error(`${o.sessionId} ${what}: ${err}`);
  const arbiter = new RealtimeAdapter(o.client, o.sessionId, async (a: Action) => {
    if (o.handle?.(a, arbiter)) return; // your other tools
    switch (a.type) {
      case "execute": // run a.tool with a.args (for a confirmation call, the tool it confirmed)
        if (!a.sideEffect) return void arbiter.result(a.jobId, { ok: true }).catch(fail("result")); // a read-only tool: run it, hand back its result
        holds.set(a.jobId, new AbortController());
        void o.backend.prepare({ jobId: a.jobId, callId: a.call.id, args: a.args }, holds.get(a.jobId)!.signal).then(
          () => arbiter.prepared(a.jobId), // the arbiter now decides: COMMIT or CANCEL
          () => undefined, // aborted: abortPrepare was handed out
        ).catch(fail("prepared"));
        return;
      case "commit": // phase two, only now
        return void o.backend.commit(a.jobId).then((r) => arbiter.committed(a.jobId, r), (e) => arbiter.failed(a.jobId, String(e))).catch(fail("commit"));
      case "abortPrepare":
      case "cancel":
        holds.get(a.jobId)?.abort();
        holds.delete(a.jobId);
        return o.backend.release(a.jobId, a.type);
    }
    if (!rt) return void (a.type === "sendNote" && pending.push(a)); // a response was the closed connection's: dead
    await arbiter.deliver(a, (ev) => rt!.send(ev as any)); // function_call_output or a user message, then response.create
  }, { language: o.language, resolveCall: o.resolveCall, timeZone: o.timeZone, readTranscript: o.readTranscript }); // no behavior: the tool policy's decides what a barge-in does to a call
  const connect = () => {
    const ws = new OpenAIRealtimeWS({ model: o.model }, o.openai);
    ws.on("event", (ev) => {
      if (ev.type === "session.created") {
        o.onOpen?.();
        ws.send({ type: "session.update", session: { type: "realtime",
          audio: { input: { transcription: { model: "gpt-4o-transcribe", ...(o.language ? { language: o.language } : {}) } } }, // the user's words: how the arbiter hears "stop"
          tools: o.tools ?? [BOOK_SLOT] } });
      }
      void arbiter.feed(ev); // stamped now; never awaited here (session.created: Connect)
      if (ev.type === "session.created") {
        rt = ws;
        for (const a of pending.splice(0)) void arbiter.deliver(a, (e) => ws.send(e as any));
      }
      o.onEvent?.(ev);
    });
    ws.on("error", (err) => console.error(`${o.sessionId}: ${err.message}`));
    return new Promise<{ code: number; reason: string }>((resolve) =>
      ws.socket.on("close", (code: number, reason: Buffer) => resolve({ code, reason: String(reason ?? "") })),
    ).finally(() => (rt = undefined));
  };
  const done = (async () => {
    for (;;) {
      const e = await connect();
      if (!o.reconnect?.(e)) return e;
    }
  })().then(async (e) => {
    await arbiter.close(); // undecided jobs are cancelled: their holds released above
    for (const h of holds.values()) h.abort();
    return e;
  });
  return {
    get rt() {
      return rt;
    },
    done,
  };
}

/** The agent with a real model: audio on stdin and stdout, as the header says. */
async function main(): Promise<void> {
  const client = new ArbiterClient(process.env.ARBITER_TARGET ?? "127.0.0.1:50051");
  const backend = new DemoBackend((line) => console.error(JSON.stringify(line)));
  const agent = await startAgent({
    client,
    sessionId: `agent-${process.pid}-${Date.now()}`,
    openai: new OpenAI(), // OPENAI_API_KEY
    model: process.env.OPENAI_MODEL ?? "gpt-realtime",
    backend,
    onOpen: () => backend.start(),
    onEvent: (ev) => {
      if (ev.type === "response.output_audio.delta") process.stdout.write(Buffer.from(ev.delta, "base64"));
    },
  });
  process.stdin.on("data", (pcm: Buffer) => {
    const rt = agent.rt;
    if (rt && rt.socket.readyState === rt.socket.OPEN) rt.send({ type: "input_audio_buffer.append", audio: pcm.toString("base64") });
  });
  process.stdin.on("end", () => agent.rt?.close());
  process.once("SIGINT", () => agent.rt?.close());
  await agent.done;
  client.close();
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}

// --- for the wire checks (examples/wire-agent.ts --stack openai-realtime): not needed in your copy ---

/** One recorded session (examples/wire-common.ts TraceInfo). */
interface WireTrace {
  name: string;
  language?: string;
  timeZone?: string;
  tools: Array<{ name: string; description: string; parameters: unknown }>;
}

/** What the wire agent passes (examples/wire-agent.ts StackOptions). */
interface WireOptions {
  provider: string;
  client: { stub: { getChannel(): { getTarget(): string } } };
  sessionId(t: WireTrace): string;
  /** The trace's backend, which writes the backend log the checker reads. */
  backend(t: WireTrace): { start(): void; close(): void; handle(a: Action, adapter: RealtimeAdapter): boolean };
  resolveCall(t: WireTrace): (call: FunctionCallLike) => FunctionCallLike;
  readTranscript(t: WireTrace): SessionCoreOptions["readTranscript"];
  closeKind(code: number, reason: string): "end" | "refused" | "reconnect";
}

/**
 * Plays one recorded session through `startAgent`, against the fake provider at
 * `o.provider` (always wss): every tool of the trace declared, its backend (the trace's,
 * per tool and per call) handling every job, its language, and a new session wherever
 * the fake closes before the trace's end. This file uses the package as a user installs
 * it (its dist/), and the wire agent's client is built from the package's source, so the
 * agent gets a client of its own for the same target (one copy of the classes per
 * session).
 */
export async function run(trace: WireTrace, o: WireOptions): Promise<"ended" | "refused"> {
  const client = new ArbiterClient(o.client.stub.getChannel().getTarget());
  const backend = o.backend(trace);
  let reconnects = 0;
  try {
    const { done } = await startAgent({
      client,
      sessionId: o.sessionId(trace),
      openai: new OpenAI({ apiKey: "fake-key", baseURL: `${o.provider}/trace/${trace.name}/v1` }),
      model: "gpt-realtime",
      backend: new DemoBackend(() => undefined), // not used: the trace's backend handles every job
      tools: trace.tools.map((t) => ({ type: "function" as const, name: t.name, description: t.description, parameters: t.parameters })),
      handle: (a, arbiter) => backend.handle(a, arbiter),
      language: trace.language,
      resolveCall: o.resolveCall(trace),
      timeZone: trace.timeZone,
      readTranscript: o.readTranscript(trace),
      reconnect: (c) => o.closeKind(c.code, c.reason) === "reconnect" && ++reconnects <= 5,
      onOpen: () => backend.start(),
    });
    const e = await done;
    const kind = o.closeKind(e.code, e.reason);
    if (kind === "reconnect") throw new Error(`${trace.name}: closed ${e.code} ${e.reason} before the trace's end`);
    return kind === "end" ? "ended" : "refused";
  } finally {
    backend.close();
    client.close();
  }
}
