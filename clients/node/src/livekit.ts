/**
 * LiveKit Agents (agents-js, `@livekit/agents` 1.9) on Arbiter: function tools whose
 * execution Arbiter decides, and the session hook that reports what the model session
 * did. Import it from `@voicearbiter/arbiter-client/livekit` (it needs `@livekit/agents`;
 * the Google plugin's tap needs `@google/genai`, the OpenAI plugin's needs
 * `@livekit/agents-plugin-openai`).
 *
 * What LiveKit does on its own, and what this integration does about it:
 *
 * - **Answers calls itself, and not always.** A tool's return value becomes its function
 *   output and a thrown `Error` an error output ("An internal error occurred"): either
 *   answers the id. But LiveKit sends a tool's output only if the speech that ran it was
 *   not interrupted meanwhile (an interrupted one is committed to the agent's history
 *   and never sent), only after every queued speech played out, and never for a call it
 *   did not execute (`toolChoice: 'none'`, a generation skipped or interrupted before its
 *   tool stream was read). So the wrapped tool's `execute` never produces an output: it
 *   waits for the call's outcome (LiveKit shows the agent thinking) and ends with
 *   LiveKit's `StopResponse` (no output, no reply: the one outcome LiveKit has for
 *   "do not answer"). The integration sends each function response Arbiter hands out
 *   itself, at once, through the chat context (`agent.updateChatCtx` with a
 *   `FunctionCallOutput`: the plugin sends it as a Gemini tool response / an OpenAI
 *   `function_call_output`, then for OpenAI `generateReply()` asks for the reply), and
 *   nothing for a dead id.
 * - **Cancels a tool on interruption.** Barge-in interrupts the speech running the tool
 *   and aborts its `abortSignal`: `execute` ends at once (StopResponse). The call's fate
 *   is Arbiter's: a NON_BLOCKING call is still live after a barge-in and gets its answer
 *   when the job is decided; a BLOCKING one (the policy's behavior; on OpenAI, a call of
 *   a response cut off by barge-in: see `RealtimeAdapter`) is dead. The prepare is not
 *   touched.
 * - **A last guard on the wire: the model holds one answer per id, each note once.**
 *   The provider tap drops a final function response for one of the wrapped tools' ids
 *   that is dead or that the model holds already (a replayed chat context, a second
 *   path), and a note the model holds as often as the integration sent it. It keeps
 *   what the model's context holds: on Gemini per session (a connection that resumes
 *   one with its handle holds what the last held; nothing is ever removed), on OpenAI
 *   per connection, by item id: the OpenAI plugin moves an item by
 *   `conversation.item.delete` + `create` of the same id, and a deleted answer may be
 *   created again (a move, not a second answer). The Google plugin's chat-context diff
 *   re-sends a note whose place moved (alone, in a turn with other parts, or on
 *   reconnecting with a handle): those copies are dropped, part by part.
 * - **Deletes its own items.** The OpenAI plugin's `conversation.item.delete` (a move)
 *   is told to the adapter (`RealtimeAdapter.sent`): the server's
 *   `conversation.item.deleted` that echoes it is not a withdrawal of the call.
 * - **Races its own chat-context updates** (both plugins diff an update against the last
 *   one they finished, so two concurrent updates both send what the first added): the
 *   integration's updates go one at a time.
 * - **Sees the provider through a keyhole.** The Google plugin ignores Gemini's
 *   `voiceActivity`, emits `input_speech_started` both for `interrupted` and before every
 *   generation it did not ask for, and reports the input transcript as final only when
 *   the generation is done: its events cannot carry "hold the commit while the user
 *   speaks" or "a barge-in abandons BLOCKING calls". So the hook reads the provider's
 *   own messages: for Gemini every `LiveServerMessage` of the plugin's @google/genai
 *   session (a wrapper around `Live.connect`, scoped to the sessions of the model given
 *   to {@link LiveKitArbiter.model}), through {@link LiveAdapter}; for OpenAI the
 *   plugin's `openai_server_event_received` events, through {@link RealtimeAdapter}.
 *   Calls are registered from there, stamped as they arrive, whether LiveKit executes
 *   them or not.
 * - **Gates the microphone on BLOCKING calls** (Google plugin: no audio is sent while a
 *   BLOCKING call id is pending, until its response). A dead id is never answered, so
 *   the hook takes it out of the plugin's pending set: the user is not left unheard.
 * - **Reports its own restart as a fatal error** (Google plugin: it closes its socket to
 *   restart when tools or instructions change, the close carries no status (1005), and
 *   it emits an unrecoverable error that ends the AgentSession). The tap hands the
 *   plugin code 1000 for closes the plugin itself asked for.
 * - **Deduplicates calls** (`onDuplicate`): the wrapper sets `'allow'`; Arbiter
 *   deduplicates by business key and answers every repeat.
 * - **Acknowledges NON_BLOCKING Gemini calls** with an empty `willContinue` response at
 *   once (Google plugin, `toolBehavior: NON_BLOCKING`): left alone, it is interim (not
 *   an answer) and goes out before the id can die.
 * - **Sends an empty turn list** for `generateReply()` without instructions on Gemini 3.x
 *   models (Google plugin), which @google/genai refuses; the plugin then restarts its
 *   connection. The reply a note asks for always has instructions.
 * - **Sends a user text twice** after an interruption (Google plugin: as
 *   `realtimeInput.text` and as a content turn). The tap drops the `realtimeInput.text`
 *   of a note: it goes once, as the content turn.
 * - **Declares one behavior for every tool** (Google plugin's `toolBehavior`): give the
 *   integration the same in `behaviors`, for each wrapped tool.
 * - **Validates zod parameters** and answers a failed validation itself: the wrapper
 *   refuses zod schemas; declare a JSON schema (Arbiter rejects a call without its key
 *   arguments with an error response naming them).
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { llm, voice } from "@livekit/agents";
import type { Action } from "./actions.js";
import type { ArbiterClient } from "./client.js";
import type { ActionHandler, SessionCore, SessionCoreOptions } from "./core.js";
import { LiveAdapter, type LiveServerMessageLike } from "./live.js";
import { RealtimeAdapter, type RealtimeServerEventLike } from "./openai.js";

/**
 * The two phases of a side-effecting tool. `prepare` does the slow, reversible part
 * (hold the slot) and resolves when done; `commit` performs the side effect once Arbiter
 * says so and resolves with its result (a booking reference), which goes into the
 * function response; `release` lets go of a prepare that will not be committed (`how`:
 * `"abortPrepare"` while it still runs, its `signal` aborted too; `"cancel"` after it).
 * A prepare or commit that rejects reports the job failed (nothing was done), except a
 * commit that rejects with {@link CommitOutcomeUnknown}.
 */
