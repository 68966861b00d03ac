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
import { ArbiterClient, type Action, type FunctionCallLike, type SessionCoreOptions } from "@voicearbiter/arbiter-client";
import { CommitOutcomeUnknown, LiveKitArbiter, type TwoPhase } from "@voicearbiter/arbiter-client/livekit";
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
export function realtimeModel(
  provider: "google" | "openai",
  o: { behavior?: "BLOCKING" | "NON_BLOCKING"; apiKey?: string; base?: string; language?: string } = {},
): llm.RealtimeModel {
  const key = o.apiKey ? { apiKey: o.apiKey } : {}; // unset: GOOGLE_API_KEY / OPENAI_API_KEY
  return provider === "google"
    ? new google.beta.realtime.RealtimeModel({ ...key, model: "gemini-3.8-live", ...(o.base ? { httpOptions: { baseUrl: o.base } } : {}),
        toolBehavior: (o.behavior ?? "BLOCKING") as any, inputAudioTranscription: {}, outputAudioTranscription: {}, ...(o.language ? { language: o.language } : {}) })
    : new openai.realtime.RealtimeModel({ ...key, model: "gpt-realtime", ...(o.base ? { baseURL: `${o.base}/v1` } : {}),
        inputAudioTranscription: { model: "gpt-4o-mini-transcribe", ...(o.language ? { language: o.language } : {}) } });
}

/** A function tool besides book_slot: side-effecting (`twoPhase`) or read-only (`execute`). */
export interface OtherTool {
  name: string;
  description: string;
  /** A JSON schema, not zod. */
  parameters: unknown;
  twoPhase?: TwoPhase;
  /** Runs a read-only call when the arbiter says so; its result is the function response. */
  execute?: (args: any, opts: { toolCallId: string }) => Promise<unknown>;
}

export interface AgentOptions {
  client: ArbiterClient;
  /** The arbiter session: one per AgentSession. */
  sessionId: string;
  provider: "google" | "openai";
  model: llm.RealtimeModel;
  backend: BookingBackend;
  /**
   * The tools' declared behavior (Google: the plugin declares one for every tool; OpenAI
   * calls carry none, the tool policy's decides).
   */
  behavior?: "BLOCKING" | "NON_BLOCKING";
  /** The tools; default book_slot alone, run in two phases by `backend`. */
  tools?: OtherTool[];
  /** The conversation's language (BCP 47): the stop words the arbiter listens for, the dates it reads. */
  language?: string;
  /** What the app knows of a call before it is registered: its business key, the tool choice it was made under. */
  resolveCall?: (call: FunctionCallLike) => FunctionCallLike;
  /** The conversation's IANA time zone: how the arbiter reads "tomorrow" and "3pm" in business keys. */
  timeZone?: string;
  /** Your own reading of the user's final words (your NLU), sent with them. */
  readTranscript?: SessionCoreOptions["readTranscript"];
  /** Every action, after the integration handled it (logs, metrics). */
  onAction?: (a: Action) => void;
  /** The provider closed the model connection (the plugins reconnect on their own). */
  onProviderClose?: (arbiter: LiveKitArbiter, close: { code: number; reason: string }) => void;
}

/** An AgentSession with Arbiter attached, and its agent: start it with `session.start({ agent, room })`. */
export async function startAgent(o: AgentOptions): Promise<{ session: voice.AgentSession; agent: voice.Agent; arbiter: LiveKitArbiter }> {
  const tools = o.tools ?? [
    {
      name: "book_slot",
      description: "Book an appointment slot.",
      parameters: { type: "object", properties: { slot: { type: "string" } }, required: ["slot"] }, // JSON schema, not zod
      twoPhase: {
        prepare: (args, job) => o.backend.prepare(args, job), // hold the slot
        commit: (jobId) => o.backend.commit(jobId), // book it, only when Arbiter says so
        release: (jobId, how) => o.backend.release(jobId, how),
      },
    },
  ];
  const arbiter = await LiveKitArbiter.create(o.client, o.sessionId, {
    provider: o.provider,
    behaviors: o.provider === "google" ? Object.fromEntries(tools.map((t) => [t.name, o.behavior ?? "BLOCKING"])) : {}, // OpenAI: the policy's
    language: o.language,
    resolveCall: o.resolveCall,
    timeZone: o.timeZone,
    readTranscript: o.readTranscript,
    onAction: o.onAction,
    onProviderClose: (close) => o.onProviderClose?.(arbiter, close),
  });
  const wrapped = Object.fromEntries(
    tools.map((t) => [
      t.name,
      arbiter.tool(
        t.name,
        llm.tool({
          description: t.description,
          parameters: t.parameters as any, // JSON schema, not zod
          execute: async (args: any, opts: { toolCallId: string }) => t.execute?.(args, opts), // a read-only call, when Arbiter says run it
        }),
        t.twoPhase, // a side-effecting one runs its two phases instead
      ),
    ]),
  );
  const session = new voice.AgentSession({ llm: arbiter.model(o.model) });
  arbiter.attach(session); // answers and notes go through its agent's chat context; its close closes the arbiter session
  const agent = new voice.Agent({ instructions: "You help the user with their requests.", tools: wrapped });
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
  language?: string;
  timeZone?: string;
  calls: Record<string, { tool: string }>;
  tools: Array<{ name: string; description: string; parameters: unknown; behavior: "BLOCKING" | "NON_BLOCKING" }>;
  behaviors: Record<string, "BLOCKING" | "NON_BLOCKING">;
}

