package server_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"google.golang.org/protobuf/types/known/durationpb"

	arbiterv1 "github.com/voicearbiter/arbiter/proto/arbiter/v1"
)

// BenchmarkRegisterCall: one RegisterCall of a new side-effecting call per op, over
// in-process gRPC (bufconn) on the memory store: the hot path without the network.
// A session is one record, so the cost grows with the calls it already holds: the
// sub-benchmarks rotate sessions every N calls.
func BenchmarkRegisterCall(b *testing.B) {
	for _, per := range []int{1, 20, 200} {
		b.Run(fmt.Sprintf("calls_per_session=%d", per), func(b *testing.B) {
			f := start(b)
			ctx := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				_, err := f.c.RegisterCall(ctx, &arbiterv1.RegisterCallRequest{
					SessionId: fmt.Sprintf("s%d", i/per), CallId: fmt.Sprintf("c%d", i), Tool: "book_slot",
					Args: args(b, map[string]any{"slot": fmt.Sprintf("day %d at 3pm", i)}),
				})
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkRegisterCallParallel: RegisterCall of a new side-effecting call in a new
// session per op, from 25 goroutines per GOMAXPROCS (50 on 2 cores, bench/run.sh's
// concurrency) over one bufconn connection: more RPCs in flight than the server has
// stream workers, as under ghz, so the per-RPC goroutines and their stack growth show.
func BenchmarkRegisterCallParallel(b *testing.B) {
	f := start(b)
	ctx := context.Background()
	var n atomic.Int64
	b.ReportAllocs()
	b.SetParallelism(25)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := n.Add(1)
			_, err := f.c.RegisterCall(ctx, &arbiterv1.RegisterCallRequest{
				SessionId: fmt.Sprintf("p%d", i), CallId: fmt.Sprintf("c%d", i), Tool: "book_slot",
				Args: args(b, map[string]any{"slot": fmt.Sprintf("day %d at 3pm", i)}),
			})
			if err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkLifecycle: one whole call per op — RegisterCall, ReportSpeech (start and
// end), ReportTranscript, Decide(prepared), Complete — each in its own session.
func BenchmarkLifecycle(b *testing.B) {
	f := start(b)
	ctx := context.Background()
	a := args(b, map[string]any{"slot": "tomorrow 3pm"})
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		sid := fmt.Sprintf("life%d", i)
		reg, err := f.c.RegisterCall(ctx, &arbiterv1.RegisterCallRequest{SessionId: sid, CallId: "c1", Tool: "book_slot", Args: a})
		if err != nil {
			b.Fatal(err)
		}
		for _, ev := range []arbiterv1.SpeechEvent{arbiterv1.SpeechEvent_SPEECH_EVENT_USER_ACTIVITY_START, arbiterv1.SpeechEvent_SPEECH_EVENT_USER_ACTIVITY_END} {
			if _, err := f.c.ReportSpeech(ctx, &arbiterv1.ReportSpeechRequest{SessionId: sid, Event: ev}); err != nil {
				b.Fatal(err)
			}
		}
		if _, err := f.c.ReportTranscript(ctx, &arbiterv1.ReportTranscriptRequest{SessionId: sid, Text: "Stop, don't."}); err != nil {
			b.Fatal(err)
		}
		d, err := f.c.Decide(ctx, &arbiterv1.DecideRequest{SessionId: sid, JobId: reg.JobId, Prepared: true, Wait: durationpb.New(0)})
		if err != nil || d.Decision != arbiterv1.Decision_DECISION_CANCEL {
			b.Fatalf("decide: %v %v", d, err)
		}
		if _, err := f.c.Complete(ctx, &arbiterv1.CompleteRequest{SessionId: sid, JobId: reg.JobId, Outcome: arbiterv1.Outcome_OUTCOME_CANCELLED}); err != nil {
			b.Fatal(err)
		}
	}
}
