package replay_test

import (
	"context"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/peer"

	"github.com/voicearbiter/arbiter/arbiter"
	arbiterv1 "github.com/voicearbiter/arbiter/proto/arbiter/v1"
	"github.com/voicearbiter/arbiter/replay"
	"github.com/voicearbiter/arbiter/server"
	"github.com/voicearbiter/arbiter/store/memory"
)

// replicas starts n in-process arbiter servers on one memory store, on real local
// ports, and returns their addresses.
func replicas(t *testing.T, n int) []string {
	t.Helper()
	store := memory.New(nil)
	t.Cleanup(func() { _ = store.Close() })
	quiet := slog.New(slog.DiscardHandler)
	var addrs []string
	for i := 0; i < n; i++ {
		svc := &arbiter.Service{Engine: &arbiter.Engine{Policy: &arbiter.Policy{}}, Store: store, Clock: arbiter.SystemClock{}, IdleTTL: time.Hour, MaxWait: time.Second}
		gs, _ := server.NewGRPCServer(server.New(svc, quiet), server.Options{Logger: quiet})
		lis, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		go func() { _ = gs.Serve(lis) }()
		t.Cleanup(gs.Stop)
		addrs = append(addrs, lis.Addr().String())
	}
	return addrs
}

// remoteClients returns n clients of one Remote over addrs.
func remoteClients(t *testing.T, addrs []string, n int) []arbiterv1.ArbiterServiceClient {
	t.Helper()
	remote, err := replay.DialRemote(addrs)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = remote.Close() })
	var cs []arbiterv1.ArbiterServiceClient
	for i := 0; i < n; i++ {
		c, err := remote.Client(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		cs = append(cs, c)
	}
	return cs
}

// hit sends one RPC of session sid on c and returns the index in addrs of the server
// that answered it.
func hit(t *testing.T, c arbiterv1.ArbiterServiceClient, addrs []string, sid string) int {
	t.Helper()
	var p peer.Peer
	_, err := c.ReportSpeech(context.Background(), &arbiterv1.ReportSpeechRequest{SessionId: sid, Event: arbiterv1.SpeechEvent_SPEECH_EVENT_USER_ACTIVITY_START}, grpc.Peer(&p))
	if err != nil {
		t.Fatal(err)
	}
	for i, a := range addrs {
		if p.Addr.String() == a {
			return i
		}
	}
	t.Fatalf("answered by %v, which is none of %v", p.Addr, addrs)
	return -1
}

// rotates reports whether every 3 consecutive entries of seq differ.
func rotates(seq []int) bool {
	for k := 2; k < len(seq); k++ {
		if seq[k] == seq[k-1] || seq[k] == seq[k-2] || seq[k-1] == seq[k-2] {
			return false
		}
	}
	return true
}

// TestRemoteRotatesEveryRPC: on a client Client has returned, each of 3 consecutive
// RPCs reaches a different one of 3 servers, so 9 RPCs reach each server 3 times.
func TestRemoteRotatesEveryRPC(t *testing.T) {
	addrs := replicas(t, 3)
	c := remoteClients(t, addrs, 1)[0]
	var seq []int
	count := make([]int, len(addrs))
	for i := 0; i < 9; i++ {
		s := hit(t, c, addrs, "rotate")
		seq = append(seq, s)
		count[s]++
	}
	if !rotates(seq) {
		t.Fatalf("servers reached in turn: %v, want each 3 consecutive RPCs on 3 different servers", seq)
	}
	for i, n := range count {
		if n != 3 {
			t.Fatalf("server %d reached %d times of 9 (%v)", i, n, seq)
		}
	}
}

// TestRemoteClientsTakeTheirOwnTurns: two replays' clients, their RPCs interleaved
// unevenly, each keep their own turn: every 3 consecutive RPCs of one session reach 3
// different servers, whatever the other session sent in between.
func TestRemoteClientsTakeTheirOwnTurns(t *testing.T) {
	addrs := replicas(t, 3)
	cs := remoteClients(t, addrs, 2)
	seqs := [2][]int{}
	for _, who := range "abbabaabbbaaabab" {
		i := int(who - 'a')
		seqs[i] = append(seqs[i], hit(t, cs[i], addrs, "session-"+string(who)))
	}
	for i, seq := range seqs {
		if !rotates(seq) {
			t.Errorf("session %c reached the servers %v, want each 3 consecutive RPCs on 3 different servers", 'a'+i, seq)
		}
	}
}

// TestRemoteClientsStartApart: replays do not all start on the first target:
// round_robin starts each connection's turn at a random ready target (the chance that
// 20 clients all start on one of 3 is 3^-19).
func TestRemoteClientsStartApart(t *testing.T) {
	addrs := replicas(t, 3)
	first := map[int]bool{}
	for i, c := range remoteClients(t, addrs, 20) {
		first[hit(t, c, addrs, "start-"+string(rune('a'+i)))] = true
	}
	if len(first) < 2 {
		t.Fatalf("20 clients all started on server %v", first)
	}
}

// TestRemoteTargetDown: Client fails, saying how many targets answered, while one of
// them does not; DialRemote refuses a malformed target or none.
func TestRemoteTargetDown(t *testing.T) {
	addrs := replicas(t, 2)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := lis.Addr().String()
	lis.Close() // a port with nothing listening
	remote, err := replay.DialRemote(append(addrs, down))
	if err != nil {
		t.Fatal(err)
	}
	defer remote.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if _, err := remote.Client(ctx); err == nil || !strings.Contains(err.Error(), "only 2 of 3 targets answered") {
		t.Fatalf("Client with a target down: %v, want only 2 of 3 answering", err)
	}
	for _, bad := range [][]string{nil, {"no-port"}} {
		if _, err := replay.DialRemote(bad); err == nil {
			t.Errorf("DialRemote(%q) succeeded", bad)
		}
	}
}
