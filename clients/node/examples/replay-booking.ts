/**
 * A booking agent that replays a recorded session against a running arbiter.
 *
 * The trace (`testdata/traces/*.jsonl`, format `shared/spec/trace-format.md`) is played in
 * real time: each event becomes the @google/genai `LiveServerMessage` it was recorded from
 * and goes through {@link LiveAdapter}, while a fake two-phase backend prepares
 * (`prepare_ms` from `session_start`, default 4000), commits and cancels as the adapter's
 * actions say. It prints, one JSON object a line, what the agent does and would send to
 * the model: `execute`, `commit`, `cancel`, `abort_prepare`, `response` (a function
 * response), `skip` (never answered), `note`, and a `summary` with the fields of
 * `arbiter replay`'s. `--response-scheduling` configures the session so that notes may
 * ride on function responses (`scheduling` is then printed with the response that carries
 * one). The adapter holds its Watch on the session (the play is real time, so timer-made
 * effects come when they are due, as in the reference); `--no-watch` turns it off. Exit
 * code 1 when a call id was left unanswered or a business key was committed
 * twice.
 *
 *     npm run build && node dist/examples/replay-booking.js --target 127.0.0.1:50051 ../../testdata/traces/C_on_run2.jsonl
 */
import { readFileSync } from "node:fs";
import { basename, extname } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { parseArgs } from "node:util";
import { ArbiterClient, LiveAdapter, type Action, type LiveServerMessageLike } from "../src/index.js";

interface TraceEvent {
  t_ms: number;
  event: string;
  [field: string]: any;
}

/** The LiveServerMessage (@google/genai field names) a trace event was recorded from. */
export function liveMessage(ev: TraceEvent): LiveServerMessageLike | undefined {
  switch (ev.event) {
    case "speech_start":
      return { voiceActivity: { voiceActivityType: "ACTIVITY_START" } };
    case "speech_end":
      return { voiceActivity: { voiceActivityType: "ACTIVITY_END" } };
    case "transcript":
      return { serverContent: { inputTranscription: { text: ev.text ?? "", finished: ev.final ?? true } } };
    case "model_transcript":
      return { serverContent: { outputTranscription: { text: ev.text ?? "" } } };
    case "model_audio_start":
      return { serverContent: { modelTurn: { parts: [{ inlineData: { mimeType: "audio/pcm;rate=24000" } }] } } };
    case "interrupted":
      return { serverContent: { interrupted: true } };
    case "generation_complete":
      return { serverContent: { generationComplete: true } };
    case "turn_complete":
      return { serverContent: { turnComplete: true } };
    case "tool_call":
      return { toolCall: { functionCalls: [{ id: ev.call_id, name: ev.tool, args: ev.args ?? {} }] } };
    case "tool_call_cancellation":
      return { toolCallCancellation: { ids: ev.call_ids } };
  }
  return undefined; // session_start, end, ref_* and unknown events are not server messages
}

/** The agent's side of the session: a fake two-phase backend plus the model socket (stdout). */
class BookingAgent {
  readonly prepareMs: number;
  readonly commitResult: Record<string, unknown> | undefined;
  readonly calls: string[];
  readonly keys = new Map<string, string>();
  readonly prepares = new Map<string, AbortController>();
  readonly work = new Set<Promise<void>>();
  readonly answered = new Set<string>();
  readonly skipped = new Set<string>();
  readonly commits = new Map<string, number>();
  cancels = 0;
  t0 = 0;
  adapter!: LiveAdapter;

  constructor(
    readonly events: TraceEvent[],
    prepareMs: number | undefined,
    readonly speed: number,
    readonly responseScheduling = false,
    readonly watch = true,
  ) {
    const start = events.find((e) => e.event === "session_start");
    this.prepareMs = (prepareMs ?? start?.prepare_ms ?? 4000) / speed;
    this.commitResult = start?.commit_result;
    this.calls = [...new Set(events.filter((e) => e.event === "tool_call").map((e) => e.call_id as string))];
  }

  out(kind: string, fields: Record<string, unknown>): void {
    const t_ms = Math.round((performance.now() - this.t0) * this.speed);
    console.log(JSON.stringify({ out: kind, t_ms, ...fields }));
  }

  spawn(p: Promise<void>): void {
    const w = p.catch((e) => console.error(`backend: ${e}`)).finally(() => this.work.delete(w));
    this.work.add(w);
  }

  async prepare(jobId: string, ac: AbortController): Promise<void> {
    try {
      await sleep(this.prepareMs, undefined, { signal: ac.signal }); // the backend holds the slot
    } catch {
      return; // aborted: the backend released the slot
    }
    this.prepares.delete(jobId);
    await this.adapter.prepared(jobId);
  }

  async commit(jobId: string): Promise<void> {
    const key = this.keys.get(jobId) ?? jobId;
    this.commits.set(key, (this.commits.get(key) ?? 0) + 1);
    const n = [...this.commits.values()].reduce((a, b) => a + b, 0);
    await this.adapter.committed(jobId, this.commitResult ?? { reference: `R-${n}` });
  }

