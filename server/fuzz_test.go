package server_test

import (
	"context"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/voicearbiter/arbiter/arbiter"
	arbiterv1 "github.com/voicearbiter/arbiter/proto/arbiter/v1"
	"github.com/voicearbiter/arbiter/server"
	"github.com/voicearbiter/arbiter/store/memory"
)

// Fuzz targets for every RPC's request handling (issue 12): the fuzzer's bytes are
// decoded as the RPC's request message (what grpc-go hands the handler after decoding
// the wire) and the request is handled by a Server on a session that already holds a
// call, a job and an utterance. The handler must not panic, must answer within
// the fuzz harness (no hang), and when it refuses the request (any error) the session
// it names must be unchanged: bad input changes nothing. The Watch stream is fuzzed
// through its request handling up to its first message.
//
//	go test ./server -run '^$' -fuzz FuzzRegisterCall -fuzztime 60s

// fuzzServer is a Server on the memory store with session "s1" holding call c1 (job
// job-1, undecided) and an open utterance, and the job id it made.
func fuzzServer(t *testing.T) (*server.Server, *arbiter.Service, string) {
	policy := &arbiter.Policy{Tools: map[string]*arbiter.Tool{
		"book_slot":  {Name: "book_slot", SideEffect: true, Key: []arbiter.KeyArg{{Arg: "slot", As: arbiter.KeyDatetime}}},
		"take_photo": {Name: "take_photo", SideEffect: true, Confirm: true},
	}}
	if err := policy.Validate(); err != nil {
		t.Fatal(err)
	}
	st := memory.New(nil)
	t.Cleanup(func() { _ = st.Close() })
	svc := &arbiter.Service{Engine: &arbiter.Engine{Policy: policy}, Store: st, Clock: arbiter.SystemClock{}, MaxWait: 50 * time.Millisecond}
	srv := server.New(svc, nil)
	ctx := context.Background()
	args, _ := structpb.NewStruct(map[string]any{"slot": "tomorrow 3pm"})
	reg, err := srv.RegisterCall(ctx, &arbiterv1.RegisterCallRequest{SessionId: "s1", CallId: "c1", Tool: "book_slot", Args: args})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := srv.ReportSpeech(ctx, &arbiterv1.ReportSpeechRequest{SessionId: "s1", Event: arbiterv1.SpeechEvent_SPEECH_EVENT_USER_ACTIVITY_START}); err != nil {
		t.Fatal(err)
	}
	return srv, svc, reg.GetJobId()
}

// fuzzRPC is the body of one RPC's fuzz target: decode, handle, check.
func fuzzRPC[Req proto.Message](f *testing.F, newReq func() Req, seeds func(job string) []Req, handle func(ctx context.Context, s *server.Server, req Req) error) {
	f.Helper()
	// Seeds: valid requests and a few broken ones, encoded.
	for _, r := range seeds("job-1.seed00") {
		b, err := proto.Marshal(r)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		req := newReq()
		if proto.Unmarshal(data, req) != nil {
			return // the codec refuses what does not decode before any handler runs (codec.go)
		}
		srv, svc, _ := fuzzServer(t)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		key := arbiter.SessionKey{ID: "s1"}
		before, err := svc.Store.Load(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		if err := handle(ctx, srv, req); err != nil {
			if k := arbiter.KindOf(err); k == arbiter.Internal && ctx.Err() == nil {
				t.Fatalf("%T %v: an internal error: %v", req, req, err)
			}
			after, lerr := svc.Store.Load(context.Background(), key)
			if lerr != nil || after.Version != before.Version {
				t.Fatalf("%T %v was refused (%v) but changed session s1: version %d -> %v (%v)", req, req, err, before.Version, after, lerr)
			}
		}
	})
}

func FuzzRegisterCall(f *testing.F) {
	fuzzRPC(f, func() *arbiterv1.RegisterCallRequest { return new(arbiterv1.RegisterCallRequest) },
		func(string) []*arbiterv1.RegisterCallRequest {
			args, _ := structpb.NewStruct(map[string]any{"slot": "tomorrow at 3pm", "n": 1.5, "l": []any{"a", nil}})
			return []*arbiterv1.RegisterCallRequest{
				{SessionId: "s1", CallId: "c2", Tool: "book_slot", Args: args},
				{SessionId: "s1", CallId: "c1", Tool: "book_slot", Args: args}, // the same id again
				{SessionId: "s1", CallId: "c3", Tool: "take_photo", Behavior: arbiterv1.Behavior_BEHAVIOR_BLOCKING},
				{SessionId: "s1", Tool: "confirm_action", RawArgs: `{"confirmed": tr`},
				{SessionId: "s1", CallId: "bad id", Tool: "book_slot", Age: durationpb.New(-time.Second)},
				{SessionId: "s2", CallId: "c1", Tool: "x", Epoch: "zzzzzz", ToolChoice: arbiterv1.ToolChoice_TOOL_CHOICE_NONE},
			}
		},
		func(ctx context.Context, s *server.Server, r *arbiterv1.RegisterCallRequest) error {
			_, err := s.RegisterCall(ctx, r)
			return err
		})
}