export interface TwoPhase<Args = any> {
  prepare(args: Args, job: { jobId: string; callId: string; businessKey: string; signal: AbortSignal }): Promise<void>;
  commit(jobId: string, args: Args): Promise<Record<string, unknown> | void>;
  release(jobId: string, how: "cancel" | "abortPrepare"): void | Promise<void>;
}

/**
 * What a {@link TwoPhase} commit rejects with when it cannot tell whether the side effect
 * happened (the backend timed out): the job is reported unknown (`core.unknown`: the
 * model is told the outcome is being confirmed), not failed. Report the real outcome
 * once the backend knows it, with `lk.core.committed(jobId, result)` or
 * `lk.core.failed(jobId, why)`.
 */
export class CommitOutcomeUnknown extends Error {
  constructor(message = "the commit's outcome is not known") {
    super(message);
    this.name = "CommitOutcomeUnknown";
  }
}

/** Options of {@link LiveKitArbiter}. */
export interface LiveKitArbiterOptions extends SessionCoreOptions {
  /** Which realtime plugin the AgentSession runs: its provider's messages are tapped. */
  provider: "google" | "openai";
  /** Called with every action after the integration handled it (logs, metrics). */
  onAction?: ActionHandler;
  /**
   * The provider closed the model connection (`code`, `reason`; closes the plugin asked
   * for itself are not reported). The plugins reconnect on their own; an agent whose
   * conversation ends there calls {@link LiveKitArbiter.endRealtime} now, before they do.
   */
  onProviderClose?: (ev: { code: number; reason: string }) => void;
  /** What the model is asked to do with a note (the reply's instructions); default {@link NOTE_INSTRUCTIONS}. */
  noteInstructions?: string;
}

