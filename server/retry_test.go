package server_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"
	"google.golang.org/protobuf/proto"

	"github.com/voicearbiter/arbiter/arbiter"
	arbiterv1 "github.com/voicearbiter/arbiter/proto/arbiter/v1"
	"github.com/voicearbiter/arbiter/server"
	"github.com/voicearbiter/arbiter/store/memory"
)

// serviceConfigPath is the gRPC service config the clients use.
const serviceConfigPath = "../clients/service-config.json"

// serviceConfig is the part of a gRPC service config the tests read.
type serviceConfig struct {
	MethodConfig []struct {
		Name []struct {
			Service string `json:"service"`
			Method  string `json:"method"`
		} `json:"name"`
		RetryPolicy struct {
			MaxAttempts          int      `json:"maxAttempts"`
			RetryableStatusCodes []string `json:"retryableStatusCodes"`
		} `json:"retryPolicy"`
	} `json:"methodConfig"`
}

// TestServiceConfigCodes: the service config names every method of ArbiterService
// once, retries each on UNAVAILABLE and ABORTED (nothing was decided; a compare-and-set
// conflict wrote nothing), and on DEADLINE_EXCEEDED only where a repeat is recognised
// and carries no `age` (a retry resends the first attempt's age, so after a deadline
// an observed event would land seconds later than it was observed): never Decide
// (a long-poll whose deadline ran out is asked again by the client) nor Watch.
func TestServiceConfigCodes(t *testing.T) {
	b, err := os.ReadFile(serviceConfigPath)
	if err != nil {
		t.Fatal(err)
	}
	var sc serviceConfig
	if err := json.Unmarshal(b, &sc); err != nil {
		t.Fatalf("%s: %v", serviceConfigPath, err)
	}
	codesOf := map[string][]string{}
	for _, mc := range sc.MethodConfig {
		if n := mc.RetryPolicy.MaxAttempts; n < 2 || n > 5 {
			t.Errorf("maxAttempts %d: grpc clients cap it at 5, and under 2 is no retry", n)
		}
		for _, n := range mc.Name {
			if n.Service != arbiterv1.ArbiterService_ServiceDesc.ServiceName {
				t.Errorf("service %q", n.Service)
			}
			if _, dup := codesOf[n.Method]; dup {
				t.Errorf("%s is configured twice", n.Method)
			}
			codesOf[n.Method] = mc.RetryPolicy.RetryableStatusCodes
		}
	}
	var methods []string
	for _, m := range arbiterv1.ArbiterService_ServiceDesc.Methods {
		methods = append(methods, m.MethodName)
	}
	for _, s := range arbiterv1.ArbiterService_ServiceDesc.Streams {
		methods = append(methods, s.StreamName)
	}
	aged := []string{"RegisterCall", "ReportSpeech", "ReportTranscript", "ReportToolCallCancellation"}
	for _, m := range methods {
		c, ok := codesOf[m]
		if !ok {
			t.Errorf("%s has no retry policy", m)
			continue
		}
		delete(codesOf, m)
		if !slices.Contains(c, "UNAVAILABLE") || !slices.Contains(c, "ABORTED") {
			t.Errorf("%s retries %v: want UNAVAILABLE and ABORTED", m, c)
		}
		deadline := slices.Contains(c, "DEADLINE_EXCEEDED")
		if want := m != "Decide" && m != "Watch" && !slices.Contains(aged, m); deadline != want {
			t.Errorf("%s retries %v: DEADLINE_EXCEEDED %v, want %v", m, c, deadline, want)
		}
		for _, code := range c {
			if code != "UNAVAILABLE" && code != "ABORTED" && code != "DEADLINE_EXCEEDED" {
				t.Errorf("%s retries %s", m, code)
			}
		}
	}
	for m := range codesOf {
		t.Errorf("%s is not a method of ArbiterService", m)
	}
}

// loseFirstAnswer is a server interceptor that lets the first ReportTranscript run
// and then loses its answer (the client gets UNAVAILABLE, as when the connection
// breaks after the server applied the request), recording what the handler answered
// and each attempt's grpc-previous-rpc-attempts header.
type loseFirstAnswer struct {
	mu       sync.Mutex
	attempts []string
	lost     *arbiterv1.ReportTranscriptResponse
}

