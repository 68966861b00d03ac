/**
 * A complete voice agent: Gemini Live through @google/genai, with Arbiter's LiveAdapter
 * in the receive loop and one side-effecting tool, book_slot, run in two phases
 * (prepare, then commit only when the arbiter says so). Copy this file whole; the
 * BookingBackend below is the part to replace with your own API.
 *
 *   npm install @google/genai @voicearbiter/arbiter-client
 *   arbiter serve --tools booking.yaml      # book_slot's policy: testdata/tools/booking.yaml
 *   sox -q -d -t raw -r 16000 -e signed -b 16 -c 1 - |
 *     GEMINI_API_KEY=... node stack-genai.js |
 *     sox -q -t raw -r 24000 -e signed -b 16 -c 1 - -d
 *
 * The user's voice comes in on stdin (16 kHz, 16-bit, mono PCM) and the model's goes out
 * on stdout (24 kHz); sox is one way to wire a microphone and a speaker, a telephony or
 * WebRTC transport another. ARBITER_TARGET names the arbiter (default 127.0.0.1:50051),
 * GEMINI_MODEL the model; the log goes to stderr. Ctrl-C ends the session.
 *
 * Without an API key, against a recorded session: `arbiter fake-provider --trace
 * testdata/traces/ --listen 127.0.0.1:8765`, then
 * `GEMINI_BASE_URL=http://127.0.0.1:8765/trace/C_on_run2 GEMINI_API_KEY=none node
 * stack-genai.js </dev/null`: the user says "Actually, stop" during the prepare, and the
 * backend's log shows the cancel (no commit). The session ends with the recording.
 *
 * Input transcription is on (`inputAudioTranscription`): the arbiter reads "stop" in the
 * user's words. Without it no stop can be heard, user speech during a prepare cancels
 * the job after the policy's transcript_timeout, and the adapter warns once.
 *
 * The wire checks (clients/e2e/wire.sh) run `run` at the bottom of this file: the same
 * `startAgent`, for each recorded session, against `arbiter fake-provider`.
 */
import { Behavior, GoogleGenAI, Modality, type LiveServerMessage, type Session } from "@google/genai";
import { ArbiterClient, LiveAdapter, type Action, type FunctionCallLike, type SessionCoreOptions } from "@voicearbiter/arbiter-client";
import { performance } from "node:perf_hooks";
import { setTimeout as sleep } from "node:timers/promises";
import { pathToFileURL } from "node:url";

