import { BinaryReader, BinaryWriter } from "@bufbuild/protobuf/wire";
import { type CallOptions, type ChannelCredentials, Client, type ClientOptions, type ClientReadableStream, type ClientUnaryCall, type handleServerStreamingCall, type handleUnaryCall, type Metadata, type ServiceError, type UntypedServiceImplementation } from "@grpc/grpc-js";
import { Duration } from "../../google/protobuf/duration.js";
export declare const protobufPackage = "arbiter.v1";
export declare const protobufFileName = "arbiter/v1/arbiter.proto";
/**
 * Behavior is the function call's scheduling mode (Gemini Live's FunctionDeclaration
 * behavior). It matters for `interrupted`: an unanswered BLOCKING call is abandoned by
 * the server when the user barges in, a NON_BLOCKING one is not.
 */
export declare enum Behavior {
    /**
     * BEHAVIOR_UNSPECIFIED - Not given: the tool policy's `behavior` applies (NON_BLOCKING if the policy is
     * silent too).
     */
    BEHAVIOR_UNSPECIFIED = 0,
    /** BEHAVIOR_BLOCKING - The model waits for the function response; `interrupted` drops the call. */
    BEHAVIOR_BLOCKING = 1,
    /** BEHAVIOR_NON_BLOCKING - The model keeps talking; `interrupted` does not drop the call. */
    BEHAVIOR_NON_BLOCKING = 2,
    UNRECOGNIZED = -1
}
export declare function behaviorFromJSON(object: any): Behavior;
export declare function behaviorToJSON(object: Behavior): string;
/** ToolChoice is the tool choice the generation that issued the call ran under. */
export declare enum ToolChoice {
    /** TOOL_CHOICE_UNSPECIFIED - Same as AUTO. */
    TOOL_CHOICE_UNSPECIFIED = 0,
    /** TOOL_CHOICE_AUTO - The model may call tools. */
    TOOL_CHOICE_AUTO = 1,
    /**
     * TOOL_CHOICE_NONE - The model was told not to call tools (Gemini Live ignores this, so calls still
     * arrive). Such a call is rejected: answered at once with an error response saying it
     * was not executed, never left unanswered (the LiveKit agents-js bug #2249 that
     * wedged microphone input on Gemini Live).
     */
    TOOL_CHOICE_NONE = 2,
    UNRECOGNIZED = -1
}
export declare function toolChoiceFromJSON(object: any): ToolChoice;
export declare function toolChoiceToJSON(object: ToolChoice): string;
/** Disposition is what the agent does with a registered call. */
export declare enum Disposition {
    /** DISPOSITION_UNSPECIFIED - Never returned. */
    DISPOSITION_UNSPECIFIED = 0,
    /**
     * DISPOSITION_EXECUTE - Start the job: for a side-effecting tool, prepare it and ask Decide; for a
     * read-only tool, run it and Complete it with OUTCOME_RESULT.
     */
    DISPOSITION_EXECUTE = 1,
    /**
     * DISPOSITION_DUPLICATE - Do nothing: the call repeats an open job (same business key inside the dedupe
     * window). It is answered with that job's outcome, in effects now if the job is
     * finished, or in the effects of the job's Complete.
     */
    DISPOSITION_DUPLICATE = 2,
    /** DISPOSITION_REJECT - Do not run it: send the error response in effects now. */
    DISPOSITION_REJECT = 3,
    /**
     * DISPOSITION_RUN - Do not run anything: the call opened, joined or advanced a confirm-then-act run
     * (`run_id`); send the response in effects now, which tells the model what to ask
     * the user and which confirmation tool to call next.
     */
    DISPOSITION_RUN = 4,
    UNRECOGNIZED = -1
}
export declare function dispositionFromJSON(object: any): Disposition;
export declare function dispositionToJSON(object: Disposition): string;
/** SpeechEvent is one voice-activity or model-output event. */
export declare enum SpeechEvent {
    /** SPEECH_EVENT_UNSPECIFIED - Never valid: INVALID_ARGUMENT names `event`. */
    SPEECH_EVENT_UNSPECIFIED = 0,
    /**
     * SPEECH_EVENT_USER_ACTIVITY_START - User voice activity began (Gemini `voiceActivity ACTIVITY_START`, OpenAI
     * `input_audio_buffer.speech_started`). Opens an utterance that holds due commits
     * until its transcript arrives.
     */
    SPEECH_EVENT_USER_ACTIVITY_START = 1,
    /**
     * SPEECH_EVENT_USER_ACTIVITY_END - User voice activity ended (`ACTIVITY_END` / `speech_stopped`). The transcript
     * timeout of an utterance counts from here.
     */
    SPEECH_EVENT_USER_ACTIVITY_END = 2,
    /** SPEECH_EVENT_MODEL_OUTPUT_START - The model started producing audio (first audio chunk of a turn). */
    SPEECH_EVENT_MODEL_OUTPUT_START = 3,
    /**
     * SPEECH_EVENT_MODEL_GENERATION_COMPLETE - The model finished generating this turn (`generationComplete`); its audio may still
     * be playing.
     */
    SPEECH_EVENT_MODEL_GENERATION_COMPLETE = 4,
    /** SPEECH_EVENT_MODEL_TURN_COMPLETE - The model's turn is over (`turnComplete` / `response.done`): the model is idle. */
    SPEECH_EVENT_MODEL_TURN_COMPLETE = 5,
    /**
     * SPEECH_EVENT_INTERRUPTED - The server interrupted model output (`serverContent.interrupted`): user barge-in.
     * Every BLOCKING call still unanswered is abandoned (its id is dead, returned as a
     * skip) unless the interruption follows the arbiter's own `now` note by less than 1 s.
     */
    SPEECH_EVENT_INTERRUPTED = 6,
    UNRECOGNIZED = -1
}
export declare function speechEventFromJSON(object: any): SpeechEvent;
export declare function speechEventToJSON(object: SpeechEvent): string;
/** Role says whose words a transcript carries. */
export declare enum Role {
    /** ROLE_UNSPECIFIED - Same as USER. */
    ROLE_UNSPECIFIED = 0,
    /** ROLE_USER - The user's input transcription (`inputTranscription`). */
    ROLE_USER = 1,
    /** ROLE_MODEL - The model's output transcription (`outputTranscription`); marks the model speaking. */
    ROLE_MODEL = 2,
    UNRECOGNIZED = -1
}
export declare function roleFromJSON(object: any): Role;
export declare function roleToJSON(object: Role): string;
/** CancellationReason says why the provider cancelled function calls. */
export declare enum CancellationReason {
    /** CANCELLATION_REASON_UNSPECIFIED - Same as WITHDRAWN. */
    CANCELLATION_REASON_UNSPECIFIED = 0,
    /**
     * CANCELLATION_REASON_WITHDRAWN - The server withdrew the calls (Gemini toolCallCancellation): an undecided job of
     * theirs is cancelled; a committed one's note says it was done.
     */
    CANCELLATION_REASON_WITHDRAWN = 1,
    /**
     * CANCELLATION_REASON_PROVIDER_TIMEOUT - The provider gave up waiting for the function response after its own timeout
     * (Ultravox: 2.5 s by default) and will never read one. The ids are dead (skips with
     * reason "provider_timeout"); their job is not cancelled but abandoned, as a BLOCKING
     * call dropped by `interrupted` is: a re-issue within abandon_wait is deduplicated
     * against it and answered live; with none, the job ends as on_abandon says.
     */
    CANCELLATION_REASON_PROVIDER_TIMEOUT = 2,
    UNRECOGNIZED = -1
}
export declare function cancellationReasonFromJSON(object: any): CancellationReason;
export declare function cancellationReasonToJSON(object: CancellationReason): string;
/** Decision is the arbiter's authoritative answer for a side-effecting job. */
export declare enum Decision {
    /** DECISION_UNSPECIFIED - Never returned. */
    DECISION_UNSPECIFIED = 0,
    /** DECISION_PENDING - No decision yet (the wait ran out); ask again. */
    DECISION_PENDING = 1,
    /**
     * DECISION_COMMIT - Perform the irreversible side effect, then Complete with OUTCOME_COMMITTED (or
     * OUTCOME_FAILED if the backend failed).
     */
    DECISION_COMMIT = 2,
    /** DECISION_CANCEL - Release the prepared (or preparing) job, then Complete with OUTCOME_CANCELLED. */
    DECISION_CANCEL = 3,
    UNRECOGNIZED = -1
}
export declare function decisionFromJSON(object: any): Decision;
export declare function decisionToJSON(object: Decision): string;
/** Outcome is what happened to a job. */
export declare enum Outcome {
    /** OUTCOME_UNSPECIFIED - Never valid: INVALID_ARGUMENT names `outcome`. */
    OUTCOME_UNSPECIFIED = 0,
    /** OUTCOME_COMMITTED - The side effect was performed. Only after DECISION_COMMIT, else FAILED_PRECONDITION. */
    OUTCOME_COMMITTED = 1,
    /**
     * OUTCOME_CANCELLED - The job was released without its side effect. Only after DECISION_CANCEL, else
     * FAILED_PRECONDITION.
     */
    OUTCOME_CANCELLED = 2,
    /**
     * OUTCOME_FAILED - The job failed (prepare or commit); nothing was done. Allowed at any time before
     * completion. A failed job does not absorb repeats of its business key.
     */
    OUTCOME_FAILED = 3,
    /** OUTCOME_RESULT - A read-only tool's result. Only for read-only jobs, else FAILED_PRECONDITION. */
    OUTCOME_RESULT = 4,
    /**
     * OUTCOME_UNKNOWN - The commit's outcome is not known (the backend timed out). Only after
     * DECISION_COMMIT, else FAILED_PRECONDITION. The job's calls are answered "unknown":
     * do not say it is done or not done. The job stays in the dedupe table as possibly
     * committed, so a repeat is answered "still being confirmed" and never executed
     * again. Report OUTCOME_COMMITTED or OUTCOME_FAILED for the same job once the truth
     * is known: that produces the authoritative status note.
     */
    OUTCOME_UNKNOWN = 5,
    UNRECOGNIZED = -1
}
export declare function outcomeFromJSON(object: any): Outcome;
export declare function outcomeToJSON(object: Outcome): string;
/** RunState is where a confirm-then-act run stands. */
export declare enum RunState {
    /** RUN_STATE_UNSPECIFIED - Never returned. */
    RUN_STATE_UNSPECIFIED = 0,
    /** RUN_STATE_OPENED - Waiting for the user's answers or confirmation. */
    RUN_STATE_OPENED = 1,
    /** RUN_STATE_CONFIRMED - The user said yes: the request runs as `job_id`. */
    RUN_STATE_CONFIRMED = 2,
    /** RUN_STATE_REFUSED - The user said no: nothing was executed. */
    RUN_STATE_REFUSED = 3,
    /**
     * RUN_STATE_EXPIRED - Nobody resolved it within the policy's `run_timeout` (default 60 s): nothing was
     * executed.
     */
    RUN_STATE_EXPIRED = 4,
    /**
     * RUN_STATE_CANCELLED - No clear answer after the policy's `max_asks`, a stop intent, or the session
     * closed: nothing was executed.
     */
    RUN_STATE_CANCELLED = 5,
    UNRECOGNIZED = -1
}
export declare function runStateFromJSON(object: any): RunState;
export declare function runStateToJSON(object: RunState): string;
/** SessionState says what Connect found. */
export declare enum SessionState {
    /** SESSION_STATE_UNSPECIFIED - Never returned. */
    SESSION_STATE_UNSPECIFIED = 0,
    /** SESSION_STATE_NEW - The session did not exist: it starts now. */
    SESSION_STATE_NEW = 1,
    /** SESSION_STATE_RESUMED - The session goes on (in the epoch the request named, if it named one). */
    SESSION_STATE_RESUMED = 2,
    /**
     * SESSION_STATE_LOST - The request named an epoch the session no longer has: its store lost it. The
     * session (new, or a later lifetime) goes on in `epoch`; nothing of the lost one is
     * known, so every call made in it has an unknown outcome.
     */
    SESSION_STATE_LOST = 3,
    UNRECOGNIZED = -1
}
export declare function sessionStateFromJSON(object: any): SessionState;
export declare function sessionStateToJSON(object: SessionState): string;
/** JobState is where a job is in its life. */
export declare enum JobState {
    /** JOB_STATE_UNSPECIFIED - Never returned. */
    JOB_STATE_UNSPECIFIED = 0,
    /** JOB_STATE_PREPARING - Side-effecting: registered, prepare running. */
    JOB_STATE_PREPARING = 1,
    /** JOB_STATE_PREPARED - Side-effecting: prepared, waiting for the grace window or a hold to end. */
    JOB_STATE_PREPARED = 2,
    /** JOB_STATE_DECIDED - Decided (see decision), waiting for Complete. */
    JOB_STATE_DECIDED = 3,
    /** JOB_STATE_RUNNING - Read-only: running. */
    JOB_STATE_RUNNING = 4,
    /** JOB_STATE_DONE - Completed; see outcome. */
    JOB_STATE_DONE = 5,
    UNRECOGNIZED = -1
}
export declare function jobStateFromJSON(object: any): JobState;
export declare function jobStateToJSON(object: JobState): string;
/** Delivery says when to send a note. */
export declare enum Delivery {
    /** DELIVERY_UNSPECIFIED - Never returned. */
    DELIVERY_UNSPECIFIED = 0,
    /** DELIVERY_NOW - Send it now (the model is idle). */
    DELIVERY_NOW = 1,
    /**
     * DELIVERY_WHEN_IDLE - Send it when the model's turn is over: it is speaking, and a user turn would
     * interrupt it and cut its reply in half (the third seed: `turn_complete=true`
     * unconditionally interrupts generation).
     */
    DELIVERY_WHEN_IDLE = 2,
    UNRECOGNIZED = -1
}
export declare function deliveryFromJSON(object: any): Delivery;
export declare function deliveryToJSON(object: Delivery): string;
/** NoteVia is how a note reaches the model. */
export declare enum NoteVia {
    /** NOTE_VIA_UNSPECIFIED - Never returned. */
    NOTE_VIA_UNSPECIFIED = 0,
    /**
     * NOTE_VIA_USER_TURN - A user turn (Gemini `send_client_content` with turn_complete=true), sent as
     * `deliver` says. Never recommended as DELIVERY_NOW while the model is speaking.
     */
    NOTE_VIA_USER_TURN = 1,
    /**
     * NOTE_VIA_FUNCTION_RESPONSE - Inside a NON_BLOCKING call's function response, with `scheduling`: nothing is sent
     * besides that response. An agent whose provider ignores scheduling sends a user
     * turn as `deliver` says instead.
     */
    NOTE_VIA_FUNCTION_RESPONSE = 2,
    UNRECOGNIZED = -1
}
export declare function noteViaFromJSON(object: any): NoteVia;
export declare function noteViaToJSON(object: NoteVia): string;
/**
 * Scheduling is a function response's scheduling (Gemini Live `FunctionResponse
 * .scheduling` for NON_BLOCKING calls).
 */
