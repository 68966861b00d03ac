package server_test

import (
	"log/slog"
	"strings"
	"sync"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/voicearbiter/arbiter/internal/redistest"
	arbiterv1 "github.com/voicearbiter/arbiter/proto/arbiter/v1"
	"github.com/voicearbiter/arbiter/server"
	"github.com/voicearbiter/arbiter/store/redisstore"
)

// The limit of the shared rate-limit tests: a burst of 5, then one request per
// 1000 s, so no request is refilled while a test runs and what is accepted is exactly
// the burst, however the burst's requests interleave.
const (
	limitRPS   = 0.001
	limitBurst = 5
)

// burst sends n ReportSpeech requests as tenant token to each client at once and
// counts their codes.
func burst(t *testing.T, clients []arbiterv1.ArbiterServiceClient, token string, n int) map[codes.Code]int {
	t.Helper()
	var (
		mu  sync.Mutex
		got = map[codes.Code]int{}
		wg  sync.WaitGroup
	)
	for _, c := range clients {
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := c.ReportSpeech(bearer(token), &arbiterv1.ReportSpeechRequest{SessionId: "s", Event: arbiterv1.SpeechEvent_SPEECH_EVENT_MODEL_OUTPUT_START})
				mu.Lock()
				got[status.Code(err)]++
				mu.Unlock()
			}()
		}
	}
	wg.Wait()
	return got
}

// replicas starts two servers, each limiting with the limiter newLimiter returns for
// it, and returns a client of each.
func replicas(t *testing.T, newLimiter func() server.Options) []arbiterv1.ArbiterServiceClient {
	t.Helper()
	var cs []arbiterv1.ArbiterServiceClient
	for i := 0; i < 2; i++ {
		cs = append(cs, arbiterv1.NewArbiterServiceClient(dial(t, serve(t, newLimiter(), nil), nil)))
	}
	return cs
}

// TestRateLimitSharedThroughRedis: two replicas limiting through one redis-server let
// a tenant's burst through once in all, not once each as their in-process limiters do;
// another tenant has its own budget; and with Redis gone each replica limits on its
// own (no request fails for the limiter's sake), saying so once.
func TestRateLimitSharedThroughRedis(t *testing.T) {
	toks, err := server.NewTokens(map[string]string{"token-for-acme": "acme", "token-for-globex": "globex", "token-for-initech": "initech"})
	if err != nil {
		t.Fatal(err)
	}
	const perReplica = 3 * limitBurst
	over := 2*perReplica - limitBurst

	t.Run("in process", func(t *testing.T) {
		cs := replicas(t, func() server.Options {
			return server.Options{Tokens: toks, Limiter: &server.TenantLimiter{RPS: limitRPS, Burst: limitBurst}}
		})
		got := burst(t, cs, "token-for-acme", perReplica)
		if got[codes.OK] != 2*limitBurst {
			t.Errorf("in-process limiters accepted %d, want a burst per replica, %d: %v", got[codes.OK], 2*limitBurst, got)
		}
	})

	srv := redistest.Start(t)
	logs := &lockedBuffer{}
	cs := replicas(t, func() server.Options {
		rc, err := redisstore.NewClient(srv.URL())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = rc.Close() })
		lim := server.NewSharedLimiter(redisstore.NewLimiter(rc, limitRPS, limitBurst),
			&server.TenantLimiter{RPS: limitRPS, Burst: limitBurst}, slog.New(slog.NewTextHandler(logs, nil)))
		return server.Options{Tokens: toks, Limiter: lim}
	})
	for _, token := range []string{"token-for-acme", "token-for-globex"} {
		got := burst(t, cs, token, perReplica)
		if got[codes.OK] != limitBurst || got[codes.ResourceExhausted] != over {
			t.Errorf("%s: got %v, want %d OK (one burst across both replicas) and %d RESOURCE_EXHAUSTED", token, got, limitBurst, over)
		}
	}
	if n, err := redistest.Command(srv.Addr, "EXISTS", "rate:"+redisstore.LimitKey("acme")); err != nil || n != ":1" {
		t.Errorf("EXISTS rate:%s = %q %v, want :1", redisstore.LimitKey("acme"), n, err)
	}

	srv.Kill()
	got := burst(t, cs, "token-for-initech", perReplica)
	if got[codes.OK] != 2*limitBurst || got[codes.ResourceExhausted] != 2*perReplica-2*limitBurst {
		t.Errorf("with Redis down: got %v, want each replica's own burst, %d OK, and the rest RESOURCE_EXHAUSTED", got, 2*limitBurst)
	}
	if n := strings.Count(logs.String(), "shared budget unavailable"); n != 2 {
		t.Errorf("%d warnings about the shared budget, want one per replica:\n%s", n, logs.String())
	}
}