func FuzzReportSpeech(f *testing.F) {
	fuzzRPC(f, func() *arbiterv1.ReportSpeechRequest { return new(arbiterv1.ReportSpeechRequest) },
		func(string) []*arbiterv1.ReportSpeechRequest {
			return []*arbiterv1.ReportSpeechRequest{
				{SessionId: "s1", Event: arbiterv1.SpeechEvent_SPEECH_EVENT_INTERRUPTED},
				{SessionId: "s1", Event: arbiterv1.SpeechEvent_SPEECH_EVENT_USER_ACTIVITY_END, Age: durationpb.New(2 * time.Second), UtteranceId: "item_1"},
				{SessionId: "s1", Event: 99},
			}
		},
		func(ctx context.Context, s *server.Server, r *arbiterv1.ReportSpeechRequest) error {
			_, err := s.ReportSpeech(ctx, r)
			return err
		})
}

func FuzzReportTranscript(f *testing.F) {
	fuzzRPC(f, func() *arbiterv1.ReportTranscriptRequest { return new(arbiterv1.ReportTranscriptRequest) },
		func(string) []*arbiterv1.ReportTranscriptRequest {
			return []*arbiterv1.ReportTranscriptRequest{
				{SessionId: "s1", Text: "Actually, stop. Don't book it."},
				{SessionId: "s1", Text: "I have booked it for you.", Role: arbiterv1.Role_ROLE_MODEL},
				{SessionId: "s1", Text: "wait, make it 4pm", Interim: true, UtteranceId: "u.1", Age: durationpb.New(time.Hour)},
			}
		},
		func(ctx context.Context, s *server.Server, r *arbiterv1.ReportTranscriptRequest) error {
			_, err := s.ReportTranscript(ctx, r)
			return err
		})
}

func FuzzReportToolCallCancellation(f *testing.F) {
	fuzzRPC(f, func() *arbiterv1.ReportToolCallCancellationRequest {
		return new(arbiterv1.ReportToolCallCancellationRequest)
	},
		func(string) []*arbiterv1.ReportToolCallCancellationRequest {
			return []*arbiterv1.ReportToolCallCancellationRequest{
				{SessionId: "s1", CallIds: []string{"c1"}},
				{SessionId: "s1", CallIds: []string{"c1", "nope"}, Reason: arbiterv1.CancellationReason_CANCELLATION_REASON_PROVIDER_TIMEOUT},
				{SessionId: "s1", CallIds: []string{""}, Reason: 7},
			}
		},
		func(ctx context.Context, s *server.Server, r *arbiterv1.ReportToolCallCancellationRequest) error {
			_, err := s.ReportToolCallCancellation(ctx, r)
			return err
		})
}

func FuzzDecide(f *testing.F) {
	fuzzRPC(f, func() *arbiterv1.DecideRequest { return new(arbiterv1.DecideRequest) },
		func(job string) []*arbiterv1.DecideRequest {
			return []*arbiterv1.DecideRequest{
				{SessionId: "s1", JobId: job, Prepared: true},
				{SessionId: "s1", JobId: job, Wait: durationpb.New(10 * time.Millisecond)},
				{SessionId: "s1", JobId: "job-1", Wait: &durationpb.Duration{Seconds: -1, Nanos: 5}},
			}
		},
		func(ctx context.Context, s *server.Server, r *arbiterv1.DecideRequest) error {
			_, err := s.Decide(ctx, r)
			return err
		})
}

func FuzzComplete(f *testing.F) {
	fuzzRPC(f, func() *arbiterv1.CompleteRequest { return new(arbiterv1.CompleteRequest) },
		func(job string) []*arbiterv1.CompleteRequest {
			res, _ := structpb.NewStruct(map[string]any{"status": "x", "executed": true})
			return []*arbiterv1.CompleteRequest{
				{SessionId: "s1", JobId: job, Outcome: arbiterv1.Outcome_OUTCOME_FAILED, Error: "backend down"},
				{SessionId: "s1", JobId: job, Outcome: arbiterv1.Outcome_OUTCOME_COMMITTED, Result: res},
				{SessionId: "s1", JobId: job, Outcome: 42},
			}
		},
		func(ctx context.Context, s *server.Server, r *arbiterv1.CompleteRequest) error {
			_, err := s.Complete(ctx, r)
			return err
		})
}

func FuzzConfigureSession(f *testing.F) {
	fuzzRPC(f, func() *arbiterv1.ConfigureSessionRequest { return new(arbiterv1.ConfigureSessionRequest) },
		func(string) []*arbiterv1.ConfigureSessionRequest {
			return []*arbiterv1.ConfigureSessionRequest{
				{SessionId: "s1", Language: "es-MX", ResponseScheduling: true},
				{SessionId: "s1", Language: "not a tag!", Epoch: "abc"},
			}
		},
		func(ctx context.Context, s *server.Server, r *arbiterv1.ConfigureSessionRequest) error {
			_, err := s.ConfigureSession(ctx, r)
			return err
		})
}