export declare enum Scheduling {
    /** SCHEDULING_UNSPECIFIED - No scheduling. */
    SCHEDULING_UNSPECIFIED = 0,
    /**
     * SCHEDULING_WHEN_IDLE - Speak about the response when the model's current turn is over: used while the
     * model is speaking, so the note never cuts its reply.
     */
    SCHEDULING_WHEN_IDLE = 1,
    /** SCHEDULING_INTERRUPT - Interrupt and speak about it now: used when the model is idle. */
    SCHEDULING_INTERRUPT = 2,
    /** SCHEDULING_SILENT - Absorb it without speaking. */
    SCHEDULING_SILENT = 3,
    UNRECOGNIZED = -1
}
export declare function schedulingFromJSON(object: any): Scheduling;
export declare function schedulingToJSON(object: Scheduling): string;
/** RegisterCallRequest records one function call from the model. */
export interface RegisterCallRequest {
    /**
     * Required. The session (model connection) id: 1 to 128 characters from
     * [A-Za-z0-9_.:-]. INVALID_ARGUMENT names `session_id` otherwise. The session is
     * created if it does not exist yet; a closed session gives FAILED_PRECONDITION.
     */
    sessionId: string;
    /**
     * The call id the model gave (Gemini `FunctionCall.id`, OpenAI `call_id`): 1 to 128
     * characters from [A-Za-z0-9_.:-]. Optional: when empty the arbiter mints one matching
     * ^[a-zA-Z0-9_-]+$ and returns it. INVALID_ARGUMENT names `call_id` when malformed.
     */
    callId: string;
    /** Required. The function name: 1 to 128 characters from [A-Za-z0-9_.:-]. */
    tool: string;
    /**
     * The function call's arguments as the model sent them. At most 64 KiB when
     * serialised, and at most 16 levels of JSON objects and lists deep (the args object
     * itself is one level: {"a": {"b": 1}} is 2), because the arbiter echoes them and
     * the clients' protobuf runtimes refuse deeper Structs; INVALID_ARGUMENT names
     * `args` above either bound and nothing is recorded. For a side-effecting tool
     * every key argument of the tool policy is required unless the policy marks it
     * `optional`: a call without one (absent, null, empty, NaN, or "undefined") is
     * rejected (DISPOSITION_REJECT, an error response naming the argument) and never
     * executed or deduplicated. NaN and infinite numbers are taken as null.
     */
    args: {
        [key: string]: any;
    } | undefined;
    /** The call's scheduling mode; unspecified means the tool policy's. */
    behavior: Behavior;
    /** The tool choice of the generation that issued the call; NONE rejects the call. */
    toolChoice: ToolChoice;
    /**
     * Optional explicit business key (the agent resolved the request, e.g. to a slot id):
     * at most 512 bytes, no control characters (tab and line feed included), else
     * INVALID_ARGUMENT naming `business_key`. When set it replaces the policy's key for
     * deduplication.
     */
    businessKey: string;
    /**
     * How long ago the agent observed this event (received it from the model server),
     * measured on the agent's own clock when it sends this request: a retry sends its
     * own, larger age. The arbiter places the event at its arrival minus age (at most
     * 60 s back), so it is applied before every timer due after it: a commit is never
     * decided on a timeline missing an event the agent observed before the commit came
     * due. If the session already went past that time (another RPC fired its timers
     * meanwhile), every COMMIT decided after it whose outcome is not reported yet is
     * withdrawn; see DecideRequest. Unset or zero: the event happened as it arrives.
     * Negative, malformed, or over 5 minutes (no correct client observes an event that
     * long before it can deliver it: milliseconds sent as seconds?): INVALID_ARGUMENT
     * naming `age`. Between 60 s and 5 minutes the event is placed 60 s back.
     */
    age: Duration | undefined;
    /**
     * The argument text the model sent when the agent could not parse it into `args`
     * (a provider's malformed JSON), at most 64 KiB: the call is rejected
     * (DISPOSITION_REJECT, an error response saying its arguments could not be read), so
     * the id is answered and nothing runs; `args` is ignored. Do not turn unparseable
     * arguments into {}: an empty object makes every such call one business key.
     */
    rawArgs: string;
    /**
     * The session's epoch as Connect returned it (optional, 6 characters from
     * [0-9a-z]; any other value is INVALID_ARGUMENT naming `epoch`): when set and the
     * session no longer has it (its store lost the session: a Redis restart without
     * persistence), DATA_LOSS, and nothing changes: the session is not started again
     * silently. Connect again (with this epoch) to go on in a new one; the outcome of
     * every call made in the lost epoch is unknown.
     */
    epoch: string;
}
/** RegisterCallResponse says what to do with the call. */
export interface RegisterCallResponse {
    /** The call id: the request's, or the one minted for it. */
    callId: string;
    /** What to do with the call. */
    disposition: Disposition;
    /**
     * The job this call belongs to (opened by it, or the job it duplicates). Empty for
     * REJECT and RUN.
     */
    jobId: string;
    /** For DUPLICATE: the call id that opened the job. */
    duplicateOf: string;
    /**
     * The business key the call was deduplicated on: the tool name plus the policy's
     * canonical arguments, or the explicit key. Empty for REJECT and RUN.
     */
    businessKey: string;
    /**
     * True for a two-phase (side-effecting) tool: prepare, Decide, then commit or cancel.
     * False for a read-only tool: run it and Complete with OUTCOME_RESULT.
     */
    sideEffect: boolean;
    /**
     * What is due now: the error response of a REJECT, the prompt of a RUN, or the
     * response of a DUPLICATE whose job is finished.
     */
    effects: Effects | undefined;
    /** The confirm-then-act run the call opened, joined or answered; empty otherwise. */
    runId: string;
    /**
     * For EXECUTE: the function to run for job_id. It is the call's own tool, except for
     * a confirmation call (the policy's `confirm_tool`) that confirmed a run: that call
     * executes the run's tool, and its own id is answered with the job's outcome.
     */
    jobTool: string;
    /**
     * For EXECUTE: the arguments to run job_tool with (for a confirmed run, the opening
     * call's arguments with the step answers merged in).
     */
    jobArgs: {
        [key: string]: any;
    } | undefined;
}
/** ReportSpeechRequest reports one speech event. */
export interface ReportSpeechRequest {
    /** Required. The session id (see RegisterCallRequest.session_id). */
    sessionId: string;
    /** Required. What happened. */
    event: SpeechEvent;
    /**
     * The session's epoch as Connect returned it (optional, 6 characters from
     * [0-9a-z]; any other value is INVALID_ARGUMENT naming `epoch`): when set and the
     * session no longer has it (its store lost the session: a Redis restart without
     * persistence), DATA_LOSS, and nothing changes: the session is not started again
     * silently. Connect again (with this epoch) to go on in a new one; the outcome of
     * every call made in the lost epoch is unknown.
     */
    epoch: string;
    /**
     * The model server's id for the user utterance this voice-activity event belongs to,
     * when it gives one (OpenAI Realtime: the item_id of input_audio_buffer.speech_started
     * and speech_stopped); 1 to 128 characters from [A-Za-z0-9_.:-], else INVALID_ARGUMENT
     * naming `utterance_id`. A transcript naming it (ReportTranscriptRequest.utterance_id)
     * is attributed to that utterance.
     */
    utteranceId: string;
    /**
     * How long ago the agent observed this event (received it from the model server),
     * measured on the agent's own clock when it sends this request: a retry sends its
     * own, larger age. The arbiter places the event at its arrival minus age (at most
     * 60 s back), so it is applied before every timer due after it: a commit is never
     * decided on a timeline missing an event the agent observed before the commit came
     * due. If the session already went past that time (another RPC fired its timers
     * meanwhile), every COMMIT decided after it whose outcome is not reported yet is
     * withdrawn; see DecideRequest. Unset or zero: the event happened as it arrives.
     * Negative, malformed, or over 5 minutes (no correct client observes an event that
     * long before it can deliver it: milliseconds sent as seconds?): INVALID_ARGUMENT
     * naming `age`. Between 60 s and 5 minutes the event is placed 60 s back.
     */
    age: Duration | undefined;
    /**
     * The agent's id for this event (optional): 1 to 128 characters from
     * [A-Za-z0-9_.:-], unique among the session's ReportSpeech requests, else
     * INVALID_ARGUMENT naming `event_id`. A request carrying an id the session has seen
     * (it keeps the latest 32 event ids) is a retry of one already applied: nothing
     * changes, `repeat` is set and effects are empty (the first application's are in the
     * session's effect log: Poll or Watch with `after_seq`). Set it on every request
     * that may be retried after an ambiguous failure (an answer lost, a deadline), and
     * send the same id on every retry: without one a retry is applied again. An id the
     * session keeps for another event (another kind, text, call ids or result: what
     * the event says, not its `age`) is FAILED_PRECONDITION naming `event_id` (reason
     * EVENT_ID_REUSED) and changes nothing.
     */
    eventId: string;
}
/** ReportSpeechResponse carries what the event made due. */
export interface ReportSpeechResponse {
    /** Skips for abandoned call ids (INTERRUPTED); otherwise empty. */
    effects: Effects | undefined;
    /**
     * True when `event_id` names a request already applied: this one changed nothing
     * and its effects are empty.
     */
    repeat: boolean;
}
/** ReportTranscriptRequest reports a piece of transcription. */
export interface ReportTranscriptRequest {
    /** Required. The session id (see RegisterCallRequest.session_id). */
    sessionId: string;
    /** Whose words these are. */
    role: Role;
    /**
     * Required for ROLE_USER: the text, at most 16 KiB (INVALID_ARGUMENT names `text`).
     * Control characters are refused (INVALID_ARGUMENT naming `text`) but tab, line feed
     * and carriage return, which are white space. Which utterance it belongs to: see
     * `utterance_id`. An utterance keeps the last 8 KiB of its text.
     */
    text: string;
    /**
     * True for a partial transcript that will be replaced or continued. Only a final
     * (interim=false, the default) user transcript is checked for stop intent and can
     * release a held commit.
     */
    interim: boolean;
    /**
     * The session's epoch as Connect returned it (optional, 6 characters from
     * [0-9a-z]; any other value is INVALID_ARGUMENT naming `epoch`): when set and the
     * session no longer has it (its store lost the session: a Redis restart without
     * persistence), DATA_LOSS, and nothing changes: the session is not started again
     * silently. Connect again (with this epoch) to go on in a new one; the outcome of
     * every call made in the lost epoch is unknown.
     */
    epoch: string;
    /**
     * The utterance this user transcript belongs to, when the model server says (OpenAI
     * Realtime: conversation.item.input_audio_transcription.completed's item_id, as sent
     * on the voice-activity start). Unset: the oldest utterance whose voice activity
     * ended and that waits for its transcript (Gemini delivers input transcription late,
     * often after the next voice activity began), else the open one, else an utterance
     * of its own. 1 to 128 characters from [A-Za-z0-9_.:-], else INVALID_ARGUMENT naming
     * `utterance_id`.
     */
    utteranceId: string;
    /**
     * How long ago the agent observed this event (received it from the model server),
     * measured on the agent's own clock when it sends this request: a retry sends its
     * own, larger age. The arbiter places the event at its arrival minus age (at most
     * 60 s back), so it is applied before every timer due after it: a commit is never
     * decided on a timeline missing an event the agent observed before the commit came
     * due. If the session already went past that time (another RPC fired its timers
     * meanwhile), every COMMIT decided after it whose outcome is not reported yet is
     * withdrawn; see DecideRequest. Unset or zero: the event happened as it arrives.
     * Negative, malformed, or over 5 minutes (no correct client observes an event that
     * long before it can deliver it: milliseconds sent as seconds?): INVALID_ARGUMENT
     * naming `age`. Between 60 s and 5 minutes the event is placed 60 s back.
     */
    age: Duration | undefined;
    /**
     * The agent's id for this event (optional): 1 to 128 characters from
     * [A-Za-z0-9_.:-], unique among the session's ReportTranscript requests, else
     * INVALID_ARGUMENT naming `event_id`. A request carrying an id the session has seen
     * (it keeps the latest 32 event ids) is a retry of one already applied: nothing
     * changes, `repeat` is set and effects are empty (the first application's are in the
     * session's effect log: Poll or Watch with `after_seq`). Set it on every request
     * that may be retried after an ambiguous failure (an answer lost, a deadline), and
     * send the same id on every retry: without one a retry is applied again. An id the
     * session keeps for another event (another kind, text, call ids or result: what
     * the event says, not its `age`) is FAILED_PRECONDITION naming `event_id` (reason
     * EVENT_ID_REUSED) and changes nothing.
     */
    eventId: string;
    /**
     * The agent's own reading of the utterance as of this final user piece (its NLU, or
     * an LLM asked about it), optional: fused with the arbiter's own reading as the tool
     * policy's `agent_intent` says (cautious by default: it can hold, ask or cancel
     * where the arbiter heard nothing, never release what the arbiter holds), and a stop
     * the arbiter reads in the user's words always stops. It rides on the transcript,
     * not an RPC of its own, because it is a reading of that text: the utterance holds
     * the commit until its final piece arrives, so an agent whose reader is slow sends
     * the final piece when the reading is ready and nothing commits meanwhile, and the
     * piece's `event_id` makes the pair one retry. Only on a final user piece, else
     * INVALID_ARGUMENT naming `reading`.
     */
    reading: AgentReading | undefined;
}
/** AgentReading is an agent's own reading of a user utterance. */
export interface AgentReading {
    /**
     * What the utterance means for the pending action: "stop", "go_ahead", "amend",
     * "other" or "unclear" (the arbiter then asks the user, as the policy's
     * `on_unclear` says); else INVALID_ARGUMENT naming `reading.intent`.
     */
    intent: string;
    /**
     * How sure the reader is, from 0 to 1 (else INVALID_ARGUMENT naming
     * `reading.confidence`). Below the policy's `min_confidence` (0.7 by default) a
     * reading counts for nothing, except a stop, which counts as unclear.
     */
    confidence: number;
    /**
     * Which reader it was ("nlu-v3", "gpt-4o-mini"), optional: 1 to 128 characters from
     * [A-Za-z0-9_.:-], else INVALID_ARGUMENT naming `reading.source`. Named in the
     * reason of a decision it made and in the history.
     */
    source: string;
}
/** ReportTranscriptResponse carries what the transcript made due. */
export interface ReportTranscriptResponse {
    /** A status note when a stop was heard after a job had already committed. */
    effects: Effects | undefined;
    /**
     * The intent read from the utterance's text so far: "stop" (undecided jobs it bears
     * on are cancelled), "amend" (the user changed the request: jobs from before the
     * utterance are cancelled with a note asking to call again with the new details),
     * "unclear" (a reply that does not say whether the user still wants a pending job:
     * under the policy's on_unclear, ask, its commit is held and a note asks the model
     * to ask the user), "go_ahead" (a yes, or a refusal that answers another question:
     * "No, that's all." after "Anything else?"), "other" or "unknown" (no words, or
     * only the model's echo); empty for an interim or model transcript. With an agent's
     * reading (`reading`), the intent fused from both.
     */
    intent: string;
    /** Jobs this transcript cancelled (their Decide now returns CANCEL). */
    cancelledJobIds: string[];
    /**
     * True when `event_id` names a request already applied: this one changed nothing
     * and its effects, intent and cancelled_job_ids are empty.
     */
    repeat: boolean;
}
/** ReportToolCallCancellationRequest reports withdrawn call ids. */
export interface ReportToolCallCancellationRequest {
    /** Required. The session id (see RegisterCallRequest.session_id). */
    sessionId: string;
    /**
     * Required. The withdrawn call ids, at least one, each 1 to 128 characters from
     * [A-Za-z0-9_.:-]. INVALID_ARGUMENT names `call_ids[i]` otherwise.
     */
    callIds: string[];
    /**
     * How long ago the agent observed this event (received it from the model server),
     * measured on the agent's own clock when it sends this request: a retry sends its
     * own, larger age. The arbiter places the event at its arrival minus age (at most
     * 60 s back), so it is applied before every timer due after it: a commit is never
     * decided on a timeline missing an event the agent observed before the commit came
     * due. If the session already went past that time (another RPC fired its timers
     * meanwhile), every COMMIT decided after it whose outcome is not reported yet is
     * withdrawn; see DecideRequest. Unset or zero: the event happened as it arrives.
     * Negative, malformed, or over 5 minutes (no correct client observes an event that
     * long before it can deliver it: milliseconds sent as seconds?): INVALID_ARGUMENT
     * naming `age`. Between 60 s and 5 minutes the event is placed 60 s back.
     */
    age: Duration | undefined;
    /** Why the ids died; unspecified means WITHDRAWN. */
    reason: CancellationReason;
    /**
     * The agent's id for this event (optional): 1 to 128 characters from
     * [A-Za-z0-9_.:-], unique among the session's ReportToolCallCancellation requests, else
     * INVALID_ARGUMENT naming `event_id`. A request carrying an id the session has seen
     * (it keeps the latest 32 event ids) is a retry of one already applied: nothing
     * changes, `repeat` is set and effects are empty (the first application's are in the
     * session's effect log: Poll or Watch with `after_seq`). Set it on every request
     * that may be retried after an ambiguous failure (an answer lost, a deadline), and
     * send the same id on every retry: without one a retry is applied again. An id the
     * session keeps for another event (another kind, text, call ids or result: what
     * the event says, not its `age`) is FAILED_PRECONDITION naming `event_id` (reason
     * EVENT_ID_REUSED) and changes nothing.
     */
    eventId: string;
}
/** ReportToolCallCancellationResponse carries what the withdrawal made due. */
export interface ReportToolCallCancellationResponse {
    /** Skips for the withdrawn ids that were still pending. */
    effects: Effects | undefined;
    /** Jobs cancelled because an id of theirs was withdrawn before a decision. */
    cancelledJobIds: string[];
    /**
     * True when `event_id` names a request already applied: this one changed nothing
     * and its effects and cancelled_job_ids are empty.
     */
    repeat: boolean;
}
/**
 * DecideRequest asks for a job's decision. The job is named by `job_id`, or by
 * `call_id`, the id of the function call that opened it: the id a framework hands its
 * tool, so that a tool behind the wire guard (`arbiter serve --proxy-listen`) needs
 * nothing else from the arbiter (the clients' tool helpers send only it).
 */
