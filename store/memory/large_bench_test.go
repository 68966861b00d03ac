package memory_test

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/voicearbiter/arbiter/arbiter"
	"github.com/voicearbiter/arbiter/store/memory"
	"github.com/voicearbiter/arbiter/store/storetest"
)

// BenchmarkApplyLargeSession is one RPC (Service.Apply of a model-output event:
// load, step, save) on a session holding n calls with their jobs, on the embedded
// store: what every RPC of a long session pays for the whole session's decode and
// encode.
func BenchmarkApplyLargeSession(b *testing.B) {
	e := storetest.BenchEngine(b, "../..")
	for _, n := range []int{16, 256, 1024} {
		b.Run(fmt.Sprintf("calls=%d", n), func(b *testing.B) {
			s := storetest.BusySession(b, e, "large", n)
			st := memory.New(nil)
			defer st.Close()
			s.Version = 0
			if err := st.Save(context.Background(), s, time.Hour); err != nil {
				b.Fatal(err)
			}
			svc := &arbiter.Service{Engine: e, Store: st, Clock: arbiter.SystemClock{}}
			kinds := []arbiter.SpeechKind{arbiter.ModelOutputStart, arbiter.ModelTurnComplete}
			b.ReportAllocs()
			cpu0 := cpuTime()
			i := 0
			for b.Loop() {
				if _, _, err := svc.Apply(context.Background(), s.Key, arbiter.Speech{Kind: kinds[i%2]}, false); err != nil {
					b.Fatal(err)
				}
				i++
			}
			// CPU time (user + system, the whole process: GC included) per RPC, which
			// other processes on a shared machine inflate less than ns/op.
			b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(i), "cpu-µs/op")
		})
	}
}

// cpuTime is the process's CPU time so far (getrusage).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
