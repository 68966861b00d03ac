import type { ArbiterError } from "./errors.js";
/** A function call as the model issued it (`FunctionCall`: id, name, args). */
export interface Call {
    id: string;
    name: string;
    args: Record<string, unknown>;
}
/**
 * Start the job: run `tool` with `args` (pick the handler by `tool`, not by
 * `call.name`). `sideEffect: true`: start the backend's prepare (slow, reversible)
 * and report it with `adapter.prepared(jobId)` (or `failed`); never commit until a
 * {@link Commit} says so. `sideEffect: false`: run the read-only tool and report
 * `adapter.result(jobId, result)`. Never send a function response yourself: it comes as
 * {@link SendFunctionResponse}. `businessKey` is what the arbiter deduplicated the call
 * on: a good idempotency key for the backend.
 *
 * `tool` and `args` are the call's own name and arguments, except for a confirmation
 * call that confirmed a confirm-then-act run (`runId`): then they are the run's tool and
 * its request (the opening call's arguments with the answers merged in), and `call` is
 * the confirmation call, which is answered with the job's outcome.
 */
export interface Execute {
    type: "execute";
    call: Call;
    jobId: string;
    sideEffect: boolean;
    businessKey: string;
    tool: string;
    args: Record<string, unknown>;
    runId: string;
}
/**
 * Stop the prepare still running for this job and release what it holds; do not commit.
 * The adapter reports the cancel itself. `error` is set when the arbiter could not be
 * reached (fail closed).
 */
export interface AbortPrepare {
    type: "abortPrepare";
    jobId: string;
    reason: string;
    error?: ArbiterError;
}
/**
 * Perform the job's irreversible side effect now, then report
 * `adapter.committed(jobId, result)` (or `failed(jobId, error)`).
 */
export interface Commit {
    type: "commit";
    jobId: string;
    reason: string;
}
/**
 * Release the prepared job without its side effect. The adapter reports the cancel
 * itself. `error` is set when the arbiter could not be reached (fail closed).
 */
export interface Cancel {
    type: "cancel";
    jobId: string;
    reason: string;
    error?: ArbiterError;
}
/** A function response's scheduling (Gemini Live `FunctionResponseScheduling`). */
export type Scheduling = "WHEN_IDLE" | "INTERRUPT" | "SILENT";
/**
 * Send this function response to the model (`session.sendToolResponse({functionResponses:
 * [{id, name, response: payload, scheduling}]})`). At most one per call id, none for a
 * skipped id.
 *
 * `scheduling` is set when a status note rides on this response (the session was
 * configured with `responseScheduling: true` and the call is NON_BLOCKING): the note's
 * text is already in `payload.status_note` and no {@link SendNote} comes for it. Send the
 * response with that scheduling (`"WHEN_IDLE"`: the model speaks about it once its turn
 * is over; `"INTERRUPT"`: now; `"SILENT"`: not at all). `null`: no scheduling.
 *
 * `willContinue: true` marks an interim response (a progress report of a job still
 * running, `adapter.progress`): send it with Gemini's `willContinue: true`; the call's
 * final response is still to come. Interim responses may come several times per id.
 */
export interface SendFunctionResponse {
    type: "sendFunctionResponse";
    id: string;
    name: string;
    payload: Record<string, unknown>;
    jobId: string;
    scheduling: Scheduling | null;
    willContinue: boolean;
    /**
     * The effect's place in the session's log (0 from servers without one): the adapter
     * hands out each `seq` once, whether it came in a reply, on the Watch or from a Poll.
     */
    seq: number;
}
/**
 * Send this status note to the model as a user turn (`session.sendClientContent({turns,
 * turnComplete: true})`): `when: "now"`, or `"when_idle"`: after the model's turn is over.
 * `why` is the arbiter's reason for that delivery, in words (for logs). A note that rides
 * on a function response is never handed out as a `sendNote`: see
 * {@link SendFunctionResponse.scheduling}.
 */
export interface SendNote {
    type: "sendNote";
    text: string;
    when: "now" | "when_idle";
    jobId: string;
    why: string;
    /**
     * The effect's place in the session's log (0 from servers without one): the adapter
     * hands out each `seq` once, whether it came in a reply, on the Watch or from a Poll.
     */
    seq: number;
}
/**
 * Informational: this call id is dead (`reason`: abandoned, withdrawn,
 * connection_closed, session_closed). Never send a function response for it. For
 * `connection_closed` (the call was made on an earlier connection, see
 * `adapter.reconnect`) its job goes on, and its outcome comes as a {@link SendNote}.
 */
export interface Skip {
    type: "skip";
    id: string;
    name: string;
    reason: string;
    jobId: string;
    /**
     * The effect's place in the session's log (0 from servers without one): the adapter
     * hands out each `seq` once, whether it came in a reply, on the Watch or from a Poll.
     */
    seq: number;
}
/** Where a confirm-then-act run stands. */
export type RunState = "opened" | "confirmed" | "refused" | "expired" | "cancelled";
/**
 * Informational: a confirm-then-act run changed `state`. Nothing to send: the model
 * hears about it through the function responses and notes. `jobId` is the job a
 * confirmed run started; `callId` the call that caused the change.
 */
export interface RunUpdate {
    type: "run";
    runId: string;
    tool: string;
    state: RunState;
    callId: string;
    jobId: string;
    reason: string;
    /**
     * The effect's place in the session's log (0 from servers without one): the adapter
     * hands out each `seq` once, whether it came in a reply, on the Watch or from a Poll.
     */
    seq: number;
}
/**
 * Informational: the arbiter's store lost the session's epoch `lostEpoch` (DATA_LOSS,
 * reason SESSION_LOST: e.g. a Redis without persistence restarted), and the adapter
 * goes on in `epoch` (it sent Connect again with the lost epoch, as the API says; `""`
 * when that Connect failed). Before this action the adapter handed out, for what was in
 * flight: a {@link Cancel} or {@link AbortPrepare} (with `error`) for each undecided job in
 * `jobIds` (release it: no commit was acted on, and it is never completed), and a
 * {@link SendFunctionResponse} with `payload.status: "unknown"` for each live call id in
 * `callIds` (the model hears about every call; whether its action happened is unknown,
 * e.g. a job whose `commit` was being performed). Tell the user, and reconcile with
 * the backend by the execute's `businessKey`: the new epoch remembers nothing, so a
 * re-issued call executes again.
 */
export interface SessionLost {
    type: "sessionLost";
    lostEpoch: string;
    epoch: string;
    callIds: string[];
    jobIds: string[];
    error: ArbiterError;
}
/** What the adapter hands the application; dispatch on `type`. */
export type Action = Execute | AbortPrepare | Commit | Cancel | SendFunctionResponse | SendNote | Skip | RunUpdate | SessionLost;
