package server_test

import (
	"context"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/voicearbiter/arbiter/arbiter"
	arbiterv1 "github.com/voicearbiter/arbiter/proto/arbiter/v1"
	"github.com/voicearbiter/arbiter/server"
	"github.com/voicearbiter/arbiter/store/memory"
)

// faultyStore fails Load with loadErr, and Save with saveErr, while they are set.
type faultyStore struct {
	arbiter.Store
	loadErr, saveErr atomic.Pointer[error]
}

func (f *faultyStore) Load(ctx context.Context, key arbiter.SessionKey) (*arbiter.Session, error) {
	if err := f.loadErr.Load(); err != nil {
		return nil, *err
	}
	return f.Store.Load(ctx, key)
}

func (f *faultyStore) Save(ctx context.Context, s *arbiter.Session, ttl time.Duration) error {
	if err := f.saveErr.Load(); err != nil {
		return *err
	}
	return f.Store.Save(ctx, s, ttl)
}

// clientOn serves svc over bufconn and returns a client.
func clientOn(t *testing.T, svc *arbiter.Service, o server.Options) arbiterv1.ArbiterServiceClient {
	t.Helper()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	o.Logger = quiet
	conn, _ := serveBufconn(t, server.New(svc, quiet), o)
	return arbiterv1.NewArbiterServiceClient(conn)
}