/** The tool the model may call: declared BLOCKING, so the model waits for its answer. */
const BOOK_SLOT = {
  name: "book_slot",
  description: "Book an appointment slot.",
  parameters: { type: "OBJECT" as any, properties: { slot: { type: "STRING" as any } }, required: ["slot"] },
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

/** A function the model may call, as Gemini declares it, with its behavior. */
export interface Declaration {
  name: string;
  description: string;
  parameters: unknown;
  behavior: "BLOCKING" | "NON_BLOCKING";
}

export interface AgentOptions {
  client: ArbiterClient;
  /** The arbiter session: one per conversation (it goes on across reconnects). */
  sessionId: string;
  ai: GoogleGenAI;
  model: string;
  backend: BookingBackend;
  /** book_slot's declared behavior (Gemini's function calls do not carry it). */
  behavior?: "BLOCKING" | "NON_BLOCKING";
  /** The functions to declare; default book_slot alone, with `behavior`. */
  tools?: Declaration[];
  /** Actions of your other tools (book_slot's two phases are below): return true for the ones it took. */
  handle?: (a: Action, arbiter: LiveAdapter) => boolean;
  /** A status note may ride on a NON_BLOCKING call's function response. */
  responseScheduling?: boolean;
  /** The conversation's language (BCP 47): the stop words the arbiter listens for, the dates it reads. */
  language?: string;
  /** What the app knows of a call before it is registered: its business key, the tool choice it was made under. */
  resolveCall?: (call: FunctionCallLike) => FunctionCallLike;
  /** The conversation's IANA time zone: how the arbiter reads "tomorrow" and "3pm" in business keys. */
  timeZone?: string;
  /** Your own reading of the user's final words (your NLU), sent with them. */
  readTranscript?: SessionCoreOptions["readTranscript"];
  /**
   * The server closed the socket: connect again? Default: after a goAway (the server's
   * notice that it will close), with the session's resumption handle. The arbiter
   * session goes on (Connect): calls of the closed connection die there.
   */
  reconnect?: (close: { code: number; reason: string; goAway: boolean }) => boolean;
  /** Each server message, after the adapter saw it (the model's audio is in it). */
  onMessage?: (m: LiveServerMessage) => void;
  onOpen?: () => void;
}

/**
 * Connects the model session with Arbiter in its receive loop, and again with its
 * resumption handle when the server says it will close (goAway). `session` is the
 * connection open now; `done` resolves with the last close, once the model session has
 * ended and the arbiter session with it.
 */
export async function startAgent(o: AgentOptions): Promise<{ readonly session: Session | undefined; done: Promise<{ code: number; reason: string }> }> {
  const behavior = o.behavior ?? "BLOCKING";
  const tools = o.tools ?? [{ ...BOOK_SLOT, behavior }];
  let session: Session | undefined;
  const pending: Action[] = []; // notes due while no connection is up
  const holds = new Map<string, AbortController>(); // prepares running, by job id
  const fail = (what: string) => (err: unknown) => console.error(`${o.sessionId} ${what}: ${err}`);
  const onAction = async (a: Action) => {
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
    if (!session) {
      // Between connections: a note waits for the next one; a response was for a call
      // of the closed connection (dead at the next Connect): the model lost it with it.
      if (a.type === "sendNote") pending.push(a);
      return;
    }
    await arbiter.deliver(a, session); // sendFunctionResponse -> toolResponse, sendNote -> a user turn
  };
  const arbiter = new LiveAdapter(o.client, o.sessionId, onAction, {
    behaviors: Object.fromEntries(tools.map((t) => [t.name, t.behavior])), // as declared below: Gemini's calls do not carry it
    responseScheduling: o.responseScheduling, // a note may ride on a NON_BLOCKING response
    language: o.language,
    resolveCall: o.resolveCall,
    timeZone: o.timeZone,
    readTranscript: o.readTranscript,
  });
  let handle: string | undefined; // the session's resumption handle (sessionResumptionUpdate)
  const connect = async (conn: number): Promise<{ code: number; reason: string; goAway: boolean }> => {
    void arbiter.reconnect(`conn-${conn}`); // before the connection's first message: its calls are its own
    let goAway = false;
    let closed!: (e: { code: number; reason: string; goAway: boolean }) => void;
    const ended = new Promise<{ code: number; reason: string; goAway: boolean }>((resolve) => (closed = resolve));
    const connecting = o.ai.live.connect({
      model: o.model,
      config: {
        responseModalities: [Modality.AUDIO],
        inputAudioTranscription: {}, // the user's words: how the arbiter hears "stop"
        outputAudioTranscription: {}, // the model's: the arbiter checks what it claims
        sessionResumption: handle ? { handle } : {},
        tools: [{ functionDeclarations: tools.map((t) => ({ ...t, behavior: t.behavior === "BLOCKING" ? Behavior.BLOCKING : Behavior.NON_BLOCKING })) as any }],
        ...(o.language ? { speechConfig: { languageCode: o.language } } : {}),
      },
      callbacks: {
        onopen: () => o.onOpen?.(),
        onmessage: (m: LiveServerMessage) => {
          if (m.sessionResumptionUpdate?.resumable && m.sessionResumptionUpdate.newHandle) handle = m.sessionResumptionUpdate.newHandle;
          if (m.goAway) goAway = true; // the server closes next: resume with the handle
          void arbiter.feed(m); // stamped now; never awaited here
          o.onMessage?.(m);
        },
        onerror: (e) => console.error(`${o.sessionId}: ${e.message ?? e}`),
        onclose: (e) => closed({ code: e.code, reason: e.reason, goAway }),
      },
    });
    // A setup the server refuses closes before setupComplete: connect() would wait for ever.
    const first = await Promise.race([connecting.then((s) => ({ s })), ended.then(() => ({}))]);
    if ("s" in first) {
      session = first.s;
      for (const a of pending.splice(0)) await arbiter.deliver(a, session);
    }
    const e = await ended;
    session = undefined;
    return e;
  };
  const wantReconnect = o.reconnect ?? ((c) => c.goAway && handle !== undefined);
  const done = (async () => {
    for (let conn = 1; ; conn++) {
      const e = await connect(conn);
      if (!wantReconnect(e)) return { code: e.code, reason: e.reason };
    }
  })().then(async (e) => {
    await arbiter.close(); // undecided jobs are cancelled: their holds released above
    for (const h of holds.values()) h.abort();
    return e;
  });
  return {
    get session() {
      return session;
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
    ai: new GoogleGenAI({ apiKey: process.env.GEMINI_API_KEY, httpOptions: { baseUrl: process.env.GEMINI_BASE_URL } }),
    model: process.env.GEMINI_MODEL ?? "gemini-3.8-live",
    backend,
    onOpen: () => backend.start(),
    onMessage: (m) => {
      for (const p of m.serverContent?.modelTurn?.parts ?? []) if (p.inlineData?.data) process.stdout.write(Buffer.from(p.inlineData.data, "base64"));
    },
  });
  process.stdin.on("data", (pcm: Buffer) => agent.session?.sendRealtimeInput({ audio: { data: pcm.toString("base64"), mimeType: "audio/pcm;rate=16000" } }));
  process.once("SIGINT", () => agent.session?.close());
  await agent.done;
  client.close();
  process.exit(0); // stdin may still be open
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}

// --- for the wire checks (examples/wire-agent.ts --stack genai): not needed in your copy ---

/** One recorded session (examples/wire-common.ts TraceInfo). */
interface WireTrace {
  name: string;
  language?: string;
  timeZone?: string;
  responseScheduling: boolean;
  tools: Array<{ name: string; description: string; parameters: { properties: Record<string, { type: string }>; required: string[] }; behavior: "BLOCKING" | "NON_BLOCKING" }>;
}

/** What the wire agent passes (examples/wire-agent.ts StackOptions). */
interface WireOptions {
  provider: string;
  client: { stub: { getChannel(): { getTarget(): string } } };
  responseScheduling: boolean;
  sessionId(t: WireTrace): string;
  /** The trace's backend, which writes the backend log the checker reads. */
  backend(t: WireTrace): { start(): void; close(): void; handle(a: Action, adapter: LiveAdapter): boolean };
  resolveCall(t: WireTrace): (call: FunctionCallLike) => FunctionCallLike;
  readTranscript(t: WireTrace): SessionCoreOptions["readTranscript"];
  closeKind(code: number, reason: string): "end" | "refused" | "reconnect";
}

/**
 * Plays one recorded session through `startAgent`, against the fake provider at
 * `o.provider`: every tool of the trace declared with its behavior, its backend (the
 * trace's, per tool and per call) handling every job, its language, and a reconnect
 * wherever the fake closes before the trace's end. This file uses the package as a user
 * installs it (its dist/), and the wire agent's client is built from the package's
 * source, so the agent gets a client of its own for the same target (one copy of the
 * classes per session).
 */
export async function run(trace: WireTrace, o: WireOptions): Promise<"ended" | "refused"> {
  const client = new ArbiterClient(o.client.stub.getChannel().getTarget());
  const backend = o.backend(trace);
  let reconnects = 0;
  const upper = (p: WireTrace["tools"][number]["parameters"]) => ({
    type: "OBJECT",
    properties: Object.fromEntries(Object.entries(p.properties).map(([k, v]) => [k, { type: v.type.toUpperCase() }])),
    required: p.required,
  });
  try {
    const { done } = await startAgent({
      client,
      sessionId: o.sessionId(trace),
      ai: new GoogleGenAI({ apiKey: "fake-key", httpOptions: { baseUrl: `${o.provider}/trace/${trace.name}` } }),
      model: "gemini-3.8-live",
      backend: new DemoBackend(() => undefined), // not used: the trace's backend handles every job
      tools: trace.tools.map((t) => ({ name: t.name, description: t.description, parameters: upper(t.parameters), behavior: t.behavior })),
      handle: (a, arbiter) => backend.handle(a, arbiter),
      responseScheduling: o.responseScheduling || trace.responseScheduling,
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
