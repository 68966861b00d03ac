/**
 * What every wire agent stack shares (examples/wire-agent.ts): the recorded sessions it
 * plays through the fake provider, with what the recorded app had (its tools and their
 * declared behaviors, its language, the tool choice and business key of each call, its
 * backend's timings and outcomes), the arbiter client, and a fake backend that does
 * what each trace's `backend` says and writes the backend log docs/fake-provider.md
 * defines. A trace is read for what the app knew, never for what the model does.
 */
import { createWriteStream, readdirSync, readFileSync, statSync, type WriteStream } from "node:fs";
import { basename, join } from "node:path";
import { performance } from "node:perf_hooks";
import { setTimeout as sleep } from "node:timers/promises";
import { ArbiterClient, type Action, type Behavior, type FunctionCallLike, type pb } from "../src/index.js";

/**
 * What the backend reports a job's outcome to: an adapter (any copy of the package's
 * classes: the stack files use the package as installed, the harness its source).
 */
export interface JobReporter {
  prepared(jobId: string): Promise<void>;
  committed(jobId: string, result?: Record<string, unknown>): Promise<void>;
  failed(jobId: string, error: string): Promise<void>;
  unknown(jobId: string, result?: Record<string, unknown>): Promise<void>;
  result(jobId: string, result?: Record<string, unknown>): Promise<void>;
  progress(jobId: string, result?: Record<string, unknown>): Promise<void>;
}

/** The fake backend's behaviour for one tool or call (docs/trace-format.md, `backend`). */
export interface BackendSpec {
  prepare_ms?: number;
  commit?: "ok" | "fail" | "unknown";
  resolves_after_ms?: number;
  resolves_to?: "committed" | "failed";
  /** A read-only tool's result time (ms after the call); null: its result never comes. */
  result_ms?: number | null;
  result?: Record<string, unknown>;
  progress_ms?: number[];
  commit_result?: Record<string, unknown>;
}

/** A function the agent declares to the model. */
export interface ToolDecl {
  name: string;
  description: string;
  /** Its parameters as a JSON schema (lowercase types, as OpenAI and LiveKit take it). */
  parameters: { type: "object"; properties: Record<string, { type: string }>; required: string[] };
  /** The behavior the recorded app declared (Gemini): its calls', else the policy's, else NON_BLOCKING. */
  behavior: Behavior;
  /**
   * The policy marks it side-effecting (`side_effect: true`), or it is the confirm tool
   * (`confirm_tool`, default confirm_action) of a side-effecting tool that asks first (or
   * has steps): its last call runs that tool's job. The stacks behind the wire guard
   * wrap these in the tool helper.
   */
  sideEffect: boolean;
}

/** What the recorded app knew about one of its calls. */
export interface CallFacts {
  tool: string;
  toolChoice?: "auto" | "none";
  businessKey?: string;
  backend?: BackendSpec;
}

/** One recorded session, as much of it as an agent may know up front. */
export interface TraceInfo {
  name: string;
  /** How long a prepare takes when its tool's backend does not say (`session_start.prepare_ms`, default 4000). */
  prepareMs: number;
  /** When the recorded session ends (its last event), ms. */
  endMs: number;
  /** The session's language (`session_start.language`, BCP 47), if any. */
  language?: string;
  /** The session's IANA time zone (`session_start.time_zone`), if any. */
  timeZone?: string;
  /** The recorded app's own readings of the user's words (`transcript` lines with a `reading`), in order. */
  readings: Array<{ text: string; reading: pb.AgentReading }>;
  /** The provider honours function-response scheduling (`session_start.response_scheduling`). */
  responseScheduling: boolean;
  /** What a commit returns unless its tool's backend says (`session_start.commit_result`). */
  commitResult?: Record<string, unknown>;
  /** Each tool's backend (`session_start.backend`). */
  backends: Record<string, BackendSpec>;
  /** Each call id's facts (its `tool_call` line). */
  calls: Record<string, CallFacts>;
  /** The functions to declare: the policy's tools and every tool the trace calls. */
  tools: ToolDecl[];
  /** Each tool's declared behavior (as `tools`). */
  behaviors: Record<string, Behavior>;
}