  /** What the agent does with each action: quick, long work goes to promises. */
  onAction = (a: Action): void => {
    switch (a.type) {
      case "execute": {
        this.out("execute", { call_id: a.call.id, job_id: a.jobId, side_effect: a.sideEffect });
        this.keys.set(a.jobId, a.businessKey);
        if (a.sideEffect) {
          const ac = new AbortController();
          this.prepares.set(a.jobId, ac);
          this.spawn(this.prepare(a.jobId, ac));
        } else {
          this.spawn(this.adapter.result(a.jobId, { status: "ok" }));
        }
        break;
      }
      case "abortPrepare":
      case "cancel":
        this.prepares.get(a.jobId)?.abort(); // abort the prepare: the backend releases the slot
        this.prepares.delete(a.jobId);
        this.cancels++;
        this.out(a.type === "abortPrepare" ? "abort_prepare" : "cancel", {
          job_id: a.jobId,
          reason: a.reason,
          ...(a.error ? { error: String(a.error) } : {}),
        });
        break;
      case "commit":
        this.out("commit", { job_id: a.jobId, reason: a.reason });
        this.spawn(this.commit(a.jobId));
        break;
      case "sendFunctionResponse":
        this.answered.add(a.id);
        this.out("response", { call_id: a.id, name: a.name, payload: a.payload, ...(a.scheduling ? { scheduling: a.scheduling } : {}) });
        break;
      case "skip":
        this.skipped.add(a.id);
        this.out("skip", { call_id: a.id, reason: a.reason });
        break;
      case "sendNote":
        this.out("note", { job_id: a.jobId, text: a.text, deliver: a.when });
        break;
    }
  };

  unanswered(): string[] {
    return this.calls.filter((c) => !this.answered.has(c) && !this.skipped.has(c));
  }

  async run(target: string, sessionId: string) {
    const client = new ArbiterClient(target);
    const behaviors: Record<string, "BLOCKING" | "NON_BLOCKING"> = {};
    for (const e of this.events) if (e.event === "tool_call" && e.behavior) behaviors[e.tool] = e.behavior;
    this.adapter = new LiveAdapter(client, sessionId, this.onAction, { behaviors, responseScheduling: this.responseScheduling, watch: this.watch });
    this.t0 = performance.now();
    let unanswered: string[] | undefined;
    for (const ev of this.events) {
      await sleep(Math.max(0, this.t0 + ev.t_ms / this.speed - performance.now()));
      if (ev.event === "end") {
        unanswered = this.unanswered();
        await this.adapter.close();
        break;
      }
      const msg = liveMessage(ev);
      // As a receive loop would: stamped and queued now, delivered in order by the
      // adapter's outbox (not awaited: a slow delivery must not hold the next event back).
      if (msg) void this.adapter.feed(msg);
    }
    if (!unanswered) {
      // No `end`: let the jobs settle, then close.
      for (let i = 0; i < 300 && (this.prepares.size || this.work.size || this.unanswered().length); i++) await sleep(100);
      unanswered = this.unanswered();
      await this.adapter.close();
    }
    while (this.work.size) await Promise.all(this.work);
    client.close();
    const commits = [...this.commits.values()];
    const summary = {
      out: "summary",
      commits: commits.reduce((a, b) => a + b, 0),
      cancels: this.cancels,
      double_commits: commits.reduce((a, n) => a + Math.max(0, n - 1), 0),
      calls: this.calls.length,
      answered: this.answered.size,
      skipped: this.skipped.size,
      unanswered,
    };
    console.log(JSON.stringify(summary));
    return summary;
  }
}

async function main(): Promise<number> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      target: { type: "string", default: "127.0.0.1:50051" },
      session: { type: "string" },
      "prepare-ms": { type: "string" },
      speed: { type: "string", default: "1" },
      "response-scheduling": { type: "boolean", default: false },
      "no-watch": { type: "boolean", default: false },
    },
  });
  if (positionals.length !== 1) {
    console.error("usage: replay-booking [--target ADDR] [--session ID] [--prepare-ms N] [--speed X] [--response-scheduling] [--no-watch] TRACE.jsonl");
    return 2;
  }
  const path = positionals[0];
  const events: TraceEvent[] = readFileSync(path, "utf8")
    .split("\n")
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l));
  const prepareMs = values["prepare-ms"] !== undefined ? Number(values["prepare-ms"]) : undefined;
  const session = values.session ?? `node-${basename(path, extname(path))}-${process.pid}`;
  const s = await new BookingAgent(events, prepareMs, Number(values.speed), values["response-scheduling"], !values["no-watch"]).run(values.target!, session);
  return s.unanswered.length || s.double_commits ? 1 : 0;
}

main().then(
  (code) => (process.exitCode = code),
  (err) => {
    console.error(err);
    process.exitCode = 2;
  },
);