/** The instructions a note's reply goes with. */
export const NOTE_INSTRUCTIONS = "Tell the user, briefly, what the system note says about their request.";

interface CallState {
  id: string;
  name: string;
  dead?: string; // the skip's reason
  sent: boolean; // answered (handed to the plugin through the chat context)
  onWire: number; // final function responses for it the tap let through
  waiters: (() => void)[]; // LiveKit's executes waiting for the outcome
  opts?: any; // LiveKit's execute options, for a read-only tool
}

interface Wrapped {
  tool: llm.FunctionTool<any, any, any>;
  twoPhase?: TwoPhase;
}

/** The integration whose model a realtime session was created for (the tap's scope). */
const scope = new AsyncLocalStorage<LiveKitArbiter>();
const PATCHED = Symbol.for("arbiter.livekit.patched");

/**
 * One Arbiter session for one LiveKit AgentSession with a realtime model. Create it with
 * {@link LiveKitArbiter.create}, wrap the tools with {@link tool}, pass the model through
 * {@link model}, and {@link attach} the AgentSession before starting it.
 */
export class LiveKitArbiter {
  readonly core: LiveAdapter | RealtimeAdapter;
  private readonly opts: LiveKitArbiterOptions;
  private readonly calls = new Map<string, CallState>();
  private readonly tools = new Map<string, Wrapped>();
  private readonly prepares = new Map<string, AbortController>();
  private session: voice.AgentSession | undefined;
  private realtime: llm.RealtimeSession | undefined;
  private connections = 0;
  private ended = false;

  private constructor(client: ArbiterClient, sessionId: string, opts: LiveKitArbiterOptions) {
    this.opts = opts;
    const onAction = (a: Action) => this.act(a);
    const coreOpts: SessionCoreOptions = opts;
    // OpenAI: the plugin reads session.created before its event handler is on (the tap
    // never sees it): the tap reports each connection itself (_connectionOpened).
    this.core =
      opts.provider === "google"
        ? new LiveAdapter(client, sessionId, onAction, coreOpts)
        : new RealtimeAdapter(client, sessionId, onAction, { ...coreOpts, connectOnSessionCreated: false });
  }

  /**
   * Creates the integration and installs the provider tap once per process (a wrapper
   * of @google/genai's `Live.prototype.connect`, or of the OpenAI plugin's socket
   * creation), which does nothing for sessions not created through {@link model}.
   */
  static async create(client: ArbiterClient, sessionId: string, opts: LiveKitArbiterOptions): Promise<LiveKitArbiter> {
    if (opts.provider === "google") await tapGemini();
    else await tapOpenAI();
    return new LiveKitArbiter(client, sessionId, opts);
  }

  /**
   * Wraps a function tool so that Arbiter decides its execution. Declare `parameters`
   * as a JSON schema (not zod: LiveKit would answer a failed validation itself). With
   * `twoPhase` the tool is side-effecting and its own `execute` is not used; without, it
   * is read-only and its `execute` runs when Arbiter says so (its result becomes the
   * response). Either way LiveKit's call of `execute` returns the function response
   * Arbiter hands out for that call id, or throws `StopResponse` for a dead one.
   */
  tool<T extends llm.FunctionTool<any, any, any> | llm.AnonFunctionTool<any, any, any>>(name: string, tool: T, twoPhase?: TwoPhase): T {
    const params = tool.parameters as any;
    if (params && typeof params === "object" && ("_def" in params || "_zod" in params)) {
      throw new Error(`${name}: declare its parameters as a JSON schema: LiveKit answers a call that fails zod validation itself, and Arbiter answers it too`);
    }
    this.tools.set(name, { tool: tool as llm.FunctionTool<any, any, any>, twoPhase });
    const execute = (args: any, o: any) => this.execute(name, args, o);
    return { ...tool, execute, onDuplicate: "allow" } as T;
  }

  /**
   * Taps the model's realtime sessions (the AgentSession creates one when it starts):
   * the provider's messages go to the core; returns the model.
   */
  model<M extends llm.RealtimeModel>(model: M): M {
    const orig = model.session.bind(model);
    (model as any).session = (...a: unknown[]) => {
      const rs = scope.run(this, () => (orig as any)(...a)) as llm.RealtimeSession;
      this.bindRealtime(rs);
      return rs;
    };
    return model;
  }