/** An arbiter tool policy (the YAML file, as JSON): what the agents read of it. */
export interface Policy {
  tools?: Array<{ name: string; side_effect?: boolean; confirm?: boolean; confirm_tool?: string; behavior?: string; describe?: string; key?: Array<{ arg: string; optional?: boolean }>; steps?: Array<{ arg: string }> }>;
}

/** Reads a tool policy given as JSON (wire.sh converts the YAML); undefined: none. */
export function readPolicy(file: string | undefined): Policy {
  return file ? (JSON.parse(readFileSync(file, "utf8")) as Policy) : {};
}

const JSON_TYPES: Record<string, string> = { string: "string", boolean: "boolean", number: "number", object: "object" };

/** The traces of DIR (`*.jsonl`, sorted; or one trace file), under `policy`. */
export function readTraces(path: string, policy: Policy = {}): TraceInfo[] {
  const files = statSync(path).isDirectory()
    ? readdirSync(path)
        .filter((f) => f.endsWith(".jsonl"))
        .sort()
        .map((f) => join(path, f))
    : [path];
  return files.map((file) => readTrace(file, policy));
}

function readTrace(file: string, policy: Policy): TraceInfo {
  const events = readFileSync(file, "utf8")
    .split("\n")
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l));
  const start = events.find((e) => e.event === "session_start") ?? {};
  const info: TraceInfo = {
    name: basename(file, ".jsonl"),
    prepareMs: start.prepare_ms ?? 4000,
    endMs: Math.max(0, ...events.map((e) => Number(e.t_ms) || 0)),
    language: start.language || undefined,
    timeZone: start.time_zone || undefined,
    readings: [],
    responseScheduling: start.response_scheduling === true,
    commitResult: start.commit_result,
    backends: start.backend ?? {},
    calls: {},
    tools: [],
    behaviors: {},
  };
  const decl = new Map<string, ToolDecl>();
  const tool = (name: string) => {
    let t = decl.get(name);
    if (!t) {
      t = { name, description: `The ${name.replace(/_/g, " ")} tool.`, parameters: { type: "object", properties: {}, required: [] }, behavior: "NON_BLOCKING", sideEffect: false };
      decl.set(name, t);
    }
    return t;
  };
  const recorded = new Map<string, Behavior>(); // tool -> the behavior its recorded calls carry
  for (const p of policy.tools ?? []) {
    const t = tool(p.name);
    if (p.describe) t.description = `Handles ${p.describe.replace(/\{[^}]*\}/g, "it")}.`;
    for (const k of p.key ?? []) {
      t.parameters.properties[k.arg] = { type: "string" };
      if (!k.optional) t.parameters.required.push(k.arg);
    }
    for (const s of p.steps ?? []) t.parameters.properties[s.arg] ??= { type: "string" };
    if (p.behavior === "BLOCKING" || p.behavior === "NON_BLOCKING") t.behavior = p.behavior;
    t.sideEffect ||= p.side_effect === true;
    if (p.side_effect && (p.confirm || p.steps?.length)) tool(p.confirm_tool || "confirm_action").sideEffect = true;
  }
  for (const e of events) {
    if (e.event === "transcript" && e.reading && e.text) info.readings.push({ text: e.text, reading: e.reading });
    if (e.event !== "tool_call" || !e.tool) continue;
    const t = tool(e.tool);
    for (const [arg, v] of Object.entries(e.args ?? {})) t.parameters.properties[arg] ??= { type: JSON_TYPES[typeof v] ?? (Array.isArray(v) ? "array" : "string") };
    if ((e.behavior === "BLOCKING" || e.behavior === "NON_BLOCKING") && !recorded.has(e.tool)) recorded.set(e.tool, e.behavior);
    if (e.call_id) {
      info.calls[e.call_id] = { tool: e.tool, toolChoice: e.tool_choice === "none" ? "none" : e.tool_choice === "auto" ? "auto" : undefined, businessKey: e.business_key || undefined, backend: e.backend };
    }
  }
  for (const [name, b] of recorded) tool(name).behavior = b;
  info.tools = [...decl.values()];
  for (const t of info.tools) info.behaviors[t.name] = t.behavior;
  return info;
}

