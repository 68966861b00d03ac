/**
 * A complete voice agent: a LiveKit Agents (agents-js 1.9) worker whose AgentSession runs
 * a realtime model (Gemini Live through @livekit/agents-plugin-google, or OpenAI
 * Realtime through @livekit/agents-plugin-openai), with Arbiter's LiveKit integration
 * around its one side-effecting tool, book_slot, run in two phases (prepare, then commit
 * only when the arbiter says so). Copy this file whole; the BookingBackend below is the
 * part to replace with your own API.
 *
 *   npm install @livekit/agents@1.9.0 @livekit/agents-plugin-google@1.9.0 \
 *     @livekit/agents-plugin-openai@1.9.0 @voicearbiter/arbiter-client
 *   arbiter serve --tools booking.yaml      # book_slot's policy: testdata/tools/booking.yaml
 *   LIVEKIT_URL=... LIVEKIT_API_KEY=... LIVEKIT_API_SECRET=... GOOGLE_API_KEY=... \
 *     node stack-livekit.js dev             # or REALTIME=openai with OPENAI_API_KEY
 *
 * LiveKit brings the audio: the worker joins the room it is dispatched to. ARBITER_TARGET
 * names the arbiter (default 127.0.0.1:50051).
 *
 * Input transcription is on (`inputAudioTranscription`, both plugins): the arbiter
 * reads "stop" in the user's words. Without it no stop can be heard, user speech during
 * a prepare cancels the job after the policy's transcript_timeout, and the integration
 * warns once.
 *
 * The wire checks (clients/e2e/wire.sh) run `run` at the bottom of this file: the same
 * `startAgent`, headless (no room), for each recorded session, against `arbiter
 * fake-provider`.
 */
import { cli, defineAgent, initializeLogger, llm, ServerOptions, voice, type JobContext } from "@livekit/agents";
import * as google from "@livekit/agents-plugin-google";
import * as openai from "@livekit/agents-plugin-openai";
import { ArbiterClient } from "@voicearbiter/arbiter-client";
import { LiveKitArbiter } from "@voicearbiter/arbiter-client/livekit";
import { performance } from "node:perf_hooks";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath, pathToFileURL } from "node:url";

/** Your booking API, in two phases. */
export interface BookingBackend {
  /** Phase one, reversible: hold the slot. Stop when `job.signal` aborts. */
  prepare(args: Record<string, unknown>, job: { jobId: string; callId: string; signal: AbortSignal }): Promise<void>;
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
  async prepare(_args: Record<string, unknown>, job: { jobId: string; callId: string; signal: AbortSignal }): Promise<void> {
    this.log("execute", { job_id: job.jobId, call_id: job.callId });
    await sleep(this.prepareMs, undefined, { signal: job.signal });
  }
  async commit(jobId: string): Promise<Record<string, unknown>> {
    this.log("commit", { job_id: jobId });
    return { reference: `R-${++this.refs}` };
  }
  release(jobId: string, why: "cancel" | "abortPrepare"): void {
    this.log(why === "cancel" ? "cancel" : "abort_prepare", { job_id: jobId });
  }
}

/**
 * The realtime model, with input transcription on. `base`: another server than the
 * provider's (the fake provider in the checks).
 */
export function realtimeModel(provider: "google" | "openai", o: { behavior?: "BLOCKING" | "NON_BLOCKING"; apiKey?: string; base?: string } = {}): llm.RealtimeModel {
  const key = o.apiKey ? { apiKey: o.apiKey } : {}; // unset: GOOGLE_API_KEY / OPENAI_API_KEY
  return provider === "google"
    ? new google.beta.realtime.RealtimeModel({ ...key, model: "gemini-3.8-live", ...(o.base ? { httpOptions: { baseUrl: o.base } } : {}),
        toolBehavior: (o.behavior ?? "BLOCKING") as any, inputAudioTranscription: {}, outputAudioTranscription: {} })
    : new openai.realtime.RealtimeModel({ ...key, model: "gpt-realtime", ...(o.base ? { baseURL: `${o.base}/v1` } : {}),
        inputAudioTranscription: { model: "gpt-4o-mini-transcribe" } });
}

export interface AgentOptions {
  client: ArbiterClient;
  /** The arbiter session: one per AgentSession. */
  sessionId: string;
  provider: "google" | "openai";
  model: llm.RealtimeModel;
  backend: BookingBackend;
  /** book_slot's declared behavior (Gemini's function calls do not carry it; OpenAI's are NON_BLOCKING). */
  behavior?: "BLOCKING" | "NON_BLOCKING";
  /** The provider closed the model connection (the plugins reconnect on their own). */
  onProviderClose?: (arbiter: LiveKitArbiter) => void;
}