export interface DecideRequest {
    /**
     * The session id. Required, except with `call_id` alone for a call the wire guard
     * registered: the guard's sessions are found by their calls' ids (NOT_FOUND naming
     * `call_id` when no session of the caller's tenant has it).
     */
    sessionId: string;
    /**
     * The job id from RegisterCallResponse.job_id. NOT_FOUND when unknown. Required
     * unless `call_id` is given; with both, the call's job must be this one.
     */
    jobId: string;
    /**
     * True once the backend's prepare (the slow, reversible phase) finished. The first
     * Decide with prepared=true starts the grace window; later ones change nothing.
     */
    prepared: boolean;
    /**
     * How long to wait for a decision: 0 answers at once; capped server-side at 30 s (and
     * by the RPC deadline). Negative is INVALID_ARGUMENT naming `wait`.
     */
    wait: Duration | undefined;
    /**
     * True when the agent follows the delivery contract: every event it observed before
     * sending this Decide was delivered (its ReportSpeech, ReportTranscript or
     * ReportToolCallCancellation answered OK), and it aborts this Decide (cancels the
     * RPC) when an event it observes while it waits is not delivered within 100 ms, or
     * its delivery fails. Then a COMMIT decided late (its commit came due during an
     * outage, or a timer or a store write ran late under load) is not withheld as PENDING
     * for 2 s first, and one whose record the store kept late is not taken back: both
     * guard an agent that may still hold undelivered events, and this one holds none. A
     * Decide the caller cancelled is still never answered COMMIT. Unset (false, the
     * default, and what older clients send): the arbiter assumes nothing about the
     * agent's events and withholds as described. Set it only from the component that
     * observes and delivers the session's events (a client core), not from a tool that
     * calls Decide beside them. The rule: docs/rules.md, "After an outage, a late commit
     * waits for what the agent observed".
     */
    eventsDelivered: boolean;
    /**
     * The call id of the function call that opened the job (RegisterCallRequest.call_id
     * with disposition EXECUTE), instead of `job_id`: 1 to 128 characters from
     * [A-Za-z0-9_.:-], INVALID_ARGUMENT naming `call_id` otherwise. NOT_FOUND naming
     * `call_id` when the session has no such call; FAILED_PRECONDITION naming it for a
     * call that executes nothing (a DUPLICATE, REJECT or RUN). A Decide by call id also
     * tells the wire guard that the job's tool reports to the arbiter: an answer the
     * agent's framework sends for the call before the job completes (a "CANCELLED" on
     * barge-in, an error text) is then held, and the model gets the job's own response.
     */
    callId: string;
}
/** DecideResponse is the decision. */
export interface DecideResponse {
    /** COMMIT, CANCEL or PENDING. */
    decision: Decision;
    /**
     * Why, in words (e.g. `stop intent in user speech: "Actually, stop."`); for PENDING,
     * what the job is waiting for.
     */
    reason: string;
    /** When the decision was made (arbiter clock); unset for PENDING. */
    decidedAt: Date | undefined;
    /** The job id asked about. */
    jobId: string;
    /**
     * The session the job belongs to (as the request named it, or as its call id found
     * it).
     */
    sessionId: string;
}
/**
 * CompleteRequest reports a job's outcome. The job is named by `job_id` or `call_id`,
 * as in DecideRequest.
 */
export interface CompleteRequest {
    /**
     * The session id. Required, except with `call_id` alone for a call the wire guard
     * registered (as DecideRequest.session_id).
     */
    sessionId: string;
    /**
     * The job id. NOT_FOUND when unknown. Required unless `call_id` is given; with both,
     * the call's job must be this one.
     */
    jobId: string;
    /** Required. What happened. */
    outcome: Outcome;
    /**
     * The backend's result (a booking reference, a read-only tool's output): the function
     * responses carry it whole under `result` (FunctionResponse.payload), so none of its
     * fields can overwrite the arbiter's. A result over 64 KiB JSON-encoded, or nesting
     * JSON objects and lists more than 16 levels deep, is not passed on, and never
     * refused: every call of the job is still answered with its outcome (a COMMITTED job
     * stays committed), and the responses carry `result_omitted` in place of `result`:
     * {"reason": "too_large", "bytes": 70123, "max_bytes": 65536, "message": "..."} or
     * {"reason": "too_deep", "max_depth": 16, "message": "..."}. A retry of the same
     * report is recognised by the result's digest. NaN and infinite numbers are taken as
     * null. A message over the server's --max-msg-size (1 MiB by default) is refused by
     * gRPC before the arbiter sees it (RESOURCE_EXHAUSTED): report such a result without
     * it.
     */
    result: {
        [key: string]: any;
    } | undefined;
    /**
     * For OUTCOME_FAILED: what went wrong, passed to the model. Never refused: control
     * characters (but tab, line feed and carriage return) become U+FFFD, and a text over
     * 4 KiB is cut to 4 KiB ending with a marker that gives its length.
     */
    error: string;
    /**
     * The call id of the function call that opened the job, instead of `job_id` (as
     * DecideRequest.call_id, with the same errors).
     */
    callId: string;
}
/** CompleteResponse carries what the outcome made due. */
export interface CompleteResponse {
    /**
     * Function responses for the job's live call ids (its own and duplicates) and the
     * status note if one is due. Ids of the job that died earlier were handed out as skips
     * when they died (ReportSpeech, ReportToolCallCancellation, CloseSession) and are not
     * repeated: every outcome reaches the agent once (a retried Complete returns this same
     * set again).
     */
    effects: Effects | undefined;
}
/** ConfigureSessionRequest sets a session's options. */
export interface ConfigureSessionRequest {
    /** Required. The session id (see RegisterCallRequest.session_id). */
    sessionId: string;
    /**
     * The session's language as a BCP 47 tag ("en", "es-MX", "fr", "de"): picks the
     * stop and amend phrases (built in: en, es, fr, de; others fall back to English
     * unless the tool policy lists them). Empty keeps the current one (default "en").
     * At most 35 characters from [A-Za-z0-9_.:-], else INVALID_ARGUMENT naming
     * `language`.
     */
    language: string;
    /**
     * True when the provider honours a function response's scheduling (Gemini Live:
     * WHEN_IDLE, SILENT, INTERRUPT on NON_BLOCKING calls). Then a status note due with a
     * NON_BLOCKING call's function response rides on it instead of a user turn, and
     * ReportProgress gives interim responses. Every ConfigureSession sets it: false
     * (the default) turns it off, so send it along with a language change.
     */
    responseScheduling: boolean;
    /**
     * The session's epoch as Connect returned it (optional, 6 characters from
     * [0-9a-z]; any other value is INVALID_ARGUMENT naming `epoch`): when set and the
     * session no longer has it (its store lost the session: a Redis restart without
     * persistence), DATA_LOSS, and nothing changes: the session is not started again
     * silently. Connect again (with this epoch) to go on in a new one; the outcome of
     * every call made in the lost epoch is unknown.
     */
    epoch: string;
    /**
     * True makes the session record from now on: its history (GetHistory) keeps up to
     * the server's larger bound (`--record-bytes`, 64 KiB by default) instead of the
     * last 1 KiB, so the whole session can be exported and replayed (`arbiter export`).
     * Send it in the session's first request to record it from its start. False leaves
     * recording as it is: it is never turned off. Recording costs: every RPC of the
     * session reads and writes its history with it.
     */
    record: boolean;
    /**
     * The session's time zone, an IANA name ("Europe/Paris", "America/New_York", "UTC";
     * at most 64 bytes), else INVALID_ARGUMENT naming `time_zone`. `as: datetime` keys
     * read relative dates ("tomorrow", "friday") and times said without an offset ("3pm",
     * "2026-11-05T09:30") in it, counting days from the session's start there; an ISO
     * 8601 date-time with an offset or `Z` is the instant it names whatever the zone.
     * Empty keeps the current one (default UTC). Send it before the session's first
     * call: a job keeps the key it was given.
     */
    timeZone: string;
}
/** ConfigureSessionResponse confirms the options. */
export interface ConfigureSessionResponse {
    /** The language now in force ("en" when none was ever set). */
    language: string;
    /** Whether notes may ride on function responses. */
    responseScheduling: boolean;
    /** Whether the session records (asked for, or sampled by `--history-sample`). */
    record: boolean;
    /** The time zone now in force ("UTC" when none was ever set). */
    timeZone: string;
}
/** PollRequest names a session. */
export interface PollRequest {
    /** Required. The session id. */
    sessionId: string;
    /**
     * Optional. When set, Poll returns every effect handed out after this `seq` (by
     * any RPC, by a Watch, or by the timers this Poll fires), not only those its own
     * step made due: an agent that remembers the highest `seq` it acted on misses
     * nothing, even when another client (a Watch) fired the timers first. Unset: only
     * what this Poll's own step made due. FAILED_PRECONDITION when it is beyond the last
     * effect or older than the log keeps (the last 256 effects).
     */
    afterSeq?: number | undefined;
}
/** PollResponse carries what came due. */
export interface PollResponse {
    /** Function responses (deadline answers), skips and notes that came due. */
    effects: Effects | undefined;
    /** The next time a timer of this session is due; unset when none. */
    nextTimer: Date | undefined;
}
/** GetSessionRequest names a session. */
export interface GetSessionRequest {
    /** Required. The session id. NOT_FOUND when unknown or expired. */
    sessionId: string;
}
/** GetSessionResponse is a snapshot of a session. */
export interface GetSessionResponse {
    /** The session id. */
    sessionId: string;
    /** Calls registered and not yet answered or marked dead. */
    pendingCalls: PendingCall[];
    /** Every job of the session, oldest first. */
    jobs: Job[];
    /** True while a user utterance is open (voice activity, or waiting for its transcript). */
    utteranceOpen: boolean;
    /**
     * True while the model is producing output (between MODEL_OUTPUT_START and
     * MODEL_TURN_COMPLETE or INTERRUPTED).
     */
    modelSpeaking: boolean;
    /**
     * The next time a timer of this session is due (grace window, transcript timeout,
     * abandon wait, dedupe expiry); unset when none.
     */
    nextTimer: Date | undefined;
    /** True after CloseSession. */
    closed: boolean;
    /** The session's version: incremented by every state change. */
    version: number;
    /** Every confirm-then-act run of the session, oldest first. */
    runs: Run[];
    /** The current connection id (Connect); empty before the first. */
    connectionId: string;
    /**
     * The `seq` of the last effect handed out: Watch with after_seq set to it streams
     * only what comes next.
     */
    lastSeq: number;
    /** The session's language for intent phrases ("en" when none was set). */
    language: string;
    /**
     * Whether the session said its provider honours response scheduling
     * (ConfigureSession).
     */
    responseScheduling: boolean;
    /** The session's epoch (see ConnectResponse.epoch). */
    epoch: string;
    /** The session's time zone ("UTC" when none was set; ConfigureSession). */
    timeZone: string;
}
/**
 * Run is a confirm-then-act run: a request of a tool whose policy says `confirm` or
 * lists `steps`, waiting for the user before anything executes.
 */
