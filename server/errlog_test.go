package server_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	arbiterv1 "github.com/voicearbiter/arbiter/proto/arbiter/v1"
	"github.com/voicearbiter/arbiter/server"
)

// TestErrorLinesSummarizedPerCaller: a caller that fails RPC after RPC (a client
// looping on a bad request) gets an access-log line per failure only within its
// address's bucket; past it the failures are counted and summed up in warn lines by
// code and address, while another address keeps its own lines. Every failed call is
// either a line or counted in a summary, exactly once.
func TestErrorLinesSummarizedPerCaller(t *testing.T) {
	logs := &lockedBuffer{}
	addr := serve(t, server.Options{ErrorLogRPS: 0.001, ErrorLogBurst: 3, UnauthLogInterval: 100 * time.Millisecond}, logs)
	a, b := dialFrom(t, addr, "127.0.0.1"), dialFrom(t, addr, "127.0.0.2")
	ctx := context.Background()
	get := func(c arbiterv1.ArbiterServiceClient) {
		t.Helper()
		if _, err := c.GetSession(ctx, &arbiterv1.GetSessionRequest{SessionId: "nobody"}); status.Code(err) != codes.NotFound {
			t.Fatalf("GetSession of no session: %v, want NOT_FOUND", err)
		}
	}
	for range 20 {
		get(a)
	}
	get(b)
	get(b)
	// A Watch stream's failure goes through the same bound.
	st, err := a.Watch(ctx, &arbiterv1.WatchRequest{SessionId: "nobody"})
	if err == nil {
		_, err = st.Recv()
	}
	if status.Code(err) != codes.NotFound {
		t.Fatalf("Watch of no session: %v, want NOT_FOUND", err)
	}

	type line struct {
		Msg, Level string
		Code       string         `json:"grpc.code"`
		Peer       string         `json:"peer.address"`
		Calls      int            `json:"calls"`
		ByCode     map[string]int `json:"by_code"`
		Top        map[string]int `json:"top_addresses"`
	}
	count := func() (perPeer map[string]int, summed int, byCode, top map[string]int) {
		perPeer, byCode, top = map[string]int{}, map[string]int{}, map[string]int{}
		for _, s := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
			var l line
			if json.Unmarshal([]byte(s), &l) != nil {
				continue
			}
			switch {
			case l.Msg == "finished call" && l.Code == "NotFound":
				perPeer[strings.Split(l.Peer, ":")[0]]++
			case l.Msg == "failed calls not logged one by one":
				if l.Level != "WARN" {
					t.Errorf("summary at %s", l.Level)
				}
				summed += l.Calls
				for k, n := range l.ByCode {
					byCode[k] += n
				}
				for k, n := range l.Top {
					top[k] += n
				}
			}
		}
		return
	}
	deadline := time.Now().Add(10 * time.Second)
	perPeer, summed, byCode, top := count()
	for summed < 18 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
		perPeer, summed, byCode, top = count()
	}
	if perPeer["127.0.0.1"] != 3 || perPeer["127.0.0.2"] != 2 {
		t.Errorf("lines per address %v, want 3 for 127.0.0.1 (its burst) and 2 for 127.0.0.2", perPeer)
	}
	if summed != 18 || byCode["NOT_FOUND"] != 18 || top["127.0.0.1"] != 18 || len(top) != 1 {
		t.Errorf("summaries count %d calls, by code %v, by address %v; want 18 NOT_FOUND from 127.0.0.1\n%s", summed, byCode, top, logs.String())
	}
}
