package redisstore_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/voicearbiter/arbiter/arbiter"
	"github.com/voicearbiter/arbiter/internal/redistest"
	"github.com/voicearbiter/arbiter/store/redisstore"
)

// TestKeys: Keys counts the sessions stored (INFO keyspace), on one server (its
// database only) and summed over a Cluster's primaries.
func TestKeys(t *testing.T) {
	ctx := context.Background()
	save := func(t *testing.T, st *redisstore.Store, n int) {
		t.Helper()
		for i := 0; i < n; i++ {
			if err := st.Save(ctx, arbiter.NewSession(arbiter.SessionKey{ID: fmt.Sprintf("k%d", i)}, time.Now()), time.Minute); err != nil {
				t.Fatal(err)
			}
		}
	}
	t.Run("server", func(t *testing.T) {
		srv := redistest.Start(t)
		st, err := redisstore.Open(srv.URL()+"/3", redisstore.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		if err := st.Client().FlushAll(ctx).Err(); err != nil {
			t.Fatal(err)
		}
		if n, err := st.Keys(ctx); err != nil || n != 0 {
			t.Fatalf("empty: %d %v", n, err)
		}
		other := redis.NewClient(&redis.Options{Addr: st.Client().(*redis.Client).Options().Addr, DB: 0})
		defer other.Close()
		if err := other.Set(ctx, "not-ours", "x", 0).Err(); err != nil {
			t.Fatal(err)
		}
		save(t, st, 5)
		if n, err := st.Keys(ctx); err != nil || n != 5 {
			t.Fatalf("5 sessions in db 3 (and a key in db 0): %d %v", n, err)
		}
	})
	t.Run("cluster", func(t *testing.T) {
		cl := redistest.StartCluster(t, 3)
		st, err := redisstore.Open(cl.URL(), redisstore.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		save(t, st, 30)
		if n, err := st.Keys(ctx); err != nil || n != 30 {
			t.Fatalf("30 sessions over 3 primaries: %d %v", n, err)
		}
	})
}