export interface Run {
    /**
     * The run id ("run-3"), unique in the session; the confirmation tool takes it as
     * `run_id`.
     */
    runId: string;
    /** The tool the run will execute. */
    tool: string;
    /** Where it stands. */
    state: RunState;
    /** The calls that opened and joined it, then the confirmation calls. */
    callIds: string[];
    /** For RUN_STATE_CONFIRMED: the job that executes the request. */
    jobId: string;
    /** Why it ended, in words; empty while open. */
    reason: string;
    /** When it was opened. */
    openedAt: Date | undefined;
}
/** RunUpdate is a change of a run's state (informational: nothing to send). */
export interface RunUpdate {
    /** The run. */
    runId: string;
    /** The run's tool. */
    tool: string;
    /** Its new state. */
    state: RunState;
    /** The call that caused the change; empty for an expiry or a stop. */
    callId: string;
    /** For RUN_STATE_CONFIRMED: the job that executes the request. */
    jobId: string;
    /** Why, in words. */
    reason: string;
    /** Its place in the session's effect log (see Watch). */
    seq: number;
}
/** ConnectRequest names the agent's new connection. */
export interface ConnectRequest {
    /** Required. The session id: the conversation, the same across connections. */
    sessionId: string;
    /**
     * Required. The new connection's id (any id the agent picks, e.g. a counter or the
     * provider's session handle): 1 to 128 characters from [A-Za-z0-9_.:-], else
     * INVALID_ARGUMENT naming `connection_id`.
     */
    connectionId: string;
    /**
     * The epoch an earlier Connect returned, when the agent had one (optional; 6
     * characters from [0-9a-z], any other value is INVALID_ARGUMENT naming `epoch`, not a
     * lost session). If the session no longer has it (its store lost the session), the
     * answer's state is SESSION_STATE_LOST and the agent goes on in the session's new
     * epoch: report every call still in flight from the lost one as of unknown outcome,
     * never as not done.
     */
    epoch: string;
}
/** ConnectResponse carries what the reconnect made due. */
export interface ConnectResponse {
    /**
     * Skips (reason "connection_closed") for the calls of earlier connections that were
     * still pending: never answer them on the new connection.
     */
    effects: Effects | undefined;
    /**
     * The session's epoch (6 characters from [0-9a-z]): name it in later requests, so a
     * session its store lost is reported (DATA_LOSS), not started again silently. Job
     * ids carry it too, so a job id of a lost epoch is NOT_FOUND in a later one.
     */
    epoch: string;
    /** New, resumed or lost. */
    state: SessionState;
}
/** ReportProgressRequest carries an interim result. */
export interface ReportProgressRequest {
    /** Required. The session id. NOT_FOUND when unknown. */
    sessionId: string;
    /** Required. The job still running. NOT_FOUND when unknown. */
    jobId: string;
    /**
     * The progress to show the model (e.g. {"percent": 40}): merged into the interim
     * payload with `status` "in_progress". At most 64 KiB serialised and 16 levels of
     * JSON objects and lists deep (as RegisterCallRequest.args); INVALID_ARGUMENT names
     * `result` above either bound and nothing changes.
     */
    result: {
        [key: string]: any;
    } | undefined;
    /**
     * The agent's id for this event (optional): 1 to 128 characters from
     * [A-Za-z0-9_.:-], unique among the session's ReportProgress requests, else
     * INVALID_ARGUMENT naming `event_id`. A request carrying an id the session has seen
     * (it keeps the latest 32 event ids) is a retry of one already applied: nothing
     * changes, `repeat` is set and effects are empty (the first application's are in the
     * session's effect log: Poll or Watch with `after_seq`). Set it on every request
     * that may be retried after an ambiguous failure (an answer lost, a deadline), and
     * send the same id on every retry: without one a retry is applied again. An id the
     * session keeps for another event (another kind, text, call ids or result: what
     * the event says, not its `age`) is FAILED_PRECONDITION naming `event_id` (reason
     * EVENT_ID_REUSED) and changes nothing.
     */
    eventId: string;
}
/** ReportProgressResponse carries the interim responses. */
export interface ReportProgressResponse {
    /**
     * Interim function responses (`interim` set) for the job's live NON_BLOCKING call
     * ids; empty when the provider does not take them.
     */
    effects: Effects | undefined;
    /**
     * True when `event_id` names a request already applied: this one changed nothing
     * and its effects are empty.
     */
    repeat: boolean;
}
/** WatchRequest opens or resumes a session's effect stream. */
export interface WatchRequest {
    /** Required. The session id. NOT_FOUND when unknown or expired. */
    sessionId: string;
    /**
     * Stream only the effects after this one: 0 streams from the session's first
     * effect (FAILED_PRECONDITION if the log no longer holds it; to start from now on an
     * old session, pass GetSessionResponse.last_seq). After a reconnect, the last `seq`
     * the agent acted on.
     */
    afterSeq: number;
}
/** WatchResponse is one effect: exactly one of its fields is set. */
export interface WatchResponse {
    /** The effect's place in the session's log: 1, 2, 3, ... without gaps. */
    seq: number;
    /**
     * When the effect was made due, on the arbiter's clock: when the RPC that made it
     * arrived, or, for one a timer made due, the timer's due time.
     */
    at: Date | undefined;
    /** A function response to send (final, unless `interim` is set). */
    response?: FunctionResponse | undefined;
    /** A call id that must never be answered. */
    skip?: Skip | undefined;
    /** A status note to send as it says. */
    note?: Note | undefined;
    /** A run changed state (informational). */
    run?: RunUpdate | undefined;
}
/** PendingCall is a call id still waiting for its outcome. */
export interface PendingCall {
    /** The call id. */
    callId: string;
    /** The function name. */
    tool: string;
    /** Its job. */
    jobId: string;
    /** How long since it was registered. */
    age: Duration | undefined;
    /** Whether it is BLOCKING. */
    behavior: Behavior;
}
/** Job is one execution of a tool: one business key, any number of call ids. */
export interface Job {
    /** The job id, unique in the session. */
    jobId: string;
    /** The function name. */
    tool: string;
    /** The business key. */
    businessKey: string;
    /** Where the job is. */
    state: JobState;
    /** The decision, once made (side-effecting jobs). */
    decision: Decision;
    /** Why. */
    reason: string;
    /** The outcome, once completed. */
    outcome: Outcome;
    /** Every call id of the job: the one that opened it first, then duplicates. */
    callIds: string[];
    /**
     * True while every call id of the job is dead after `interrupted` and no re-issue has
     * revived it: its commit is held.
     */
    abandoned: boolean;
    /** True for a two-phase tool. */
    sideEffect: boolean;
    /** When it was registered. */
    createdAt: Date | undefined;
}
/** CloseSessionRequest names a session to close. */
export interface CloseSessionRequest {
    /** Required. The session id. NOT_FOUND when unknown. */
    sessionId: string;
}
/** CloseSessionResponse carries what closing made due. */
export interface CloseSessionResponse {
    /** Skips for every call id that was still unanswered. */
    effects: Effects | undefined;
    /** Jobs cancelled because they were still undecided. */
    cancelledJobIds: string[];
}
/**
 * Effects is what the agent must send to the model, in order: function responses,
 * then notes. Skips are ids it must never answer.
 */
export interface Effects {
    /** Function responses to send now, one per call id, each exactly once. */
    responses: FunctionResponse[];
    /**
     * Call ids that must never be answered (abandoned by `interrupted`, withdrawn by a
     * tool-call cancellation, or left when the session closed).
     */
    skips: Skip[];
    /** Status notes to send the model as a user turn. */
    notes: Note[];
    /** Confirm-then-act runs that changed state (informational: nothing to send). */
    runs: RunUpdate[];
}
/**
 * FunctionResponse is one function response for the model (Gemini `FunctionResponse`,
 * OpenAI `function_call_output`).
 */
export interface FunctionResponse {
    /** The call id it answers. */
    callId: string;
    /** The function name it answers (Gemini requires it). */
    name: string;
    /**
     * The response body, written by the arbiter:
     *   - `status`: "committed"; "cancelled", "failed" or "rejected" (with `executed`
     *     false); "superseded" (with `executed` false and `superseded_by`: the user went
     *     on speaking and a later call of the tool made the whole request, which
     *     replaced this half-told one; see the tool policy's `continuation`); "ok" for a
     *     read-only call's result; "timeout" at a max_pending deadline; "unknown" for a
     *     commit whose outcome is not known yet (with `message`); "needs_input",
     *     "needs_confirmation" or "unclear" with `run_id`, `ask` and `next` for a
     *     confirm-then-act run; "error" for a confirmation that answers no open run;
     *     "in_progress" for an interim response.
     *   - `result`: the backend's result as Complete (or ReportProgress) gave it, whole,
     *     under this one key: it never overwrites the arbiter's fields, whatever names
     *     it uses ("status", "executed", ...). Absent when the result was empty.
     *     `result_omitted` instead when the result was over 64 KiB or 16 levels deep:
     *     {"reason": "too_large", "bytes": N, "max_bytes": 65536, "message": "..."} or
     *     {"reason": "too_deep", "max_depth": 16, "message": "..."}; `status` stands.
     *   - `reason` (a cancel's), `error` (why it was not executed), `duplicate_of` (the
     *     call this one repeated), `superseded_by` (the call that replaced this one),
     *     `status_note` (a note riding on this response).
     */
    payload: {
        [key: string]: any;
    } | undefined;
    /** The job it reports on; empty for a rejected call. */
    jobId: string;
    /**
     * True for a non-final response (a progress update, ReportProgress): send it with
     * Gemini's `will_continue` set; the call's final response is still to come.
     */
    interim: boolean;
    /**
     * Its place in the session's effect log (see Watch); a response repeated for a
     * retried request keeps its number.
     */
    seq: number;
}
/** Skip is a call id the agent must not answer. */
export interface Skip {
    /** The dead call id. */
    callId: string;
    /** The function name. */
    name: string;
    /**
     * Why: "abandoned" (interrupted BLOCKING call), "withdrawn" (tool-call
     * cancellation), "connection_closed" (made on an earlier connection, see Connect) or
     * "session_closed".
     */
    reason: string;
    /** Its job. */
    jobId: string;
    /** Its place in the session's effect log (see Watch). */
    seq: number;
}
/**
 * Note is an authoritative status note: text the agent sends the model as a user turn
 * (Gemini `send_client_content` with turn_complete=true), so what the model tells the
 * user matches what happened.
 */