  /** Hooks the AgentSession: notes go through it, its close closes the arbiter session. */
  attach(session: voice.AgentSession): void {
    this.session = session;
    session.on(voice.AgentSessionEventTypes.Close, () => void this.close());
  }

  /**
   * Ends the realtime session at once (its plugin would reconnect otherwise): for an
   * agent whose conversation is over when the provider closes (see `onProviderClose`).
   * Then close the AgentSession.
   */
  endRealtime(): void {
    this.ended = true;
    void this.realtime?.close();
  }

  /** Closes the arbiter session (delivers what is queued, then CloseSession; see `SessionCore.close`). */
  async close(timeoutMs?: number): Promise<void> {
    await this.core.close(timeoutMs);
    for (const st of this.calls.values()) this.settle(st);
  }

  // --- the provider tap ---------------------------------------------------------------

  /** @internal A provider connection of one of this integration's sessions opened: Connect. */
  _connectionOpened(): void {
    if (this.ended) return;
    void this.core.reconnect(`lk-${++this.connections}`);
  }

  /** @internal A Gemini server message, as it arrives. */
  _geminiMessage(m: LiveServerMessageLike): void {
    const calls = m.toolCall?.functionCalls;
    if (calls) {
      const ours = calls.filter((fc) => fc.name && this.tools.has(fc.name));
      for (const fc of ours) this.state(fc.id ?? "", fc.name!);
      m = { ...m, toolCall: { functionCalls: ours } };
    }
    void (this.core as LiveAdapter).feed(m);
  }

  /** @internal The provider closed a connection (not one the plugin closed itself). */
  _providerClosed(code: number, reason: string): void {
    this.opts.onProviderClose?.({ code, reason });
  }

  private bindRealtime(rs: llm.RealtimeSession): void {
    this.realtime = rs;
    if (this.opts.provider === "openai") {
      rs.on("openai_server_event_received" as any, (ev: RealtimeServerEventLike) => {
        const item = ev.type === "response.output_item.done" && ev.item?.type === "function_call" ? ev.item : undefined;
        const name = item?.name ?? (ev.type === "response.function_call_arguments.done" ? ev.name : undefined);
        if (name !== undefined && !this.tools.has(name)) return; // not ours: LiveKit's
        const callId = item?.call_id ?? (ev.type === "response.function_call_arguments.done" ? ev.call_id : undefined);
        if (callId && name) this.state(callId, name);
        void (this.core as RealtimeAdapter).feed(ev);
      });
    }
  }

  // --- LiveKit's side of a call ---------------------------------------------------------

  private state(id: string, name: string): CallState {
    let st = this.calls.get(id);
    if (!st) {
      st = { id, name, sent: false, onWire: 0, waiters: [] };
      this.calls.set(id, st);
    }
    return st;
  }

  /**
   * The wrapped tool's execute: LiveKit's side of one call. Waits until the call is
   * answered or dead (or LiveKit aborts it), then ends with StopResponse: the answer
   * went through the chat context.
   */
  private async execute(name: string, args: any, o: { toolCallId: string; abortSignal?: AbortSignal }): Promise<unknown> {
    const known = this.calls.has(o.toolCallId);
    const st = this.state(o.toolCallId, name);
    st.opts = o;
    if (!known) {
      // Not seen on the provider's wire (no tap: a pipeline LLM): register it now.
      void this.core.functionCall({ id: o.toolCallId, name, args });
    }
    if (st.dead === undefined && !st.sent && !o.abortSignal?.aborted) {
      await new Promise<void>((resolve) => {
        const done = () => {
          o.abortSignal?.removeEventListener("abort", done);
          resolve();
        };
        o.abortSignal?.addEventListener("abort", done, { once: true });
        st.waiters.push(done);
      });
    }
    throw new voice.StopResponse();
  }

  /** Lets LiveKit's executes of a call end. */
  private settle(st: CallState): void {
    for (const w of st.waiters.splice(0)) w();
  }

