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
import { LiveAdapter } from "./live.js";
import { RealtimeAdapter } from "./openai.js";
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
/** The instructions a note's reply goes with. */
export const NOTE_INSTRUCTIONS = "Tell the user, briefly, what the system note says about their request.";
/** The integration whose model a realtime session was created for (the tap's scope). */
const scope = new AsyncLocalStorage();
const PATCHED = Symbol.for("arbiter.livekit.patched");
/**
 * One Arbiter session for one LiveKit AgentSession with a realtime model. Create it with
 * {@link LiveKitArbiter.create}, wrap the tools with {@link tool}, pass the model through
 * {@link model}, and {@link attach} the AgentSession before starting it.
 */
export class LiveKitArbiter {
    core;
    opts;
    calls = new Map();
    tools = new Map();
    prepares = new Map();
    session;
    realtime;
    connections = 0;
    ended = false;
    constructor(client, sessionId, opts) {
        this.opts = opts;
        const onAction = (a) => this.act(a);
        const coreOpts = opts;
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
    static async create(client, sessionId, opts) {
        if (opts.provider === "google")
            await tapGemini();
        else
            await tapOpenAI();
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
    tool(name, tool, twoPhase) {
        const params = tool.parameters;
        if (params && typeof params === "object" && ("_def" in params || "_zod" in params)) {
            throw new Error(`${name}: declare its parameters as a JSON schema: LiveKit answers a call that fails zod validation itself, and Arbiter answers it too`);
        }
        this.tools.set(name, { tool: tool, twoPhase });
        const execute = (args, o) => this.execute(name, args, o);
        return { ...tool, execute, onDuplicate: "allow" };
    }
    /**
     * Taps the model's realtime sessions (the AgentSession creates one when it starts):
     * the provider's messages go to the core; returns the model.
     */
    model(model) {
        const orig = model.session.bind(model);
        model.session = (...a) => {
            const rs = scope.run(this, () => orig(...a));
            this.bindRealtime(rs);
            return rs;
        };
        return model;
    }
    /** Hooks the AgentSession: notes go through it, its close closes the arbiter session. */
    attach(session) {
        this.session = session;
        session.on(voice.AgentSessionEventTypes.Close, () => void this.close());
    }
    /**
     * Ends the realtime session at once (its plugin would reconnect otherwise): for an
     * agent whose conversation is over when the provider closes (see `onProviderClose`).
     * Then close the AgentSession.
     */
    endRealtime() {
        this.ended = true;
        void this.realtime?.close();
    }
    /** Closes the arbiter session (delivers what is queued, then CloseSession; see `SessionCore.close`). */
    async close(timeoutMs) {
        await this.core.close(timeoutMs);
        for (const st of this.calls.values())
            this.settle(st);
    }
    // --- the provider tap ---------------------------------------------------------------
    /** @internal A provider connection of one of this integration's sessions opened: Connect. */
    _connectionOpened() {
        if (this.ended)
            return;
        void this.core.reconnect(`lk-${++this.connections}`);
    }
    /** @internal A Gemini server message, as it arrives. */
    _geminiMessage(m) {
        const calls = m.toolCall?.functionCalls;
        if (calls) {
            const ours = calls.filter((fc) => fc.name && this.tools.has(fc.name));
            for (const fc of ours)
                this.state(fc.id ?? "", fc.name);
            m = { ...m, toolCall: { functionCalls: ours } };
        }
        void this.core.feed(m);
    }
    /** @internal The provider closed a connection (not one the plugin closed itself). */
    _providerClosed(code, reason) {
        this.opts.onProviderClose?.({ code, reason });
    }
    bindRealtime(rs) {
        this.realtime = rs;
        if (this.opts.provider === "openai") {
            rs.on("openai_server_event_received", (ev) => {
                const item = ev.type === "response.output_item.done" && ev.item?.type === "function_call" ? ev.item : undefined;
                const name = item?.name ?? (ev.type === "response.function_call_arguments.done" ? ev.name : undefined);
                if (name !== undefined && !this.tools.has(name))
                    return; // not ours: LiveKit's
                const callId = item?.call_id ?? (ev.type === "response.function_call_arguments.done" ? ev.call_id : undefined);
                if (callId && name)
                    this.state(callId, name);
                void this.core.feed(ev);
            });
        }
    }
    // --- LiveKit's side of a call ---------------------------------------------------------
    state(id, name) {
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
    async execute(name, args, o) {
        const known = this.calls.has(o.toolCallId);
        const st = this.state(o.toolCallId, name);
        st.opts = o;
        if (!known) {
            // Not seen on the provider's wire (no tap: a pipeline LLM): register it now.
            void this.core.functionCall({ id: o.toolCallId, name, args });
        }
        if (st.dead === undefined && !st.sent && !o.abortSignal?.aborted) {
            await new Promise((resolve) => {
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
    settle(st) {
        for (const w of st.waiters.splice(0))
            w();
    }
    /** @internal The tap's guard: may a final function response for `id` go on the wire? */
    _mayAnswer(id) {
        const st = this.calls.get(id);
        if (!st)
            return true; // not one of ours
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
    _mayCreate(held, item) {
        const id = typeof item?.id === "string" ? item.id : undefined;
        if (item?.type === "function_call_output") {
            const callId = String(item.call_id ?? "");
            const st = this.calls.get(callId);
            if (st && (st.dead !== undefined || held.count(`answer:${callId}`, id) > 0)) {
                this.log(`dropping a function response for ${callId} (${st.dead !== undefined ? `dead: ${st.dead}` : "the model holds one already"})`);
                return false;
            }
            if (st)
                st.onWire++;
            held.add(`answer:${callId}`, id);
            return true;
        }
        if (item?.type === "message" && item.role === "user") {
            const text = (item.content ?? []).map((c) => c?.text ?? "").join("");
            if (this._isNote(text)) {
                if (!this._mayHoldNote(text, held.count(`note:${text}`, id)))
                    return false;
                held.add(`note:${text}`, id);
            }
        }
        return true;
    }
    /** @internal Is `id` one of the wrapped tools' calls that Arbiter declared dead? */
    _isDead(id) {
        return this.calls.get(id)?.dead !== undefined;
    }
    /** @internal The tap's guard: is this text a note the integration sent? */
    _isNote(text) {
        return !!text && this.noteCopies.has(text);
    }
    /**
     * @internal The tap's guard for a note in a context that holds `held` copies of it:
     * may one more go? As many as the integration sent (a note text Arbiter handed out
     * twice goes twice); a copy beyond that is the framework's re-send.
     */
    _mayHoldNote(text, held) {
        const ok = held < (this.noteCopies.get(text) ?? 0);
        if (!ok)
            this.log(`dropping a note the model holds already: ${JSON.stringify(text.slice(0, 80))}`);
        return ok;
    }
    /** @internal The Gemini context a new connection talks to: the last one when it resumes (handle), else a new one. */
    _geminiContext(resumes) {
        if (!resumes || !this.geminiNotes)
            this.geminiNotes = new Map();
        return this.geminiNotes;
    }
    noteCopies = new Map(); // note text -> times the integration sent it
    geminiNotes; // the current Gemini context: note text -> copies held
    // --- actions --------------------------------------------------------------------------
    async act(a) {
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
                    void Promise.resolve(w?.twoPhase?.commit(a.jobId, args)).then((r) => this.core.committed(a.jobId, r ?? undefined), (err) => (err instanceof CommitOutcomeUnknown ? this.core.unknown(a.jobId) : this.core.failed(a.jobId, String(err?.message ?? err)))).catch((err) => this.log(`reporting job ${a.jobId}: ${err}`));
                    break;
                }
                case "sendFunctionResponse":
                    if (!a.willContinue)
                        this.answer(a.id, a.name, a.payload);
                    break;
                case "skip":
                    this.kill(a.id, a.reason);
                    break;
                case "sendNote":
                    this.note(a.text, a.when);
                    break;
            }
        }
        finally {
            await this.opts.onAction?.(a);
        }
    }
    jobTools = new Map();
    jobArgs = new Map();
    start(a) {
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
                .then(() => {
                if (this.prepares.get(a.jobId) === abort)
                    this.prepares.delete(a.jobId);
                if (!abort.signal.aborted)
                    return this.core.prepared(a.jobId);
            }, (err) => (abort.signal.aborted ? undefined : this.core.failed(a.jobId, String(err?.message ?? err))))
                .catch((err) => this.log(`job ${a.jobId}: ${err}`));
            return;
        }
        // Read-only: run the tool's own execute (with LiveKit's options for the call, when
        // LiveKit has asked), and report its result.
        const st = this.calls.get(a.call.id);
        void Promise.resolve()
            .then(() => w.tool.execute(a.args, st?.opts ?? { toolCallId: a.call.id }))
            .then((r) => this.core.result(a.jobId, r && typeof r === "object" ? r : { result: r }), (err) => this.core.failed(a.jobId, String(err?.message ?? err)))
            .catch((err) => this.log(`job ${a.jobId}: ${err}`));
    }
    /** Arbiter's function response for `id`: sent now through the chat context. */
    answer(id, name, payload) {
        const st = this.state(id, name);
        if (st.sent || st.dead !== undefined)
            return;
        st.sent = true;
        this.updateCtx(`answering ${st.id}`, (ctx) => ctx.insert(llm.FunctionCallOutput.create({ callId: st.id, name: st.name, output: JSON.stringify(payload), isError: false }))).then((ok) => {
            // OpenAI speaks about a function output only when asked (response.create); Gemini
            // replies to a tool response by itself.
            if (!ok || this.opts.provider !== "openai")
                return;
            try {
                this.session?.generateReply();
            }
            catch (err) {
                // The AgentSession is closing: the answer is in the chat context, no reply comes.
                this.log(`asking for a reply to ${st.id}'s answer: ${err}`);
            }
        });
        this.settle(st);
    }
    /** A dead id: never answered; LiveKit's execute, if it waits, ends (StopResponse). */
    kill(id, reason) {
        const st = this.calls.get(id) ?? this.state(id, "");
        st.dead = reason;
        this.settle(st);
        // The Google plugin keeps a BLOCKING id pending (and the microphone gated) until its
        // response: there will be none.
        this.realtime?.pendingToolCallIds?.delete?.(id);
    }
    /**
     * A status note: a user message added to the agent's chat context (the plugin sends it
     * at once: a Gemini content turn, an OpenAI user message item), then a reply asked
     * for (`generateReply` with instructions). Not `generateReply({userInput})` alone: its
     * speech is queued, and an interruption before it runs drops the note. `when_idle`:
     * once the model is idle.
     */
    note(text, when) {
        const send = () => {
            this.noteCopies.set(text, (this.noteCopies.get(text) ?? 0) + 1);
            void this.updateCtx("sending a note", (ctx) => ctx.addMessage({ role: "user", content: text })).then((ok) => {
                if (!ok)
                    return;
                try {
                    // With instructions: without them the Google plugin sends an empty `turns`
                    // list to Gemini 3.x models, which @google/genai refuses (the plugin then
                    // restarts its connection).
                    this.session?.generateReply({ instructions: this.opts.noteInstructions ?? NOTE_INSTRUCTIONS });
                }
                catch (err) {
                    this.log(`asking for a reply to a note: ${err}`);
                }
            });
        };
        if (when === "when_idle" && !this.core.modelIdle)
            void this.core.whenIdle().then(send);
        else
            send();
    }
    ctxChain = Promise.resolve();
    /**
     * Adds to the agent's chat context (which the plugin diffs and sends), one update at a
     * time: the plugins diff each update against the last one they finished, so two
     * concurrent updates would both send what the first added. Resolves true once sent.
     */
    updateCtx(what, add) {
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
            }
            catch (err) {
                this.log(`${what} through the chat context: ${err}`);
                return false;
            }
        });
        this.ctxChain = run;
        return run;
    }
    log(msg) {
        (this.opts.logger ?? console).error(`arbiter livekit: ${msg}`);
    }
}
/** The integration whose session is connecting, if any (the tap's scope). */
function current() {
    return scope.getStore();
}
/** Wraps @google/genai's Live.connect once: the tapped sessions' messages and closes. */
async function tapGemini() {
    const genai = await import("@google/genai");
    const proto = genai.Live.prototype;
    if (proto[PATCHED])
        return;
    proto[PATCHED] = true;
    const connect = proto.connect;
    proto.connect = async function (params) {
        const lk = current();
        if (!lk)
            return connect.call(this, params);
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
                onmessage: (m) => {
                    lk._geminiMessage(m); // stamped first, then LiveKit's own handling
                    cb.onmessage?.(m);
                },
                onclose: (e) => {
                    if (closing) {
                        // A close the plugin asked for carries no status (1005): not an error.
                        if (e.code !== 1000)
                            e = { code: 1000, reason: e.reason ?? "" };
                    }
                    else {
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
        session.sendToolResponse = (p) => {
            const all = Array.isArray(p.functionResponses) ? p.functionResponses : p.functionResponses ? [p.functionResponses] : [];
            const ok = all.filter((fr) => fr.willContinue === true ? !lk._isDead(fr.id) : lk._mayAnswer(fr.id));
            if (ok.length === 0)
                return;
            return sendToolResponse({ ...p, functionResponses: ok });
        };
        // The model context this connection talks to (a resumed session holds what the
        // last connection sent).
        const notes = lk._geminiContext(!!params?.config?.sessionResumption?.handle);
        const sendClientContent = session.sendClientContent.bind(session);
        session.sendClientContent = (p) => {
            const turns = Array.isArray(p?.turns) ? p.turns : p?.turns ? [p.turns] : [];
            let dropped = false;
            const kept = turns
                .map((turn) => {
                if (turn?.role && turn.role !== "user")
                    return turn;
                const parts = (turn?.parts ?? []).filter((part) => {
                    const text = part?.text;
                    if (!lk._isNote(text))
                        return true;
                    const held = notes.get(text) ?? 0;
                    if (!lk._mayHoldNote(text, held))
                        return false;
                    notes.set(text, held + 1);
                    return true;
                });
                if (parts.length === (turn?.parts ?? []).length)
                    return turn;
                dropped = true;
                return parts.length ? { ...turn, parts } : undefined;
            })
                .filter((turn) => turn !== undefined);
            if (!dropped)
                return sendClientContent(p);
            if (kept.length === 0)
                return; // only notes the model holds already
            return sendClientContent({ ...p, turns: kept });
        };
        const sendRealtimeInput = session.sendRealtimeInput.bind(session);
        session.sendRealtimeInput = (p) => {
            if (p && lk._isNote(p.text))
                return;
            return sendRealtimeInput(p);
        };
        const close = session.close.bind(session);
        session.close = (...a) => {
            closing = true;
            return close(...a);
        };
        return session;
    };
}
/** Wraps the OpenAI plugin's socket creation once: the tapped sessions' server closes. */
async function tapOpenAI() {
    const plugin = await import("@livekit/agents-plugin-openai");
    const proto = plugin.realtime.RealtimeSession.prototype;
    if (proto[PATCHED])
        return;
    proto[PATCHED] = true;
    const create = proto.createWsConn;
    proto.createWsConn = async function (...a) {
        const lk = current();
        const ws = await create.apply(this, a);
        if (lk) {
            lk._connectionOpened(); // a new connection is a new Realtime session
            // Registered before the plugin's own close handler: an agent that ends here
            // (endRealtime) stops the plugin before it reconnects.
            ws.on("close", (code, reason) => {
                if (!ws[CLIENT_CLOSED])
                    lk._providerClosed(code, String(reason ?? ""));
            });
            // The guard: the model holds one function_call_output per id of the wrapped
            // tools (none for a dead one) and each note as often as it was sent, on this
            // connection, by item id (a delete + create of the same item is a move).
            const held = new HeldItems();
            const send = ws.send.bind(ws);
            ws.send = (data, ...rest) => {
                if (typeof data === "string" && data.includes('"conversation.item.')) {
                    let ev;
                    try {
                        ev = JSON.parse(data);
                    }
                    catch {
                        // not JSON: not ours to judge
                    }
                    if (ev?.type === "conversation.item.delete") {
                        lk.core.sent(ev); // the client's own delete: not a withdrawal
                        held.deleted(ev.item_id);
                    }
                    else if (ev?.type === "conversation.item.create" && !lk._mayCreate(held, ev.item)) {
                        return;
                    }
                }
                return send(data, ...rest);
            };
            const close = ws.close.bind(ws);
            ws.close = (...args) => {
                // ws answers the server's close frame through close() too: only a close before
                // any close frame came is the client's.
                if (!ws._closeFrameReceived)
                    ws[CLIENT_CLOSED] = true;
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
    byItem = new Map(); // item id -> key
    counts = new Map(); // key -> items held
    anon = 0;
    /** Items held under `key`; `itemId`: the item about to be created (held already: counts as one more). */
    count(key, itemId) {
        const n = this.counts.get(key) ?? 0;
        return itemId !== undefined && this.byItem.has(itemId) ? Math.max(n, 1) : n;
    }
    add(key, itemId) {
        const id = itemId ?? `#${++this.anon}`;
        if (this.byItem.get(id) === key)
            return;
        this.byItem.set(id, key);
        this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
    }
    deleted(itemId) {
        if (typeof itemId !== "string")
            return;
        const key = this.byItem.get(itemId);
        if (key === undefined)
            return;
        this.byItem.delete(itemId);
        this.counts.set(key, (this.counts.get(key) ?? 1) - 1);
    }
}
