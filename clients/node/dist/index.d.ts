/**
 * Node client of Arbiter (API `arbiter.v1`): one authoritative decision about each
 * function call a realtime voice agent's model issues.
 *
 * - {@link LiveAdapter} sits in a Gemini Live (@google/genai) receive loop: feed it every
 *   server message, handle the plain actions it hands back.
 * - {@link RealtimeAdapter} does the same for an OpenAI Realtime session's server events.
 * - `@voicearbiter/arbiter-client/livekit`: LiveKit Agents (agents-js) function tools and
 *   session hook on the same core.
 * - {@link SessionCore} is the provider-neutral core under it (an outbox that delivers
 *   what the model session did, in order, with its age; the Decide contract;
 *   Decide/Complete; the Watch): an adapter for another provider calls its methods.
 * - {@link ToolJob} and {@link twoPhase}: all a tool needs behind the wire guard
 *   (`arbiter serve --proxy-listen`): a side-effecting tool's two phases by its call id
 *   alone; read-only tools need nothing.
 * - {@link ArbiterClient} is the API over @grpc/grpc-js, with typed errors and retries.
 * - `pb` holds the generated messages and stubs (ts-proto).
 */
export * from "./actions.js";
export { ArbiterClient, CHANNEL_SERVICE_CONFIG, DEFAULT_RETRY, USER_AGENT, newEventId, type ArbiterClientOptions, type EventCallOptions, type RetryPolicy, type TlsOptions, } from "./client.js";
export { SERVICE_CONFIG } from "./service-config.js";
export { DELIVERY_STUCK_MS, noTranscriptWarning, RETRIED_CODES, SessionCore, UndeliveredEventsError, together, type Behavior, type CancellationReason, type FunctionCallLike, type SessionCoreOptions, } from "./core.js";
export * from "./errors.js";
export * as pb from "./gen/arbiter/v1/arbiter.js";
export { LiveAdapter, type ActionHandler, type LiveAdapterOptions, type LiveServerMessageLike, type LiveSessionLike, type TranscriptionLike } from "./live.js";
export { RealtimeAdapter, bargeIn, type RealtimeAdapterOptions, type RealtimeClientEvent, type RealtimeServerEventLike } from "./openai.js";
export { ArbiterUnavailable, JobCancelled, JobTaken, ToolJob, twoPhase, type PhaseJob, type ToolJobOptions, type TwoPhase } from "./tool.js";
export { API_VERSION, VERSION } from "./version.js";