  /** @internal The tap's guard: may a final function response for `id` go on the wire? */
  _mayAnswer(id: string): boolean {
    const st = this.calls.get(id);
    if (!st) return true; // not one of ours
    if (st.dead !== undefined || st.onWire > 0) {
      this.log(`dropping a function response for ${id} (${st.dead !== undefined ? `dead: ${st.dead}` : "answered already"})`);
      return false;
    }
    st.onWire++;
    return true;
  }

  /**
   * @internal The OpenAI tap's guard: may this `conversation.item.create` go on a
   * connection whose model holds `held`? A `function_call_output` of a wrapped tool's
   * call: not for a dead id, not while the model holds an answer for the id. A user
   * message that is a note: not beyond the copies the integration sent. Everything
   * else goes. What goes is recorded in `held`.
   */
  _mayCreate(held: HeldItems, item: any): boolean {
    const id = typeof item?.id === "string" ? item.id : undefined;
    if (item?.type === "function_call_output") {
      const callId = String(item.call_id ?? "");
      const st = this.calls.get(callId);
      if (st && (st.dead !== undefined || held.count(`answer:${callId}`, id) > 0)) {
        this.log(`dropping a function response for ${callId} (${st.dead !== undefined ? `dead: ${st.dead}` : "the model holds one already"})`);
        return false;
      }
      if (st) st.onWire++;
      held.add(`answer:${callId}`, id);
      return true;
    }
    if (item?.type === "message" && item.role === "user") {
      const text = (item.content ?? []).map((c: any) => c?.text ?? "").join("");
      if (this._isNote(text)) {
        if (!this._mayHoldNote(text, held.count(`note:${text}`, id))) return false;
        held.add(`note:${text}`, id);
      }
    }
    return true;
  }

  /** @internal Is `id` one of the wrapped tools' calls that Arbiter declared dead? */
  _isDead(id: string): boolean {
    return this.calls.get(id)?.dead !== undefined;
  }

  /** @internal The tap's guard: is this text a note the integration sent? */
  _isNote(text: string | undefined): boolean {
    return !!text && this.noteCopies.has(text);
  }

  /**
   * @internal The tap's guard for a note in a context that holds `held` copies of it:
   * may one more go? As many as the integration sent (a note text Arbiter handed out
   * twice goes twice); a copy beyond that is the framework's re-send.
   */
  _mayHoldNote(text: string, held: number): boolean {
    const ok = held < (this.noteCopies.get(text) ?? 0);
    if (!ok) this.log(`dropping a note the model holds already: ${JSON.stringify(text.slice(0, 80))}`);
    return ok;
  }

  /** @internal The Gemini context a new connection talks to: the last one when it resumes (handle), else a new one. */
  _geminiContext(resumes: boolean): Map<string, number> {
    if (!resumes || !this.geminiNotes) this.geminiNotes = new Map();
    return this.geminiNotes;
  }

  private readonly noteCopies = new Map<string, number>(); // note text -> times the integration sent it
  private geminiNotes: Map<string, number> | undefined; // the current Gemini context: note text -> copies held

  // --- actions --------------------------------------------------------------------------

  private async act(a: Action): Promise<void> {
    try {
      switch (a.type) {
        case "execute":
          this.start(a);
          break;
        case "abortPrepare":
        case "cancel": {
          this.prepares.get(a.jobId)?.abort();
          this.prepares.delete(a.jobId);
          const w = this.jobTools.get(a.jobId);
          await w?.twoPhase?.release(a.jobId, a.type);
          break;
        }
        case "commit": {
          const w = this.jobTools.get(a.jobId);
          const args = this.jobArgs.get(a.jobId);
          void Promise.resolve(w?.twoPhase?.commit(a.jobId, args)).then(
            (r) => this.core.committed(a.jobId, r ?? undefined),
            (err) => (err instanceof CommitOutcomeUnknown ? this.core.unknown(a.jobId) : this.core.failed(a.jobId, String(err?.message ?? err))),
          ).catch((err) => this.log(`reporting job ${a.jobId}: ${err}`));
          break;
        }
        case "sendFunctionResponse":
          if (!a.willContinue) this.answer(a.id, a.name, a.payload);
          break;
        case "skip":
          this.kill(a.id, a.reason);
          break;
        case "sendNote":
          this.note(a.text, a.when);
          break;
      }
    } finally {
      await this.opts.onAction?.(a);
    }
  }

