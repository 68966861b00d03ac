package main

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/structpb"

	arbiterv1 "github.com/voicearbiter/arbiter/proto/arbiter/v1"
)

// BenchmarkServeRegisterCall: RegisterCall (book_slot, a new session each, as
// bench/load's register mode) through `arbiter serve` run in this process over
// loopback gRPC, on the embedded store in memory only and with --state-file (each
// call's new session committed and synced before the answer), from 1, 8 and 50
// clients at once on one connection. Client and server share the machine's cores.
func BenchmarkServeRegisterCall(b *testing.B) {
	for _, clients := range []int{1, 8, 50} {
		for _, store := range []string{"memory", "state-file"} {
			b.Run(fmt.Sprintf("store=%s/clients=%d", store, clients), func(b *testing.B) {
				args := []string{"--tools", bookingPolicy, "--log-level", "warn", "--idle-ttl", "10m"}
				if store == "state-file" {
					args = append(args, "--state-file", filepath.Join(b.TempDir(), "state.db"))
				}
				p := startServe(b, args...)
				c := arbiterv1.NewArbiterServiceClient(p.conn)
				slot, _ := structpb.NewStruct(map[string]any{"slot": "tomorrow 3pm"})
				var next atomic.Int64
				var mu sync.Mutex
				var lat []time.Duration
				var wg sync.WaitGroup
				b.ResetTimer()
				start := time.Now()
				for range clients {
					wg.Add(1)
					go func() {
						defer wg.Done()
						var mine []time.Duration
						for {
							n := next.Add(1)
							if n > int64(b.N) {
								break
							}
							t0 := time.Now()
							_, err := c.RegisterCall(context.Background(), &arbiterv1.RegisterCallRequest{
								SessionId: fmt.Sprintf("bench-%d", n), CallId: "call_1", Tool: "book_slot", Args: slot})
							if err != nil {
								b.Error(err)
								return
							}
							mine = append(mine, time.Since(t0))
						}
						mu.Lock()
						lat = append(lat, mine...)
						mu.Unlock()
					}()
				}
				wg.Wait()
				b.StopTimer()
				elapsed := time.Since(start)
				slices.Sort(lat)
				if len(lat) > 0 {
					b.ReportMetric(float64(len(lat))/elapsed.Seconds(), "req/s")
					b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
					b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
				}
				p.drain(b, 15*time.Second)
			})
		}
	}
}