func (l *loseFirstAnswer) intercept(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	if info.FullMethod != "/arbiter.v1.ArbiterService/ReportTranscript" {
		return h(ctx, req)
	}
	md, _ := metadata.FromIncomingContext(ctx)
	l.mu.Lock()
	l.attempts = append(l.attempts, strings.Join(md.Get("grpc-previous-rpc-attempts"), ","))
	first := len(l.attempts) == 1
	l.mu.Unlock()
	resp, err := h(ctx, req)
	if !first || err != nil {
		return resp, err
	}
	l.mu.Lock()
	l.lost = proto.Clone(resp.(*arbiterv1.ReportTranscriptResponse)).(*arbiterv1.ReportTranscriptResponse)
	l.mu.Unlock()
	return nil, status.Error(codes.Unavailable, "test: the answer was lost on its way back")
}

func (l *loseFirstAnswer) reset() {
	l.mu.Lock()
	l.attempts, l.lost = nil, nil
	l.mu.Unlock()
}

// TestServiceConfigRetriesTranscriptOnce: through a channel running the clients'
// service config, a ReportTranscript with an event_id whose first answer is lost
// after the server applied it is retried by the channel itself and applied once: the
// retry answers `repeat` with no effects, the utterance holds the piece once, and the
// effects of the first application come from the log (Poll with after_seq). The same
// request without an event_id is applied twice: that is what the id is for.
func TestServiceConfigRetriesTranscriptOnce(t *testing.T) {
	cfg, err := os.ReadFile(serviceConfigPath)
	if err != nil {
		t.Fatal(err)
	}
	policy := &arbiter.Policy{Tools: map[string]*arbiter.Tool{"take_photo": {Name: "take_photo", SideEffect: true, Confirm: true}}}
	if err := policy.Validate(); err != nil {
		t.Fatal(err)
	}
	store := memory.New(nil)
	svc := &arbiter.Service{Engine: &arbiter.Engine{Policy: policy}, Store: store, Clock: arbiter.SystemClock{}}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	lose := &loseFirstAnswer{}
	gs, _ := server.NewGRPCServer(server.New(svc, quiet), server.Options{Logger: quiet,
		ServerOptions: []grpc.ServerOption{grpc.ChainUnaryInterceptor(lose.intercept)}})
	lis := bufconn.Listen(1 << 20)
	go func() { _ = gs.Serve(lis) }()
	conn, err := grpc.NewClient("passthrough:///bufconn",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultServiceConfig(string(cfg)))
	if err != nil {
		t.Fatalf("the service config does not load: %v", err)
	}
	t.Cleanup(func() { conn.Close(); gs.Stop() })
	c := arbiterv1.NewArbiterServiceClient(conn)
	ctx := context.Background()

	if _, err := c.RegisterCall(ctx, &arbiterv1.RegisterCallRequest{SessionId: "r", CallId: "c1", Tool: "take_photo", Behavior: arbiterv1.Behavior_BEHAVIOR_BLOCKING}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ReportSpeech(ctx, &arbiterv1.ReportSpeechRequest{SessionId: "r", Event: arbiterv1.SpeechEvent_SPEECH_EVENT_USER_ACTIVITY_START, EventId: "e1"}); err != nil {
		t.Fatal(err)
	}
	gs0, err := c.GetSession(ctx, &arbiterv1.GetSessionRequest{SessionId: "r"})
	if err != nil {
		t.Fatal(err)
	}
	const piece = "No, don't take it."
	tr, err := c.ReportTranscript(ctx, &arbiterv1.ReportTranscriptRequest{SessionId: "r", Text: piece, EventId: "t1"})
	if err != nil {
		t.Fatalf("ReportTranscript through the service config: %v (the channel did not retry it)", err)
	}
	lose.mu.Lock()
	attempts, lost := lose.attempts, lose.lost
	lose.mu.Unlock()
	if !slices.Equal(attempts, []string{"", "1"}) {
		t.Fatalf("attempts with grpc-previous-rpc-attempts %q, want a first attempt and one retry by the channel", attempts)
	}
	if !tr.Repeat || len(tr.GetEffects().GetNotes()) != 0 || len(tr.GetEffects().GetRuns()) != 0 || tr.Intent != "" {
		t.Fatalf("the retry answered %v, want a repeat with no effects", tr)
	}
	if lost.Repeat || lost.Intent != "stop" || len(lost.GetEffects().GetNotes()) != 1 || len(lost.GetEffects().GetRuns()) != 1 {
		t.Fatalf("the first attempt answered %v, want the stop with its run update and note", lost)
	}
	sess, err := store.Load(ctx, arbiter.SessionKey{ID: "r"})
	if err != nil {
		t.Fatal(err)
	}
	if u := sess.Utterances[len(sess.Utterances)-1]; u.Text != piece {
		t.Fatalf("utterance text %q, want the piece once", u.Text)
	}
	after := gs0.LastSeq
	poll, err := c.Poll(ctx, &arbiterv1.PollRequest{SessionId: "r", AfterSeq: &after})
	if err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(poll.Effects, lost.Effects) {
		t.Fatalf("Poll after_seq %d gave %v, want the lost answer's effects %v", after, poll.Effects, lost.Effects)
	}

	// Without an event id the retry is a new piece: the utterance holds it twice.
	lose.reset()
	if _, err := c.ReportSpeech(ctx, &arbiterv1.ReportSpeechRequest{SessionId: "r2", Event: arbiterv1.SpeechEvent_SPEECH_EVENT_USER_ACTIVITY_START}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ReportTranscript(ctx, &arbiterv1.ReportTranscriptRequest{SessionId: "r2", Text: piece}); err != nil {
		t.Fatal(err)
	}
	if sess, err = store.Load(ctx, arbiter.SessionKey{ID: "r2"}); err != nil {
		t.Fatal(err)
	}
	lose.mu.Lock()
	attempts = lose.attempts
	lose.mu.Unlock()
	if !slices.Equal(attempts, []string{"", "1"}) {
		t.Fatalf("attempts %q, want a first attempt and one retry by the channel", attempts)
	}
	if u := sess.Utterances[0]; u.Text != piece+" "+piece {
		t.Fatalf("without an event id the utterance holds %q, want the piece twice (else this test proves nothing)", u.Text)
	}
}

// TestEventIDRepeats: each event RPC sent again with its event_id answers `repeat`
// and changes nothing (the session's version stays); a malformed id is
// INVALID_ARGUMENT naming event_id.
func TestEventIDRepeats(t *testing.T) {
	f := start(t)
	ctx := context.Background()
	reg, err := f.c.RegisterCall(ctx, &arbiterv1.RegisterCallRequest{SessionId: "s1", CallId: "c1", Tool: "book_slot", Args: args(t, map[string]any{"slot": "tomorrow 3pm"})})
	if err != nil {
		t.Fatal(err)
	}
	type repeater interface{ GetRepeat() bool }
	for _, rpc := range []struct {
		name string
		call func(id string) (repeater, error)
	}{
		{"ReportSpeech", func(id string) (repeater, error) {
			return f.c.ReportSpeech(ctx, &arbiterv1.ReportSpeechRequest{SessionId: "s1", Event: arbiterv1.SpeechEvent_SPEECH_EVENT_MODEL_OUTPUT_START, EventId: id})
		}},
		{"ReportTranscript", func(id string) (repeater, error) {
			return f.c.ReportTranscript(ctx, &arbiterv1.ReportTranscriptRequest{SessionId: "s1", Text: "and at three", EventId: id})
		}},
		{"ReportProgress", func(id string) (repeater, error) {
			return f.c.ReportProgress(ctx, &arbiterv1.ReportProgressRequest{SessionId: "s1", JobId: reg.JobId, EventId: id})
		}},
		{"ReportToolCallCancellation", func(id string) (repeater, error) {
			return f.c.ReportToolCallCancellation(ctx, &arbiterv1.ReportToolCallCancellationRequest{SessionId: "s1", CallIds: []string{"c9"}, EventId: id})
		}},
	} {
		t.Run(rpc.name, func(t *testing.T) {
			first, err := rpc.call("ev-1")
			if err != nil || first.GetRepeat() {
				t.Fatalf("first: %v %v", first, err)
			}
			before, _ := f.c.GetSession(ctx, &arbiterv1.GetSessionRequest{SessionId: "s1"})
			again, err := rpc.call("ev-1")
			if err != nil || !again.GetRepeat() {
				t.Fatalf("again: %v %v, want a repeat", again, err)
			}
			after, _ := f.c.GetSession(ctx, &arbiterv1.GetSessionRequest{SessionId: "s1"})
			if after.Version != before.Version {
				t.Errorf("the repeat changed the session: version %d -> %d", before.Version, after.Version)
			}
			_, err = rpc.call("ev 1")
			wantCode(t, err, codes.InvalidArgument, "event_id")
			wantDetails(t, err, server.ReasonInvalidField, "event_id", -1)
		})
	}
}