  private readonly jobTools = new Map<string, Wrapped>();
  private readonly jobArgs = new Map<string, any>();

  private start(a: Extract<Action, { type: "execute" }>): void {
    const w = this.tools.get(a.tool);
    this.jobArgs.set(a.jobId, a.args);
    if (!w) {
      void this.core.failed(a.jobId, `${a.tool} is not a tool of this agent`).catch(() => undefined);
      return;
    }
    this.jobTools.set(a.jobId, w);
    if (a.sideEffect) {
      if (!w.twoPhase) {
        void this.core.failed(a.jobId, `${a.tool} is side-effecting in the arbiter's policy, but was wrapped without its two phases`).catch(() => undefined);
        return;
      }
      const abort = new AbortController();
      this.prepares.set(a.jobId, abort);
      void w.twoPhase
        .prepare(a.args, { jobId: a.jobId, callId: a.call.id, businessKey: a.businessKey, signal: abort.signal })
        .then(
          () => {
            if (this.prepares.get(a.jobId) === abort) this.prepares.delete(a.jobId);
            if (!abort.signal.aborted) return this.core.prepared(a.jobId);
          },
          (err) => (abort.signal.aborted ? undefined : this.core.failed(a.jobId, String(err?.message ?? err))),
        )
        .catch((err) => this.log(`job ${a.jobId}: ${err}`));
      return;
    }
    // Read-only: run the tool's own execute (with LiveKit's options for the call, when
    // LiveKit has asked), and report its result.
    const st = this.calls.get(a.call.id);
    void Promise.resolve()
      .then(() => w.tool.execute(a.args, st?.opts ?? { toolCallId: a.call.id }))
      .then(
        (r: any) => this.core.result(a.jobId, r && typeof r === "object" ? r : { result: r }),
        (err: any) => this.core.failed(a.jobId, String(err?.message ?? err)),
      )
      .catch((err) => this.log(`job ${a.jobId}: ${err}`));
  }

  /** Arbiter's function response for `id`: sent now through the chat context. */
  private answer(id: string, name: string, payload: Record<string, unknown>): void {
    const st = this.state(id, name);
    if (st.sent || st.dead !== undefined) return;
    st.sent = true;
    this.updateCtx(`answering ${st.id}`, (ctx) =>
      ctx.insert(llm.FunctionCallOutput.create({ callId: st.id, name: st.name, output: JSON.stringify(payload), isError: false })),
    ).then((ok) => {
      // OpenAI speaks about a function output only when asked (response.create); Gemini
      // replies to a tool response by itself.
      if (!ok || this.opts.provider !== "openai") return;
      try {
        this.session?.generateReply();
      } catch (err) {
        // The AgentSession is closing: the answer is in the chat context, no reply comes.
        this.log(`asking for a reply to ${st.id}'s answer: ${err}`);
      }
    });
    this.settle(st);
  }

  /** A dead id: never answered; LiveKit's execute, if it waits, ends (StopResponse). */
  private kill(id: string, reason: string): void {
    const st = this.calls.get(id) ?? this.state(id, "");
    st.dead = reason;
    this.settle(st);
    // The Google plugin keeps a BLOCKING id pending (and the microphone gated) until its
    // response: there will be none.
    (this.realtime as any)?.pendingToolCallIds?.delete?.(id);
  }

  /**
   * A status note: a user message added to the agent's chat context (the plugin sends it
   * at once: a Gemini content turn, an OpenAI user message item), then a reply asked
   * for (`generateReply` with instructions). Not `generateReply({userInput})` alone: its
   * speech is queued, and an interruption before it runs drops the note. `when_idle`:
   * once the model is idle.
   */
  private note(text: string, when: "now" | "when_idle"): void {
    const send = () => {
      this.noteCopies.set(text, (this.noteCopies.get(text) ?? 0) + 1);
      void this.updateCtx("sending a note", (ctx) => ctx.addMessage({ role: "user", content: text })).then((ok) => {
        if (!ok) return;
        try {
          // With instructions: without them the Google plugin sends an empty `turns`
          // list to Gemini 3.x models, which @google/genai refuses (the plugin then
          // restarts its connection).
          this.session?.generateReply({ instructions: this.opts.noteInstructions ?? NOTE_INSTRUCTIONS });
        } catch (err) {
          this.log(`asking for a reply to a note: ${err}`);
        }
      });
    };
    if (when === "when_idle" && !this.core.modelIdle) void this.core.whenIdle().then(send);
    else send();
  }

