package server_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/voicearbiter/arbiter/arbiter"
	arbiterv1 "github.com/voicearbiter/arbiter/proto/arbiter/v1"
	"github.com/voicearbiter/arbiter/server"
	"github.com/voicearbiter/arbiter/store/memory"
)

// discard is a span exporter that drops every span: the SDK's whole cost (sampling,
// attributes, events, the batch processor) without an export.
type discard struct{}

func (discard) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (discard) Shutdown(context.Context) error                             { return nil }

// BenchmarkRegisterCallObserved is BenchmarkRegisterCall with what production turns
// on: metrics (Prometheus, the store counted), tracing (every span sampled, batched to
// an exporter that drops them), and both.
func BenchmarkRegisterCallObserved(b *testing.B) {
	for _, mode := range []string{"metrics", "tracing", "metrics+tracing"} {
		for _, per := range []int{1, 20, 200} {
			b.Run(fmt.Sprintf("%s/calls_per_session=%d", mode, per), func(b *testing.B) {
				policy := &arbiter.Policy{Tools: map[string]*arbiter.Tool{
					"book_slot": {Name: "book_slot", SideEffect: true, Key: []arbiter.KeyArg{{Arg: "slot", As: arbiter.KeyDatetime}}, Describe: "the booking for {slot}"},
				}}
				if err := policy.Validate(); err != nil {
					b.Fatal(err)
				}
				quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
				o := server.Options{Logger: quiet}
				var store arbiter.Store = memory.New(nil)
				if mode != "tracing" {
					o.Metrics = server.NewMetrics()
					store = server.InstrumentStore(store, o.Metrics)
				}
				if mode != "metrics" {
					tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(discard{}))
					b.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
					o.TracerProvider = tp
				}
				svc := &arbiter.Service{Engine: &arbiter.Engine{Policy: policy}, Store: store, Clock: arbiter.SystemClock{}}
				conn, _ := serveBufconn(b, server.New(svc, quiet), o)
				c := arbiterv1.NewArbiterServiceClient(conn)
				ctx := context.Background()
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					_, err := c.RegisterCall(ctx, &arbiterv1.RegisterCallRequest{
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
}
