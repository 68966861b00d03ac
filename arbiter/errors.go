package arbiter

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Kind classifies an error. The gRPC edge maps each kind to one status code, once
// (server/errors.go); anything without a kind is Internal and is the only kind logged
// as an error.
type Kind int

// The error kinds.
const (
	// Internal: a bug or an unexpected failure (gRPC INTERNAL).
	Internal Kind = iota
	// Invalid: bad input; the message names the field, and so does Error.Field
	// (INVALID_ARGUMENT).
	Invalid
	// NotFound: the session or job does not exist (NOT_FOUND).
	NotFound
	// FailedPrecondition: the request does not fit the current state
	// (FAILED_PRECONDITION).
	FailedPrecondition
	// Conflict: a compare-and-set lost the race to another writer (ABORTED after the
	// bounded retries).
	Conflict
	// Unavailable: the store could not be read or written (UNAVAILABLE). Fail closed.
	Unavailable
	// ResourceExhausted: a configured limit was reached (RESOURCE_EXHAUSTED).
	ResourceExhausted
	// DataLoss: the request names a session lifetime (epoch) its store lost: the
	// outcome of what was decided in it is unknown (DATA_LOSS).
	DataLoss
)

// String names the kind in words ("not found").
func (k Kind) String() string {
	switch k {
	case Invalid:
		return "invalid"
	case NotFound:
		return "not found"
	case FailedPrecondition:
		return "failed precondition"
	case Conflict:
		return "conflict"
	case Unavailable:
		return "unavailable"
	case ResourceExhausted:
		return "resource exhausted"
	case DataLoss:
		return "data loss"
	default:
		return "internal"
	}
}

// Error is an error with a Kind. Message is safe to show to the caller.
type Error struct {
	Kind Kind
	// Message says what is wrong. When Field is set it starts with the field and a
	// colon ("text: 17000 bytes, at most 16384").
	Message string
	// Field is the request field at fault as the API names it ("session_id",
	// "call_ids[2]", "args"), or "" when the error is about no one field. The gRPC edge
	// reports it as a field violation (INVALID_ARGUMENT) and in the error's metadata.
	Field string
	// Err is the underlying cause, if any (not shown to callers).
	Err error
}

// Error returns the message and, after a colon, the cause.
func (e *Error) Error() string {
	if e.Err != nil {
		return e.Message + ": " + e.Err.Error()
	}
	return e.Message
}

// Unwrap returns the cause, for errors.Is and errors.As.
func (e *Error) Unwrap() error { return e.Err }

// Errorf returns an *Error of kind k with a formatted message.
func Errorf(k Kind, format string, args ...any) error {
	return &Error{Kind: k, Message: fmt.Sprintf(format, args...)}
}

// Fieldf returns an *Error of kind k about one field: its Field is field and its
// Message is "field: " and the formatted text.
func Fieldf(k Kind, field, format string, args ...any) error {
	return &Error{Kind: k, Field: field, Message: field + ": " + fmt.Sprintf(format, args...)}
}

// Wrap returns an *Error of kind k whose cause is err.
func Wrap(k Kind, err error, format string, args ...any) error {
	return &Error{Kind: k, Message: fmt.Sprintf(format, args...), Err: err}
}

// KindOf returns err's kind: the Kind of the first *Error in its chain, Internal for
// any other non-nil error.
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return Internal
}

// MessageOf returns the caller-safe message of err: the Message of its *Error, or
// "internal error".
func MessageOf(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Message
	}
	return "internal error"
}

// FieldOf returns the field err is about: the Field of the first *Error in its chain
// (a *FieldError's path), or "".
func FieldOf(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Field
	}
	return ""
}

// CheckName returns nil when v has the shape of a session id, call id, job id,
// connection id or tool name (ValidName: 1-128 characters from [A-Za-z0-9_.:-]), and
// otherwise an Invalid error naming field, with v clipped to 40 bytes. It is the one
// place that message is written.
func CheckName(field, v string) error {
	if validName(v) {
		return nil
	}
	return Fieldf(Invalid, field, "%q must be 1-128 characters from [A-Za-z0-9_.:-]", Clip(v))
}

// Clip shortens s to at most 40 bytes (and "...") for quoting caller input in an
// error message.
func Clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}