export interface Note {
    /** The job the note is about. */
    jobId: string;
    /** The note, starting "System note:". */
    text: string;
    /** When to send it as a user turn. */
    deliver: Delivery;
    /** How the arbiter recommends sending it. */
    via: NoteVia;
    /**
     * For NOTE_VIA_FUNCTION_RESPONSE: the call id whose function response carries the
     * note (its payload holds it under "status_note"), answered in the same Effects.
     */
    callId: string;
    /** For NOTE_VIA_FUNCTION_RESPONSE: the scheduling to give that function response. */
    scheduling: Scheduling;
    /**
     * Why this delivery, in words (e.g. "the model is speaking: a user turn now would
     * interrupt its reply").
     */
    why: string;
    /**
     * The confirm-then-act run the note is about, for a run that started no job
     * (refused, expired, cancelled); job_id is then empty.
     */
    runId: string;
    /** Its place in the session's effect log (see Watch). */
    seq: number;
}
/** GetHistoryRequest names a session. */
export interface GetHistoryRequest {
    /** Required. The session id. NOT_FOUND when unknown, expired, or another tenant's. */
    sessionId: string;
}
/** GetHistoryResponse is a session's timeline. */
export interface GetHistoryResponse {
    /** The session id. */
    sessionId: string;
    /** The session's epoch (see ConnectResponse.epoch). */
    epoch: string;
    /** When the session started (its first event, arbiter clock): t_ms 0 of every entry. */
    createdAt: Date | undefined;
    /**
     * Whether the session records (ConfigureSession `record`, or sampled): its history
     * has the larger bound.
     */
    record: boolean;
    /**
     * The bound of the session's history, in bytes of its entries as the store keeps
     * them (JSON-encoded): past it the oldest entries are dropped. 0 when the server
     * keeps no history for the session.
     */
    maxBytes: number;
    /** What the history's entries take now, in the same measure. */
    bytes: number;
    /**
     * How many history entries (inputs, decisions, holds) were dropped from its front
     * to stay within max_bytes.
     */
    dropped: number;
    /**
     * The seq of the oldest effect the effect log still holds (it keeps the last 256):
     * 1 when it holds them all, 0 when no effect was handed out yet. Effects before it
     * are not in entries.
     */
    firstSeq: number;
    /**
     * True when entries hold every input since the session started: the history began
     * with the session, nothing was dropped, nothing clipped. Only such a history
     * exports to a trace that replays as the session ran.
     */
    complete: boolean;
    /**
     * The timeline, oldest first, in the order the arbiter made the entries (see
     * HistoryEntry.seq).
     */
    entries: HistoryEntry[];
    /**
     * The digest of the tool policy in force when the session's history began: 16 hex
     * digits, the first 64 bits of the SHA-256 of the policy as the arbiter holds it.
     * Empty when the history does not say.
     */
    policyDigest: string;
    /**
     * The digest of the tool policy of the server answering now. When it differs from
     * policy_digest the session began under another policy than `policy` is taken from.
     */
    serverPolicyDigest: string;
    /**
     * The answering server's tool policy restricted to the tools the history's calls
     * name (and the tools their confirmation calls confirm), in the tool-policy file
     * format (docs/trace-format.md, "Tool policy file") as a JSON object, so a replay
     * can run under it.
     */
    policy: {
        [key: string]: any;
    } | undefined;
}
/**
 * HistoryEntry is one entry of a session's timeline: exactly one of its kinds is set.
 * Inputs: call ... close. What the arbiter made of them: decision, revoked, hold,
 * answered.
 * Effects: response, skip, note, run (the effect log's, with their seq).
 */
export interface HistoryEntry {
    /**
     * When, in milliseconds since the session started (created_at), on the arbiter's
     * clock: when an input arrived, a decision was made or a hold began or ended (a
     * timer's at its due time), an effect was made due.
     */
    tMs: number;
    /** The same time as a timestamp (created_at plus t_ms: millisecond precision). */
    at: Date | undefined;
    /**
     * For an input reported with an `age`: when the agent observed it, in milliseconds
     * since the session started. The arbiter applied it then, or at its own clock when
     * that had gone past (withdrawing the commits decided since: `revoked` entries).
     * Unset otherwise.
     */
    observedMs?: number | undefined;
    /**
     * For an effect, its seq. For any other entry, the seq of the last effect handed out
     * before it (0: none yet): an entry with seq N comes after effect N and before
     * effect N+1. Entries are in that order.
     */
    seq: number;
    /**
     * True when the entry alone was larger than the history's bound: its args, raw args
     * and results are left out, its text, reason or error cut to 128 bytes.
     */
    clipped: boolean;
    /** A RegisterCall and what it said. */
    call?: HistoryCall | undefined;
    /** A ReportSpeech. */
    speech?: HistorySpeech | undefined;
    /** A ReportTranscript. */
    transcript?: HistoryTranscript | undefined;
    /** A ReportToolCallCancellation that killed an id. */
    withdraw?: HistoryWithdraw | undefined;
    /**
     * The first Decide with prepared=true of a job still undecided: its prepare
     * finished.
     */
    prepared?: HistoryJob | undefined;
    /** A Complete that recorded an outcome. */
    complete?: HistoryComplete | undefined;
    /** A ConfigureSession. */
    configure?: HistoryConfigure | undefined;
    /** A Connect that switched connections. */
    connect?: HistoryConnect | undefined;
    /** A ReportProgress that handed out interim responses. */
    progress?: HistoryProgress | undefined;
    /** A CloseSession that closed the session. */
    close?: HistoryClose | undefined;
    /** A decision: which job, commit or cancel, why. */
    decision?: HistoryDecision | undefined;
    /**
     * A commit decision withdrawn before any Decide handed it out: an event the agent
     * observed before it, or one without an `age`, arrived after it (see Decide).
     */
    revoked?: HistoryJob | undefined;
    /** A hold on a job's commit began or ended. */
    hold?: HistoryHold | undefined;
    /** A Decide handed out the job's COMMIT: from then on it stands, whatever arrives. */
    answered?: HistoryJob | undefined;
    /** A function response handed out. */
    response?: FunctionResponse | undefined;
    /** A call id marked dead. */
    skip?: Skip | undefined;
    /** A status note handed out. */
    note?: Note | undefined;
    /** A run changed state. */
    run?: RunUpdate | undefined;
}
/** HistoryCall is a RegisterCall as the agent sent it and what the arbiter answered. */
export interface HistoryCall {
    /** The call id: the agent's, or the one the arbiter minted (minted). */
    callId: string;
    /** True when the agent gave no call id. */
    minted: boolean;
    /** The function name. */
    tool: string;
    /** The arguments (unset for a call sent with raw_args, or when clipped). */
    args: {
        [key: string]: any;
    } | undefined;
    /** The argument text the agent could not parse. */
    rawArgs: string;
    /** The call's own scheduling mode (unspecified: the policy's applied). */
    behavior: Behavior;
    /** The tool choice it was sent under. */
    toolChoice: ToolChoice;
    /** The explicit business key it carried. */
    businessKey: string;
    /** What RegisterCall said. */
    disposition: Disposition;
    /** The job it opened or duplicates. */
    jobId: string;
    /** The run it opened, joined or answered. */
    runId: string;
    /** For a duplicate: the call that opened the job. */
    duplicateOf: string;
    /**
     * For EXECUTE, when the job runs another tool than the call's (a confirmation
     * that confirmed its run): that tool.
     */
    jobTool: string;
    /** For EXECUTE: the job is two-phase (prepare, Decide, commit or cancel). */
    sideEffect: boolean;
}
/** HistorySpeech is a ReportSpeech. */
export interface HistorySpeech {
    /** What happened. */
    event: SpeechEvent;
    /** The model server's utterance id, as reported. */
    utteranceId: string;
    /**
     * The arbiter's number of the user utterance a voice-activity start opened or an
     * end ended (1, 2, ...; the same numbers as holds); 0 when none.
     */
    utterance: number;
}
/** HistoryTranscript is a ReportTranscript. */
export interface HistoryTranscript {
    /** Whose words. */
    role: Role;
    /** The text (its last 128 bytes when clipped). */
    text: string;
    /** True for an interim piece. */
    interim: boolean;
    /** The model server's utterance id, as reported. */
    utteranceId: string;
    /**
     * The arbiter's number of the user utterance the piece was attributed to; 0 for the
     * model's.
     */
    utterance: number;
    /**
     * The utterance's intent after a final user piece: stop, amend, unclear, go_ahead,
     * other or unknown.
     */
    intent: string;
    /**
     * For a final user piece, which of the utterance's words were not read as the
     * user's and why ("8 words repeat what the model said within the last 10s: its
     * echo, not the user's"); empty when all were.
     */
    discarded: string;
    /** The agent's reading the piece carried (ReportTranscriptRequest.reading). */
    reading: AgentReading | undefined;
}
/** HistoryWithdraw is a ReportToolCallCancellation. */
export interface HistoryWithdraw {
    /** The ids withdrawn (the first 4 when clipped). */
    callIds: string[];
    /** Why. */
    reason: CancellationReason;
}
/** HistoryJob names a job. */
export interface HistoryJob {
    /** The job id. */
    jobId: string;
}
/** HistoryComplete is a Complete that recorded an outcome. */
export interface HistoryComplete {
    /** The job. */
    jobId: string;
    /** The outcome reported. */
    outcome: Outcome;
    /**
     * The backend's result (unset when clipped, or when it was left out: see
     * result_omitted).
     */
    result: {
        [key: string]: any;
    } | undefined;
    /**
     * The error reported with OUTCOME_FAILED, as the job kept it (cleaned of control
     * characters and cut to 4 KiB: see CompleteRequest.error).
     */
    error: string;
    /**
     * Set when the result was over its bound and left out: the same object the job's
     * function responses carry under `result_omitted` (see CompleteRequest.result).
     */
    resultOmitted: {
        [key: string]: any;
    } | undefined;
}
/** HistoryConfigure is a ConfigureSession. */
export interface HistoryConfigure {
    /** The language asked for (empty: kept). */
    language: string;
    /** Whether the provider honours response scheduling. */
    responseScheduling: boolean;
    /** Whether it asked to record. */
    record: boolean;
    /** The time zone asked for (empty: kept). */
    timeZone: string;
}
/** HistoryConnect is a Connect that switched connections. */
export interface HistoryConnect {
    /** The new connection's id. */
    connectionId: string;
    /** What Connect found. */
    state: SessionState;
}
/** HistoryProgress is a ReportProgress that handed out interim responses. */
export interface HistoryProgress {
    /** The job. */
    jobId: string;
    /** The interim result (unset when clipped). */
    result: {
        [key: string]: any;
    } | undefined;
}
/** HistoryClose is a CloseSession that closed the session. */
export interface HistoryClose {
}
/** HistoryDecision is one decision of the arbiter. */
export interface HistoryDecision {
    /** The job decided. */
    jobId: string;
    /** COMMIT or CANCEL. */
    decision: Decision;
    /**
     * Why a cancel was decided: stop, amend, transcript_timeout, abandoned, withdrawn,
     * session_closed, failed, deadline or superseded (a later call of the tool that
     * continued the request replaced it); empty for a commit.
     */
    cause: string;
    /** Why, in words (as DecideResponse.reason). */
    reason: string;
}
/**
 * HistoryHold is a hold on a job's commit beginning or ending. A job is held while it
 * is undecided and either abandoned (every call id dead after `interrupted` or a
 * provider timeout, until a re-issue or the abandon wait), or prepared with a
 * relevant user utterance still open (until it settles: voice activity ended and its
 * final transcript came).
 */
export interface HistoryHold {
    /** The job held. */
    jobId: string;
    /** The utterance that holds it (HistorySpeech.utterance); 0 for abandonment. */
    utterance: number;
    /** True for abandonment. */
    abandoned: boolean;
    /** False when the hold begins, true when it ends. */
    end: boolean;
}
export declare const RegisterCallRequest: MessageFns<RegisterCallRequest>;
export declare const RegisterCallResponse: MessageFns<RegisterCallResponse>;
export declare const ReportSpeechRequest: MessageFns<ReportSpeechRequest>;
export declare const ReportSpeechResponse: MessageFns<ReportSpeechResponse>;
export declare const ReportTranscriptRequest: MessageFns<ReportTranscriptRequest>;
export declare const AgentReading: MessageFns<AgentReading>;
export declare const ReportTranscriptResponse: MessageFns<ReportTranscriptResponse>;
export declare const ReportToolCallCancellationRequest: MessageFns<ReportToolCallCancellationRequest>;
export declare const ReportToolCallCancellationResponse: MessageFns<ReportToolCallCancellationResponse>;
export declare const DecideRequest: MessageFns<DecideRequest>;
export declare const DecideResponse: MessageFns<DecideResponse>;
export declare const CompleteRequest: MessageFns<CompleteRequest>;
export declare const CompleteResponse: MessageFns<CompleteResponse>;
export declare const ConfigureSessionRequest: MessageFns<ConfigureSessionRequest>;
export declare const ConfigureSessionResponse: MessageFns<ConfigureSessionResponse>;
export declare const PollRequest: MessageFns<PollRequest>;
export declare const PollResponse: MessageFns<PollResponse>;
export declare const GetSessionRequest: MessageFns<GetSessionRequest>;
export declare const GetSessionResponse: MessageFns<GetSessionResponse>;
export declare const Run: MessageFns<Run>;
export declare const RunUpdate: MessageFns<RunUpdate>;
export declare const ConnectRequest: MessageFns<ConnectRequest>;
export declare const ConnectResponse: MessageFns<ConnectResponse>;
export declare const ReportProgressRequest: MessageFns<ReportProgressRequest>;
export declare const ReportProgressResponse: MessageFns<ReportProgressResponse>;
export declare const WatchRequest: MessageFns<WatchRequest>;
export declare const WatchResponse: MessageFns<WatchResponse>;
export declare const PendingCall: MessageFns<PendingCall>;
export declare const Job: MessageFns<Job>;
export declare const CloseSessionRequest: MessageFns<CloseSessionRequest>;
export declare const CloseSessionResponse: MessageFns<CloseSessionResponse>;
export declare const Effects: MessageFns<Effects>;
export declare const FunctionResponse: MessageFns<FunctionResponse>;
export declare const Skip: MessageFns<Skip>;
export declare const Note: MessageFns<Note>;
export declare const GetHistoryRequest: MessageFns<GetHistoryRequest>;
export declare const GetHistoryResponse: MessageFns<GetHistoryResponse>;
export declare const HistoryEntry: MessageFns<HistoryEntry>;
export declare const HistoryCall: MessageFns<HistoryCall>;
export declare const HistorySpeech: MessageFns<HistorySpeech>;
export declare const HistoryTranscript: MessageFns<HistoryTranscript>;
export declare const HistoryWithdraw: MessageFns<HistoryWithdraw>;
export declare const HistoryJob: MessageFns<HistoryJob>;
export declare const HistoryComplete: MessageFns<HistoryComplete>;
export declare const HistoryConfigure: MessageFns<HistoryConfigure>;
export declare const HistoryConnect: MessageFns<HistoryConnect>;
export declare const HistoryProgress: MessageFns<HistoryProgress>;
export declare const HistoryClose: MessageFns<HistoryClose>;
export declare const HistoryDecision: MessageFns<HistoryDecision>;
export declare const HistoryHold: MessageFns<HistoryHold>;
/**
 * ArbiterService decides, for each function call, whether and when its side effect
 * happens and what the model is told. Every RPC is safe to call concurrently from many
 * clients; calls on one session are serialised by the arbiter (compare-and-set on the
 * session's version), so any replica answers the same.
 */