/**
 * The call as the recorded app registered it: with the tool choice it ran under and
 * its own business key (SessionCoreOptions.resolveCall).
 */
export function resolveCall(trace: TraceInfo): (call: FunctionCallLike) => FunctionCallLike {
  return (call) => {
    const f = call.id ? trace.calls[call.id] : undefined;
    if (!f) return call;
    return { ...call, toolChoice: call.toolChoice ?? f.toolChoice, businessKey: call.businessKey ?? f.businessKey };
  };
}

/**
 * The recorded app's own reading of the user's words (SessionCoreOptions.readTranscript):
 * a final transcript piece with the text of a trace `transcript` line that has a
 * `reading` gets that reading, each line's once, in order.
 */
export function readTranscript(trace: TraceInfo): (text: string) => pb.AgentReading | undefined {
  const left = [...trace.readings];
  return (text) => {
    const i = left.findIndex((r) => r.text.trim() === text.trim());
    return i < 0 ? undefined : left.splice(i, 1)[0].reading;
  };
}

/** A tool declaration as Gemini's `FunctionDeclaration` (types upper case, its behavior). */
export function geminiDeclaration(t: ToolDecl): any {
  const properties: Record<string, { type: string }> = {};
  for (const [k, v] of Object.entries(t.parameters.properties)) properties[k] = { type: v.type.toUpperCase() };
  return { name: t.name, description: t.description, behavior: t.behavior, parameters: { type: "OBJECT", properties, required: t.parameters.required } };
}

/** A tool declaration as an OpenAI Realtime session tool. */
export function openaiTool(t: ToolDecl): { type: "function"; name: string; description: string; parameters: ToolDecl["parameters"] } {
  return { type: "function", name: t.name, description: t.description, parameters: t.parameters };
}

/**
 * Why the fake provider closed a connection, read from its close (docs/fake-provider.md):
 * `end` (1000 "end of trace": the conversation is over), `refused` (1008 with the
 * fake's "refused:" reason: the trace's protocol cannot carry it), or `reconnect`
 * (anything else: the agent connects again and the session goes on).
 */
export function closeKind(code: number, reason: string): "end" | "refused" | "reconnect" {
  if (code === 1000 && reason === "end of trace") return "end";
  if (code === 1008 && reason.startsWith("arbiter fake-provider: refused:")) return "refused";
  return "reconnect";
}

/** How many times an agent connects again within one session before it gives up. */
export const MAX_RECONNECTS = 5;

/**
 * An arbiter client for ADDR, or for ADDR,ADDR,... (replicas on one Redis): one channel
 * whose RPCs go round-robin over them (grpc-js `round_robin`), so one session's
 * RegisterCall, Decide, Report* and Watch land on different replicas.
 */
export function arbiterClient(addrs: string): ArbiterClient {
  const list = addrs.split(",").filter(Boolean);
  if (list.length === 1) return new ArbiterClient(list[0]);
  return new ArbiterClient(`ipv4:${list.join(",")}`, {
    channelOptions: { "grpc.service_config": JSON.stringify({ loadBalancingConfig: [{ round_robin: {} }] }) },
  });
}

/** The backend log: one JSON line per thing the backend did. */
export class BackendLog {
  private readonly out: WriteStream;
  constructor(file: string) {
    this.out = createWriteStream(file, { flags: "a" });
  }
  write(line: Record<string, unknown>): void {
    this.out.write(JSON.stringify(line) + "\n");
  }
  close(): Promise<void> {
    return new Promise((resolve) => this.out.end(resolve));
  }
}

