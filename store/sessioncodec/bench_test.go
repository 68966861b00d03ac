package sessioncodec_test

import (
	"testing"

	"github.com/voicearbiter/arbiter/arbiter"
	"github.com/voicearbiter/arbiter/store/sessioncodec"
	"github.com/voicearbiter/arbiter/store/storetest"
)

// benchSessions are the sessions the codec benchmarks encode: bench/soak's idle
// session, and one with 20 calls, jobs and utterances.
func benchSessions(b *testing.B) []struct {
	name string
	s    *arbiter.Session
} {
	e := storetest.BenchEngine(b, "../..")
	return []struct {
		name string
		s    *arbiter.Session
	}{
		{"idle", storetest.IdleSession(b, e, "idle")},
		{"calls20", storetest.BusySession(b, e, "calls20", 20)},
	}
}

// BenchmarkEncode measures encoding a session record; B/record is its length.
func BenchmarkEncode(b *testing.B) {
	for _, c := range benchSessions(b) {
		b.Run(c.name, func(b *testing.B) {
			var n int
			b.ReportAllocs()
			for b.Loop() {
				rec, err := sessioncodec.Encode(c.s)
				if err != nil {
					b.Fatal(err)
				}
				n = len(rec)
			}
			b.ReportMetric(float64(n), "B/record")
		})
	}
}

// BenchmarkDecode measures decoding a session record.
func BenchmarkDecode(b *testing.B) {
	for _, c := range benchSessions(b) {
		b.Run(c.name, func(b *testing.B) {
			rec, err := sessioncodec.Encode(c.s)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := sessioncodec.Decode(rec); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(rec)), "B/record")
		})
	}
}
