package server_test

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/voicearbiter/arbiter/arbiter"
	arbiterv1 "github.com/voicearbiter/arbiter/proto/arbiter/v1"
	"github.com/voicearbiter/arbiter/server"
	"github.com/voicearbiter/arbiter/store/memory"
)

type fixture struct {
	conn  *grpc.ClientConn
	c     arbiterv1.ArbiterServiceClient
	h     healthpb.HealthClient
	store *memory.Store
	svc   *arbiter.Service
}

func start(t testing.TB) *fixture {
	t.Helper()
	policy := &arbiter.Policy{Tools: map[string]*arbiter.Tool{
		"book_slot": {Name: "book_slot", SideEffect: true, Key: []arbiter.KeyArg{{Arg: "slot", As: arbiter.KeyDatetime}}, Describe: "the booking for {slot}"},
	}}
	if err := policy.Validate(); err != nil {
		t.Fatal(err)
	}
	store := memory.New(nil)
	svc := &arbiter.Service{Engine: &arbiter.Engine{Policy: policy}, Store: store, Clock: arbiter.SystemClock{}, Calls: store}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	conn, _ := serveBufconn(t, server.New(svc, quiet), server.Options{Logger: quiet})
	return &fixture{conn: conn, c: arbiterv1.NewArbiterServiceClient(conn), h: healthpb.NewHealthClient(conn), store: store, svc: svc}
}

