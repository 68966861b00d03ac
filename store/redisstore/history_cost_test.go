package redisstore_test

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/voicearbiter/arbiter/arbiter"
	"github.com/voicearbiter/arbiter/internal/redistest"
	"github.com/voicearbiter/arbiter/policyfile"
	"github.com/voicearbiter/arbiter/replay"
	"github.com/voicearbiter/arbiter/store/memory"
	"github.com/voicearbiter/arbiter/store/redisstore"
	"github.com/voicearbiter/arbiter/store/sessioncodec"
)

// soakLife is bench/soak's call, one session each: RegisterCall book_slot,
// ReportSpeech USER_ACTIVITY_START and _END, ReportTranscript "Stop.",
// Decide(prepared) -> CANCEL, Complete(CANCELLED); then the session is idle.
func soakLife(t *testing.T, svc *arbiter.Service, key arbiter.SessionKey) {
	ctx := context.Background()
	out, _, err := svc.Apply(ctx, key, arbiter.RegisterCall{CallID: "fc_" + key.ID, Tool: "book_slot", Args: map[string]any{"slot": "tomorrow 3pm"}}, true)
	if err != nil {
		t.Fatal(err)
	}
	job := out.Call.JobID
	for _, ev := range []arbiter.Event{
		arbiter.Speech{Kind: arbiter.UserActivityStart}, arbiter.Speech{Kind: arbiter.UserActivityEnd},
		arbiter.Transcript{Text: "Stop."}, arbiter.Decide{JobID: job, Prepared: true},
		arbiter.Complete{JobID: job, Outcome: arbiter.Cancelled},
	} {
		if _, _, err := svc.Apply(ctx, key, ev, true); err != nil {
			t.Fatalf("%T: %v", ev, err)
		}
	}
}

// TestHistoryCostPerSession measures what the session history costs an idle session
// (issue 14's target: at most about 1 KiB): 10,000 of bench/soak's sessions on the
// embedded store (the Go heap it holds them in, after a collection, and their encoded
// records) and on a real redis-server (used_memory, and the length of the records'
// encoded sessions, without the version and lifetime before them), with
// history off, at its default bound, and recording every session. Set
// ARBITER_HISTORY_COST=1 to run it (about a minute); the numbers are logged.
func TestHistoryCostPerSession(t *testing.T) {
	if os.Getenv("ARBITER_HISTORY_COST") == "" {
		t.Skip("set ARBITER_HISTORY_COST=1 to measure")
	}
	const n = 10000
	policy, err := policyfile.Load("../../testdata/tools/booking.yaml")
	if err != nil {
		t.Fatal(err)
	}
	srv := redistest.Start(t)
	client, err := redisstore.NewClient(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	rs := redisstore.New(client, redisstore.Options{})
	t.Cleanup(func() { _ = rs.Close() })
	ctx := context.Background()
	usedMemory := func() int64 {
		info, err := client.Info(ctx, "memory").Result()
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(info, "\r\n") {
			if v, ok := strings.CutPrefix(line, "used_memory:"); ok {
				x, _ := strconv.ParseInt(v, 10, 64)
				return x
			}
		}
		t.Fatal("no used_memory")
		return 0
	}
	heap := func() int64 {
		var m runtime.MemStats
		runtime.GC()
		runtime.GC()
		runtime.ReadMemStats(&m)
		return int64(m.HeapAlloc)
	}
	configs := []struct {
		name         string
		historyBytes int
		sample       float64
	}{{"history off", -1, 0}, {"history on (1 KiB bound)", 0, 0}, {"recording (64 KiB bound)", 0, 1}}
	var report strings.Builder
	fmt.Fprintf(&report, "\n| %d sessions | embedded: heap/session | embedded: record/session | history entries/session | Redis: used_memory/session | Redis: record/session |\n|---|--:|--:|--:|--:|--:|\n", n)
	for _, c := range configs {
		engine := &arbiter.Engine{Policy: policy, HistoryBytes: c.historyBytes}
		// Embedded store.
		ms := memory.New(nil)
		svc := &arbiter.Service{Engine: engine, Store: ms, Clock: replay.NewVirtualClock(replay.Epoch), HistorySample: c.sample}
		before := heap()
		for i := 0; i < n; i++ {
			soakLife(t, svc, arbiter.SessionKey{ID: fmt.Sprintf("soak-%05d", i)})
		}
		heapPer := float64(heap()-before) / n
		var recBytes, entries int64
		for i := 0; i < n; i++ {
			s, err := ms.Load(ctx, arbiter.SessionKey{ID: fmt.Sprintf("soak-%05d", i)})
			if err != nil {
				t.Fatal(err)
			}
			b, err := sessioncodec.Encode(s) // the record the store keeps
			if err != nil {
				t.Fatal(err)
			}
			recBytes += int64(len(b))
			if s.History != nil {
				entries += int64(len(s.History.Entries))
			}
		}
		_ = ms.Close()
		runtime.KeepAlive(ms)
		// Redis.
		if err := client.FlushAll(ctx).Err(); err != nil {
			t.Fatal(err)
		}
		svc = &arbiter.Service{Engine: engine, Store: rs, Clock: replay.NewVirtualClock(replay.Epoch), HistorySample: c.sample}
		soakLife(t, svc, arbiter.SessionKey{ID: "warm-up"}) // the script cache
		base := usedMemory()
		for i := 0; i < n; i++ {
			soakLife(t, svc, arbiter.SessionKey{ID: fmt.Sprintf("soak-%05d", i)})
		}
		redisPer := float64(usedMemory()-base) / n
		var redisRec int64
		keys, err := client.Keys(ctx, "arb:*soak-*").Result()
		if err != nil || len(keys) != n {
			t.Fatalf("%d keys, %v", len(keys), err)
		}
		for _, k := range keys {
			val, err := client.Get(ctx, k).Result()
			if err != nil {
				t.Fatal(err)
			}
			_, _, rec, ok := redisstore.ParseRecord(val)
			if !ok {
				t.Fatalf("%s: not a record", k)
			}
			redisRec += int64(len(rec))
		}
		fmt.Fprintf(&report, "| %s | %.0f B | %d B | %.1f | %.0f B | %d B |\n", c.name, heapPer, recBytes/n, float64(entries)/n, redisPer, redisRec/n)
	}
	t.Log(report.String())
}
