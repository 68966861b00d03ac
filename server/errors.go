package server

import (
	"context"
	"errors"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/protoadapt"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/voicearbiter/arbiter/arbiter"
)

// Handlers return arbiter errors (an *arbiter.Error of some Kind, a context error,
// or anything else, which is a bug); the errorCodes interceptors turn them into gRPC
// status errors in one place, with their details, inside the logging and metrics
// interceptors so those see the final code, and outside authentication, the rate
// limit and the deadline so that their errors get details too.
//
// Every error carries a google.rpc.ErrorInfo (domain ErrorDomain, a reason from the
// fixed vocabulary below, and metadata "field" when one field is at fault); an
// INVALID_ARGUMENT naming a field carries a google.rpc.BadRequest with that field's
// violation; the errors worth retrying carry a google.rpc.RetryInfo (retryDelay).
// Errors grpc-go answers before any interceptor runs (a request over
// --max-msg-size, an unknown method) have none.

// ErrorDomain is the domain of every ErrorInfo the arbiter sends.
const ErrorDomain = "arbiter.voicearbiter.dev"

// The reasons of ErrorInfo: a fixed vocabulary, each with one status code. Where no
// finer reason applies the reason is the code's name (NOT_FOUND, INTERNAL, ...).
const (
	// INVALID_ARGUMENT: a field is missing or malformed (BadRequest names it).
	ReasonInvalidField = "INVALID_FIELD"
	// INVALID_ARGUMENT: the request did not decode (a string that is not UTF-8,
	// nesting past protobuf's limit); BadRequest names the top-level field when it
	// can.
	ReasonMalformedRequest = "MALFORMED_REQUEST"
	// NOT_FOUND: no such session (or another tenant's), or it expired.
	ReasonSessionNotFound = "SESSION_NOT_FOUND"
	// NOT_FOUND: no such job in the session.
	ReasonJobNotFound = "JOB_NOT_FOUND"
	// FAILED_PRECONDITION: the session is closed.
	ReasonSessionClosed = "SESSION_CLOSED"
	// FAILED_PRECONDITION: the request does not fit the job's state (an outcome
	// that contradicts its decision, Decide on a read-only job, progress after
	// completion).
	ReasonJobState = "JOB_STATE_CONFLICT"
	// FAILED_PRECONDITION: the call id was registered for another tool, or with other
	// arguments.
	ReasonCallIDReused = "CALL_ID_REUSED"
	// FAILED_PRECONDITION: the event id names another event the session applied (a
	// retry sends its event unchanged).
	ReasonEventIDReused = "EVENT_ID_REUSED"
	// FAILED_PRECONDITION: the connection id names a connection that has ended.
	ReasonConnectionEnded = "CONNECTION_ENDED"
	// FAILED_PRECONDITION: after_seq is beyond the last effect or older than the
	// log keeps: resynchronise with GetSession.
	ReasonSeqOutOfRange = "SEQ_OUT_OF_RANGE"
	// DATA_LOSS: the request names an epoch the store lost.
	ReasonSessionLost = "SESSION_LOST"
	// UNAVAILABLE: the store could not be read or written (RetryInfo).
	ReasonStoreUnavailable = "STORE_UNAVAILABLE"
	// UNAVAILABLE: the server is shutting down: retry at once on another replica
	// (RetryInfo 0); nothing was lost (a Decide's decision is in the store, a Watch
	// resumes with after_seq).
	ReasonServerDraining = "SERVER_DRAINING"
	// ABORTED: too many concurrent writers on the session; nothing was written
	// (RetryInfo).
	ReasonWriteConflict = "WRITE_CONFLICT"
	// RESOURCE_EXHAUSTED: the session holds the most calls it may: retrying does
	// not help (no RetryInfo).
	ReasonCallLimit = "CALL_LIMIT"
	// RESOURCE_EXHAUSTED: the embedded store holds the most sessions it may
	// (RetryInfo).
	ReasonSessionLimit = "SESSION_LIMIT"
	// RESOURCE_EXHAUSTED: over the tenant's rate limit, or too many failed
	// authentications from the address (RetryInfo).
	ReasonRateLimited = "RATE_LIMITED"
)

// codeOf is the one map from error kinds to gRPC status codes.
var codeOf = map[arbiter.Kind]codes.Code{
	arbiter.Invalid:            codes.InvalidArgument,
	arbiter.NotFound:           codes.NotFound,
	arbiter.FailedPrecondition: codes.FailedPrecondition,
	arbiter.Conflict:           codes.Aborted,
	arbiter.Unavailable:        codes.Unavailable,
	arbiter.ResourceExhausted:  codes.ResourceExhausted,
	arbiter.DataLoss:           codes.DataLoss,
	arbiter.Internal:           codes.Internal,
}

