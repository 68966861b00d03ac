package server_test

import (
	"context"
	"encoding/json"
	"net"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	arbiterv1 "github.com/voicearbiter/arbiter/proto/arbiter/v1"
	"github.com/voicearbiter/arbiter/server"
)

// dialFrom dials addr from the loopback address local (127.0.0.2 is a second peer
// address on the same machine).
func dialFrom(t *testing.T, addr, local string) arbiterv1.ArbiterServiceClient {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(local)}}
	conn, err := grpc.NewClient("passthrough:///"+addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(func(ctx context.Context, a string) (net.Conn, error) { return d.DialContext(ctx, "tcp", a) }))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return arbiterv1.NewArbiterServiceClient(conn)
}

// summary is the sum of the "unauthenticated requests" lines of a JSON log.
type summary struct {
	lines, requests, refused int
	reasons, addresses       map[string]int
}

func summaries(log string) summary {
	s := summary{reasons: map[string]int{}, addresses: map[string]int{}}
	for _, line := range strings.Split(strings.TrimSpace(log), "\n") {
		var l struct {
			Msg, Level        string
			Requests, Refused int
			ByReason          map[string]int `json:"by_reason"`
			Top               map[string]int `json:"top_addresses"`
		}
		if json.Unmarshal([]byte(line), &l) != nil || l.Msg != "unauthenticated requests" {
			continue
		}
		if l.Level != "WARN" {
			continue
		}
		s.lines++
		s.requests += l.Requests
		s.refused += l.Refused
		for k, n := range l.ByReason {
			s.reasons[k] += n
		}
		for k, n := range l.Top {
			s.addresses[k] += n
		}
	}
	return s
}

// TestUnauthenticatedLimitedAndSummarized: requests that fail authentication are
// limited per peer address (UNAUTHENTICATED within the address's burst, then
// RESOURCE_EXHAUSTED) while a valid token from the same address still passes and
// another address has its own budget; none gets an access-log line at info, and the
// warn summaries count every one by reason and address.
func TestUnauthenticatedLimitedAndSummarized(t *testing.T) {
	toks, err := server.NewTokens(map[string]string{"token-for-acme": "acme"})
	if err != nil {
		t.Fatal(err)
	}
	logs := &lockedBuffer{}
	addr := serve(t, server.Options{Tokens: toks, UnauthRPS: 0.001, UnauthBurst: 3, UnauthLogInterval: 100 * time.Millisecond}, logs)
	a, b := dialFrom(t, addr, "127.0.0.1"), dialFrom(t, addr, "127.0.0.2")
	get := func(c arbiterv1.ArbiterServiceClient, ctx context.Context) codes.Code {
		_, err := c.GetSession(ctx, &arbiterv1.GetSessionRequest{SessionId: "s"})
		return status.Code(err)
	}
	auth := func(v string) context.Context {
		return metadata.AppendToOutgoingContext(context.Background(), "authorization", v)
	}
	bg := context.Background()
	for i, step := range []struct {
		c    arbiterv1.ArbiterServiceClient
		ctx  context.Context
		want codes.Code
	}{
		{a, bg, codes.Unauthenticated},
		{a, bearer("wrong-token"), codes.Unauthenticated},
		{a, auth("Basic dXNlcjpwYXNz"), codes.Unauthenticated},
		{a, bearer("wrong-token"), codes.ResourceExhausted}, // 127.0.0.1's burst of 3 is spent
		{a, bg, codes.ResourceExhausted},
		{a, bearer("token-for-acme"), codes.NotFound}, // a valid token is not limited
		{b, bg, codes.Unauthenticated},                // 127.0.0.2 has its own budget
	} {
		if got := get(step.c, step.ctx); got != step.want {
			t.Fatalf("request %d: %v, want %v", i, got, step.want)
		}
	}
	// Watch goes through the same guard.
	st, err := a.Watch(bg, &arbiterv1.WatchRequest{SessionId: "s"})
	if err == nil {
		_, err = st.Recv()
	}
	if status.Code(err) != codes.ResourceExhausted {
		t.Fatalf("Watch without a token from a spent address: %v, want RESOURCE_EXHAUSTED", err)
	}
	wantDetails(t, err, server.ReasonRateLimited, "", time.Second)

	deadline := time.Now().Add(10 * time.Second)
	var s summary
	for s = summaries(logs.String()); s.requests < 7 && time.Now().Before(deadline); s = summaries(logs.String()) {
		time.Sleep(20 * time.Millisecond)
	}
	want := summary{requests: 7, refused: 3,
		reasons:   map[string]int{"missing_token": 4, "unknown_token": 2, "malformed_token": 1},
		addresses: map[string]int{"127.0.0.1": 6, "127.0.0.2": 1}}
	if s.requests != want.requests || s.refused != want.refused || !sameCounts(s.reasons, want.reasons) || !sameCounts(s.addresses, want.addresses) {
		t.Errorf("summaries sum to %+v, want %+v\n%s", s, want, logs.String())
	}
	if s.lines == 0 || s.lines > 7 {
		t.Errorf("%d summary lines", s.lines)
	}
	for _, line := range strings.Split(logs.String(), "\n") {
		if strings.Contains(line, `"finished call"`) && (strings.Contains(line, "Unauthenticated") || strings.Contains(line, "ResourceExhausted")) {
			t.Errorf("an access-log line for a failed authentication at info or above: %s", line)
		}
	}
}

func sameCounts(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, n := range a {
		if b[k] != n {
			return false
		}
	}
	return true
}
