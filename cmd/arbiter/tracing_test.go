package main

import (
	"context"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	arbiterv1 "github.com/voicearbiter/arbiter/proto/arbiter/v1"
)

// TestTracesExporters: which OTEL_* settings turn tracing on, and with what.
func TestTracesExporters(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		want string
		err  string
	}{
		{env: nil, want: ""},
		{env: map[string]string{"OTEL_SERVICE_NAME": "arbiter-eu"}, want: ""},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"}, want: "otlp"},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://collector:4318/v1/traces"}, want: "otlp"},
		{env: map[string]string{"OTEL_TRACES_EXPORTER": "otlp"}, want: "otlp"},
		{env: map[string]string{"OTEL_TRACES_EXPORTER": "console"}, want: "console"},
		{env: map[string]string{"OTEL_TRACES_EXPORTER": "otlp, Console,otlp"}, want: "otlp,console"},
		{env: map[string]string{"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"}, want: ""},
		{env: map[string]string{"OTEL_SDK_DISABLED": "true", "OTEL_TRACES_EXPORTER": "otlp"}, want: ""},
		{env: map[string]string{"OTEL_TRACES_EXPORTER": "zipkin"}, err: `"zipkin" is not otlp, console or none`},
	} {
		got, err := tracesExporters(func(k string) string { return tc.env[k] })
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%v: error %v, want %q", tc.env, err, tc.err)
			}
			continue
		}
		if err != nil || strings.Join(got, ",") != tc.want {
			t.Errorf("%v: %v %v, want %q", tc.env, got, err, tc.want)
		}
	}
	if _, err := otlpExporter(context.Background(), func(k string) string {
		return map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"}[k]
	}); err == nil || !strings.Contains(err.Error(), "http/json") {
		t.Errorf("http/json: %v", err)
	}
}

// TestCLIServeTracesToConsole: with OTEL_TRACES_EXPORTER=console, serve exports one
// span per RPC on stdout (flushed at shutdown), in the caller's trace when the request
// carries a traceparent, with the arbiter's attributes; its first line says so.
// With metrics on, the store's round trips are counted.
func TestCLIServeTracesToConsole(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ready := make(chan string, 1)
	stdout, stderr := &syncBuffer{}, &syncBuffer{}
	env := &runEnv{ctx: ctx, stdout: stdout, stderr: stderr, ready: ready, getenv: func(k string) string {
		return map[string]string{"OTEL_TRACES_EXPORTER": "console"}[k]
	}}
	done := make(chan int, 1)
	go func() {
		done <- env.run([]string{"serve", "--listen", "127.0.0.1:0", "--tools", "../../testdata/tools/booking.yaml", "--metrics-listen", "127.0.0.1:0"})
	}()
	var addr string
	select {
	case addr = <-ready:
	case code := <-done:
		t.Fatalf("serve exited with %d\n%s", code, stderr.String())
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not start")
	}
	if !strings.Contains(stderr.String(), "tracing=console") {
		t.Errorf("the serving line does not say tracing is on:\n%s", stderr.String())
	}
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	const traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	rctx := metadata.AppendToOutgoingContext(context.Background(), "traceparent", "00-"+traceID+"-00f067aa0ba902b7-01")
	if _, err := arbiterv1.NewArbiterServiceClient(conn).RegisterCall(rctx, &arbiterv1.RegisterCallRequest{SessionId: "s", CallId: "c1", Tool: "book_slot"}); err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`msg="metrics serving" addr=(\S+)`).FindStringSubmatch(stderr.String())
	if m == nil {
		t.Fatalf("no metrics address:\n%s", stderr.String())
	}
	resp, err := http.Get("http://" + m[1] + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{`arbiter_store_requests_total{op="load",result="not_found"} 1`, `arbiter_store_requests_total{op="save",result="ok"} 1`, "arbiter_sessions "} {
		if !strings.Contains(string(body), want) {
			t.Errorf("metrics lack %q", want)
		}
	}
	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("serve exited with %d\n%s", code, stderr.String())
		}
	case <-time.After(15 * time.Second):
		t.Fatal("serve did not stop")
	}
	out := stdout.String()
	for _, want := range []string{`"Name":"arbiter.v1.ArbiterService/RegisterCall"`, `"TraceID":"` + traceID + `"`, `"Key":"arbiter.session_id"`, `"Key":"arbiter.disposition"`, `"Value":"arbiter"`} {
		if !strings.Contains(out, want) {
			t.Errorf("exported spans lack %s:\n%s", want, out)
		}
	}
}