/** The outcome of a commit the backend cannot confirm (`commit: unknown`): see {@link Backend.commit}. */
export class UnknownOutcome extends Error {
  /** Marks it for code that cannot import this class (the stack files). */
  readonly unknownOutcome = true;
  constructor(readonly jobId: string) {
    super(`the commit of ${jobId} timed out: its outcome is not known`);
  }
}

/**
 * A fake backend for one session, as the trace's `backend` says per tool (and per call,
 * over its tool's): a side-effecting job's `prepare` takes `prepare_ms` (the trace's
 * default), its `commit` books (`commit_result`, else a reference `R-n`), fails (`fail`)
 * or times out (`unknown`, learning the real outcome `resolves_after_ms` later); a
 * read-only job's result comes `result_ms` after the call (null: never), with progress
 * reports at `progress_ms`. Each step is a backend log line (`execute`, `commit` with
 * its `outcome` when it did not book, `resolved`, `cancel` / `abort_prepare`) with the
 * session's trace and `t_ms` since the model session started (`start()`). `handle`
 * drives it from a core's actions; the LiveKit stack calls the steps itself.
 */
export class Backend {
  private t0 = performance.now();
  private started = false;
  private readonly prepares = new Map<string, AbortController>();
  private readonly jobs = new Map<string, { tool: string; callId: string }>();
  private readonly timers = new AbortController();
  private refs = 0;
  core!: JobReporter;

  constructor(
    readonly trace: TraceInfo,
    private readonly log: BackendLog,
  ) {}

  /** The model session started now (its first greeting arrived): t_ms counts from here. */
  start(): void {
    if (this.started) return;
    this.started = true;
    this.t0 = performance.now();
  }

  tMs(): number {
    return Math.round(performance.now() - this.t0);
  }

  private line(out: string, fields: Record<string, unknown>): void {
    this.log.write({ out, t_ms: this.tMs(), trace: this.trace.name, ...fields });
  }

  /** A tool with no two phases ran for callId (the no-integration run's log). */
  ran(callId: string): void {
    this.line("execute", { job_id: "", call_id: callId });
  }

  /** The backend of a job of `tool` that call `callId` opened: the tool's, the call's over it. */
  spec(tool: string, callId: string): BackendSpec {
    return { ...this.trace.backends[tool], ...this.trace.calls[callId]?.backend };
  }

  /** A job starts (Execute): remembered for its commit, logged. */
  job(jobId: string, tool: string, callId: string, sideEffect: boolean): void {
    this.jobs.set(jobId, { tool, callId });
    this.line("execute", { job_id: jobId, call_id: callId, tool, side_effect: sideEffect });
  }

  /**
   * Phase one: holds the slot (`prepare_ms`); rejects if `signal` aborts first. A job
   * the backend has not seen start (the tool helper's: no Execute action) starts here,
   * for `callId` and the tool the trace says it called.
   */
  async prepare(jobId: string, signal?: AbortSignal, callId?: string): Promise<void> {
    if (callId !== undefined && !this.jobs.has(jobId)) this.job(jobId, this.trace.calls[callId]?.tool ?? "book_slot", callId, true);
    const j = this.jobs.get(jobId);
    const ms = (j && this.spec(j.tool, j.callId).prepare_ms) ?? this.trace.prepareMs;
    await sleep(ms, undefined, { signal });
  }