/** An AgentSession with Arbiter attached, and its agent: start it with `session.start({ agent, room })`. */
export async function startAgent(o: AgentOptions): Promise<{ session: voice.AgentSession; agent: voice.Agent; arbiter: LiveKitArbiter }> {
  const arbiter = await LiveKitArbiter.create(o.client, o.sessionId, {
    provider: o.provider,
    behaviors: o.provider === "google" ? { book_slot: o.behavior ?? "BLOCKING" } : {}, // OpenAI: NON_BLOCKING
    onProviderClose: () => o.onProviderClose?.(arbiter),
  });
  const bookSlot = arbiter.tool(
    "book_slot",
    llm.tool({
      description: "Book an appointment slot.",
      parameters: { type: "object", properties: { slot: { type: "string" } }, required: ["slot"] }, // JSON schema, not zod
      execute: async () => undefined, // not used: the two phases below run instead
    }),
    {
      prepare: (args, job) => o.backend.prepare(args, job), // hold the slot
      commit: (jobId) => o.backend.commit(jobId), // book it, only when Arbiter says so
      release: (jobId, how) => o.backend.release(jobId, how),
    },
  );
  const session = new voice.AgentSession({ llm: arbiter.model(o.model) });
  arbiter.attach(session); // answers and notes go through its agent's chat context; its close closes the arbiter session
  const agent = new voice.Agent({ instructions: "You book appointment slots.", tools: { book_slot: bookSlot } });
  return { session, agent, arbiter };
}

/** The worker's job: one AgentSession in the room it was dispatched to. */
export default defineAgent({
  entry: async (ctx: JobContext) => {
    await ctx.connect();
    const provider = process.env.REALTIME === "openai" ? "openai" : "google";
    const client = new ArbiterClient(process.env.ARBITER_TARGET ?? "127.0.0.1:50051");
    const backend = new DemoBackend((line) => console.error(JSON.stringify(line)));
    const { session, agent, arbiter } = await startAgent({
      client,
      sessionId: `livekit-${ctx.room.name}-${Date.now()}`,
      provider,
      model: realtimeModel(provider), // GOOGLE_API_KEY or OPENAI_API_KEY
      backend,
    });
    ctx.addShutdownCallback(async () => {
      await arbiter.close();
      client.close();
    });
    backend.start();
    await session.start({ agent, room: ctx.room });
  },
});

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  cli.runApp(new ServerOptions({ agent: fileURLToPath(import.meta.url) }));
}

// --- for the wire checks (examples/wire-agent.ts --stack livekit-*): not needed in your copy ---

/** One recorded session (examples/wire-common.ts TraceInfo). */
interface WireTrace {
  name: string;
  prepareMs: number;
  behavior: "BLOCKING" | "NON_BLOCKING";
}

/** What the wire agent passes (examples/wire-agent.ts StackOptions). */
interface WireOptions {
  provider: string;
  client: { stub: { getChannel(): { getTarget(): string } } };
  backendLog: { write(line: Record<string, unknown>): void };
  sessionId: (t: WireTrace) => string;
}

let logger = false;

/**
 * Plays one recorded session through `startAgent`, headless (no room, no audio I/O: the
 * fake provider sends events, never user audio), against the fake provider at
 * `o.provider`, with the DemoBackend writing the backend log the checker reads. This
 * file uses the package as a user installs it (its dist/), and the wire agent's client
 * is built from the package's source, so the agent gets a client of its own for the same
 * target (one copy of the classes per session).
 */
export async function run(trace: WireTrace, o: WireOptions, provider: "google" | "openai"): Promise<void> {
  if (!logger) {
    initializeLogger({ pretty: false, level: process.env.LK_LEVEL ?? "fatal" });
    logger = true;
  }
  const client = new ArbiterClient(o.client.stub.getChannel().getTarget());
  const backend = new DemoBackend((line) => o.backendLog.write(line), trace.prepareMs, { trace: trace.name });
  let ended!: () => void;
  const done = new Promise<void>((resolve) => (ended = resolve));
  try {
    const { session, agent, arbiter } = await startAgent({
      client,
      sessionId: o.sessionId(trace),
      provider,
      model: realtimeModel(provider, { apiKey: "fake-key", base: `${o.provider}/trace/${trace.name}`, behavior: trace.behavior }),
      backend,
      behavior: trace.behavior,
      // The recorded conversation is over when the provider closes: end the realtime
      // session before the plugin reconnects (it would replay the trace on a new session).
      onProviderClose: (arbiter) => {
        arbiter.endRealtime();
        void session.close().finally(ended);
      },
    });
    backend.start();
    await session.start({ agent });
    await done;
    await arbiter.close();
  } finally {
    client.close();
  }
}