// TestErrorDetails: every kind of error the arbiter answers carries its ErrorInfo
// reason, INVALID_ARGUMENT its field violation, and those worth retrying their
// RetryInfo (a session's call limit is not: retrying cannot succeed).
func TestErrorDetails(t *testing.T) {
	policy := &arbiter.Policy{Tools: map[string]*arbiter.Tool{"book_slot": {Name: "book_slot", SideEffect: true}}}
	if err := policy.Validate(); err != nil {
		t.Fatal(err)
	}
	mem := memory.New(nil)
	mem.MaxSessions = 2
	store := &faultyStore{Store: mem}
	svc := &arbiter.Service{Engine: &arbiter.Engine{Policy: policy, MaxCalls: 2}, Store: store, Clock: arbiter.SystemClock{}}
	c := clientOn(t, svc, server.Options{})
	ctx := context.Background()
	must := func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	cn, err := c.Connect(ctx, &arbiterv1.ConnectRequest{SessionId: "s1", ConnectionId: "k1"})
	must(cn, err)
	must(c.Connect(ctx, &arbiterv1.ConnectRequest{SessionId: "s1", ConnectionId: "k2"}))
	must(c.RegisterCall(ctx, &arbiterv1.RegisterCallRequest{SessionId: "s1", CallId: "c1", Tool: "book_slot"}))
	must(c.RegisterCall(ctx, &arbiterv1.RegisterCallRequest{SessionId: "s1", CallId: "c2", Tool: "book_slot"}))
	must(c.ReportTranscript(ctx, &arbiterv1.ReportTranscriptRequest{SessionId: "s1", Text: "Sounds good.", EventId: "e2"}))
	must(c.ConfigureSession(ctx, &arbiterv1.ConfigureSessionRequest{SessionId: "closed"}))
	must(c.CloseSession(ctx, &arbiterv1.CloseSessionRequest{SessionId: "closed"}))
	beyond := uint64(99)
	unavailable := arbiter.Errorf(arbiter.Unavailable, "redis unavailable")
	conflict := arbiter.Errorf(arbiter.Conflict, "session changed")

	cases := []struct {
		name   string
		call   func() error
		code   codes.Code
		reason string
		field  string        // the field violation (INVALID_ARGUMENT) or metadata field
		retry  time.Duration // the RetryInfo delay; negative: none
	}{
		{"invalid field", func() error {
			_, err := c.ReportTranscript(ctx, &arbiterv1.ReportTranscriptRequest{SessionId: "s1", Text: " "})
			return err
		}, codes.InvalidArgument, server.ReasonInvalidField, "text", -1},
		{"session not found", func() error {
			_, err := c.GetSession(ctx, &arbiterv1.GetSessionRequest{SessionId: "nope"})
			return err
		}, codes.NotFound, server.ReasonSessionNotFound, "session_id", -1},
		{"job not found", func() error {
			_, err := c.Decide(ctx, &arbiterv1.DecideRequest{SessionId: "s1", JobId: "job-9"})
			return err
		}, codes.NotFound, server.ReasonJobNotFound, "job_id", -1},
		{"session closed", func() error {
			_, err := c.ReportSpeech(ctx, &arbiterv1.ReportSpeechRequest{SessionId: "closed", Event: arbiterv1.SpeechEvent_SPEECH_EVENT_USER_ACTIVITY_START})
			return err
		}, codes.FailedPrecondition, server.ReasonSessionClosed, "session_id", -1},
		{"call id reused for another tool", func() error {
			_, err := c.RegisterCall(ctx, &arbiterv1.RegisterCallRequest{SessionId: "s1", CallId: "c1", Tool: "other"})
			return err
		}, codes.FailedPrecondition, server.ReasonCallIDReused, "call_id", -1},
		{"event id reused for another event", func() error {
			_, err := c.ReportTranscript(ctx, &arbiterv1.ReportTranscriptRequest{SessionId: "s1", Text: "Actually, stop, don't book it.", EventId: "e2"})
			return err
		}, codes.FailedPrecondition, server.ReasonEventIDReused, "event_id", -1},
		{"call id reused with other arguments", func() error {
			args, _ := structpb.NewStruct(map[string]any{"slot": "friday 4pm"})
			_, err := c.RegisterCall(ctx, &arbiterv1.RegisterCallRequest{SessionId: "s1", CallId: "c1", Tool: "book_slot", Args: args})
			return err
		}, codes.FailedPrecondition, server.ReasonCallIDReused, "call_id", -1},
		{"connection ended", func() error {
			_, err := c.Connect(ctx, &arbiterv1.ConnectRequest{SessionId: "s1", ConnectionId: "k1"})
			return err
		}, codes.FailedPrecondition, server.ReasonConnectionEnded, "connection_id", -1},
		{"after_seq beyond the log", func() error {
			_, err := c.Poll(ctx, &arbiterv1.PollRequest{SessionId: "s1", AfterSeq: &beyond})
			return err
		}, codes.FailedPrecondition, server.ReasonSeqOutOfRange, "after_seq", -1},
		{"session lost", func() error {
			_, err := c.ReportSpeech(ctx, &arbiterv1.ReportSpeechRequest{SessionId: "s1", Epoch: "zzzzzz", Event: arbiterv1.SpeechEvent_SPEECH_EVENT_USER_ACTIVITY_START})
			return err
		}, codes.DataLoss, server.ReasonSessionLost, "session_id", -1},
		{"call limit", func() error {
			_, err := c.RegisterCall(ctx, &arbiterv1.RegisterCallRequest{SessionId: "s1", CallId: "c3", Tool: "book_slot"})
			return err
		}, codes.ResourceExhausted, server.ReasonCallLimit, "call_id", -1},
		{"session limit", func() error {
			_, err := c.ConfigureSession(ctx, &arbiterv1.ConfigureSessionRequest{SessionId: "third"})
			return err
		}, codes.ResourceExhausted, server.ReasonSessionLimit, "session_id", time.Second},
		{"store unavailable", func() error {
			store.loadErr.Store(&unavailable)
			defer store.loadErr.Store(nil)
			_, err := c.GetSession(ctx, &arbiterv1.GetSessionRequest{SessionId: "s1"})
			return err
		}, codes.Unavailable, server.ReasonStoreUnavailable, "", 100 * time.Millisecond},
		{"write conflict", func() error {
			store.saveErr.Store(&conflict)
			defer store.saveErr.Store(nil)
			_, err := c.ReportSpeech(ctx, &arbiterv1.ReportSpeechRequest{SessionId: "s1", Event: arbiterv1.SpeechEvent_SPEECH_EVENT_USER_ACTIVITY_START})
			return err
		}, codes.Aborted, server.ReasonWriteConflict, "", 50 * time.Millisecond},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call()
			wantCode(t, err, tc.code, tc.field)
			violation := ""
			if tc.code == codes.InvalidArgument {
				violation = tc.field
			}
			wantDetails(t, err, tc.reason, violation, tc.retry)
			for _, d := range status.Convert(err).Details() {
				if info, ok := d.(*errdetails.ErrorInfo); ok && info.Metadata["field"] != tc.field {
					t.Errorf("ErrorInfo metadata %v, want field %q", info.Metadata, tc.field)
				}
			}
		})
	}
}