/** The trace's backend (examples/wire-common.ts Backend). */
interface WireBackend {
  start(): void;
  close(): void;
  job(jobId: string, tool: string, callId: string, sideEffect: boolean): void;
  prepare(jobId: string, signal?: AbortSignal): Promise<void>;
  commit(jobId: string, resolved?: (outcome: "committed" | "failed", result?: Record<string, unknown>) => void): Promise<Record<string, unknown>>;
  release(jobId: string, how: "cancel" | "abortPrepare"): void;
  run(jobId: string, onProgress?: (p: Record<string, unknown>) => unknown): Promise<Record<string, unknown>>;
}

/** What the wire agent passes (examples/wire-agent.ts StackOptions). */
interface WireOptions {
  provider: string;
  client: { stub: { getChannel(): { getTarget(): string } } };
  sessionId(t: WireTrace): string;
  /** The trace's backend, which writes the backend log the checker reads. */
  backend(t: WireTrace): WireBackend;
  resolveCall(t: WireTrace): (call: FunctionCallLike) => FunctionCallLike;
  readTranscript(t: WireTrace): SessionCoreOptions["readTranscript"];
  closeKind(code: number, reason: string): "end" | "refused" | "reconnect";
}

let logger = false;

/**
 * Plays one recorded session through `startAgent`, headless (no room, no audio I/O: the
 * fake provider sends events, never user audio), against the fake provider at
 * `o.provider`: every tool of the trace wrapped (two phases and a read-only execute, the
 * arbiter says which runs), the trace's backend per tool and per call, its language.
 * The plugins reconnect by themselves when the fake closes before the trace's end; the
 * session ends at the end (or the fake's refusal). This file uses the package as a user
 * installs it (its dist/), and the wire agent's client is built from the package's
 * source, so the agent gets a client of its own for the same target (one copy of the
 * classes per session).
 */
export async function run(trace: WireTrace, o: WireOptions, provider: "google" | "openai"): Promise<"ended" | "refused"> {
  if (!logger) {
    initializeLogger({ pretty: false, level: process.env.LK_LEVEL ?? "fatal" });
    logger = true;
  }
  const client = new ArbiterClient(o.client.stub.getChannel().getTarget());
  const backend = o.backend(trace);
  // The Google plugin declares one behavior for every tool (toolBehavior): that of the
  // first tool the trace calls (its recorded calls', else the policy's).
  const first = Object.values(trace.calls)[0]?.tool ?? trace.tools[0]?.name;
  const behavior = trace.behaviors[first] ?? "NON_BLOCKING";
  const jobs = new Map<string, string>(); // call id -> the job its execute opened (a read-only tool's progress)
  let ending: "ended" | "refused" = "ended";
  let ended!: () => void;
  const done = new Promise<void>((resolve) => (ended = resolve));
  if (process.env.WIRE_DEBUG) console.error(`${trace.name} session ${o.sessionId(trace)}`);
  try {
    const { session, agent, arbiter } = await startAgent({
      client,
      sessionId: o.sessionId(trace),
      provider,
      model: realtimeModel(provider, { apiKey: "fake-key", base: `${o.provider}/trace/${trace.name}`, behavior, language: trace.language }),
      backend: new DemoBackend(() => undefined), // not used: the trace's backend runs every tool
      behavior,
      language: trace.language,
      resolveCall: o.resolveCall(trace),
      timeZone: trace.timeZone,
      readTranscript: o.readTranscript(trace),
      tools: trace.tools.map((t) => ({
        name: t.name,
        description: t.description,
        parameters: t.parameters,
        twoPhase: {
          prepare: (_args, job) => {
            backend.job(job.jobId, t.name, job.callId, true);
            return backend.prepare(job.jobId, job.signal);
          },
          commit: (jobId) =>
            backend
              .commit(jobId, (outcome, r) => void (outcome === "committed" ? arbiter.core.committed(jobId, r) : arbiter.core.failed(jobId, "the backend reports the commit did not happen")))
              .catch((err) => Promise.reject((err as any)?.unknownOutcome ? new CommitOutcomeUnknown(err.message) : err)),
          release: (jobId, how) => backend.release(jobId, how),
        },
        execute: async (_args, opts) => {
          const jobId = jobs.get(opts.toolCallId) ?? opts.toolCallId;
          backend.job(jobId, t.name, opts.toolCallId, false);
          return backend.run(jobId, (p) => arbiter.core.progress(jobId, p));
        },
      })),
      onAction: (a) => {
        if (a.type === "execute") jobs.set(a.call.id, a.jobId);
        if (process.env.WIRE_DEBUG) console.error(`${trace.name} action ${JSON.stringify(a)}`);
      },
      // The recorded conversation is over when the provider closes at the trace's end (or
      // refuses the trace): end the realtime session before the plugin reconnects. Any
      // other close is a reconnect, which the plugins make themselves.
      onProviderClose: (arbiter, { code, reason }) => {
        const kind = o.closeKind(code, reason);
        if (kind === "reconnect") return;
        ending = kind === "end" ? "ended" : "refused";
        arbiter.endRealtime();
        void session.close().finally(ended);
      },
    });
    backend.start();
    await session.start({ agent });
    await done;
    await arbiter.close();
    return ending;
  } finally {
    backend.close();
    client.close();
  }
}