  private ctxChain: Promise<unknown> = Promise.resolve();

  /**
   * Adds to the agent's chat context (which the plugin diffs and sends), one update at a
   * time: the plugins diff each update against the last one they finished, so two
   * concurrent updates would both send what the first added. Resolves true once sent.
   */
  private updateCtx(what: string, add: (ctx: llm.ChatContext) => void): Promise<boolean> {
    const run = this.ctxChain.then(async () => {
      const agent = this.session?.currentAgent;
      if (!agent) {
        this.log(`${what}: no agent (attach the AgentSession)`);
        return false;
      }
      const ctx = agent.chatCtx.copy();
      add(ctx);
      try {
        await agent.updateChatCtx(ctx);
        return true;
      } catch (err) {
        this.log(`${what} through the chat context: ${err}`);
        return false;
      }
    });
    this.ctxChain = run;
    return run;
  }

  private log(msg: string): void {
    (this.opts.logger ?? console).error(`arbiter livekit: ${msg}`);
  }
}

/** The integration whose session is connecting, if any (the tap's scope). */
function current(): LiveKitArbiter | undefined {
  return scope.getStore();
}

/** Wraps @google/genai's Live.connect once: the tapped sessions' messages and closes. */
async function tapGemini(): Promise<void> {
  const genai: any = await import("@google/genai");
  const proto = genai.Live.prototype;
  if (proto[PATCHED]) return;
  proto[PATCHED] = true;
  const connect = proto.connect;
  proto.connect = async function (this: unknown, params: any) {
    const lk = current();
    if (!lk) return connect.call(this, params);
    const cb = params.callbacks ?? {};
    let closing = false; // the plugin closes the socket itself to restart
    const wrapped = {
      ...params,
      callbacks: {
        ...cb,
        onopen: () => {
          lk._connectionOpened();
          cb.onopen?.();
        },
        onmessage: (m: LiveServerMessageLike) => {
          lk._geminiMessage(m); // stamped first, then LiveKit's own handling
          cb.onmessage?.(m);
        },
        onclose: (e: { code: number; reason: string }) => {
          if (closing) {
            // A close the plugin asked for carries no status (1005): not an error.
            if (e.code !== 1000) e = { code: 1000, reason: e.reason ?? "" } as any;
          } else {
            lk._providerClosed(e.code, e.reason);
          }
          cb.onclose?.(e);
        },
      },
    };
    const session = await connect.call(this, wrapped);
    // The guard: one final response per id of the wrapped tools, none for a dead one; a
    // note once (as its content turn, not also as realtime text).
    const sendToolResponse = session.sendToolResponse.bind(session);
    session.sendToolResponse = (p: { functionResponses?: any[] | any }) => {
      const all = Array.isArray(p.functionResponses) ? p.functionResponses : p.functionResponses ? [p.functionResponses] : [];
      const ok = all.filter((fr: any) => fr.willContinue === true ? !lk._isDead(fr.id) : lk._mayAnswer(fr.id));
      if (ok.length === 0) return;
      return sendToolResponse({ ...p, functionResponses: ok });
    };
    // The model context this connection talks to (a resumed session holds what the
    // last connection sent).
    const notes = lk._geminiContext(!!params?.config?.sessionResumption?.handle);
    const sendClientContent = session.sendClientContent.bind(session);
    session.sendClientContent = (p: { turns?: any; turnComplete?: boolean }) => {
      const turns: any[] = Array.isArray(p?.turns) ? p.turns : p?.turns ? [p.turns] : [];
      let dropped = false;
      const kept = turns
        .map((turn) => {
          if (turn?.role && turn.role !== "user") return turn;
          const parts = (turn?.parts ?? []).filter((part: any) => {
            const text = part?.text;
            if (!lk._isNote(text)) return true;
            const held = notes.get(text) ?? 0;
            if (!lk._mayHoldNote(text, held)) return false;
            notes.set(text, held + 1);
            return true;
          });
          if (parts.length === (turn?.parts ?? []).length) return turn;
          dropped = true;
          return parts.length ? { ...turn, parts } : undefined;
        })
        .filter((turn) => turn !== undefined);
      if (!dropped) return sendClientContent(p);
      if (kept.length === 0) return; // only notes the model holds already
      return sendClientContent({ ...p, turns: kept });
    };
    const sendRealtimeInput = session.sendRealtimeInput.bind(session);
    session.sendRealtimeInput = (p: { text?: string }) => {
      if (p && lk._isNote(p.text)) return;
      return sendRealtimeInput(p);
    };
    const close = session.close.bind(session);
    session.close = (...a: unknown[]) => {
      closing = true;
      return close(...a);
    };
    return session;
  };
}