// checkSize is the Invalid error naming field when v, JSON-encoded, is larger than
// max bytes (or does not encode). A JSON-shaped v is measured without encoding it
// (jsonLen); anything else is encoded.
func checkSize(field string, v any, max int) error {
	n, ok := jsonLen(v)
	if !ok {
		b, err := json.Marshal(v)
		if err != nil {
			return Fieldf(Invalid, field, "not JSON-encodable: %v", err)
		}
		n = len(b)
	}
	if n > max {
		return Fieldf(Invalid, field, "%d bytes, at most %d", n, max)
	}
	return nil
}

// checkDepth returns an Invalid error naming field when v, a JSON-shaped value
// (map[string]any, []any, scalars), nests objects and lists more than max levels deep
// (MaxArgsDepth); nil otherwise. It stops descending at max+1 levels, so its time is
// bounded by the part of v within that depth.
func checkDepth(field string, v any, max int) error {
	if nestedDeeper(v, max) {
		return Fieldf(Invalid, field, "nests objects and lists more than %d levels deep (the clients cannot decode what the arbiter would echo)", max)
	}
	return nil
}

// nestedDeeper reports whether v nests objects and lists more than max levels deep.
func nestedDeeper(v any, max int) bool {
	switch v := v.(type) {
	case map[string]any:
		if max <= 0 {
			return true
		}
		for _, e := range v {
			if nestedDeeper(e, max-1) {
				return true
			}
		}
	case []any:
		if max <= 0 {
			return true
		}
		for _, e := range v {
			if nestedDeeper(e, max-1) {
				return true
			}
		}
	}
	return false
}

// findJob returns the session's job named by id. Errors: NotFound naming the job and
// the session.
func findJob(s *Session, id string) (*Job, error) {
	j := s.job(id)
	if j == nil {
		return nil, Fieldf(NotFound, "job_id", "job %q not found in session %q", Clip(id), s.Key.ID)
	}
	return j, nil
}

// FieldError is an Invalid error about one field of an input value (Policy.Validate
// returns it): where the field is, the value at fault and what is wrong with it. It
// unwraps to an *Error of kind Invalid whose Message is Error() and whose Field is the
// path, so KindOf, MessageOf and FieldOf treat it as any Invalid error; a reader of a
// file (package policyfile) takes it apart to name the field as the file spells it,
// and its line.
type FieldError struct {
	// Path locates the field from the top of the value down. Each element is a string
	// (a field, named as the tool-policy file names it: "defaults", "key", "as"), an int
	// (an index into a list) or an Entry (a map entry by its key: a tool by its name, a
	// language by its code). Error renders it as "tools[book_slot].key[0].as".
	Path []any
	// Value is the value at fault as the message quotes it (a string in double quotes,
	// a number bare), or "" when the message quotes none.
	Value string
	// Problem says what is wrong: "is negative", "required". Where it involves another
	// field, Other, it says "{other}" for where that field is.
	Problem string
	// Other is the path of the other field Problem involves (the first of two equal key
	// args, the tool a confirm_tool names), or nil.
	Other []any
}

// Entry is an element of a FieldError's Path: a map entry, by its key.
type Entry string

// Error returns "PATH: VALUE PROBLEM", {other} in Problem read "at PATH".
func (e *FieldError) Error() string {
	return e.Format(FieldPath(e.Path), e.Value, "at "+FieldPath(e.Other))
}

// Format returns the message with the field's path, its value and the other place as
// given: "path: value problem" ("path: problem" when value is ""), with {other} in
// Problem replaced by other.
func (e *FieldError) Format(path, value, other string) string {
	problem := strings.ReplaceAll(e.Problem, "{other}", other)
	if value == "" {
		return path + ": " + problem
	}
	return path + ": " + value + " " + problem
}

// Unwrap returns the error as an *Error of kind Invalid whose Field is the path.
func (e *FieldError) Unwrap() error {
	return &Error{Kind: Invalid, Message: e.Error(), Field: FieldPath(e.Path)}
}

// FieldPath renders a FieldError path: fields joined by dots, indexes and entries in
// brackets ("tools[book_slot].key[0].as").
func FieldPath(path []any) string {
	var b strings.Builder
	for _, el := range path {
		switch el := el.(type) {
		case int:
			fmt.Fprintf(&b, "[%d]", el)
		case Entry:
			fmt.Fprintf(&b, "[%s]", string(el))
		default:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			fmt.Fprint(&b, el)
		}
	}
	return b.String()
}
