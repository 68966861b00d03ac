import { status } from "@grpc/grpc-js";
const FIELD = /^([A-Za-z_][A-Za-z0-9_]*(?:\[\d+\])?(?:\.[A-Za-z_][A-Za-z0-9_]*(?:\[\d+\])?)*): /;
/**
 * An Arbiter RPC failed. Carries the gRPC status code, the request field at fault (the
 * server starts its messages with the field name and a colon: `call_id: "a b" must be
 * ...`) and the server's message. Subclasses exist for the codes the API documents.
 */
export class ArbiterError extends Error {
    /** The gRPC status code (`status.INVALID_ARGUMENT`, ...). */
    code;
    /** The request field the server named (`"call_id"`, `"call_ids[0]"`), if any. */
    field;
    /** The server's message (or the transport's, for a lost connection). */
    details;
    /** The RPC that failed (`"RegisterCall"`). */
    rpc;
    constructor(code, details, rpc = "") {
        super(`${rpc || "arbiter"}: ${status[code] ?? code}: ${details}`);
        this.name = new.target.name;
        this.code = code;
        this.details = details;
        this.field = FIELD.exec(details)?.[1];
        this.rpc = rpc;
    }
    /** The code's name, e.g. `"INVALID_ARGUMENT"`. */
    get codeName() {
        return status[this.code] ?? String(this.code);
    }
}
/** INVALID_ARGUMENT: a field is missing or malformed (see `field`). Nothing changed. */
export class InvalidArgumentError extends ArbiterError {
}
/** NOT_FOUND: the session or job does not exist (or expired). */
export class NotFoundError extends ArbiterError {
}
/** FAILED_PRECONDITION: the request does not fit the job's or session's state. */
export class FailedPreconditionError extends ArbiterError {
}
/** ABORTED: too many concurrent writers on one session, and retries ran out. */
export class AbortedError extends ArbiterError {
}
/**
 * UNAVAILABLE: the arbiter or its store could not be reached (after retries, for
 * idempotent RPCs). Nothing was decided: never treat it as a commit.
 */
export class UnavailableError extends ArbiterError {
}
/** DEADLINE_EXCEEDED: no answer within the RPC's timeout. */
export class DeadlineExceededError extends ArbiterError {
}
/** RESOURCE_EXHAUSTED: a session limit was reached (e.g. too many calls). */
export class ResourceExhaustedError extends ArbiterError {
}
const BY_CODE = {
    [status.INVALID_ARGUMENT]: InvalidArgumentError,
    [status.NOT_FOUND]: NotFoundError,
    [status.FAILED_PRECONDITION]: FailedPreconditionError,
    [status.ABORTED]: AbortedError,
    [status.UNAVAILABLE]: UnavailableError,
    [status.DEADLINE_EXCEEDED]: DeadlineExceededError,
    [status.RESOURCE_EXHAUSTED]: ResourceExhaustedError,
};
/** Converts a @grpc/grpc-js error into the matching typed {@link ArbiterError}. */
export function fromServiceError(err, rpc) {
    const Cls = BY_CODE[err.code] ?? ArbiterError;
    return new Cls(err.code, err.details ?? err.message, rpc);
}