func args(t testing.TB, m map[string]any) *structpb.Struct {
	s, err := structpb.NewStruct(m)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// deep wraps leaf in objects so that the result is n levels deep ({"a": {"a": leaf}}
// is 3).
func deep(n int, leaf map[string]any) map[string]any {
	v := leaf
	for i := 1; i < n; i++ {
		v = map[string]any{"a": v}
	}
	return v
}

// TestArgsAtTheDepthLimit: args of exactly arbiter.MaxArgsDepth levels are accepted
// and registered (one level more is INVALID_ARGUMENT: TestBadInput).
func TestArgsAtTheDepthLimit(t *testing.T) {
	f := start(t)
	ctx := context.Background()
	a := deep(arbiter.MaxArgsDepth, map[string]any{"x": 1})
	a["slot"] = "tomorrow 3pm"
	reg, err := f.c.RegisterCall(ctx, &arbiterv1.RegisterCallRequest{SessionId: "s1", CallId: "c1", Tool: "book_slot", Args: args(t, a)})
	if err != nil {
		t.Fatal(err)
	}
	if reg.Disposition != arbiterv1.Disposition_DISPOSITION_EXECUTE {
		t.Fatalf("disposition %v", reg.Disposition)
	}
}

func wantCode(t *testing.T, err error, code codes.Code, field string) {
	t.Helper()
	st, _ := status.FromError(err)
	if st.Code() != code {
		t.Fatalf("got %v (%v), want %v", st.Code(), err, code)
	}
	if field != "" && !strings.Contains(st.Message(), field) {
		t.Fatalf("message %q does not name %q", st.Message(), field)
	}
}

// wantDetails fails t unless err carries the arbiter's ErrorInfo with reason, a
// BadRequest whose one violation names field (none when field is ""), and a
// RetryInfo of retry (none when retry is negative).
func wantDetails(t *testing.T, err error, reason, field string, retry time.Duration) {
	t.Helper()
	var (
		info *errdetails.ErrorInfo
		bad  *errdetails.BadRequest
		ri   *errdetails.RetryInfo
	)
	for _, d := range status.Convert(err).Details() {
		switch d := d.(type) {
		case *errdetails.ErrorInfo:
			info = d
		case *errdetails.BadRequest:
			bad = d
		case *errdetails.RetryInfo:
			ri = d
		default:
			t.Errorf("unexpected detail %T %v", d, d)
		}
	}
	if info == nil || info.Domain != server.ErrorDomain || info.Reason != reason {
		t.Errorf("ErrorInfo %v, want reason %s in %s (%v)", info, reason, server.ErrorDomain, err)
	}
	switch {
	case field == "" && bad != nil:
		t.Errorf("BadRequest %v, want none", bad)
	case field != "" && (bad == nil || len(bad.FieldViolations) != 1 || bad.FieldViolations[0].Field != field || bad.FieldViolations[0].Description == ""):
		t.Errorf("BadRequest %v, want one violation of %q", bad, field)
	case field != "" && info.GetMetadata()["field"] != field:
		t.Errorf("ErrorInfo metadata %v, want field %q", info.GetMetadata(), field)
	}
	switch {
	case retry < 0 && ri != nil:
		t.Errorf("RetryInfo %v, want none", ri)
	case retry >= 0 && (ri == nil || ri.RetryDelay.AsDuration() != retry):
		t.Errorf("RetryInfo %v, want a delay of %v", ri, retry)
	}
}

func TestHealthAndLifecycle(t *testing.T) {
	f := start(t)
	ctx := context.Background()
	for _, svc := range []string{"", "arbiter.v1.ArbiterService", server.LivenessService} {
		hr, err := f.h.Check(ctx, &healthpb.HealthCheckRequest{Service: svc})
		if err != nil || hr.Status != healthpb.HealthCheckResponse_SERVING {
			t.Fatalf("health %q: %v %v", svc, hr, err)
		}
	}
	reg, err := f.c.RegisterCall(ctx, &arbiterv1.RegisterCallRequest{SessionId: "s1", CallId: "c1", Tool: "book_slot", Args: args(t, map[string]any{"slot": "tomorrow 3pm"})})
	if err != nil {
		t.Fatal(err)
	}
	if reg.Disposition != arbiterv1.Disposition_DISPOSITION_EXECUTE || !reg.SideEffect || reg.JobId == "" {
		t.Fatalf("register: %v", reg)
	}
	// Before prepare: no decision, the job is PREPARING and the call pending.
	d, err := f.c.Decide(ctx, &arbiterv1.DecideRequest{SessionId: "s1", JobId: reg.JobId, Wait: durationpb.New(0)})
	if err != nil || d.Decision != arbiterv1.Decision_DECISION_PENDING {
		t.Fatalf("decide before prepare: %v %v", d, err)
	}
	gs, err := f.c.GetSession(ctx, &arbiterv1.GetSessionRequest{SessionId: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	if len(gs.PendingCalls) != 1 || gs.PendingCalls[0].CallId != "c1" || len(gs.Jobs) != 1 || gs.Jobs[0].State != arbiterv1.JobState_JOB_STATE_PREPARING {
		t.Fatalf("session: %v", gs)
	}
	// A stop while the prepare runs: a Decide long-polling before prepare returns CANCEL
	// as soon as the transcript arrives.
	got := make(chan *arbiterv1.DecideResponse, 1)
	go func() {
		d, err := f.c.Decide(ctx, &arbiterv1.DecideRequest{SessionId: "s1", JobId: reg.JobId, Wait: durationpb.New(10 * time.Second)})
		if err != nil {
			t.Error(err)
		}
		got <- d
	}()
	time.Sleep(50 * time.Millisecond)
	if _, err := f.c.ReportSpeech(ctx, &arbiterv1.ReportSpeechRequest{SessionId: "s1", Event: arbiterv1.SpeechEvent_SPEECH_EVENT_USER_ACTIVITY_START}); err != nil {
		t.Fatal(err)
	}
	tr, err := f.c.ReportTranscript(ctx, &arbiterv1.ReportTranscriptRequest{SessionId: "s1", Text: "Stop, don't book it."})
	if err != nil || tr.Intent != "stop" || len(tr.CancelledJobIds) != 1 {
		t.Fatalf("transcript: %v %v", tr, err)
	}
	select {
	case d := <-got:
		if d.Decision != arbiterv1.Decision_DECISION_CANCEL || !strings.Contains(d.Reason, "stop intent") {
			t.Fatalf("long-poll decision: %v", d)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("long-polling Decide did not wake on the stop")
	}
	// Committing against a cancel decision is refused and changes nothing.
	_, err = f.c.Complete(ctx, &arbiterv1.CompleteRequest{SessionId: "s1", JobId: reg.JobId, Outcome: arbiterv1.Outcome_OUTCOME_COMMITTED})
	wantCode(t, err, codes.FailedPrecondition, "outcome")
	comp, err := f.c.Complete(ctx, &arbiterv1.CompleteRequest{SessionId: "s1", JobId: reg.JobId, Outcome: arbiterv1.Outcome_OUTCOME_CANCELLED})
	if err != nil {
		t.Fatal(err)
	}
	e := comp.Effects
	if len(e.Responses) != 1 || e.Responses[0].CallId != "c1" || e.Responses[0].Name != "book_slot" ||
		e.Responses[0].Payload.Fields["status"].GetStringValue() != "cancelled" || len(e.Notes) != 1 ||
		e.Notes[0].Deliver != arbiterv1.Delivery_DELIVERY_NOW {
		t.Fatalf("complete effects: %v", e)
	}
	again, err := f.c.Complete(ctx, &arbiterv1.CompleteRequest{SessionId: "s1", JobId: reg.JobId, Outcome: arbiterv1.Outcome_OUTCOME_CANCELLED})
	if err != nil || len(again.Effects.Responses) != 1 || again.Effects.Responses[0].CallId != "c1" {
		t.Fatalf("repeated Complete is not idempotent: %v %v", again, err)
	}
	cl, err := f.c.CloseSession(ctx, &arbiterv1.CloseSessionRequest{SessionId: "s1"})
	if err != nil || len(cl.Effects.Skips) != 0 {
		t.Fatalf("close: %v %v", cl, err)
	}
	_, err = f.c.RegisterCall(ctx, &arbiterv1.RegisterCallRequest{SessionId: "s1", CallId: "c9", Tool: "book_slot"})
	wantCode(t, err, codes.FailedPrecondition, "closed")
}

// TestBadInput: every malformed request gets InvalidArgument, NotFound or
// FailedPrecondition naming the field or the session, and changes nothing.
func TestBadInput(t *testing.T) {
	f := start(t)
	ctx := context.Background()
	reg, err := f.c.RegisterCall(ctx, &arbiterv1.RegisterCallRequest{SessionId: "s1", CallId: "c1", Tool: "book_slot", Args: args(t, map[string]any{"slot": "tomorrow 3pm"})})
	if err != nil {
		t.Fatal(err)
	}
	before, err := f.c.GetSession(ctx, &arbiterv1.GetSessionRequest{SessionId: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	big := map[string]any{"slot": strings.Repeat("x", 70<<10)}
	long := strings.Repeat("a", 129)
	cases := []struct {
		name  string
		call  func() error
		code  codes.Code
		field string // named by the message; for INVALID_ARGUMENT, the violation's field
		// reason is the ErrorInfo reason.
		reason string
	}{
		{"empty session id", func() error {
			_, err := f.c.RegisterCall(ctx, &arbiterv1.RegisterCallRequest{Tool: "book_slot"})
			return err
		}, codes.InvalidArgument, "session_id", server.ReasonInvalidField},
		{"over-long session id", func() error {
			_, err := f.c.ReportSpeech(ctx, &arbiterv1.ReportSpeechRequest{SessionId: long, Event: arbiterv1.SpeechEvent_SPEECH_EVENT_USER_ACTIVITY_START})
			return err
		}, codes.InvalidArgument, "session_id", server.ReasonInvalidField},
		{"over-long call id", func() error {
			_, err := f.c.RegisterCall(ctx, &arbiterv1.RegisterCallRequest{SessionId: "s1", CallId: long, Tool: "book_slot"})
			return err
		}, codes.InvalidArgument, "call_id", server.ReasonInvalidField},
		{"call id with spaces", func() error {
			_, err := f.c.RegisterCall(ctx, &arbiterv1.RegisterCallRequest{SessionId: "s1", CallId: "a b", Tool: "book_slot"})
			return err
		}, codes.InvalidArgument, "call_id", server.ReasonInvalidField},
		{"empty tool", func() error {
			_, err := f.c.RegisterCall(ctx, &arbiterv1.RegisterCallRequest{SessionId: "s1", CallId: "c2"})
			return err
		}, codes.InvalidArgument, "tool", server.ReasonInvalidField},
		{"args over 64 KiB", func() error {
			_, err := f.c.RegisterCall(ctx, &arbiterv1.RegisterCallRequest{SessionId: "s1", CallId: "c3", Tool: "book_slot", Args: args(t, big)})
			return err
		}, codes.InvalidArgument, "args", server.ReasonInvalidField},
		{"args nested 200 levels", func() error {
			_, err := f.c.RegisterCall(ctx, &arbiterv1.RegisterCallRequest{SessionId: "s1", CallId: "c5", Tool: "book_slot", Args: args(t, deep(200, map[string]any{"slot": "friday 3pm"}))})
			return err
		}, codes.InvalidArgument, "args", server.ReasonInvalidField},
		{"args nested 17 levels", func() error {
			a := deep(17, map[string]any{"x": 1})
			a["slot"] = "friday 3pm"
			_, err := f.c.RegisterCall(ctx, &arbiterv1.RegisterCallRequest{SessionId: "s1", CallId: "c6", Tool: "book_slot", Args: args(t, a)})
			return err
		}, codes.InvalidArgument, "args", server.ReasonInvalidField},
		{"progress result nested 17 levels", func() error {
			_, err := f.c.ReportProgress(ctx, &arbiterv1.ReportProgressRequest{SessionId: "s1", JobId: reg.JobId, Result: args(t, deep(17, map[string]any{"percent": 40}))})
			return err
		}, codes.InvalidArgument, "result", server.ReasonInvalidField},
		{"unknown behavior", func() error {
			_, err := f.c.RegisterCall(ctx, &arbiterv1.RegisterCallRequest{SessionId: "s1", CallId: "c4", Tool: "book_slot", Behavior: 9})
			return err
		}, codes.InvalidArgument, "behavior", server.ReasonInvalidField},
		{"negative age", func() error {
			_, err := f.c.ReportSpeech(ctx, &arbiterv1.ReportSpeechRequest{SessionId: "s1", Event: arbiterv1.SpeechEvent_SPEECH_EVENT_USER_ACTIVITY_START, Age: durationpb.New(-time.Second)})
			return err
		}, codes.InvalidArgument, "age", server.ReasonInvalidField},
		// issue 25, item 8: an age far beyond its bound was taken as 60 s, silently; a
		// malformed epoch was DATA_LOSS; a NUL in a transcript was kept.
		{"age beyond the bound", func() error {
			_, err := f.c.ReportSpeech(ctx, &arbiterv1.ReportSpeechRequest{SessionId: "s1", Event: arbiterv1.SpeechEvent_SPEECH_EVENT_USER_ACTIVITY_START, Age: durationpb.New(25 * time.Minute)})
			return err
		}, codes.InvalidArgument, "age", server.ReasonInvalidField},
		{"malformed epoch", func() error {
			_, err := f.c.ReportSpeech(ctx, &arbiterv1.ReportSpeechRequest{SessionId: "s1", Event: arbiterv1.SpeechEvent_SPEECH_EVENT_USER_ACTIVITY_START, Epoch: "lost!"})
			return err
		}, codes.InvalidArgument, "epoch", server.ReasonInvalidField},
		{"NUL in a transcript", func() error {
			_, err := f.c.ReportTranscript(ctx, &arbiterv1.ReportTranscriptRequest{SessionId: "s1", Text: "stop\x00"})
			return err
		}, codes.InvalidArgument, "text", server.ReasonInvalidField},
		{"unspecified speech event", func() error {
			_, err := f.c.ReportSpeech(ctx, &arbiterv1.ReportSpeechRequest{SessionId: "s1"})
			return err
		}, codes.InvalidArgument, "event", server.ReasonInvalidField},
		{"empty user transcript", func() error {
			_, err := f.c.ReportTranscript(ctx, &arbiterv1.ReportTranscriptRequest{SessionId: "s1", Text: "  "})
			return err
		}, codes.InvalidArgument, "text", server.ReasonInvalidField},
		{"transcript over 16 KiB", func() error {
			_, err := f.c.ReportTranscript(ctx, &arbiterv1.ReportTranscriptRequest{SessionId: "s1", Text: strings.Repeat("stop ", 4000)})
			return err
		}, codes.InvalidArgument, "text", server.ReasonInvalidField},
		{"decide unknown session", func() error {
			_, err := f.c.Decide(ctx, &arbiterv1.DecideRequest{SessionId: "nope", JobId: reg.JobId})
			return err
		}, codes.NotFound, "nope", server.ReasonSessionNotFound},
		{"decide unknown job", func() error {
			_, err := f.c.Decide(ctx, &arbiterv1.DecideRequest{SessionId: "s1", JobId: "job-99"})
			return err
		}, codes.NotFound, "job_id", server.ReasonJobNotFound},
		{"decide empty job", func() error {
			_, err := f.c.Decide(ctx, &arbiterv1.DecideRequest{SessionId: "s1"})
			return err
		}, codes.InvalidArgument, "job_id", server.ReasonInvalidField},
		{"decide negative wait", func() error {
			_, err := f.c.Decide(ctx, &arbiterv1.DecideRequest{SessionId: "s1", JobId: reg.JobId, Wait: durationpb.New(-time.Second)})
			return err
		}, codes.InvalidArgument, "wait", server.ReasonInvalidField},
		{"complete unspecified outcome", func() error {
			_, err := f.c.Complete(ctx, &arbiterv1.CompleteRequest{SessionId: "s1", JobId: reg.JobId})
			return err
		}, codes.InvalidArgument, "outcome", server.ReasonInvalidField},
		{"complete out of order", func() error {
			_, err := f.c.Complete(ctx, &arbiterv1.CompleteRequest{SessionId: "s1", JobId: reg.JobId, Outcome: arbiterv1.Outcome_OUTCOME_COMMITTED})
			return err
		}, codes.FailedPrecondition, "outcome", server.ReasonJobState},
		{"complete result on a two-phase job", func() error {
			_, err := f.c.Complete(ctx, &arbiterv1.CompleteRequest{SessionId: "s1", JobId: reg.JobId, Outcome: arbiterv1.Outcome_OUTCOME_RESULT})
			return err
		}, codes.FailedPrecondition, "outcome", server.ReasonJobState},
		{"complete unknown job", func() error {
			_, err := f.c.Complete(ctx, &arbiterv1.CompleteRequest{SessionId: "s1", JobId: "job-99", Outcome: arbiterv1.Outcome_OUTCOME_FAILED})
			return err
		}, codes.NotFound, "job_id", server.ReasonJobNotFound},
		{"cancellation without ids", func() error {
			_, err := f.c.ReportToolCallCancellation(ctx, &arbiterv1.ReportToolCallCancellationRequest{SessionId: "s1"})
			return err
		}, codes.InvalidArgument, "call_ids", server.ReasonInvalidField},
		{"cancellation with a bad id on an unknown session", func() error {
			_, err := f.c.ReportToolCallCancellation(ctx, &arbiterv1.ReportToolCallCancellationRequest{SessionId: "nope", CallIds: []string{"bad id"}})
			return err
		}, codes.InvalidArgument, "call_ids[0]", server.ReasonInvalidField},
		{"get unknown session", func() error {
			_, err := f.c.GetSession(ctx, &arbiterv1.GetSessionRequest{SessionId: "nope"})
			return err
		}, codes.NotFound, "nope", server.ReasonSessionNotFound},
		{"close unknown session", func() error {
			_, err := f.c.CloseSession(ctx, &arbiterv1.CloseSessionRequest{SessionId: "nope"})
			return err
		}, codes.NotFound, "nope", server.ReasonSessionNotFound},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call()
			wantCode(t, err, tc.code, tc.field)
			violation := ""
			if tc.code == codes.InvalidArgument {
				violation = tc.field
			}
			wantDetails(t, err, tc.reason, violation, -1)
		})
	}
	after, err := f.c.GetSession(ctx, &arbiterv1.GetSessionRequest{SessionId: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	if after.Version != before.Version {
		t.Fatalf("bad input changed the session: version %d -> %d", before.Version, after.Version)
	}
	if _, err := f.c.GetSession(ctx, &arbiterv1.GetSessionRequest{SessionId: "nope"}); status.Code(err) != codes.NotFound {
		t.Fatalf("a bad request created session %q", "nope")
	}
}

// TestCompleteAnswersWhateverItCarries: issue 25, item 5. A result over 64 KiB (it was
// INVALID_ARGUMENT naming `result`, and nothing answered the call) is answered with the
// outcome and `result_omitted` saying its size and the limit; an error over 4 KiB with a
// NUL in it is answered cut and cleaned; a retry of either returns the same effects.
func TestCompleteAnswersWhateverItCarries(t *testing.T) {
	f := start(t)
	ctx := context.Background()
	weather, err := f.c.RegisterCall(ctx, &arbiterv1.RegisterCallRequest{SessionId: "s1", CallId: "w1", Tool: "get_weather", Args: args(t, map[string]any{"city": "Lyon"})})
	if err != nil {
		t.Fatal(err)
	}
	big := &arbiterv1.CompleteRequest{SessionId: "s1", JobId: weather.JobId, Outcome: arbiterv1.Outcome_OUTCOME_RESULT,
		Result: args(t, map[string]any{"forecast": strings.Repeat("sunny ", 20000)})}
	resp, err := f.c.Complete(ctx, big)
	if err != nil {
		t.Fatalf("Complete with a 117 KiB result: %v", err)
	}
	if len(resp.Effects.Responses) != 1 || resp.Effects.Responses[0].CallId != "w1" {
		t.Fatalf("effects %v: want w1 answered", resp.Effects)
	}
	p := resp.Effects.Responses[0].Payload.AsMap()
	om, _ := p["result_omitted"].(map[string]any)
	if p["status"] != "ok" || p["result"] != nil || om["reason"] != "too_large" || om["bytes"] != float64(120015) || om["max_bytes"] != float64(65536) {
		t.Fatalf("payload %v: want status ok and result_omitted too_large 120015 of 65536 bytes", p)
	}
	again, err := f.c.Complete(ctx, big)
	if err != nil || len(again.Effects.Responses) != 1 || again.Effects.Responses[0].Seq != resp.Effects.Responses[0].Seq {
		t.Fatalf("retried Complete: %v %v, want the same response again", again, err)
	}

	book, err := f.c.RegisterCall(ctx, &arbiterv1.RegisterCallRequest{SessionId: "s1", CallId: "b1", Tool: "book_slot", Args: args(t, map[string]any{"slot": "tomorrow 3pm"})})
	if err != nil {
		t.Fatal(err)
	}
	failed, err := f.c.Complete(ctx, &arbiterv1.CompleteRequest{SessionId: "s1", JobId: book.JobId, Outcome: arbiterv1.Outcome_OUTCOME_FAILED,
		Error: "backend\x00 down: " + strings.Repeat("e", 5000)})
	if err != nil {
		t.Fatalf("Complete with a 5 KiB error: %v", err)
	}
	msg, _ := failed.Effects.Responses[0].Payload.AsMap()["error"].(string)
	if len(msg) > 4096 || !strings.HasPrefix(msg, "backend\uFFFD down: eee") || !strings.HasSuffix(msg, "[... cut: the error was 5015 bytes, at most 4096 are kept]") {
		t.Fatalf("error %q (%d bytes): want it cleaned, cut to 4096 bytes with the marker", msg, len(msg))
	}
}

// TestConfigureTimeZone: issue 25, item 6. ConfigureSession sets the session's time
// zone (GetSession and the answer report it, "UTC" by default); `as: datetime` keys then
// read "tomorrow 3pm" in it and an ISO date-time with an offset as its instant. An
// unknown zone is INVALID_ARGUMENT naming time_zone.
func TestConfigureTimeZone(t *testing.T) {
	f := start(t)
	ctx := context.Background()
	if gs, err := f.c.ConfigureSession(ctx, &arbiterv1.ConfigureSessionRequest{SessionId: "z"}); err != nil || gs.TimeZone != "UTC" {
		t.Fatalf("ConfigureSession without a zone: %v %v, want UTC", gs, err)
	}
	cfg, err := f.c.ConfigureSession(ctx, &arbiterv1.ConfigureSessionRequest{SessionId: "z", TimeZone: "America/New_York"})
	if err != nil || cfg.TimeZone != "America/New_York" {
		t.Fatalf("ConfigureSession: %v %v", cfg, err)
	}
	if gs, err := f.c.GetSession(ctx, &arbiterv1.GetSessionRequest{SessionId: "z"}); err != nil || gs.TimeZone != "America/New_York" {
		t.Fatalf("GetSession: %v %v, want the zone", gs, err)
	}
	a, err := f.c.RegisterCall(ctx, &arbiterv1.RegisterCallRequest{SessionId: "z", CallId: "c1", Tool: "book_slot", Args: args(t, map[string]any{"slot": "2026-11-05T14:30:00Z"})})
	if err != nil {
		t.Fatal(err)
	}
	b, err := f.c.RegisterCall(ctx, &arbiterv1.RegisterCallRequest{SessionId: "z", CallId: "c2", Tool: "book_slot", Args: args(t, map[string]any{"slot": "2026-11-05 09:30"})})
	if err != nil || b.Disposition != arbiterv1.Disposition_DISPOSITION_DUPLICATE || b.BusinessKey != a.BusinessKey || a.BusinessKey != "book_slot(slot=2026-11-05T14:30)" {
		t.Fatalf("09:30 in New York after 14:30Z: %v %v (first key %q), want a duplicate of one key", b, err, a.BusinessKey)
	}
	_, err = f.c.ConfigureSession(ctx, &arbiterv1.ConfigureSessionRequest{SessionId: "z", TimeZone: "Mars/Olympus_Mons"})
	wantCode(t, err, codes.InvalidArgument, "time_zone")
}

// TestReportTranscriptReading: issue 25, item 8. ReportTranscript carries the agent's
// own reading of the utterance; fused with the arbiter's (cautious by default), a
// confident stop cancels what the arbiter's phrases did not hear as one, and a
// malformed reading is INVALID_ARGUMENT naming its field.
func TestReportTranscriptReading(t *testing.T) {
	f := start(t)
	ctx := context.Background()
	reg, err := f.c.RegisterCall(ctx, &arbiterv1.RegisterCallRequest{SessionId: "r", CallId: "c1", Tool: "book_slot", Args: args(t, map[string]any{"slot": "tomorrow 3pm"})})
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.c.ReportTranscript(ctx, &arbiterv1.ReportTranscriptRequest{SessionId: "r", Text: "Let's leave it for now.",
		Reading: &arbiterv1.AgentReading{Intent: "stop", Confidence: 1.2}})
	wantCode(t, err, codes.InvalidArgument, "reading.confidence")
	resp, err := f.c.ReportTranscript(ctx, &arbiterv1.ReportTranscriptRequest{SessionId: "r", Text: "Let's leave it for now.",
		Reading: &arbiterv1.AgentReading{Intent: "stop", Confidence: 0.9, Source: "nlu-v3"}})
	if err != nil || resp.Intent != "stop" || len(resp.CancelledJobIds) != 1 || resp.CancelledJobIds[0] != reg.JobId {
		t.Fatalf("ReportTranscript with a stop reading: %v %v, want the job cancelled", resp, err)
	}
	d, err := f.c.Decide(ctx, &arbiterv1.DecideRequest{SessionId: "r", JobId: reg.JobId})
	if err != nil || d.Decision != arbiterv1.Decision_DECISION_CANCEL || !strings.Contains(d.Reason, "read by nlu-v3, confidence 0.9") {
		t.Fatalf("Decide: %v %v", d, err)
	}
}