export type ArbiterServiceService = typeof ArbiterServiceService;
export declare const ArbiterServiceService: {
    /**
     * RegisterCall records a function call the model issued and says what to do with it:
     * EXECUTE (start it: prepare a side-effecting tool, or run a read-only one), DUPLICATE
     * (do nothing: the business key matches a job already open, whose outcome will answer
     * this id too) or REJECT (do not run it; send the error response in effects now).
     * Registering the same call id twice is idempotent and returns the first answer, with
     * its response again if it has one, or a skip if the id has since died; the repeat
     * must carry the same arguments (or none): with other arguments, or another tool, it
     * is FAILED_PRECONDITION naming `call_id` (reason CALL_ID_REUSED) and changes nothing.
     */
    readonly registerCall: {
        readonly path: "/arbiter.v1.ArbiterService/RegisterCall";
        readonly requestStream: false;
        readonly responseStream: false;
        readonly requestSerialize: (value: RegisterCallRequest) => Buffer;
        readonly requestDeserialize: (value: Buffer) => RegisterCallRequest;
        readonly responseSerialize: (value: RegisterCallResponse) => Buffer;
        readonly responseDeserialize: (value: Buffer) => RegisterCallResponse;
    };
    /**
     * ReportSpeech reports one voice-activity or model-output event. INTERRUPTED may
     * return skips (abandoned BLOCKING call ids that must never be answered). Give it
     * an `event_id` so that a retry is recognised (`repeat`) instead of applied again.
     */
    readonly reportSpeech: {
        readonly path: "/arbiter.v1.ArbiterService/ReportSpeech";
        readonly requestStream: false;
        readonly responseStream: false;
        readonly requestSerialize: (value: ReportSpeechRequest) => Buffer;
        readonly requestDeserialize: (value: Buffer) => ReportSpeechRequest;
        readonly responseSerialize: (value: ReportSpeechResponse) => Buffer;
        readonly responseDeserialize: (value: Buffer) => ReportSpeechResponse;
    };
    /**
     * ReportTranscript reports a piece of the user's input transcription (or the model's
     * output transcription). A final user transcript is checked for stop intent: it can
     * cancel pending jobs, or release commits it was holding. May return a status note
     * (a stop heard after a commit). Give it an `event_id`: a final piece applied twice
     * is joined to its utterance twice.
     */
    readonly reportTranscript: {
        readonly path: "/arbiter.v1.ArbiterService/ReportTranscript";
        readonly requestStream: false;
        readonly responseStream: false;
        readonly requestSerialize: (value: ReportTranscriptRequest) => Buffer;
        readonly requestDeserialize: (value: Buffer) => ReportTranscriptRequest;
        readonly responseSerialize: (value: ReportTranscriptResponse) => Buffer;
        readonly responseDeserialize: (value: Buffer) => ReportTranscriptResponse;
    };
    /**
     * ReportToolCallCancellation reports call ids the server withdrew
     * (`toolCallCancellation`). Those ids are dead: never answered (returned as skips).
     * A withdrawn job is cancelled if it has not been decided; if it committed, its note
     * says it was done. Unknown or already answered ids are ignored. The ids are checked
     * before the session (INVALID_ARGUMENT naming `call_ids`); a closed session gives
     * FAILED_PRECONDITION.
     */
    readonly reportToolCallCancellation: {
        readonly path: "/arbiter.v1.ArbiterService/ReportToolCallCancellation";
        readonly requestStream: false;
        readonly responseStream: false;
        readonly requestSerialize: (value: ReportToolCallCancellationRequest) => Buffer;
        readonly requestDeserialize: (value: Buffer) => ReportToolCallCancellationRequest;
        readonly responseSerialize: (value: ReportToolCallCancellationResponse) => Buffer;
        readonly responseDeserialize: (value: Buffer) => ReportToolCallCancellationResponse;
    };
    /**
     * Decide long-polls the arbiter's decision for one side-effecting job: COMMIT, CANCEL,
     * or PENDING when `wait` ran out first. Call it with prepared=false while the slow
     * prepare runs (it then returns early on CANCEL, so the prepare can be aborted, or on
     * a COMMIT another Decide's prepare led to) and with prepared=true once prepare
     * finished (that starts the grace window), and keep it waiting: a Decide waiting when
     * the commit comes due gets it at once. FAILED_PRECONDITION for a read-only job.
     * COMMIT and CANCEL are final: the arbiter stores that it answered a COMMIT before
     * the answer leaves, and no event withdraws it afterwards, whatever its `age` (a
     * stop observed earlier and delivered later is heard after the commit: the job's
     * note says so). A commit not handed out yet is withdrawn by an event observed
     * before it came due, and the job follows its hold rules again (a stop then cancels
     * it). After an outage: a commit that came due while no step of the session could be
     * stored (the store unreachable or frozen, the replicas gone), and so was decided
     * late, is handed out only 2 s after a Decide first finds it (PENDING meanwhile,
     * with the reason), so that what you observed meanwhile lands first: until then an
     * event without an `age` comes before it, and a stop cancels it. Deliver every event
     * with its `age`, ask Decide only once what you observed is delivered, and abort a
     * waiting Decide when an event's delivery fails or is not done within 100 ms (a
     * store frozen under it); ask again once it lands. An agent that does all this says
     * so with `events_delivered`, and its late commits are handed out at once. A
     * replica that shuts down
     * while a Decide waits answers it at once with UNAVAILABLE (reason SERVER_DRAINING,
     * RetryInfo 0): ask again, on another replica; the decision, if one was made, is in
     * the store.
     */
    readonly decide: {
        readonly path: "/arbiter.v1.ArbiterService/Decide";
        readonly requestStream: false;
        readonly responseStream: false;
        readonly requestSerialize: (value: DecideRequest) => Buffer;
        readonly requestDeserialize: (value: Buffer) => DecideRequest;
        readonly responseSerialize: (value: DecideResponse) => Buffer;
        readonly responseDeserialize: (value: Buffer) => DecideResponse;
    };
    /**
     * Complete reports what happened to a job (committed, cancelled, failed, or the result
     * of a read-only tool) and returns every function response and note now due for it:
     * the job's own call id and its duplicates, if still live. Whether a report is taken
     * depends on the job's state and the outcome only, never on the size or text of its
     * result or error (see CompleteRequest): an outcome that fits the job answers every
     * live call of it. Idempotent: the same outcome with the same result (or error) again
     * returns the same effects; a different outcome, or the same one with another result
     * or error, is FAILED_PRECONDITION (reason JOB_STATE_CONFLICT, the field `outcome`,
     * `result` or `error`) and changes nothing: the first report stands.
     */
    readonly complete: {
        readonly path: "/arbiter.v1.ArbiterService/Complete";
        readonly requestStream: false;
        readonly responseStream: false;
        readonly requestSerialize: (value: CompleteRequest) => Buffer;
        readonly requestDeserialize: (value: Buffer) => CompleteRequest;
        readonly responseSerialize: (value: CompleteResponse) => Buffer;
        readonly responseDeserialize: (value: Buffer) => CompleteResponse;
    };
    /**
     * ConfigureSession sets a session's options, creating it if needed: its language
     * (which stop and amend phrases apply) and whether the provider honours
     * function-response scheduling (then notes may ride on function responses).
     * Idempotent; optional (defaults: English, no scheduling).
     */
    readonly configureSession: {
        readonly path: "/arbiter.v1.ArbiterService/ConfigureSession";
        readonly requestStream: false;
        readonly responseStream: false;
        readonly requestSerialize: (value: ConfigureSessionRequest) => Buffer;
        readonly requestDeserialize: (value: Buffer) => ConfigureSessionRequest;
        readonly responseSerialize: (value: ConfigureSessionResponse) => Buffer;
        readonly responseDeserialize: (value: Buffer) => ConfigureSessionResponse;
    };
    /**
     * Poll steps the session's timers to now and returns the effects they made due (or,
     * with after_seq, every effect after it, whoever handed it out): the
     * timeout answers of calls whose max_pending deadline passed (every live call id is
     * answered by then), and the claim check of a model turn cut by `interrupted` once its
     * join window has passed. Call it when GetSessionResponse.next_timer passes, or on a
     * steady beat (every RPC returns such effects too). NOT_FOUND for an unknown session.
     */
    readonly poll: {
        readonly path: "/arbiter.v1.ArbiterService/Poll";
        readonly requestStream: false;
        readonly responseStream: false;
        readonly requestSerialize: (value: PollRequest) => Buffer;
        readonly requestDeserialize: (value: Buffer) => PollRequest;
        readonly responseSerialize: (value: PollResponse) => Buffer;
        readonly responseDeserialize: (value: Buffer) => PollResponse;
    };
    /**
     * GetSession returns the session's state: pending call ids with their age, jobs and
     * their states, whether a user utterance is open, the next timer. Read-only.
     */
    readonly getSession: {
        readonly path: "/arbiter.v1.ArbiterService/GetSession";
        readonly requestStream: false;
        readonly responseStream: false;
        readonly requestSerialize: (value: GetSessionRequest) => Buffer;
        readonly requestDeserialize: (value: Buffer) => GetSessionRequest;
        readonly responseSerialize: (value: GetSessionResponse) => Buffer;
        readonly responseDeserialize: (value: Buffer) => GetSessionResponse;
    };
    /**
     * CloseSession closes a session (the model connection ended). Undecided jobs are
     * cancelled (fail closed) and every call id still unanswered is marked dead, returned
     * as skips. Idempotent. A closed session still accepts Complete for jobs still
     * running (a commit in flight, a read-only call), so what happened is recorded; every
     * other RPC but GetSession, Poll and Decide gets FAILED_PRECONDITION.
     */
    readonly closeSession: {
        readonly path: "/arbiter.v1.ArbiterService/CloseSession";
        readonly requestStream: false;
        readonly responseStream: false;
        readonly requestSerialize: (value: CloseSessionRequest) => Buffer;
        readonly requestDeserialize: (value: Buffer) => CloseSessionRequest;
        readonly responseSerialize: (value: CloseSessionResponse) => Buffer;
        readonly responseDeserialize: (value: Buffer) => CloseSessionResponse;
    };
    /**
     * Connect reports that the agent has a new connection to the model server for the
     * same conversation (Gemini Live session resumption, a reconnect): the session id
     * names the conversation and stays the same; the connection id changes. Calls still
     * pending from an earlier connection can no longer be answered by function response
     * (the new connection never saw them): they come back as skips with reason
     * "connection_closed", their jobs go on, and each job's outcome goes out as a status
     * note instead. A re-issue on the new connection is deduplicated against the job by
     * business key, and confirm-then-act runs carry over. Connecting again with the
     * current id changes nothing. Call it as each connection opens, the first one
     * included, before registering its calls: calls registered before a session's first
     * Connect belong to no connection, and that first Connect ends them too. The session
     * is created if needed; a closed session gives FAILED_PRECONDITION.
     */
    readonly connect: {
        readonly path: "/arbiter.v1.ArbiterService/Connect";
        readonly requestStream: false;
        readonly responseStream: false;
        readonly requestSerialize: (value: ConnectRequest) => Buffer;
        readonly requestDeserialize: (value: Buffer) => ConnectRequest;
        readonly responseSerialize: (value: ConnectResponse) => Buffer;
        readonly responseDeserialize: (value: Buffer) => ConnectResponse;
    };
    /**
     * ReportProgress reports an interim result of a job still running (a long
     * NON_BLOCKING tool's progress). It comes back as non-final function responses
     * (`interim`, Gemini `will_continue`) on the job's live NON_BLOCKING call ids when the
     * session said its provider honours response scheduling (ConfigureSession), and is
     * dropped otherwise. It never answers a call (the final response is still to come),
     * is never a user turn and never counts as user speech. NOT_FOUND for an unknown job;
     * FAILED_PRECONDITION for a completed one.
     */
    readonly reportProgress: {
        readonly path: "/arbiter.v1.ArbiterService/ReportProgress";
        readonly requestStream: false;
        readonly responseStream: false;
        readonly requestSerialize: (value: ReportProgressRequest) => Buffer;
        readonly requestDeserialize: (value: Buffer) => ReportProgressRequest;
        readonly responseSerialize: (value: ReportProgressResponse) => Buffer;
        readonly responseDeserialize: (value: Buffer) => ReportProgressResponse;
    };
    /**
     * Watch streams every effect of one session as it becomes due: function responses
     * (including deadline answers and run prompts), skips, notes and run state changes,
     * each once, in the order the unary RPCs hand them out (ascending `seq`), including
     * those made due by timers, so an agent needs no polling. Resume after a reconnect
     * (to any replica) with `after_seq` set to the last `seq` it acted on: nothing is
     * delivered twice and nothing is skipped. The stream ends when the session closes
     * (after its last effects) or expires, and with UNAVAILABLE (reason SERVER_DRAINING)
     * when the replica shuts down: resume on another. NOT_FOUND for an unknown session;
     * FAILED_PRECONDITION when `after_seq` is beyond the last effect or older than the
     * log keeps (the last 256 effects): resynchronise with GetSession.
     */
    readonly watch: {
        readonly path: "/arbiter.v1.ArbiterService/Watch";
        readonly requestStream: false;
        readonly responseStream: true;
        readonly requestSerialize: (value: WatchRequest) => Buffer;
        readonly requestDeserialize: (value: Buffer) => WatchRequest;
        readonly responseSerialize: (value: WatchResponse) => Buffer;
        readonly responseDeserialize: (value: Buffer) => WatchResponse;
    };
    /**
     * GetHistory returns a session's timeline, oldest first: its inputs (every event the
     * agent reported that changed the session, with its fields, when it arrived and,
     * for an event reported with an `age`, when the agent observed it), what the
     * arbiter made of them (decisions with their reasons, commits withdrawn by a late
     * event, holds: when a job's commit became held, by which utterance or by
     * abandonment, and when that ended), and the effects it handed out (from the
     * effect log, which keeps the last 256), each entry with its time since the session
     * started and its wall time. A session keeps the latest entries within a bound
     * (`max_bytes`: 1 KiB by default, `arbiter serve --history-bytes`); one that records
     * (ConfigureSession `record`, or sampled by `--history-sample`) keeps up to
     * `--record-bytes` (64 KiB by default), enough to export the session as a trace
     * (`arbiter export`) and replay it. Read-only: timers due by now have fired in the
     * answer, nothing is stored. NOT_FOUND for an unknown or expired session, or
     * another tenant's.
     */
    readonly getHistory: {
        readonly path: "/arbiter.v1.ArbiterService/GetHistory";
        readonly requestStream: false;
        readonly responseStream: false;
        readonly requestSerialize: (value: GetHistoryRequest) => Buffer;
        readonly requestDeserialize: (value: Buffer) => GetHistoryRequest;
        readonly responseSerialize: (value: GetHistoryResponse) => Buffer;
        readonly responseDeserialize: (value: Buffer) => GetHistoryResponse;
    };
};
export interface ArbiterServiceServer extends UntypedServiceImplementation {
    /**
     * RegisterCall records a function call the model issued and says what to do with it:
     * EXECUTE (start it: prepare a side-effecting tool, or run a read-only one), DUPLICATE
     * (do nothing: the business key matches a job already open, whose outcome will answer
     * this id too) or REJECT (do not run it; send the error response in effects now).
     * Registering the same call id twice is idempotent and returns the first answer, with
     * its response again if it has one, or a skip if the id has since died; the repeat
     * must carry the same arguments (or none): with other arguments, or another tool, it
     * is FAILED_PRECONDITION naming `call_id` (reason CALL_ID_REUSED) and changes nothing.
     */
    registerCall: handleUnaryCall<RegisterCallRequest, RegisterCallResponse>;
    /**
     * ReportSpeech reports one voice-activity or model-output event. INTERRUPTED may
     * return skips (abandoned BLOCKING call ids that must never be answered). Give it
     * an `event_id` so that a retry is recognised (`repeat`) instead of applied again.
     */
    reportSpeech: handleUnaryCall<ReportSpeechRequest, ReportSpeechResponse>;
    /**
     * ReportTranscript reports a piece of the user's input transcription (or the model's
     * output transcription). A final user transcript is checked for stop intent: it can
     * cancel pending jobs, or release commits it was holding. May return a status note
     * (a stop heard after a commit). Give it an `event_id`: a final piece applied twice
     * is joined to its utterance twice.
     */
    reportTranscript: handleUnaryCall<ReportTranscriptRequest, ReportTranscriptResponse>;
    /**
     * ReportToolCallCancellation reports call ids the server withdrew
     * (`toolCallCancellation`). Those ids are dead: never answered (returned as skips).
     * A withdrawn job is cancelled if it has not been decided; if it committed, its note
     * says it was done. Unknown or already answered ids are ignored. The ids are checked
     * before the session (INVALID_ARGUMENT naming `call_ids`); a closed session gives
     * FAILED_PRECONDITION.
     */
    reportToolCallCancellation: handleUnaryCall<ReportToolCallCancellationRequest, ReportToolCallCancellationResponse>;
    /**
     * Decide long-polls the arbiter's decision for one side-effecting job: COMMIT, CANCEL,
     * or PENDING when `wait` ran out first. Call it with prepared=false while the slow
     * prepare runs (it then returns early on CANCEL, so the prepare can be aborted, or on
     * a COMMIT another Decide's prepare led to) and with prepared=true once prepare
     * finished (that starts the grace window), and keep it waiting: a Decide waiting when
     * the commit comes due gets it at once. FAILED_PRECONDITION for a read-only job.
     * COMMIT and CANCEL are final: the arbiter stores that it answered a COMMIT before
     * the answer leaves, and no event withdraws it afterwards, whatever its `age` (a
     * stop observed earlier and delivered later is heard after the commit: the job's
     * note says so). A commit not handed out yet is withdrawn by an event observed
     * before it came due, and the job follows its hold rules again (a stop then cancels
     * it). After an outage: a commit that came due while no step of the session could be
     * stored (the store unreachable or frozen, the replicas gone), and so was decided
     * late, is handed out only 2 s after a Decide first finds it (PENDING meanwhile,
     * with the reason), so that what you observed meanwhile lands first: until then an
     * event without an `age` comes before it, and a stop cancels it. Deliver every event
     * with its `age`, ask Decide only once what you observed is delivered, and abort a
     * waiting Decide when an event's delivery fails or is not done within 100 ms (a
     * store frozen under it); ask again once it lands. An agent that does all this says
     * so with `events_delivered`, and its late commits are handed out at once. A
     * replica that shuts down
     * while a Decide waits answers it at once with UNAVAILABLE (reason SERVER_DRAINING,
     * RetryInfo 0): ask again, on another replica; the decision, if one was made, is in
     * the store.
     */
    decide: handleUnaryCall<DecideRequest, DecideResponse>;
    /**
     * Complete reports what happened to a job (committed, cancelled, failed, or the result
     * of a read-only tool) and returns every function response and note now due for it:
     * the job's own call id and its duplicates, if still live. Whether a report is taken
     * depends on the job's state and the outcome only, never on the size or text of its
     * result or error (see CompleteRequest): an outcome that fits the job answers every
     * live call of it. Idempotent: the same outcome with the same result (or error) again
     * returns the same effects; a different outcome, or the same one with another result
     * or error, is FAILED_PRECONDITION (reason JOB_STATE_CONFLICT, the field `outcome`,
     * `result` or `error`) and changes nothing: the first report stands.
     */
    complete: handleUnaryCall<CompleteRequest, CompleteResponse>;
    /**
     * ConfigureSession sets a session's options, creating it if needed: its language
     * (which stop and amend phrases apply) and whether the provider honours
     * function-response scheduling (then notes may ride on function responses).
     * Idempotent; optional (defaults: English, no scheduling).
     */
    configureSession: handleUnaryCall<ConfigureSessionRequest, ConfigureSessionResponse>;
    /**
     * Poll steps the session's timers to now and returns the effects they made due (or,
     * with after_seq, every effect after it, whoever handed it out): the
     * timeout answers of calls whose max_pending deadline passed (every live call id is
     * answered by then), and the claim check of a model turn cut by `interrupted` once its
     * join window has passed. Call it when GetSessionResponse.next_timer passes, or on a
     * steady beat (every RPC returns such effects too). NOT_FOUND for an unknown session.
     */
    poll: handleUnaryCall<PollRequest, PollResponse>;
    /**
     * GetSession returns the session's state: pending call ids with their age, jobs and
     * their states, whether a user utterance is open, the next timer. Read-only.
     */
    getSession: handleUnaryCall<GetSessionRequest, GetSessionResponse>;
    /**
     * CloseSession closes a session (the model connection ended). Undecided jobs are
     * cancelled (fail closed) and every call id still unanswered is marked dead, returned
     * as skips. Idempotent. A closed session still accepts Complete for jobs still
     * running (a commit in flight, a read-only call), so what happened is recorded; every
     * other RPC but GetSession, Poll and Decide gets FAILED_PRECONDITION.
     */
    closeSession: handleUnaryCall<CloseSessionRequest, CloseSessionResponse>;
    /**
     * Connect reports that the agent has a new connection to the model server for the
     * same conversation (Gemini Live session resumption, a reconnect): the session id
     * names the conversation and stays the same; the connection id changes. Calls still
     * pending from an earlier connection can no longer be answered by function response
     * (the new connection never saw them): they come back as skips with reason
     * "connection_closed", their jobs go on, and each job's outcome goes out as a status
     * note instead. A re-issue on the new connection is deduplicated against the job by
     * business key, and confirm-then-act runs carry over. Connecting again with the
     * current id changes nothing. Call it as each connection opens, the first one
     * included, before registering its calls: calls registered before a session's first
     * Connect belong to no connection, and that first Connect ends them too. The session
     * is created if needed; a closed session gives FAILED_PRECONDITION.
     */
    connect: handleUnaryCall<ConnectRequest, ConnectResponse>;
    /**
     * ReportProgress reports an interim result of a job still running (a long
     * NON_BLOCKING tool's progress). It comes back as non-final function responses
     * (`interim`, Gemini `will_continue`) on the job's live NON_BLOCKING call ids when the
     * session said its provider honours response scheduling (ConfigureSession), and is
     * dropped otherwise. It never answers a call (the final response is still to come),
     * is never a user turn and never counts as user speech. NOT_FOUND for an unknown job;
     * FAILED_PRECONDITION for a completed one.
     */
    reportProgress: handleUnaryCall<ReportProgressRequest, ReportProgressResponse>;
    /**
     * Watch streams every effect of one session as it becomes due: function responses
     * (including deadline answers and run prompts), skips, notes and run state changes,
     * each once, in the order the unary RPCs hand them out (ascending `seq`), including
     * those made due by timers, so an agent needs no polling. Resume after a reconnect
     * (to any replica) with `after_seq` set to the last `seq` it acted on: nothing is
     * delivered twice and nothing is skipped. The stream ends when the session closes
     * (after its last effects) or expires, and with UNAVAILABLE (reason SERVER_DRAINING)
     * when the replica shuts down: resume on another. NOT_FOUND for an unknown session;
     * FAILED_PRECONDITION when `after_seq` is beyond the last effect or older than the
     * log keeps (the last 256 effects): resynchronise with GetSession.
     */
    watch: handleServerStreamingCall<WatchRequest, WatchResponse>;
    /**
     * GetHistory returns a session's timeline, oldest first: its inputs (every event the
     * agent reported that changed the session, with its fields, when it arrived and,
     * for an event reported with an `age`, when the agent observed it), what the
     * arbiter made of them (decisions with their reasons, commits withdrawn by a late
     * event, holds: when a job's commit became held, by which utterance or by
     * abandonment, and when that ended), and the effects it handed out (from the
     * effect log, which keeps the last 256), each entry with its time since the session
     * started and its wall time. A session keeps the latest entries within a bound
     * (`max_bytes`: 1 KiB by default, `arbiter serve --history-bytes`); one that records
     * (ConfigureSession `record`, or sampled by `--history-sample`) keeps up to
     * `--record-bytes` (64 KiB by default), enough to export the session as a trace
     * (`arbiter export`) and replay it. Read-only: timers due by now have fired in the
     * answer, nothing is stored. NOT_FOUND for an unknown or expired session, or
     * another tenant's.
     */
    getHistory: handleUnaryCall<GetHistoryRequest, GetHistoryResponse>;
}
export interface ArbiterServiceClient extends Client {
    /**
     * RegisterCall records a function call the model issued and says what to do with it:
     * EXECUTE (start it: prepare a side-effecting tool, or run a read-only one), DUPLICATE
     * (do nothing: the business key matches a job already open, whose outcome will answer
     * this id too) or REJECT (do not run it; send the error response in effects now).
     * Registering the same call id twice is idempotent and returns the first answer, with
     * its response again if it has one, or a skip if the id has since died; the repeat
     * must carry the same arguments (or none): with other arguments, or another tool, it
     * is FAILED_PRECONDITION naming `call_id` (reason CALL_ID_REUSED) and changes nothing.
     */
    registerCall(request: RegisterCallRequest, callback: (error: ServiceError | null, response: RegisterCallResponse) => void): ClientUnaryCall;
    registerCall(request: RegisterCallRequest, metadata: Metadata, callback: (error: ServiceError | null, response: RegisterCallResponse) => void): ClientUnaryCall;
    registerCall(request: RegisterCallRequest, metadata: Metadata, options: Partial<CallOptions>, callback: (error: ServiceError | null, response: RegisterCallResponse) => void): ClientUnaryCall;
    /**
     * ReportSpeech reports one voice-activity or model-output event. INTERRUPTED may
     * return skips (abandoned BLOCKING call ids that must never be answered). Give it
     * an `event_id` so that a retry is recognised (`repeat`) instead of applied again.
     */
    reportSpeech(request: ReportSpeechRequest, callback: (error: ServiceError | null, response: ReportSpeechResponse) => void): ClientUnaryCall;
    reportSpeech(request: ReportSpeechRequest, metadata: Metadata, callback: (error: ServiceError | null, response: ReportSpeechResponse) => void): ClientUnaryCall;
    reportSpeech(request: ReportSpeechRequest, metadata: Metadata, options: Partial<CallOptions>, callback: (error: ServiceError | null, response: ReportSpeechResponse) => void): ClientUnaryCall;
    /**
     * ReportTranscript reports a piece of the user's input transcription (or the model's
     * output transcription). A final user transcript is checked for stop intent: it can
     * cancel pending jobs, or release commits it was holding. May return a status note
     * (a stop heard after a commit). Give it an `event_id`: a final piece applied twice
     * is joined to its utterance twice.
     */
    reportTranscript(request: ReportTranscriptRequest, callback: (error: ServiceError | null, response: ReportTranscriptResponse) => void): ClientUnaryCall;
    reportTranscript(request: ReportTranscriptRequest, metadata: Metadata, callback: (error: ServiceError | null, response: ReportTranscriptResponse) => void): ClientUnaryCall;
    reportTranscript(request: ReportTranscriptRequest, metadata: Metadata, options: Partial<CallOptions>, callback: (error: ServiceError | null, response: ReportTranscriptResponse) => void): ClientUnaryCall;
    /**
     * ReportToolCallCancellation reports call ids the server withdrew
     * (`toolCallCancellation`). Those ids are dead: never answered (returned as skips).
     * A withdrawn job is cancelled if it has not been decided; if it committed, its note
     * says it was done. Unknown or already answered ids are ignored. The ids are checked
     * before the session (INVALID_ARGUMENT naming `call_ids`); a closed session gives
     * FAILED_PRECONDITION.
     */
    reportToolCallCancellation(request: ReportToolCallCancellationRequest, callback: (error: ServiceError | null, response: ReportToolCallCancellationResponse) => void): ClientUnaryCall;
    reportToolCallCancellation(request: ReportToolCallCancellationRequest, metadata: Metadata, callback: (error: ServiceError | null, response: ReportToolCallCancellationResponse) => void): ClientUnaryCall;
    reportToolCallCancellation(request: ReportToolCallCancellationRequest, metadata: Metadata, options: Partial<CallOptions>, callback: (error: ServiceError | null, response: ReportToolCallCancellationResponse) => void): ClientUnaryCall;
    /**
     * Decide long-polls the arbiter's decision for one side-effecting job: COMMIT, CANCEL,
     * or PENDING when `wait` ran out first. Call it with prepared=false while the slow
     * prepare runs (it then returns early on CANCEL, so the prepare can be aborted, or on
     * a COMMIT another Decide's prepare led to) and with prepared=true once prepare
     * finished (that starts the grace window), and keep it waiting: a Decide waiting when
     * the commit comes due gets it at once. FAILED_PRECONDITION for a read-only job.
     * COMMIT and CANCEL are final: the arbiter stores that it answered a COMMIT before
     * the answer leaves, and no event withdraws it afterwards, whatever its `age` (a
     * stop observed earlier and delivered later is heard after the commit: the job's
     * note says so). A commit not handed out yet is withdrawn by an event observed
     * before it came due, and the job follows its hold rules again (a stop then cancels
     * it). After an outage: a commit that came due while no step of the session could be
     * stored (the store unreachable or frozen, the replicas gone), and so was decided
     * late, is handed out only 2 s after a Decide first finds it (PENDING meanwhile,
     * with the reason), so that what you observed meanwhile lands first: until then an
     * event without an `age` comes before it, and a stop cancels it. Deliver every event
     * with its `age`, ask Decide only once what you observed is delivered, and abort a
     * waiting Decide when an event's delivery fails or is not done within 100 ms (a
     * store frozen under it); ask again once it lands. An agent that does all this says
     * so with `events_delivered`, and its late commits are handed out at once. A
     * replica that shuts down
     * while a Decide waits answers it at once with UNAVAILABLE (reason SERVER_DRAINING,
     * RetryInfo 0): ask again, on another replica; the decision, if one was made, is in
     * the store.
     */
    decide(request: DecideRequest, callback: (error: ServiceError | null, response: DecideResponse) => void): ClientUnaryCall;
    decide(request: DecideRequest, metadata: Metadata, callback: (error: ServiceError | null, response: DecideResponse) => void): ClientUnaryCall;
    decide(request: DecideRequest, metadata: Metadata, options: Partial<CallOptions>, callback: (error: ServiceError | null, response: DecideResponse) => void): ClientUnaryCall;
    /**
     * Complete reports what happened to a job (committed, cancelled, failed, or the result
     * of a read-only tool) and returns every function response and note now due for it:
     * the job's own call id and its duplicates, if still live. Whether a report is taken
     * depends on the job's state and the outcome only, never on the size or text of its
     * result or error (see CompleteRequest): an outcome that fits the job answers every
     * live call of it. Idempotent: the same outcome with the same result (or error) again
     * returns the same effects; a different outcome, or the same one with another result
     * or error, is FAILED_PRECONDITION (reason JOB_STATE_CONFLICT, the field `outcome`,
     * `result` or `error`) and changes nothing: the first report stands.
     */
    complete(request: CompleteRequest, callback: (error: ServiceError | null, response: CompleteResponse) => void): ClientUnaryCall;
    complete(request: CompleteRequest, metadata: Metadata, callback: (error: ServiceError | null, response: CompleteResponse) => void): ClientUnaryCall;
    complete(request: CompleteRequest, metadata: Metadata, options: Partial<CallOptions>, callback: (error: ServiceError | null, response: CompleteResponse) => void): ClientUnaryCall;
    /**
     * ConfigureSession sets a session's options, creating it if needed: its language
     * (which stop and amend phrases apply) and whether the provider honours
     * function-response scheduling (then notes may ride on function responses).
     * Idempotent; optional (defaults: English, no scheduling).
     */
    configureSession(request: ConfigureSessionRequest, callback: (error: ServiceError | null, response: ConfigureSessionResponse) => void): ClientUnaryCall;
    configureSession(request: ConfigureSessionRequest, metadata: Metadata, callback: (error: ServiceError | null, response: ConfigureSessionResponse) => void): ClientUnaryCall;
    configureSession(request: ConfigureSessionRequest, metadata: Metadata, options: Partial<CallOptions>, callback: (error: ServiceError | null, response: ConfigureSessionResponse) => void): ClientUnaryCall;
    /**
     * Poll steps the session's timers to now and returns the effects they made due (or,
     * with after_seq, every effect after it, whoever handed it out): the
     * timeout answers of calls whose max_pending deadline passed (every live call id is
     * answered by then), and the claim check of a model turn cut by `interrupted` once its
     * join window has passed. Call it when GetSessionResponse.next_timer passes, or on a
     * steady beat (every RPC returns such effects too). NOT_FOUND for an unknown session.
     */
    poll(request: PollRequest, callback: (error: ServiceError | null, response: PollResponse) => void): ClientUnaryCall;
    poll(request: PollRequest, metadata: Metadata, callback: (error: ServiceError | null, response: PollResponse) => void): ClientUnaryCall;
    poll(request: PollRequest, metadata: Metadata, options: Partial<CallOptions>, callback: (error: ServiceError | null, response: PollResponse) => void): ClientUnaryCall;
    /**
     * GetSession returns the session's state: pending call ids with their age, jobs and
     * their states, whether a user utterance is open, the next timer. Read-only.
     */
    getSession(request: GetSessionRequest, callback: (error: ServiceError | null, response: GetSessionResponse) => void): ClientUnaryCall;
    getSession(request: GetSessionRequest, metadata: Metadata, callback: (error: ServiceError | null, response: GetSessionResponse) => void): ClientUnaryCall;
    getSession(request: GetSessionRequest, metadata: Metadata, options: Partial<CallOptions>, callback: (error: ServiceError | null, response: GetSessionResponse) => void): ClientUnaryCall;
    /**
     * CloseSession closes a session (the model connection ended). Undecided jobs are
     * cancelled (fail closed) and every call id still unanswered is marked dead, returned
     * as skips. Idempotent. A closed session still accepts Complete for jobs still
     * running (a commit in flight, a read-only call), so what happened is recorded; every
     * other RPC but GetSession, Poll and Decide gets FAILED_PRECONDITION.
     */
    closeSession(request: CloseSessionRequest, callback: (error: ServiceError | null, response: CloseSessionResponse) => void): ClientUnaryCall;
    closeSession(request: CloseSessionRequest, metadata: Metadata, callback: (error: ServiceError | null, response: CloseSessionResponse) => void): ClientUnaryCall;
    closeSession(request: CloseSessionRequest, metadata: Metadata, options: Partial<CallOptions>, callback: (error: ServiceError | null, response: CloseSessionResponse) => void): ClientUnaryCall;
    /**
     * Connect reports that the agent has a new connection to the model server for the
     * same conversation (Gemini Live session resumption, a reconnect): the session id
     * names the conversation and stays the same; the connection id changes. Calls still
     * pending from an earlier connection can no longer be answered by function response
     * (the new connection never saw them): they come back as skips with reason
     * "connection_closed", their jobs go on, and each job's outcome goes out as a status
     * note instead. A re-issue on the new connection is deduplicated against the job by
     * business key, and confirm-then-act runs carry over. Connecting again with the
     * current id changes nothing. Call it as each connection opens, the first one
     * included, before registering its calls: calls registered before a session's first
     * Connect belong to no connection, and that first Connect ends them too. The session
     * is created if needed; a closed session gives FAILED_PRECONDITION.
     */
    connect(request: ConnectRequest, callback: (error: ServiceError | null, response: ConnectResponse) => void): ClientUnaryCall;
    connect(request: ConnectRequest, metadata: Metadata, callback: (error: ServiceError | null, response: ConnectResponse) => void): ClientUnaryCall;
    connect(request: ConnectRequest, metadata: Metadata, options: Partial<CallOptions>, callback: (error: ServiceError | null, response: ConnectResponse) => void): ClientUnaryCall;
    /**
     * ReportProgress reports an interim result of a job still running (a long
     * NON_BLOCKING tool's progress). It comes back as non-final function responses
     * (`interim`, Gemini `will_continue`) on the job's live NON_BLOCKING call ids when the
     * session said its provider honours response scheduling (ConfigureSession), and is
     * dropped otherwise. It never answers a call (the final response is still to come),
     * is never a user turn and never counts as user speech. NOT_FOUND for an unknown job;
     * FAILED_PRECONDITION for a completed one.
     */
    reportProgress(request: ReportProgressRequest, callback: (error: ServiceError | null, response: ReportProgressResponse) => void): ClientUnaryCall;
    reportProgress(request: ReportProgressRequest, metadata: Metadata, callback: (error: ServiceError | null, response: ReportProgressResponse) => void): ClientUnaryCall;
    reportProgress(request: ReportProgressRequest, metadata: Metadata, options: Partial<CallOptions>, callback: (error: ServiceError | null, response: ReportProgressResponse) => void): ClientUnaryCall;
    /**
     * Watch streams every effect of one session as it becomes due: function responses
     * (including deadline answers and run prompts), skips, notes and run state changes,
     * each once, in the order the unary RPCs hand them out (ascending `seq`), including
     * those made due by timers, so an agent needs no polling. Resume after a reconnect
     * (to any replica) with `after_seq` set to the last `seq` it acted on: nothing is
     * delivered twice and nothing is skipped. The stream ends when the session closes
     * (after its last effects) or expires, and with UNAVAILABLE (reason SERVER_DRAINING)
     * when the replica shuts down: resume on another. NOT_FOUND for an unknown session;
     * FAILED_PRECONDITION when `after_seq` is beyond the last effect or older than the
     * log keeps (the last 256 effects): resynchronise with GetSession.
     */
    watch(request: WatchRequest, options?: Partial<CallOptions>): ClientReadableStream<WatchResponse>;
    watch(request: WatchRequest, metadata?: Metadata, options?: Partial<CallOptions>): ClientReadableStream<WatchResponse>;
    /**
     * GetHistory returns a session's timeline, oldest first: its inputs (every event the
     * agent reported that changed the session, with its fields, when it arrived and,
     * for an event reported with an `age`, when the agent observed it), what the
     * arbiter made of them (decisions with their reasons, commits withdrawn by a late
     * event, holds: when a job's commit became held, by which utterance or by
     * abandonment, and when that ended), and the effects it handed out (from the
     * effect log, which keeps the last 256), each entry with its time since the session
     * started and its wall time. A session keeps the latest entries within a bound
     * (`max_bytes`: 1 KiB by default, `arbiter serve --history-bytes`); one that records
     * (ConfigureSession `record`, or sampled by `--history-sample`) keeps up to
     * `--record-bytes` (64 KiB by default), enough to export the session as a trace
     * (`arbiter export`) and replay it. Read-only: timers due by now have fired in the
     * answer, nothing is stored. NOT_FOUND for an unknown or expired session, or
     * another tenant's.
     */
    getHistory(request: GetHistoryRequest, callback: (error: ServiceError | null, response: GetHistoryResponse) => void): ClientUnaryCall;
    getHistory(request: GetHistoryRequest, metadata: Metadata, callback: (error: ServiceError | null, response: GetHistoryResponse) => void): ClientUnaryCall;
    getHistory(request: GetHistoryRequest, metadata: Metadata, options: Partial<CallOptions>, callback: (error: ServiceError | null, response: GetHistoryResponse) => void): ClientUnaryCall;
}
export declare const ArbiterServiceClient: {
    new (address: string, credentials: ChannelCredentials, options?: Partial<ClientOptions>): ArbiterServiceClient;
    service: typeof ArbiterServiceService;
    serviceName: string;
};
type Builtin = Date | Function | Uint8Array | string | number | boolean | undefined;
export type DeepPartial<T> = T extends Builtin ? T : T extends globalThis.Array<infer U> ? globalThis.Array<DeepPartial<U>> : T extends ReadonlyArray<infer U> ? ReadonlyArray<DeepPartial<U>> : T extends {} ? {
    [K in keyof T]?: DeepPartial<T[K]>;
} : Partial<T>;
type KeysOfUnion<T> = T extends T ? keyof T : never;
export type Exact<P, I extends P> = P extends Builtin ? P : P & {
    [K in keyof P]: Exact<P[K], I[K]>;
} & {
    [K in Exclude<keyof I, KeysOfUnion<P>>]: never;
};
export interface MessageFns<T> {
    encode(message: T, writer?: BinaryWriter): BinaryWriter;
    decode(input: BinaryReader | Uint8Array, length?: number): T;
    fromJSON(object: any): T;
    toJSON(message: T): unknown;
    create<I extends Exact<DeepPartial<T>, I>>(base?: I): T;
    fromPartial<I extends Exact<DeepPartial<T>, I>>(object: I): T;
}
export {};
