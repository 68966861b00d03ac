package memory_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/voicearbiter/arbiter/arbiter"
	"github.com/voicearbiter/arbiter/store/memory"
)

// BenchmarkLoadLatencyIdlePopulation is what a GetSession waits for on a server
// holding 100,000 idle sessions: Loads at a steady 1,000 a second (open loop: each is
// due at its time, and its latency counts from then, so waiting for the store's lock
// shows) for 3 s, with the store's real janitor ticking every second. It reports the
// Loads' p50, p99 and max latency. One iteration is the whole 3 s (-benchtime 1x).
func BenchmarkLoadLatencyIdlePopulation(b *testing.B) {
	st := memory.New(nil)
	defer st.Close()
	const n = 100_000
	keys := make([]arbiter.SessionKey, n)
	for i := range keys {
		keys[i] = arbiter.SessionKey{ID: fmt.Sprintf("idle-%06d", i)}
		if err := st.Save(context.Background(), arbiter.NewSession(keys[i], time.Now()), time.Hour); err != nil {
			b.Fatal(err)
		}
	}
	for b.Loop() {
		const (
			rate = 1000
			run  = 3 * time.Second
		)
		var (
			mu  sync.Mutex
			lat []time.Duration
			wg  sync.WaitGroup
		)
		start := time.Now()
		for i := 0; i < int(run.Seconds())*rate; i++ {
			due := start.Add(time.Duration(i) * time.Second / rate)
			time.Sleep(time.Until(due))
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := st.Load(context.Background(), keys[i%n]); err != nil {
					b.Error(err)
				}
				d := time.Since(due)
				mu.Lock()
				lat = append(lat, d)
				mu.Unlock()
			}()
		}
		wg.Wait()
		slices.Sort(lat)
		b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
		b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
		b.ReportMetric(float64(lat[len(lat)-1].Microseconds()), "max-µs")
	}
}
