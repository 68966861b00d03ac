package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/voicearbiter/arbiter/policyfile"
	arbiterv1 "github.com/voicearbiter/arbiter/proto/arbiter/v1"
	"github.com/voicearbiter/arbiter/server"
)

// TestAccessLog: a unary RPC's "finished call" line is written at info for a caller's
// error, with the RPC's fields (grpc.service, grpc.method, grpc.code, grpc.error,
// grpc.time_ms, peer.address) and the request's ids; an OK RPC writes none at info and
// one at debug; the effect lines an RPC writes carry its grpc.method too.
func TestAccessLog(t *testing.T) {
	policy, err := policyfile.Load("../testdata/tools/booking.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, level := range []slog.Level{slog.LevelInfo, slog.LevelDebug} {
		var logs lockedBuffer
		f := startTraced(t, policy, server.Options{Logger: slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: level}))})
		ctx := context.Background()
		if _, err := f.c.RegisterCall(ctx, &arbiterv1.RegisterCallRequest{SessionId: "acc", CallId: "c1", Tool: "book_slot",
			Args: args(t, map[string]any{"slot": "tomorrow 3pm"}), ToolChoice: arbiterv1.ToolChoice_TOOL_CHOICE_NONE}); err != nil {
			t.Fatal(err)
		}
		_, err := f.c.Complete(ctx, &arbiterv1.CompleteRequest{SessionId: "acc", JobId: "job-9", Outcome: arbiterv1.Outcome_OUTCOME_COMMITTED})
		if status.Code(err) != codes.NotFound {
			t.Fatalf("complete of no job: %v, want NotFound", err)
		}
		var finished []map[string]any
		effects := 0
		sc := bufio.NewScanner(strings.NewReader(logs.String()))
		for sc.Scan() {
			var m map[string]any
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				t.Fatalf("%v: %s", err, sc.Text())
			}
			switch m["msg"] {
			case "finished call":
				finished = append(finished, m)
			case "response", "skip":
				effects++
				if m["grpc.method"] != "RegisterCall" || m["session_id"] != "acc" {
					t.Errorf("effect line without its RPC's fields: %s", sc.Text())
				}
			}
		}
		if effects == 0 {
			t.Errorf("level %v: no effect line:\n%s", level, logs.String())
		}
		want := 1 // the NotFound, at info
		if level == slog.LevelDebug {
			want = 2 // and the OK RegisterCall
		}
		if len(finished) != want {
			t.Fatalf("level %v: %d finished-call lines, want %d:\n%s", level, len(finished), want, logs.String())
		}
		last := finished[len(finished)-1]
		for k, v := range map[string]any{"level": "INFO", "grpc.service": "arbiter.v1.ArbiterService", "grpc.method": "Complete",
			"grpc.method_type": "unary", "grpc.code": "NotFound", "session_id": "acc", "job_id": "job-9", "protocol": "grpc"} {
			if last[k] != v {
				t.Errorf("level %v: %s = %v, want %v: %v", level, k, last[k], v, last)
			}
		}
		for _, k := range []string{"grpc.error", "grpc.time_ms", "grpc.start_time", "peer.address"} {
			if _, ok := last[k]; !ok {
				t.Errorf("level %v: no %s: %v", level, k, last)
			}
		}
		if level == slog.LevelDebug && (finished[0]["level"] != "DEBUG" || finished[0]["grpc.code"] != "OK" || finished[0]["call_id"] != "c1") {
			t.Errorf("the OK RegisterCall's line: %v", finished[0])
		}
	}
}