func FuzzPoll(f *testing.F) {
	n := uint64(3)
	fuzzRPC(f, func() *arbiterv1.PollRequest { return new(arbiterv1.PollRequest) },
		func(string) []*arbiterv1.PollRequest {
			return []*arbiterv1.PollRequest{{SessionId: "s1"}, {SessionId: "s1", AfterSeq: &n}}
		},
		func(ctx context.Context, s *server.Server, r *arbiterv1.PollRequest) error {
			_, err := s.Poll(ctx, r)
			return err
		})
}

func FuzzGetSession(f *testing.F) {
	fuzzRPC(f, func() *arbiterv1.GetSessionRequest { return new(arbiterv1.GetSessionRequest) },
		func(string) []*arbiterv1.GetSessionRequest {
			return []*arbiterv1.GetSessionRequest{{SessionId: "s1"}, {SessionId: ""}}
		},
		func(ctx context.Context, s *server.Server, r *arbiterv1.GetSessionRequest) error {
			_, err := s.GetSession(ctx, r)
			return err
		})
}

func FuzzCloseSession(f *testing.F) {
	fuzzRPC(f, func() *arbiterv1.CloseSessionRequest { return new(arbiterv1.CloseSessionRequest) },
		func(string) []*arbiterv1.CloseSessionRequest {
			return []*arbiterv1.CloseSessionRequest{{SessionId: "s1"}, {SessionId: "s9"}}
		},
		func(ctx context.Context, s *server.Server, r *arbiterv1.CloseSessionRequest) error {
			_, err := s.CloseSession(ctx, r)
			return err
		})
}

func FuzzConnect(f *testing.F) {
	fuzzRPC(f, func() *arbiterv1.ConnectRequest { return new(arbiterv1.ConnectRequest) },
		func(string) []*arbiterv1.ConnectRequest {
			return []*arbiterv1.ConnectRequest{
				{SessionId: "s1", ConnectionId: "k2"},
				{SessionId: "s1", ConnectionId: "k2", Epoch: "old123"},
				{SessionId: "s1", ConnectionId: "a/b"},
			}
		},
		func(ctx context.Context, s *server.Server, r *arbiterv1.ConnectRequest) error {
			_, err := s.Connect(ctx, r)
			return err
		})
}

func FuzzReportProgress(f *testing.F) {
	fuzzRPC(f, func() *arbiterv1.ReportProgressRequest { return new(arbiterv1.ReportProgressRequest) },
		func(job string) []*arbiterv1.ReportProgressRequest {
			res, _ := structpb.NewStruct(map[string]any{"progress": "1/2"})
			return []*arbiterv1.ReportProgressRequest{{SessionId: "s1", JobId: job, Result: res}, {SessionId: "s1"}}
		},
		func(ctx context.Context, s *server.Server, r *arbiterv1.ReportProgressRequest) error {
			_, err := s.ReportProgress(ctx, r)
			return err
		})
}

// watchStream is a server stream that takes the first message and then ends the
// stream (its context), so a fuzzed Watch returns.
type watchStream struct {
	arbiterv1.ArbiterService_WatchServer
	ctx    context.Context
	cancel context.CancelFunc
}

func (w *watchStream) Context() context.Context { return w.ctx }
func (w *watchStream) Send(*arbiterv1.WatchResponse) error {
	w.cancel()
	return nil
}

func FuzzWatch(f *testing.F) {
	fuzzRPC(f, func() *arbiterv1.WatchRequest { return new(arbiterv1.WatchRequest) },
		func(string) []*arbiterv1.WatchRequest {
			return []*arbiterv1.WatchRequest{{SessionId: "s1"}, {SessionId: "s1", AfterSeq: 99}, {SessionId: "nope"}}
		},
		func(ctx context.Context, s *server.Server, r *arbiterv1.WatchRequest) error {
			wctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
			defer cancel()
			err := s.Watch(r, &watchStream{ctx: wctx, cancel: cancel})
			if wctx.Err() != nil && arbiter.KindOf(err) == arbiter.Internal {
				return nil // the stream's context ended it: not a refusal
			}
			return err
		})
}

func FuzzGetHistory(f *testing.F) {
	fuzzRPC(f, func() *arbiterv1.GetHistoryRequest { return new(arbiterv1.GetHistoryRequest) },
		func(string) []*arbiterv1.GetHistoryRequest {
			return []*arbiterv1.GetHistoryRequest{{SessionId: "s1"}, {SessionId: ""}, {SessionId: "s9"}, {SessionId: "a b"}}
		},
		func(ctx context.Context, s *server.Server, r *arbiterv1.GetHistoryRequest) error {
			_, err := s.GetHistory(ctx, r)
			return err
		})
}