// kindField is an error kind and the field it names ("" for any field).
type kindField struct {
	kind  arbiter.Kind
	field string
}

// reasons is the one map from an arbiter error (its kind, and the field it names)
// to its ErrorInfo reason; a kind and field not listed take the kind's entry with
// field "", else the code's name.
var reasons = map[kindField]string{
	{arbiter.NotFound, "session_id"}:              ReasonSessionNotFound,
	{arbiter.NotFound, "job_id"}:                  ReasonJobNotFound,
	{arbiter.FailedPrecondition, "session_id"}:    ReasonSessionClosed,
	{arbiter.FailedPrecondition, "job_id"}:        ReasonJobState,
	{arbiter.FailedPrecondition, "outcome"}:       ReasonJobState,
	{arbiter.FailedPrecondition, "result"}:        ReasonJobState,
	{arbiter.FailedPrecondition, "error"}:         ReasonJobState,
	{arbiter.FailedPrecondition, "call_id"}:       ReasonCallIDReused,
	{arbiter.FailedPrecondition, "connection_id"}: ReasonConnectionEnded,
	{arbiter.FailedPrecondition, "event_id"}:      ReasonEventIDReused,
	{arbiter.FailedPrecondition, "after_seq"}:     ReasonSeqOutOfRange,
	{arbiter.ResourceExhausted, "call_id"}:        ReasonCallLimit,
	{arbiter.ResourceExhausted, "session_id"}:     ReasonSessionLimit,
	{arbiter.DataLoss, ""}:                        ReasonSessionLost,
	{arbiter.Unavailable, ""}:                     ReasonStoreUnavailable,
	{arbiter.Conflict, ""}:                        ReasonWriteConflict,
}

// codeReasons are the reasons of status errors from the chain's other interceptors
// (authentication, the rate limit) and grpc-go, by code; any other code's reason is
// its name.
var codeReasons = map[codes.Code]string{
	codes.ResourceExhausted: ReasonRateLimited,
}

// retryDelays are the RetryInfo delays by reason: an error whose reason is not
// listed carries no RetryInfo (retrying it as it is cannot succeed, or the code
// says when it can: DEADLINE_EXCEEDED).
var retryDelays = map[string]time.Duration{
	// The store blinked: the clients back off from here.
	ReasonStoreUnavailable: 100 * time.Millisecond,
	"UNAVAILABLE":          100 * time.Millisecond,
	// The next replica answers at once.
	ReasonServerDraining: 0,
	// The server already retried its compare-and-set 32 times: let the writers
	// spread out.
	ReasonWriteConflict: 50 * time.Millisecond,
	"ABORTED":           50 * time.Millisecond,
	// A token bucket refills at the limit's rate; one second is a token at any rate
	// of 1/s or more.
	ReasonRateLimited:  time.Second,
	ReasonSessionLimit: time.Second,
}

// errDraining is the cause of the UNAVAILABLE of an RPC the server ended because it
// is shutting down (reason SERVER_DRAINING).
var errDraining = errors.New("server draining")

// draining returns the Unavailable error, with reason SERVER_DRAINING, of an RPC
// that Shutdown ended; msg says what the client does next.
func draining(msg string) error { return arbiter.Wrap(arbiter.Unavailable, errDraining, "%s", msg) }

// status converts an error from the chain below into a gRPC status error with its
// details. A status error (from grpc-go or an interceptor) keeps its code and
// message and gets details unless it has an ErrorInfo already; context errors keep
// their codes; kinded errors map through codeOf with their caller-safe message;
// anything else is INTERNAL and is the only kind logged as an error. method names
// the RPC for the store-error counter.
func (s *Server) status(ctx context.Context, method string, err error) error {
	if err == nil {
		return nil
	}
	if st, ok := status.FromError(err); ok {
		return withDetails(err, st)
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		st := status.FromContextError(err)
		return detailed(st, reasonOfCode(st.Code()), "")
	}
	k := arbiter.KindOf(err)
	if k == arbiter.Unavailable && s.metrics != nil && !errors.Is(err, errDraining) {
		s.metrics.storeErrs.WithLabelValues(method).Inc()
	}
	if k == arbiter.Internal {
		s.log.ErrorContext(ctx, "internal error", "err", err)
	}
	field := arbiter.FieldOf(err)
	return detailed(status.New(codeOf[k], arbiter.MessageOf(err)), reasonOf(err, k, field), field)
}

