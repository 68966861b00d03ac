package redisstore_test

import (
	"context"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/voicearbiter/arbiter/internal/redistest"
	"github.com/voicearbiter/arbiter/store/redisstore"
)

// TestLimiter: two limiters on two clients of one Redis (two replicas) share each
// tenant's budget: a burst of 4, then one request per 1000 s, so exactly 4 of a
// tenant's requests pass in all, whichever limiter takes them. On a single server and
// on a three-master Cluster, where the tenants' keys live on different shards.
func TestLimiter(t *testing.T) {
	tenants := []string{"acme", "globex", "initech", "umbrella", "a:b{c}"}
	for name, url := range map[string]func(t *testing.T) string{
		"single":  func(t *testing.T) string { return redistest.Start(t).URL() },
		"cluster": func(t *testing.T) string { return redistest.StartCluster(t, 3).URL() },
	} {
		t.Run(name, func(t *testing.T) {
			u := url(t)
			var lims []*redisstore.Limiter
			var client redis.UniversalClient
			for i := 0; i < 2; i++ {
				c, err := redisstore.NewClient(u)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = c.Close() })
				client = c
				lims = append(lims, redisstore.NewLimiter(c, 0.001, 4))
			}
			slots := map[int64]bool{}
			for _, tenant := range tenants {
				allowed := 0
				for i := 0; i < 10; i++ {
					ok, err := lims[i%2].Allow(context.Background(), tenant)
					if err != nil {
						t.Fatal(err)
					}
					if ok {
						allowed++
					}
				}
				if allowed != 4 {
					t.Errorf("tenant %q: %d of 10 allowed, want the burst, 4", tenant, allowed)
				}
				if cc, ok := client.(*redis.ClusterClient); ok {
					slot, err := cc.ClusterKeySlot(context.Background(), "rate:"+redisstore.LimitKey(tenant)).Result()
					if err != nil {
						t.Fatal(err)
					}
					slots[slot] = true
				}
			}
			if name == "cluster" && len(slots) < 2 {
				t.Errorf("every tenant's key in one slot: %v", slots)
			}
		})
	}
}
