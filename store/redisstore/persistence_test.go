package redisstore_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/voicearbiter/arbiter/arbiter"
	"github.com/voicearbiter/arbiter/internal/redistest"
	"github.com/voicearbiter/arbiter/store/redisstore"
)

// persistenceOf opens a store on url and reads its persistence.
func persistenceOf(t *testing.T, url string) ([]redisstore.Persistence, error) {
	t.Helper()
	st, err := redisstore.Open(url, redisstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return st.Persistence(ctx)
}

// TestPersistence reads what servers started with each persistence setting keep, by
// CONFIG GET and, with CONFIG renamed away as on managed Redis, by INFO persistence.
func TestPersistence(t *testing.T) {
	for _, tc := range []struct {
		name    string
		args    []string
		aof     bool
		fsync   string
		save    string
		from    string
		durable bool
		loses   string
	}{
		{"none", nil, false, "everysec", "", redisstore.FromConfig, false, "every session"},
		{"rdb", []string{"--save", "60 1"}, false, "everysec", "60 1", redisstore.FromConfig, false, "since its last RDB snapshot"},
		{"aof everysec", []string{"--appendonly", "yes"}, true, "everysec", "", redisstore.FromConfig, false, "up to 1 s"},
		{"aof always", []string{"--appendonly", "yes", "--appendfsync", "always"}, true, "always", "", redisstore.FromConfig, true, "nothing"},
		{"no config, aof", []string{"--appendonly", "yes", "--rename-command", "CONFIG", ""}, true, "", "", redisstore.FromInfo, false, "appendfsync not readable"},
		{"no config, no aof", []string{"--save", "60 1", "--rename-command", "CONFIG", ""}, false, "", "", redisstore.FromInfo, false, "not readable without CONFIG"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := redistest.Start(t, tc.args...)
			ps, err := persistenceOf(t, srv.URL())
			if err != nil {
				t.Fatal(err)
			}
			if len(ps) != 1 {
				t.Fatalf("got %d servers, want 1: %+v", len(ps), ps)
			}
			p := ps[0]
			want := redisstore.Persistence{Addr: srv.Addr, AOF: tc.aof, Fsync: tc.fsync, Save: tc.save, From: tc.from}
			if p != want {
				t.Errorf("got %+v, want %+v", p, want)
			}
			if p.Durable() != tc.durable || !strings.Contains(p.Loses(), tc.loses) {
				t.Errorf("durable %v, loses %q; want %v and %q", p.Durable(), p.Loses(), tc.durable, tc.loses)
			}
		})
	}
}

// TestPersistenceCluster reads every master of a Cluster: all durable with AOF on
// and appendfsync always,
// and the one master that turns it off is named.
func TestPersistenceCluster(t *testing.T) {
	cl := redistest.StartCluster(t, 3, "--appendonly", "yes", "--appendfsync", "always")
	ps, err := persistenceOf(t, cl.URL())
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 3 {
		t.Fatalf("got %d masters, want 3: %+v", len(ps), ps)
	}
	for _, p := range ps {
		if !p.Durable() {
			t.Errorf("master %s not durable: %+v", p.Addr, p)
		}
	}
	off := cl.Nodes[1].Addr
	if r, err := redistest.Command(off, "CONFIG", "SET", "appendonly", "no"); err != nil || r != "+OK" {
		t.Fatalf("CONFIG SET appendonly no on %s: %q %v", off, r, err)
	}
	if ps, err = persistenceOf(t, cl.URL()); err != nil {
		t.Fatal(err)
	}
	var volatile []string
	for _, p := range ps {
		if !p.Durable() {
			volatile = append(volatile, p.Addr)
		}
	}
	if len(volatile) != 1 || volatile[0] != off {
		t.Errorf("volatile masters %v, want [%s]", volatile, off)
	}
}

// TestPersistenceUnreachable: a server that does not answer is Unavailable, not a
// verdict.
func TestPersistenceUnreachable(t *testing.T) {
	srv := redistest.Start(t)
	srv.Kill()
	_, err := persistenceOf(t, srv.URL())
	if arbiter.KindOf(err) != arbiter.Unavailable {
		t.Fatalf("got %v (kind %v), want Unavailable", err, arbiter.KindOf(err))
	}
}