// reasonOf is the ErrorInfo reason of an arbiter error of kind k naming field.
func reasonOf(err error, k arbiter.Kind, field string) string {
	switch {
	case errors.Is(err, errDraining):
		return ReasonServerDraining
	case errors.Is(err, errUndecoded):
		return ReasonMalformedRequest
	case k == arbiter.Invalid && field != "":
		return ReasonInvalidField
	}
	if r, ok := reasons[kindField{k, field}]; ok {
		return r
	}
	if r, ok := reasons[kindField{k, ""}]; ok {
		return r
	}
	return reasonOfCode(codeOf[k])
}

// reasonOfCode is the reason of a status error that carries none: codeReasons, else
// the code's name.
func reasonOfCode(c codes.Code) string {
	if r, ok := codeReasons[c]; ok {
		return r
	}
	return codeName(c)
}

// codeName is c's name as the gRPC spec spells it ("RESOURCE_EXHAUSTED").
func codeName(c codes.Code) string {
	if n, ok := codeNames[c]; ok {
		return n
	}
	return "UNKNOWN"
}

var codeNames = map[codes.Code]string{
	codes.OK: "OK", codes.Canceled: "CANCELLED", codes.Unknown: "UNKNOWN", codes.InvalidArgument: "INVALID_ARGUMENT",
	codes.DeadlineExceeded: "DEADLINE_EXCEEDED", codes.NotFound: "NOT_FOUND", codes.AlreadyExists: "ALREADY_EXISTS",
	codes.PermissionDenied: "PERMISSION_DENIED", codes.ResourceExhausted: "RESOURCE_EXHAUSTED",
	codes.FailedPrecondition: "FAILED_PRECONDITION", codes.Aborted: "ABORTED", codes.OutOfRange: "OUT_OF_RANGE",
	codes.Unimplemented: "UNIMPLEMENTED", codes.Internal: "INTERNAL", codes.Unavailable: "UNAVAILABLE",
	codes.DataLoss: "DATA_LOSS", codes.Unauthenticated: "UNAUTHENTICATED",
}

// withDetails gives the status error err (whose status is st) its ErrorInfo, and
// RetryInfo where due, unless it carries an ErrorInfo already. A summarized
// authentication failure stays summarized (the access log writes it at debug).
func withDetails(err error, st *status.Status) error {
	for _, d := range st.Details() {
		if _, ok := d.(*errdetails.ErrorInfo); ok {
			return err
		}
	}
	out := detailed(st, reasonOfCode(st.Code()), "")
	var sm summarized
	if errors.As(err, &sm) {
		return summarized{status.Convert(out)}
	}
	return out
}

// detailed returns st as an error with the details of reason: ErrorInfo, BadRequest
// for an INVALID_ARGUMENT naming field, RetryInfo when retryDelays lists reason.
func detailed(st *status.Status, reason, field string) error {
	info := &errdetails.ErrorInfo{Reason: reason, Domain: ErrorDomain}
	if field != "" {
		info.Metadata = map[string]string{"field": field}
	}
	details := []protoadapt.MessageV1{info}
	if field != "" && st.Code() == codes.InvalidArgument {
		details = append(details, &errdetails.BadRequest{FieldViolations: []*errdetails.BadRequest_FieldViolation{{
			Field: field, Description: description(st.Message(), field),
		}}})
	}
	if d, ok := retryDelays[reason]; ok {
		details = append(details, &errdetails.RetryInfo{RetryDelay: durationpb.New(d)})
	}
	out, err := st.WithDetails(details...)
	if err != nil {
		return st.Err() // only a status with code OK refuses details
	}
	return out.Err()
}

// description is a field violation's description: the message without its
// "field: " prefix.
func description(msg, field string) string {
	if len(msg) > len(field)+2 && msg[:len(field)] == field && msg[len(field):len(field)+2] == ": " {
		return msg[len(field)+2:]
	}
	return msg
}

// unaryErrorCodes maps a unary handler's error to its status (status above).
func (s *Server) unaryErrorCodes(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	resp, err := h(ctx, req)
	if err != nil {
		return nil, s.status(ctx, info.FullMethod, err)
	}
	return resp, nil
}

// streamErrorCodes maps a streaming handler's error to its status (status above).
func (s *Server) streamErrorCodes(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
	return s.status(ss.Context(), info.FullMethod, h(srv, ss))
}