/** Wraps the OpenAI plugin's socket creation once: the tapped sessions' server closes. */
async function tapOpenAI(): Promise<void> {
  const plugin: any = await import("@livekit/agents-plugin-openai");
  const proto = plugin.realtime.RealtimeSession.prototype;
  if (proto[PATCHED]) return;
  proto[PATCHED] = true;
  const create = proto.createWsConn;
  proto.createWsConn = async function (this: unknown, ...a: unknown[]) {
    const lk = current();
    const ws = await create.apply(this, a);
    if (lk) {
      lk._connectionOpened(); // a new connection is a new Realtime session
      // Registered before the plugin's own close handler: an agent that ends here
      // (endRealtime) stops the plugin before it reconnects.
      ws.on("close", (code: number, reason: Buffer) => {
        if (!ws[CLIENT_CLOSED]) lk._providerClosed(code, String(reason ?? ""));
      });
      // The guard: the model holds one function_call_output per id of the wrapped
      // tools (none for a dead one) and each note as often as it was sent, on this
      // connection, by item id (a delete + create of the same item is a move).
      const held = new HeldItems();
      const send = ws.send.bind(ws);
      ws.send = (data: unknown, ...rest: unknown[]) => {
        if (typeof data === "string" && data.includes('"conversation.item.')) {
          let ev: any;
          try {
            ev = JSON.parse(data);
          } catch {
            // not JSON: not ours to judge
          }
          if (ev?.type === "conversation.item.delete") {
            (lk.core as RealtimeAdapter).sent(ev); // the client's own delete: not a withdrawal
            held.deleted(ev.item_id);
          } else if (ev?.type === "conversation.item.create" && !lk._mayCreate(held, ev.item)) {
            return;
          }
        }
        return send(data, ...rest);
      };
      const close = ws.close.bind(ws);
      ws.close = (...args: unknown[]) => {
        // ws answers the server's close frame through close() too: only a close before
        // any close frame came is the client's.
        if (!ws._closeFrameReceived) ws[CLIENT_CLOSED] = true;
        return close(...args);
      };
    }
    return ws;
  };
}
const CLIENT_CLOSED = Symbol("arbiter.clientClosed");

/**
 * What one OpenAI connection's model holds of the integration's items, by item id:
 * `add` an item under a key (an answer's call id, a note's text), `deleted` when the
 * client deletes the item, `count` the items held under a key (an item created again
 * under an id it already holds counts as held: a second copy).
 */
export class HeldItems {
  private readonly byItem = new Map<string, string>(); // item id -> key
  private readonly counts = new Map<string, number>(); // key -> items held
  private anon = 0;

  /** Items held under `key`; `itemId`: the item about to be created (held already: counts as one more). */
  count(key: string, itemId?: string): number {
    const n = this.counts.get(key) ?? 0;
    return itemId !== undefined && this.byItem.has(itemId) ? Math.max(n, 1) : n;
  }

  add(key: string, itemId?: string): void {
    const id = itemId ?? `#${++this.anon}`;
    if (this.byItem.get(id) === key) return;
    this.byItem.set(id, key);
    this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
  }

  deleted(itemId: unknown): void {
    if (typeof itemId !== "string") return;
    const key = this.byItem.get(itemId);
    if (key === undefined) return;
    this.byItem.delete(itemId);
    this.counts.set(key, (this.counts.get(key) ?? 1) - 1);
  }
}

export type { SessionCore };
