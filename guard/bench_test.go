package guard

import (
	"encoding/base64"
	"testing"
	"time"
)

// BenchmarkStepAudio: what the rule costs per audio frame, each way (30 ms chunks:
// 24 kHz down, 16 kHz up, base64 in JSON as the providers send them).
func BenchmarkStepAudio(b *testing.B) {
	down := []byte(`{"serverContent":{"modelTurn":{"parts":[{"inlineData":{"mimeType":"audio/pcm;rate=24000","data":"` +
		base64.StdEncoding.EncodeToString(make([]byte, 1440)) + `"}}]}}}`)
	up := []byte(`{"realtimeInput":{"audio":{"data":"` + base64.StdEncoding.EncodeToString(make([]byte, 960)) + `","mimeType":"audio/pcm;rate=16000"}}}`)
	for _, c := range []struct {
		name string
		in   Input
	}{{"down/gemini", FromServer{Frame{Data: down, Binary: true}}}, {"up/gemini", FromAgent{Frame{Data: up}}}} {
		b.Run(c.name, func(b *testing.B) {
			r := NewRule(Config{Policy: testPolicy(b)}, "gemini", false, "s", "c", false)
			now := time.Unix(0, 0)
			r.Step(now, FromAgent{Frame{Data: []byte(`{"setup":{"model":"m"}}`)}})
			b.SetBytes(int64(len(down)))
			b.ReportAllocs()
			for b.Loop() {
				r.Step(now, c.in)
			}
		})
	}
}