  /**
   * Phase two: books it and resolves with the result; rejects with the backend's refusal
   * (`commit: fail`), or with {@link UnknownOutcome} when the commit timed out (`commit:
   * unknown`): then `resolved` is called with the real outcome once the backend learns it.
   */
  async commit(jobId: string, resolved?: (outcome: "committed" | "failed", result?: Record<string, unknown>) => void): Promise<Record<string, unknown>> {
    const j = this.jobs.get(jobId);
    const spec = j ? this.spec(j.tool, j.callId) : {};
    const how = spec.commit ?? "ok";
    this.line("commit", { job_id: jobId, ...(how !== "ok" ? { outcome: how === "fail" ? "failed" : "unknown" } : {}) });
    if (how === "fail") throw new Error("the backend refused the commit");
    if (how === "unknown") {
      if (spec.resolves_to && resolved) {
        void sleep(spec.resolves_after_ms ?? 0, undefined, { signal: this.timers.signal }).then(
          () => {
            this.line("resolved", { job_id: jobId, outcome: spec.resolves_to });
            resolved(spec.resolves_to!, spec.resolves_to === "committed" ? this.result(spec) : undefined);
          },
          () => undefined,
        );
      }
      throw new UnknownOutcome(jobId);
    }
    return this.result(spec);
  }

  private result(spec: BackendSpec): Record<string, unknown> {
    this.refs++;
    return { ...(spec.commit_result ?? this.trace.commitResult ?? { reference: `R-${this.refs}` }) };
  }

  /** Lets go of a prepare that will not be committed. */
  release(jobId: string, how: "cancel" | "abortPrepare"): void {
    this.prepares.get(jobId)?.abort();
    this.prepares.delete(jobId);
    this.line(how === "cancel" ? "cancel" : "abort_prepare", { job_id: jobId });
  }

  /**
   * A read-only job: reports progress (`onProgress`) at `progress_ms` while its result
   * has not come, and resolves with the result at `result_ms` (never when null).
   */
  async run(jobId: string, onProgress?: (p: Record<string, unknown>) => unknown): Promise<Record<string, unknown>> {
    const j = this.jobs.get(jobId);
    const spec = j ? this.spec(j.tool, j.callId) : {};
    const t0 = performance.now();
    const progress = spec.progress_ms ?? [];
    const until = (ms: number) => sleep(Math.max(0, t0 + ms - performance.now()), undefined, { signal: this.timers.signal });
    for (let i = 0; i < progress.length; i++) {
      if (spec.result_ms !== null && progress[i] >= (spec.result_ms ?? 0)) break;
      await until(progress[i]);
      await onProgress?.({ progress: `${i + 1}/${progress.length}` });
    }
    if (spec.result_ms === null) await new Promise<never>(() => undefined); // its result never comes
    await until(spec.result_ms ?? 0);
    return { ...(spec.result ?? { status: "ok" }) };
  }

  /** Handles the backend's actions of `core` (true), or says it is not one (false). */
  handle(a: Action, core?: JobReporter): boolean {
    if (core) this.core = core;
    const report = (p: Promise<unknown>) => void p.catch((err) => console.error(`${this.trace.name} ${a.type}: ${err}`));
    switch (a.type) {
      case "execute": {
        this.job(a.jobId, a.tool, a.call.id, a.sideEffect);
        if (!a.sideEffect) {
          report(this.run(a.jobId, (p) => this.core.progress(a.jobId, p)).then((r) => this.core.result(a.jobId, r), () => undefined));
          return true;
        }
        const abort = new AbortController();
        this.prepares.set(a.jobId, abort);
        report(
          this.prepare(a.jobId, abort.signal).then(
            () => this.core.prepared(a.jobId),
            () => undefined, // aborted: the core already handed out abortPrepare
          ),
        );
        return true;
      }
      case "abortPrepare":
      case "cancel":
        this.release(a.jobId, a.type);
        return true;
      case "commit":
        report(
          this.commit(a.jobId, (outcome, r) =>
            report(outcome === "committed" ? this.core.committed(a.jobId, r) : this.core.failed(a.jobId, "the backend reports the commit did not happen")),
          ).then(
            (r) => this.core.committed(a.jobId, r),
            (err) => (err instanceof UnknownOutcome ? this.core.unknown(a.jobId) : this.core.failed(a.jobId, String(err?.message ?? err))),
          ),
        );
        return true;
    }
    return false;
  }

  close(): void {
    for (const c of this.prepares.values()) c.abort();
    this.prepares.clear();
    this.timers.abort();
  }
}
