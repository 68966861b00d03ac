package guard_test

import (
	"context"
	"encoding/base64"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/coder/websocket"

	"github.com/voicearbiter/arbiter/arbiter"
	"github.com/voicearbiter/arbiter/guard"
	"github.com/voicearbiter/arbiter/server"
	"github.com/voicearbiter/arbiter/store/memory"
)

// BenchmarkProxyAudio: one Gemini Live audio round trip through the guard on real
// (loopback) sockets per op: the agent sends 30 ms of 16 kHz audio up, the upstream
// (an echo in this process) answers 30 ms of 24 kHz audio down. Beside the time, its
// allocs/op and B/op are what the guard's forwarding costs the collector (the agent
// and the echo allocate their own reads too: compare runs, not absolute numbers).
// bench/guard measures the latency the guard adds under 200 sessions.
func BenchmarkProxyAudio(b *testing.B) { benchProxyAudio(b, nil) }

// BenchmarkProxyAudioMetrics is BenchmarkProxyAudio with the Prometheus metrics of
// arbiter serve --metrics-listen on (server.Metrics.Guard): per frame written, two
// atomic adds on counters resolved when the connection opened; allocs/op must be
// BenchmarkProxyAudio's.
func BenchmarkProxyAudioMetrics(b *testing.B) { benchProxyAudio(b, server.NewMetrics().Guard()) }

func benchProxyAudio(b *testing.B, m guard.Metrics) {
	down := []byte(`{"serverContent":{"modelTurn":{"parts":[{"inlineData":{"mimeType":"audio/pcm;rate=24000","data":"` +
		base64.StdEncoding.EncodeToString(make([]byte, 1440)) + `"}}]}}}`)
	up := []byte(`{"realtimeInput":{"audio":{"data":"` + base64.StdEncoding.EncodeToString(make([]byte, 960)) + `","mimeType":"audio/pcm;rate=16000"}}}`)
	echo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer ws.CloseNow()
		ctx := context.Background()
		if _, _, err := ws.Read(ctx); err != nil { // setup
			return
		}
		if ws.Write(ctx, websocket.MessageBinary, []byte(`{"setupComplete":{}}`)) != nil {
			return
		}
		for {
			if _, _, err := ws.Read(ctx); err != nil {
				return
			}
			if ws.Write(ctx, websocket.MessageBinary, down) != nil {
				return
			}
		}
	}))
	defer echo.Close()
	u, _ := url.Parse(strings.Replace(echo.URL, "http://", "ws://", 1))
	pol := &arbiter.Policy{}
	if err := pol.Validate(); err != nil {
		b.Fatal(err)
	}
	store := memory.New(nil)
	defer store.Close()
	svc := &arbiter.Service{Engine: &arbiter.Engine{Policy: pol}, Store: store, Clock: arbiter.SystemClock{}, Calls: store}
	p, err := guard.New(guard.Options{Service: svc, Gemini: u, OpenAI: u, Log: slog.New(slog.DiscardHandler), Metrics: m})
	if err != nil {
		b.Fatal(err)
	}
	gs := httptest.NewServer(p)
	defer func() { p.Close(); gs.Close() }()
	ctx := context.Background()
	agent, _, err := websocket.Dial(ctx, strings.Replace(gs.URL, "http://", "ws://", 1)+
		"/ws/google.ai.generativelanguage.v1beta.GenerativeService.BidiGenerateContent?key=k", nil)
	if err != nil {
		b.Fatal(err)
	}
	defer agent.CloseNow()
	if err := agent.Write(ctx, websocket.MessageText, []byte(`{"setup":{"model":"models/m","generationConfig":{"responseModalities":["AUDIO"]},"inputAudioTranscription":{}}}`)); err != nil {
		b.Fatal(err)
	}
	if _, _, err := agent.Read(ctx); err != nil { // setupComplete
		b.Fatal(err)
	}
	b.SetBytes(int64(len(up) + len(down)))
	b.ReportAllocs()
	for b.Loop() {
		if err := agent.Write(ctx, websocket.MessageText, up); err != nil {
			b.Fatal(err)
		}
		if _, _, err := agent.Read(ctx); err != nil {
			b.Fatal(err)
		}
	}
}
